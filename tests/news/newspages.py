"""News pages and WARC files for the NEWS tests and benchmark: several outlets report the same events.

Each event has facts (an answer string and the ways outlets phrase it). An outlet's article picks most
of the event's facts, phrases each in its own wording, and wraps them in its own page: navigation,
cookie banner, related links, reader comments and a footer around the article body, with the
publication date in the page's metadata. Reports differ in wording, publication day and numbers
where outlets disagree (a "crowd of 41,000" against "about 40,000").
"""

from __future__ import annotations

import html
import io
import random
import uuid
from dataclasses import dataclass

STOP_PHRASES = (
    "Officials said more details would follow in the coming days.",
    "The story is developing and will be updated.",
    "Local residents reacted with a mix of surprise and relief.",
    "Analysts said the decision could shape the rest of the year.",
    "Several people who spoke to reporters asked not to be named.",
    "A spokesperson declined to comment further on Monday evening.",
)


@dataclass(frozen=True)
class Fact:
    answer: str
    phrasings: tuple[str, ...]  # each with {a} where the answer goes


@dataclass(frozen=True)
class Event:
    key: str
    day: str  # the day it happened, YYYY-MM-DD
    titles: tuple[str, ...]
    facts: tuple[Fact, ...]


EVENTS: tuple[Event, ...] = (
    Event(
        "bridge",
        "2026-01-12",
        (
            "Harbour bridge reopens after two-year repair",
            "Port Elmsworth celebrates bridge reopening",
            "Elmsworth Harbour Bridge back in service",
        ),
        (
            Fact(
                "Mara Quintel",
                (
                    "The repair was led by chief engineer {a}, who spoke at the ceremony.",
                    "Chief engineer {a} led the repair work on the bridge.",
                    "The works were overseen by chief engineer {a}.",
                ),
            ),
            Fact(
                "412 million dollars",
                (
                    "The repair of the bridge cost {a} in total.",
                    "Officials put the total cost of the bridge repair at {a}.",
                    "The bridge repair cost {a}, according to the city.",
                ),
            ),
            Fact(
                "January 12, 2026",
                (
                    "The Elmsworth Harbour Bridge reopened to traffic on {a}.",
                    "Traffic returned to the Elmsworth Harbour Bridge on {a}.",
                ),
            ),
            Fact(
                "Ostrava Steelworks",
                (
                    "The new steel cables for the bridge were supplied by {a}.",
                    "Steel cables for the bridge came from {a}.",
                ),
            ),
        ),
    ),
    Event(
        "cup",
        "2026-01-18",
        (
            "Redwater Rovers win the Northern Cup",
            "Rovers lift Northern Cup after final win",
            "Northern Cup final: Redwater Rovers beat Castlegate",
        ),
        (
            Fact(
                "Tomasz Brenner",
                (
                    "Referee {a} took charge of the Northern Cup final.",
                    "The Northern Cup final was refereed by {a}.",
                    "Referee {a} was in charge of the final in Northern Cup.",
                ),
            ),
            Fact(
                "Lio Ferreira",
                (
                    "Striker {a} scored twice for Redwater Rovers in the final.",
                    "Two goals in the final came from Rovers striker {a}.",
                ),
            ),
            Fact(
                "Castlegate United",
                (
                    "Redwater Rovers beat {a} 3-1 in the Northern Cup final.",
                    "The Rovers defeated {a} 3-1 to win the final.",
                ),
            ),
            Fact(
                "Kelmore Stadium",
                (
                    "The Northern Cup final was played at {a} in front of a full crowd.",
                    "A full crowd watched the Northern Cup final at {a}.",
                ),
            ),
        ),
    ),
    Event(
        "election",
        "2026-02-03",
        (
            "Ilse Varga elected mayor of Drummond",
            "Drummond picks Varga as new mayor",
            "Varga wins Drummond mayoral race",
        ),
        (
            Fact(
                "Ilse Varga",
                (
                    "{a} was elected mayor of Drummond in the vote.",
                    "Voters in Drummond elected {a} as their new mayor.",
                    "The Drummond mayoral election was won by {a}.",
                ),
            ),
            Fact(
                "54 percent",
                (
                    "Varga won the Drummond mayoral vote with {a} of the ballots.",
                    "Varga took {a} of the ballots in the Drummond mayoral vote.",
                ),
            ),
            Fact(
                "Piet Almquist",
                (
                    "Her main rival in the Drummond race, {a}, conceded on election night.",
                    "Rival candidate {a} conceded the Drummond race on election night.",
                ),
            ),
        ),
    ),
    Event(
        "chip",
        "2026-02-10",
        (
            "Quillon Labs unveils Falcon X2 chip",
            "Falcon X2: Quillon's new processor",
            "Quillon Labs launches its Falcon X2 processor",
        ),
        (
            Fact(
                "Falcon X2",
                (
                    "Quillon Labs unveiled its new processor, the {a}, at an event in Tallinn.",
                    "At an event in Tallinn, Quillon Labs presented the processor called {a}.",
                ),
            ),
            Fact(
                "899 dollars",
                (
                    "The Quillon processor will sell for {a} when it ships.",
                    "Quillon Labs said the processor will be priced at {a}.",
                ),
            ),
            Fact(
                "Renata Okafor",
                (
                    "Quillon Labs chief executive {a} presented the processor on stage.",
                    "The processor was presented on stage by Quillon chief executive {a}.",
                ),
            ),
        ),
    ),
)

