"""LLM realizer: robust parsing, provenance normalisation, drafting through an offline generator."""

from __future__ import annotations

import json

import pytest

from continuousbench.geminon.realizers import make_realizer
from continuousbench.geminon.realizers.llm import LLMRealizer, normalize_feature, parse_articles
from continuousbench.geminon.schema import FEATURES, Geminon
from continuousbench.llm import OFFLINE, OfflineGenerator


def _geminon(idx: int, name: str, type2: str | None, line: tuple[str, ...]) -> Geminon:
    return Geminon(
        idx=idx,
        name=name,
        classification="Spore Geminon",
        type1="ghost",
        type2=type2,
        ability="Suction Cups",
        hp=79,
        attack=48,
        defense=56,
        special_attack=23,
        special_defense=88,
        speed=84,
        base_stat_total=378,
        weight=198,
        height=14,
        evolution_line=line,
        move_name="Poltergeist",
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
    assert stats == {"dropped_malformed_json": 1, "dropped_missing_text": 1}


def test_parse_articles_clean_and_hopeless_inputs():
    items, stats = parse_articles(json.dumps([GOOD, GOOD], indent=2))
    assert len(items) == 2 and not stats
    items, stats = parse_articles("I cannot help with that.")
    assert items == [] and stats["dropped_unparsable_response"] == 1
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
    assert realizer.stats["unresolved_feature"] == 2 and realizer.stats["dropped_malformed_json"] == 2
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


def test_render_refuses_text_less_drafts():
    from continuousbench.geminon.realizers import Draft

    with pytest.raises(ValueError, match="no text"):
        LLMRealizer(OfflineGenerator(lambda p, **s: "[]")).render([Draft("wiki", (1,), (), 0)], {})
