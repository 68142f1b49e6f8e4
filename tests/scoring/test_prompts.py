import re

import pytest

from continuousbench.scoring.prompts import GEMINON_EXAMPLES, NEWS_EXAMPLES, few_shot_prefix, qa_prompt

ENGLISH = 9  # PokeAPI language id


def test_prompt_format():
    prompt = qa_prompt("What is the HP stat of Krinkit?")
    assert prompt.endswith("\n\nQ: What is the HP stat of Krinkit?\nA:")
    blocks = few_shot_prefix("geminon").strip().split("\n\n")[1:]
    assert [b.splitlines() for b in blocks] == [[f"Q: {q}", f"A: {a}"] for q, a in GEMINON_EXAMPLES]
    assert all("\n" not in a for _, a in (*GEMINON_EXAMPLES, *NEWS_EXAMPLES))
    with pytest.raises(ValueError, match="no QA prompt"):
        qa_prompt("x", track="sports")


def test_prompts_hold_no_release_data(tiny_release):
    from datasets import load_dataset

    names = set(load_dataset(str(tiny_release), "entities", split="train")["name"])
    text = few_shot_prefix("geminon") + few_shot_prefix("news")
    assert not any(name in text for name in names)


def test_geminon_examples_are_real_pokemon_facts(pokeapi_csvs):
    import pandas as pd

    def read(name):
        return pd.read_csv(pokeapi_csvs / f"{name}.csv")

    species = read("pokemon_species_names").query("local_language_id == @ENGLISH")
    pid = dict(zip(species["name"], species["pokemon_species_id"], strict=True))
    pokemon = read("pokemon").set_index("id")
    stats = read("pokemon_stats").merge(read("stats"), left_on="stat_id", right_on="id")
    type_names = read("type_names").query("local_language_id == @ENGLISH").set_index("type_id")["name"]
    ability_names = (
        read("ability_names").query("local_language_id == @ENGLISH").set_index("ability_id")["name"]
    )
    move_names = read("move_names").query("local_language_id == @ENGLISH").set_index("move_id")["name"]
    moves = read("moves").set_index("id")

    def stat(p, identifier):
        rows = stats[stats.pokemon_id == p]
        return (
            int(rows.base_stat.sum())
            if identifier == "total"
            else int(rows[rows.identifier == identifier].base_stat.iloc[0])
        )

    def types(p):
        rows = read("pokemon_types").query("pokemon_id == @p").sort_values("slot")
        return [type_names[t] for t in rows.type_id]

    def truth(attribute, p):
        match attribute:
            case "attack" | "defense" | "speed" | "special attack" | "special defense" | "HP":
                return str(stat(p, attribute.lower().replace(" ", "-")))
            case "base stat total":
                return str(stat(p, "total"))
            case "height" | "weight":  # PokeAPI integers (decimetres, hectograms), the release's convention
                return str(int(pokemon.loc[p, attribute]))
            case "types":
                return " and ".join(types(p))
            case "classification":
                return species.set_index("pokemon_species_id").loc[p, "genus"].replace("Pokémon", "Geminon")
            case "ability":
                rows = (
                    read("pokemon_abilities").query("pokemon_id == @p and is_hidden == 0").sort_values("slot")
                )
                return ability_names[rows.ability_id.iloc[0]]
        raise AssertionError(attribute)

    pattern = re.compile(r"What (?:is|are) the (.+?)(?: stat)?(?: \(in \w+\))? of (.+)\?")
    for question, answer in GEMINON_EXAMPLES:
        attribute, name = pattern.fullmatch(question).groups()
        p = pid[name]
        if attribute == "move":  # a signature move: it exists and shares a type with its Pokémon
            move = moves.loc[move_names[move_names == answer].index[0]]
            assert type_names[move.type_id] in types(p), question
        else:
            assert truth(attribute, p) == answer, question
