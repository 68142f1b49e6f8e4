"""``continuousbench evaluate`` == ``accelerate launch recipes/evaluate.py``: train the evaluator, score QA.

One parser (:func:`make_parser`) and one :func:`main` serve both entry points. The run:

1. checks the run folder (no silent overwrite), verifies the release and loads its QA;
2. loads the candidate corpus (default: the release's own) and the base model (LoRA or full);
3. continues pretraining for ``max_steps`` steps (0: score the base checkpoint), evaluating the
   validation ``qa_public`` contains accuracy every ``eval_steps``; Trainer keeps and reloads the best;
4. scores the test splits of ``qa_public`` and ``qa_singleton`` with the selected model and writes
   ``results.json``, ``predictions.parquet``, a plot and the model card (see :mod:`.outputs`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from continuousbench.harness.config import EvaluatorConfig, HarnessArguments, ModelArguments
from continuousbench.harness.qa_eval import evaluate_qa, selection_eval, subsample

logger = logging.getLogger(__name__)

DATACLASSES = (HarnessArguments, ModelArguments, EvaluatorConfig)
PARTS = ("qa_public", "qa_singleton")
TRAINING_KEYS = (
    "learning_rate", "adam_beta1", "adam_beta2", "weight_decay", "lr_scheduler_type", "warmup_steps",
    "max_steps", "samples_per_step", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_length", "packing", "packing_strategy", "bf16", "eval_steps", "save_steps", "seed",
)  # fmt: skip


def make_parser():
    """The evaluator's three argument groups; ``--config`` reads a recipe YAML."""
    from continuousbench.commands import CommandParser

    return CommandParser(
        DATACLASSES,
        prog="continuousbench evaluate",
        description="Continue pretraining a base model on a candidate corpus, then score a release's QA.",
        epilog="--config <recipe.yaml> sets any of the options above (defaults < YAML < command line); "
        "recipes: recipes/configs/*.yaml, commands: recipes/README.md.",
    )


def _release(release: str) -> tuple[Path, dict, str]:
    """(folder, manifest, sha256 of release.json) of a verified release."""
    from continuousbench.release.layout import MANIFEST
    from continuousbench.release.load import resolve_release, verify_release

    folder = resolve_release(release)
    manifest = verify_release(folder)
    return folder, manifest, hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()


def _load_qa(folder: Path, part: str, split: str):
    from continuousbench.release.load import load_release

    return load_release(folder, part, split=split, verify=False)


def _judge(spec: str | None):
    if spec is None:
        return None
    from continuousbench.judge import Judge
    from continuousbench.llm import make_generator
    from continuousbench.release.layout import default_root

    return Judge(make_generator(spec), cache_dir=default_root() / "judge-cache", model_name=spec)


def _validation_history(log_history: Sequence[dict]) -> list[dict]:
    return [
        {"step": int(e["step"]), "contains": e["eval_qa_contains"]}
        for e in log_history
        if "eval_qa_contains" in e
    ]


