"""The newcomer's path, as the README and docs tell it (issue 35): bring a DP corpus of your own, run the
fixed harness on it with the tiny recipe, compare it with the release's own corpus, report, submit, and
see it ranked.

``make install`` is taken as done (this interpreter); the tiny release is the session's. Each step runs
through the ``continuousbench`` program as a user types it, from a fresh folder with relative paths, and
its output is checked as a user would read it. The runs are shortened to 2 steps (the only options added
to the recipe, the same for both runs), so their recipe is not the canonical one: the leaderboard ranks
them apart, under "Other recipes", and says why. Then the same corpus goes through a study file
(``corpora: {name: path}``, docs/study.md): its plan, then its one evaluation and report.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "recipes" / "configs" / "geminon-tiny-demo.yaml"
BASE = ROOT / "continuousbench" / "demo" / "base"
SHORT = [
    "--max_steps",
    "2",
    "--eval_steps",
    "1",
    "--save_steps",
    "1",
    "--logging_steps",
    "1",
    "--qa_eval_limit",
    "4",
    "--qa_test_limit",
    "6",
]


@pytest.mark.slow
def test_the_participants_path_from_the_readme(invoke, tiny_release, tmp_path, monkeypatch, caplog):
    import pandas as pd

    from continuousbench.leaderboard import CANONICAL, OTHER, load_submissions, rank
    from continuousbench.training.data import load_corpus

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tiny_release.parent))  # where `build` put it

    # 1. My DP corpus: a folder with the documents (train.jsonl) and the guarantee I claim (privacy.json).
    mine = Path("mine")
    mine.mkdir()
    texts = list(load_corpus(str(tiny_release))["text"])[:40]
    (mine / "train.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    (mine / "privacy.json").write_text(json.dumps({"private": True, "epsilon": 8.0, "delta": 1e-6}))

    # 2. The harness with the tiny recipe on my corpus, and on the release's own corpus.
    common = ["--config", str(RECIPE), "--release", tiny_release.name, "--model", str(BASE), *SHORT]
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
    release = record["release"]["id"]
    _, rows = rank(subs, release)
    assert len(rows) == 2

    # 5. The leaderboard as a static page (docs/leaderboard.md): the ranking above, shortened runs apart.
    exported = invoke(["leaderboard", "--results", "results", "--html", "leaderboard.html"])
    assert exported.exit_code == 0, exported.output
    page = Path("leaderboard.html").read_text()
    _, apart = rank(subs, release, recipes=OTHER)
    assert rank(subs, release, recipes=CANONICAL)[1] == [] and "No canonical run yet." in page
    assert "Other recipes (2): ranked apart" in page
    tables = pd.read_html(io.StringIO(page))  # a script reads the page as it is
    assert [r["run"] for r in apart] == [r["run"] for r in rows]  # both shortened: both apart
    assert len(tables) == 1 and list(tables[0]["run"]) == [r["run"] for r in apart]  # in rank()'s order
    assert sorted(tables[0]["run"]) == ["runs/mine", "runs/real"]

    # 6. A study over my corpus (docs/study.md): its plan checks every job, then it runs them.
    options = ", ".join(f"{k[2:]}: {v}" for k, v in zip(SHORT[::2], SHORT[1::2], strict=True))
    study = f"""name: mine
release: {tiny_release.name}
corpora: {{mine: mine}}
evaluators:
  - name: tiny
    config: {RECIPE}
    corpora: [mine]
    options: {{model: {BASE}, {options}}}
gpus: {{evaluate: 0}}
"""
    Path("study.yaml").write_text(study)
    planned = invoke(["study", "--config", "study.yaml", "--plan"])
    assert planned.exit_code == 0, planned.output
    assert "evaluate/tiny/mine-seed0" in planned.stdout and "report/all" in planned.stdout
    assert re.search(r"total: 0\.0 GPU-hours on [^;]+; [0-9.]+ CPU-hours", planned.stdout), planned.stdout
    assert not Path("studies").exists()  # the plan ran nothing
    ran = invoke(["study", "--config", "study.yaml", "--jobs", "1"])
    assert ran.exit_code == 0, ran.output
    assert "all 2 jobs done" in ran.stdout and "mine-seed0" in ran.stdout  # the report, printed at the end
    studied = json.loads(Path("studies/mine/runs/tiny/mine-seed0/results.json").read_text())
    assert studied["corpus"]["privacy"]["epsilon"] == 8.0  # the folder's privacy.json, through the study
    assert studied["recipe"]["sha256"] == record["recipe"]["sha256"]  # the harness of step 2, unchanged
    assert studied["metrics"]["qa_public"] == record["metrics"]["qa_public"]  # same seed: same scores

    # 7. Nothing else was written into the newcomer's folder.
    written = ["leaderboard.html", "mine", "results", "runs", "studies", "study.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == written
