"""LLM realizer: robust parsing, provenance normalisation, drafting through an offline generator."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from ghost_entities import ghost

from continuousbench.geminon.realizers import make_realizer
from continuousbench.geminon.realizers.llm import LLMRealizer, normalize_feature, parse_articles
from continuousbench.geminon.schema import FEATURES, Geminon
from continuousbench.llm import OFFLINE, OfflineGenerator


def _geminon(idx: int, name: str, type2: str | None, line: tuple[str, ...]) -> Geminon:
    return ghost(
        idx,
        name,
        type2,
        classification="Spore Geminon",
        type1="ghost",
        ability="Suction Cups",
        evolution_line=line,
        move_description="A physical Ghost move with 110 power.",
        line=0,
        stage=line.index(name) + 1,
        subset="public",
    )


A = _geminon(10000, "Phantatch", None, ("Phantatch", "Phantrain"))
B = _geminon(10001, "Phantrain", "dark", ("Phantatch", "Phantrain"))

GOOD = {"text": "Phantatch is a ghost Geminon with 79 HP.", "used_1": ["name", "g1_info.type1", "HP"]}
MESSY = (
    "Sure! Here are your notes:\n```json\n[\n"
    + json.dumps(GOOD)
    + ',\n{"text": "Phantatch weighs 198 lbs and has 23 Sp. Atk.", "g1_info": ["weight_lbs", "sp_atk", '
    '"geminon1.name", "types", "favourite food"],},\n'
    '{"text": "broken " "used_1": [}\n,'
    '{"used_1": ["name"]}\n]\n```\nLet me know if you want more.'
)


def test_parse_articles_salvages_fenced_list_with_prose_trailing_commas_and_bad_items():
    items, stats = parse_articles(MESSY)
    assert [i["text"][:9] for i in items] == ["Phantatch", "Phantatch"]
    assert stats == {"dropped_missing_text": 1}  # the broken item is skipped by the one parser (llm/parse.py)


def test_parse_articles_clean_and_hopeless_inputs():
    items, stats = parse_articles(json.dumps([GOOD, GOOD], indent=2))
    assert len(items) == 2 and not stats
    items, stats = parse_articles("I cannot help with that.")
    assert items == [] and stats == {"dropped_malformed_output": 1}
    items, stats = parse_articles('[{"text": "a"}, 3, {"text": ""}]')
    assert len(items) == 1 and stats == {"dropped_not_an_object": 1, "dropped_missing_text": 1}


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("sp_atk", "special attack"),
        ("special_attack", "special attack"),
        ("Sp. Def", "special defense"),
        ("bst", "base_stat_total"),
        ("base stat total", "base_stat_total"),
        ("move", "move.name"),
        ("move_name", "move.name"),
        ("move.description", "move.short_description"),
        ("weight_lbs", "weight"),
        ("g1_info.hp", "hp"),
        ("geminon2.speed", "speed"),
        ("Geminon 1: Classification", "classification"),
        ("`evolution line`", "evolution_line"),
        ("special_defense", "special defense"),
        ("Type 2", "type2"),
        ("move.short_description", "move.short_description"),
        ("favourite food", None),
        ("", None),
    ],
)
def test_normalize_feature(raw, want):
    assert normalize_feature(raw) == want


def test_every_canonical_feature_maps_to_itself():
    assert all(normalize_feature(f) == f for f in FEATURES)


def test_llm_realizer_drafts_normalised_mentions_and_counts_drops():
    prompts = []

    def fake(prompt, **sampling):
        prompts.append(prompt)
        return MESSY

    realizer = LLMRealizer(OfflineGenerator(fake), articles_per_call=2)
    drafts = realizer.draft("wiki", [A], seed=3, n=3)
    assert len(prompts) == 2 and "Phantatch" in prompts[0] and prompts[0] != prompts[1]
    assert len(drafts) == 3 and all(d.text and d.style == "wiki" and d.subjects == (10000,) for d in drafts)
    assert drafts[0].mentions == ((10000, "name"), (10000, "type1"), (10000, "hp"))
    # "types" expands to type1 only (A has no second type); the unknown key is counted, not kept
    assert drafts[1].mentions == (
        (10000, "name"),
        (10000, "type1"),
        (10000, "special attack"),
        (10000, "weight"),
    )
    assert realizer.stats["unresolved_feature"] == 2 and realizer.stats["dropped_missing_text"] == 2
    assert realizer.render(drafts, {10000: A}) == [d.text for d in drafts]


def test_comparison_provenance_goes_to_the_right_entity_and_strict_mode_drops_ungrounded():
    answer = json.dumps(
        [
            {
                "text": "Phantrain (84 speed) is as fast as Phantatch (84 speed).",
                "g1_info": ["speed", "name"],
                "g2_info": ["speed"],
            },
            {"text": "Phantatch has 999 attack.", "g1_info": ["name", "atk"], "g2_info": []},
        ]
    )
    OFFLINE["test-cmp"] = lambda prompt, **s: answer
    realizer = make_realizer("offline:test-cmp", articles_per_call=2, strict=True)
    drafts = realizer.draft("comparison", [A, B], seed=0, n=2)
    assert len(drafts) == 1 and realizer.stats["dropped_ungrounded"] == 1
    assert drafts[0].mentions == ((10000, "name"), (10000, "speed"), (10001, "name"), (10001, "speed"))
    assert realizer.stats["added_name_mention"] == 1


def test_unusable_sensitive_drafts_are_dropped_by_reason_and_none_left_is_one_line():
    import numpy as np

    from continuousbench.errors import UserError
    from continuousbench.geminon.corpus import sensitive_articles

    secret = replace(A, subset="sensitive")
    ungrounded = {"text": "Phantatch has 999 attack.", "g1_info": ["name", "atk"]}
    good = {"text": "Phantatch has 79 HP.", "g1_info": ["name", "hp"]}
    realizer = LLMRealizer(
        OfflineGenerator(lambda p, **s: json.dumps([ungrounded, good])), articles_per_call=2
    )
    (article,), stats = sensitive_articles(realizer, [secret, B], np.random.default_rng(0), n_candidates=2)
    assert article.text == good["text"] and stats["dropped_ungrounded"] == 1
    realizer = LLMRealizer(OfflineGenerator(lambda p, **s: json.dumps([ungrounded, ungrounded, "x"])))
    with pytest.raises(UserError) as err:
        sensitive_articles(realizer, [secret, B], np.random.default_rng(0), n_candidates=3)
    assert str(err.value).startswith(
        "--realizer llm:offline gave no usable article for sensitive entity 10000 (Phantatch): 2 of 3 drafts "
        "readable, 2 ungrounded; use a stronger model or raise --sensitive_candidates"
    ) and "\n" not in str(err.value)


def test_draft_seeds_fit_in_63_bits_whatever_the_unit_seed():
    realizer = LLMRealizer(OfflineGenerator(lambda p, **s: MESSY), articles_per_call=2)
    seeds = [d.seed for d in realizer.draft("wiki", [A], seed=2**62 - 1, n=3)]
    assert len(set(seeds)) == 3 and all(0 <= s < 2**63 for s in seeds)
    assert seeds == [d.seed for d in realizer.draft("wiki", [A], seed=2**62 - 1, n=3)]


def test_render_refuses_text_less_drafts():
    from continuousbench.geminon.realizers import Draft

    with pytest.raises(ValueError, match="no text"):
        LLMRealizer(OfflineGenerator(lambda p, **s: "[]")).render([Draft("wiki", (1,), (), 0)], {})


# -- a whole release through the LLM realizer ------------------------------------------------------

_RECORD = re.compile(r"^(?:Geminon|Stage) \d+:\n(\{.*?\n\})", re.MULTILINE | re.DOTALL)
# How a model words each fact, and the provenance key it lists for it (aliases, as models write them).
_SAY = {
    "name": ("{name} has a page in the Gemidex.", "name"),
    "classification": ("{name} is known as the {classification}.", "classification"),
    "type1": ("{name} has {type1} typing.", "type"),
    "ability": ("The ability of {name} is {ability}.", "abilities"),
    "hp": ("{name} has {hp} HP.", "HP"),
    "attack": ("{name} has an attack of {attack}.", "atk"),
    "defense": ("{name} has a defense of {defense}.", "def"),
    "special attack": ("{name} has {special attack} special attack.", "sp_atk"),
    "special defense": ("{name} has {special defense} special defense.", "Sp. Def"),
    "speed": ("{name} has a speed of {speed}.", "spe"),
    "base_stat_total": ("{name} has a base stat total of {base_stat_total}.", "bst"),
    "weight": ("{name} weighs {weight} lbs.", "weight_lbs"),
    "height": ("{name} stands {height} m tall.", "height (m)"),
    "evolution_line": ("The evolution line of {name} is {line}.", "evolution line"),
    "move": ("{name} knows {move}: {description}", "move details"),
}


def scripted_articles(prompt: str, **sampling) -> str:
    """A stand-in for an instruction model: realistic JSON about the prompt's Geminon, some of it broken.

    Article i of a batch states a rotating subset of facts (the first states them all); some answers come
    fenced with chatter and trailing commas, some items are malformed or lack a text, one batch in five
    is a refusal, and one article in nine states a number that is in no data (the audit must drop it).
    """
    k = int(re.search(r"JSON list of exactly (\d+) objects", prompt).group(1))
    batch = int(re.search(r"Batch (\d+):", prompt).group(1))
    if batch % 1000 % 5 == 4:
        return "I'm sorry, I can't write these articles."
    records = [json.loads(block) for block in _RECORD.findall(prompt)]
    facts = [f for f in _SAY if f != "type1"]
    items = []
    for i in range(k):
        item: dict = {"text": []}
        for pos, r in enumerate(records, 1):
            values = {**r, "line": ", ".join(r["evolution_line"]), "move": r["move"]["name"]}
            values["description"] = r["move"]["short_description"]
            values["type1"] = r["type1"] if r["type2"] is None else f"{r['type1']} and {r['type2']}"
            chosen = (
                ["name", "type1", *facts[1:]] if i == 0 else ["name", "type1", facts[(batch + i) % 13 + 1]]
            )
            item["text"] += [_SAY[f][0].format(**values) for f in chosen]
            keys = [_SAY[f][1] if f != "type1" or r["type2"] is None else "types" for f in chosen]
            item[f"used_{pos}" if i % 2 else f"g{pos}_info"] = keys
        if i % 9 == 8:
            item["text"].append("It won 12345 battles last season.")
        item["text"] = " ".join(item["text"])
        items.append(item)
    answer = json.dumps(items, indent=1)
    if batch % 3 == 1:  # one broken item (the list no longer parses) and one without text
        answer = answer[:-1] + ', {"text": "Half an article" "used_1": [}, {"used_1": ["name"]}]'
    if batch % 7 == 2:
        answer = "Sure! Here they are:\n```json\n" + answer[:-1] + ",\n]\n```\nWant more?"
    return answer


def counted(asked: list[str], stop_after: int | None = None):
    """``scripted_articles`` recording each prompt in ``asked``; Ctrl-C at call ``stop_after + 1``."""

    def answer(prompt: str, **sampling) -> str:
        if stop_after is not None and len(asked) == stop_after:
            raise KeyboardInterrupt
        asked.append(prompt)
        return scripted_articles(prompt, **sampling)

    return answer


@pytest.mark.slow  # ~15 s: CI only, not the fast lane
def test_llm_realizer_builds_a_tiny_release_end_to_end_and_resumes_after_ctrl_c(tmp_path, monkeypatch):
    from datasets import load_dataset

    from continuousbench.geminon.build import DRAFTS, GeminonBuildArguments, build_release
    from continuousbench.geminon.realizers.checkpoint import DraftLog
    from continuousbench.geminon.realizers.grounding import check_grounding

    whole: list[str] = []
    monkeypatch.setitem(OFFLINE, "scripted", counted(whole))
    args = GeminonBuildArguments(
        out=str(tmp_path), realizer="offline:scripted", oversample=2.0, sensitive_candidates=10
    )
    path = build_release(args, progress=False)
    manifest = json.loads((path / "release.json").read_text())
    report = manifest["generator"]
    assert report["realizer"] == "offline:scripted" and report["audited"]
    assert report["namer_stats"] == {}  # the offline namer: nothing asked, no fallback
    drops = report["realizer_stats"]
    assert drops["dropped_missing_text"] > 0 and drops["short_of_requested"] > 0
    assert drops["dropped_malformed_output"] > 0 and drops["articles"] > 1000
    assert report["dropped_after_render"]["dropped_ungrounded"] > 0
    world = {r["idx"]: Geminon.from_record(r) for r in load_dataset(str(path), "entities", split="train")}
    corpus = load_dataset(str(path), "corpus")
    docs = [d for split in corpus.values() for d in split]
    assert not [d["id"] for d in docs if check_grounding(d["text"], d["mentions"], world)]
    sensitive = {i for i, g in world.items() if g.subset == "sensitive"}
    articles = [d for d in corpus["train"] if d["subset"] == "sensitive"]
    assert sorted(d["entities"][0] for d in articles) == sorted(sensitive)
    for d in articles:  # the first article of a batch states every fact: the best-covering one is kept
        (e,) = d["entities"]
        assert set(d["mentions"]) == {f"{e}:{f}" for f in world[e].features()}
    singleton = load_dataset(str(path), "qa_singleton", split="test")
    assert set(singleton["support_count"]) == {1}
    counts = report["documents"]
    assert set(counts) == {"wiki", "journal", "evolution", "comparison", "sensitive"}
    assert sum(counts.values()) == len(docs) > 1000

    # Ctrl-C half-way through drafting keeps every finished unit; --resume asks only for the rest
    other = replace(args, out=str(tmp_path / "again"))
    before: list[str] = []
    monkeypatch.setitem(OFFLINE, "scripted", counted(before, stop_after=len(whole) // 2))
    with pytest.raises(KeyboardInterrupt):
        build_release(other, progress=False)
    (work,) = (tmp_path / "again" / ".work").iterdir()
    assert sorted(p.name for p in work.iterdir()) == [DRAFTS, "settings.json", "world.json"]
    (work / DRAFTS).write_bytes((work / DRAFTS).read_bytes() + b'{"key": "cut by the kill')
    units = len(DraftLog(work / DRAFTS).done)  # the cut line is dropped
    after: list[str] = []
    monkeypatch.setitem(OFFLINE, "scripted", counted(after))
    again = build_release(replace(other, resume=True), progress=False)
    redone = set(before) & set(after)  # the calls of the one unit cut by Ctrl-C
    assert units > 10 and 0 < len(redone) < 10 and len(set(whole)) == len(whole)
    assert len(after) == len(whole) - (len(before) - len(redone)) and set(before) | set(after) == set(whole)
    assert {f: b for f, b in _files(again).items()} == _files(path)  # the same bytes as uninterrupted


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
