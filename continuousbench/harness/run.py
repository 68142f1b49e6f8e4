"""``continuousbench evaluate`` == ``recipes/evaluate.py``: train the evaluator, score QA.

One parser (:func:`make_parser`) and one :func:`main` serve both entry points. :func:`main` is four steps:

1. **load** (:func:`prepare`): stage the run folder (no silent overwrite, see :mod:`.outputs`), verify
   the release, load its QA, the corpus, the judge (asked once now) and the base model; pin the run's
   configuration so that ``--resume`` cannot change it;
2. **train** (:func:`train`): continue pretraining for ``max_steps`` steps in the work folder (0: score
   the base checkpoint), evaluating validation ``qa_public`` contains accuracy every ``eval_steps``;
   Trainer keeps and reloads the best checkpoint. With a finite ``--epsilon`` the DP loop trains the
   LoRA adapters instead, selecting the same way (:mod:`.dp_training`; paper App. E: a DP *model*);
3. **score** (:func:`score`): answer the test split of every QA part the release has (Geminon:
   ``qa_public`` and ``qa_singleton``; NEWS: ``qa_public``) with the selected model and score them;
   :func:`build_results` gathers what ``results.json`` records, with the release's canonical number;
4. **write** (:func:`.outputs.write_run`): predictions, plot, model and card, then publish them all.

Under several processes training is data-parallel, QA generation is shared out, and only the main
process calls the judge and writes (:mod:`continuousbench.processes`).
"""

from __future__ import annotations

import copy
import json
import logging
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench import processes
from continuousbench.commands import command, run, short_help
from continuousbench.credentials import redact
from continuousbench.errors import UserError
from continuousbench.harness import dp_training
from continuousbench.harness import recipe as recipes
from continuousbench.harness.recipe import DP_TRAINING_KEYS, TRAINING_KEYS, dataclasses_
from continuousbench.scoring.match import RANKED
from continuousbench.training.arguments import HarnessArguments, ModelArguments, RecipeOptions
from continuousbench.training.options import DPOptions

if TYPE_CHECKING:  # the harness's heavy modules (torch, transformers) load when a run starts, not for --help
    from continuousbench.harness.inputs import Inputs
    from continuousbench.training.config import EvaluatorConfig

logger = logging.getLogger(__name__)


@dataclass
class Trained:
    """The model to score and how it was selected."""

    model: Any
    trainer: Any | None  # None: nothing was trained (--steps 0), or the DP loop trained it
    selected: dict  # name, step, validation_contains
    history: list[dict]  # validation contains accuracy per evaluation
    privacy: dict | None = None  # DP runs: results.json `model_privacy` (the model's guarantee)

    @property
    def has_model(self) -> bool:
        """Whether a trained model (``model/``) is published."""
        return self.trainer is not None or self.privacy is not None


def _check_arguments(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig) -> None:
    if not getattr(t, "output_dir_given", True):
        raise UserError("--output_dir is missing; pass the run folder, e.g. --output_dir runs/eval-1")
    if h.release is None:
        raise UserError("no release given: pass --release <release id or folder>")
    if t.push_to_hub and not t.hub_model_id:
        raise UserError("--push_to_hub needs --hub_model_id <user/name>")
    if m.tuning == "prompt":  # a generator's option (train-generator); the evaluator recipe is fixed
        raise UserError(
            "--tuning prompt trains generators only: the evaluator recipe (Tables 29-30) is "
            "--tuning lora or --tuning full"
        )
    dp_training.check(m.tuning, t)


def prepare(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig):
    """Step 1: (staged run folder, inputs, DP plan or None). The main process calibrates the DP plan here,
    so a bad DP setting fails before training. A new run that fails here leaves no work folder behind."""
    from continuousbench.harness import outputs
    from continuousbench.harness.inputs import load_inputs

    main = processes.current().main
    inputs = (h.release, h.corpus, h.replay_corpus, m.model)  # never written into
    staged = outputs.open_run(t.output_dir, overwrite=h.overwrite, resume=h.resume, main=main, inputs=inputs)
    try:
        inputs = load_inputs(h, m, t, with_judge=main)
        # every process pins the same options (the plan follows from them; checkpoints pin it too); a
        # resume that changes one (--epsilon) is refused before the noise calibration, not after it
        options = {**vars(h), **vars(m), **t.to_dict(), "world_size": t.world_size}
        config = outputs.run_config(options, inputs)
        staged.check_config(config)
        plan = dp_training.make_plan(inputs, t) if t.private and main else None
        staged.pin_config(config)
    except Exception:
        if main and not h.resume:
            staged.discard()
        raise
    return staged, inputs, plan


