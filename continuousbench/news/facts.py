"""``continuousbench news facts``: 12-25 facts per large cluster, each stated in >= 3 reports (App. H.2).

    continuousbench news facts --input work/cluster --output work/facts --llm endpoint:URL#MODEL

For each of the ``top_clusters`` largest clusters, up to ``articles_per_cluster`` of its articles
(a seeded sample, each cut to ``article_chars`` characters) go to the model with our facts prompt.
A fact is kept when it has text, an anchor and at least three distinct valid report numbers; the
rest, and answers that are not JSON, are dropped and counted. Clusters are processed in chunks that
survive an interruption (``--resume``), and the endpoint's answer cache makes a rerun free.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.models import ModelArguments, provenance
from continuousbench.news.stage_arguments import StageArguments


@dataclass
class FactsArguments(StageArguments):
    input: str = field(metadata={"help": "Clustered articles: the cluster stage's output folder."})
    top_clusters: int = field(default=500, metadata=bounds("[1, inf)", "Largest clusters sent to the model."))
    articles_per_cluster: int = field(default=50, metadata=bounds("[3, inf)", "Reports shown per cluster."))
    article_chars: int = field(default=512, metadata=bounds("[1, inf)", "Characters shown per report."))
    min_facts: int = field(default=12, metadata=bounds("[1, inf)", "Facts asked for, at least."))
    max_facts: int = field(default=25, metadata=bounds("[1, inf)", "Facts kept per cluster, at most."))
    min_reports: int = field(default=3, metadata=bounds("[1, inf)", "Reports that must state a fact."))
    chunk: int = field(default=20, metadata=bounds("[1, inf)", "Clusters per resumable chunk."))
    seed: int = field(default=0, metadata=bounds("[0, 9.2e18]", "Seed of the reports shown."))


def fact_schema():
    import pyarrow as pa

    ids = pa.list_(pa.string())
    return pa.schema(
        [
            ("cluster", pa.int64()),
            ("fact_id", pa.string()),
            ("fact", pa.string()),
            ("anchor", pa.string()),
            ("article_ids", ids),
            ("shown_ids", ids),
        ]
    )


def shown_reports(rows: Sequence[dict], k: int, seed: int) -> list[dict]:
    """Up to ``k`` of a cluster's articles (a seeded sample over ids), in publication order."""
    import numpy as np

    rows = sorted(rows, key=lambda r: r["id"])
    if len(rows) > k:
        picked = np.random.default_rng(seed).choice(len(rows), size=k, replace=False)
        rows = [rows[i] for i in sorted(picked)]
    return sorted(rows, key=lambda r: (r.get("date") or "", r["id"]))


def report_numbers(value, n: int) -> list[int]:
    """Distinct valid 1-based report numbers from the model's ``articles`` field (ints or digit strings)."""
    found = []
    for v in value if isinstance(value, list) else []:
        number = v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(v, str) and v.strip().strip("[]").isdigit():
            number = int(v.strip().strip("[]"))
        if number is not None and 1 <= number <= n and number not in found:
            found.append(number)
    return found


def read_facts(
    cluster: int, answer: str, shown: list[dict], args: FactsArguments
) -> tuple[list[dict], Counter]:
    """The valid facts of one model answer, and what was dropped."""
    from continuousbench.news.parse import fold, json_objects, text_field

    items, stats = json_objects(answer)
    facts, seen = [], set()
    for item in items:
        fact, anchor = text_field(item, "fact"), text_field(item, "anchor")
        numbers = report_numbers(item.get("articles"), len(shown))
        reason = (
            "dropped_fact_missing_text" if not fact
            else "dropped_fact_no_anchor" if not anchor
            else "dropped_fact_under_min_reports" if len(numbers) < args.min_reports
            else "dropped_duplicate_fact" if fold(fact) in seen
            else "dropped_fact_over_limit" if len(facts) >= args.max_facts
            else None
        )  # fmt: skip
        if reason:
            stats[reason] += 1
            continue
        seen.add(fold(fact))
        facts.append(
            {
                "cluster": cluster,
                "fact_id": f"{cluster}-{len(facts)}",
                "fact": fact,
                "anchor": anchor,
                "article_ids": [shown[i - 1]["id"] for i in numbers],
                "shown_ids": [r["id"] for r in shown],
            }
        )
    stats["clusters_without_facts"] += not facts
    return facts, stats


def articles_by_cluster(source: str, columns: Sequence[str]) -> dict[int, list[dict]]:
    """The clustered articles of a cluster stage's output, grouped (articles without a cluster left out)."""
    from continuousbench.news.shards import read_rows, require_columns

    table = read_rows(source)
    require_columns(table, ("id", "cluster", "text"), f"--input {source}")
    groups: dict[int, list[dict]] = {}
    for row in table.select([c for c in columns if c in table.column_names]).to_pylist():
        if row["cluster"] is not None and row["cluster"] >= 0:
            groups.setdefault(int(row["cluster"]), []).append(row)
    return groups


def main(args: FactsArguments, model: ModelArguments) -> Path:
    import pyarrow as pa

    from continuousbench.news.models import open_stage, require_usable
    from continuousbench.news.prompts import FACTS_SCHEMA, facts_prompt

    if args.min_facts > args.max_facts:
        raise UserError(f"--min_facts {args.min_facts} is above --max_facts {args.max_facts}")
    groups = articles_by_cluster(args.input, ("id", "cluster", "title", "date", "hostname", "text"))
    top = sorted(groups, key=lambda c: (-len(groups[c]), c))[: args.top_clusters]
    out, llm = open_stage("facts", args, model, {"--input": args.input})

    def work(clusters: list[int]) -> tuple[pa.Table, Counter]:
        shown = {c: shown_reports(groups[c], args.articles_per_cluster, args.seed + c) for c in clusters}
        prompts = [
            facts_prompt(shown[c], args.article_chars, args.min_facts, args.max_facts) for c in clusters
        ]
        answers = llm.generate(
            prompts, temperature=model.temperature, max_new_tokens=model.max_new_tokens, schema=FACTS_SCHEMA
        )
        rows, stats = [], Counter()
        for c, answer in zip(clusters, answers, strict=True):
            facts, found = read_facts(c, answer, shown[c], args)
            rows += facts
            stats += found
        return pa.Table.from_pylist(rows, schema=fact_schema()), stats

    table, counts = out.chunks(top, args.chunk, work)
    require_usable(out, model.llm, len(top), counts.get("clusters_without_facts", 0), counts, model)
    table = table if table is not None else fact_schema().empty_table()
    return out.finish_table(len(top), table, counts, clusters=len(top), **provenance(model, llm))


make_parser, cli = command(
    (FactsArguments, ModelArguments),
    "continuousbench news facts",
    "Extract facts stated in at least three reports from the largest clusters (LLM).",
    main,
    report=print,
)
