import json

import pytest
from datasets import load_dataset

from continuousbench import __version__
from continuousbench.release import CONFIGS, write_release
from continuousbench.release.layout import data_file

RELEASE_ID = "geminon-tiny-2026q1"


def test_every_part_and_split_loads_offline(written, parts):
    _, folder = written
    for config, splits in CONFIGS.items():
        loaded = load_dataset(str(folder), config)
        assert list(loaded) == list(splits)
        for split in splits:
            assert loaded[split].to_list() == parts[config][split].to_list(), f"{config}/{split}"
    # the corpus is the default config
    assert load_dataset(str(folder), split="train")["id"] == parts["corpus"]["train"]["id"]


def test_umbrella_configs_of_the_root(written, parts, tmp_path, make_parts):
    root, _ = written
    corpus = load_dataset(str(root), RELEASE_ID)
    assert list(corpus) == ["train", "validation"]
    assert corpus["validation"]["text"] == parts["corpus"]["validation"]["text"]
    qa = load_dataset(str(root), f"{RELEASE_ID}-qa_public", split="test")
    assert qa.to_list() == parts["qa_public"]["test"].to_list()
    entities = load_dataset(str(root), f"{RELEASE_ID}-entities", split="train")
    assert entities["type2"] == [None, "water"]

    # a second release joins the umbrella card; the first stays listed
    write_release("geminon-tiny-2026q2", make_parts("b"), root=root, seed=1, generator={})
    assert load_dataset(str(root), "geminon-tiny-2026q2-qa_singleton", split="test")["answer"][0].endswith(
        "b"
    )
    assert load_dataset(str(root), RELEASE_ID, split="train").num_rows == 6
    assert not [p for p in root.iterdir() if p.name.startswith(".")], "temp files left in the root"


def test_rebuild_is_byte_identical(written, parts, tmp_path, tree_bytes, make_parts):
    root, folder = written
    first = tree_bytes(folder)
    other = write_release(
        RELEASE_ID, make_parts(), root=tmp_path / "other", seed=7, generator={"n": 3, "realizer": "template"}
    )
    assert tree_bytes(other) == first
    again = write_release(
        RELEASE_ID, parts, root=root, seed=7, generator={"realizer": "template", "n": 3}, overwrite=True
    )
    assert tree_bytes(again) == first
    assert (root / "README.md").read_bytes() == (tmp_path / "other" / "README.md").read_bytes()


def test_manifest(written, parts):
    _, folder = written
    text = (folder / "release.json").read_text()
    manifest = json.loads(text)
    assert text == json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    assert manifest["id"] == RELEASE_ID
    assert (manifest["track"], manifest["size"], manifest["year"], manifest["quarter"]) == (
        "geminon",
        "tiny",
        2026,
        1,
    )
    assert manifest["seed"] == 7
    assert manifest["package_version"] == __version__
    assert manifest["generator"] == {"n": 3, "realizer": "template"}
    assert manifest["rows"]["qa_public"] == {"validation": 2, "test": 3}
    expected_files = {data_file(c, s) for c, splits in CONFIGS.items() for s in splits} | {"README.md"}
    expected_files |= {"names.json"}  # the names registry (release/registry.py)
    assert set(manifest["files"]) == expected_files
    assert all(len(sha) == 64 for sha in manifest["files"].values())


def test_card(written):
    from huggingface_hub import DatasetCard

    _, folder = written
    card = DatasetCard.load(folder / "README.md")
    data = card.data.to_dict()
    assert [c["config_name"] for c in data["configs"]] == list(CONFIGS)
    assert data["configs"][0]["default"] is True
    assert data["language"] == ["en"]
    assert data["license"]
    assert data["task_categories"] == ["question-answering", "text-generation"]
    assert set(data["tags"]) == {"differential-privacy", "synthetic-data", "continual-pretraining"}
    assert data["pretty_name"]
    for needle in (
        'load_dataset("path/to/geminon-tiny-2026q1", "qa_public")',
        "continuousbench.load_release",
        "seed 7",
        __version__,
        "@misc{continuousbench",
        "| `qa_public` | validation: 2, test: 3 |",
    ):
        assert needle in card.text, needle


def test_existing_release_is_refused_and_kept(written, make_parts, tree_bytes):
    root, folder = written
    before = tree_bytes(folder)
    with pytest.raises(FileExistsError, match="already exists at .*pass --overwrite"):
        write_release(RELEASE_ID, make_parts("changed"), root=root, seed=8, generator={})
    assert tree_bytes(folder) == before


def test_overwrite_replaces_and_load_dataset_sees_the_new_data(written, make_parts):
    root, folder = written
    assert (
        load_dataset(str(folder), "qa_public", split="test")["answer"][0] == "42"
    )  # fills the datasets cache
    write_release(RELEASE_ID, make_parts("x"), root=root, seed=8, generator={}, overwrite=True)
    # the cache key of a local folder follows the card's dataset_info, so no stale rows come back
    assert load_dataset(str(folder), "qa_public", split="test")["answer"][0] == "42x"
    assert load_dataset(str(root), f"{RELEASE_ID}-qa_public", split="test")["answer"][0] == "42x"
    assert json.loads((folder / "release.json").read_text())["seed"] == 8


