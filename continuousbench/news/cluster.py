"""``continuousbench news cluster``: events as clusters of articles (paper App. H.2, "Clustering").

    continuousbench news cluster --input work/subsample --output work/cluster \\
        --encoder st:google/embeddinggemma-300m        # or --encoder tfidf (offline)

1. Embed title + first ~500 characters (:mod:`continuousbench.embeddings.encoders`).
2. For each window of ``window_days`` days (+-3 around a centre, centres ``stride_days`` apart), a
   mutual kNN graph of its articles (faiss inner product: each article's ``k_search`` nearest, an edge
   where two articles are in each other's lists with similarity >= ``min_similarity``, each article
   keeping its ``k_graph`` strongest) and Leiden communities (igraph, the modularity objective set
   explicitly since igraph defaults to CPM; resolution 0.07, 4 iterations, seeded).
3. Communities of at least ``min_cluster_size`` articles are merged across windows when their members
   overlap (Jaccard >= 0.35) or their centroids are close (cosine >= 0.9).
4. Each article joins the merged cluster it fell in most often; clusters still of the minimum size are
   numbered by size. Output: every article with its ``cluster`` (-1: none), ``clusters.parquet``
   (size, days, centroid, title of the most central article, nearest clusters) and the embeddings.

All of it runs over the articles sorted by id, so the result does not depend on the input's sharding.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.embeddings.encoders import CLUSTERING_PROMPT, DEFAULT_ENCODER
from continuousbench.errors import UserError
from continuousbench.news.stage_arguments import StageArguments

NEIGHBOURS = 5  # nearest clusters recorded per cluster (the support stage's candidate pool)


@dataclass
class ClusterArguments(StageArguments):
    input: str = field(metadata={"help": "Articles: the subsample (or dedup) stage's output folder."})
    output: str = field(
        kw_only=True, metadata={"help": "Output folder (data/, clusters.parquet, embeddings.parquet)."}
    )
    encoder: str = field(
        default=DEFAULT_ENCODER, metadata={"help": "st:<sentence-transformers model folder or id>, or tfidf."}
    )
    prompt: str = field(
        default=CLUSTERING_PROMPT, metadata={"help": "Prompt prefix of the st encoder.", "allow_empty": True}
    )
    text_chars: int = field(default=500, metadata=bounds("[1, inf)", "Characters of text after the title."))
    window_days: int = field(default=7, metadata=bounds("[1, inf)", "Days per window (odd: centred)."))
    stride_days: int = field(default=1, metadata=bounds("[1, inf)", "Days between window centres."))
    k_search: int = field(default=60, metadata=bounds("[1, inf)", "Neighbours searched per article."))
    k_graph: int = field(default=30, metadata=bounds("[1, inf)", "Mutual edges kept per article."))
    min_similarity: float = field(default=0.55, metadata=bounds("[-1, 1]", "Cosine of a graph edge."))
    resolution: float = field(default=0.07, metadata=bounds("(0, inf)", "Leiden resolution (modularity)."))
    iterations: int = field(default=4, metadata=bounds("[1, inf)", "Leiden iterations."))
    min_cluster_size: int = field(default=25, metadata=bounds("[2, inf)", "Smallest cluster kept."))
    merge_jaccard: float = field(default=0.35, metadata=bounds("(0, 1]", "Member overlap that merges."))
    merge_similarity: float = field(default=0.9, metadata=bounds("(0, 1]", "Centroid cosine that merges."))
    seed: int = field(default=0, metadata=bounds("[0, 9.2e18]", "Seed of Leiden and of the SVD."))

    def __post_init__(self) -> None:
        if self.stride_days > self.window_days:
            raise UserError(
                f"--stride_days {self.stride_days} is longer than --window_days {self.window_days}: the days "
                "between windows would never be clustered; keep stride_days <= window_days"
            )
        if self.k_graph > self.k_search:
            raise UserError(
                f"--k_graph {self.k_graph} exceeds --k_search {self.k_search}: edges are kept among the "
                "searched neighbours; raise --k_search or lower --k_graph"
            )


# -- the algorithm --------------------------------------------------------------------------------------


def day_numbers(dates: Sequence[str | None], crawl_dates: Sequence[str | None]) -> np.ndarray:
    """Day ordinal of each article: its publication day, else the day it was crawled."""
    out = []
    for d, c in zip(dates, crawl_dates, strict=True):
        text = d or c
        if not text:
            raise UserError("an article has neither a date nor a crawl_date; extract it again")
        out.append(date.fromisoformat(str(text)[:10]).toordinal())
    return np.asarray(out, dtype=np.int64)


def windows(days: np.ndarray, width: int, stride: int) -> list[tuple[int, np.ndarray]]:
    """(centre day, member rows) of every window that holds at least two articles."""
    if len(days) == 0:
        return []
    half = width // 2
    out = []
    for centre in range(int(days.min()), int(days.max()) + 1, stride):
        rows = np.flatnonzero((days >= centre - half) & (days <= centre + width - 1 - half))
        if len(rows) >= 2:
            out.append((centre, rows))
    return out


def mutual_knn(x: np.ndarray, k_search: int, k_graph: int, min_similarity: float):
    """Edges (pairs of rows, i < j) and their cosine of the mutual kNN graph of unit vectors ``x``."""
    import faiss

    n = len(x)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    sims, nbrs = index.search(x, min(k_search + 1, n))  # +1: an article finds itself first
    rows = np.repeat(np.arange(n), nbrs.shape[1])
    cols, sims = nbrs.ravel(), sims.ravel()
    ok = (cols >= 0) & (cols != rows) & (sims >= min_similarity)
    rows, cols, sims = rows[ok], cols[ok], sims[ok]
    forward = rows.astype(np.int64) * n + cols
    mutual = np.isin(forward, cols.astype(np.int64) * n + rows)
    rows, cols, sims = rows[mutual], cols[mutual], sims[mutual]
    # Neighbours come sorted by similarity: an entry's rank is its position among its row's entries.
    starts = np.searchsorted(rows, rows, side="left")
    keep = (np.arange(len(rows)) - starts) < k_graph
    a, b = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs, first = np.unique(a.astype(np.int64) * n + b, return_index=True)
    return np.stack([pairs // n, pairs % n], axis=1), sims[keep][first]


def leiden(n: int, edges: np.ndarray, weights: np.ndarray, resolution: float, iterations: int, seed: int):
    """Community of each of ``n`` nodes: Leiden on modularity (igraph's own default would be CPM)."""
    import igraph

    graph = igraph.Graph(n=n, edges=edges.tolist())
    igraph.set_random_number_generator(random.Random(seed))
    try:
        found = graph.community_leiden(
            objective_function="modularity",
            weights=[float(w) for w in weights],
            resolution=resolution,
            n_iterations=iterations,
        )
    finally:
        igraph.set_random_number_generator(random)
    return found.membership


class _Groups:
    """Union-find over local clusters; the smallest index of a group is its root (deterministic)."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def centroid(x: np.ndarray) -> np.ndarray:
    c = x.astype(np.float32).mean(axis=0)
    return c / max(float(np.linalg.norm(c)), 1e-12)


def merge(local: list[np.ndarray], x: np.ndarray, jaccard: float, similarity: float) -> list[int]:
    """Group of each local cluster after merging overlapping or close ones."""
    import faiss

    groups = _Groups(len(local))
    shared: Counter = Counter()
    holders: dict[int, list[int]] = {}
    for c, rows in enumerate(local):
        for r in rows.tolist():
            holders.setdefault(r, []).append(c)
    for cs in holders.values():
        for i, a in enumerate(cs):
            for b in cs[i + 1 :]:
                shared[(a, b)] += 1
    for (a, b), inter in shared.items():
        if inter / (len(local[a]) + len(local[b]) - inter) >= jaccard:
            groups.union(a, b)
    if len(local) > 1:
        centres = np.stack([centroid(x[rows]) for rows in local])
        index = faiss.IndexFlatIP(centres.shape[1])
        index.add(centres)
        sims, nbrs = index.search(centres, min(20, len(local)))
        for a in range(len(local)):
            for s, b in zip(sims[a], nbrs[a], strict=True):
                if b >= 0 and b != a and s >= similarity:
                    groups.union(a, int(b))
    return [groups.find(c) for c in range(len(local))]


def cluster_articles(x: np.ndarray, days: np.ndarray, args: ClusterArguments) -> tuple[np.ndarray, dict]:
    """Cluster label of every row (-1: none), numbered by size, and counts of the run."""
    local: list[np.ndarray] = []
    found = windows(days, args.window_days, args.stride_days)
    for w, (_, rows) in enumerate(found):
        edges, weights = mutual_knn(x[rows], args.k_search, args.k_graph, args.min_similarity)
        membership = np.asarray(
            leiden(len(rows), edges, weights, args.resolution, args.iterations, args.seed + w)
        )
        for community in np.unique(membership):
            members = rows[membership == community]
            if len(members) >= args.min_cluster_size:
                local.append(np.sort(members))
    group = merge(local, x, args.merge_jaccard, args.merge_similarity) if local else []
    group_size = Counter()
    for c, g in enumerate(group):
        group_size[g] += len(local[c])
    votes: dict[int, Counter] = {}
    for c, rows in enumerate(local):
        for r in rows.tolist():
            votes.setdefault(r, Counter())[group[c]] += 1
    labels = np.full(len(x), -1, dtype=np.int64)
    for r, counter in votes.items():
        labels[r] = min(counter, key=lambda g: (-counter[g], -group_size[g], g))
    sizes = Counter(labels[labels >= 0].tolist())
    kept = sorted((g for g, s in sizes.items() if s >= args.min_cluster_size), key=lambda g: (-sizes[g], g))
    renumber = {g: i for i, g in enumerate(kept)}
    labels = np.asarray([renumber.get(int(g), -1) for g in labels], dtype=np.int64)
    stats = {"windows": len(found), "local_clusters": len(local), "clusters": len(kept)}
    return labels, stats


def cluster_rows(labels: np.ndarray, x: np.ndarray, days: np.ndarray, titles: Sequence[str]) -> dict:
    """``clusters.parquet`` columns: size, days, centroid, most central title, nearest clusters."""
    import faiss

    n = int(labels.max()) + 1 if len(labels) else 0
    members = [np.flatnonzero(labels == c) for c in range(n)]
    centres = np.stack([centroid(x[m]) for m in members]) if n else np.zeros((0, x.shape[1]), np.float32)
    rows: dict[str, list] = {k: [] for k in ("cluster", "size", "first_day", "last_day", "title", "centroid")}
    for c, m in enumerate(members):
        central = m[int(np.argmax(x[m].astype(np.float32) @ centres[c]))]
        rows["cluster"].append(c)
        rows["size"].append(len(m))
        rows["first_day"].append(date.fromordinal(int(days[m].min())).isoformat())
        rows["last_day"].append(date.fromordinal(int(days[m].max())).isoformat())
        rows["title"].append(titles[central])
        rows["centroid"].append(centres[c].tolist())
    rows["neighbours"], rows["neighbour_similarity"] = [[] for _ in range(n)], [[] for _ in range(n)]
    if n > 1:
        index = faiss.IndexFlatIP(centres.shape[1])
        index.add(centres)
        sims, nbrs = index.search(centres, min(NEIGHBOURS + 1, n))
        for c in range(n):
            pairs = [(int(b), float(s)) for b, s in zip(nbrs[c], sims[c], strict=True) if b not in (c, -1)]
            rows["neighbours"][c] = [b for b, _ in pairs[:NEIGHBOURS]]
            rows["neighbour_similarity"][c] = [round(s, 6) for _, s in pairs[:NEIGHBOURS]]
    return rows


# -- command ------------------------------------------------------------------------------------------


def main(args: ClusterArguments) -> Path:
    import pyarrow as pa

    from continuousbench.embeddings.encoders import embedding_text, encode
    from continuousbench.news.shards import StageOutput, input_files, read_rows, read_shard, shard_name

    paths = input_files(args.input)
    config = {k: v for k, v in vars(args).items() if k not in ("overwrite", "resume", "input", "output")}
    out = StageOutput(
        args.output,
        "cluster",
        config | {"paths": [str(p) for p in paths]},
        overwrite=args.overwrite,
        resume=args.resume,
        inputs=[args.input],
    )
    table = read_rows(paths, ["id", "title", "text", "date", "crawl_date"]).sort_by("id")
    ids = table.column("id").to_pylist()
    if len(set(ids)) != len(ids):
        raise UserError(f"--input {args.input} has repeated article ids; run news dedup on it first")
    texts = [
        embedding_text(t, x, args.text_chars)
        for t, x in zip(table.column("title").to_pylist(), table.column("text").to_pylist(), strict=True)
    ]
    x16 = encode(texts, args.encoder, out.path("embeddings-work"), prompt=args.prompt, seed=args.seed)
    x = x16.astype(np.float32)
    days = day_numbers(table.column("date").to_pylist(), table.column("crawl_date").to_pylist())
    labels, stats = cluster_articles(x, days, args)
    if not stats["clusters"]:  # later stages would find nothing to ask about: stop here, say what to relax
        raise UserError(
            f"news cluster found 0 clusters in {len(ids)} articles ({stats['local_clusters']} local "
            f"communities); lower --min_cluster_size ({args.min_cluster_size}) or --min_similarity "
            f"({args.min_similarity}), raise --window_days ({args.window_days}), or give it more articles"
        )
    out.write("clusters.parquet", pa.table(cluster_rows(labels, x, days, table.column("title").to_pylist())))
    dim = x16.shape[1]
    flat = pa.array(x16.reshape(-1), pa.float16())
    vectors = pa.FixedSizeListArray.from_arrays(flat, dim)
    out.write("embeddings.parquet", pa.table({"id": ids, "embedding": vectors}))
    label_of = dict(zip(ids, labels.tolist(), strict=True))
    for index, path in enumerate(paths):
        shard = read_shard(path)
        column = pa.array([label_of[i] for i in shard.column("id").to_pylist()], pa.int64())
        out.write(f"data/{shard_name(index)}", shard.append_column("cluster", column))
    clustered = int((labels >= 0).sum())
    counts = {"clustered": clustered, "unclustered": len(ids) - clustered}
    publish = ["clusters.parquet", "embeddings.parquet"]
    return out.finish(len(ids), len(ids), counts, publish=publish, **stats, encoder=args.encoder)


make_parser, cli = command(
    ClusterArguments,
    "continuousbench news cluster",
    "Cluster articles into events: embeddings, windowed mutual kNN graphs, Leiden, merging.",
    main,
    report=print,
)
