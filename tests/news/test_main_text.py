"""The rules news/main_text.py adds around trafilatura, on small pages written here."""

from __future__ import annotations

from continuousbench.news.article_steps import extract_page

URL = "https://town.example/2026/01/05/river-path"


def paragraphs(topic: str, n: int) -> str:
    return "".join(
        f"<p>Paragraph {i} on {topic}: the council met on Tuesday and voted to widen the river path, after "
        "residents asked for safer crossings near the school and the market hall.</p>"
        for i in range(n)
    )


def page(main: str) -> str:
    return (
        f"<html><head><title>River path widened</title></head><body><nav><a href='/'>Home</a> "
        f"<a href='/news'>News</a></nav><main>{main}</main><footer>Copyright 2026 The Town Paper</footer>"
        "</body></html>"
    )


def text(html: str) -> str:
    return extract_page(html, URL, None)["text"]


def test_an_article_body_split_by_an_advertisement_row_is_read_whole():
    first, second = paragraphs("the first half", 4), paragraphs("the second half", 4)
    found = text(
        page(
            "<article><h1>River path widened</h1>"
            f"<div class='grid'><div class='article-body'>{first}</div></div>"
            "<div class='row ad-row'><span>Advertisement</span></div>"
            f"<div class='grid'><div class='article-body'>{second}</div></div></article>"
        )
    )
    assert "Paragraph 3 on the first half" in found and "Paragraph 3 on the second half" in found
    assert "Advertisement" not in found
    assert found.index("Paragraph 3 on the first half") < found.index("Paragraph 0 on the second half")


def test_bodies_of_different_articles_are_not_joined():
    vote, bakery = paragraphs("the vote", 5), paragraphs("the bakery", 5)
    found = text(
        page(
            f"<article><h1>River path widened</h1><div class='article-body'>{vote}</div></article>"
            f"<article><h2>Next story: bakery reopens</h2><div class='article-body'>{bakery}</div></article>"
        )
    )
    assert "Paragraph 4 on the vote" in found and "the bakery" not in found


def test_an_article_precision_mode_prunes_by_its_class_name_is_kept():
    # "barnet" (the paper's name) holds "bar", a navigation-bar token of trafilatura's boilerplate
    # classes: precision mode prunes the body before its readability fallback sees it
    standfirst = (
        "<p>Residents of the east bank will get a wider path and two new crossings, the council decided on "
        "Tuesday after a long debate about the cost of the works and the safety of children walking to "
        "school. Work starts in the spring and should be finished before the summer holidays.</p>"
    )
    found = text(
        page(
            f"<article id='article-content'><h1>River path widened</h1>{standfirst}"
            f"<div class='barnet-article-wrap'>{paragraphs('the vote', 6)}</div></article>"
        )
    )
    assert "Residents of the east bank" in found and "Paragraph 5 on the vote" in found
