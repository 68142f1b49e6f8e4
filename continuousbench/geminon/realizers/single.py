"""Renders one-entity articles (wiki: encyclopedic; journal: a trainer's first-person notes).

Each mentioned feature becomes part of exactly one sentence unit (the wiki infobox may restate it);
units are ordered by the article's theme, the rest shuffled, some joined by fact-free connectives.
"""

from __future__ import annotations

import random
import re

from continuousbench.geminon.realizers import phrases as ph
from continuousbench.geminon.schema import STATS, Geminon

# Which unit leads the body for each theme (after the introduction); others follow in random order.
_LEAD = {
    "kit": "move",
    "stats": "stat",
    "physical": "body",
    "evolution": "evo",
    "typing": "ty",
    "offence": "stat",
    "defence": "stat",
    "tempo": "stat",
    "ability": "ab",
    "move": "move",
    "size": "body",
    "teamfit": "bst",
}
_CLOSERS = (
    "More notes after the next outing.",
    "Adding it to my shortlist.",
    "Need to see more of it.",
    "That's all for today.",
    "I'll keep an eye on this one.",
    "",
    "",
    "",
)
_ARTICLE = re.compile(r"\b([Aa]) (?=[AEIOUaeiou])")


def band(value: int, bands, rng: random.Random) -> str:
    return rng.choice(next(words for top, words in bands if value < top))


def typing(e: Geminon, rng: random.Random) -> dict[str, str]:
    """Typing as a plain phrase, an adjective and a noun phrase ("Ghost and Dark" for two types)."""
    if e.type2 is None:
        return {
            "ty": rng.choice((f"pure {e.type1}", e.type1)),
            "tyA": rng.choice((f"{e.type1}-type", f"pure {e.type1}-type")),
            "tyN": f"the {e.type1} type",
        }
    both = f"{e.type1} and {e.type2}"
    return {"ty": both, "tyA": rng.choice((f"{both} type", f"dual-type {both}")), "tyN": f"the {both} types"}


def line_phrase(names: tuple[str, ...], rng: random.Random) -> str:
    k = rng.randrange(3)
    if k == 0:
        return " → ".join(names)
    if k == 1:
        return ", ".join(names[:-1]) + " and " + names[-1]
    return ", then ".join(names)


def stage_word(e: Geminon) -> str:
    pos, last = e.evolution_line.index(e.name), len(e.evolution_line) - 1
    return "first" if pos == 0 else "final" if pos == last else "middle"


def values(e: Geminon, rng: random.Random) -> dict[str, object]:
    ref = rng.random() < 0.5
    return {
        "N": e.name,
        "P": e.name if ref else "It",
        "p": e.name if ref else "it",
        "Ps": f"{e.name}'s" if ref else "Its",
        "ps": f"{e.name}'s" if ref else "its",
        "cls": e.classification,
        "ab": e.ability,
        "mv": e.move_name,
        "desc": e.move_description,
        "w": e.weight,
        "h": e.height,
        "bst": e.base_stat_total,
        **typing(e, rng),
        "line": line_phrase(e.evolution_line, rng),
        "pos": stage_word(e),
    }


def _stat_units(style: str, e: Geminon, stats: list[str], rng: random.Random) -> list[tuple[str, dict]]:
    """Split the mentioned stats into single, paired (a judged contrast) and listed sentences."""
    units = []
    label = {s: rng.choice(ph.STAT_LABELS[s]) for s in stats}
    while stats:
        r = rng.random()
        if len(stats) >= 3 and r < 0.35:
            k = rng.randint(3, len(stats))
            chunk, stats = stats[:k], stats[k:]
            items = [rng.choice(("{lab} {v}", "{v} {lab}")).format(lab=label[s], v=e.value(s)) for s in chunk]
            units.append(("stat_list", {"items": ", ".join(items[:-1]) + " and " + items[-1]}))
        elif len(stats) >= 2 and r < 0.7 and e.value(stats[0]) != e.value(stats[1]):
            hi, lo = sorted(stats[:2], key=e.value, reverse=True)
            stats = stats[2:]
            units.append(
                ("stat_pair", {"lab1": label[hi], "v1": e.value(hi), "lab2": label[lo], "v2": e.value(lo)})
            )
        else:
            s, stats = stats[0], stats[1:]
            units.append(
                ("stat", {"lab": label[s], "v": e.value(s), "adj": band(e.value(s), ph.STAT_BANDS, rng)})
            )
    return units