OUTLETS: tuple[tuple[str, str], ...] = (
    ("www.dailyharbor.com", "The Daily Harbor"),
    ("news.eastlandtimes.co.uk", "Eastland Times"),
    ("www.metroledger.net", "Metro Ledger"),
    ("www.valleypost.org", "Valley Post"),
    ("www.coastalherald.com", "Coastal Herald"),
    ("www.northgazette.com", "North Gazette"),
    ("www.capitalwire.com", "Capital Wire"),
    ("www.thelantern.news", "The Lantern"),
    ("www.riverbend-courier.com", "Riverbend Courier"),
)

_FILLER = "council residents weather market traffic school budget plan season report week city region people"
FILLER_WORDS = tuple(_FILLER.split()) + ("service", "station", "project", "street", "morning", "officials")

GERMAN = (
    "Die Stadtverwaltung hat am Montag neue Pläne für den Hafen vorgestellt. Nach Angaben der "
    "Behörden sollen die Arbeiten im Frühjahr beginnen und rund zwei Jahre dauern. Viele Anwohner "
    "begrüßten die Entscheidung, andere äußerten Bedenken wegen des zusätzlichen Verkehrs in der "
    "Innenstadt. Der Bürgermeister sagte, man werde die Bürger regelmäßig über den Fortschritt informieren."
)


def article(event: Event, outlet: int, rng: random.Random, day_offset: int = 0) -> dict:
    """One outlet's report of an event: title, publication day and paragraphs (plain text)."""
    facts = list(event.facts)
    rng.shuffle(facts)
    keep = facts[: max(2, len(facts) - rng.randrange(2))]
    sentences = [f.phrasings[(outlet + rng.randrange(3)) % len(f.phrasings)].format(a=f.answer) for f in keep]
    sentences += rng.sample(STOP_PHRASES, 2)
    rng.shuffle(sentences)
    filler = " ".join(rng.choice(FILLER_WORDS) for _ in range(18 + rng.randrange(12)))
    paragraphs = [" ".join(sentences[:2]), " ".join(sentences[2:]), f"In other notes: {filler}."]
    year, month, day = map(int, event.day.split("-"))
    return {
        "title": event.titles[outlet % len(event.titles)],
        "date": f"{year:04d}-{month:02d}-{day + day_offset:02d}",
        "paragraphs": paragraphs,
    }


def page(
    outlet: int, title: str, date: str, paragraphs: list[str], lang: str = "en", comments: int = 2
) -> str:
    """A realistic news page around an article body: navigation, banner, related links, comments."""
    host, name = OUTLETS[outlet % len(OUTLETS)]
    body = "\n".join(f"      <p>{html.escape(p)}</p>" for p in paragraphs)
    nav = "".join(
        f'<li><a href="/{s.lower()}">{s}</a></li>' for s in ("World", "Business", "Sport", "Culture")
    )
    related = "".join(
        f'<li><a href="/story/{i}">Read more: {html.escape(t)}</a></li>'
        for i, t in enumerate(("Ten things to do this weekend", "Markets close higher", "Your letters"))
    )
    notes = "".join(
        f'<div class="comment"><span class="author">reader{i}</span><p>Great piece, thanks for reporting '
        f"this, I had no idea about it. Comment number {i}.</p></div>"
        for i in range(comments)
    )
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)} | {name}</title>
<meta property="og:title" content="{html.escape(title)}">
<meta property="article:published_time" content="{date}T08:30:00+00:00">
<meta name="author" content="Staff reporter"></head>
<body>
  <div id="cookie-banner">We use cookies to improve your experience. <button>Accept all</button></div>
  <header><a class="logo" href="/">{name}</a><nav><ul>{nav}</ul></nav>
    <form class="search"><input name="q" placeholder="Search"></form></header>
  <main>
    <article>
      <h1>{html.escape(title)}</h1>
      <p class="byline">By Staff reporter, published <time datetime="{date}">{date}</time></p>
{body}
    </article>
    <aside><h3>Related stories</h3><ul>{related}</ul>
      <div class="newsletter">Sign up for our newsletter to get the top stories every morning.</div></aside>
    <section id="comments"><h3>Comments</h3>{notes}</section>
  </main>
  <footer><p>&copy; 2026 {name}. All rights reserved.</p><a href="/privacy">Privacy policy</a>
    <a href="/terms">Terms of use</a><a href="/contact">Contact us</a></footer>
