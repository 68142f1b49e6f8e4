"""Corpus text realizers (paper App. G.2): turn world facts into articles with exact provenance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench.geminon.realizers.base import Draft, Realizer

if TYPE_CHECKING:
    from continuousbench.llm import TextGenerator


def make_realizer(
    spec: str, generator: TextGenerator | None = None, cache_dir: Path | None = None, **kw: Any
) -> Realizer:
    """``"template"`` -> the offline template realizer; anything else is a ``continuousbench.llm``
    generator spec (``transformers:<path>``, ``endpoint:<url>[#model]``, ``offline:<name>``) driving
    the LLM realizer (``generator``: the one already built from ``spec``; else one is built, its answers
    cached in ``cache_dir``)."""
    if spec == "template":
        from continuousbench.geminon.realizers.template import TemplateRealizer

        return TemplateRealizer(**kw)
    from continuousbench.geminon.realizers.llm import LLMRealizer
    from continuousbench.llm import make_generator

    return LLMRealizer(generator or make_generator(spec, cache_dir=cache_dir), **kw)


__all__ = ["Draft", "Realizer", "make_realizer"]