def main(
    harness_args: HarnessArguments,
    training_args: EvaluatorConfig,
    model_args: ModelArguments,
    *,
    recipe: str | None = None,
    callbacks: Sequence = (),
) -> dict:
    """Run the harness; return the results dict (also written to ``<output_dir>/results.json``)."""
    import torch
    from transformers import set_seed

    import continuousbench
    from continuousbench.files import replace_dir, write_json
    from continuousbench.harness import outputs
    from continuousbench.harness import results as results_record
    from continuousbench.harness.card import model_card, push_run
    from continuousbench.harness.data import corpus_fingerprint, load_corpus, mix_replay
    from continuousbench.harness.modeling import load_model_and_tokenizer
    from continuousbench.harness.train import continued_pretraining

    h, t, m = harness_args, training_args, model_args
    if h.release is None:
        raise ValueError("no release given: pass --release <release id or folder>")
    if t.max_steps < 0:
        raise ValueError(f"--steps must be >= 0 (0 scores the base model), got {t.max_steps}")
    if t.push_to_hub and not t.hub_model_id:
        raise ValueError("--push_to_hub needs --hub_model_id <user/name>")
    out = Path(t.output_dir)
    outputs.check_run_dir(out, overwrite=h.overwrite, resume=h.resume)
    push, t.push_to_hub = t.push_to_hub, False  # we upload the selected model ourselves, not every checkpoint

    folder, manifest, manifest_sha = _release(h.release)
    track = h.track or manifest["track"]
    qa_val = subsample(_load_qa(folder, "qa_public", "validation"), h.qa_eval_limit, t.seed)
    qa_test = {part: subsample(_load_qa(folder, part, "test"), h.qa_test_limit, t.seed) for part in PARTS}
    corpus_source = h.corpus or str(folder)
    corpus = load_corpus(corpus_source, h.text_column, h.corpus_split)
    fingerprint, n_documents = corpus_fingerprint(corpus), len(corpus)  # the candidate alone, before replay
    replay = None
    if h.replay_corpus:
        replay_docs = load_corpus(h.replay_corpus)
        replay = {"source": h.replay_corpus, "fraction": h.replay_fraction,
                  "fingerprint": corpus_fingerprint(replay_docs)}  # fmt: skip
        corpus = mix_replay(corpus, replay_docs, h.replay_fraction, t.seed)
    judge = _judge(h.judge)

    set_seed(t.seed)  # LoRA initialisation is random
    model, tokenizer = load_model_and_tokenizer(
        m.model, tuning=m.tuning, lora_rank=m.lora_r, lora_alpha=m.lora_alpha, dtype=m.dtype,
        attn_implementation=m.attn_implementation,
    )  # fmt: skip
    if t.use_cpu:
        model = model.to("cpu")
    gen = {"track": track, "batch_size": h.qa_batch_size, "max_new_tokens": h.max_new_tokens}
    eval_fn = selection_eval(tokenizer, qa_val, **gen)

    if t.max_steps == 0:
        model = model.to(t.device)
        selected = {"name": "base", "step": 0, "validation_contains": eval_fn(model)["qa_contains"]}
        history, trainer = [], None
    else:
        trainer = continued_pretraining(
            model, tokenizer, corpus, t, eval_fn=eval_fn, callbacks=callbacks, resume=h.resume
        )
        model = trainer.model
        best = trainer.state.best_model_checkpoint
        selected = {
            "name": Path(best).name if best else f"checkpoint-{trainer.state.global_step}",
            "step": int(Path(best).name.rsplit("-", 1)[1]) if best else trainer.state.global_step,
            "validation_contains": trainer.state.best_metric,
        }
        history = _validation_history(trainer.state.log_history)
        if t.process_index != 0:  # one writer; the other ranks are done once training is
            return {}

    reports, rows = {}, {}
    with torch.inference_mode():
        for part, qa in qa_test.items():
            report, predictions = evaluate_qa(model, tokenizer, qa, judge=judge, **gen)
            rows[part] = ("test", qa, predictions, report)
            reports[part] = report
    matchers = list(reports["qa_public"]["metrics"])
    results = {
        "release": {"id": manifest["id"], "manifest_sha256": manifest_sha, "track": track},
        "base_model": m.model,
        "tuning": m.tuning,
        "model_args": dict(vars(m)),
        "harness_args": {k: v for k, v in vars(h).items() if k not in ("overwrite", "resume")},
        "training_args": {k: getattr(t, k) for k in TRAINING_KEYS} | {"world_size": t.world_size},
        "corpus": {"source": corpus_source, "documents": n_documents, "fingerprint": fingerprint,
                   "replay": replay},
        "steps": t.max_steps,
        "tokens_per_step": t.per_device_train_batch_size * t.gradient_accumulation_steps * t.world_size
        * t.max_length,
        "selected_checkpoint": selected,
        "validation_history": history,
        "metrics": {part: {k: v for k, v in r.items() if k != "per_example"} for part, r in reports.items()},
        "matchers": matchers,
        "package_version": continuousbench.__version__,
        "seed": t.seed,
    }  # fmt: skip
    results = results_record.complete(results, manifest=manifest, model=model, recipe_file=recipe)

    outputs.write_predictions(out / outputs.PREDICTIONS, outputs.predictions_table(rows, matchers))
    outputs.plot_accuracy_by_support(
        out / outputs.PLOT, reports, f"{m.model.rsplit('/', 1)[-1]} {m.tuning} on {manifest['id']}"
    )
    if trainer is not None:
        staging = out / f".{outputs.MODEL_DIR}.tmp"
        trainer.save_model(str(staging))
        model_card(results, t.hub_model_id or out.name).save(staging / "README.md")
        replace_dir(staging, out / outputs.MODEL_DIR)
        if push:
            results["hub_commit"] = push_run(out / outputs.MODEL_DIR, t.hub_model_id, token=t.hub_token)
    elif push:
        logger.warning("--steps 0 trains nothing: there is no model to push")
    write_json(out / outputs.RESULTS, results)
    return results


def cli(argv: Sequence[str] | None = None) -> dict:
    """Parse ``argv`` (default ``sys.argv[1:]``), run :func:`main`, print the test scores."""
    from continuousbench.commands import run

    def work() -> dict:
        parser = make_parser()
        harness_args, model_args, training_args = parser.parse(argv)
        results = main(harness_args, training_args, model_args, recipe=parser.config_path)
        if results:
            test = {p: results["metrics"][p]["metrics"] for p in PARTS}
            print(json.dumps({"output_dir": training_args.output_dir, "test": test}, indent=1))
        return results

    return run(work)
