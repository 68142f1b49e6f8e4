"""``continuousbench news dedup``: exact duplicates (SHA-256), then near duplicates by containment.

    continuousbench news dedup --input work/extract --output work/dedup --tasks 8 --workers 2

Three datatrove pipelines (paper App. H.1):

1. :class:`Signatures` (parallel): per article the SHA-256 of its normalised text and its sampled word
   5-gram shingle hashes (or, for the LSH candidates, a 128-permutation ``datasketch`` MinHash), one
   signature shard per input shard.
2. :class:`FindDuplicates` (one task): exact groups keep one article; the rest go through candidate
   generation, each candidate pair is checked on the shingle sets themselves, and a pair is a
   near duplicate when containment ``|A & B| / min(|A|, |B|) >= 0.8``. Articles are visited longest
   first, and one is dropped when it duplicates an article already kept, so the shorter of a pair goes
   and the kept article it duplicates is recorded (``duplicates.parquet``).
3. :class:`DropDuplicates` (parallel): each input shard without the dropped articles, all columns kept.

Candidates by default (``--candidates sampled``) come from hash-sampled shingles in an inverted index:
a shingle is sampled when its 64-bit hash is 0 modulo ``SAMPLE_MOD``, the same choice in every article,
so an article contained in another has (nearly) all its sampled shingles in the other's, whatever the
length ratio. Pairs sharing at least ``SAMPLE_SHARE`` of the smaller one's sampled shingles are checked
exactly; the rule is containment, not Jaccard, so a short article inside a long one is found.
``--candidates jaccard`` (datasketch's ``MinHashLSH`` at Jaccard 0.5) misses a short article contained
in one more than ~1.4x its length; ``--candidates ensemble`` (LSH Ensemble) finds it at ~10x the cost.
Both are kept for comparison (``benchmarks/news.py``). datatrove's own MinHash pipeline is Jaccard-only
and keeps the cluster's first article, not the longer one.

Memory: shards are read (and the kept rows written) ``BATCH`` rows at a time, only the columns a step
uses; the find step holds per article a few Arrow or int32 values, never a Python object, and re-reads
only the candidates' texts, keeping their shingle hashes; under the local executor it runs in a fork, so
the command does not keep what the allocators hold after it (``docs/performance.md``, issue 34).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.utils.stats import Stats

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.stage_arguments import StageArguments

if TYPE_CHECKING:
    import pyarrow as pa

NUM_PERM = 128
NGRAM = 5
MINHASH_SEED = 1  # the permutations: fixed, so signatures of different runs and tasks are comparable
SCHEME = "affine32"  # datasketch 2's bijective permutations, stored as uint32
_WORD = re.compile(r"\w+")
SIGNATURES, DUPLICATES = "signatures", "duplicates.parquet"
# LSH thresholds below the 0.8 containment, so that pairs near it are found despite MinHash noise: a pair
# of equal length at containment 0.8 has Jaccard 0.67, so the Jaccard index needs a lower threshold.
LSH_THRESHOLDS = {"ensemble": 0.6, "jaccard": 0.5, "sampled": 0.5}
# Sampled candidates: one shingle in SAMPLE_MOD is indexed; a pair is a candidate when it shares at least
# SAMPLE_SHARE (the --lsh_threshold) of the smaller article's sampled shingles. At containment 0.8 and 25
# samples the shared count is ~Binomial(25, 0.8): below half with probability < 1e-4.
SAMPLE_MOD = 8
STAR = 16  # articles (longest first) each article is paired with through one shared sampled shingle
CANDIDATE_KINDS = ("sampled", "jaccard", "ensemble")
BATCH = 2_000  # rows read (and, when dropping, written: a row group) at once; their shingles held at once
PAIR_CHUNK = 1 << 18  # sampled-index pair occurrences expanded at once (2 MB of keys)


def shingles(text: str, n: int = NGRAM) -> set[str]:
    """Lower-cased word ``n``-grams (a text shorter than ``n`` words is one shingle)."""
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1))}


def containment(a: set | np.ndarray, b: set | np.ndarray) -> float:
    """``|A & B| / min(|A|, |B|)``: 1.0 when the smaller set lies inside the larger. Sets, or sorted
    arrays of distinct shingle hashes (:func:`shingle_hashes`)."""
    if not len(a) or not len(b):
        return 0.0
    arrays = isinstance(a, np.ndarray)
    common = np.intersect1d(a, b, assume_unique=True).size if arrays else len(a & b)
    return common / min(len(a), len(b))


def sampled(hashes: np.ndarray, mod: int = SAMPLE_MOD) -> np.ndarray:
    """Of an article's :func:`shingle_hashes`, those chosen the same way in every article (divisible by
    ``mod``); an article with none keeps its smallest, so that even a very short one is indexed."""
    chosen = hashes[hashes % np.uint64(mod) == 0]
    return chosen if chosen.size or not hashes.size else hashes[:1]


def shingle_hashes(text: str) -> np.ndarray:
    """The shingle set as sorted distinct 64-bit hashes (blake2b): ~8 bytes a shingle instead of ~100,
    with collisions too rare to change a containment."""
    digests = b"".join(hashlib.blake2b(s.encode(), digest_size=8).digest() for s in shingles(text))
    return np.unique(np.frombuffer(digests, dtype=np.uint64))


class Signatures(PipelineStep):
    """SHA-256 and MinHash of every article of this task's input shards, one signature shard each."""

    name = "signatures (sha256 + MinHash 5-grams)"
    type = "🫂 - DEDUP"

    def __init__(self, paths: Sequence[str], folder: str, candidates: str = "sampled"):
        super().__init__()
        self.paths, self.folder, self.candidates = list(paths), folder, candidates

    def _sampled(self, texts: list[str]) -> tuple[list[int], list[np.ndarray]]:
        """Shingle counts and the sampled shingle hashes of each text."""
        hashes = [shingle_hashes(text) for text in texts]
        return [h.size for h in hashes], [sampled(h) for h in hashes]

    def _minhashes(self, texts: list[str]) -> tuple[list[int], list[bytes]]:
        """Shingle counts and 128-permutation MinHash values of a batch of texts."""
        from datasketch import MinHash  # only here: its import costs every worker ~40 MB

        sets = [shingles(t) for t in texts]
        found = MinHash.bulk(
            [[s.encode() for s in x] for x in sets], num_perm=NUM_PERM, seed=MINHASH_SEED, scheme=SCHEME
        )
        return [len(x) for x in sets], [m.hashvalues.astype(np.uint32).tobytes() for m in found]  # 512 B each

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import pyarrow as pa

        from continuousbench.news.articles import text_sha256
        from continuousbench.news.shards import iter_shard, require_columns, shard_schema, write_parquet

        signature = self._sampled if self.candidates == "sampled" else self._minhashes
        for index in range(rank, len(self.paths), world_size):
            target = Path(self.folder) / f"{index:05d}.parquet"
            if target.exists():  # finished before an interruption
                continue
            path, schema = Path(self.paths[index]), shard_schema(Path(self.paths[index]))
            require_columns(schema.empty_table(), ("id", "text"), self.paths[index])
            names = schema.names
            ids, columns = [], {k: [] for k in ("sha256", "chars", "shingles", "crawl_date", "values")}
            # a batch of texts at a time: the shard's other columns are never read, its texts never all held
            for batch in iter_shard(path, [c for c in ("id", "text", "crawl_date") if c in names], BATCH):
                texts = [t or "" for t in batch.column("text").to_pylist()]
                with self.track_time("shard"):
                    sizes, values = signature(texts)
                ids.append(batch.column("id").cast(pa.string()))
                crawl = batch.column("crawl_date").to_pylist() if "crawl_date" in names else [""] * len(texts)
                columns["sha256"] += [text_sha256(t) for t in texts]
                columns["chars"] += [len(t) for t in texts]
                columns["shingles"] += sizes
                columns["crawl_date"] += [c or "" for c in crawl]
                columns["values"] += values
            values = columns.pop("values")
            if self.candidates == "sampled":  # a list column: no Python int per hash
                offsets = np.r_[0, np.cumsum([x.size for x in values])].astype(np.int32)
                flat = np.concatenate(values) if values else np.empty(0, np.uint64)
                values = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat, pa.uint64()))
            columns["sampled" if self.candidates == "sampled" else "minhash"] = values
            id_column = pa.concat_arrays(ids) if ids else pa.array([], pa.string())
            write_parquet(target, pa.table({"id": id_column, **columns}))
            self.stat_update("articles", value=len(id_column))
        return
        yield


