"""NEWS throughput on this machine: WARC reading, extraction, dedup (ours beside datatrove's MinHash), and
the endpoint backend at 1 and 32 requests in flight.

    python benchmarks/news.py --articles 100000 --pages 5000 --workers 2 --out /tmp/news-bench

Code before a change runs beside it as ``ours-sampled-before`` with ``--before DIR``, a tree of the older
package (``git archive <commit> | tar -x -C DIR``): the same child, with ``PYTHONPATH=DIR``.

Generated data (``tests/news/newspages.py``): ``--articles`` reports of the fixture's events with filler
prose (~300 words), 10% of them near duplicates of the article before (the last 15% of its long paragraph
rewritten) and 3% exact copies, as parquet shards; the first ``--pages`` of them also as HTML pages in
gzipped WARC files. ``--skip`` leaves measurements out (``--skip extract ours-ensemble``: a dedup-only run).

Each dedup variant runs in a fresh process, one after the other, so its memory is its own:
``peak_job_pss_mb`` is the largest sum of PSS over the process and all its workers (whole-job memory,
pages shared between processes split between them), ``peak_job_rss_mb`` the same in RSS (shared pages,
such as the libraries every worker loads, counted once per process), ``peak_process_rss_mb`` the largest
single process; sampled every 50 ms (PSS every 250 ms), as is ``cpu_seconds``, the CPU time of the
process and all its workers (user + system, each process's last sample). ``kept_sha256`` digests the
sorted ids a variant kept: equal digests, the same kept set. Variants are timed in the same run, in reverse
order in odd rounds of ``--repeat``. The machine is shared: compare figures of one run, not across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "news"))  # the page generator of the tests


def generate(folder: Path, n: int, pages: int, seed: int = 0) -> tuple[list[Path], Path]:
    """Parquet shards of ``n`` articles and WARC files of the first ``pages`` as HTML."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from newspages import page, random_article, write_warc

    rng = random.Random(seed)
    rows, records = [], []
    for i in range(n):
        if i % 33 == 32:  # an exact copy of an earlier article, at another url
            a = dict(rows[-2], id=f"a{i:07d}", url=rows[-2]["url"] + "?copy")
        else:
            art = random_article(i, rng)
            if i % 10 == 9:  # a near duplicate: the article before, the end of its long paragraph rewritten
                *head, body = rows[-1]["paragraphs"]
                words, fresh = body.split(), random_article(i, rng)["paragraphs"][-1].split()
                cut = int(len(words) * 0.85)
                art["paragraphs"] = [*head, " ".join(words[:cut] + fresh[: len(words) - cut])]
            text = "\n".join([art["title"], *art["paragraphs"]])
            a = {
                "id": f"a{i:07d}",
                "url": art["url"],
                "hostname": art["url"].split("/")[2],
                "title": art["title"],
                "date": art["date"],
                "crawl_date": f"{art['date']}T12:00:00Z",
                "language": "en",
                "text": text,
                "paragraphs": art["paragraphs"],
            }
        rows.append(a)
        if i < pages:
            records.append(
                {
                    "url": a["url"],
                    "crawl_date": a["crawl_date"],
                    "content_type": "text/html",
                    "body": page(i, a["title"], a["date"], a["paragraphs"]).encode(),
                }
            )
    shards = folder / "articles"
    shards.mkdir(parents=True, exist_ok=True)
    columns = ("id", "url", "hostname", "title", "date", "crawl_date", "language", "text")
    for s in range(10):
        part = rows[s::10]
        pq.write_table(pa.table({c: [r[c] for r in part] for c in columns}), shards / f"part-{s:05d}.parquet")
    warcs = []
    for w in range(4):
        path = folder / f"pages-{w}.warc.gz"
        write_warc(path, records[w::4])
        warcs.append(path)
    return warcs, shards


