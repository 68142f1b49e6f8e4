"""A page's main text and title: trafilatura 2 in its precision mode, and two rules we add around it.

Measured on the Scrapinghub article-extraction benchmark (docs/news-extract.md, "Extraction quality"):

- An article body split into chunks (an advertisement row between them, as on Wired) is joined first:
  trafilatura reads only the first element its article-body selectors match.
- A short precision-mode text is replaced by the balanced mode's when that has several times more prose:
  precision mode prunes by class-name tokens before its readability fallback runs, so a body whose
  class holds one by accident ("bar" in a site's name) is lost, while the balanced mode recovers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml.html import HtmlElement
    from trafilatura.settings import Document

# A precision-mode text below this many characters (a short news item is ~1,000) is checked against the
# balanced mode: the second extraction is paid only on short pages.
SHORT_TEXT = 1000
# ... and replaced when the balanced mode finds at least this many times more prose. Precision's own
# trimming (a caption, a related-links line) costs 5-40% of the text; losing the article costs most of it.
LOST_ARTICLE_RATIO = 2.0
# Prose is counted in lines (paragraphs) of at least this many characters, a sentence or more: what the
# balanced mode adds on a page with no article (a gallery, a bare index) is menus, bylines and link
# lists, short lines that must not replace precision's near-empty text.
PROSE_LINE = 80


def prose_chars(text: str) -> int:
    """Characters in the text's lines of :data:`PROSE_LINE` characters or more."""
    return sum(len(line) for line in text.splitlines() if len(line.strip()) >= PROSE_LINE)


def join_split_body(tree: HtmlElement) -> int:
    """Move into the first article-body element trafilatura would read the children of the later ones of
    the same tag and class in the same ``<article>`` (one article, by HTML's definition), removing them:
    a body split by advertisement rows. Returns how many were joined (0 outside an ``<article>``, where
    the later ones may be other articles: a list page, or the next story of an endless scroll)."""
    from trafilatura.xpaths import BODY_XPATH

    if tree.find(".//article") is None:  # the cheap common answer: BODY_XPATH's regexes cost ~1 ms a page
        return 0
    for expr in BODY_XPATH:
        found = [e for e in expr(tree) if e is not None]
        if not found:
            continue
        first = found[0]
        article = next(first.iterancestors("article"), None)
        if article is None:
            return 0
        parts = [
            e
            for e in found[1:]
            if (e.tag, e.get("class")) == (first.tag, first.get("class"))
            and next(e.iterancestors("article"), None) is article
            and first not in e.iterancestors()
            and e not in first.iterancestors()
        ]
        for part in parts:
            first.extend(list(part))
            part.getparent().remove(part)
        return len(parts)
    return 0


def _trafilatura(tree: HtmlElement, url: str | None, precision: bool, metadata: bool) -> Document | None:
    from trafilatura import bare_extraction

    # trafilatura's own date search is not used (see news/dates.py): its cheapest mode keeps it short
    return bare_extraction(
        tree, url=url, with_metadata=metadata, include_comments=False, include_tables=True,
        favor_precision=precision, deduplicate=False, date_extraction_params={"extensive_search": False},
    )  # fmt: skip


def main_text(tree: HtmlElement, url: str | None) -> Document | None:
    """trafilatura's document (title, hostname, text) of a parsed page, or None when it finds no text.
    ``tree`` is changed (split bodies joined); trafilatura itself works on copies."""
    join_split_body(tree)
    found = _trafilatura(tree, url, precision=True, metadata=True)
    if found is None or len(found.text or "") >= SHORT_TEXT:
        return found
    balanced = _trafilatura(tree, url, precision=False, metadata=False)
    text = balanced.text if balanced is not None else ""
    if text and prose_chars(text) >= LOST_ARTICLE_RATIO * len(found.text or ""):
        found.text = text
    return found
