"""Renders articles about several Geminon: evolution narratives (a whole line) and comparisons (two).

Judgments (trend verbs, "biggest jump", "faster", "bulkier", "at least twice") are computed from
values that are mentioned for every entity they involve, and the sentence stating them also states
those values; no derived number is ever written.
"""

from __future__ import annotations

import random

from continuousbench.geminon.realizers import phrases as ph
from continuousbench.geminon.realizers import phrases_multi as pm
from continuousbench.geminon.realizers import single
from continuousbench.geminon.schema import STATS, Geminon

NUMERIC = (*STATS, "base_stat_total", "weight", "height")
STRINGS = ("classification", "ability", "move.name")
LABEL = {"hp": "HP", "base_stat_total": "base stat total", "move.name": "move"} | {
    f: f for f in (*STATS[1:], "weight", "height", "classification", "ability")
}
# Which features a theme puts first; the rest follow in random order.
_LEAD = {
    "growth": "weight",
    "offence": "attack",
    "defence": "hp",
    "tempo": "speed",
    "types": "type1",
    "ability": "ability",
    "moves": "move.name",
    "breakpoint": "base_stat_total",
    "summary": "base_stat_total",
    "physical": "weight",
    "bulk": "hp",
    "utility": "ability",
    "overall": "base_stat_total",
}


def fmt(e: Geminon, f: str) -> str:
    v = e.value(f)
    return f"{v} lbs" if f == "weight" else f"{v} m" if f == "height" else str(v)


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def _order(feats: set[str], theme: str, rng: random.Random) -> list[str]:
    order = [
        f for f in (*NUMERIC, "type1", *STRINGS, "move.short_description", "evolution_line") if f in feats
    ]
    rng.shuffle(order)
    order.sort(key=lambda f: f != _LEAD.get(theme))
    return order


def _finish(sentences: list[str], close: tuple[str, ...], rng: random.Random) -> str:
    text = " ".join(_cap(s) for s in [*sentences, rng.choice(close)] if s)
    return single._ARTICLE.sub(r"\1n ", text)


def _items(pairs: list[tuple[str, str]], rng: random.Random) -> str:
    form = rng.choice(("{v} for {n}", "{n} with {v}", "{n}: {v}"))
    items = [form.format(v=v, n=n) for n, v in pairs]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _evo_numeric(f: str, line: list[Geminon], names: dict, rng: random.Random) -> list[str]:
    vals = [e.value(f) for e in line]
    shown = {f"v{i + 1}": fmt(e, f) for i, e in enumerate(line)}
    trend = (vals[-1] > vals[0]) - (vals[-1] < vals[0])
    lab = LABEL[f]
    bank = pm.EVO_TREND3 if len(line) == 3 else pm.EVO_TREND2
    out = [
        rng.choice(bank).format(Lab=_cap(lab), lab=lab, verb=rng.choice(pm.TREND[trend]), **shown, **names)
    ]
    if vals[-1] > 2 * vals[0] and rng.random() < 0.5:
        out.append(rng.choice(pm.EVO_DOUBLE).format(lab=lab, **names))
    if len(line) == 3 and rng.random() < 0.5:
        steps = [(vals[i + 1] - vals[i], i) for i in range(2)]
        gain, i = max(steps)
        if gain > 0 and steps[0][0] != steps[1][0]:
            x, y = line[i], line[i + 1]
            out.append(
                rng.choice(pm.EVO_JUMP).format(lab=lab, x=x.name, y=y.name, vx=fmt(x, f), vy=fmt(y, f))
            )
    return out


def _evo_strings(f: str, line: list[Geminon], rng: random.Random) -> list[str]:
    lab = LABEL[f]
    vals = [e.value(f) for e in line]
    if len(set(vals)) == 1:
        return [rng.choice(pm.EVO_SAME).format(lab=lab, val=vals[0])]
    items = _items([(e.name, v) for e, v in zip(line, vals, strict=True)], rng)
    return [rng.choice(pm.EVO_LIST).format(Lab=_cap(lab), lab=lab, items=items)]


def _evo_types(line: list[Geminon], rng: random.Random) -> list[str]:
    items = _items([(e.name, single.typing(e, rng)["ty"]) for e in line], rng)
    out = [rng.choice(pm.EVO_LIST).format(Lab="Typing", lab="typing", items=items)]
    for x, y in zip(line, line[1:], strict=False):
        new = [t for t in (y.type1, y.type2) if t and t not in (x.type1, x.type2)]
        if new:
            out.append(rng.choice(pm.EVO_GAIN_TYPE).format(x=x.name, y=y.name, t=new[0]))
    return out


