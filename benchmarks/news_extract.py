"""Extraction quality of ``news extract`` beside plain ``trafilatura.extract``, on pages with reference text.

    python benchmarks/news_extract.py                          # the pages of tests/news/pages
    python benchmarks/news_extract.py --pages <checkout of scrapinghub/article-extraction-benchmark>
    python benchmarks/news_extract.py --pages <checkout> --before <older package> --rounds 3  # A/B

A pages folder holds ``ground-truth.json`` (``{id: {"url", "articleBody"}}``) and ``<id>.html.gz``
(directly or under ``html/``), the layout of the Scrapinghub article-extraction benchmark (MIT), which
the test pages come from. Our side runs the real command: the pages, as fetched (UTF-8), go into a gzipped
WARC file (warcio), and ``news extract`` reads it with every language py3langid knows kept and no length
floor, so only extraction decides. A page it drops counts as an empty prediction (coverage says how
many were kept). ``--before DIR`` also runs the ``continuousbench`` package found in DIR (``git archive
<commit> | tar -x -C DIR``), each variant in a fresh process, alternating (odd rounds reversed); times
are medians, CPU time that of the process and its children (the extraction sandbox).

Scores are the benchmark's own (its ``evaluate.py``): per page, the true and false positives and false
negatives of the multiset of 4-word shingles (case-sensitive ``\\w+`` tokens); precision and recall
averaged over pages (an empty prediction has no precision), F1 their harmonic mean, which is the
figure the benchmark publishes. "page F1" is the mean of the pages' own F1 (the figure this script
gave before, then on lower-cased tokens). Rows are given for all pages and for the English ones
(py3langid on the reference, as the ``--languages en`` filter decides; the benchmark has no language
field).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "news"))  # warcio's writer, as the tests use it
TOKEN = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> Counter:
    tokens = TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def counts(reference: str, prediction: str) -> tuple[float, float, float]:
    """True positives, false positives and false negatives of one page, as fractions of their sum (so that
    a long page weighs as much as a short one, as in the benchmark)."""
    ref, pred = shingles(reference), shingles(prediction)
    tp = sum((ref & pred).values())
    fp, fn = sum(pred.values()) - tp, sum(ref.values()) - tp
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def page_scores(tp: float, fp: float, fn: float) -> tuple[float | None, float | None, float]:
    """Precision, recall and F1 of a page; None where the benchmark leaves the page out of that mean (an
    empty prediction has no precision, an empty reference no recall; empty against empty has F1 1)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None and recall is None:
        return None, None, 1.0
    p, r = precision or 0.0, recall or 0.0
    return precision, recall, 2 * p * r / (p + r) if p + r else 0.0


def score(references: list[str], predictions: list[str]) -> dict:
    """The benchmark's precision, recall and F1 of a set of pages, and the mean of the pages' F1."""
    pages = [page_scores(*counts(ref, pred)) for ref, pred in zip(references, predictions, strict=True)]
    precision = statistics.mean(p for p, _, _ in pages if p is not None)
    recall = statistics.mean(r for _, r, _ in pages if r is not None)
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall),
        "page_f1": statistics.mean(f for _, _, f in pages),
    }


def ours(pages: list[dict], workers: int) -> dict[str, str]:
    """``news extract`` on a WARC of the pages: url -> extracted text."""
    import py3langid.langid
    from newspages import write_warc

    from continuousbench.news.executors import ExecutorArguments
    from continuousbench.news.extract import ExtractArguments, main
    from continuousbench.news.shards import read_rows

    py3langid.langid.classify("")  # loads the model, which names its languages
    languages = list(py3langid.langid.IDENTIFIER.nb_classes)
    with tempfile.TemporaryDirectory() as tmp:
        records = [
            {
                "url": p["url"],
                "body": p["html"],
                "content_type": "text/html; charset=utf-8",
                "crawl_date": "2020-06-01T00:00:00Z",
            }
            for p in pages
        ]
        warcs = [f"{tmp}/pages-{w}.warc.gz" for w in range(workers)]
        for w, path in enumerate(warcs):
            write_warc(path, records[w::workers])
        args = ExtractArguments(output=f"{tmp}/out", warc=warcs, languages=languages, min_chars=1)
        out = main(args, ExecutorArguments(tasks=workers, workers=workers))
        return {r["url"]: r["text"] for r in read_rows(out, ["url", "text"]).to_pylist()}