def _validation_history(log_history: Sequence[dict]) -> list[dict]:
    return [
        {"step": int(e["step"]), "contains": e["eval_qa_contains"]}
        for e in log_history
        if "eval_qa_contains" in e
    ]


def _resume_from(work: Path, max_steps: int) -> bool:
    """Whether training continues from a checkpoint in ``work``; says so either way."""
    from continuousbench.training.sft import kept_checkpoints

    checkpoints = kept_checkpoints(work, warn=processes.current().main)
    if checkpoints:
        logger.info("resuming from %s (of %d steps) in %s", checkpoints[-1], max_steps, work)
        return True
    logger.info("resuming a run that saved no checkpoint yet: training starts from step 0")
    return False


def train(
    inputs: Inputs,
    t: EvaluatorConfig,
    work: Path,
    *,
    resume: bool,
    callbacks: Sequence = (),
    m: ModelArguments | None = None,
    plan=None,
) -> Trained:
    """Step 2: continued pretraining in ``work`` with checkpoint selection by validation QA (by the DP
    loop under ``plan`` when ``t.private``; ``callbacks`` are the Trainer's)."""
    from continuousbench.harness import outputs
    from continuousbench.harness.qa_eval import selection_eval
    from continuousbench.training.sft import continued_pretraining, kept_checkpoints

    if t.private:
        run = dp_training.train_private(inputs, m, t, work, plan, resume=resume)
        return Trained(run.model, None, run.selected, run.history, run.privacy)
    eval_fn = selection_eval(inputs.tokenizer, inputs.qa_validation, **inputs.generation)
    if t.max_steps == 0:
        model = inputs.model.to(t.device)
        selected = {"name": "base", "step": 0, "validation_contains": eval_fn(model)["qa_contains"]}
        return Trained(model, None, selected, [])
    args = copy.copy(t)
    args.output_dir, args.push_to_hub = str(work), False  # we publish and upload the selected model
    resume = resume and _resume_from(work, t.max_steps)
    try:
        trainer = continued_pretraining(
            inputs.model,
            inputs.tokenizer,
            inputs.corpus,
            args,
            eval_fn=eval_fn,
            callbacks=callbacks,
            resume=resume,
        )
    except KeyboardInterrupt:
        if processes.current().main:
            kept = kept_checkpoints(work) or ["no checkpoint yet"]
            logger.warning("stopped; kept in %s: %s", work, ", ".join(kept))
        raise
    # Every process: the Trainer writes from the main one only, and FSDP/DeepSpeed gather on all of them.
    trainer.save_model(str(work / outputs.MODEL_DIR))
    best, state = trainer.state.best_model_checkpoint, trainer.state
    selected = {
        "name": Path(best).name if best else f"checkpoint-{state.global_step}",
        "step": int(Path(best).name.rsplit("-", 1)[1]) if best else state.global_step,
        "validation_contains": state.best_metric,
    }
    return Trained(trainer.model, trainer, selected, _validation_history(state.log_history))


def score(inputs: Inputs, model) -> dict[str, tuple] | None:
    """Step 3: answer the test questions (shared out across processes); on the main process, score
    them: ``{part: (split, qa, predictions, report)}``; None on the others."""
    import torch

    from continuousbench.harness.qa_eval import generate_answers, score_answers
    from continuousbench.harness.ranked import rank
    from continuousbench.stats import mean_interval

    with torch.inference_mode():
        answers = {
            part: generate_answers(model, inputs.tokenizer, qa["question"], **inputs.generation)
            for part, qa in inputs.qa_test.items()
        }
        graded = {
            part: rank(model, inputs.tokenizer, qa, inputs.options, track=inputs.generation["track"])
            for part, qa in inputs.qa_test.items()
        }
    if not processes.current().main:
        return None
    tables = {}
    for part, qa in inputs.qa_test.items():
        _, mcq, mcq_acc, nll = graded[part]
        ranked = {"mcq": mcq, "mcq_acc": mcq_acc}
        report = score_answers(qa, answers[part], judge=inputs.judge, ranked=ranked)
        report["answer_nll"] = mean_interval(nll)
        if inputs.heldout_entities is not None:
            held = inputs.heldout_entities
            report["by_heldout"] = by_heldout(report["per_example"], nll, qa["entity"], held)
        report["per_example"]["answer_nll"] = nll
        tables[part] = ("test", qa, answers[part], report)
    return tables