def read_warcs(paths: list[Path], reader: str) -> int:
    """Response records read, with their payloads, by warcio or by fastwarc (over our gzip reader)."""
    n = 0
    for path in paths:
        if reader == "warcio":
            from warcio.archiveiterator import ArchiveIterator

            with open(path, "rb") as f:
                for record in ArchiveIterator(f):
                    if record.rec_type == "response":
                        record.content_stream().read()
                        n += 1
        else:
            from fastwarc.warc import ArchiveIterator, WarcRecordType

            from continuousbench.news.warc import GzipMembers

            with open(path, "rb") as raw:
                for record in ArchiveIterator(
                    GzipMembers(raw), parse_http=True, fsspec_args=False, stream_detect=False
                ):
                    if record.record_type == WarcRecordType.response:
                        record.reader.read()
                        n += 1
    return n


def extraction_rate(warc: Path, limit: int = 500) -> float:
    """Pages per second of trafilatura + py3langid alone, in this process (no executor, no sandbox)."""
    import py3langid
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from continuousbench.news.article_steps import extract_page
    from continuousbench.news.warc import GzipMembers

    with open(warc, "rb") as raw:
        pages = [
            (r.headers.get("WARC-Target-URI"), r.reader.read().decode())
            for r in ArchiveIterator(
                GzipMembers(raw), record_types=WarcRecordType.response, fsspec_args=False, stream_detect=False
            )
        ][:limit]
    py3langid.classify("warm up the language model")
    start = time.perf_counter()
    for url, html in pages:
        found = extract_page(html, url, None)
        py3langid.classify(found["text"][:2000])
    return round(len(pages) / (time.perf_counter() - start), 1)


def excerpts(folder: Path, n: int = 30, seed: int = 1) -> Path:
    """``n`` excerpts of ~200 words (containment >= 0.85) inside ~400-word articles, and ``n // 3`` pairs
    sharing half their text: a variant should keep 2 * (n // 3) + n articles."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    # letters only: datatrove's MinHash normalisation removes digits ("word12" would be "word")
    vocab = ["".join(chr(97 + (i // 26**k) % 26) for k in range(3)) for i in range(5000)]
    words = lambda k: [rng.choice(vocab) for _ in range(k)]  # noqa: E731
    texts = {}
    for i in range(n):
        long = words(400)
        start = rng.randrange(0, 200)
        inner = long[start : start + 200]
        inner[rng.randrange(20, 180) :][:5] = words(5)
        texts[f"long{i}"], texts[f"excerpt{i}"] = long, inner
    for i in range(n // 3):
        shared = words(200)
        texts[f"half{i}a"], texts[f"half{i}b"] = shared + words(200), words(190) + shared
    rows = [
        {
            "id": k,
            "url": f"https://x.com/{k}",
            "hostname": "x.com",
            "title": k,
            "date": "2026-01-10",
            "crawl_date": "2026-01-10T00:00:00Z",
            "language": "en",
            "text": " ".join(v),
        }
        for k, v in texts.items()
    ]
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-00000.parquet")
    return folder


def tree_memory(pid: int, pss: bool = False) -> tuple[int, int]:
    """Bytes resident in ``pid`` and all its descendants now, and in the largest of them: RSS (pages
    shared by the workers, such as the libraries they all load, counted once per process: an upper
    bound), or with ``pss`` the proportional set size (shared pages split between the processes sharing
    them; slower to read)."""
    import psutil

    sizes = []
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):  # a worker that has just ended
            sizes.append(proc.memory_full_info().pss if pss else proc.memory_info().rss)
    return sum(sizes), max(sizes, default=0)


def tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """Record in ``seen`` the CPU seconds (user + system) of ``pid`` and each descendant so far."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = proc.cpu_times()
            seen[proc.pid] = max(seen.get(proc.pid, 0.0), times.user + times.system)


