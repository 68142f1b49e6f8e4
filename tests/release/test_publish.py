"""`continuousbench publish release`: push_release as a command, up to the Hub's HTTP boundary."""

import shutil
from types import SimpleNamespace

import pytest
from huggingface_hub import HfApi

from continuousbench.cli import main as continuousbench
from continuousbench.release import publish

RELEASE_ID = "geminon-tiny-2026q1"
SECRET = "hf_publishTOKENnever0shown1234"


@pytest.fixture
def hub(monkeypatch):
    """HfApi at its network boundary: each call recorded, answered like an empty dataset repo."""
    monkeypatch.setenv("HF_TOKEN", SECRET)
    calls, state = {}, {"tags": []}

    def answer(name, result=None):
        def method(self, *args, **kwargs):
            calls[name] = (args, kwargs)
            if isinstance(result, Exception):
                raise result
            return result() if callable(result) else result

        monkeypatch.setattr(HfApi, name, method)

    answer("create_repo")
    answer("list_repo_refs", lambda: SimpleNamespace(tags=[SimpleNamespace(name=t) for t in state["tags"]]))
    answer("upload_folder", SimpleNamespace(oid="a" * 40))
    answer("list_repo_files", [f"{RELEASE_ID}/release.json"])
    answer("upload_file", SimpleNamespace(oid="b" * 40))
    answer("create_tag")
    return SimpleNamespace(calls=calls, state=state, answer=answer)


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
    (mirror / "README.md").write_bytes(hub.calls["upload_file"][1]["path_or_fileobj"])
    qa = load_dataset(str(mirror), f"{RELEASE_ID}-qa_public", split="test")
    assert qa["id"] == load_dataset(str(folder), "qa_public", split="test")["id"]


@pytest.mark.parametrize(
    ("problem", "message"),
    [
        ("tagged", f"release {RELEASE_ID} is already tagged in dataset repo org/cb"),
        ("offline", "publishing to dataset repo org/cb failed (offline mode is enabled"),
        ("missing", "nowhere"),
    ],
)
def test_publish_failures_are_one_line(written, hub, capsys, problem, message):
    from huggingface_hub.errors import OfflineModeIsEnabled

    _, folder = written
    target = str(folder)
    if problem == "tagged":
        hub.state["tags"].append(RELEASE_ID)
    elif problem == "offline":
        hub.answer("create_repo", OfflineModeIsEnabled("offline mode is enabled."))
    else:
        target = str(folder.parent / "nowhere")
    with pytest.raises(SystemExit) as info:
        continuousbench(["publish", "release", target, "--repo", "org/cb"])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert message in err and "upload_folder" not in hub.calls


def test_unknown_publish_target(capsys):
    with pytest.raises(SystemExit) as info:
        continuousbench(["publish", "model", "x"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "unknown command 'model' for continuousbench publish" in err
