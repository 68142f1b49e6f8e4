"""What a harness run leaves in its folder, and how it gets there without ever losing a finished run.

``<output_dir>/results.json``          everything needed to compare or reproduce the run
``<output_dir>/predictions.parquet``   one row per scored question
``<output_dir>/accuracy_by_support.png``
``<output_dir>/model/``                the selected checkpoint (adapter or weights), tokenizer, card
``<output_dir>/checkpoint-N/``         Trainer checkpoints (the best and the latest survive)

A run is staged (:class:`continuousbench.staged_output.StagedOutput`): it trains and writes in the hidden work
folder ``<output_dir>/.evaluate-work/`` (checkpoints included, so ``--resume`` continues from there),
and only once everything is written does it replace what ``evaluate`` published before; a failed or
interrupted ``--overwrite`` leaves the previous run as it was. The run's configuration is pinned in the
work folder, and a resume that changes anything but the output-only options below is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from continuousbench.files import atomic_write, write_json
from continuousbench.results.record import PREDICTIONS, RESULTS
from continuousbench.staged_output import StagedOutput
from continuousbench.training.sft import kept_checkpoints

logger = logging.getLogger(__name__)

COMMAND = "evaluate"
PLOT = "accuracy_by_support.png"
MODEL_DIR = "model"
OUTPUTS = (RESULTS, PREDICTIONS, PLOT, MODEL_DIR)
# Options a resumed run may change: they touch only the final scoring, logging or where things go.
OUTPUT_ONLY = frozenset(
    {
        "overwrite",
        "resume",
        "json",
        "qa_test_limit",
        "qa_batch_size",
        "judge",
        "judge_min_accuracy",
        "judge_max_false_accept",
        "judge_override_calibration",
        "output_dir",
        "report_to",
        "run_name",
        "project",
        "disable_tqdm",
        "push_to_hub",
        "save_total_limit",
        "local_rank",
        "debug",
        "skip_memory_metrics",
        "resume_from_checkpoint",
        "ddp_timeout",
        "include_num_input_tokens_seen",
        "dataloader_num_workers",
        "dataloader_pin_memory",
        "dataloader_persistent_workers",
        "dataloader_prefetch_factor",
        "dataloader_multiprocessing_context",
    }
)
OUTPUT_ONLY_PREFIXES = ("logging_", "log_", "hub_", "trackio_")


def open_run(
    output_dir: str | Path, *, overwrite: bool, resume: bool, main: bool = True, inputs: Sequence = ()
) -> StagedOutput:
    """The staged run folder (never one of ``inputs`` or inside one). The main process checks and prepares
    it; the others (``main=False``, called after it) only join the work folder it prepared."""
    if not main:
        return StagedOutput(output_dir, COMMAND, resume=True, lock=False)
    staged = StagedOutput(output_dir, COMMAND, overwrite=overwrite, resume=resume, inputs=inputs)
    owned = set(staged.owned())
    theirs = [
        p
        for p in (*(staged.out / n for n in OUTPUTS), *staged.out.glob("checkpoint-*"))
        if p.exists() and p.name not in owned
    ]
    if theirs:  # found now, not after hours of training when publishing would refuse them
        if not resume:
            staged.discard()
        raise FileExistsError(
            f"{theirs[0]} was not written by `continuousbench {COMMAND}` (or by an older version of it); "
            "move it away or choose another --output_dir"
        )
    return staged


def is_output_only(option: str) -> bool:
    return option in OUTPUT_ONLY or option.startswith(OUTPUT_ONLY_PREFIXES)


def run_config(options: dict, inputs) -> dict:
    """What a resumed run must share with the run it continues: every option but the output-only ones,
    with the inputs as resolved paths and content hashes (a corpus regenerated in place is a change)."""
    config = {k: v for k, v in options.items() if not is_output_only(k)}
    replay = inputs.corpus_record["replay"] or {}
    config.update(
        release=inputs.release["path"],
        release_manifest_sha256=inputs.release["manifest_sha256"],
        corpus=inputs.corpus_record["path"],
        corpus_fingerprint=inputs.corpus_record["fingerprint"],
        replay_corpus=replay.get("path"),
        replay_fingerprint=replay.get("fingerprint"),
        model=inputs.model_record["path"],
    )
    return config


def write_run(staged: StagedOutput, results: dict, tables: dict, trained: bool, push: dict | None) -> dict:
    """Write the outputs into the work folder, then publish them together; push the model if asked.

    ``tables`` maps each part to (split, qa, predictions, report); ``push`` holds ``repo_id`` and
    ``token`` when the selected model goes to the Hub (after publishing: a failed upload loses nothing).
    """
    from continuousbench.harness.card import model_card, push_run

    work, out = staged.work, staged.out
    reports = {part: row[3] for part, row in tables.items()}
    write_predictions(work / PREDICTIONS, predictions_table(tables, results["matchers"]))
    model = results["base_model"].rstrip("/").rsplit("/", 1)[-1]
    title = f"{model} {results['tuning']} on {results['release']['id']}"
    plot_accuracy_by_support(work / PLOT, reports, title)
    names = [RESULTS, PREDICTIONS, PLOT]
    if trained:
        card_name = push["repo_id"] if push else out.name
        model_card(results, card_name).save(work / MODEL_DIR / "README.md")
        names += [MODEL_DIR, *kept_checkpoints(work)]
    elif push:
        logger.warning("--steps 0 trains nothing: there is no model to push")
    write_json(work / RESULTS, results)
    staged.publish(names)
    if push and trained:
        results["hub_commit"] = push_run(out / MODEL_DIR, push["repo_id"], token=push["token"])
        results["model_repo"] = push["repo_id"]  # the leaderboard links its card
        write_json(out / RESULTS, results)
    return results


def predictions_table(rows_by_part: dict[str, tuple], matchers):
    """One row per question: part, split, id, question, answer, prediction, one bool per matcher, support."""
    import pandas as pd

    frames = []
    for part, (split, qa, predictions, report) in rows_by_part.items():
        frame = pd.DataFrame(
            {
                "part": part,
                "split": split,
                "id": list(qa["id"]),
                "question": list(qa["question"]),
                "answer": list(qa["answer"]),
                "prediction": predictions,
            }
        )
        for name in matchers:
            frame[name] = [bool(v) if v is not None else None for v in report["per_example"][name]]
        for name in ("mcq", "mcq_acc", "answer_nll"):  # ranked choice: picks right or not; answer loss
            if name in report["per_example"]:
                frame[name] = report["per_example"][name]
        frame["support_count"] = [int(c) for c in qa["support_count"]]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def write_predictions(path: Path, table) -> Path:
    return atomic_write(path, lambda tmp: table.to_parquet(tmp, index=False))


def plot_accuracy_by_support(path: Path, reports: dict[str, dict], title: str) -> Path:
    """Accuracy per support-count bucket (x: mean support, log scale), one line per part and matcher,
    each point with its Wilson 95% interval."""
    from continuousbench.results.plots import accuracy_by_support, bucket_series

    series = [
        bucket_series(f"{part} {name}", report.get("buckets", []), name)
        for part, report in reports.items()
        for name in report["metrics"]
    ]
    caption = "error bars: Wilson 95% interval of each bucket's accuracy"
    return accuracy_by_support(path, [s for s in series if s], title, caption=caption)
