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

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.executors import ExecutorArguments

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
BATCH = 2_000  # articles whose shingles are held at once
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

    def _sampled(self, texts: list[str]) -> tuple[list[int], pa.ListArray]:
        """Shingle counts and the sampled shingle hashes (a list column: no Python int per hash)."""
        import pyarrow as pa

        sizes, samples = [], []
        for text in texts:
            hashes = shingle_hashes(text)
            sizes.append(hashes.size)
            samples.append(sampled(hashes))
        offsets = np.r_[0, np.cumsum([x.size for x in samples])].astype(np.int32)
        flat = np.concatenate(samples) if samples else np.empty(0, np.uint64)
        return sizes, pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat, pa.uint64()))

    def _minhashes(self, texts: list[str]) -> tuple[list[int], list[bytes]]:
        """Shingle counts and 128-permutation MinHash values, a batch at a time (bounded memory)."""
        from datasketch import MinHash  # only here: its import costs every worker ~40 MB

        sizes, values = [], []
        for start in range(0, len(texts), BATCH):
            sets = [shingles(t) for t in texts[start : start + BATCH]]
            sizes += [len(x) for x in sets]
            found = MinHash.bulk([[s.encode() for s in x] for x in sets], num_perm=NUM_PERM,
                                 seed=MINHASH_SEED, scheme=SCHEME)  # fmt: skip
            values += [m.hashvalues.astype(np.uint32).tobytes() for m in found]  # 512 bytes each
        return sizes, values

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import pyarrow as pa

        from continuousbench.news.articles import text_sha256
        from continuousbench.news.shards import read_shard, require_columns, write_parquet

        for index in range(rank, len(self.paths), world_size):
            target = Path(self.folder) / f"{index:05d}.parquet"
            if target.exists():  # finished before an interruption
                continue
            table = read_shard(Path(self.paths[index]))
            require_columns(table, ("id", "text"), self.paths[index])
            texts = [t or "" for t in table.column("text").to_pylist()]
            with self.track_time("shard"):
                sizes, values = (self._sampled if self.candidates == "sampled" else self._minhashes)(texts)
            crawl = table.column("crawl_date").to_pylist() if "crawl_date" in table.column_names else None
            columns = {
                "id": table.column("id").cast(pa.string()),
                "sha256": [text_sha256(t) for t in texts],
                "chars": [len(t) for t in texts],
                "shingles": sizes,
                "crawl_date": [c or "" for c in crawl] if crawl else [""] * len(texts),
            }
            columns["sampled" if self.candidates == "sampled" else "minhash"] = values
            write_parquet(target, pa.table(columns))
            self.stat_update("articles", value=len(texts))
        return
        yield


def _priority(sig) -> list[int]:
    """Row order of the signature table, longest first (then earliest crawl, then id): keepers first."""
    chars, crawl, ids = sig["chars"], sig["crawl_date"], sig["id"]
    return sorted(range(len(ids)), key=lambda i: (-chars[i], crawl[i], ids[i]))


def _within(runs: np.ndarray) -> np.ndarray:
    """Positions inside each run, concatenated: runs [2, 3] -> [0, 1, 0, 1, 2]."""
    return np.arange(int(runs.sum())) - np.repeat(np.cumsum(runs) - runs, runs)


