"""A results dataset for the leaderboard: a real harness run's record beside three rescored copies of it."""

from __future__ import annotations

import hashlib
import json
import shutil

import pandas as pd
import pytest

from continuousbench.results.submit import cli as submit
from continuousbench.scoring.match import SUPPORT_BUCKETS, score

# name -> (correct public answers of 6, privacy statement, keep per-question outcomes)
VARIANTS = {
    "syn": (6, {"private": False}, True),
    "dp-eps100": (5, {"private": True, "epsilon": 100.0, "delta": 1e-6, "unit": "record"}, True),
    "dp-eps10": (2, {"private": True, "epsilon": 10.0, "delta": 1e-6, "unit": "record"}, False),
}


def rescored_copy(run, out, correct: int, privacy: dict):
    """``run`` with its first ``correct`` public answers made right, rescored by the library's scorer: the
    run of another corpus (its own fingerprint, named after ``out``), so each copy is a row of its own."""
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
    table = pd.read_parquet(out / "predictions.parquet")
    public = table.index[table["part"] == "qa_public"]
    table.loc[public, "prediction"] = [
        a if i < correct else "no idea" for i, a in enumerate(table.loc[public, "answer"])
    ]
    rows = table.loc[public]
    report = score(
        list(rows["prediction"]),
        [[a] for a in rows["answer"]],
        support_counts=list(rows["support_count"]),
        buckets=SUPPORT_BUCKETS,
    )
    for name, values in report.pop("per_example").items():
        table.loc[public, name] = values
    table.to_parquet(out / "predictions.parquet", index=False)
    record = json.loads((out / "results.json").read_text())
    record["metrics"]["qa_public"] = report
    record["corpus"]["privacy"] = privacy
    record["corpus"]["fingerprint"] = hashlib.sha256(out.name.encode()).hexdigest()
    (out / "results.json").write_text(json.dumps(record))
    return out


@pytest.fixture(scope="session")
def results_dataset(tmp_path_factory, finished_run):
    """A local results dataset: ``finished_run`` submitted as is, and the VARIANTS submitted beside it."""
    root = tmp_path_factory.mktemp("results-dataset")
    work = tmp_path_factory.mktemp("variants")
    submit([str(finished_run), "--to", str(root / "results"), "--name", "real-run"])
    for name, (correct, privacy, outcomes) in VARIANTS.items():
        run = rescored_copy(finished_run, work / name, correct, privacy)
        if not outcomes:
            (run / "predictions.parquet").unlink()
        submit([str(run), "--to", str(root / "results"), "--name", name])
    return root / "results"


@pytest.fixture(autouse=True)
def known_releases(tiny_release, monkeypatch):
    """The leaderboard knows the releases built under the tiny release's root (and no Hub repo)."""
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tiny_release.parent))
    monkeypatch.delenv("CONTINUOUSBENCH_HUB_REPO", raising=False)


@pytest.fixture(scope="session")
def subs(results_dataset, tiny_release):
    """The submissions of ``results_dataset``, as the leaderboard loads them (none left out)."""
    from continuousbench import leaderboard as lb

    loaded, problems = lb.load_submissions(results_dataset, lb.ReleaseIndex(root=tiny_release.parent))
    assert problems == []
    return loaded


@pytest.fixture(scope="session")
def edited():
    """``edited(sub, key=value...)``: a copy of submission ``sub`` with top-level record keys replaced."""
    import copy

    from continuousbench import leaderboard as lb

    def edit(sub, **changes):
        record = copy.deepcopy(sub.record)
        record.update(changes)
        return lb.Submission(sub.name, record, sub.path)

    return edit
