"""Stage folders: ``data/`` shards in, ``data/`` shards out, with counts of what was dropped and why.

A stage's output folder holds ``data/part-NNNNN.parquet`` (the rows it passes on, every input column
kept), ``stats.json`` (rows in, rows out, ``dropped_<reason>`` counts) and stage-specific side tables.
It is written through :class:`continuousbench.staged_output.StagedOutput`: the run happens in a hidden work
folder, finished shards survive an interruption, ``--resume`` skips them, and the previous output is
replaced only once the new one is complete.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench import staged_output
from continuousbench.errors import UserError
from continuousbench.files import atomic_write, read_json, write_json
from continuousbench.staged_output import StagedOutput

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

DATA = "data"
STATS = "stats.json"
SUFFIXES = (".parquet", ".jsonl", ".jsonl.gz", ".json")


def shard_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def input_files(source: str | Path | list, option: str = "--input") -> list[Path]:
    """Shard files of a stage folder (its ``data/``), a folder of shards, a file, or a glob; sorted."""
    sources = source if isinstance(source, list) else [source]
    files: list[Path] = []
    for item in sources:
        path = Path(str(item)).expanduser()
        if path.is_dir():
            folder = path / DATA if (path / DATA).is_dir() else path
            files += [p for p in folder.iterdir() if p.name.endswith(SUFFIXES) and not p.name.startswith(".")]
        elif path.is_file():
            files.append(path)
        else:
            files += [Path(p) for p in glob.glob(str(path)) if Path(p).is_file()]
    if not files:
        raise FileNotFoundError(
            f"{option} {source} has no .parquet or .jsonl shards; pass the output folder of the previous "
            "stage, a folder of shards, or a glob"
        )
    return sorted(set(files))


def read_shard(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One parquet or JSON-lines shard as an Arrow table; a damaged file is one line naming it."""
    import pyarrow as pa
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    try:
        if path.name.endswith(".parquet"):
            # one file, one thread: pq.read_table's dataset layer and threads cost a worker ~50 MB
            with pq.ParquetFile(path) as parquet:
                _require(parquet, columns)
                return parquet.read(columns, use_threads=False)
        table = pj.read_json(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise _damaged(path, err) from None
    return table.select(columns) if columns is not None else table


def _require(parquet: pq.ParquetFile, columns: list[str] | None) -> None:
    """ParquetFile.read and iter_batches would leave a missing column out silently."""
    import pyarrow as pa

    missing = [c for c in columns or () if c not in parquet.schema_arrow.names]
    if missing:
        raise pa.ArrowInvalid(f"no column {', '.join(missing)}")


def _damaged(path: Path, err: Exception) -> UserError:
    """The one line for a shard that cannot be read."""
    return UserError(f"{path} cannot be read ({str(err).splitlines()[0]}); fix or remove it")


def shard_schema(path: Path) -> pa.Schema:
    """A shard's columns without reading its rows (a JSON-lines shard is read whole)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.name.endswith(".parquet"):
        return read_shard(path).schema
    try:
        return pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise _damaged(path, err) from None


def iter_shard(path: Path, columns: list[str] | None = None, rows: int = 2_000) -> Iterator[pa.RecordBatch]:
    """A shard as record batches of up to ``rows`` rows: a parquet shard is decoded a batch at a time, so
    a worker holds one batch, not the shard (reading a 24 MB shard whole costs ~100 MB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.name.endswith(".parquet"):
        yield from read_shard(path, columns).to_batches(rows)
        return
    try:
        with pq.ParquetFile(path) as parquet:
            _require(parquet, columns)
            yield from parquet.iter_batches(rows, columns=columns, use_threads=False)
    except (pa.ArrowInvalid, OSError) as err:
        raise _damaged(path, err) from None


def require_columns(table: pa.Table, needed: tuple[str, ...], where: str) -> None:
    missing = [c for c in needed if c not in table.column_names]
    if missing:
        raise UserError(
            f"{where} lacks column(s) {', '.join(missing)} (it has {', '.join(table.column_names)}); "
            "pass the output of the previous stage"
        )


def read_rows(
    source: str | Path | list, columns: list[str] | None = None, option: str = "--input"
) -> pa.Table:
    """Every shard of ``source`` as one table, in shard order."""
    import pyarrow as pa

    tables = [read_shard(p, columns) for p in input_files(source, option)]
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def write_parquet(path: Path, table: pa.Table) -> Path:
    """Atomically write one parquet file (fixed writer settings: equal tables give equal bytes)."""
    import pyarrow.parquet as pq

    return atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def write_batches(path: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> Path:
    """Atomically write record batches as one parquet file, a row group each, holding one batch at a
    time (the settings of :func:`write_parquet`; an empty batch adds no row group)."""
    import pyarrow.parquet as pq

    def write(tmp: Path) -> None:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for batch in batches:
                if batch.num_rows:
                    writer.write_batch(batch)

    return atomic_write(path, write)


def sum_counts(*counts: Mapping[str, int]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + int(v)
    return dict(sorted(total.items()))


class StageOutput:
    """The output folder of one stage run: shards written into a staged work folder, then published."""

    def __init__(
        self,
        out: str | Path,
        stage: str,
        config: Mapping[str, Any],
        *,
        overwrite: bool = False,
        resume: bool = False,
        inputs: Iterable[Any] = (),
    ):
        self.stage = stage
        flat = [i for item in inputs for i in (item if isinstance(item, list) else [item])]
        self.staged = StagedOutput(
            out, command(stage), overwrite=overwrite, resume=resume, option="--output", inputs=flat
        )
        self.staged.pin_config(dict(config))
        self.work = self.staged.work
        (self.work / DATA).mkdir(exist_ok=True)

    def path(self, name: str) -> Path:
        return self.work / name

    def done(self, name: str) -> bool:
        """Whether a shard or side file of this run is already complete (files appear atomically)."""
        return (self.work / name).exists()

    def write(self, name: str, table: pa.Table) -> Path:
        return write_parquet(self.work / name, table)

    def write_json(self, name: str, data: Any) -> Path:
        return write_json(self.work / name, data)

    def read_json(self, name: str) -> Any:
        return read_json(self.work / name)

    def chunks(
        self, units: Sequence[Any], size: int, work: Callable[[list[Any]], tuple[pa.Table, Mapping[str, int]]]
    ) -> tuple[pa.Table | None, dict[str, int]]:
        """Run ``work`` on ``units`` ``size`` at a time; each finished chunk (table + counts) is kept, so a
        resumed run does only the missing ones. Returns the chunks' tables concatenated and summed counts."""
        import pyarrow as pa

        tables, counts = [], []
        for start in range(0, len(units), size):
            name = f"chunks/{start // size:05d}"
            if not self.done(f"{name}.json"):
                table, found = work(list(units[start : start + size]))
                self.write(f"{name}.parquet", table)
                self.write_json(f"{name}.json", dict(found))  # written last: marks the chunk finished
            tables.append(read_shard(self.path(f"{name}.parquet")))
            counts.append(self.read_json(f"{name}.json"))
        tables = [t for t in tables if t.num_rows]
        table = pa.concat_tables(tables, promote_options="permissive") if tables else None
        return table, sum_counts(*counts)

    def finish_table(self, rows_in: int, table: Any, counts: Mapping[str, int], **extra: Any) -> Path:
        """Write ``table`` as the stage's one data file, then :meth:`finish`."""
        self.write(f"{DATA}/part-00000.parquet", table)
        return self.finish(rows_in, table.num_rows, counts, **extra)

    def finish(
        self,
        rows_in: int,
        rows_out: int,
        counts: Mapping[str, int],
        *,
        publish: Sequence[str] = (),
        **extra: Any,
    ) -> Path:
        """Write ``stats.json`` and publish ``data/``, it and the side files named in ``publish``.

        A stage that kept no row publishes nothing: every later stage would find nothing to do, so the
        run stops here with the counts of what was dropped and why (the finished work stays resumable).
        """
        stats = {"stage": self.stage, "input": rows_in, "output": rows_out, **sum_counts(counts), **extra}
        write_json(self.work / STATS, stats)
        if rows_out == 0:
            drops = {k: v for k, v in sum_counts(counts).items() if v}
            why = ", ".join(f"{k} {v}" for k, v in sorted(drops.items(), key=lambda kv: -kv[1])[:4])
            raise UserError(
                f"news {self.stage} kept no rows of {rows_in} ({why or 'nothing was read'}); nothing is "
                f"published to --output {self.staged.out}: check the input and the settings "
                f"(counts in {self.work / STATS})"
            )
        return self.staged.publish([DATA, STATS, *publish])


def command(stage: str) -> str:
    """The staged-output command name of a NEWS stage (its work folder and marker file are named after it)."""
    return f"news-{stage}"


def finished(out: str | Path, stage: str) -> bool:
    """Whether ``out`` holds a published run of ``stage``."""
    return staged_output.finished(Path(out).expanduser(), command(stage))


def unfinished(out: str | Path, stage: str) -> bool:
    """Whether ``out`` holds an unfinished run of ``stage`` (killed, or an LLM stage stopped by
    --max_dropped): ``build news`` continues it, so what it already did (extracted shards, embedding
    chunks, answers paid for) is kept."""
    return staged_output.unfinished(Path(out).expanduser(), command(stage))
