"""What a harness run leaves in its folder, each file written atomically (temp file, then rename).

``<output_dir>/results.json``          everything needed to compare or reproduce the run (written last:
                                       its presence marks a finished run)
``<output_dir>/predictions.parquet``   one row per scored question
``<output_dir>/accuracy_by_support.png``
``<output_dir>/model/``                the selected checkpoint (adapter or weights), tokenizer, card
``<output_dir>/checkpoint-N/``         Trainer checkpoints (the best and the latest survive)
"""

from __future__ import annotations

import shutil
from pathlib import Path

from continuousbench.files import atomic_write

RESULTS = "results.json"
PREDICTIONS = "predictions.parquet"
PLOT = "accuracy_by_support.png"
MODEL_DIR = "model"
OUTPUTS = (RESULTS, PREDICTIONS, PLOT, MODEL_DIR)


def check_run_dir(output_dir: Path, *, overwrite: bool, resume: bool) -> None:
    """Refuse to clobber a run: finished results need --overwrite, checkpoints need --resume or --overwrite.

    With ``overwrite`` only this harness's own files and ``checkpoint-*`` folders are removed.
    """
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        return
    finished = (output_dir / RESULTS).exists()
    checkpoints = sorted(output_dir.glob("checkpoint-*"))
    if overwrite:
        for name in OUTPUTS:
            target = output_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        for ckpt in checkpoints:
            shutil.rmtree(ckpt)
        return
    if finished and not resume:
        raise FileExistsError(f"{output_dir} already holds a finished run ({RESULTS}); pass --overwrite")
    if finished and resume:
        raise FileExistsError(f"{output_dir} holds a finished run: nothing to resume; pass --overwrite")
    if checkpoints and not resume:
        raise FileExistsError(
            f"{output_dir} holds checkpoints of an unfinished run; pass --resume to continue or --overwrite"
        )


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
        frame["support_count"] = [int(c) for c in qa["support_count"]]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def write_predictions(path: Path, table) -> Path:
    return atomic_write(path, lambda tmp: table.to_parquet(tmp, index=False))


def plot_accuracy_by_support(path: Path, reports: dict[str, dict], title: str) -> Path:
    """Accuracy per support-count bucket (x: mean support, log scale), one line per part and matcher,
    each point with its Wilson 95% interval."""
    from continuousbench.harness.plots import accuracy_by_support, bucket_series

    series = [
        bucket_series(f"{part} {name}", report.get("buckets", []), name)
        for part, report in reports.items()
        for name in report["metrics"]
    ]
    caption = "error bars: Wilson 95% interval of each bucket's accuracy"
    return accuracy_by_support(path, [s for s in series if s], title, caption=caption)