def by_heldout(per_example: dict, nll: list[float], entities, heldout: frozenset[int]) -> dict:
    """``metrics.<part>.by_heldout``: the part's figures on questions about trained-on entities and about
    held-out ones (``build --heldout entity``): a model that learned the facts scores far better on the
    first; one that learned only how answers look scores alike on both."""
    from continuousbench.scoring.match import by_group
    from continuousbench.stats import mean_interval

    groups = ["heldout" if int(e) in heldout else "trained" for e in entities]
    report = by_group(per_example, groups, ("trained", "heldout"))
    for name, figures in report.items():
        figures["answer_nll"] = mean_interval([v for v, g in zip(nll, groups, strict=True) if g == name])
    return report


def canonical(evaluation: dict | None, reports: dict, support: dict[str, list[int]]) -> dict | None:
    """The release's headline number: its primary metric on its part's test questions with support at
    or above its threshold (NEWS: LLM-match, support >= 200), and the same metric per stratum."""
    if not evaluation:
        return None
    part, metric = evaluation["part"], evaluation["primary_metric"]
    values = reports[part]["per_example"].get(metric)
    if values is None:
        logger.warning("the release's primary metric %s was not computed: pass --judge for it", metric)

    def stratum(k: int) -> dict:
        rows = [i for i, c in enumerate(support[part]) if c >= k]
        correct = None if values is None or not rows else sum(1 for i in rows if values[i]) / len(rows)
        return {"n": len(rows), "accuracy": correct}

    headline = stratum(evaluation["min_support"])
    strata = {f">={k}": stratum(k) for k in [evaluation["min_support"], *evaluation.get("strata", ())]}
    return {**evaluation, **headline, "by_stratum": strata}


def judge_record(record: dict | None, tables: dict[str, tuple]) -> dict | None:
    """results.json ``judge``: identity and calibration, the share of verdicts code took, and the
    judge's agreement with exact match and contains, per part."""
    from continuousbench.harness.qa_eval import references
    from continuousbench.scoring.judge import decision_counts
    from continuousbench.scoring.match import judge_agreement

    if record is None:
        return None
    decided, agreement = {}, {}
    for part, (_, qa, predictions, report) in tables.items():
        decided[part] = decision_counts(references(qa), predictions)
        agreement[part] = judge_agreement(report["per_example"])
    return {**record, "decided": decided, "agreement": agreement}


def build_results(
    h: HarnessArguments,
    m: ModelArguments,
    t: EvaluatorConfig,
    inputs: Inputs,
    trained: Trained,
    tables: dict[str, tuple],
    recipe: dict,
    forgotten: dict | None = None,
) -> dict:
    """What ``results.json`` records (schema: :mod:`.results`): inputs as given and resolved, recipe
    values, selection, metrics with intervals."""
    import continuousbench
    from continuousbench.results import record as results_record

    reports = {part: row[3] for part, row in tables.items()}
    support = {part: [int(c) for c in qa["support_count"]] for part, qa in inputs.qa_test.items()}
    corpus, keys = inputs.corpus_record, TRAINING_KEYS
    blocks = t.per_device_train_batch_size * t.gradient_accumulation_steps * t.world_size
    tokens_per_step = blocks * t.max_length
    if trained.privacy is not None:  # un-noised functions of the private documents stay unpublished
        corpus, keys = {**corpus, "fingerprint": None, "cut": None}, DP_TRAINING_KEYS
        tokens_per_step = round(trained.privacy["expected_batch_size"] * t.max_length)  # an upper bound
    record = {
        "release": inputs.release,
        "base_model": m.model,
        "model": inputs.model_record,
        "tuning": m.tuning,
        "model_args": dict(vars(m)),
        "harness_args": {k: v for k, v in vars(h).items() if k not in ("overwrite", "resume", "json")},
        "training_args": {k: getattr(t, k) for k in keys} | {"world_size": t.world_size},
        "recipe": recipe,
        "corpus": corpus,
        "model_privacy": trained.privacy,
        "generation": inputs.generation_record,
        "steps": t.max_steps,
        "tokens_per_step": tokens_per_step,
        "selected_checkpoint": trained.selected,
        "validation_history": trained.history,
        "metrics": {part: {k: v for k, v in r.items() if k != "per_example"} for part, r in reports.items()},
        "matchers": [m for m in reports["qa_public"]["metrics"] if m not in RANKED],
        "canonical": canonical(inputs.evaluation, reports, support),
        "judge": judge_record(inputs.judge_record, tables),
        "forgetting": forgotten,
        "package_version": continuousbench.__version__,
        "seed": t.seed,
    }
    return results_record.complete(record, model=trained.model)


