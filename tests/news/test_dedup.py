"""``news dedup``: SHA-256 exact duplicates, MinHash LSH candidates, containment >= 0.8, shorter dropped."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from continuousbench.news.dedup import DedupArguments, containment, main, shingles
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.shards import read_rows

VOCAB = [f"word{i}" for i in range(5000)]


def words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(VOCAB) for _ in range(n)]


def row(i: str, text: list[str] | str, crawl: str = "2026-01-10T00:00:00Z") -> dict:
    text = text if isinstance(text, str) else " ".join(text)
    return {
        "id": i,
        "url": f"https://x.com/{i}",
        "hostname": "x.com",
        "title": i,
        "date": "2026-01-10",
        "crawl_date": crawl,
        "language": "en",
        "text": text,
        "section": f"s-{i}",
    }


@pytest.fixture(scope="module")
def pairs_input(tmp_path_factory):
    """Articles in two shards: a 0.85-containment pair, a 0.6 pair, an exact copy and a short text
    inside a three times longer one (Jaccard ~0.3: only containment candidates find it)."""
    rng = random.Random(0)
    a = words(rng, 400)
    near = a[:325] + words(rng, 55)  # shares 321 shingles of its 376: containment 0.854
    b = words(rng, 400)
    far = b[:230] + words(rng, 150)  # 226 of 376: containment 0.60
    long = words(rng, 900)
    inner = long[300:600]
    rows = [
        row("a", a),
        row("near", near),
        row("b", b),
        row("far", far),
        row("long", long),
        row("inner", inner),
        row("copy-late", a, "2026-01-11T00:00:00Z"),
    ]
    rows += [row(f"other{i}", words(rng, 300)) for i in range(20)]
    folder = tmp_path_factory.mktemp("dedup-in")
    pq.write_table(pa.Table.from_pylist(rows[:4]), folder / "part-00000.parquet")
    pq.write_table(pa.Table.from_pylist(rows[4:]), folder / "part-00001.parquet")
    return folder, {r["id"]: r["text"] for r in rows}


def test_containment_of_the_constructed_pairs(pairs_input):
    _, texts = pairs_input
    assert 0.84 <= containment(shingles(texts["a"]), shingles(texts["near"])) <= 0.87
    assert 0.55 <= containment(shingles(texts["b"]), shingles(texts["far"])) <= 0.65
    assert containment(shingles(texts["long"]), shingles(texts["inner"])) == 1.0
    assert containment({"x"}, set()) == 0.0


@pytest.mark.parametrize("candidates", ["sampled", "ensemble", "jaccard"])
def test_dedup_drops_the_shorter_of_each_pair(pairs_input, tmp_path, candidates):
    folder, texts = pairs_input
    out = main(
        DedupArguments(input=str(folder), output=str(tmp_path), candidates=candidates),
        ExecutorArguments(tasks=2),
    )
    kept = read_rows(out).to_pylist()
    dup = {r["id"]: r for r in pq.read_table(out / "duplicates.parquet").to_pylist()}
    assert dup["copy-late"]["duplicate_of"] == "a" and dup["copy-late"]["reason"] == "exact"
    assert dup["near"]["duplicate_of"] == "a" and dup["near"]["reason"] == "near"
    assert dup["near"]["containment"] >= 0.8 and len(texts["near"]) < len(texts["a"])
    assert "far" not in dup and "b" not in dup  # 0.6 stays
    if candidates != "jaccard":  # a short article inside a long one, whatever the length ratio
        assert dup["inner"]["duplicate_of"] == "long"
    ids = {r["id"] for r in kept}
    assert ids.isdisjoint(dup) and set(d["duplicate_of"] for d in dup.values()) <= ids
    assert len(ids) + len(dup) == len(texts)
    assert {r["section"] for r in kept} == {f"s-{i}" for i in ids}  # columns it does not use survive
    stats = json.loads((out / "stats.json").read_text())
    assert stats["dropped_exact_duplicate"] == 1
    assert stats["dropped_near_duplicate"] == len(dup) - 1
    assert stats["input"] == len(texts) and stats["output"] == len(ids)


def test_dedup_of_extracted_pages(extracted, tmp_path):
    out = main(DedupArguments(input=str(extracted), output=str(tmp_path)), ExecutorArguments(tasks=2))
    dup = pq.read_table(out / "duplicates.parquet").to_pylist()
    copies = [d for d in dup if d["reason"] == "exact"]
    assert len(copies) == 1  # the syndicated copy of the first report
    kept = {r["id"]: r["url"] for r in read_rows(out).to_pylist()}
    assert kept[copies[0]["duplicate_of"]].rsplit("/", 1)[1] in ("bridge-0", "bridge-syndicated")


def test_ids_must_be_unique(pairs_input, tmp_path, capsys):
    from continuousbench.news.dedup import cli

    folder, _ = pairs_input
    extra = tmp_path / "in"
    extra.mkdir()
    for p in folder.iterdir():
        (extra / p.name).write_bytes(p.read_bytes())
    pq.write_table(pa.Table.from_pylist([row("a", "another text entirely")]), extra / "part-00002.parquet")
    with pytest.raises(SystemExit):
        cli(["--input", str(extra), "--output", str(tmp_path / "out")])
    assert "ids are not unique" in capsys.readouterr().err


def test_hashed_shingles_give_the_same_containment(pairs_input):
    from continuousbench.news.dedup import shingle_hashes

    _, texts = pairs_input
    for a, b in (("a", "near"), ("b", "far"), ("long", "inner"), ("a", "b")):
        exact = containment(shingles(texts[a]), shingles(texts[b]))
        assert containment(shingle_hashes(texts[a]), shingle_hashes(texts[b])) == exact


@pytest.fixture(scope="module")
def excerpts_input(tmp_path_factory):
    """30 excerpts of ~200 words (containment >= 0.85) inside ~400-word articles, and 10 pairs of
    articles that share half of their text (containment ~0.5)."""
    rng = random.Random(1)
    rows, pairs = [], []
    for i in range(30):
        long = words(rng, 400)
        start = rng.randrange(0, 200)
        inner = long[start : start + 200]
        inner[rng.randrange(20, 180) :][:5] = words(rng, 5)  # a few words edited: containment ~0.9
        rows += [row(f"long{i}", long), row(f"excerpt{i}", inner)]
        pairs.append((f"long{i}", f"excerpt{i}"))
    for i in range(10):
        shared = words(rng, 200)
        rows += [row(f"half{i}a", shared + words(rng, 200)), row(f"half{i}b", words(rng, 190) + shared)]
    folder = tmp_path_factory.mktemp("excerpts")
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-00000.parquet")
    return folder, {r["id"]: r["text"] for r in rows}, pairs


def test_default_dedup_drops_every_excerpt_and_keeps_half_overlaps(excerpts_input, tmp_path):
    folder, texts, pairs = excerpts_input
    for long, inner in pairs:
        assert containment(shingles(texts[long]), shingles(texts[inner])) >= 0.85
    out = main(DedupArguments(input=str(folder), output=str(tmp_path)), ExecutorArguments(tasks=1))
    dup = {r["id"]: r["duplicate_of"] for r in pq.read_table(out / "duplicates.parquet").to_pylist()}
    assert dup == {inner: long for long, inner in pairs}  # all 30 excerpts, and no half-overlapping one
    assert json.loads((out / "stats.json").read_text())["candidates"] == "sampled"


def test_sampled_candidates_equal_a_plain_count_whatever_the_block(excerpts_input, tmp_path, monkeypatch):
    """The block-wise count of shared sampled shingles gives the pairs a plain dictionary count gives
    (each article paired with the STAR longest of a shingle's articles), for any block size."""
    from collections import Counter, defaultdict

    from continuousbench.news import dedup

    folder, _, _ = excerpts_input
    rng = random.Random(2)
    boilerplate = words(rng, 40)  # in 40 articles: its sampled shingles index more than STAR articles
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.Table.from_pylist([row(f"boiler{i}", boilerplate + words(rng, 60 + 5 * i)) for i in range(40)]),
        tmp_path / "in" / "b.parquet",
    )
    paths = [str(folder / "part-00000.parquet"), str(tmp_path / "in" / "b.parquet")]
    list(dedup.Signatures(paths, str(tmp_path / "sig")).run())
    table = read_rows(tmp_path / "sig")
    keep, samples = dedup._priority(table).tolist(), table.column("sampled").to_pylist()
    articles = defaultdict(list)  # sampled hash -> its articles, longest first
    for i in keep:
        for h in samples[i]:
            articles[h].append(i)
    assert max(len(a) for a in articles.values()) > dedup.STAR
    shared = Counter(
        (first, later)
        for group in articles.values()
        for p, later in enumerate(group)
        for first in group[: min(p, dedup.STAR)]
    )
    expected = {
        (min(a, b), max(a, b))
        for (a, b), n in shared.items()
        if n >= 0.5 * min(len(samples[a]), len(samples[b]))
    }
    assert len(expected) > 30  # the 30 excerpts, and boilerplate pairs
    for chunk in (1, 97, 1 << 20):
        monkeypatch.setattr(dedup, "PAIR_CHUNK", chunk)
        step = dedup.FindDuplicates(paths, str(tmp_path / "sig"), str(tmp_path / "dup.parquet"))
        assert step._sampled_pairs(keep, table.column("sampled")) == expected


