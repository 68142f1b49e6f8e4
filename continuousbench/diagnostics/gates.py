"""Release gates: a quarter's release is published only when it is unsolvable without its corpus,
learnable from it, and fresh against every earlier release (paper: abstract, contribution 1).

    continuousbench gate --release geminon-small-2026q2 --previous geminon-small-2026q1 \\
        --models google/gemma-3-1b-pt --output gates.json

* **unsolvable**: each named model answers the test questions closed-book (the harness's greedy QA
  decoding and matching); the 95% Wilson upper bound of its accuracy must stay under ``--max_accuracy``.
  An upper bound, not the point estimate: 0 right of 20 questions proves little.
* **learnable**: every public question is supported by at least the release's minimum number of
  training documents, and every singleton by exactly one (the ``support_count`` the builder counted).
* **fresh**: no question text and no (entity name, answer) pair of an earlier release comes back, and
  the share of the corpus's distinct word 13-grams already in an earlier corpus stays under
  ``--max_overlap`` (13 words: long enough that shared template phrasing, not shared facts, is what
  two unrelated corpora have in common). The report lists the documents that overlap most.

A failed gate is one line naming the gate, its figure and its threshold.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError

log = logging.getLogger(__name__)

GATES = ("unsolvable", "learnable", "fresh")
MAX_ACCURACY = 0.05  # closed-book Wilson upper bound
MAX_OVERLAP = 0.05  # share of distinct 13-grams seen before; two unrelated tiny worlds share 0.22%
NGRAM = 13
GEMINON_MIN_SUPPORT = 20  # a public Geminon fact: tiny releases have >= 40 documents, small hundreds
WORST = 5  # documents listed as the worst overlaps


NO_MODEL = (
    "the unsolvable gate needs a closed-book model and the release records none (NEWS, or a Geminon build "
    "with --closed_book_models none): pass --models <id|folder>, or leave the gate out (release: "
    "--skip_gates unsolvable; gate: --gates learnable fresh)"
)


class GateFailure(UserError):
    """One or more gates failed; ``report`` is the whole gate report (written before raising)."""

    def __init__(self, message: str, report: dict[str, Any]):
        super().__init__(message)
        self.report = report


@dataclass
class Check:
    """One figure of a gate against its threshold; ``passed`` says which side it fell on."""

    what: str
    figure: float
    threshold: float
    passed: bool

    def __str__(self) -> str:
        figure = f"{self.figure:.4g}" if isinstance(self.figure, float) else self.figure
        return f"{self.what} {figure} (threshold {self.threshold:g})"


@dataclass
class Gate:
    name: str
    checks: list[Check] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def line(self) -> str:
        failed = "; ".join(str(c) for c in self.checks if not c.passed)
        return f"gate {self.name} failed: {failed}"

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [asdict(c) for c in self.checks], **self.details}


# -- unsolvable ---------------------------------------------------------------------------------------


def closed_book_questions(release: str | Path, **kw: Any):
    """The release's test questions, public and singleton (NEWS has public only), as one dataset."""
    from datasets import concatenate_datasets

    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    track = read_manifest(resolve_release(release, **kw))["track"]
    parts = [load_release(release, part, "test", verify=False, **kw) for part in configs(track)
             if part.startswith("qa_")]  # fmt: skip
    common = [c for c in parts[0].column_names if all(c in p.column_names for p in parts)]
    return concatenate_datasets([p.select_columns(common) for p in parts])


def closed_book(model: str, qa, track: str, *, batch_size: int, max_new_tokens: int) -> dict[str, Any]:
    """A model's closed-book answers, asked and scored as the build screened them
    (:mod:`continuousbench.geminon.closed_book`: the few-shot prompt, greedy, correct when exact match or
    contains), with their count correct and its Wilson interval."""
    from continuousbench.geminon.closed_book import is_correct, model_path
    from continuousbench.llm.local import greedy_answers
    from continuousbench.loader import load_model
    from continuousbench.scoring.prompts import qa_prompt
    from continuousbench.stats import wilson_interval

    net, tokenizer, _ = load_model(model_path(model), "--models")
    prompts = [qa_prompt(q, track) for q in qa["question"]]
    answers = greedy_answers(
        net, tokenizer, prompts, batch_size=batch_size, max_new_tokens=max_new_tokens, reuse_prefix=True
    )
    aliases = qa["aliases"] if "aliases" in qa.column_names else [[]] * len(qa)
    right = sum(is_correct(p, [a, *al]) for p, a, al in zip(answers, qa["answer"], aliases, strict=True))
    low, high = wilson_interval(right, len(qa))
    return {"correct": right, "questions": len(qa), "accuracy": right / len(qa), "wilson_95": [low, high]}


