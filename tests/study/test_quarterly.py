"""``release --quarter``: tiny Geminon quarters built, gated against every earlier quarter, reported
(every attempt kept) and published to the Hub (faked at its HTTP boundary) or to a local git repository
that rehearses it; a failing gate publishes nothing; what can be refused is refused before any build."""

import json
import shutil
import subprocess
from datetime import date

import pytest
from fake_hub import SECRET, fake_hub

from continuousbench.study.quarterly import check_quarter, redact

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_quarterly")

QUARTER = ["release", "--quarter", "2026q2", "--tracks", "geminon", "--size", "tiny"]
Q2 = "geminon-tiny-2026q2"
WRITER = {
    "name": "me",
    "orgs": [{"name": "my-org", "roleInOrg": "write"}],
    "auth": {"accessToken": {"role": "write"}},
}


@pytest.fixture(scope="module")
def built(tmp_path_factory, tiny_release):
    """A root holding 2026q1 and 2026q2 (built, gated, not published) by the release command."""
    from continuousbench.cli import main

    root = tmp_path_factory.mktemp("quarter")
    shutil.copytree(tiny_release, root / tiny_release.name)
    main([*QUARTER, "--root", str(root)])
    return root


@pytest.fixture
def root(built, tmp_path):
    """A copy of ``built`` of the test's own (its 2026q2 is kept by the command: gates only)."""
    return shutil.copytree(built, tmp_path / "root")


def _errors(result):
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def _attempts(root, quarter="2026q2"):
    return sorted((root / ".quarterly" / quarter).glob("attempt-*"))


def _git(folder, *args):
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.slow  # ~12 s: CI only, not the fast lane
def test_a_quarter_is_built_gated_and_reported(built):
    (attempt,) = _attempts(built)
    report = json.loads((attempt / "report.json").read_text())
    q2 = report["releases"][Q2]
    assert report["passed"] and report["published_to"] is None and q2["previous"] == ["geminon-tiny-2026q1"]
    assert set(q2["gates"]["gates"]) == {"unsolvable", "learnable", "fresh"}  # no --models: the build's own
    screened = json.loads((built / Q2 / "release.json").read_text())["generator"]["closed_book"]
    assert q2["gates"]["gates"]["unsolvable"]["models"]["demo-base"]["correct"] == 0
    assert sum(q2["rows"]["qa_public"].values()) == 156 - screened["dropped_closed_book"].get("qa_public", 0)
    assert q2["seconds"]["build_stages"]["closed-book"] > 0
    page = (attempt / "report.md").read_text()
    assert f"| {Q2} | " in page and "fresh: corpus 13-gram overlap" in page
    assert "gated against: geminon-tiny-2026q1" in page and "0 of " in page


@pytest.mark.slow  # the module's built quarter (~11 s): CI only, not the fast lane
def test_quarter_is_published_to_the_hub(invoke, monkeypatch, root):
    hub = fake_hub(monkeypatch, "geminon-tiny-2026q1")
    hub.answer("whoami", WRITER)
    result = invoke([*QUARTER, "--root", root, "--publish", "my-org/cb"])
    assert result.exit_code == 0, result.output
    first, second = _attempts(root)  # the build's attempt and this one: both kept
    report = json.loads((second / "report.json").read_text())
    assert report["passed"] and report["published_to"] == "dataset repo my-org/cb"
    assert report["releases"][Q2]["url"].endswith(f"/datasets/my-org/cb/tree/{Q2}")
    assert hub.calls["create_tag"][1]["tag"] == Q2
    ops = {op.path_in_repo: op for op in hub.calls["create_commit"][1]["operations"]}
    assert f"{Q2}/gates.json" in ops and f"{Q2}/names.json" in ops
    assert "| passed: fresh, learnable, unsolvable |" in ops["README.md"].path_or_fileobj.decode()
    assert SECRET not in (second / "report.md").read_text() + json.dumps(report) + result.output
    assert json.loads((first / "report.json").read_text())["published_to"] is None


@pytest.mark.slow  # the module's built quarter (~11 s): CI only, not the fast lane
@pytest.mark.parametrize(
    ("call", "failure", "message"),
    [
        ("create_commit", "connect", "committing to dataset repo my-org/cb failed (connection refused)"),
        ("create_repo", KeyError("url"), "publishing to dataset repo my-org/cb failed: the server's answer"),
    ],
)
def test_a_hub_failure_while_publishing_is_one_line_after_the_report(
    invoke, monkeypatch, root, call, failure, message
):
    import httpx

    hub = fake_hub(monkeypatch, Q2)
    hub.answer("whoami", WRITER)
    hub.answer(call, httpx.ConnectError("connection refused") if failure == "connect" else failure)
    result = invoke([*QUARTER, "--root", root, "--publish", "my-org/cb"])
    (line,) = _errors(result)
    assert result.exit_code == 2 and f"publishing {Q2} failed: {message}" in line
    assert "Traceback" not in result.stderr and "create_tag" not in hub.calls
    report = json.loads((_attempts(root)[-1] / "report.json").read_text())
    assert report["passed"] and message in report["publish_error"] and report["releases"][Q2]["url"] is None