def main(
    harness_args: HarnessArguments,
    model_args: ModelArguments,
    training_args: EvaluatorConfig,
    *,
    recipe: str | None = None,
    callbacks: Sequence = (),
) -> dict:
    """Run the harness (arguments in the parser's order); return the results dict (also written to
    ``<output_dir>/results.json``), or {} on processes other than the main one."""
    from continuousbench.harness import outputs

    h, m, t = harness_args, model_args, training_args
    _check_arguments(h, m, t)
    if t.disable_tqdm:  # bars off (recipes for logs and job files): transformers' load and save bars too
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    recipes.rebase(h, m, recipe)  # the recipe's own paths, relative to it
    recipes.check(h)
    recipe_record = recipes.record(h, m, t, recipe)  # before training: a bad recipe file fails now
    staged, inputs, plan = processes.main_first(lambda: prepare(h, m, t), processes.current())
    losses = [_mix_loss(inputs, inputs.model, t.max_length)]  # the forgetting monitor's "before"
    trained = train(inputs, t, staged.work, resume=h.resume, callbacks=callbacks, m=m, plan=plan)
    tables = score(inputs, trained.model)
    losses.append(_mix_loss(inputs, trained.model, t.max_length))
    if tables is None:  # one writer; the other processes are done once their share is answered
        return {}
    from continuousbench.harness import forgetting

    forgotten = forgetting.record(inputs.mix, *losses)
    results = build_results(h, m, t, inputs, trained, tables, recipe_record, forgotten)
    push = {"repo_id": t.hub_model_id, "token": t.hub_token} if t.push_to_hub else None
    return outputs.write_run(staged, results, tables, trained=trained.has_model, push=push)


def _mix_loss(inputs: Inputs, model, max_length: int) -> float | None:
    if inputs.mix is None:
        return None
    from continuousbench.harness import forgetting

    return forgetting.heldout_loss(model, inputs.tokenizer, inputs.mix["texts"], max_length)


def resume_hint(argv: Sequence[str]) -> str:
    """What Ctrl-C leaves behind, and the command that continues the run."""
    args, skip = [], False
    for arg in argv:
        if skip and arg.lower() in ("true", "false", "1", "0", "yes", "no"):
            skip = False
            continue
        skip = arg == "--overwrite"
        if not (skip or arg.startswith("--overwrite=")):
            args.append(arg)
    if not any(a == "--resume" or a.startswith("--resume=") for a in args):
        args.append("--resume")
    return (
        "a previous run in --output_dir is untouched and the checkpoints saved so far are kept; "
        f"continue with: continuousbench evaluate {redact(shlex.join(args))}"
    )


SUMMARY = (("exact_match", "EM"), ("contains", "contains"))  # the matchers the line shows, and their names


def summary(results: dict, output_dir: str) -> str:
    """The one line a finished run prints: EM and contains with their 95% intervals, per part, and where
    the run is."""

    def score(m: dict) -> str:
        low, high = m["ci95"] or (None, None)
        interval = f" [{low:.2f}, {high:.2f}]" if low is not None else ""
        return "n/a" if m["accuracy"] is None else f"{m['accuracy']:.3f}{interval}"

    parts = []
    for part, block in results["metrics"].items():
        metrics = block["metrics"]
        shown = [f"{name} {score(metrics[key])}" for key, name in SUMMARY]
        parts.append(f"{part}: {', '.join(shown)}")
    return f"{'; '.join(parts)} -> {output_dir}"


# The evaluator's three argument groups; ``--config`` reads a recipe YAML. Its entry point is the one
# command that is not ``command()``'s: the results name the recipe file and the resume hint repeats argv.
make_parser, _ = command(
    dataclasses_,
    "continuousbench evaluate",
    "Continue pretraining a base model on a candidate corpus, then score a release's QA.",
    main,
    epilog="--config <recipe.yaml> sets these options (defaults < YAML < command line); recipes/README.md.",
    brief=(HarnessArguments, ModelArguments, RecipeOptions, DPOptions),
)


def cli(argv: Sequence[str] | None = None) -> dict:
    """Parse ``argv`` (default ``sys.argv[1:]``), run :func:`main`, print one line of test scores (the
    whole results record with ``--json``)."""
    args = short_help(argv, **make_parser.help_of())

    def work() -> dict:
        parser = make_parser()
        harness_args, model_args, training_args = parser.parse(args)
        results = main(harness_args, model_args, training_args, recipe=parser.config_path)
        if results:
            out = training_args.output_dir
            print(json.dumps(results, indent=1) if harness_args.json else summary(results, out))
        return results

    return run(work, resume_hint=resume_hint(args))
