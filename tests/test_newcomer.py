"""The newcomer's path, as the README and docs tell it (issue 35): bring a DP corpus of your own, run the
fixed harness on it with the tiny recipe, compare it with the release's own corpus, report, submit, and
see it ranked.

``make install`` is taken as done (this interpreter); the tiny release is the session's. Each step runs
through the ``continuousbench`` program as a user types it, from a fresh folder with relative paths, and
its output is checked as a user would read it. The runs are shortened to 2 steps (the only options added
to the recipe, the same for both runs). Not covered here: the leaderboard's static export and a study
over the participant's corpus (built in other branches).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "recipes" / "configs" / "geminon-tiny-demo.yaml"
BASE = ROOT / "continuousbench" / "demo" / "base"
SHORT = ["--max_steps", "2", "--eval_steps", "1", "--save_steps", "1", "--logging_steps", "1",
         "--qa_eval_limit", "4", "--qa_test_limit", "6"]  # fmt: skip


@pytest.mark.slow
def test_the_participants_path_from_the_readme(invoke, tiny_release, tmp_path, monkeypatch, caplog):
    from continuousbench.leaderboard import load_submissions, rank
    from continuousbench.training.data import load_corpus

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")

    # 1. My DP corpus: a folder with the documents (train.jsonl) and the guarantee I claim (privacy.json).
    mine = Path("mine")
    mine.mkdir()
    texts = list(load_corpus(str(tiny_release))["text"])[:40]
    (mine / "train.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    (mine / "privacy.json").write_text(json.dumps({"private": True, "epsilon": 8.0, "delta": 1e-6}))

    # 2. The harness with the tiny recipe on my corpus, and on the release's own corpus.
    common = ["--config", str(RECIPE), "--release", str(tiny_release), "--model", str(BASE), *SHORT]
    for run, corpus in (("runs/mine", ["--corpus", "mine"]), ("runs/real", [])):
        done = invoke(["evaluate", *common, *corpus, "--output_dir", run])
        assert done.exit_code == 0, done.output
        (line,) = done.stdout.strip().splitlines()  # one line: scores with intervals, and where the run is
        assert line.startswith("qa_public: EM ") and " contains " in line and line.endswith(f"-> {run}")
        assert "Loading weights" not in done.stderr and "it/s]" not in done.stderr  # the recipe: no bars
    assert "step 2/2 (100%)" in caplog.text and "ETA" in caplog.text  # training progress with an ETA
    assert "missing keys" not in caplog.text  # the tied LM head of the reloaded best checkpoint
    record = json.loads(Path("runs/mine/results.json").read_text())
    assert record["corpus"]["privacy"]["epsilon"] == 8.0 and record["recipe"]["given"] == str(RECIPE)

    # 3. Compare (paired, same questions) and report (fits the terminal, names my corpus).
    compared = invoke(["compare", "runs/mine", "runs/real"])
    assert compared.exit_code == 0, compared.output
    assert "mine" in compared.stdout and "real" in compared.stdout
    reported = invoke(["report", "runs/mine", "runs/real"])
    assert reported.exit_code == 0, reported.output
    assert max(map(len, reported.stdout.splitlines())) <= 120
    assert "mine" in reported.stdout and "DP data" in reported.stdout

    # 4. Submit to a results folder; the leaderboard ranks both runs.
    for run in ("runs/mine", "runs/real"):
        submitted = invoke(["submit", run, "--to", "results"])
        assert submitted.exit_code == 0, submitted.output
    subs, problems = load_submissions("results")
    assert problems == [] and len(subs) == 2
    _, rows = rank(subs, record["release"]["id"])
    assert len(rows) == 2

    # 5. Nothing else was written into the newcomer's folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "results", "runs"]
