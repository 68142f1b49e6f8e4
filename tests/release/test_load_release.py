import pytest

import continuousbench
from continuousbench.release import load_release, resolve_release, verify_release

RELEASE_ID = "geminon-tiny-2026q1"


def _flip_one_byte(path, offset=None):
    data = bytearray(path.read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


def test_resolve_by_folder_by_id_and_from_env_root(written, monkeypatch):
    root, folder = written
    assert resolve_release(folder) == folder
    assert resolve_release(str(folder)) == folder
    assert resolve_release(RELEASE_ID, root=root) == folder
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(root))
    assert resolve_release(RELEASE_ID) == folder


def test_load_release_parts_and_splits(written, parts):
    root, folder = written
    qa = load_release(RELEASE_ID, "qa_public", root=root)
    assert list(qa) == ["validation", "test"]
    assert qa["test"].to_list() == parts["qa_public"]["test"].to_list()
    corpus = load_release(folder, split="train")
    assert corpus["text"] == parts["corpus"]["train"]["text"]
    # the package-level lazy wrapper
    assert continuousbench.load_release(RELEASE_ID, "entities", split="train", root=root).num_rows == 2


def test_verify_returns_the_manifest(written):
    root, _ = written
    manifest = verify_release(RELEASE_ID, root=root)
    assert manifest["id"] == RELEASE_ID
    assert len(manifest["files"]) == 10  # nine data files, the card and the names registry


@pytest.mark.parametrize("name", ["data/qa_public/test-00000-of-00001.parquet", "README.md"])
def test_a_corrupted_byte_is_detected(written, name):
    root, folder = written
    _flip_one_byte(folder / name)
    with pytest.raises(ValueError, match=f"checksum mismatch for .*{name}.*rebuild"):
        verify_release(folder)
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_release(RELEASE_ID, "qa_public", root=root)


def test_verify_false_skips_the_check(written):
    root, folder = written
    _flip_one_byte(
        folder / "README.md", offset=len((folder / "README.md").read_bytes()) - 2
    )  # body, not YAML
    assert load_release(RELEASE_ID, "corpus", split="validation", root=root, verify=False).num_rows == 2


def test_a_missing_file_is_detected(written):
    _, folder = written
    (folder / "data/entities/train-00000-of-00001.parquet").unlink()
    with pytest.raises(ValueError, match="data/entities/train-00000-of-00001.parquet is missing"):
        verify_release(folder)


def test_unknown_part_and_split(written):
    root, _ = written
    with pytest.raises(ValueError, match="unknown release part 'qa'.*corpus, qa_public, qa_singleton"):
        load_release(RELEASE_ID, "qa", root=root)
    with pytest.raises(ValueError, match="unknown split 'train' of part 'qa_public'"):
        load_release(RELEASE_ID, "qa_public", split="train", root=root)


def test_unknown_release_without_hub_repo(tmp_path):
    with pytest.raises(
        FileNotFoundError, match="not found under .*continuousbench build geminon --size small"
    ):
        resolve_release("geminon-small-2026q1", root=tmp_path)
    with pytest.raises(ValueError, match="neither a release folder nor a release id"):
        resolve_release("no-such-thing", root=tmp_path)
    (tmp_path / "plain").mkdir()
    with pytest.raises(FileNotFoundError, match="no release.json"):
        resolve_release(tmp_path / "plain")


def test_hub_fallback_downloads_the_tagged_release(written, tmp_path, monkeypatch):
    import shutil

    import huggingface_hub

    _, folder = written
    calls = []

    def fake_snapshot_download(**kwargs):
        calls.append(kwargs)
        snapshot = tmp_path / "snapshot"
        shutil.copytree(folder, snapshot / RELEASE_ID)
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    monkeypatch.setenv("CONTINUOUSBENCH_HUB_REPO", "org/continuousbench")
    found = resolve_release(RELEASE_ID, root=tmp_path / "empty-root")
    assert found == tmp_path / "snapshot" / RELEASE_ID
    assert calls == [
        {
            "repo_id": "org/continuousbench",
            "repo_type": "dataset",
            "revision": RELEASE_ID,
            "allow_patterns": [f"{RELEASE_ID}/*"],
        }
    ]
    assert verify_release(found)["id"] == RELEASE_ID


def test_hub_errors_become_one_line(tmp_path, monkeypatch):
    import huggingface_hub
    from huggingface_hub.errors import OfflineModeIsEnabled

    def offline(**kwargs):
        raise OfflineModeIsEnabled("offline mode is enabled")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(FileNotFoundError, match="could not be downloaded from dataset repo org/cb"):
        resolve_release(RELEASE_ID, root=tmp_path, repo_id="org/cb")


