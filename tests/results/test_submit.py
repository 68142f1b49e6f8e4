"""`continuousbench submit`: a real run's record, validated, scrubbed, one file per run, never replaced."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_hub import patch_hub
from huggingface_hub import HfApi
from old_records import before_schema_4

from continuousbench.hub import hub_repo_id
from continuousbench.results import schema, submit

TOKEN = "hf_" + "abcdefghijklmnopqrstuvwxyz0123"


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_submitting_to_a_folder_adds_one_valid_file_per_run(finished_run, seed_twin, tmp_path, capsys):
    to = tmp_path / "results-dataset"
    first = submit.cli([str(finished_run), "--to", str(to)])
    out = capsys.readouterr().out
    assert first["added"] and out.startswith("submitted: ")
    assert "note: not a canonical recipe (no recipe file (--config)): the leaderboard lists it apart" in out
    assert "note: the corpus states no privacy guarantee: its row shows epsilon 'no statement'" in out
    files = sorted(to.rglob("*.json"))
    parent = finished_run.parent.name  # the run folder keeps its parent: the method or evaluator
    assert [f.parent.name for f in files] == ["geminon-tiny-2026q1"] and files[0].name.startswith(
        f"{parent}-llama-lora-"
    )
    record = json.loads(files[0].read_text())
    assert record["submitted"] == {
        "name": f"{parent}/llama-lora",
        "run_folder": f"{parent}/llama-lora",
        "canonical": False,
        "privacy_statement": False,
    }
    assert schema.validate(record) == []
    own = json.loads((finished_run / "results.json").read_text())
    assert record["metrics"] == own["metrics"]
    assert record["corpus"]["fingerprint"] == own["corpus"]["fingerprint"]
    assert record["corpus"]["path"] == ".../" + Path(own["corpus"]["path"]).name  # no local path travels
    public = record["questions"]["qa_public"]
    assert len(public["ids"]) == own["metrics"]["qa_public"]["n"] == len(public["outcomes"]["exact_match"])
    # The same record again: found, nothing rewritten. Another run: another file beside it.
    stamp = files[0].stat().st_mtime_ns
    again = submit.cli([str(finished_run), "--to", str(to)])
    assert not again["added"] and capsys.readouterr().out.startswith("already submitted: ")
    assert files[0].stat().st_mtime_ns == stamp
    submit.cli([str(seed_twin), "--to", str(to), "--model_repo", "me/twin-evaluator"])
    assert len(list(to.rglob("*.json"))) == 2
    twin = json.loads(next(f for f in to.rglob("*.json") if f != files[0]).read_text())
    assert twin["model_repo"] == "me/twin-evaluator" and "model_repo" not in record  # the leaderboard's card
    older = tmp_path / "older"  # a schema-2 run: submitted, its record is a schema-4 record
    shutil.copytree(finished_run, older, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
    (older / "results.json").write_text(json.dumps({**before_schema_4(own), "schema_version": 2}))
    where = submit.cli([str(older), "--to", str(to), "--model_repo", "me/x"])["path"]
    added = json.loads(Path(where).read_text())
    assert added["schema_version"] == 4 and added["model_repo"] == "me/x"
    assert added["submitted"]["canonical"] is False


def test_secrets_are_scrubbed_or_the_record_refused(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
    record = json.loads((run / "results.json").read_text())
    record["harness_args"]["judge"] = "endpoint:https://me:s3cret@judge.example/v1#judge-model"
    record["training_args"]["hub_token"] = TOKEN
    record["harness_args"]["corpus"] = "https://data.example/c.parquet?api_key=k3y-one&x=1&key=k3y-two"
    (run / "results.json").write_text(json.dumps(record))
    out = submit.cli([str(run), "--to", str(tmp_path / "to")])
    text = Path(out["path"]).read_text()
    assert "s3cret" not in text and TOKEN not in text and "hub_token" not in text
    assert "k3y-" not in text and "c.parquet?api_key=REDACTED&x=1&key=REDACTED" in text

    def strings(value):
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        return [s for v in value for s in strings(v)] if isinstance(value, list) else [value]

    local = [s for s in strings(json.loads(text)) if isinstance(s, str) and s.startswith(("/", "~"))]
    assert not local and str(tmp_path) not in text  # where things lay on the submitter's disk stays there
    assert "https://REDACTED@judge.example/v1#judge-model" in text and '"max_new_tokens"' in text
    record["model_args"]["model"] = f"/models/{TOKEN}"
    (run / "results.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit) as info:
        submit.cli([str(run), "--to", str(tmp_path / "to")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1
    assert "record.model_args.model holds what looks like an access token" in err and TOKEN not in err


def test_submitting_to_a_hub_dataset_commits_one_file(finished_run, monkeypatch, capsys):
    calls = []
    info = SimpleNamespace(commit_url="https://hub/c/1", pr_url=None)
    patch_hub(
        monkeypatch,
        {"file_exists": False, "upload_file": info},
        lambda name, self, args, kwargs: calls.append((name, args, kwargs)),
    )
    out = submit.cli([str(finished_run), "--to", "my-org/cb-results", "--pr"])
    (_, (repo, path), exists), (_, _, upload) = calls
    assert repo == "my-org/cb-results"
    assert path.startswith(f"geminon-tiny-2026q1/{finished_run.parent.name}-llama-lora-")
    assert exists == {"repo_type": "dataset"}
    assert upload["path_in_repo"] == path and upload["repo_type"] == "dataset" and upload["create_pr"]
    assert schema.validate(json.loads(upload["path_or_fileobj"])) == []
    assert (out["path"], out["added"], len(out["notes"])) == ("https://hub/c/1", True, 2)
    with pytest.raises(TypeError):  # the fakes take only what HfApi takes
        HfApi().upload_file(path_or_fileobj=b"", path_in_repo="x", repo_id="a/b", dataset=True)


def test_targets():
    assert hub_repo_id("org/name") == hub_repo_id("hf://datasets/org/name") == "org/name"
    assert not hub_repo_id("./org/name") and not hub_repo_id("/abs/folder")