def screened_models(release: str | Path, **kw: Any) -> list[str]:
    """The models the build screened the questions with (its manifest), when they can be loaded by name."""
    from continuousbench.geminon.closed_book import loadable
    from continuousbench.release.load import read_manifest, resolve_release

    recorded = read_manifest(resolve_release(release, **kw))["generator"].get("closed_book") or {}
    models = recorded.get("models") or []
    unnamed = [m for m in models if not loadable(m)]
    if unnamed:
        raise UserError(
            f"the release was screened with local model folder {unnamed[0]}; pass it again with "
            "--models <folder>"
        )
    return models


def unsolvable_gate(
    release: str | Path,
    models: Sequence[str],
    *,
    max_accuracy: float = MAX_ACCURACY,
    batch_size: int = 32,
    max_new_tokens: int = 32,
    **kw: Any,
) -> Gate:
    """Closed-book accuracy of every model in ``models`` (none given: those that screened the release at
    build time, whose re-check it then is): its Wilson upper bound under ``max_accuracy``."""
    from continuousbench.release.load import read_manifest, resolve_release

    models = list(models) or screened_models(release, **kw)
    if not models:
        raise UserError(NO_MODEL)
    track = read_manifest(resolve_release(release, **kw))["track"]
    qa = closed_book_questions(release, **kw)
    gate = Gate("unsolvable", details={"models": {}})
    for model in models:
        result = closed_book(model, qa, track, batch_size=batch_size, max_new_tokens=max_new_tokens)
        gate.details["models"][model] = result
        upper = result["wilson_95"][1]
        what = (
            f"closed-book accuracy of {model}: {result['correct']} of {result['questions']} correct, "
            "95% Wilson upper bound"
        )
        gate.checks.append(Check(what, upper, max_accuracy, upper < max_accuracy))
    return gate


# -- learnable ----------------------------------------------------------------------------------------


def release_min_support(manifest: dict[str, Any]) -> int:
    """The release's own minimum (its canonical evaluation's, for NEWS), else Geminon's."""
    return int((manifest.get("evaluation") or {}).get("min_support", GEMINON_MIN_SUPPORT))


def support_histogram(counts: Sequence[int]) -> dict[str, int]:
    """Questions per support bucket (the harness's bucket edges), for the release report."""
    from continuousbench.scoring.match import SUPPORT_BUCKETS

    edges = np.asarray(SUPPORT_BUCKETS)
    which = np.searchsorted(edges, np.asarray(counts, dtype=int), side="right") - 1
    return {f">={edges[i]}": int((which == i).sum()) for i in range(len(edges)) if (which == i).any()}


def learnable_gate(release: str | Path, *, min_support: int | None = None, **kw: Any) -> Gate:
    """Every public question at or above the minimum support (a release with a canonical evaluation,
    NEWS: some question of its split to score at that minimum); every singleton at exactly 1."""
    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    manifest = read_manifest(resolve_release(release, **kw))
    minimum = release_min_support(manifest) if min_support is None else min_support
    evaluation = manifest.get("evaluation")
    gate = Gate("learnable", details={"min_support": minimum, "histograms": {}})
    for part in (p for p in configs(manifest["track"]) if p.startswith("qa_")):
        counts = [c for split in load_release(release, part, verify=False, **kw).values()
                  for c in split["support_count"]]  # fmt: skip
        gate.details["histograms"][part] = support_histogram(counts)
        if part == "qa_public" and evaluation:
            # NEWS keeps questions under its minimum (stratified analyses) and scores only those at or
            # above it: the gate asks that there are such questions to score
            split = evaluation["split"]
            scored = load_release(release, part, split, verify=False, **kw)["support_count"]
            scored = sum(c >= minimum for c in scored)
            gate.details["scored_questions"] = scored
            what = f"{split} questions to score (support >= {minimum}) missing"
            gate.checks.append(Check(what, int(scored == 0), 0, scored > 0))
        elif part == "qa_public":
            low = sum(c < minimum for c in counts)
            gate.checks.append(Check(f"public questions with support under {minimum}", low, 0, low == 0))
        if part == "qa_public":
            gate.details["least_public_support"] = min(counts, default=0)
        else:
            off = sum(c != 1 for c in counts)
            gate.checks.append(Check("singleton questions with support other than 1", off, 0, off == 0))
    return gate


