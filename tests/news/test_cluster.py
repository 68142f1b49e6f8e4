"""``news subsample`` and ``news cluster``: seeded samples, windows, mutual kNN, Leiden, merging."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest
from newspages import TINY_CLUSTERING

from continuousbench.news.cluster import ClusterArguments, leiden, main, merge, mutual_knn, windows
from continuousbench.news.shards import read_rows
from continuousbench.news.subsample import SubsampleArguments
from continuousbench.news.subsample import main as subsample


def event_of(url: str) -> str:
    return url.rsplit("/", 1)[1].split("-")[0]


def test_subsample_is_seeded_and_keeps_columns(deduped, tmp_path):
    runs = [
        subsample(SubsampleArguments(input=str(deduped), output=str(tmp_path / str(i)), count=10, seed=s))
        for i, s in enumerate((3, 3, 4))
    ]
    ids = [sorted(r["id"] for r in read_rows(out).to_pylist()) for out in runs]
    assert len(ids[0]) == 10 and ids[0] == ids[1] and ids[0] != ids[2]
    stats = json.loads((runs[0] / "stats.json").read_text())
    assert stats["output"] == 10 and stats["dropped_not_sampled"] == stats["input"] - 10
    everything = subsample(SubsampleArguments(input=str(deduped), output=str(tmp_path / "all"), size="large"))
    assert len(read_rows(everything)) == len(read_rows(deduped))


def test_windows_cover_three_days_either_side():
    days = np.array([100, 101, 103, 110, 111])
    found = dict(windows(days, 7, 1))
    assert found[100].tolist() == [0, 1, 2] and found[108].tolist() == [3, 4]
    assert 105 not in found  # only day 103 within +-3: a single article is no window
    assert all(np.abs(days[rows] - centre).max() <= 3 for centre, rows in found.items())
    assert list(dict(windows(days, 7, 5))) == [100, 110]


def test_mutual_knn_graph_and_leiden():
    rng = np.random.default_rng(0)
    centres = np.eye(8, dtype=np.float32)[:2]
    x = np.concatenate(
        [centres[0] + 0.1 * rng.standard_normal((6, 8)), centres[1] + 0.1 * rng.standard_normal((5, 8))]
    )
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    edges, weights = mutual_knn(x, k_search=4, k_graph=2, min_similarity=0.55)
    group = np.array([0] * 6 + [1] * 5)
    assert len(edges) and all(group[a] == group[b] and a < b for a, b in edges)
    assert np.allclose(weights, [(x[a] @ x[b]) for a, b in edges], atol=1e-5) and (weights >= 0.55).all()
    assert max(Counter(edges.ravel().tolist()).values()) <= 2 * 2  # k_graph each way
    first = leiden(len(x), edges, weights, resolution=0.07, iterations=4, seed=1)
    assert first == leiden(len(x), edges, weights, resolution=0.07, iterations=4, seed=1)
    assert len(set(first[:6]) & set(first[6:])) == 0


def test_merge_by_overlap_or_centroid():
    x = np.eye(4, dtype=np.float32)[[0] * 10 + [1] * 10 + [2] * 10]
    a, b, c = np.arange(0, 8), np.arange(4, 10), np.arange(20, 30)  # a, b: Jaccard 0.4; c elsewhere
    assert merge([a, b, c], x, jaccard=0.35, similarity=0.9) == [0, 0, 2]
    far = np.arange(10, 20)  # no shared members but the same direction as a: merged by centroid
    assert merge([a, far, c], x, jaccard=0.35, similarity=0.9) == [0, 1, 2]
    assert merge([a, np.arange(0, 3)], x, jaccard=0.5, similarity=1.01) == [0, 1]


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_one_cluster_per_event(clustered):
    rows = read_rows(clustered).to_pylist()
    by_event = {}
    for r in rows:
        by_event.setdefault(event_of(r["url"]), set()).add(r["cluster"])
    assert all(len(labels) == 1 and -1 not in labels for labels in by_event.values())
    assert len({next(iter(v)) for v in by_event.values()}) == len(by_event)
    clusters = pq.read_table(clustered / "clusters.parquet").to_pylist()
    sizes = Counter(r["cluster"] for r in rows)
    assert [c["size"] for c in clusters] == [sizes[c["cluster"]] for c in clusters]
    assert [c["size"] for c in clusters] == sorted((c["size"] for c in clusters), reverse=True)
    for c in clusters:
        days = [r["date"] for r in rows if r["cluster"] == c["cluster"]]
        assert (c["first_day"], c["last_day"]) == (min(days), max(days))
        assert c["cluster"] not in c["neighbours"] and len(c["neighbours"]) == len(clusters) - 1
    stats = json.loads((clustered / "stats.json").read_text())
    assert stats["clusters"] == len(clusters) and stats["clustered"] == len(rows)
    emb = pq.read_table(clustered / "embeddings.parquet")
    vectors = np.stack(emb.column("embedding").to_numpy(zero_copy_only=False))
    assert vectors.dtype == np.float16 and np.allclose(
        np.linalg.norm(vectors.astype(np.float32), axis=1), 1, atol=1e-2
    )


def test_clusters_do_not_depend_on_sharding(deduped, clustered, tmp_path):
    import pyarrow as pa

    table = read_rows(deduped)
    for i in range(3):  # the same articles in three shards, another order
        pq.write_table(table.take(list(range(i, len(table), 3))[::-1]), tmp_path / f"in-{i}.parquet")
    out = main(
        ClusterArguments(
            input=str(tmp_path / "in-*.parquet"), output=str(tmp_path / "out"), **TINY_CLUSTERING
        )
    )
    again = {r["id"]: r["cluster"] for r in read_rows(out).to_pylist()}
    assert again == {r["id"]: r["cluster"] for r in read_rows(clustered).to_pylist()}
    assert pa.types.is_int64(read_rows(out).schema.field("cluster").type)


def test_sentence_transformers_encoder(deduped, tiny_encoder, tmp_path):
    args = ClusterArguments(
        input=str(deduped),
        output=str(tmp_path),
        encoder=f"st:{tiny_encoder}",
        min_cluster_size=3,
        min_similarity=0.5,
    )
    out = main(args)
    emb = pq.read_table(out / "embeddings.parquet")
    vectors = np.stack(emb.column("embedding").to_numpy(zero_copy_only=False)).astype(np.float32)
    assert vectors.shape == (len(read_rows(deduped)), 32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-2)
    assert json.loads((out / "stats.json").read_text())["encoder"] == f"st:{tiny_encoder}"


def test_zero_clusters_fail_with_the_thresholds_to_relax(deduped, tmp_path, capsys):
    from continuousbench.news.cluster import cli

    settings = TINY_CLUSTERING | {"min_cluster_size": 10_000}  # no event is that large
    argv = ["--input", str(deduped), "--output", str(tmp_path / "out")]
    argv += [a for k, v in settings.items() for a in (f"--{k}", str(v))]
    with pytest.raises(SystemExit):
        cli(argv)
    err = capsys.readouterr().err.strip()
    assert "found 0 clusters" in err and "--min_cluster_size (10000)" in err and "--min_similarity" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "out" / "clusters.parquet").exists()
