from types import SimpleNamespace

import pytest
from fake_hub import patch_hub
from huggingface_hub import HfApi

from continuousbench.release import push_release

RELEASE_ID = "geminon-tiny-2026q1"
TOKEN = "hf_secret_token_never_shown"


@pytest.fixture
def hub(monkeypatch):
    """Record every HfApi call; answer like a repo that already holds release geminon-tiny-2025q4."""
    calls = []
    state = {"tags": ["geminon-tiny-2025q4"]}

    def note(name, self, args, kwargs):
        assert self.token == TOKEN
        calls.append((name, args, kwargs))

    files = [
        "README.md",
        "geminon-tiny-2025q4/release.json",
        "geminon-tiny-2025q4/README.md",
        "notes/release.json",
    ]
    patch_hub(
        monkeypatch,
        {
            "create_repo": None,
            "list_repo_refs": lambda: SimpleNamespace(tags=[SimpleNamespace(name=t) for t in state["tags"]]),
            "list_repo_files": files,
            "create_commit": SimpleNamespace(oid="b" * 40),
            "create_tag": None,
        },
        note,
    )
    return SimpleNamespace(calls=calls, state=state)


def test_push_uploads_the_folder_and_tags_it(written, hub, capsys, caplog):
    _, folder = written
    url = push_release(folder, "org/continuousbench", token=TOKEN, private=True)
    assert url.endswith(f"/datasets/org/continuousbench/tree/{RELEASE_ID}")
    names = [name for name, _, _ in hub.calls]
    assert names == ["create_repo", "list_repo_refs", "list_repo_files", "create_commit", "create_tag"]
    by_name = {name: (args, kwargs) for name, args, kwargs in hub.calls}

    args, kwargs = by_name["create_repo"]
    assert args == ("org/continuousbench",)
    assert kwargs == {"repo_type": "dataset", "private": True, "exist_ok": True}
    _, kwargs = by_name["create_commit"]  # one atomic commit: every file of the release and the card
    assert kwargs["repo_type"] == "dataset"
    ops = {op.path_in_repo: op for op in kwargs["operations"]}
    local = {f"{RELEASE_ID}/{f.relative_to(folder).as_posix()}" for f in folder.rglob("*") if f.is_file()}
    assert set(ops) == local | {"README.md"} and f"{RELEASE_ID}/release.json" in ops
    umbrella = ops["README.md"].path_or_fileobj.decode()
    assert f"config_name: {RELEASE_ID}-qa_public" in umbrella
    assert "config_name: geminon-tiny-2025q4\n" in umbrella  # releases already on the Hub stay listed
    args, kwargs = by_name["create_tag"]
    assert kwargs["tag"] == RELEASE_ID and kwargs["revision"] == "b" * 40 and kwargs["repo_type"] == "dataset"

    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err + caplog.text
    assert TOKEN not in repr(hub.calls)


def test_an_existing_tag_is_refused_before_uploading(written, hub):
    _, folder = written
    hub.state["tags"].append(RELEASE_ID)
    with pytest.raises(FileExistsError, match=f"{RELEASE_ID} is already tagged in dataset repo org/cb"):
        push_release(folder, "org/cb", token=TOKEN)
    assert "create_commit" not in [name for name, _, _ in hub.calls]


def test_a_damaged_release_is_never_pushed(written, hub):
    _, folder = written
    (folder / "data/corpus/train-00000-of-00001.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="checksum mismatch"):
        push_release(folder, "org/cb", token=TOKEN)
    assert hub.calls == []


def test_the_fakes_refuse_calls_hfapi_would_refuse(hub):
    with pytest.raises(TypeError):
        HfApi(token=TOKEN).create_commit("org/cb", no_such_argument=1)
