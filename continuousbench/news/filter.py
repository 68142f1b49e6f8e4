"""``continuousbench news filter``: drop questions a model answers from memory, and ambiguous ones.

    continuousbench news filter --input work/qa --output work/filter --llm ... [--judge ...]

Each question is asked without any article (closed book); the harness's LLM-match judge (numbers by
relative error, the rest by the judge model) decides whether that answer matches the reference, and
the judge model decides whether the question stands on its own (App. H.2). A question the model
already answers, an ambiguous one, and one whose verdict cannot be read are dropped, each counted.
``verdicts.parquet`` keeps every question with its closed-book answer and verdicts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.news.models import ModelArguments
from continuousbench.news.stage_arguments import StageArguments

VERDICTS = "verdicts.parquet"
ADDED = ("closed_book_answer", "closed_book_correct", "standalone", "reason")


@dataclass
class FilterArguments(StageArguments):
    input: str = field(metadata={"help": "Questions: the qa stage's output folder."})
    output: str = field(
        kw_only=True, metadata={"help": "Output folder (data/ kept questions, verdicts.parquet, stats)."}
    )
    chunk: int = field(default=500, metadata=bounds("[1, inf)", "Questions per resumable chunk."))


def reason(correct: bool | None, standalone: bool | None) -> str | None:
    """Why a question goes (closed-book correctness first), or None when it stays."""
    if correct is None:
        return "dropped_unjudged_closed_book"
    if correct:
        return "dropped_closed_book_correct"
    if standalone is None:
        return "dropped_unjudged_standalone"
    return None if standalone else "dropped_ambiguous"


def main(args: FilterArguments, model: ModelArguments) -> Path:
    import pyarrow as pa
    import pyarrow.compute as pc

    from continuousbench.news.models import judge, judged_provenance, open_stage
    from continuousbench.news.prompts import closed_book_prompt, standalone_prompt
    from continuousbench.news.shards import read_rows, require_columns
    from continuousbench.scoring.judge import parse_verdict

    qa = read_rows(args.input)
    require_columns(qa, ("id", "question", "answer"), f"--input {args.input}")
    out, llm = open_stage("filter", args, model, {"--input": args.input}, judge=True)
    grader, judged_by = judge(model.judge or model.llm, out.path("judge-cache"), model)  # gated first

    def work(rows: list[dict]) -> tuple[pa.Table, Counter]:
        questions = [r["question"] for r in rows]
        closed = llm.generate([closed_book_prompt(q) for q in questions], temperature=0.0, max_new_tokens=64)
        closed = [c.strip().split("\n", 1)[0] if c else "" for c in closed]
        correct = grader.match(questions, [[r["answer"]] for r in rows], closed)
        replies = grader.generator.generate(
            [standalone_prompt(q) for q in questions], temperature=0.0, max_new_tokens=4
        )
        standalone = [parse_verdict(t or "") for t in replies]
        why = [reason(c, s) for c, s in zip(correct, standalone, strict=True)]
        table = pa.Table.from_pylist(rows).append_column("closed_book_answer", pa.array(closed, pa.string()))
        table = table.append_column("closed_book_correct", pa.array(correct, pa.bool_()))
        table = table.append_column("standalone", pa.array(standalone, pa.bool_()))
        return table.append_column("reason", pa.array(why, pa.string())), Counter(w for w in why if w)

    verdicts, counts = out.chunks(qa.to_pylist(), args.chunk, work)
    if verdicts is None:  # no questions at all: the same columns, no rows
        verdicts = qa
        for name, kind in zip(ADDED, (pa.string(), pa.bool_(), pa.bool_(), pa.string()), strict=True):
            verdicts = verdicts.append_column(name, pa.array([], kind))
    out.write(VERDICTS, verdicts)
    kept = verdicts.filter(pc.is_null(verdicts.column("reason"))).drop_columns(["reason"])
    out.write("data/part-00000.parquet", kept)
    return out.finish(
        qa.num_rows, kept.num_rows, counts, publish=[VERDICTS], **judged_provenance(model, judged_by)
    )


make_parser, cli = command(
    (FilterArguments, ModelArguments),
    "continuousbench news filter",
    "Drop questions answered correctly without context, and ambiguous ones (LLM + judge).",
    main,
    report=print,
)