def _gather(column, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sampled hashes of ``rows`` (in that order) as one flat array, and their counts, read from the
    Arrow list column without a Python int per hash."""
    import pyarrow.compute as pc

    counts = pc.list_value_length(column).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    firsts = np.cumsum(counts) - counts
    return counts[rows], flat[np.repeat(firsts[rows], counts[rows]) + _within(counts[rows])]


class FindDuplicates(PipelineStep):
    """One task: decide which articles go, and which kept article each one duplicates."""

    name = "find duplicates (exact + containment)"
    type = "🫂 - DEDUP"

    def __init__(
        self, paths: Sequence[str], folder: str, output: str, threshold: float = 0.8,
        candidates: str = "sampled", lsh_threshold: float | None = None,
    ):  # fmt: skip
        super().__init__()
        self.paths, self.folder, self.output = list(paths), folder, output
        self.threshold, self.candidates = threshold, candidates
        self.lsh_threshold = lsh_threshold or LSH_THRESHOLDS[candidates]

    def _sampled_pairs(self, sig, keep: list[int]) -> set[tuple[int, int]]:
        """Pairs sharing enough sampled shingles: an inverted index (hash -> articles, longest first) as
        one sorted array. A shingle shared by many articles (boilerplate, a much-copied story) pairs each
        with the ``STAR`` longest only, so pairs grow linearly, not quadratically, with its frequency.

        Every occurrence of a pair comes from a position of its later (shorter) article, so articles are
        visited in blocks of about ``PAIR_CHUNK`` occurrences, each block's pairs counted completely and
        filtered at once: memory follows one block, not every pair occurrence of the corpus."""
        rows, n = np.asarray(keep, np.int64), len(keep)
        counts, hashes = _gather(sig.pop("sampled"), rows)
        ranks = np.repeat(np.arange(n, dtype=np.int32), counts)  # keep is longest first
        order = np.lexsort((ranks, hashes))  # the index: by hash, then longest first
        hashes = hashes[order]
        starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]])
        del hashes
        in_index = ranks[order]
        group_start = np.repeat(starts, np.diff(np.r_[starts, order.size]))
        reps = np.minimum(np.arange(order.size) - group_start, STAR)  # partners: the group's first STAR
        first_of, partners = np.empty(order.size, np.int64), np.empty(order.size, np.int16)
        first_of[order], partners[order] = group_start, reps  # back in article order
        del order, group_start, reps
        article_end = np.cumsum(counts)
        occurrences = np.r_[0, np.cumsum(partners, dtype=np.int64)][article_end]  # up to each article's end
        found, lo = [], 0
        while lo < n:  # a block of articles lo..hi-1 with about PAIR_CHUNK pair occurrences
            before = occurrences[lo - 1] if lo else 0
            hi = max(int(np.searchsorted(occurrences, before + PAIR_CHUNK, "right")), lo + 1)
            span = slice(article_end[lo] - counts[lo], article_end[hi - 1])
            r = partners[span].astype(np.int64)
            partner = in_index[np.repeat(first_of[span], r) + _within(r)].astype(np.int64)
            keys, shared = np.unique(partner * n + np.repeat(ranks[span], r), return_counts=True)
            first, second = keys // n, keys % n
            found.append(keys[shared >= self.lsh_threshold * np.minimum(counts[first], counts[second])])
            lo = hi
        keys = np.concatenate(found) if found else np.empty(0, np.int64)
        a, b = rows[keys // n], rows[keys % n]
        return set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True))

    def _pairs(self, sig, keep: list[int]) -> set[tuple[int, int]]:
        """Candidate pairs (row indices, smaller first) among the exact-deduplicated articles."""
        if self.candidates == "sampled":
            return self._sampled_pairs(sig, keep)
        from datasketch import LeanMinHash, MinHashLSH, MinHashLSHEnsemble

        values = np.frombuffer(b"".join(sig["minhash"]), np.uint32).reshape(-1, NUM_PERM)
        sig["minhash"] = None  # the array holds them now

        def lean(i: int) -> LeanMinHash:  # made when needed: an object per article would double the memory
            return LeanMinHash(seed=MINHASH_SEED, hashvalues=values[i], scheme=SCHEME)

        pairs: set[tuple[int, int]] = set()
        if self.candidates == "ensemble":
            index = MinHashLSHEnsemble(threshold=self.lsh_threshold, num_perm=NUM_PERM, num_part=16)
            index.index((i, lean(i), sig["shingles"][i]) for i in keep)
            query = lambda i: index.query(lean(i), sig["shingles"][i])  # noqa: E731
        else:
            index = MinHashLSH(threshold=self.lsh_threshold, num_perm=NUM_PERM)
            with index.insertion_session() as session:
                for i in keep:
                    session.insert(i, lean(i))
            query = lambda i: index.query(lean(i))  # noqa: E731
        for i in keep:
            pairs.update((min(i, j), max(i, j)) for j in query(i) if j != i)
        return pairs

    def _texts(self, ids: set[str]) -> dict[str, str]:
        import pyarrow as pa
        import pyarrow.compute as pc

        from continuousbench.news.shards import read_shard

        wanted = pa.array(sorted(ids), pa.string())
        texts: dict[str, str] = {}
        for path in self.paths:
            table = read_shard(Path(path), ["id", "text"])
            table = table.filter(pc.is_in(table.column("id").cast(pa.string()), value_set=wanted))
            texts.update(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
        return texts

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import pyarrow as pa

        from continuousbench.news.shards import read_rows, write_parquet

        table = read_rows(self.folder)
        arrow = ["sampled"] if self.candidates == "sampled" else []  # kept in Arrow: no Python int per hash
        sig = table.drop_columns(arrow).to_pydict() | {c: table.column(c) for c in arrow}
        del table
        if len(set(sig["id"])) != len(sig["id"]):
            raise UserError(
                "article ids are not unique across the input shards; give every article its own id"
            )
        order = _priority(sig)
        dropped: dict[int, tuple[int, str, float]] = {}  # row -> (kept row, reason, containment)
        first_of: dict[str, int] = {}
        for i in order:
            kept = first_of.setdefault(sig["sha256"][i], i)
            if kept != i:
                dropped[i] = (kept, "exact", 1.0)
        keep = [i for i in order if i not in dropped]
        with self.track_time("candidates"):
            pairs = self._pairs(sig, keep)
        self.stat_update("candidate_pairs", value=len(pairs))
        ids = sig["id"]
        texts = self._texts({ids[i] for pair in pairs for i in pair})
        sets = {ids[i]: shingle_hashes(texts[ids[i]] or "") for pair in pairs for i in pair}
        edges: dict[int, list[tuple[float, int]]] = {}
        for a, b in sorted(pairs):
            c = containment(sets[ids[a]], sets[ids[b]])
            if c >= self.threshold:
                edges.setdefault(a, []).append((c, b))
                edges.setdefault(b, []).append((c, a))
        rank_of = {i: r for r, i in enumerate(order)}
        kept: set[int] = set()
        for i in keep:  # longest first: a dropped article's kept twin is never shorter
            twins = [(c, j) for c, j in edges.get(i, ()) if j in kept]
            if twins:
                c, j = max(twins, key=lambda t: (t[0], -rank_of[t[1]]))
                dropped[i] = (j, "near", c)
            else:
                kept.add(i)
        rows = sorted(dropped.items(), key=lambda item: ids[item[0]])
        table = pa.table({  # typed columns: with no duplicates, untyped empty lists would be null columns
            "id": pa.array([ids[i] for i, _ in rows], pa.string()),
            "duplicate_of": pa.array([ids[j] for _, (j, _, _) in rows], pa.string()),
            "reason": pa.array([r for _, (_, r, _) in rows], pa.string()),
            "containment": pa.array([c for _, (_, _, c) in rows], pa.float64()),
        })  # fmt: skip
        write_parquet(Path(self.output), table)
        self.stat_update("dropped_exact_duplicate", value=sum(1 for _, (_, r, _) in rows if r == "exact"))
        self.stat_update("dropped_near_duplicate", value=sum(1 for _, (_, r, _) in rows if r == "near"))
        return
        yield


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

        from continuousbench.news.shards import read_shard, shard_name, write_parquet

        gone = read_shard(Path(self.duplicates), ["id"]).column("id")
        for index in range(rank, len(self.paths), world_size):
            table = read_shard(Path(self.paths[index]))
            mask = pc.invert(pc.is_in(table.column("id").cast(pa.string()), value_set=gone))
            kept = table.filter(mask)
            write_parquet(Path(self.folder) / shard_name(index), kept)
            self.stat_update("articles", value=kept.num_rows)
        return
        yield


# -- command ------------------------------------------------------------------------------------------


@dataclass
class DedupArguments:
    input: str = field(metadata={"help": "Articles: the extract stage's output folder (or shards)."})
    output: str = field(metadata={"help": "Output folder (data/ shards, duplicates.parquet, stats.json)."})
    threshold: float = field(default=0.8, metadata=bounds("(0, 1]", "Containment that makes a duplicate."))
    candidates: str = field(
        default="sampled",
        metadata={"help": "Candidate pairs: sampled (hash-sampled shingles, containment at any length "
                  "ratio), or for comparison MinHash LSH jaccard (Jaccard >= 0.5: misses a short article "
                  "inside a long one) or ensemble (containment, ~10x slower).",
                  "choices": list(CANDIDATE_KINDS)},
    )  # fmt: skip
    lsh_threshold: float | None = field(
        default=None,
        metadata=bounds("(0, 1)", "Candidate threshold (default: 0.5 of the sampled shingles shared; "
                                  "LSH: 0.6 containment, 0.5 Jaccard)."),
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace a finished output."})
    resume: bool = field(default=False, metadata={"help": "Continue an unfinished run."})


def main(args: DedupArguments, ex: ExecutorArguments, *, resume: bool | None = None) -> Path | str:
    from continuousbench.news.executors import Pipeline, pipeline_counts, queued, run_pipelines
    from continuousbench.news.shards import DATA, StageOutput, input_files

    paths = [str(p) for p in input_files(args.input)]
    config = {k: v for k, v in vars(args).items() if k not in ("overwrite", "resume")} | {"paths": paths}
    out = StageOutput(args.output, "dedup", config, overwrite=args.overwrite,
                      resume=args.resume if resume is None else resume, inputs=[args.input])  # fmt: skip
    sig, dup = str(out.path(SIGNATURES)), str(out.path(DUPLICATES))
    tasks = min(ex.tasks, len(paths))
    pipelines = [
        Pipeline("signatures", [Signatures(paths, sig, args.candidates)], tasks),
        Pipeline("duplicates", [FindDuplicates(paths, sig, dup, args.threshold, args.candidates,
                                               args.lsh_threshold)], 1),
        Pipeline("drop", [DropDuplicates(paths, dup, str(out.path(DATA)))], tasks),
    ]  # fmt: skip
    logs = out.path("logs")
    if not run_pipelines(pipelines, ex, logs):
        return queued(args.output)
    counts = pipeline_counts(logs, ["signatures", "duplicates", "drop"])
    rows_in = pipeline_counts(logs, ["signatures"]).get("articles", 0)
    rows_out = pipeline_counts(logs, ["drop"]).get("articles", 0)
    counts.pop("articles", None)
    return out.finish(rows_in, rows_out, counts, publish=[DUPLICATES, "logs"], candidates=args.candidates)


make_parser, cli = command(
    (DedupArguments, ExecutorArguments), "continuousbench news dedup",
    "Drop exact (SHA-256) and near duplicate articles (containment >= 0.8).",
    main, report=print,
)
