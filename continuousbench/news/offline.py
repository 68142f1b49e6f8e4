"""``offline:news``: a deterministic stand-in for the LLM of the NEWS stages (tests and dry runs).

It answers every prompt of :mod:`continuousbench.news.prompts` and the LLM-match judge by reading the
prompt, as a small extractive model would: facts are the names, dates and quantities that several
reports share; questions blank them out of a fact's sentence; the closed-book answer is a guess from
the question's own words; the open-book answer is the span of the article whose surroundings best
match the question. Like a real model it makes mistakes the pipeline must catch: facts listed with
too few reports, answers not written as in the reports, questions without a date, questions that
give their answer away, broken JSON items and, for some prompts, no JSON or no answer at all.
"""

from __future__ import annotations

import hashlib
import json
import re

from continuousbench import llm
from continuousbench.news import prompts as P

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DATE = rf"(?:{'|'.join(MONTHS)}) \d{{1,2}}, \d{{4}}"
_QUANTITY = r"\d[\d,.]*(?: (?:million|billion|thousand))? (?:dollars|euros|percent|people|homes|votes|km)"
_NAME = r"[A-Z][a-z]+(?:[ -](?:[A-Z][a-z]+|[A-Z]+\d*|[A-Z]\d+))+"
KINDS = {"date": re.compile(_DATE), "number": re.compile(_QUANTITY), "name": re.compile(_NAME)}
# Capitalised words that open a sentence or a title, not a name.
_LEADING = (
    "The A An In On At Referee Striker Rival Chief Her His Two Voters Officials Traffic Steel According"
)
LEADING = frozenset(_LEADING.split()) | {"Local", "Several", "Analysts"}
_STOP = "the a an of in on at to for by and or with from was were is are be has had its their this that"
STOP = frozenset(_STOP.split()) | {"which", "what", "who", "when", "completes", "statement", "reports"}
_WORD = re.compile(r"[A-Za-z0-9]+")
_REPORT = re.compile(r"^\[(\d+)\] (\S*) \| ([^|]*) \| (.*)$")


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def spans(text: str) -> list[tuple[str, str, int]]:
    """(kind, span, position) of every date, quantity and name in ``text``; names lose leading titles."""
    found = []
    for kind, pattern in KINDS.items():
        for m in pattern.finditer(text):
            words, start = m.group().split(" "), m.start()
            while kind == "name" and words and words[0] in LEADING:
                start += len(words.pop(0)) + 1
            if kind != "name" or len(words) >= 2:
                found.append((kind, " ".join(words), start))
    dates = [(s, s + len(t)) for k, t, s in found if k == "date"]
    found = [f for f in found if f[0] == "date" or not any(a <= f[2] < b for a, b in dates)]
    return sorted(found, key=lambda f: f[2])


def _reports(prompt: str) -> list[dict]:
    block = prompt.split("\nREPORTS\n", 1)[1] if "\nREPORTS\n" in prompt else ""
    out: list[dict] = []
    for line in block.split("\n"):
        head = _REPORT.match(line)
        if head:
            out.append({"date": head.group(2), "text": ""})
        elif out:
            out[-1]["text"] += line + " "
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _facts(prompt: str) -> str:
    reports = _reports(prompt)
    where: dict[tuple[str, str], list[int]] = {}
    for number, r in enumerate(reports, 1):
        for kind, span, _ in spans(r["text"]):
            if number not in where.setdefault((kind, span), []):
                where[(kind, span)].append(number)
    facts = []
    for (_, span), numbers in sorted(where.items(), key=lambda kv: (-len(kv[1]), kv[1][0], kv[0][1])):
        if len(numbers) < 2:
            continue
        sentence = next((s for s in _sentences(reports[numbers[0] - 1]["text"]) if span in s), span)
        facts.append({"fact": sentence, "anchor": span, "articles": numbers})
    facts = facts[:25] + ["(no further facts)", {"fact": "", "anchor": "none", "articles": [1]}]
    text = json.dumps(facts, indent=1)
    h = _hash(prompt)
    if h % 7 == 0:
        return "I could not find enough facts."  # no JSON at all
    if h % 7 == 1:
        return f"Here are the facts:\n```json\n{text[: len(text) // 2]}"  # cut off mid-list
    return f"```json\n{text}\n```"


