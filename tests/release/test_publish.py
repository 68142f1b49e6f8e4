"""`continuousbench publish release`: push_release as a command, up to the Hub's HTTP boundary."""

import shutil

import pytest
from fake_hub import SECRET, fake_hub

from continuousbench.release import publish

RELEASE_ID = "geminon-tiny-2026q1"


@pytest.fixture
def hub(monkeypatch):
    return fake_hub(monkeypatch, RELEASE_ID)


def test_publish_tags_the_release_and_prints_a_load_line_that_loads(written, hub, tmp_path, capsys):
    from datasets import load_dataset

    _, folder = written
    result = publish.cli([str(folder), "--repo", "org/continuousbench"])
    line = f'load_dataset("org/continuousbench", "{RELEASE_ID}-qa_public", revision="{RELEASE_ID}")'
    assert result["load"] == line and result["url"].endswith(
        f"/datasets/org/continuousbench/tree/{RELEASE_ID}"
    )
    out = capsys.readouterr().out
    assert f"qa = {line}" in out and SECRET not in out
    _, tag = hub.calls["create_tag"]
    assert tag["tag"] == RELEASE_ID and tag["revision"] == "b" * 40 and tag["repo_type"] == "dataset"
    # The repo as the Hub would hold it: the uploaded umbrella card beside the release folder. The printed
    # config name must load from it.
    mirror = tmp_path / "mirror"
    shutil.copytree(folder, mirror / RELEASE_ID)
    card = next(op for op in hub.calls["create_commit"][1]["operations"] if op.path_in_repo == "README.md")
    (mirror / "README.md").write_bytes(card.path_or_fileobj)
    qa = load_dataset(str(mirror), f"{RELEASE_ID}-qa_public", split="test")
    assert qa["id"] == load_dataset(str(folder), "qa_public", split="test")["id"]
