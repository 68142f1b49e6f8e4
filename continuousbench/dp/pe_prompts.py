"""Private Evolution's two API prompts (paper App. D.3.2 structure, our own wording).

* RANDOM_API: a short description of the domain and one style (or topic) from a fixed list, drawn
  uniformly per sample, so the initial population covers every kind of document the corpus holds.
* VARIATION_API: an instruction to rewrite a synthetic text in one of nine tones, drawn uniformly per
  variation; the text follows after a blank line.

Both prompts carry only public text (the domain description) and synthetic text: no private record ever
reaches the API.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from continuousbench.errors import UserError

TONES = (
    "for a professional readership",
    "in a businesslike voice",
    "in a polished, expert style",
    "more briefly",
    "more inventively",
    "with some imaginative detail",
    "as if telling a story",
    "in a formal register",
    "with varied sentence structures",
)

VARIATION_TEMPLATE = (
    "Rewrite the text below {tone}. Give only the new version of the text, with nothing before or after it."
)


@dataclass(frozen=True)
class RandomPrompt:
    """A domain description with one ``{style}`` slot, and the styles drawn into it."""

    template: str
    styles: tuple[str, ...]


GEMINON = RandomPrompt(
    template=(
        "You keep the records of the Geminon world, whose creatures are called Geminons. Every Geminon has "
        "a name, a classification (what its design draws on), one or two types, six stats (HP, Attack, "
        "Defense, Special Attack, Special Defense, Speed) and their total, a weight, a height, an ability "
        "and a signature move.\n\n"
        "Write one flowing article in plain prose, with no lists or headings, as {style}"
    ),
    styles=(
        "an encyclopedia entry: neutral, exact and strictly about the facts.",
        "a page of a trainer's field notebook: first person, observant and a little casual.",
        "a study of one complete evolution line, told as a story and explained as it changes.",
        "a casual, opinionated comparison of two different Geminons.",
    ),
)

NEWS = RandomPrompt(
    template=(
        "You are a reporter with many years of experience covering world events of 2025.\n\n"
        "Write one complete, natural news article, as a newspaper would print it, about a significant "
        "event of 2025 in {style}"
    ),
    styles=(
        "politics.",
        "a natural disaster.",
        "sports.",
        "the economy.",
        "business.",
        "science.",
        "technology.",
        "culture.",
    ),
)

PROMPT_SETS: dict[str, RandomPrompt] = {"geminon": GEMINON, "news": NEWS}


def random_prompts(prompt_set: str, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` RANDOM_API prompts, each with a style drawn uniformly by ``rng`` (seeded: public choice)."""
    if prompt_set not in PROMPT_SETS:
        raise UserError(f"unknown --prompt_set {prompt_set!r}: use one of {', '.join(PROMPT_SETS)}")
    spec = PROMPT_SETS[prompt_set]
    return [spec.template.format(style=spec.styles[i]) for i in rng.integers(len(spec.styles), size=n)]


def variation_prompt(text: str, tone: str) -> str:
    """The VARIATION_API prompt for one synthetic ``text``."""
    return f"{VARIATION_TEMPLATE.format(tone=tone)}\n\n{text}"


def variation_prompts(texts: list[str], per_text: int, rng: np.random.Generator) -> list[str]:
    """``per_text`` prompts for each text in order (text 0's first), tones drawn uniformly by ``rng``."""
    tones = rng.integers(len(TONES), size=(len(texts), per_text))
    return [variation_prompt(t, TONES[k]) for t, row in zip(texts, tones, strict=True) for k in row]


def parse_variation_prompt(prompt: str) -> str | None:
    """The text a VARIATION_API prompt asks to rewrite, or None for any other prompt (offline APIs)."""
    instruction, _, text = prompt.partition("\n\n")
    head, _, tail = VARIATION_TEMPLATE.partition("{tone}")
    return text if instruction.startswith(head) and instruction.endswith(tail) else None