# -- fresh --------------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


class NgramHasher:
    """Word ``n``-grams of many texts as 64-bit hashes, the same for the same words in every corpus.

    Words get ids from one shared vocabulary; an n-gram's hash is a polynomial in those ids (numpy's
    uint64 arithmetic wraps, which is the modulus), built in ``n`` vectorised steps over all documents
    at once, so memory stays a few arrays of the corpus's length (no n-gram is materialised).
    """

    BASE = np.uint64(1_000_003)

    def __init__(self, n: int = NGRAM):
        self.n = n
        self.vocab: dict[str, int] = {}

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(hashes, document index of each hash), n-grams crossing documents left out."""
        from array import array

        ids, lengths = array("q"), array("q")
        for text in texts:
            words = [self.vocab.setdefault(w, len(self.vocab) + 1) for w in _WORD.findall(text.lower())]
            ids.extend(words)
            lengths.append(len(words))
        doc_of = np.repeat(np.arange(len(lengths)), np.frombuffer(lengths, np.int64))
        count = len(ids) - self.n + 1
        if count < 1:
            return np.zeros(0, np.uint64), np.zeros(0, np.int64)
        words = np.frombuffer(ids, np.int64).astype(np.uint64)
        hashes = np.zeros(count, np.uint64)
        with np.errstate(over="ignore"):
            for j in range(self.n):
                hashes = hashes * self.BASE + words[j : j + count]
        within = doc_of[:count] == doc_of[self.n - 1 :]
        return hashes[within], doc_of[:count][within]


def corpus_overlap(
    texts: Sequence[str], earlier: Sequence[Sequence[str]], n: int = NGRAM
) -> tuple[float, int, np.ndarray]:
    """(share of the distinct ``n``-grams of ``texts`` found in any ``earlier`` corpus, how many distinct
    n-grams ``texts`` has, each document's share of its own distinct n-grams found earlier)."""
    hasher = NgramHasher(n)
    before = [hasher(other)[0] for other in earlier]
    old = np.unique(np.concatenate(before)) if before else np.zeros(0, np.uint64)
    hashes, doc_of = hasher(texts)
    order = np.lexsort((hashes, doc_of))  # each n-gram once per document
    hashes, doc_of = hashes[order], doc_of[order]
    first = np.ones(len(hashes), bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (doc_of[1:] != doc_of[:-1])
    hashes, doc_of = hashes[first], doc_of[first]
    hit = np.isin(hashes, old)
    distinct, where = np.unique(hashes, return_index=True)
    overlap = float(hit[where].mean()) if len(distinct) else 0.0
    per_doc = np.bincount(doc_of, weights=hit, minlength=len(texts)) / np.maximum(
        np.bincount(doc_of, minlength=len(texts)), 1
    )
    return overlap, int(len(distinct)), per_doc


def _questions(release: str | Path, **kw: Any) -> list[dict[str, Any]]:
    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    track = read_manifest(resolve_release(release, **kw))["track"]
    rows = []
    for part in (p for p in configs(track) if p.startswith("qa_")):
        for split in load_release(release, part, verify=False, **kw).values():
            rows.extend(split.select_columns([c for c in ("question", "answer", "name") if c in
                                              split.column_names]).to_list())  # fmt: skip
    return rows


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def fresh_gate(
    release: str | Path,
    previous: Sequence[str | Path],
    *,
    max_overlap: float = MAX_OVERLAP,
    n: int = NGRAM,
    worst: int = WORST,
    verify: bool = True,
    **kw: Any,
) -> Gate:
    """No question or (name, answer) of ``previous`` again; corpus n-gram overlap under ``max_overlap``.

    ``verify=False``: the caller has verified every earlier release already."""
    from continuousbench.release.load import load_release, read_manifest, resolve_release, verify_release

    for earlier in previous if verify else ():  # a damaged earlier release makes the comparison meaningless
        verify_release(earlier, **kw)
    ids = [read_manifest(resolve_release(p, **kw))["id"] for p in previous]
    rows = _questions(release, **kw)
    seen_q, seen_pairs = set(), set()
    for earlier in previous:
        for row in _questions(earlier, **kw):
            seen_q.add(_norm(row["question"]))
            if row.get("name"):
                seen_pairs.add((_norm(row["name"]), _norm(row["answer"])))
    repeated_q = [r["question"] for r in rows if _norm(r["question"]) in seen_q]
    pairs = [(r["name"], r["answer"]) for r in rows if r.get("name")]
    repeated_pairs = [p for p in pairs if (_norm(p[0]), _norm(p[1])) in seen_pairs]

    corpus = load_release(release, "corpus", "train", verify=False, **kw)
    earlier = [load_release(p, "corpus", "train", verify=False, **kw)["text"] for p in previous]
    overlap, distinct, per_doc = corpus_overlap(corpus["text"], earlier, n)
    top = [int(i) for i in np.argsort(-per_doc, kind="stable")[:worst] if per_doc[i] > 0]
    gate = Gate(
        "fresh",
        [
            Check("questions repeated from earlier releases", len(repeated_q), 0, not repeated_q),
            Check("(name, answer) pairs repeated", len(repeated_pairs), 0, not repeated_pairs),
            Check(f"corpus {n}-gram overlap", overlap, max_overlap, overlap < max_overlap),
        ],
        {
            "previous": ids,
            "ngram": n,
            "distinct_ngrams": distinct,
            "repeated_questions": repeated_q[:worst],
            "repeated_pairs": [list(p) for p in repeated_pairs[:worst]],
            "worst_overlaps": [
                {"id": corpus[i]["id"], "share": float(per_doc[i]), "text": corpus[i]["text"][:160]}
                for i in top
            ],
        },
    )
    return gate


# -- all gates ----------------------------------------------------------------------------------------


def earlier_releases(release: str | Path, root: Path | None = None) -> list[str]:
    """The releases under the root that ``release`` must be fresh against when ``--previous`` is left
    out: strictly earlier quarters of its track, at any size (:mod:`continuousbench.release.registry`)."""
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.layout import default_root
    from continuousbench.release.load import read_manifest, resolve_release
    from continuousbench.release.registry import earlier_under

    own = ReleaseId.parse(read_manifest(resolve_release(release, root=root))["id"])
    root = Path(root).expanduser() if root is not None else default_root()
    return [str(r) for r in earlier_under(own, root)]


def check_previous(release: str, previous: Sequence[str | Path], **kw: Any) -> None:
    """A ``--previous`` release of another track, or of the same or a later quarter, is refused in one line:
    freshness is against what came before."""
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.load import read_manifest, resolve_release
    from continuousbench.release.registry import is_earlier

    own = ReleaseId.parse(release)
    for given in previous:
        other = ReleaseId.parse(read_manifest(resolve_release(given, **kw))["id"])
        if not is_earlier(other, own):
            raise UserError(
                f"--previous {given} is not an earlier release of {own}: name releases of the {own.track} "
                f"track from quarters before {own.period}"
            )


def run_gates(
    release: str | Path,
    *,
    previous: Sequence[str | Path],
    models: Sequence[str],
    gates: Sequence[str] = GATES,
    max_accuracy: float = MAX_ACCURACY,
    min_support: int | None = None,
    max_overlap: float = MAX_OVERLAP,
    batch_size: int = 32,
    max_new_tokens: int = 32,
    root: Path | None = None,
) -> dict[str, Any]:
    """The gate report: ``{"release", "previous", "passed", "failed": [lines], "gates": {name: ...}}``."""
    from continuousbench.release.load import read_manifest, resolve_release, verify_release

    kw = {"root": root}
    unknown = [g for g in gates if g not in GATES]
    if unknown:
        raise UserError(f"unknown gate {unknown[0]!r}: choose from {', '.join(GATES)}")
    manifest = verify_release(release, **kw)
    if "unsolvable" in gates and not (models or screened_models(release, **kw)):
        raise UserError(NO_MODEL)
    check_previous(manifest["id"], previous, **kw)
    for earlier in previous if "fresh" in gates else ():  # every input checked before the first gate runs
        verify_release(earlier, **kw)
    ran: list[Gate] = []
    for name in gates:
        started = time.perf_counter()
        if name == "unsolvable":
            ran.append(unsolvable_gate(release, models, max_accuracy=max_accuracy, batch_size=batch_size,
                                       max_new_tokens=max_new_tokens, **kw))  # fmt: skip
        elif name == "learnable":
            ran.append(learnable_gate(release, min_support=min_support, **kw))
        else:
            ran.append(fresh_gate(release, previous, max_overlap=max_overlap, verify=False, **kw))
        ran[-1].details["seconds"] = time.perf_counter() - started
        log.info("%s: gate %s %s", manifest["id"], name, "passed" if ran[-1].passed else "FAILED")
    return {
        "release": manifest["id"],
        "previous": [read_manifest(resolve_release(p, **kw))["id"] for p in previous],
        "passed": all(g.passed for g in ran),
        "failed": [g.line() for g in ran if not g.passed],
        "gates": {g.name: g.to_json() for g in ran},
    }


@dataclass
class GateArguments:
    release: str = field(default="", metadata={"help": "Release id (under --root) or release folder."})
    previous: list[str] = field(
        default_factory=list,
        metadata={"help": "Earlier releases to be fresh against (default: every other release under --root).",
                  "distinct": True},
    )  # fmt: skip
    models: list[str] = field(
        default_factory=list,
        metadata={"help": "Closed-book models (ids or folders) for the unsolvable gate."},
    )
    gates: list[str] = field(default_factory=lambda: list(GATES), metadata={"help": "Gates to run."})
    max_accuracy: float = field(default=MAX_ACCURACY, metadata=bounds("(0, 1]", "Closed-book upper bound."))
    min_support: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Least public support (default: the release's).")
    )
    max_overlap: float = field(default=MAX_OVERLAP, metadata=bounds("(0, 1]", "Corpus 13-gram overlap."))
    batch_size: int = field(default=32, metadata=bounds("[1, inf)", "Closed-book decoding batch size."))
    max_new_tokens: int = field(default=32, metadata=bounds("[1, inf)", "Closed-book answer length."))


@dataclass
class ReportArguments:
    """Where releases are looked up and where a report goes (``gate`` and ``contamination``)."""

    root: str | None = field(default=None, metadata={"help": "Release root (default $CONTINUOUSBENCH_HOME)."})
    output: str | None = field(default=None, metadata={"help": "Write the report as JSON here."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing --output file."})

    def run(self, work: Callable[[Path | None], dict[str, Any]]) -> dict[str, Any]:
        """``work(root)``, its report written to ``--output`` (checked before any work), even when it failed
        a gate (:class:`GateFailure` carries the report)."""
        from continuousbench.files import check_output_files, write_json

        output = check_output_files({"--output": self.output}, overwrite=self.overwrite).get("--output")
        try:
            report = work(Path(self.root).expanduser() if self.root else None)
        except GateFailure as failure:
            if output is not None:
                write_json(output, failure.report)
            raise
        if output is not None:
            write_json(output, report)
        return report


def options(args: Any, *left_out: str) -> dict[str, Any]:
    """A command's parsed options as keyword arguments of its library function."""
    return {k: v for k, v in vars(args).items() if k not in left_out}


def main(args: GateArguments, out: ReportArguments) -> dict[str, Any]:
    if not args.release:
        raise UserError("no release given: continuousbench gate --release <id or folder>")

    def work(root: Path | None) -> dict[str, Any]:
        previous = args.previous or earlier_releases(args.release, root)
        report = run_gates(args.release, **options(args, "release", "previous"), previous=previous, root=root)
        if not report["passed"]:
            raise GateFailure(f"{report['release']}: " + " | ".join(report["failed"]), report)
        return report

    return out.run(work)


def check_lines(gates: dict[str, Any]) -> list[str]:
    """Every check of a gate report, one line each: the figure, its threshold and the verdict."""
    return [
        f"{name}: {c['what']} = {c['figure']:.4g} (threshold {c['threshold']:g}): "
        + ("pass" if c["passed"] else "FAIL")
        for name, gate in gates.items()
        for c in gate["checks"]
    ]


def _report(report: dict[str, Any]) -> None:
    print(f"{report['release']}: every gate passed ({', '.join(report['gates'])})")
    print(f"gated against: {', '.join(report['previous']) or 'no earlier release'}")
    for line in check_lines(report["gates"]):
        print(f"  {line}")


make_parser, cli = command(
    (GateArguments, ReportArguments),
    "continuousbench gate",
    "Release gates: unsolvable without the corpus, learnable from it, fresh against earlier releases.",
    main,
    report=_report,
    resume_hint=None,
)