def _priority(sig: pa.Table) -> np.ndarray:
    """Row order of the signature table, longest first (then earliest crawl, then id): keepers first.
    Sorted in Arrow (strings by UTF-8 bytes, the order of Python's ``str``): no Python object per row."""
    import pyarrow.compute as pc

    keys = [("chars", "descending"), ("crawl_date", "ascending"), ("id", "ascending")]
    return pc.sort_indices(sig.select([k for k, _ in keys]), sort_keys=keys).to_numpy()


def _exact_keepers(sha256: pa.ChunkedArray, order: np.ndarray) -> np.ndarray:
    """Per row, the row kept for its text: the first in ``order`` with the same SHA-256 (itself when it is
    kept), found on dictionary codes instead of a dictionary of Python strings."""
    import pyarrow.compute as pc

    codes = pc.dictionary_encode(sha256.combine_chunks()).indices.to_numpy()
    _, first = np.unique(codes[order], return_index=True)  # every code 0..k-1 occurs: indexed by code
    return order[first][codes]


def _within(runs: np.ndarray) -> np.ndarray:
    """Positions inside each run, concatenated: runs [2, 3] -> [0, 1, 0, 1, 2]."""
    return np.arange(int(runs.sum())) - np.repeat(np.cumsum(runs) - runs, runs)