def test_a_malformed_manifest_is_reported(written):
    _, folder = written
    (folder / "release.json").write_text('{"id": "geminon-tiny-2026q1"}')
    with pytest.raises(ValueError, match="release.json is malformed.*rebuild"):
        verify_release(folder)


def test_the_session_tiny_release_verifies_and_loads(tiny_release):
    """The real builder's output honours the contract."""
    from datasets import load_dataset

    from continuousbench.release import CONFIGS

    manifest = verify_release(tiny_release)
    for config, splits in CONFIGS.items():
        loaded = load_dataset(str(tiny_release), config)
        assert {s: loaded[s].num_rows for s in splits} == manifest["rows"][config]


def _tampered_copy(folder, dest):
    """A copy of the release whose qa_public/test answers are all changed (parquet rewritten by datasets)."""
    import shutil

    from datasets import Dataset

    copy = dest / folder.name
    shutil.copytree(folder, copy)
    path = copy / "data/qa_public/test-00000-of-00001.parquet"
    rows = Dataset.from_parquet(str(path), cache_dir=str(dest / "scratch-cache")).to_dict()
    rows["answer"] = ["TAMPERED"] * len(rows["answer"])
    Dataset.from_dict(rows).to_parquet(str(path))
    return copy


def test_a_tampered_copy_loaded_first_never_leaks_into_the_pristine_release(written, tmp_path, parts):
    """load_dataset caches a local folder by its card: the tampered rows must not be served afterwards."""
    from datasets import load_dataset

    root, folder = written
    copy = _tampered_copy(folder, tmp_path / "elsewhere")
    assert set(load_dataset(str(copy), "qa_public", split="test")["answer"]) == {"TAMPERED"}
    pristine = list(parts["qa_public"]["test"]["answer"])
    assert list(load_release(RELEASE_ID, "qa_public", split="test", root=root)["answer"]) == pristine
    assert list(load_release(folder, "qa_public", verify=False)["test"]["answer"]) == pristine
    # and the other way round: the tampered copy fails verification, and unverified it is what it is
    with pytest.raises(ValueError, match="checksum mismatch for .*qa_public/test"):
        load_release(copy, "qa_public")
    assert set(load_release(copy, "qa_public", split="test", verify=False)["answer"]) == {"TAMPERED"}
    assert list(load_release(RELEASE_ID, "qa_public", split="test", root=root)["answer"]) == pristine


def test_loaded_parts_have_the_features_and_rows_of_load_dataset(written):
    from datasets import load_dataset

    _, folder = written
    for config in ("corpus", "qa_public", "entities"):
        ours, theirs = load_release(folder, config), load_dataset(str(folder), config)
        for split in theirs:
            assert ours[split].features == theirs[split].features, config
            assert ours[split].to_list() == theirs[split].to_list(), config
            assert ours[split].split == split


def test_split_slices(written, parts):
    _, folder = written
    test = list(parts["qa_public"]["test"]["id"])
    assert list(load_release(folder, "qa_public", split="test[:2]")["id"]) == test[:2]
    both = list(load_release(folder, "qa_public", split="validation+test[-1:]")["id"])
    assert both == list(parts["qa_public"]["validation"]["id"]) + test[-1:]
    with pytest.raises(ValueError, match="bad split 'test\\[:x\\]' of part 'qa_public'"):
        load_release(folder, "qa_public", split="test[:x]")


def _edit_manifest(folder, **changes):
    import json

    manifest = json.loads((folder / "release.json").read_text())
    manifest.update(changes)
    (folder / "release.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def test_an_edited_manifest_is_detected(written):
    root, folder = written
    _edit_manifest(folder, seed=8)
    with pytest.raises(ValueError, match="release.json was edited .*manifest_sha256.*rebuild"):
        verify_release(folder)
    with pytest.raises(ValueError, match="release.json was edited"):
        load_release(RELEASE_ID, "qa_public", root=root)


def test_a_manifest_without_its_digest_is_refused(written):
    import json

    _, folder = written
    manifest = json.loads((folder / "release.json").read_text())
    del manifest["manifest_sha256"]
    (folder / "release.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="has no manifest_sha256"):
        verify_release(folder)


def test_a_manifest_naming_files_outside_the_release_is_refused(written):
    import json

    from continuousbench.release.write import manifest_digest

    _, folder = written
    manifest = json.loads((folder / "release.json").read_text())
    manifest["files"]["../../etc/passwd"] = "0" * 64
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (folder / "release.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"file list lists \.\./\.\./etc/passwd"):
        verify_release(folder)