def _units(style: str, e: Geminon, feats: set[str], rng: random.Random) -> list[tuple[str, dict]]:
    units: list[tuple[str, dict]] = []
    if "classification" in feats:
        units.append(("cls", {}))
    if "type1" in feats:
        units.append(("ty", {}))
    if "ability" in feats:
        units.append(("ab", {}))
    if "base_stat_total" in feats:
        units.append(("bst", {"adj": band(e.base_stat_total, ph.BST_BANDS, rng)}))
    w, h = "weight" in feats, "height" in feats
    if w and h and rng.random() < 0.7:
        units.append(("body", {"adj": band(e.weight, ph.WEIGHT_BANDS, rng)}))
    else:
        units += [(k, {}) for k, on in (("weight", w), ("height", h)) if on]
    if "evolution_line" in feats:
        units.append(("evo_multi" if len(e.evolution_line) > 1 else "evo_single", {}))
    if "move.name" in feats:
        units.append(("move_desc" if "move.short_description" in feats else "move", {}))
    stats = [s for s in STATS if s in feats]
    rng.shuffle(stats)
    return units + _stat_units(style, e, stats, rng)


def _sentence(template: str, vals: dict, extra: dict, connective: str = "") -> str:
    text = template.format(**vals, **extra) if extra else template.format(**vals)
    if connective:
        # Lower the first letter only where it is ordinary prose, never a name, label or "I".
        literal = not template.startswith("{") and not template.startswith("I ")
        pronoun = template.startswith(("{P}", "{Ps}")) and text.startswith("It")
        text = connective + (text[0].lower() + text[1:] if literal or pronoun else text)
    return text[0].upper() + text[1:]


def _infobox(e: Geminon, feats: set[str], vals: dict, rng: random.Random) -> str:
    rows = [
        ("Name", e.name, "name"),
        ("Classification", e.classification, "classification"),
        ("Type", vals["ty"].removeprefix("pure "), "type1"),
        ("Ability", e.ability, "ability"),
        *((ph.STAT_LABELS[s][1], e.value(s), s) for s in STATS),
        ("Base stat total", e.base_stat_total, "base_stat_total"),
        ("Height", f"{e.height} m", "height"),
        ("Weight", f"{e.weight} lbs", "weight"),
        ("Evolution line", " → ".join(e.evolution_line), "evolution_line"),
        ("Move", e.move_name, "move.name"),
        ("Move effect", e.move_description, "move.short_description"),
    ]
    lines = [f"{label}: {value}" for label, value, f in rows if f in feats]
    return rng.choice(ph.INFOBOX_HEADERS) + "\n" + "\n".join(lines)


def render(style: str, theme: str, e: Geminon, feats: set[str], rng: random.Random) -> str:
    bank = ph.WIKI if style == "wiki" else ph.JOURNAL
    vals = values(e, rng)
    fold_cls = "classification" in feats and rng.random() < 0.6
    fold_ty = "type1" in feats and rng.random() < 0.4
    intro = "intro" + ("_cls" if fold_cls else "") + ("_ty" if fold_ty else "")
    rest = feats - ({"classification"} if fold_cls else set()) - ({"type1", "type2"} if fold_ty else set())
    units = _units(style, e, rest, rng)
    rng.shuffle(units)
    lead = _LEAD.get(theme)
    units.sort(key=lambda u: not u[0].startswith(lead)) if lead else None
    boxed = style == "wiki" and (theme == "infobox" or (theme == "glance" and rng.random() < 0.4))
    if boxed:  # a short prose lead, then a "Label: value" card restating every mentioned fact
        units = units[: rng.randint(0, min(2, len(units)))]
    sentences = [_sentence(rng.choice(bank[intro]), vals, {})]
    connectives = rng.sample(ph.CONNECTIVES[style], len(ph.CONNECTIVES[style]))  # each used at most once
    for i, (key, extra) in enumerate(units):
        conn = connectives.pop() if i and connectives and rng.random() < 0.25 else ""
        sentences.append(_sentence(rng.choice(bank[key]), vals, extra, conn))
    text = " ".join(sentences)
    if boxed:
        text += "\n\n" + _infobox(e, feats, vals, rng)
    elif style == "journal":
        text = (text + " " + rng.choice(_CLOSERS)).rstrip()
    return _ARTICLE.sub(r"\1n ", text)