def child(variant: str, source: Path, work: Path, workers: int) -> dict:
    """One measured run in this (fresh) process; returns seconds, rows kept and their ids' digest."""
    import hashlib

    from continuousbench.news.executors import ExecutorArguments
    from continuousbench.news.shards import read_rows

    ex = ExecutorArguments(tasks=2 * workers, workers=workers)
    start = time.perf_counter()
    if variant.startswith("extract"):
        from continuousbench.news.extract import ExtractArguments, main

        timeout = 10.0 if variant == "extract-sandbox" else 0.0
        out = main(
            ExtractArguments(
                output=str(work), warc=[str(p) for p in sorted(source.glob("*.warc.gz"))], timeout=timeout
            ),
            ex,
        )
        kept = len(read_rows(out, ["id"]))
    elif variant.startswith("ours"):
        from continuousbench.news.dedup import DedupArguments, main

        out = main(DedupArguments(input=str(source), output=str(work), candidates=variant.split("-")[1]), ex)
        kept = read_rows(out, ["id"]).column("id").to_pylist()
    else:
        kept = datatrove_minhash(source, work, workers)
    seconds = round(time.perf_counter() - start, 2)
    if isinstance(kept, int):
        return {"seconds": seconds, "kept": kept}
    digest = hashlib.sha256("\n".join(sorted(kept)).encode()).hexdigest()[:16]
    return {"seconds": seconds, "kept": len(kept), "kept_sha256": digest}


def datatrove_minhash(source: Path, work: Path, workers: int) -> int:
    """datatrove's own four-stage MinHash pipeline, 128 hashes (16 buckets x 8), word 5-grams."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    from continuousbench.news.shards import read_rows

    class Words(WordTokenizer):
        """``\\w+`` words, as our shingles: datatrove's English tokenizer needs spaCy (not in [news])."""

        def word_tokenize(self, text: str) -> list[str]:
            return re.findall(r"\w+", text)

        def sent_tokenize(self, text: str) -> list[str]:
            return [text]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return [m.span() for m in re.finditer(r"\w+", text)]

    # sha1: datatrove's default xxhash function hands str to xxhash, whose current release wants bytes
    config = MinhashConfig(
        n_grams=5, num_buckets=16, hashes_per_bucket=8, hash_config=HashConfig(hash_fc="sha1")
    )
    tasks = 2 * workers
    signature = MinhashDedupSignature(f"{work}/sigs", config=config, language=Words())
    drop = MinhashDedupFilter(f"{work}/remove")
    stages = [
        ([ParquetReader(str(source)), signature], tasks),
        ([MinhashDedupBuckets(f"{work}/sigs", f"{work}/buckets", config=config)], config.num_buckets),
        ([MinhashDedupCluster(f"{work}/buckets", f"{work}/remove", config=config)], 1),
        ([ParquetReader(str(source)), drop, ParquetWriter(f"{work}/out")], tasks),
    ]
    for i, (steps, n) in enumerate(stages):
        LocalPipelineExecutor(steps, tasks=n, workers=min(workers, n), logging_dir=f"{work}/logs/{i}").run()
    return read_rows(f"{work}/out", ["id"]).column("id").to_pylist()


def measure(
    variant: str, source: Path, work: Path, workers: int, every: float = 0.05, before: Path | None = None
) -> dict:
    """Run one variant in a fresh process, sampling the memory of it and its workers every ``every``
    seconds (PSS every ``5 * every``). (``ru_maxrss`` would not do: it is one process's, and in these
    runs a fresh child reported the figure of the variant run before it.) A ``-before`` variant runs
    the package in ``before``."""
    import os
    import tempfile

    env = os.environ | ({"PYTHONPATH": str(before)} if variant.endswith("-before") else {})
    cmd = [
        sys.executable,
        __file__,
        "--child",
        variant.removesuffix("-before"),
        "--source",
        str(source),
        "--work",
        str(work),
        "--workers",
        str(workers),
    ]
    peak, largest, peak_pss, samples, cpu = 0, 0, 0, 0, {}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:  # no pipe to fill up
        with subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env) as proc:
            while proc.poll() is None:
                tree_cpu(proc.pid, cpu)
                total, one = tree_memory(proc.pid)
                peak, largest = max(peak, total), max(largest, one)
                if samples % 5 == 0:  # PSS costs ~7 ms a process to read
                    peak_pss = max(peak_pss, tree_memory(proc.pid, pss=True)[0])
                samples += 1
                time.sleep(every)
        out.seek(0), err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{variant} failed:\n{err.read()[-3000:]}")
        found = json.loads(out.read().strip().splitlines()[-1])
    mb = lambda n: round(n / 2**20, 1)  # noqa: E731
    return found | {
        "peak_job_pss_mb": mb(peak_pss),
        "peak_job_rss_mb": mb(peak),
        "peak_process_rss_mb": mb(largest),
        "cpu_seconds": round(sum(cpu.values()), 1),
    }


