"""A page's publication day, only from where a publisher states one: its metadata, a ``<time>`` element,
its URL.

htmldate's ``find_date`` (what trafilatura calls) falls back to any date-like text on the page, a
"(c) 2026" footer or a ``copyrightYear`` included, which it dates January 1st: an old article would then
pass a quarter's window as this quarter's news. Here the three sources that state the publication of
*this* page are read in htmldate's order (its parsers, its validation against the crawl day) and nothing
else; a page none of them dates gets no date (the extract stage drops it when a window is asked for).

- ``url``: a full year/month/day in the page's URL (or its canonical link), the most reliable cue on
  news sites.
- ``metadata``: ``<meta>`` publication dates (``article:published_time``, Dublin Core, ``datePublished``
  and the like; not modification dates, not a copyright year) and JSON-LD ``datePublished``.
- ``time``: ``<time>`` elements (``datetime`` attribute or text), a ``pubdate`` one first.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

SOURCES = ("url", "metadata", "time")
JSON_PUBLISHED = re.compile(r'"datePublished"\s*:\s*"([^"]{6,64})"')  # JSON-LD, any date format
NOT_PUBLICATION = {"gentime"}  # in htmldate's list, but the time the page was generated (served)


def _options(max_day: str | None):
    from htmldate.utils import Extractor
    from htmldate.validators import get_max_date, get_min_date

    # "extensive" lets htmldate parse any date expression ("Wed Nov 20 2019 08:00:58 GMT"); it is only
    # ever given the values of the three sources, never the page's text
    return Extractor(True, get_max_date(max_day), get_min_date(None), True, "%Y-%m-%d")


def _from_url(tree: HtmlElement, url: str | None, options) -> str | None:
    from htmldate.extractors import extract_url_date

    canonical = tree.find('.//link[@rel="canonical"]')
    candidates = [url, canonical.get("href") if canonical is not None else None]
    return next((day for c in candidates if c and (day := extract_url_date(c, options))), None)


def _from_metadata(tree: HtmlElement, options) -> str | None:
    from htmldate.core import DATE_ATTRIBUTES
    from htmldate.extractors import try_date_expr_opts

    for meta in tree.iterfind(".//meta"):
        key = (meta.get("name") or meta.get("property") or meta.get("itemprop") or "").lower()
        published = key in DATE_ATTRIBUTES - NOT_PUBLICATION or key in ("datepublished", "datecreated")
        published |= (meta.get("pubdate") or "").lower() == "pubdate"
        published |= (meta.get("http-equiv") or "").lower() == "date"
        if published and (day := try_date_expr_opts(meta.get("datetime") or meta.get("content"), options)):
            return day
    for script in tree.iterfind('.//script[@type="application/ld+json"]'):
        for value in JSON_PUBLISHED.findall(script.text or ""):
            if day := try_date_expr_opts(value, options):
                return day
    return None


def publication_date(
    tree: HtmlElement, url: str | None, max_day: str | None
) -> tuple[str | None, str | None]:
    """``(day, source)`` of the page's publication, ``source`` one of :data:`SOURCES`; ``(None, None)``
    when none of them states it. ``max_day`` (the crawl day) bounds it: a page is not published after
    it was fetched."""
    options = _options(max_day)
    if day := _from_url(tree, url, options):
        return day, "url"
    if day := _from_metadata(tree, options):
        return day, "metadata"
    from htmldate.core import examine_time_elements  # <time> elements, a "pubdate" one first

    if day := examine_time_elements(tree, options):
        return day, "time"
    return None, None
