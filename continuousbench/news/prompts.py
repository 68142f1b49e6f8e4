"""Our prompts for the model stages (paper App. H.2 describes the steps; the wording here is ours).

Every prompt opens with a distinct first line, which the offline model uses to recognise the task. The
LLM-match judge is the harness's own (:data:`continuousbench.scoring.judge.JUDGE_PROMPT`), so a question is
judged the same way when it is built and when it is scored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

FACTS_HEADER = "TASK: extract facts from news reports"
QA_HEADER = "TASK: write short-answer questions from facts"
CLOSED_BOOK_HEADER = "TASK: answer a question from memory"
STANDALONE_HEADER = "TASK: decide whether a question stands on its own"
OPEN_BOOK_HEADER = "TASK: answer a question from one article"
NOT_MENTIONED = "Not mentioned"

FACTS = f"""{FACTS_HEADER}

Below are {{n}} news reports about one event, numbered [1] to [{{n}}], each cut to its first characters.

List between {{min_facts}} and {{max_facts}} facts about the event that the reports state. Rules:
- A fact is one short sentence a reader could turn into a question with a short answer.
- Each fact must be stated explicitly in at least three different reports; list their numbers.
- Anchor each fact with an absolute date, a named person, organisation or place, or a named document or
  action. No relative times ("yesterday", "this week").
- Prefer names, dates, places, quantities with their units and outcomes over opinions.
- Leave out facts that would still be true a year earlier (background knowledge).

Reply with JSON only: a list of objects with the keys "fact" (the sentence), "anchor" (the name, date
or quantity it hinges on) and "articles" (the report numbers that state it).

REPORTS
{{articles}}"""

QA = f"""{QA_HEADER}

Below are facts about one news event and the reports they come from, numbered [1] to [{{n}}].

Write up to {{max_questions}} questions, each answered by the facts. Rules:
- The answer is short: a name, a date, a number with its unit, a place or an outcome.
- The answer must be written exactly as it appears, word for word, in at least three of the reports.
- The question must make sense on its own to someone who has not read the reports: name the event
  and give an absolute time (a date, or a month and year), never "recently" or "this week".
- The question must not contain its answer.

Reply with JSON only: a list of objects with the keys "question", "answer" and "fact" (the number of the
fact it tests).

FACTS
{{facts}}

REPORTS
{{articles}}"""

CLOSED_BOOK = f"""{CLOSED_BOOK_HEADER}

Answer the question in as few words as possible. If you are not sure, give your best guess.

QUESTION: {{question}}
ANSWER:"""

STANDALONE = f"""{STANDALONE_HEADER}

Could a well-informed reader answer this question without being told which news article it came from?
It stands on its own when it names what it asks about and gives an absolute time where one matters;
it does not when it says "the event", "the company" or "this week" without naming them.

QUESTION: {{question}}

Reply with a single character: 1 if the question stands on its own, 0 if it does not."""

OPEN_BOOK = f"""{OPEN_BOOK_HEADER}

Read the article and answer the question with a short answer taken from the article. If the article does
not give the answer, reply exactly "{NOT_MENTIONED}".

ARTICLE
{{article}}

QUESTION: {{question}}
ANSWER:"""


def report(index: int, row: dict, chars: int) -> str:
    """``[3] 2026-01-12 | www.example.com | Title`` and the first ``chars`` characters of the text."""
    head = f"[{index}] {row.get('date') or ''} | {row.get('hostname') or ''} | {row.get('title') or ''}"
    return f"{head}\n{(row.get('text') or '')[:chars]}"


def reports(rows: Sequence[dict], chars: int) -> str:
    return "\n\n".join(report(i, row, chars) for i, row in enumerate(rows, 1))


def facts_prompt(rows: Sequence[dict], chars: int, min_facts: int, max_facts: int) -> str:
    return FACTS.format(n=len(rows), min_facts=min_facts, max_facts=max_facts, articles=reports(rows, chars))


def qa_prompt(facts: Sequence[str], rows: Sequence[dict], chars: int, max_questions: int) -> str:
    numbered = "\n".join(
        json.dumps({"number": i, "fact": f}, ensure_ascii=False) for i, f in enumerate(facts, 1)
    )
    return QA.format(n=len(rows), max_questions=max_questions, facts=numbered, articles=reports(rows, chars))


def closed_book_prompt(question: str) -> str:
    return CLOSED_BOOK.format(question=question)


def standalone_prompt(question: str) -> str:
    return STANDALONE.format(question=question)


def open_book_prompt(article: dict, question: str, chars: int) -> str:
    head = (
        f"{article.get('title') or ''} ({article.get('date') or 'undated'}, {article.get('hostname') or ''})"
    )
    return OPEN_BOOK.format(article=f"{head}\n{(article.get('text') or '')[:chars]}", question=question)


def _list_of(properties: dict) -> dict:
    return {
        "type": "array",
        "items": {"type": "object", "properties": properties, "required": list(properties)},
    }


# The answers' JSON schemas, sent as ``response_format`` where the server offers structured output.
FACTS_SCHEMA = _list_of(
    {
        "fact": {"type": "string"},
        "anchor": {"type": "string"},
        "articles": {"type": "array", "items": {"type": "integer"}},
    }
)
QA_SCHEMA = _list_of(
    {"question": {"type": "string"}, "answer": {"type": "string"}, "fact": {"type": "integer"}}
)