def plain(pages: list[dict]) -> dict[str, str]:
    """``trafilatura.extract`` with its defaults on the page decoded as UTF-8."""
    import trafilatura

    return {
        p["url"]: trafilatura.extract(p["html"].decode("utf-8", "replace"), url=p["url"]) or "" for p in pages
    }


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the extraction sandboxes, datatrove's pool)."""
    return sum(os.times()[:4])


def timed(run) -> tuple[dict[str, str], float, float]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    found = run()
    return found, time.perf_counter() - wall, cpu_seconds() - cpu


def fresh(code: Path, args: argparse.Namespace) -> tuple[dict[str, str], float, float]:
    """``news extract`` of the package in ``code``, in a fresh process (this script with ``--emit``)."""
    with tempfile.TemporaryDirectory() as tmp:
        emitted = Path(tmp) / "found.json"
        command = [
            sys.executable,
            __file__,
            "--pages",
            str(args.pages),
            "--workers",
            str(args.workers),
            "--emit",
            str(emitted),
        ]
        env = os.environ | {"PYTHONPATH": str(code)}
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"news extract of {code} failed:\n{done.stderr[-3000:]}")
        out = json.loads(emitted.read_text())
    return out["found"], out["wall"], out["cpu"]


def report(name: str, pages: list[dict], found: dict[str, str], wall: float, cpu: float) -> list[dict]:
    """One row per page set: all pages, then the English ones when some are not."""
    import py3langid

    from continuousbench.news.article_filter import LANGUAGE_CHARS

    sets = {"all": pages}
    english = [p for p in pages if py3langid.classify(p["reference"][:LANGUAGE_CHARS])[0] == "en"]
    if len(english) < len(pages):
        sets["English"] = english
    rows = []
    for subset, chosen in sets.items():
        scores = score([p["reference"] for p in chosen], [found.get(p["url"], "") for p in chosen])
        kept = sum(bool(found.get(p["url"])) for p in chosen)
        rows.append(
            {
                "system": name,
                "pages": subset,
                "count": len(chosen),
                "kept": kept,
                **{k: round(v, 4) for k, v in scores.items()},
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
            }
        )
        print(
            f"{name:<24} {subset:<7} {len(chosen):>4}  kept {kept:>4}  P {scores['precision']:.4f}  "
            f"R {scores['recall']:.4f}  F1 {scores['f1']:.4f}  page F1 {scores['page_f1']:.4f}  "
            f"({wall:.1f} s, CPU {cpu:.1f} s)"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, default=ROOT / "tests" / "news" / "pages")
    parser.add_argument("--workers", type=int, default=1, help="tasks and workers of news extract")
    parser.add_argument("--before", type=Path, help="also run the continuousbench package in this folder")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each news extract variant (medians)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--emit", type=Path, help=argparse.SUPPRESS)  # a fresh process's found texts
    args = parser.parse_args()
    from realpages import real_pages

    pages = real_pages(args.pages.resolve())
    if args.emit:
        found, wall, cpu = timed(lambda: ours(pages, args.workers))
        args.emit.write_text(json.dumps({"found": found, "wall": wall, "cpu": cpu}))
        return
    variants = {"news extract": ROOT}
    if args.before:
        variants["news extract (before)"] = args.before.resolve()
    runs: dict[str, list] = {name: [] for name in variants}
    for r in range(args.rounds):
        for name in list(variants)[:: -1 if r % 2 else 1]:
            runs[name].append(fresh(variants[name], args))
    rows = []
    for name, done in runs.items():
        walls, cpus = [w for _, w, _ in done], [c for _, _, c in done]
        rows += report(name, pages, done[-1][0], statistics.median(walls), statistics.median(cpus))
    rows += report("trafilatura.extract", pages, *timed(lambda: plain(pages)))
    print(f"load average {Path('/proc/loadavg').read_text().split()[:3]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
