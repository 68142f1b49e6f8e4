"""``news.shards``: shards streamed a batch at a time, written a batch at a time, damaged ones refused."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from continuousbench.errors import UserError
from continuousbench.news.shards import iter_shard, read_shard, shard_schema, write_batches


@pytest.fixture
def shard(tmp_path):
    table = pa.table({"id": [f"a{i}" for i in range(10)], "text": [f"text {i}" for i in range(10)]})
    pq.write_table(table, tmp_path / "part-00000.parquet")
    return tmp_path / "part-00000.parquet", table


def test_batches_of_a_parquet_and_a_jsonl_shard(shard, tmp_path):
    path, table = shard
    batches = list(iter_shard(path, ["text"], rows=4))
    assert [b.num_rows for b in batches] == [4, 4, 2]
    assert pa.Table.from_batches(batches).equals(table.select(["text"]))
    lines = tmp_path / "part-00001.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    assert pa.Table.from_batches(list(iter_shard(lines, rows=4))).equals(read_shard(lines))
    assert shard_schema(lines).names == shard_schema(path).names == ["id", "text"]


def test_damaged_or_incomplete_shards_are_one_line(shard, tmp_path):
    path, _ = shard
    with pytest.raises(UserError, match="no column title"):
        list(iter_shard(path, ["id", "title"]))
    damaged = tmp_path / "part-00002.parquet"
    damaged.write_bytes(path.read_bytes()[:200])
    for read in (lambda: list(iter_shard(damaged)), lambda: shard_schema(damaged)):
        with pytest.raises(UserError, match=r"part-00002.parquet cannot be read .*; fix or remove it"):
            read()


def test_batches_written_as_row_groups(shard, tmp_path):
    path, table = shard
    out = write_batches(tmp_path / "out.parquet", table.schema, iter_shard(path, rows=4))
    assert pq.ParquetFile(out).metadata.num_row_groups == 3 and read_shard(out).equals(table)
    empty = write_batches(tmp_path / "empty.parquet", table.schema, (b.slice(0, 0) for b in iter_shard(path)))
    assert read_shard(empty).num_rows == 0 and read_shard(empty).schema == table.schema
    assert not list(tmp_path.glob(".*.tmp"))  # written in place atomically