</body></html>"""


# Clustering thresholds for these fixtures: events of ~8 reports, and TF-IDF vectors, whose cosines
# between reports of one event (~0.4) sit far below a sentence encoder's.
TINY_CLUSTERING = {"encoder": "tfidf", "min_cluster_size": 3, "min_similarity": 0.2}


def write_warc(path, records: list[dict], compress: bool = True) -> None:
    """Write response records (``url``, ``body`` bytes, ``content_type``, ``crawl_date``) with warcio.

    A ``warcinfo`` record comes first and a ``request`` record precedes each response, as in CC-News.
    Record ids are derived from the URL, not warcio's random ones: an article's id is its record's, so
    random ids changed each session's article order, hence the offline model's prompts and answers, and
    with them how many clusters kept questions (a test failed in one session in several).
    """

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=compress)
        writer.write_record(writer.create_warcinfo_record(str(path), {"software": "tests/news"}))
        for r in records:
            request = StatusAndHeaders(f"GET {r['url']} HTTP/1.1", [("Host", "x")], is_http_request=True)
            ids = {
                kind: f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, kind + ' ' + r['url'])}>"
                for kind in ("request", "response")
            }
            asked = {"WARC-Record-ID": ids["request"]}
            writer.write_record(
                writer.create_warc_record(r["url"], "request", http_headers=request, warc_headers_dict=asked)
            )
            headers = StatusAndHeaders(
                r.get("status", "200 OK"), [("Content-Type", r["content_type"])], protocol="HTTP/1.1"
            )
            warc_headers = {"WARC-Date": r["crawl_date"], "WARC-Record-ID": ids["response"]}
            writer.write_record(
                writer.create_warc_record(
                    r["url"],
                    "response",
                    payload=io.BytesIO(r["body"]),
                    http_headers=headers,
                    warc_headers_dict=warc_headers,
                )
            )


def event_records(per_event: int = 8, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """HTML response records for every event (``per_event`` outlets each), and the articles behind them."""
    rng = random.Random(seed)
    records, articles = [], []
    for e, event in enumerate(EVENTS):
        for k in range(per_event):
            outlet = (e + k) % len(OUTLETS)
            host, _ = OUTLETS[outlet]
            a = article(event, outlet, rng, day_offset=k % 3)
            a["url"] = f"https://{host}/{a['date'].replace('-', '/')}/{event.key}-{k}"
            articles.append(a)
            records.append(
                {
                    "url": a["url"],
                    "body": page(outlet, a["title"], a["date"], a["paragraphs"]).encode(),
                    "content_type": "text/html; charset=utf-8",
                    "crawl_date": f"{a['date']}T12:00:00Z",
                }
            )
    return records, articles


def special_records() -> list[dict]:
    """The awkward cases of a real crawl: non-HTML, non-English, no article text, an error status."""
    return [
        {
            "url": "https://www.dailyharbor.com/feed.json",
            "body": b'{"items": []}',
            "content_type": "application/json",
            "crawl_date": "2026-01-13T00:00:00Z",
        },
        {
            "url": "https://www.zeitung.de/2026/01/14/hafen",
            "crawl_date": "2026-01-14T00:00:00Z",
            "body": page(0, "Neue Pläne für den Hafen", "2026-01-14", [GERMAN], lang="de").encode(),
            "content_type": "text/html; charset=utf-8",
        },
        {
            "url": "https://www.metroledger.net/gallery/1",
            "crawl_date": "2026-01-15T00:00:00Z",
            "body": page(2, "Photo gallery", "2026-01-15", [], comments=0).encode(),
            "content_type": "text/html; charset=utf-8",
        },
        {
            "url": "https://www.valleypost.org/moved",
            "body": b"<html><body>Moved</body></html>",
            "content_type": "text/html",
            "crawl_date": "2026-01-15T00:00:00Z",
            "status": "301 Moved Permanently",
        },
    ]


def random_article(i: int, rng: random.Random, words: int = 250) -> dict:
    """A generated article for benchmarks: an event report with filler prose, ~``words`` words."""
    event = EVENTS[i % len(EVENTS)]
    a = article(event, i, rng)
    filler = " ".join(rng.choice(FILLER_WORDS) + ("." if rng.random() < 0.08 else "") for _ in range(words))
    a["paragraphs"].append(filler)
    host, _ = OUTLETS[i % len(OUTLETS)]
    a["url"] = f"https://{host}/{a['date'].replace('-', '/')}/story-{i}"
    return a
