"""Corpus text realizers (paper App. G.2): turn world facts into articles with exact provenance."""

from continuousbench.geminon.realizers.base import Draft, Realizer, make_realizer

__all__ = ["Draft", "Realizer", "make_realizer"]
