"""``continuousbench news support``: how many articles support each question (paper §2.1, App. H.2).

    continuousbench news support --input work/filter --articles work/cluster --output work/support \\
        --llm endpoint:URL#READER --judge endpoint:URL#JUDGE

Candidates of a question are the articles of its cluster and of its ``neighbours`` nearest clusters
(centroid cosine, from the cluster stage). The reader model answers the question with one candidate
article in context; the harness's LLM-match judge grades each answer. An article *supports* the
question when the closed-book answer was wrong (every question that passed ``news filter``) and the
open-book answer is right: ``support_count`` is the number of such articles, ``supporting_ids`` their
ids. ``openbook.parquet`` keeps every (question, article) answer and verdict. This is the stage with
most prompts (~600k in the paper): requests go out concurrently, are cached, and run in chunks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.models import ModelArguments, require_usable
from continuousbench.news.stage_arguments import ClusteredArticles, StageArguments

OPENBOOK = "openbook.parquet"


@dataclass
class SupportArguments(StageArguments, ClusteredArticles):
    input: str = field(metadata={"help": "Questions: the filter stage's output folder."})
    output: str = field(
        kw_only=True, metadata={"help": "Output folder (data/ questions with support, openbook.parquet)."}
    )
    neighbours: int = field(default=2, metadata=bounds("[0, 5]", "Nearest clusters whose articles are read."))
    max_candidates: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Articles read per question (own cluster first).")
    )
    article_chars: int = field(default=4000, metadata=bounds("[1, inf)", "Characters of each article shown."))
    chunk: int = field(default=20, metadata=bounds("[1, inf)", "Questions per resumable chunk."))


def openbook_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("question_id", pa.string()),
            ("article_id", pa.string()),
            ("answer", pa.string()),
            ("correct", pa.bool_()),
        ]
    )


def candidates(
    cluster: int, members: dict[int, list[str]], neighbours: dict[int, list[int]], k: int, cap: int | None
) -> list[str]:
    """Article ids read for a question of ``cluster``: its own articles, then its k nearest clusters'."""
    ids = list(members.get(cluster, []))
    for other in neighbours.get(cluster, [])[:k]:
        ids += members.get(other, [])
    return ids[:cap] if cap is not None else ids


def main(args: SupportArguments, model: ModelArguments) -> Path:
    import pyarrow as pa

    from continuousbench.news.models import judge, judged_provenance, open_stage
    from continuousbench.news.prompts import open_book_prompt
    from continuousbench.news.shards import read_rows, read_shard, require_columns

    qa = read_rows(args.input)
    require_columns(
        qa, ("id", "cluster", "question", "answer", "closed_book_correct"), f"--input {args.input}"
    )
    if qa.column("closed_book_correct").null_count or any(qa.column("closed_book_correct").to_pylist()):
        raise UserError(f"--input {args.input} holds questions answered closed-book; pass the filter output")
    articles = read_rows(args.articles, ["id", "cluster", "title", "date", "hostname", "text"], "--articles")
    by_id = {r["id"]: r for r in articles.to_pylist()}
    members: dict[int, list[str]] = {}
    for row in sorted(by_id.values(), key=lambda r: r["id"]):
        if row["cluster"] is not None and row["cluster"] >= 0:
            members.setdefault(int(row["cluster"]), []).append(row["id"])
    neighbours: dict[int, list[int]] = {}
    clusters_file = Path(args.articles).expanduser() / "clusters.parquet"
    if args.neighbours and clusters_file.is_file():
        table = read_shard(clusters_file, ["cluster", "neighbours"])
        neighbours = dict(
            zip(table.column("cluster").to_pylist(), table.column("neighbours").to_pylist(), strict=True)
        )
    elif args.neighbours:
        raise UserError(
            f"--articles {args.articles} has no clusters.parquet; pass the cluster stage's output folder, "
            "or --neighbours 0"
        )
    inputs = {"--input": args.input, "--articles": args.articles}
    out, reader = open_stage("support", args, model, inputs, judge=True)
    grader, judged_by = judge(model.judge or model.llm, out.path("judge-cache"), model)  # gated first

    def work(rows: list[dict]) -> tuple[pa.Table, Counter]:
        pairs = [
            (r, a)
            for r in rows
            for a in candidates(r["cluster"], members, neighbours, args.neighbours, args.max_candidates)
        ]
        prompts = [open_book_prompt(by_id[a], r["question"], args.article_chars) for r, a in pairs]
        answers = reader.generate(prompts, temperature=0.0, max_new_tokens=64)
        answers = [(t or "").strip().split("\n", 1)[0] for t in answers]
        verdicts = grader.match([r["question"] for r, _ in pairs], [[r["answer"]] for r, _ in pairs], answers)
        table = pa.table(
            {
                "question_id": [r["id"] for r, _ in pairs],
                "article_id": [a for _, a in pairs],
                "answer": answers,
                "correct": pa.array(verdicts, pa.bool_()),
            },
            schema=openbook_schema(),
        )
        return table, Counter(
            prompts=len(pairs),
            unjudged=sum(v is None for v in verdicts),
            empty_answers=sum(not a for a in answers),
        )

    openbook, counts = out.chunks(qa.to_pylist(), args.chunk, work)
    unusable = counts.get("unjudged", 0) + counts.get("empty_answers", 0)
    require_usable(out, model.llm, counts.get("prompts", 0), unusable, counts, model)
    openbook = openbook if openbook is not None else openbook_schema().empty_table()
    out.write(OPENBOOK, openbook)
    supporting: dict[str, list[str]] = {}
    read: Counter = Counter(openbook.column("question_id").to_pylist())
    for q, a, ok in zip(
        *(openbook.column(c).to_pylist() for c in ("question_id", "article_id", "correct")), strict=True
    ):
        if ok:
            supporting.setdefault(q, []).append(a)
    ids = qa.column("id").to_pylist()
    support = [sorted(supporting.get(q, [])) for q in ids]
    table = qa.append_column("support_count", pa.array([len(s) for s in support], pa.int64()))
    table = table.append_column("supporting_ids", pa.array(support, pa.list_(pa.string())))
    table = table.append_column("candidates", pa.array([read[q] for q in ids], pa.int64()))
    out.write("data/part-00000.parquet", table)
    counts["questions_without_support"] = sum(1 for s in support if not s)
    return out.finish(
        qa.num_rows, table.num_rows, counts, publish=[OPENBOOK], **judged_provenance(model, judged_by)
    )


make_parser, cli = command(
    (SupportArguments, ModelArguments),
    "continuousbench news support",
    "Count the articles that make a model answer each question (open book vs closed book).",
    main,
    report=print,
)
