"""The NEWS commands through the ``continuousbench`` dispatcher and the builder YAMLs through their parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuousbench import cli
from continuousbench.news.build import make_parser
from continuousbench.news.shards import read_rows

ROOT = Path(__file__).resolve().parents[2]


def test_news_group_lists_every_stage(capsys):
    cli.main(["news", "--help"])
    listed = capsys.readouterr().out
    for stage in ("extract", "dedup", "subsample", "cluster", "facts", "qa", "filter", "support"):
        assert f"  {stage} " in listed


@pytest.mark.parametrize("name", ["news-small.yaml", "news-tiny.yaml"])
def test_builder_configs_parse(name):
    build, model, executor = make_parser().parse(["--config", str(ROOT / "builders/configs" / name)])
    assert build.size in ("small", "tiny") and executor.tasks >= 1
    if name == "news-small.yaml":
        assert (build.min_cluster_size, build.min_similarity, build.min_support) == (25, 0.55, 200)
        assert build.encoder == "st:google/embeddinggemma-300m" and model.llm is None
    else:
        assert build.encoder == "tfidf" and model.llm == "offline:news"


def test_stage_through_the_dispatcher(deduped, tmp_path, capsys):
    cli.main(["news", "subsample", "--input", str(deduped), "--output", str(tmp_path / "s"), "--count", "5"])
    assert len(read_rows(tmp_path / "s")) == 5
    (tmp_path / "bad.yaml").write_text("count: 5\nsize_of_sample: 3\n")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(
            [
                "news",
                "subsample",
                "--config",
                str(tmp_path / "bad.yaml"),
                "--input",
                str(deduped),
                "--output",
                str(tmp_path / "t"),
            ]
        )
    assert exit_info.value.code == 2 and "size_of_sample" in capsys.readouterr().err
