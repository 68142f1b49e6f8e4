"""The public templates private prediction puts each record in (our own wording).

A private row is ``private`` with one record in ``{record}``; the batch's public row is ``public``, the
same text with no record, so the sparse vector test compares like with like: both end where a new
document starts. ``document`` needs no instruction-following at all: a record, then the tokenizer's
end-of-text and start-of-text tokens, i.e. the boundary between two documents of a packed pretraining
corpus (the demo's base model was trained that way); the public row is the start-of-text token alone.
The domain templates suit a real base model: a one-line description of the collection, a document
from it, and the header of the next one; ``stop`` ends a record where the model starts yet another.
"""

from __future__ import annotations

from dataclasses import dataclass

from continuousbench.errors import UserError


@dataclass(frozen=True)
class PromptTemplate:
    private: str  # with {record}; {eos} and {bos} are the tokenizer's tokens
    public: str
    stop: str | None = None  # a record ends before this text


def _domain(description: str) -> PromptTemplate:
    head = f"{description}\n\nDocument:\n"
    return PromptTemplate(private=head + "{record}\n\nDocument:\n", public=head, stop="\n\nDocument:")


TEMPLATES: dict[str, PromptTemplate] = {
    "document": PromptTemplate(private="{record}{eos}{bos}", public=""),
    "geminon": _domain(
        "A collection of documents about the Geminon world and its creatures, the Geminons: encyclopedia "
        "entries, trainers' field notes, accounts of evolution lines and comparisons of two Geminons."
    ),
    "news": _domain("A collection of news articles about events of 2025, as newspapers printed them."),
}


def prompts(name: str, records: list[str], tokenizer) -> tuple[list[str], str, str | None]:
    """(one private prompt per record, the public prompt, the stop text) of template ``name``."""
    if name not in TEMPLATES:
        raise UserError(f"unknown --prompt_set {name!r}: use one of {', '.join(TEMPLATES)}")
    spec = TEMPLATES[name]
    bounds = {"eos": tokenizer.eos_token or "", "bos": tokenizer.bos_token or ""}
    private = [spec.private.format(record=record, **bounds) for record in records]
    return private, spec.public.format(**bounds), spec.stop


def cut_records(records: list[str], tokenizer, max_tokens: int) -> list[str]:
    """Each record cut to its first ``max_tokens`` tokens (decoded back to text; shorter ones as given)."""
    ids = tokenizer(records, add_special_tokens=False)["input_ids"]
    return [
        tokenizer.decode(row[:max_tokens]) if len(row) > max_tokens else text
        for row, text in zip(ids, records, strict=True)
    ]