def test_priority_sorts_as_python_does():
    """The Arrow sort (strings by UTF-8 bytes) is the order of Python's (-chars, crawl_date, id) tuples."""
    from continuousbench.news import dedup

    rng = random.Random(3)
    ids = [f"{rng.choice(['a', 'z', 'é', 'É', '😀', 'A'])}{i}" for i in range(200)]
    table = pa.table(
        {
            "id": ids,
            "chars": [rng.choice([5, 7]) for _ in ids],
            "crawl_date": [rng.choice(["", "2026-01-10", "2026-01-09"]) for _ in ids],
        }
    )
    sig = table.to_pydict()
    expected = sorted(range(len(ids)), key=lambda i: (-sig["chars"][i], sig["crawl_date"][i], sig["id"][i]))
    assert dedup._priority(table).tolist() == expected


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_batches_and_the_fork_change_no_output(pairs_input, tmp_path, monkeypatch):
    """Shards read and written a few rows at a time, and the find step in or out of a fork, give the same
    duplicates, counts and kept rows; two runs give the same bytes."""
    from continuousbench.news import dedup

    folder, _ = pairs_input

    def run(name):
        return main(
            DedupArguments(input=str(folder), output=str(tmp_path / name)), ExecutorArguments(tasks=1)
        )

    runs = [run("run0"), run("run1")]
    files = sorted(p.relative_to(runs[0]) for p in runs[0].rglob("*.parquet"))
    assert files and all((runs[0] / f).read_bytes() == (runs[1] / f).read_bytes() for f in files)
    monkeypatch.setattr(dedup, "BATCH", 3)
    small = run("small")
    assert (small / "duplicates.parquet").read_bytes() == (runs[0] / "duplicates.parquet").read_bytes()
    assert read_rows(small).equals(read_rows(runs[0]))
    assert pq.ParquetFile(small / "data" / "part-00001.parquet").metadata.num_row_groups > 1  # streamed
    assert json.loads((small / "stats.json").read_text()) == json.loads((runs[0] / "stats.json").read_text())
    steps = {}
    for own in (False, True):
        sig = tmp_path / f"sig-{own}"
        list(dedup.Signatures([str(p) for p in sorted(folder.iterdir())], str(sig)).run())
        steps[own] = dedup.FindDuplicates(
            [str(p) for p in sorted(folder.iterdir())],
            str(sig),
            str(tmp_path / f"dup-{own}.parquet"),
            own_process=own,
        )
        list(steps[own].run())
    assert (tmp_path / "dup-True.parquet").read_bytes() == (runs[0] / "duplicates.parquet").read_bytes()
    assert (tmp_path / "dup-False.parquet").read_bytes() == (runs[0] / "duplicates.parquet").read_bytes()
    counts = [{k: v.total for k, v in steps[own].stats.stats.items()} for own in (False, True)]
    assert counts[0] == counts[1] and counts[0]["dropped_near_duplicate"] == 2  # the fork's counts come back
