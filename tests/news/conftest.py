"""Fixtures of the NEWS tests: WARC files written here with warcio, from the pages of ``newspages``."""

from __future__ import annotations

import pytest
from newspages import event_records, special_records, write_warc


@pytest.fixture(scope="session")
def warc_dir(tmp_path_factory):
    """Two gzipped WARC files of event reports (with a syndicated exact copy and the awkward pages), one
    plain WARC, and a gzipped WARC cut in the middle of a record."""
    folder = tmp_path_factory.mktemp("warc")
    records, _ = event_records(per_event=8)
    copy = dict(records[0], url=records[0]["url"].replace("bridge-0", "bridge-syndicated"))
    half = len(records) // 2
    write_warc(folder / "a.warc.gz", records[:half] + [copy] + special_records())
    write_warc(folder / "b.warc", records[half:], compress=False)
    late, _ = event_records(per_event=2, seed=1)
    write_warc(folder / "whole.warc.gz", [dict(r, url=r["url"] + "-late") for r in late[:6]])
    data = (folder / "whole.warc.gz").read_bytes()
    (folder / "cut.warc.gz").write_bytes(data[: len(data) * 2 // 3])
    (folder / "whole.warc.gz").unlink()
    return folder


@pytest.fixture(scope="session")
def extracted(warc_dir, tmp_path_factory):
    """The extract stage's output folder over ``warc_dir`` (two tasks, run once for the session)."""
    from continuousbench.news.executors import ExecutorArguments
    from continuousbench.news.extract import ExtractArguments, main

    out = tmp_path_factory.mktemp("extract")
    args = ExtractArguments(output=str(out), warc=[str(warc_dir / "*.warc*")], timeout=30)
    return main(args, ExecutorArguments(tasks=2))
