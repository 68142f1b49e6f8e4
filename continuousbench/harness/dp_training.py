"""Step 2 under ``--epsilon``: the evaluator itself trained by the DP loop (direct DP fine-tuning, App. E).

Everything else is the harness's own (run folder, pinned configuration, ``--resume``, scoring, support
strata, intervals, outputs). Here, and only here, the DP parts are put together - nothing of DP-SGD is
written twice:

* :func:`make_plan` calibrates the noise for the run's training documents (one document = one record,
  the unit of privacy) with :func:`continuousbench.dp.plan.make_plan`; ``prepare`` calls it, so a bad
  DP setting fails before any training and leaves no work folder behind;
* :func:`train_private` runs :func:`continuousbench.dp.loop.train_dp` on the already-loaded LoRA model
  in ``<work>/dp-run`` (its checkpoints hold the secret noise state, and the whole work folder is
  deleted when the run is published), selecting the checkpoint by validation QA contains accuracy as the
  Trainer path does; the selected adapter is loaded back for scoring and copied to ``<work>/model``;
* the privacy record (``results.json`` ``model_privacy``, also shown on the model card) labels the result
  a DP *model*, with the statement of :mod:`continuousbench.dp.model_statement`.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuousbench import processes
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

DP_RUN = "dp-run"  # inside the work folder: never published
SELECTION_NAME = "validation_contains"
RESULT = "result.json"  # in DP_RUN once training is done: what scoring and the record need


@dataclass
class PrivateRun:
    """What the DP loop left for scoring and for the record."""

    model: Any  # the PEFT model with the selected adapter, Opacus hooks removed
    selected: dict  # name, step, validation_contains
    history: list[dict]  # {step, contains} per evaluation
    privacy: dict  # results.json `model_privacy`


def check(tuning: str, config) -> None:
    """One line for a DP evaluate that cannot run (before anything is loaded)."""
    if not config.private:
        return
    if tuning != "lora":
        raise UserError(
            "evaluate --epsilon fine-tunes the evaluated model with DP-SGD on LoRA adapters only: pass "
            "--tuning lora (DP full fine-tuning is for generators: train-generator --tuning full)"
        )
    if config.max_steps == 0:
        raise UserError("--steps 0 trains nothing, so there is nothing to make private: drop --epsilon")


def make_plan(inputs, config):
    """The DP plan for the run's training documents (the main process calibrates; None elsewhere)."""
    from continuousbench.dp.plan import make_plan as calibrate

    n = len(inputs.corpus)
    logger.info("calibrating the noise for epsilon %g on %d documents", config.epsilon, n)
    plan = calibrate(n, config)
    logger.info("DP plan: %s", plan)
    return plan


def _selection(inputs):
    from continuousbench.dp.loop import Selection
    from continuousbench.harness.qa_eval import selection_eval

    eval_fn = selection_eval(inputs.tokenizer, inputs.qa_validation, **inputs.generation)
    return Selection(SELECTION_NAME, lambda run: eval_fn(run.model)["qa_contains"], greater_is_better=True)


def _load_adapter(model, final: Path) -> None:
    """Put the selected adapter (``final/``) into the model."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    set_peft_model_state_dict(model, load_file(str(final / "adapter_model.safetensors")))


def train_private(inputs, model_args, config, work: Path, plan, *, resume: bool) -> PrivateRun:
    """Train the evaluator with DP-SGD in ``work / DP_RUN``; every process calls this.

    A run killed after training (while scoring) resumes from ``result.json``: the selected adapter is
    scored, not trained again (a second DP run would be a second release of the same documents)."""
    from continuousbench.dp.loop import train_dp, training_device
    from continuousbench.files import read_json, write_json
    from continuousbench.harness.outputs import MODEL_DIR

    procs = processes.current()
    run_dir = work / DP_RUN
    final = run_dir / "final"
    if resume and (run_dir / RESULT).is_file():
        logger.info("DP training had finished in %s: scoring its selected adapter", run_dir)
        done = read_json(run_dir / RESULT)
        model = inputs.model.to(training_device(config))
        _load_adapter(model, final)
        return PrivateRun(model, done["selected"], done["history"], done["privacy"])
    try:
        run = train_dp(
            run_dir,
            model_args,
            config,
            list(inputs.corpus["text"]),
            [],
            processes.broadcast(plan, procs),
            procs=procs,
            resume=resume,
            insecure_seed=config.insecure_noise_seed,
            loaded=(inputs.model, inputs.tokenizer),
            selection=_selection(inputs),
        )
    except KeyboardInterrupt:
        if procs.main:
            kept = sorted(p.name for p in run_dir.glob("checkpoint-*")) or ["no checkpoint yet"]
            logger.warning("stopped; kept in %s: %s", run_dir, ", ".join(kept))
        raise
    _load_adapter(run.model, final)
    run.comps.module.cleanup()  # Opacus's hooks off: the model only answers questions from here on
    selected = {"name": f"step-{run.best_step}", "step": run.best_step, "validation_contains": run.best_score}
    history = [{"step": h["step"], "contains": h[SELECTION_NAME]} for h in run.history]
    result = PrivateRun(run.model, selected, history, _privacy(run, inputs, config))
    if procs.main:  # the model first: a result.json means the run needs nothing but scoring
        shutil.copytree(final, work / MODEL_DIR, dirs_exist_ok=True)
        for file in (work / MODEL_DIR).iterdir():  # some libraries write 0600 files; a model is for sharing
            file.chmod(0o644)
        write_json(run_dir / RESULT, {"selected": selected, "history": history, "privacy": result.privacy})
    processes.barrier(procs)
    return result


def _privacy(run, inputs, config) -> dict:
    """``results.json`` ``model_privacy``: the guarantee, how it is labelled, and the statement."""
    from continuousbench.dp.model_statement import KIND, SELECTION, UNIT, evaluator_statement
    from continuousbench.dp.published import publishable
    from continuousbench.dp.statement import RunFacts, versions
    from continuousbench.dp.train import describe_tokenizer

    guarantee = run.plan.account()
    documents = inputs.corpus_record["documents"]
    replay = len(inputs.corpus) - documents
    facts = RunFacts(
        base_model=inputs.model_record["given"],
        tokenizer=describe_tokenizer(run.tokenizer),
        max_length=config.max_length,
        secret=run.streams.secret,
        delta_given=config.delta is not None,
        randomness=run.streams.describe(config.secure_noise, work=".evaluate-work/"),
        versions=versions(),
    )
    statement = evaluator_statement(
        guarantee,
        facts,
        questions=len(inputs.qa_validation),
        corpus_documents=documents,
        replay_documents=replay,
    )
    return publishable(
        {
            "kind": KIND,
            "private": run.streams.secret,
            **guarantee.to_dict(),
            "target_epsilon": config.epsilon,
            "unit": "record",
            "unit_description": UNIT,
            "adjacency": "add-or-remove",
            "accountant": "pld",
            "corpus_documents": documents,
            "replay_documents": replay,
            "max_tokens_per_record": config.max_length,
            "tokenizer": facts.tokenizer,
            "secure_noise": config.secure_noise,
            "checkpoint_selection": SELECTION,
            "versions": facts.versions,
            "statement": statement,
        }
    )
