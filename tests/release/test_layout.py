from pathlib import Path

from continuousbench.release.layout import CONFIGS, data_file, default_root, list_releases, release_dir


def test_default_root_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))
    assert default_root() == tmp_path / "home"
    monkeypatch.delenv("CONTINUOUSBENCH_HOME")
    assert default_root() == Path.home() / ".cache" / "continuousbench"


def test_configs_and_paths(tmp_path):
    assert CONFIGS["corpus"] == ("train", "validation")
    assert CONFIGS["qa_public"] == CONFIGS["qa_singleton"] == ("validation", "test")
    assert CONFIGS["support_counts"] == CONFIGS["entities"] == ("train",)
    assert data_file("qa_public", "test") == "data/qa_public/test-00000-of-00001.parquet"
    assert release_dir("geminon-small-2026q1", tmp_path) == tmp_path / "geminon-small-2026q1"


def test_list_releases_needs_an_id_and_a_manifest(tmp_path):
    for name in (
        "geminon-tiny-2026q2",
        "geminon-small-2026q1",
        ".geminon-tiny-2026q3.tmp-x",
        "notes",
        "news-tiny-2026q1",
    ):
        (tmp_path / name).mkdir()
    for name in ("geminon-tiny-2026q2", "geminon-small-2026q1", ".geminon-tiny-2026q3.tmp-x", "notes"):
        (tmp_path / name / "release.json").write_text("{}")
    assert [str(r) for r in list_releases(tmp_path)] == ["geminon-small-2026q1", "geminon-tiny-2026q2"]
    assert list_releases(tmp_path / "missing") == []
