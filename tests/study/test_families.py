"""The three families of DP synthesis (DP-SGD generator, Private Evolution, private prediction) in one
tiny study on CPU: every corpus states its guarantee in the same schema, and the report shows them side
by side."""

from pathlib import Path

import pytest

from continuousbench.files import read_json
from continuousbench.study import command

ROOT = Path(__file__).resolve().parents[2]
STUDY = (Path(__file__).parent / "tiny_families.yaml").read_text()


@pytest.mark.slow
def test_three_families_run_and_report_side_by_side(tmp_path, tiny_release):
    """On the session's tiny release (the study's build job is tests/study/test_study.py's to check)."""
    study = tmp_path / "families.yaml"
    text = STUDY.replace("DEMO_FOLDER", str(ROOT / "continuousbench" / "demo")).replace(
        "RECIPES", str(ROOT / "recipes" / "configs")
    )
    build = next(line for line in text.splitlines() if line.startswith("build:"))
    study.write_text(text.replace(build, f"release: {tiny_release}"))
    out = tmp_path / "out"
    command.cli(["--config", str(study), "--out", str(out), "--jobs", "2"])
    manifest = read_json(out / "manifest.json")["jobs"]
    assert {"train-generator/dp-sgd-eps10", "pe/pe-eps10", "private-prediction/pp-eps10"} <= set(manifest)
    assert all(entry["status"] == "done" for entry in manifest.values())
    rows = {r["run"]: r for r in read_json(out / "report" / "results.json")["runs"]}
    assert set(rows) == {"dp-sgd-eps10", "pe-eps10", "pp-eps10"}
    stated = {name: read_json(out / "synthetic" / name / "privacy.json") for name in rows}
    assert all(s["private"] and s["target_epsilon"] == 10 and s["epsilon"] <= 10 for s in stated.values())
    assert stated["pp-eps10"]["kind"] == "private-prediction" and stated["pp-eps10"]["accountant"] == "rdp"
    printed = (out / "report" / "report.txt").read_text()
    assert all(name in printed for name in rows)
