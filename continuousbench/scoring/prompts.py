"""Few-shot QA prompts (paper App. I.3): our own header and examples, never drawn from a release.

Geminon examples are real Pokémon facts (PokeAPI, checked by ``tests/harness/test_prompts.py`` against
the reference CSVs when they are present). Units follow the release's convention, which is the paper's:
heights and weights are PokeAPI's integers (decimetres and hectograms) stated as "meters" and "lbs",
so the numbers in the prompt have the same scale as the answers the model is asked for. Types are
joined with "and" in slot order, classifications are the species genus with "Pokémon" replaced by
"Geminon", the ability is the first non-hidden one, the move a signature move.

NEWS examples are real events of 2025, outside any release window's corpus.

The *informed* prompt (FictionalQA's informed answer attempt, used when a release is built) puts the
question's supporting document between the examples and the question: the same prefix as the closed-book
prompt, so both are asked in one form and differ only by the document.
"""

from __future__ import annotations

from typing import NamedTuple

from continuousbench.errors import UserError


class Example(NamedTuple):
    question: str
    answer: str


GEMINON_HEADER = "Each question below asks about one property of a Geminon, followed by the correct answer."
GEMINON_EXAMPLES: tuple[Example, ...] = (
    Example("What is the attack stat of Garchomp?", "130"),
    Example("What are the types of Lapras?", "Water and Ice"),
    Example("What is the base stat total stat of Dragonite?", "600"),
    Example("What is the classification of Gengar?", "Shadow Geminon"),
    Example("What is the height (in meters) of Gyarados?", "65"),
    Example("What is the ability of Mewtwo?", "Pressure"),
    Example("What is the special defense stat of Lugia?", "154"),
    Example("What is the weight (in lbs) of Snorlax?", "4600"),
    Example("What is the move of Ho-Oh?", "Sacred Fire"),
)

NEWS_HEADER = "Each question below asks about a news event of 2025, followed by the correct answer."
NEWS_EXAMPLES: tuple[Example, ...] = (
    Example("Which team won Super Bowl LIX in February 2025?", "Philadelphia Eagles"),
    Example("Who was sworn in as Prime Minister of Canada in March 2025?", "Mark Carney"),
    Example("Who did the Bundestag elect as German chancellor in May 2025?", "Friedrich Merz"),
    Example("Which country won the UEFA Women's Euro 2025 final?", "England"),
)

PROMPTS: dict[str, tuple[str, tuple[Example, ...]]] = {
    "geminon": (GEMINON_HEADER, GEMINON_EXAMPLES),
    "news": (NEWS_HEADER, NEWS_EXAMPLES),
}


def few_shot_prefix(track: str) -> str:
    """Header and examples as ``Q: ...\\nA: ...`` blocks separated by blank lines."""
    if track not in PROMPTS:
        raise UserError(f"no QA prompt for track {track!r}: use {' or '.join(PROMPTS)}")
    header, examples = PROMPTS[track]
    blocks = "".join(f"Q: {q}\nA: {a}\n\n" for q, a in examples)
    return f"{header}\n\n{blocks}"


def qa_prompt(question: str, track: str = "geminon") -> str:
    """The full prompt; the model's answer is what it writes after ``A:`` up to the first newline."""
    return f"{few_shot_prefix(track)}Q: {question}\nA:"


def informed_prompt(question: str, document: str, track: str = "geminon") -> str:
    """The closed-book prompt with ``document`` in context, just before the question."""
    return f"{few_shot_prefix(track)}{' '.join(document.split())}\n\nQ: {question}\nA:"