def _month(reports: list[dict]) -> str:
    days = sorted(r["date"] for r in reports if re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["date"]))
    return f"{MONTHS[int(days[0][5:7]) - 1]} {days[0][:4]}" if days else ""


def _qa(prompt: str) -> str:
    reports = _reports(prompt)
    month = _month(reports)
    block = prompt.split("\nFACTS\n", 1)[1].split("\nREPORTS\n", 1)[0]
    items: list[dict] = []
    for line in block.strip().split("\n"):
        fact = json.loads(line)
        found = spans(fact["fact"])
        if not found:
            continue
        count = {s: sum(s in r["text"] for r in reports) for _, s, _ in found}
        # the detail the fact adds: shared by several reports, a date or number before a name, the latest
        kind, span, _ = max(found, key=lambda f: (count[f[1]] >= 3, f[0] != "name", f[2]))
        cloze = fact["fact"].replace(span, "____", 1)
        h = _hash(fact["fact"])
        when = f"According to reports from {month}, which" if h % 5 != 1 else "Which"  # 1 in 5: no date
        question = f'{when} {kind} completes this statement: "{cloze}"'
        if h % 5 == 2:  # gives its answer away
            question = f'{when} {kind} is named in this statement: "{fact["fact"]}"'
        answer = span if h % 5 != 3 else (f"the {span}" if kind == "name" else f"about {span}")
        items.append({"question": question, "answer": answer, "fact": fact["number"]})
    items.append({"question": "", "answer": ""})
    return json.dumps(items[:13])


def _field(prompt: str, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", prompt, re.M)
    return found.group(1).strip() if found else ""


def _statement(question: str) -> str:
    found = re.search(r'"(.*)"', question)
    return found.group(1) if found else question


def _kind(question: str) -> str:
    return next((k for k in KINDS if f"which {k} " in question.lower()), "name")


def _closed_book(prompt: str) -> str:
    """A guess from the question's own words: the last span of the kind asked for (a question that
    gives its answer away is answered right; a blanked one is not)."""
    question = _field(prompt, "QUESTION")
    found = spans(_statement(question))
    guesses = [s for k, s, _ in found if k == _kind(question)] or [s for _, s, _ in found]
    return guesses[-1] if guesses else "I don't know."


def _standalone(prompt: str) -> str:
    question = _field(prompt, "QUESTION")
    if _hash(question) % 23 == 0:
        return "It depends."  # an unreadable verdict
    return "1" if re.search(r"\b(19|20)\d{2}\b", question) else "0"


def _content(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 3 and w.lower() not in STOP}


def _open_book(prompt: str) -> str:
    article = prompt.split("\nARTICLE\n", 1)[1].split("\nQUESTION: ", 1)[0]
    question = _field(prompt, "QUESTION")
    statement = _statement(question)
    kind = _kind(question)
    cues = _content(statement.replace("____", " "))
    best, score = "", 1
    for k, span, position in spans(article):
        if k != kind or span in statement:
            continue
        window = article[max(0, position - 90) : position + len(span) + 90]
        found = len(cues & _content(window.replace(span, " ")))
        if found > score:
            best, score = span, found
    return best or P.NOT_MENTIONED


def _judge(prompt: str) -> str:
    reference = _field(prompt, "REFERENCE").split(" (equivalent forms:", 1)[0]
    response = _field(prompt, "RESPONSE")
    fold = lambda s: " ".join(_WORD.findall(s.lower()))  # noqa: E731
    return "1" if fold(reference) and fold(reference) in fold(response) else "0"


HANDLERS = {
    P.FACTS_HEADER: _facts,
    P.QA_HEADER: _qa,
    P.CLOSED_BOOK_HEADER: _closed_book,
    P.STANDALONE_HEADER: _standalone,
    P.OPEN_BOOK_HEADER: _open_book,
}


def answer(prompt: str, **sampling) -> str:
    """The offline model's answer to one prompt (sampling settings are ignored: it is deterministic)."""
    handler = HANDLERS.get(prompt.split("\n", 1)[0])
    if handler is not None:
        return handler(prompt)
    if prompt.startswith("You are grading a short answer"):
        return _judge(prompt)
    return ""


def register() -> None:
    """Make ``offline:news`` a backend of :func:`continuousbench.llm.make_generator` (the registry the
    layer above ``llm`` fills: called by the NEWS stages and the program, not at import)."""
    llm.OFFLINE.setdefault("news", answer)