@pytest.mark.slow  # the module's built quarter (~11 s): CI only, not the fast lane
def test_a_failed_gate_writes_no_commit_and_no_tag(invoke, root, tmp_path):
    target = tmp_path / "rehearsal"
    result = invoke([*QUARTER, "--root", root, "--publish", target, "--min_support", "100000"])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "nothing published" in line
    assert "gate learnable failed: public questions with support under 100000" in line
    assert (
        _git(target, "tag", "-l") == ""
        and "does not have any commits"
        in subprocess.run(["git", "-C", str(target), "log"], capture_output=True, text=True).stderr
    )
    report = json.loads((_attempts(root)[-1] / "report.json").read_text())
    assert report["passed"] is False and report["published_to"] is None


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_a_local_target_gets_the_commit_and_tag_and_a_dry_run_writes_the_plan(invoke, root, tmp_path):
    target = tmp_path / "rehearsal"
    dry = invoke([*QUARTER, "--root", root, "--publish", target, "--dry_run"])
    assert dry.exit_code == 0, dry.output
    plan = json.loads((_attempts(root)[-1] / "publish.json").read_text())
    (commit,) = plan["commits"]
    assert commit["tags"] == [Q2] and {f"{Q2}/release.json", "README.md"} <= set(commit["files"])
    assert _git(target, "tag", "-l") == ""  # the dry run wrote nothing there
    result = invoke([*QUARTER, "--root", root, "--publish", target, "--skip_gates", "learnable"])
    assert result.exit_code == 0, result.output
    assert "skipped: learnable" in result.stdout
    assert _git(target, "tag", "-l").split() == [Q2]
    published = set(_git(target, "ls-tree", "-r", "--name-only", Q2).split())
    assert set(commit["files"]) <= published  # the dry run listed the commit that was then made
    assert json.loads(_git(target, "show", f"{Q2}:{Q2}/gates.json"))["skipped"] == ["learnable"]
    assert "| passed: fresh, unsolvable; skipped: learnable |" in _git(target, "show", f"{Q2}:README.md")
    report = (_attempts(root)[-1] / "report.md").read_text()
    assert "Gates skipped: learnable." in report and "learnable:" not in report


def test_what_can_be_refused_is_refused_before_any_build(invoke, tmp_path, monkeypatch):
    # no model for the unsolvable gate, with --publish
    result = invoke([*QUARTER, "--root", tmp_path, "--publish", tmp_path / "x", "--models", "none"])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "--models none leaves the unsolvable gate without a model" in line
    # an unreachable Hub (offline here): the token is checked first, nothing is built
    result = invoke([*QUARTER, "--root", tmp_path, "--publish", "my-org/cb"])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "checking the token (whoami) for dataset repo my-org/cb failed" in line
    # a token that cannot write there
    hub = fake_hub(monkeypatch, Q2)
    hub.answer("whoami", {**WRITER, "orgs": []})
    result = invoke([*QUARTER, "--root", tmp_path, "--publish", "other-org/cb"])
    assert result.exit_code == 2 and "cannot write to dataset repo other-org/cb" in _errors(result)[0]
    assert not (tmp_path / Q2).exists() and not (tmp_path / ".work").exists()
    assert "create_repo" not in hub.calls


@pytest.mark.slow  # the module's built quarter (~11 s): CI only, not the fast lane
def test_the_release_writes_build_dates_into_the_results_timeline(invoke, root, tmp_path):
    results = tmp_path / "results"
    assert invoke([*QUARTER, "--root", root, "--results", results]).exit_code == 0
    timeline = json.loads((results / "timeline.json").read_text())
    report = json.loads((_attempts(root)[-1] / "report.json").read_text())
    assert timeline["releases"][Q2]["built"] == report["releases"][Q2]["built"]


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


@pytest.mark.slow  # ~23 s: CI only, not the fast lane
def test_gates_run_as_study_jobs_on_the_local_executor(invoke, root):
    result = invoke([*QUARTER, "--root", root, "--executor", "local"])
    assert result.exit_code == 0, result.output
    out = _attempts(root)[-1]
    manifest = json.loads((out / "gates/manifest.json").read_text())
    assert manifest["jobs"][f"gate/{Q2}"]["status"] == "done"
    assert "--previous geminon-tiny-2026q1" in manifest["jobs"][f"gate/{Q2}"]["command"]
    report = json.loads((out / "report.json").read_text())
    assert report["passed"] and report["releases"][Q2]["seconds"]["gates"] > 0
    # a gate job that fails still writes its report: read back, one line, nothing passes
    failing = [*QUARTER, "--root", root, "--executor", "local", "--min_support", "100000"]
    result = invoke(failing)
    (line,) = _errors(result)
    assert result.exit_code == 2 and "gate learnable failed: public questions with support under 1000" in line
    assert json.loads((_attempts(root)[-1] / "report.json").read_text())["passed"] is False


@pytest.mark.slow
def test_four_quarters_in_a_row_each_gated_against_every_earlier_one(invoke, tmp_path):
    """2026q1..2026q4 at tiny size, published into a local repository; the names registry of every quarter
    reads back from its tag, and no two quarters share a name. (Unscreened, without the unsolvable gate:
    both are ``built``'s to check, and were three quarters of this test's time.)"""
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.registry import earlier_keys
    from continuousbench.release.targets import FolderTarget

    target, root = tmp_path / "published", str(tmp_path / "root")
    for n, quarter in enumerate(("2026q1", "2026q2", "2026q3", "2026q4")):
        argv = [
            "--quarter",
            quarter,
            "--size",
            "tiny",
            "--root",
            root,
            "--publish",
            target,
            "--models",
            "none",
            "--skip_gates",
            "unsolvable",
        ]
        result = invoke(["release", *argv])
        assert result.exit_code == 0, result.output
        report = json.loads((_attempts(tmp_path / "root", quarter)[-1] / "report.json").read_text())
        (r,) = report["releases"].values()
        assert len(r["previous"]) == n and r["gates"]["passed"]
    tags = _git(target, "tag", "-l").split()
    assert tags == [f"geminon-tiny-2026q{n}" for n in range(1, 5)]
    found, names = earlier_keys(ReleaseId.parse("geminon-small-2027q1"), None, FolderTarget(target))
    assert found == tags and len(names) == 4 * 18  # read back from the tags; no name drawn twice
