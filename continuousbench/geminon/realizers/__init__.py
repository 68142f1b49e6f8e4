"""Corpus text realizers (paper App. G.2): turn world facts into articles with exact provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from continuousbench.geminon.realizers.base import Draft, Realizer


def make_realizer(spec: str, cache_dir: Path | None = None, **kw: Any) -> Realizer:
    """``"template"`` -> the offline template realizer; anything else is a ``continuousbench.llm``
    generator spec (``transformers:<path>``, ``endpoint:<url>[#model]``, ``offline:<name>``) driving
    the LLM realizer; an endpoint's answers are cached in ``cache_dir``."""
    if spec == "template":
        from continuousbench.geminon.realizers.template import TemplateRealizer

        return TemplateRealizer(**kw)
    from continuousbench.geminon.realizers.llm import LLMRealizer
    from continuousbench.llm import make_generator

    return LLMRealizer(make_generator(spec, cache_dir=cache_dir), **kw)


__all__ = ["Draft", "Realizer", "make_realizer"]