def _gather(column: pa.ChunkedArray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sampled hashes of ``rows`` (in that order) as one flat array, and their counts, taken from the
    Arrow list column without a Python int per hash (nor index arrays as long as the hashes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lists = column.take(pa.array(rows)).combine_chunks()
    counts = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    return counts, pc.list_flatten(lists).to_numpy(zero_copy_only=False)


class FindDuplicates(PipelineStep):
    """One task: decide which articles go, and which kept article each one duplicates."""

    name = "find duplicates (exact + containment)"
    type = "🫂 - DEDUP"

    def __init__(
        self,
        paths: Sequence[str],
        folder: str,
        output: str,
        threshold: float = 0.8,
        candidates: str = "sampled",
        lsh_threshold: float | None = None,
        own_process: bool = False,
    ):
        super().__init__()
        self.paths, self.folder, self.output = list(paths), folder, output
        self.threshold, self.candidates = threshold, candidates
        self.lsh_threshold = lsh_threshold or LSH_THRESHOLDS[candidates]
        self.own_process = own_process

    def _sampled_pairs(self, keep: np.ndarray, column: pa.ChunkedArray | None = None) -> set[tuple[int, int]]:
        """Pairs sharing enough sampled shingles: an inverted index (hash -> articles, longest first) as
        one sorted array. A shingle shared by many articles (boilerplate, a much-copied story) pairs each
        with the ``STAR`` longest only, so pairs grow linearly, not quadratically, with its frequency.

        Every occurrence of a pair comes from a position of its later (shorter) article, so articles are
        visited in blocks of about ``PAIR_CHUNK`` occurrences, each block's pairs counted completely and
        filtered at once: memory follows one block, not every pair occurrence of the corpus. The index's
        arrays are int32 where they fit (half the memory) and each goes as soon as it is used."""
        if column is None:  # read here, so that it is freed once gathered
            from continuousbench.news.shards import read_rows

            column = read_rows(self.folder, ["sampled"]).column("sampled")
        rows, n = np.asarray(keep, np.int64), len(keep)
        counts, hashes = _gather(column, rows)
        del column
        size = hashes.size
        pos = np.int32 if size < 2**31 else np.int64  # positions in the index
        order = np.argsort(hashes, kind="stable").astype(pos)  # by hash, then longest first (keep's order)
        hashes = hashes[order]
        starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]]).astype(pos)
        del hashes
        in_index = np.repeat(np.arange(n, dtype=np.int32), counts)[order]
        group_start = np.repeat(starts, np.diff(np.r_[starts, size]))
        del starts
        first_of, partners = np.empty(size, pos), np.empty(size, np.int16)
        partners[order] = np.minimum(np.arange(size, dtype=pos) - group_start, STAR)  # the group's first STAR
        first_of[order] = group_start  # back in article order
        del order, group_start
        article_end = np.cumsum(counts)
        per_article = np.zeros(n, np.int64)  # pair occurrences of each article
        nonempty = np.flatnonzero(counts)
        per_article[nonempty] = np.add.reduceat(partners, (article_end - counts)[nonempty], dtype=np.int64)
        occurrences = np.cumsum(per_article)  # up to each article's end
        found, lo = [], 0
        while lo < n:  # a block of articles lo..hi-1 with about PAIR_CHUNK pair occurrences
            before = occurrences[lo - 1] if lo else 0
            hi = max(int(np.searchsorted(occurrences, before + PAIR_CHUNK, "right")), lo + 1)
            span = slice(article_end[lo] - counts[lo], article_end[hi - 1])
            r = partners[span].astype(np.int64)
            partner = in_index[np.repeat(first_of[span], r) + _within(r)].astype(np.int64)
            ranks = np.repeat(np.arange(lo, hi, dtype=np.int64), counts[lo:hi])
            keys, shared = np.unique(partner * n + np.repeat(ranks, r), return_counts=True)
            first, second = keys // n, keys % n
            found.append(keys[shared >= self.lsh_threshold * np.minimum(counts[first], counts[second])])
            lo = hi
        keys = np.concatenate(found) if found else np.empty(0, np.int64)
        a, b = rows[keys // n], rows[keys % n]
        return set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True))

    def _pairs(self, keep: np.ndarray) -> set[tuple[int, int]]:
        """Candidate pairs (row indices, smaller first) among the exact-deduplicated articles."""
        if self.candidates == "sampled":
            return self._sampled_pairs(keep)
        from datasketch import LeanMinHash, MinHashLSH, MinHashLSHEnsemble

        from continuousbench.news.shards import read_rows

        table = read_rows(self.folder, ["minhash", "shingles"])
        values = np.frombuffer(b"".join(table.column("minhash").to_pylist()), np.uint32).reshape(-1, NUM_PERM)
        sizes, keep = table.column("shingles").to_pylist(), keep.tolist()
        del table

        def lean(i: int) -> LeanMinHash:  # made when needed: an object per article would double the memory
            return LeanMinHash(seed=MINHASH_SEED, hashvalues=values[i], scheme=SCHEME)

        pairs: set[tuple[int, int]] = set()
        if self.candidates == "ensemble":
            index = MinHashLSHEnsemble(threshold=self.lsh_threshold, num_perm=NUM_PERM, num_part=16)
            index.index((i, lean(i), sizes[i]) for i in keep)
            query = lambda i: index.query(lean(i), sizes[i])  # noqa: E731
        else:
            index = MinHashLSH(threshold=self.lsh_threshold, num_perm=NUM_PERM)
            with index.insertion_session() as session:
                for i in keep:
                    session.insert(i, lean(i))
            query = lambda i: index.query(lean(i))  # noqa: E731
        for i in keep:
            pairs.update((min(i, j), max(i, j)) for j in query(i) if j != i)
        return pairs

    def _shingle_sets(self, ids: pa.ChunkedArray, rows: list[int]) -> dict[int, np.ndarray]:
        """The shingle hashes of the signature ``rows``, their texts re-read a batch at a time (only the
        hashes are held, never the texts)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from continuousbench.news.shards import iter_shard

        row_of = dict(zip(ids.take(pa.array(rows, pa.int64())).to_pylist(), rows, strict=True))
        wanted = pa.array(sorted(row_of), pa.string())
        sets: dict[int, np.ndarray] = {}
        for path in self.paths:
            for batch in iter_shard(Path(path), ["id", "text"], BATCH):
                batch = batch.filter(pc.is_in(batch.column("id").cast(pa.string()), value_set=wanted))
                for i, text in zip(
                    batch.column("id").cast(pa.string()).to_pylist(),
                    batch.column("text").to_pylist(),
                    strict=True,
                ):
                    sets[row_of[i]] = shingle_hashes(text or "")
        return sets

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """With ``own_process`` (the local executor, which runs this one task in the command's process) the
        work runs in a fork that ends with it: the command does not keep the memory the allocators hold
        on to, which the next pipeline's processes would share (its manager is a fork of the command)."""
        if self.own_process:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
                self.stats = pool.submit(self._find).result()  # its counts and times
        else:
            self._find()
        return
        yield

    def _find(self) -> Stats:
        import pyarrow as pa
        import pyarrow.compute as pc

        from continuousbench.news.shards import read_rows, write_parquet

        # the candidates' columns are read where they are used; these stay in Arrow: no object per article
        sig = read_rows(self.folder, ["id", "sha256", "chars", "crawl_date"])
        ids = sig.column("id")
        if pc.count_distinct(ids).as_py() != len(ids):
            raise UserError(
                "article ids are not unique across the input shards; give every article its own id"
            )
        order = _priority(sig)
        keeper = _exact_keepers(sig.column("sha256"), order)
        del sig
        exact = np.flatnonzero(keeper != np.arange(len(keeper)))
        dropped: dict[int, tuple[int, str, float]] = {  # row -> (kept row, reason, containment)
            i: (j, "exact", 1.0) for i, j in zip(exact.tolist(), keeper[exact].tolist(), strict=True)
        }
        keep = order[keeper[order] == order]
        with self.track_time("candidates"):
            pairs = self._pairs(keep)
        self.stat_update("candidate_pairs", value=len(pairs))
        sets = self._shingle_sets(ids, sorted({i for pair in pairs for i in pair}))
        edges: dict[int, list[tuple[float, int]]] = {}
        for a, b in sorted(pairs):
            c = containment(sets[a], sets[b])
            if c >= self.threshold:
                edges.setdefault(a, []).append((c, b))
                edges.setdefault(b, []).append((c, a))
        del sets, pairs
        rank_of = np.empty(len(order), np.int64)
        rank_of[order] = np.arange(len(order))
        kept: set[int] = set()
        for i in keep.tolist():  # longest first: a dropped article's kept twin is never shorter
            twins = [(c, j) for c, j in edges.get(i, ()) if j in kept]
            if twins:
                c, j = max(twins, key=lambda t: (t[0], -rank_of[t[1]]))
                dropped[i] = (j, "near", c)
            else:
                kept.add(i)
        named = ids.take(pa.array([i for i in dropped], pa.int64())).to_pylist()
        twins = ids.take(pa.array([j for j, _, _ in dropped.values()], pa.int64())).to_pylist()
        rows = sorted(zip(named, twins, dropped.values(), strict=True))
        table = pa.table(
            {  # typed columns: with no duplicates, untyped empty lists would be null columns
                "id": pa.array([i for i, _, _ in rows], pa.string()),
                "duplicate_of": pa.array([j for _, j, _ in rows], pa.string()),
                "reason": pa.array([r for _, _, (_, r, _) in rows], pa.string()),
                "containment": pa.array([c for _, _, (_, _, c) in rows], pa.float64()),
            }
        )
        write_parquet(Path(self.output), table)
        self.stat_update("dropped_exact_duplicate", value=len(exact))
        self.stat_update("dropped_near_duplicate", value=len(rows) - len(exact))
        return self.stats


class DropDuplicates(PipelineStep):
    """Each input shard of this task without the dropped articles, every column kept."""

    name = "drop duplicates"
    type = "🫂 - DEDUP"

    def __init__(self, paths: Sequence[str], duplicates: str, folder: str):
        super().__init__()
        self.paths, self.duplicates, self.folder = list(paths), duplicates, folder

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        from continuousbench.news.shards import (
            iter_shard,
            read_shard,
            shard_name,
            shard_schema,
            write_batches,
        )

        gone = read_shard(Path(self.duplicates), ["id"]).column("id")
        for index in range(rank, len(self.paths), world_size):
            path = Path(self.paths[index])
            batches = (  # a batch at a time, a row group each
                batch.filter(pc.invert(pc.is_in(batch.column("id").cast(pa.string()), value_set=gone)))
                for batch in iter_shard(path, rows=BATCH)
            )
            out = write_batches(Path(self.folder) / shard_name(index), shard_schema(path), batches)
            self.stat_update("articles", value=pq.read_metadata(out).num_rows)
        return
        yield


# -- command ------------------------------------------------------------------------------------------


@dataclass
class DedupArguments(StageArguments):
    input: str = field(metadata={"help": "Articles: the extract stage's output folder (or shards)."})
    output: str = field(
        kw_only=True, metadata={"help": "Output folder (data/ shards, duplicates.parquet, stats.json)."}
    )
    threshold: float = field(default=0.8, metadata=bounds("(0, 1]", "Containment that makes a duplicate."))
    candidates: str = field(
        default="sampled",
        metadata={
            "help": "Candidate pairs: sampled (hash-sampled shingles, containment at any length "
            "ratio), or for comparison MinHash LSH jaccard (Jaccard >= 0.5: misses a short article "
            "inside a long one) or ensemble (containment, ~10x slower).",
            "choices": list(CANDIDATE_KINDS),
        },
    )
    lsh_threshold: float | None = field(
        default=None,
        metadata=bounds(
            "(0, 1)",
            "Candidate threshold (default: 0.5 of the sampled shingles shared; "
            "LSH: 0.6 containment, 0.5 Jaccard).",
        ),
    )


def main(args: DedupArguments, ex: ExecutorArguments) -> Path | str:
    from continuousbench.news.executors import Pipeline, pipeline_counts, queued, run_pipelines
    from continuousbench.news.shards import DATA, StageOutput, input_files

    paths = [str(p) for p in input_files(args.input)]
    config = {k: v for k, v in vars(args).items() if k not in ("overwrite", "resume")} | {"paths": paths}
    out = StageOutput(
        args.output, "dedup", config, overwrite=args.overwrite, resume=args.resume, inputs=[args.input]
    )
    sig, dup = str(out.path(SIGNATURES)), str(out.path(DUPLICATES))
    tasks = min(ex.tasks, len(paths))
    pipelines = [
        Pipeline("signatures", [Signatures(paths, sig, args.candidates)], tasks),
        Pipeline(
            "duplicates",
            [
                FindDuplicates(
                    paths,
                    sig,
                    dup,
                    args.threshold,
                    args.candidates,
                    args.lsh_threshold,
                    own_process=ex.executor == "local",
                )
            ],
            1,
        ),
        Pipeline("drop", [DropDuplicates(paths, dup, str(out.path(DATA)))], tasks),
    ]
    logs = out.path("logs")
    if not run_pipelines(pipelines, ex, logs):
        return queued(args.output)
    counts = pipeline_counts(logs, ["signatures", "duplicates", "drop"])
    rows_in = pipeline_counts(logs, ["signatures"]).get("articles", 0)
    rows_out = pipeline_counts(logs, ["drop"]).get("articles", 0)
    counts.pop("articles", None)
    return out.finish(rows_in, rows_out, counts, publish=[DUPLICATES, "logs"], candidates=args.candidates)


make_parser, cli = command(
    (DedupArguments, ExecutorArguments),
    "continuousbench news dedup",
    "Drop exact (SHA-256) and near duplicate articles (containment >= 0.8).",
    main,
    report=print,
)
