"""The extract stage's filter: whitespace, length, language and publication window, as a datatrove filter.

datatrove's ``BaseFilter`` owns the loop, the timing and the counters (``dropped_<reason>`` per reason);
:class:`ArticleFilter` only decides, one article at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter

from continuousbench.news.articles import normalize_text

LANGUAGE_CHARS = 2000  # py3langid reads this much of the text: enough for a reliable guess, and cheap


class ArticleFilter(BaseFilter):
    """Normalise whitespace, then keep long enough articles in the languages and window asked for.

    An article with no publication date is dropped when a window is asked for (``dropped_no_date``):
    nothing shows it belongs to the window, and a crawl date would let old pages in.
    """

    name = "article filter (length, language, window)"

    def __init__(
        self,
        languages: Sequence[str] = ("en",),
        min_chars: int = 200,
        start: str | None = None,
        end: str | None = None,
    ):
        super().__init__()
        self.languages, self.min_chars, self.start, self.end = set(languages), min_chars, start, end

    def reason(self, doc: Document) -> str | None:
        """Why ``doc`` goes (the counter's name without ``dropped_``), or None when it stays."""
        import py3langid

        doc.text = normalize_text(doc.text or "")
        if not doc.text:
            return "no_text"
        if len(doc.text) < self.min_chars:
            return "too_short"
        doc.metadata["language"] = py3langid.classify(doc.text[:LANGUAGE_CHARS])[0]
        if doc.metadata["language"] not in self.languages:
            return "non_english" if self.languages == {"en"} else "language"
        day = doc.metadata.get("date")
        if (self.start or self.end) and day is None:
            return "no_date"  # cannot show it is inside the window
        if (self.start and day < self.start) or (self.end and day > self.end):
            return "out_of_window"
        return None

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        why = self.reason(doc)
        if why:
            return False, why
        self.stat_update("articles")  # the stage's output count (datatrove's own is "forwarded")
        return True