def render_evolution(theme: str, line: list[Geminon], feats: dict[int, set[str]], rng: random.Random) -> str:
    names = {"a": line[0].name, "b": line[1].name if len(line) == 3 else "", "z": line[-1].name}
    fs = feats[line[0].idx]
    if len(line) == 1:  # a single-stage line: say it does not evolve, then describe it as a whole
        head = rng.choice(pm.EVO_OPEN_SINGLE).format(**names)
        units = single._units("journal", line[0], fs - {"name", "evolution_line"}, rng)
        vals = single.values(line[0], rng)
        rng.shuffle(units)
        body = [single._sentence(rng.choice(ph.JOURNAL[k]), vals, x) for k, x in units]
        return _finish([head, *body], pm.EVO_CLOSE, rng)
    out = [rng.choice(pm.EVO_OPEN).format(line=single.line_phrase(line[0].evolution_line, rng), **names)]
    if rng.random() < 0.4:
        out.insert(0, rng.choice(pm.EVO_HEAD[theme]))
    ups, downs = [], []
    for f in _order(fs, theme, rng):
        if f in NUMERIC:
            out += _evo_numeric(f, line, names, rng)
            delta = line[-1].value(f) - line[0].value(f)
            (ups if delta > 0 else downs if delta < 0 else []).append(LABEL[f])
        elif f == "type1":
            out += _evo_types(line, rng)
        elif f in STRINGS:
            out += _evo_strings(f, line, rng)
        elif f == "move.short_description":
            out += [
                rng.choice(pm.MOVE_DESC).format(X=e.name, mv=e.move_name, desc=e.move_description)
                for e in line
            ]
    if ups and downs and rng.random() < 0.8:
        out.append(rng.choice(pm.EVO_TRADE).format(up=rng.choice(ups), down=rng.choice(downs), **names))
    return _finish(out, pm.EVO_CLOSE, rng)


def _degree(hi: int, lo: int, rng: random.Random) -> str:
    ratio = hi / lo if lo > 0 else float("inf")
    return rng.choice(next(words for bound, words in pm.DEGREES if ratio >= bound))


def _cmp_numeric(f: str, x: Geminon, y: Geminon, rng: random.Random) -> list[str]:
    lab = LABEL[f]
    if x.value(f) == y.value(f):
        return [rng.choice(pm.CMP_TIE).format(X=x.name, Y=y.name, lab=lab, lab_cap=_cap(lab), v=fmt(x, f))]
    w, lo = (x, y) if x.value(f) > y.value(f) else (y, x)
    args = {
        "W": w.name,
        "L": lo.name,
        "vw": fmt(w, f),
        "vl": fmt(lo, f),
        "lab": lab,
        "deg": _degree(w.value(f), lo.value(f), rng),
    }
    if f in pm.ADJ and rng.random() < 0.6:
        out = [rng.choice(pm.CMP_ADJ).format(adj=pm.ADJ[f][0], adj_lo=pm.ADJ[f][1], **args)]
    else:
        out = [rng.choice(pm.CMP_MORE).format(**args)]
    if w.value(f) >= 2 * lo.value(f) and rng.random() < 0.4:
        out.append(rng.choice(pm.CMP_TWICE).format(**args))
    return out


def _cmp_other(f: str, x: Geminon, y: Geminon, rng: random.Random) -> list[str]:
    if f == "type1":
        tx, ty = single.typing(x, rng)["ty"], single.typing(y, rng)["ty"]
        out = [rng.choice(pm.CMP_TYPES).format(X=x.name, Y=y.name, tx=tx, ty=ty)]
        shared = [t for t in (x.type1, x.type2) if t and t in (y.type1, y.type2)]
        return out + (
            [rng.choice(pm.SHARED_TYPE).format(t=shared[0])] if shared and rng.random() < 0.6 else []
        )
    if f == "move.short_description":
        return [
            rng.choice(pm.MOVE_DESC).format(X=e.name, mv=e.move_name, desc=e.move_description) for e in (x, y)
        ]
    if f == "evolution_line":
        return [
            rng.choice(pm.LINE_OF).format(X=e.name, line=single.line_phrase(e.evolution_line, rng))
            if len(e.evolution_line) > 1
            else rng.choice(pm.LINE_SINGLE).format(X=e.name)
            for e in (x, y)
        ]
    lab, va, vb = LABEL[f], x.value(f), y.value(f)
    if va == vb:
        return [rng.choice(pm.CMP_SAME).format(X=x.name, Y=y.name, lab=lab, v=va)]
    return [rng.choice(pm.CMP_PAIR).format(X=x.name, Y=y.name, lab=lab, lab_cap=_cap(lab), va=va, vb=vb)]


def render_comparison(theme: str, pair: list[Geminon], feats: dict[int, set[str]], rng: random.Random) -> str:
    x, y = pair if rng.random() < 0.5 else pair[::-1]
    fs = feats[x.idx]
    out = [rng.choice(pm.CMP_OPEN).format(X=x.name, Y=y.name)]
    if rng.random() < 0.4:
        out.insert(0, rng.choice(pm.CMP_HEAD[theme]))
    for f in _order(fs, theme, rng):
        out += _cmp_numeric(f, x, y, rng) if f in NUMERIC else _cmp_other(f, x, y, rng)
    bulk = [sum(e.value(s) for s in ("hp", "defense", "special defense")) for e in (x, y)]
    if {"hp", "defense", "special defense"} <= fs and bulk[0] != bulk[1] and rng.random() < 0.7:
        w, lo = (x, y) if bulk[0] > bulk[1] else (y, x)
        out.append(rng.choice(pm.CMP_BULK).format(W=w.name, L=lo.name))
    return _finish(out, pm.CMP_CLOSE, rng)