def test_failed_overwrite_keeps_the_old_release(written, make_parts, tree_bytes, monkeypatch):
    import continuousbench.release.write as write_module

    root, folder = written
    before = tree_bytes(folder)

    def broken_card(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(write_module, "release_card", broken_card)
    with pytest.raises(RuntimeError):
        write_release(RELEASE_ID, make_parts("x"), root=root, seed=8, generator={}, overwrite=True)
    assert tree_bytes(folder) == before
    assert not [p for p in root.iterdir() if p.name.startswith(".")], "temp folder left behind"


def _drop(parts, config, split=None):
    if split is None:
        del parts[config]
    else:
        del parts[config][split]
    return parts


def _flat_mentions(ds):
    return ds.remove_columns("mentions").add_column("mentions", ["1:hp"] * len(ds))  # a string, not a list


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: _drop(p, "support_counts"), "part 'support_counts' is missing"),
        (lambda p: p.update(extra={"train": p["entities"]["train"]}) or p, "unknown release part 'extra'"),
        (lambda p: _drop(p, "qa_public", "test"), "split 'test' of part 'qa_public' is missing"),
        (
            lambda p: p["corpus"].update(test=p["corpus"]["train"]) or p,
            "unknown split 'test' in part 'corpus'",
        ),
        (
            lambda p: p["corpus"].update(train=p["corpus"]["train"].remove_columns("text")) or p,
            "lacks column.*text",
        ),
        (
            lambda p: p["qa_singleton"].update(test=p["qa_singleton"]["test"].select([])) or p,
            "qa_singleton/test is empty",
        ),
        (
            lambda p: p["corpus"].update(validation=p["corpus"]["validation"].add_column("x", [1, 2])) or p,
            "corpus/validation has columns",
        ),
        (
            lambda p: p["corpus"].update(validation=_flat_mentions(p["corpus"]["validation"])) or p,
            "corpus/validation has features",
        ),
        (
            lambda p: p["entities"].update(train=p["entities"]["train"].to_list()) or p,
            "must be a datasets.Dataset",
        ),
    ],
)
def test_bad_parts_are_rejected_before_writing(tmp_path, parts, change, message):
    with pytest.raises(ValueError, match=message):
        write_release(RELEASE_ID, change(parts), root=tmp_path / "root", seed=0, generator={})
    assert not (tmp_path / "root" / RELEASE_ID).exists()


def test_generator_settings_must_be_json(tmp_path, parts):
    with pytest.raises(ValueError, match="JSON"):
        write_release(RELEASE_ID, parts, root=tmp_path / "root", seed=0, generator={"f": object()})


def test_splits_with_an_all_null_column_are_aligned(tmp_path, parts):
    from datasets import Dataset

    rows = parts["qa_public"]["validation"].to_dict()
    rows["name"] = [None] * len(rows["name"])
    parts["qa_public"]["validation"] = Dataset.from_dict(rows)  # `name` inferred as null here, string in test
    folder = write_release(RELEASE_ID, parts, root=tmp_path / "root", seed=0, generator={})
    assert load_dataset(str(folder), "qa_public", split="validation")["name"] == [None, None]


def test_releases_are_readable_by_others_as_the_umask_allows(tmp_path, parts):
    """mkdtemp makes 0700 folders; the release (renamed from one) must get the usual modes."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        root = tmp_path / "shared-root"
        folder = write_release(RELEASE_ID, parts, root=root, seed=7, generator={})
    finally:
        os.umask(old)
    modes = {p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}
    modes["."] = stat.S_IMODE(folder.stat().st_mode)
    assert modes[RELEASE_ID] == 0o755 and modes["README.md"] == 0o644
    assert {m for p, m in modes.items() if (root / p).is_dir()} == {0o755}
    assert {m for p, m in modes.items() if (root / p).is_file()} == {0o644}


def test_the_manifest_records_its_own_digest(written):
    from continuousbench.release.write import manifest_digest

    _, folder = written
    manifest = json.loads((folder / "release.json").read_text())
    assert manifest["manifest_sha256"] == manifest_digest(manifest)
    assert manifest_digest({**manifest, "seed": 8}) != manifest["manifest_sha256"]


def test_two_releases_finishing_at_once_are_both_on_the_umbrella_card(written, make_parts, monkeypatch):
    """The card is listed and written under the root's lock: a release that finishes while another's card
    is being written waits, then lists both (before, the slower writer's card left the other out)."""
    import threading
    import time

    from continuousbench.release import write as release_write
    from continuousbench.release.layout import list_releases

    root, _ = written
    listed = threading.Event()

    def slow_listing(folder):
        found = list_releases(folder)
        if threading.current_thread().name == "first":
            listed.set()
            time.sleep(0.5)  # the second release is written and its card refreshed meanwhile
        return found

    monkeypatch.setattr(release_write, "list_releases", slow_listing)
    first = threading.Thread(target=release_write.write_umbrella_card, args=(root,), name="first")
    first.start()
    assert listed.wait(10)
    write_release("geminon-tiny-2026q2", make_parts("b"), root=root, seed=1, generator={})
    first.join()
    card = (root / "README.md").read_text()
    assert RELEASE_ID in card and "geminon-tiny-2026q2" in card
