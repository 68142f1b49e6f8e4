"""Singleton leakage: which sensitive facts a synthetic corpus repeats verbatim.

    continuousbench leakage --release geminon-small-2026q1 --corpus runs/syn-eps10 \\
        --reference runs/syn-inf --output leakage.json

A singleton fact is a sensitive entity's name together with one of its values (a ``qa_singleton``
answer or alias): the release states it in exactly one training document, so a generator can only
have it from that record. A fact counts as leaked by a corpus when some document contains both the
name and the value verbatim (case-insensitive, whole words: "77" is not found in "177"). The
candidate corpus (e.g. DP synthetic text) is compared with ``--reference`` (a corpus sampled from the
non-private generator) and with the real training split (the ceiling: how many facts are verbatim
there at all). A DP generator should leak about as little as chance allows; the non-private one
shows what the same pipeline leaks without protection.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.commands import command
from continuousbench.diagnostics.report_arguments import ReportFileArguments
from continuousbench.errors import UserError


@dataclass(frozen=True)
class Fact:
    id: str
    name: str
    attribute: str
    values: tuple[str, ...]


def singleton_facts(release: str) -> list[Fact]:
    """Every (name, value) of the release's ``qa_singleton`` questions (validation and test)."""
    from continuousbench.release.load import load_release

    facts = {}
    for split in load_release(release, "qa_singleton").values():
        for row in split:
            values = tuple(
                v for v in dict.fromkeys([row["answer"], *(row.get("aliases") or [])]) if v.strip()
            )
            facts[row["id"]] = Fact(row["id"], row["name"], row["attribute"], values)
    if not facts:
        raise UserError(f"release {release} has no qa_singleton questions: nothing to look for")
    return sorted(facts.values(), key=lambda f: f.id)


def _words(text: str) -> str:
    """A case-insensitive whole-word pattern for ``text`` (word characters may not touch it)."""
    return rf"(?<!\w){re.escape(text)}(?!\w)"


def leaked_facts(facts: list[Fact], texts: list[str]) -> dict[str, int]:
    """Fact id -> number of documents stating name and value together (facts never stated: absent)."""
    by_name: dict[str, list[Fact]] = defaultdict(list)
    for fact in facts:
        by_name[fact.name.lower()].append(fact)
    names = re.compile("|".join(_words(n) for n in sorted(by_name, key=len, reverse=True)), re.IGNORECASE)
    values = {f.id: re.compile("|".join(_words(v) for v in f.values), re.IGNORECASE) for f in facts}
    found: dict[str, int] = defaultdict(int)
    for text in texts:
        for name in {m.group(0).lower() for m in names.finditer(text)}:
            for fact in by_name[name]:
                if values[fact.id].search(text):
                    found[fact.id] += 1
    return dict(found)


def summary(facts: list[Fact], texts: list[str]) -> dict[str, Any]:
    hits = leaked_facts(facts, texts)
    by_attribute: dict[str, int] = defaultdict(int)
    for fact in facts:
        by_attribute[fact.attribute] += fact.id in hits
    return {
        "documents": len(texts),
        "facts_leaked": len(hits),
        "share_leaked": len(hits) / len(facts),
        "by_attribute": dict(sorted(by_attribute.items())),
        "leaked": {k: hits[k] for k in sorted(hits)},
    }


RESULT_KEYS = {"--corpus": "corpus", "--reference": "reference", "--release": "real_train"}


@dataclass
class LeakageArguments(ReportFileArguments):
    release: str = field(metadata={"help": "Release id or folder (its qa_singleton facts and real corpus)."})
    corpus: str = field(metadata={"help": "Synthetic corpus to check (folder, parquet, jsonl, ...)."})
    reference: str | None = field(
        default=None, metadata={"help": "Corpus sampled from the non-private generator, for comparison."}
    )
    text_column: str = field(default="text", metadata={"help": "Column of the corpora holding the text."})


def main(args: LeakageArguments) -> dict[str, Any]:
    from continuousbench.files import check_output_files, write_json
    from continuousbench.training.data import load_corpus

    inputs = [p for p in (args.release, args.corpus, args.reference) if p and Path(p).expanduser().exists()]
    output = check_output_files(  # before any work; never over a file silently, never into an input
        {"--output": args.output}, overwrite=args.overwrite, keep_out=inputs
    ).get("--output")
    facts = singleton_facts(args.release)
    result: dict[str, Any] = {"release": args.release, "facts": len(facts)}
    sources = {"--corpus": args.corpus, "--reference": args.reference, "--release": args.release}
    for option, source in sources.items():
        if source is not None:
            column = "text" if option == "--release" else args.text_column
            texts = list(load_corpus(source, column, option=option)["text"])
            result[RESULT_KEYS[option]] = {"source": source, **summary(facts, texts)}
    if output is not None:
        write_json(output, result)
    return result


def _report(result: dict[str, Any]) -> None:
    parts = [
        f"{key}: {result[key]['facts_leaked']}/{result['facts']}"
        for key in ("corpus", "reference", "real_train")
        if key in result
    ]
    print("singleton facts stated verbatim - " + ", ".join(parts))


make_parser, cli = command(
    LeakageArguments,
    "continuousbench leakage",
    "Sensitive singleton facts a synthetic corpus repeats verbatim (against a reference).",
    main,
    report=_report,
)
