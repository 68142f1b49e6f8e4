"""``continuousbench news qa``: up to 12 short-answer questions per cluster from its facts (App. H.2).

    continuousbench news qa --facts work/facts --articles work/cluster --output work/qa --llm ...

The facts and the same reports the facts stage showed go back to the model with our QA prompt. The
verbatim-answer rule is checked here by code, never taken from the model: a question is kept only when
its answer string occurs, as whole words (case and spacing aside), in at least ``min_reports`` of its
cluster's articles (all of them, full text). Malformed answers and broken items are dropped and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.models import ModelArguments, provenance
from continuousbench.news.stage_arguments import ClusteredArticles, StageArguments


@dataclass
class QAArguments(StageArguments, ClusteredArticles):
    facts: str = field(metadata={"help": "The facts stage's output folder."})
    max_questions: int = field(default=12, metadata=bounds("[1, inf)", "Questions kept per cluster."))
    article_chars: int = field(default=512, metadata=bounds("[1, inf)", "Characters shown per report."))
    min_reports: int = field(default=3, metadata=bounds("[1, inf)", "Articles that must hold the answer."))
    max_answer_words: int = field(default=10, metadata=bounds("[1, inf)", "Longest answer kept (words)."))
    chunk: int = field(default=20, metadata=bounds("[1, inf)", "Clusters per resumable chunk."))


def qa_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("id", pa.string()),
            ("cluster", pa.int64()),
            ("question", pa.string()),
            ("answer", pa.string()),
            ("fact", pa.string()),
            ("verbatim_count", pa.int64()),
            ("verbatim_ids", pa.list_(pa.string())),
        ]
    )


def verbatim_ids(answer: str, folded: Sequence[tuple[str, str]]) -> list[str]:
    """Ids of the articles (id, folded text) holding ``answer`` word for word."""
    from continuousbench.news.parse import verbatim_pattern

    pattern = verbatim_pattern(answer)
    return [i for i, text in folded if pattern.search(text)]


def read_questions(
    cluster: int, answer: str, facts: list[str], folded: list[tuple[str, str]], args: QAArguments
) -> tuple[list[dict], Counter]:
    """The questions of one model answer that pass every check, and what was dropped and why."""
    from continuousbench.news.parse import fold, json_objects, text_field, verbatim_pattern

    items, stats = json_objects(answer)
    rows, seen = [], set()
    for item in items:
        question, reply = text_field(item, "question"), text_field(item, "answer")
        support = verbatim_ids(reply, folded) if reply else []
        reason = (
            "dropped_missing_field" if not question or not reply
            else "dropped_long_answer" if len(reply.split()) > args.max_answer_words
            else "dropped_answer_in_question" if verbatim_pattern(reply).search(fold(question))
            else "dropped_answer_not_verbatim" if len(support) < args.min_reports
            else "dropped_duplicate_question" if fold(question) in seen
            else "dropped_question_over_limit" if len(rows) >= args.max_questions
            else None
        )  # fmt: skip
        if reason:
            stats[reason] += 1
            continue
        seen.add(fold(question))
        number = item.get("fact")
        fact = facts[number - 1] if isinstance(number, int) and 1 <= number <= len(facts) else ""
        rows.append(
            {
                "id": f"{cluster}-{len(rows)}",
                "cluster": cluster,
                "question": question,
                "answer": reply,
                "fact": fact,
                "verbatim_count": len(support),
                "verbatim_ids": support,
            }
        )
    stats["clusters_without_questions"] += not rows
    return rows, stats


def main(args: QAArguments, model: ModelArguments) -> Path:
    import pyarrow as pa

    from continuousbench.news.facts import articles_by_cluster
    from continuousbench.news.models import open_stage
    from continuousbench.news.parse import fold
    from continuousbench.news.prompts import QA_SCHEMA, qa_prompt
    from continuousbench.news.shards import read_rows, require_columns

    facts = read_rows(args.facts, option="--facts")
    require_columns(facts, ("cluster", "fact", "shown_ids"), f"--facts {args.facts}")
    by_cluster: dict[int, list[dict]] = {}
    for row in facts.to_pylist():
        by_cluster.setdefault(int(row["cluster"]), []).append(row)
    groups = articles_by_cluster(args.articles, ("id", "cluster", "title", "date", "hostname", "text"))
    missing = sorted(set(by_cluster) - set(groups))
    if missing:
        raise UserError(
            f"--articles {args.articles} has no articles of cluster(s) {missing[:5]} named in "
            f"--facts; pass the cluster stage output the facts were extracted from"
        )
    inputs = {"--facts": args.facts, "--articles": args.articles}
    out, llm = open_stage("qa", args, model, inputs)

    def work(clusters: list[int]) -> tuple[pa.Table, Counter]:
        prompts, shown_facts = [], {}
        for c in clusters:
            by_id = {r["id"]: r for r in groups[c]}
            shown = [by_id[i] for i in by_cluster[c][0]["shown_ids"] if i in by_id]
            shown_facts[c] = [f["fact"] for f in by_cluster[c]]
            prompts.append(qa_prompt(shown_facts[c], shown, args.article_chars, args.max_questions))
        answers = llm.generate(
            prompts, temperature=model.temperature, max_new_tokens=model.max_new_tokens, schema=QA_SCHEMA
        )
        rows, stats = [], Counter()
        for c, answer in zip(clusters, answers, strict=True):
            folded = [(r["id"], fold(r["text"] or "")) for r in sorted(groups[c], key=lambda r: r["id"])]
            found, counts = read_questions(c, answer, shown_facts[c], folded, args)
            rows += found
            stats += counts
        return pa.Table.from_pylist(rows, schema=qa_schema()), stats

    clusters = sorted(by_cluster)
    table, counts = out.chunks(clusters, args.chunk, work)
    table = table if table is not None else qa_schema().empty_table()
    return out.finish_table(len(facts), table, counts, clusters=len(clusters), **provenance(model, llm))


make_parser, cli = command(
    (QAArguments, ModelArguments),
    "continuousbench news qa",
    "Write short-answer questions from the facts; keep those whose answer is verbatim in >= 3 articles "
    "(LLM).",
    main,
    report=print,
)
