"""Extraction quality of ``news extract`` beside plain ``trafilatura.extract``, on pages with reference text.

    python benchmarks/news_extract.py                          # the pages of tests/news/pages
    python benchmarks/news_extract.py --pages <checkout of scrapinghub/article-extraction-benchmark>

A pages folder holds ``ground-truth.json`` (``{id: {"url", "articleBody"}}``) and ``<id>.html.gz``
(directly or under ``html/``), the layout of the Scrapinghub article-extraction benchmark (MIT), which
the test pages come from. Our side runs the real command: the pages, as fetched (UTF-8), go into a gzipped
WARC file (warcio), and ``news extract`` reads it with every language py3langid knows kept and no length
floor, so only extraction decides. A page it drops counts as an empty prediction (coverage says how
many were kept). Scores are those of that benchmark: precision, recall and F1 of the multiset of 4-word
shingles (``\\w+`` tokens, lower-cased) of the prediction against the reference, averaged over pages.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "news"))  # warcio's writer, as the tests use it
TOKEN = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> Counter:
    tokens = TOKEN.findall(text.lower())
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def score(reference: str, prediction: str) -> tuple[float, float, float]:
    """Precision, recall and F1 of the prediction's shingles (empty against empty counts as perfect)."""
    ref, pred = shingles(reference), shingles(prediction)
    common = sum((ref & pred).values())
    precision = common / sum(pred.values()) if pred else float(not ref)
    recall = common / sum(ref.values()) if ref else float(not pred)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def load(folder: Path) -> list[dict]:
    truth = json.loads((folder / "ground-truth.json").read_text())
    html = folder / "html" if (folder / "html").is_dir() else folder
    return [{"id": k, "url": v["url"], "html": gzip.decompress((html / f"{k}.html.gz").read_bytes()),
             "reference": v["articleBody"]} for k, v in sorted(truth.items())]  # fmt: skip


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
        records = [{"url": p["url"], "body": p["html"], "content_type": "text/html; charset=utf-8",
                    "crawl_date": "2020-06-01T00:00:00Z"} for p in pages]  # fmt: skip
        warcs = [f"{tmp}/pages-{w}.warc.gz" for w in range(workers)]
        for w, path in enumerate(warcs):
            write_warc(path, records[w::workers])
        args = ExtractArguments(output=f"{tmp}/out", warc=warcs, languages=languages, min_chars=1)
        out = main(args, ExecutorArguments(tasks=workers, workers=workers))
        return {r["url"]: r["text"] for r in read_rows(out, ["url", "text"]).to_pylist()}


def plain(pages: list[dict]) -> dict[str, str]:
    """``trafilatura.extract`` with its defaults on the page decoded as UTF-8."""
    import trafilatura

    return {p["url"]: trafilatura.extract(p["html"].decode("utf-8", "replace"), url=p["url"]) or ""
            for p in pages}  # fmt: skip


def report(name: str, pages: list[dict], found: dict[str, str], seconds: float) -> dict:
    scores = [score(p["reference"], found.get(p["url"], "")) for p in pages]
    mean = [sum(s[i] for s in scores) / len(scores) for i in range(3)]
    kept = sum(bool(found.get(p["url"])) for p in pages)
    row = {"system": name, "pages": len(pages), "kept": kept, "precision": round(mean[0], 3),
           "recall": round(mean[1], 3), "f1": round(mean[2], 3), "seconds": round(seconds, 1)}  # fmt: skip
    print(f"{name:<24} pages {len(pages):>4}  kept {kept:>4}  P {mean[0]:.3f}  R {mean[1]:.3f}  "
          f"F1 {mean[2]:.3f}  ({seconds:.1f} s)")  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, default=ROOT / "tests" / "news" / "pages")
    parser.add_argument("--workers", type=int, default=1, help="tasks and workers of news extract")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    pages = load(args.pages)
    rows = []
    systems = {"news extract": lambda: ours(pages, args.workers), "trafilatura.extract": lambda: plain(pages)}
    for name, run in systems.items():
        start = time.perf_counter()
        found = run()
        rows.append(report(name, pages, found, time.perf_counter() - start))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
