"""The results' time axis: one file written by `release` and `contamination`, models keyed as `submit`
keys them, read by the leaderboard."""

import json

import pytest

from continuousbench.results import timeline


def test_a_local_model_is_keyed_by_its_folder_name_as_submit_writes_it(tmp_path):
    model = tmp_path / "base"
    model.mkdir()
    assert timeline.model_key(str(model)) == ".../base" == timeline.model_key(f"{model}/")
    assert timeline.model_key(".../base") == ".../base"
    assert timeline.model_key("google/gemma-3-1b-pt") == "google/gemma-3-1b-pt"


def test_verdicts_replace_earlier_ones_and_build_dates_accumulate(tmp_path):
    results = tmp_path / "results"
    report = {
        "model": str(tmp_path / "base"),
        "release": "geminon-tiny-2026q1",
        "verdict": "not detected",
        "alpha": 0.01,
        "tests": {"min_k_plus_plus": {"p_value": 0.4}},
        "control": "/somewhere/private",
    }
    timeline.record_contamination(results, report)
    timeline.record_contamination(results, {**report, "verdict": "contaminated"})
    timeline.record_built(results, {"geminon-tiny-2026q1": "2026-01-01"})
    timeline.record_built(results, {"geminon-tiny-2026q2": "2026-04-01"})
    data = json.loads((results / "timeline.json").read_text())
    (entry,) = data["contamination"]
    assert entry["model"] == ".../base" and entry["verdict"] == "contaminated" and "control" not in entry
    assert data["releases"] == {
        "geminon-tiny-2026q1": {"built": "2026-01-01"},
        "geminon-tiny-2026q2": {"built": "2026-04-01"},
    }
    assert timeline.flag(data, "geminon-tiny-2026q1", str(tmp_path / "elsewhere" / "base")).startswith(
        "base model contaminated"
    )


def test_contamination_writes_its_verdict_into_the_results_timeline(invoke, monkeypatch, tmp_path):
    from continuousbench.diagnostics import contamination

    def measured(model, release, **_):
        return {
            "model": model,
            "release": "geminon-tiny-2026q1",
            "verdict": "contaminated",
            "alpha": 0.01,
            "unit": "world",
            "tests": {"min_k_plus_plus": {"p_value": 1e-5, "rank": 1, "worlds": 11, "t": 9.0}},
            "scores": {"release": {"documents": {}}, "controls": []},  # bulky: not in the timeline
        }

    monkeypatch.setattr(contamination, "contamination", measured)
    model = tmp_path / "my-base"
    model.mkdir()
    result = invoke(
        [
            "contamination",
            "--model",
            model,
            "--release",
            "geminon-tiny-2026q1",
            "--results",
            tmp_path / "results",
        ]
    )
    assert result.exit_code == 0, result.output
    (entry,) = json.loads((tmp_path / "results" / "timeline.json").read_text())["contamination"]
    assert entry["model"] == ".../my-base" and entry["verdict"] == "contaminated" and entry["unit"] == "world"
    assert "scores" not in entry


def test_a_results_path_that_is_a_file_is_refused(tmp_path):
    from continuousbench.errors import UserError

    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="is a file"):
        timeline.record_built(tmp_path / "file", {"geminon-tiny-2026q1": "2026-01-01"})
