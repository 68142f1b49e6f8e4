"""``release --quarter``: a tiny Geminon quarter built, gated against the quarter before it, reported and
published (fake Hub); a failing gate publishes nothing; bad quarters are refused in one line."""

import json
import shutil
from datetime import date

import pytest
from fake_hub import SECRET, fake_hub

from continuousbench.study.quarterly import check_quarter, redact


@pytest.fixture
def root_with_q1(tmp_path):
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    build_release(GeminonBuildArguments(size="tiny", quarter="2026q1", out=str(tmp_path)), progress=False)
    return tmp_path


def _errors(result):
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


QUARTER = ["release", "--quarter", "2026q2", "--tracks", "geminon", "--size", "tiny"]


def test_quarter_is_built_gated_reported_and_published(invoke, monkeypatch, root_with_q1):
    hub = fake_hub(monkeypatch, "geminon-tiny-2026q2")
    result = invoke([*QUARTER, "--root", root_with_q1, "--publish", "my-org/cb"])
    assert result.exit_code == 0, result.output
    report = json.loads((root_with_q1 / ".quarterly/2026q2/report.json").read_text())
    assert report["passed"] and report["published_to"] == "my-org/cb"
    q2 = report["releases"]["geminon-tiny-2026q2"]
    assert q2["gates"]["gates"]["fresh"]["previous"] == ["geminon-tiny-2026q1"]
    assert q2["rows"]["qa_public"] == {"test": 104, "validation": 52}
    assert sum(q2["gates"]["gates"]["learnable"]["histograms"]["qa_public"].values()) == 156
    assert hub.calls["create_tag"][1]["tag"] == "geminon-tiny-2026q2"
    page = (root_with_q1 / ".quarterly/2026q2/report.md").read_text()
    assert "| geminon-tiny-2026q2 | " in page and "fresh: corpus 13-gram overlap" in page
    assert SECRET not in page + json.dumps(report)
    # a rerun resumes: the release is kept, not rebuilt
    stamp = (root_with_q1 / "geminon-tiny-2026q2/release.json").stat().st_mtime_ns
    assert invoke([*QUARTER, "--root", root_with_q1]).exit_code == 0
    assert (root_with_q1 / "geminon-tiny-2026q2/release.json").stat().st_mtime_ns == stamp


def test_failing_gate_publishes_nothing(invoke, monkeypatch, root_with_q1):
    hub = fake_hub(monkeypatch, "geminon-tiny-2026q2")
    result = invoke([*QUARTER, "--root", root_with_q1, "--publish", "my-org/cb", "--min_support", "100000"])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "nothing published" in line
    assert "gate learnable failed: public questions with support under 100000 156 (threshold 0)" in line
    assert "create_commit" not in hub.calls and "create_tag" not in hub.calls
    assert json.loads((root_with_q1 / ".quarterly/2026q2/report.json").read_text())["passed"] is False


@pytest.mark.parametrize(
    ("quarter", "tracks", "message"),
    [
        ("2027q5", ["geminon"], "bad quarter '2027q5'"),
        ("2026q4", ["news"], "--quarter 2026q4 ends on 2026-12-31"),
        ("2026q1", ["sports"], "--tracks sports"),
    ],
)
def test_bad_quarter_is_refused_in_one_line(quarter, tracks, message):
    from continuousbench.errors import UserError

    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        check_quarter(quarter, tracks, today=date(2026, 11, 27))
    assert check_quarter("2026q3", ["news"], today=date(2026, 11, 27)) == ["2026q3"]


def test_plan_prints_jobs_and_gpu_hours(invoke):
    result = invoke(["release", "--quarter", "2027q1", "--models", "google/gemma-3-1b-pt", "--plan"])
    assert result.exit_code == 0, result.output
    assert "gate/geminon-small-2027q1" in result.stdout and "build/geminon-small-2027q1" in result.stdout
    assert "total:" in result.stdout and "GPU-hours" in result.stdout


def test_credentials_are_redacted_from_endpoint_specs():
    """The one redaction (credentials.redact), completions: specs included (user:password was kept)."""
    spec = "endpoint:https://user:hf_secret@api.example.com:8443/v1?api_key=k#google/gemma-3-27b-it"
    shown = "endpoint:https://REDACTED@api.example.com:8443/v1?api_key=REDACTED#google/gemma-3-27b-it"
    assert redact(spec) == shown
    assert redact("completions:http://u:pw@h/v1?key=k#m") == "completions:http://REDACTED@h/v1?key=REDACTED#m"
    assert redact("offline:news") == "offline:news"


def test_the_workflow_runs_the_release_command_with_options_it_takes():
    import re
    import shlex
    from pathlib import Path

    import yaml

    from continuousbench.study.quarterly import make_parser

    workflow = yaml.safe_load(
        (Path(__file__).parents[2] / ".github/workflows/quarterly-release.yml").read_text()
    )
    assert workflow[True]["schedule"][0]["cron"] == "0 6 1 1,4,7,10 *"  # YAML 1.1 reads the key `on` as True
    steps = workflow["jobs"]["release"]["steps"]
    lines = [
        line for s in steps for line in s.get("run", "").splitlines() if "continuousbench release" in line
    ]
    assert len(lines) == 4
    for line in lines:
        line = re.sub(r"\$\{\{[^}]*\}\}", "2026q1", line)
        line = re.sub(r'"\$\{?\w+[^"]*"', "value", line)
        argv = shlex.split(line.split("continuousbench release", 1)[1])
        args = make_parser().parse(argv)[0]
        assert args.quarter in ("2026q1", "value") and args.tracks in (["geminon"], ["news"])
    env = workflow["jobs"]["release"]["env"]
    assert env["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}" and "echo $HF_TOKEN" not in json.dumps(steps)


def test_gates_run_as_study_jobs_on_the_local_executor(invoke, root_with_q1):
    result = invoke([*QUARTER, "--root", root_with_q1, "--executor", "local"])
    assert result.exit_code == 0, result.output
    out = root_with_q1 / ".quarterly/2026q2"
    manifest = json.loads((out / "gates/manifest.json").read_text())
    assert manifest["jobs"]["gate/geminon-tiny-2026q2"]["status"] == "done"
    assert "--previous geminon-tiny-2026q1" in manifest["jobs"]["gate/geminon-tiny-2026q2"]["command"]
    report = json.loads((out / "report.json").read_text())
    assert report["passed"] and report["releases"]["geminon-tiny-2026q2"]["seconds"]["gates"] > 0
    # other thresholds over a finished gate job: refused in one line (its report answers another question)
    failing = [*QUARTER, "--root", root_with_q1, "--executor", "local", "--min_support", "100000"]
    result = invoke(failing)
    assert result.exit_code == 2 and "finished with another command" in result.stderr
    # a gate job that fails still writes its report: read back, one line, nothing passes
    shutil.rmtree(out / "gates")
    result = invoke(failing)
    (line,) = _errors(result)
    assert (
        result.exit_code == 2 and "gate learnable failed: public questions with support under 100000" in line
    )
    assert json.loads((out / "report.json").read_text())["passed"] is False