def endpoint_rate(in_flight: int, requests: int, latency: float = 0.05) -> float:
    """Requests per second of the endpoint backend against a local server answering after ``latency``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test server
    from fake_endpoint import FakeOpenAIServer

    from continuousbench.llm import make_generator

    with FakeOpenAIServer(reply=lambda body: "ok", latency=latency) as server:
        model = make_generator(f"endpoint:{server.url}#fake", max_in_flight=in_flight)
        start = time.perf_counter()
        model.generate([f"question {i}" for i in range(requests)])
        return requests / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=5_000, help="articles also written as WARC pages")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip", nargs="*", default=[], help="extract, ours-sampled, ours-jaccard, ...")
    parser.add_argument("--out", type=Path, default=Path("/tmp/news-bench"))
    parser.add_argument(
        "--before",
        type=Path,
        help="a tree of the package before a change: adds ours-sampled-before, run with PYTHONPATH=BEFORE",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.source, args.work, args.workers)))
        return
    import shutil

    shutil.rmtree(args.out, ignore_errors=True)
    start = time.perf_counter()
    warcs, shards = generate(args.out / "data", args.articles, args.pages)
    results: dict = {
        "articles": args.articles,
        "pages": args.pages,
        "workers": args.workers,
        "generate_seconds": round(time.perf_counter() - start, 1),
    }
    read_warcs(warcs[:1], "warcio"), read_warcs(warcs[:1], "fastwarc")  # imports out of the timings
    if "extract" not in args.skip:
        results["extract_core_pages_per_s"] = extraction_rate(warcs[0])
    for r in range(args.repeat):
        for reader in () if "extract" in args.skip else ("warcio", "fastwarc"):
            start = time.perf_counter()
            n = read_warcs(warcs, reader)
            results.setdefault(f"read_{reader}_records_per_s", []).append(
                round(n / (time.perf_counter() - start))
            )
        for variant in () if "extract" in args.skip else ("extract-sandbox", "extract-inline"):
            found = measure(variant, args.out / "data", args.out / f"{variant}-{r}", args.workers)
            found["articles_per_s"] = round(args.pages / found["seconds"], 1)
            results.setdefault(variant, []).append(found)
        variants = ("ours-sampled", "ours-ensemble", "ours-jaccard", "datatrove-minhash")
        variants = ("ours-sampled-before", *variants) if args.before else variants
        for variant in (v for v in variants[:: 1 - 2 * (r % 2)] if v not in args.skip):  # odd rounds reversed
            found = measure(variant, shards, args.out / f"{variant}-{r}", args.workers, before=args.before)
            found["articles_per_s"] = round(args.articles / found["seconds"], 1)
            results.setdefault(variant, []).append(found)
    source = excerpts(args.out / "excerpts")
    for variant in ("ours-sampled", "ours-ensemble", "ours-jaccard", "datatrove-minhash"):
        kept = measure(variant, source, args.out / f"excerpts-{variant}", 1)["kept"]
        results[f"excerpts_{variant}"] = {"kept": kept, "expected": 50}  # 30 long + 20 half-overlapping
    for in_flight, requests in ((1, 40), (32, 640)):
        results[f"endpoint_{in_flight}_in_flight_requests_per_s"] = round(
            endpoint_rate(in_flight, requests), 1
        )
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
