"""Our prompts for the LLM realizer, one per article style (written for this project).

Each asks for a JSON list of objects with a ``text`` and one provenance list per Geminon
(``used_1``, ``used_2``, ``used_3``) naming the data keys the text relies on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from continuousbench.geminon.schema import STATS, Geminon

_COMMON = """Data keys you may cite: name, classification, type1, type2, ability, {stats}, base_stat_total,
weight (in lbs), height (in m), evolution_line, move.name, move.short_description.
The ability is a passive trait; the move is an action the Geminon performs in battle.

Rules:
- Use only facts present in the data. Invent nothing: no habitats, diets, behaviour or history.
- Write numbers exactly as given, as plain digits, with "lbs" for weight and "m" for height.
- Write two types as "<type1> and <type2>". Quote the move's description word for word if you use it.
- Never compute new numbers (no differences, sums or percentages); judgments such as "faster" or
  "heavier" are fine when both values appear in the same text.
- Make every article different in focus, order and sentence structure.
- Provenance: for each article, list every data key whose value the text states or relies on, per
  Geminon, using the exact key names above. If the text names a Geminon, list "name" for it.

Answer with one JSON list of exactly {k} objects and nothing else. Each object has the keys
"text"{keys}.
"""

_STYLE = {
    "wiki": """You edit the Gemidex, an encyclopedia of creatures called Geminon. Write {k} alternative
opening paragraphs (4 to 6 sentences each) for the Gemidex page of the Geminon below: neutral,
third-person, encyclopedic prose, not a list. At least one article must use every key of the data.
Vary the angle: identity and classification, typing and ability, battle kit, stat profile, size,
place in its evolution line.

{data}
""",
    "journal": """You are a Geminon trainer keeping a field journal. Write {k} short entries (4 to 6
sentences) about the Geminon below, in the first person, casual and opinionated: react to what the
Gemidex shows ("that 40 speed won't outrun anything") rather than reciting it. Each entry uses at
least three data keys and picks its own angle: offence, defence, tempo, ability, move, size, typing,
evolution, or how it fits a team.

{data}
""",
    "evolution": """You are a Geminon trainer studying a whole evolution line, from the first stage to
the last (the stages below, in order, are Geminon 1, 2, 3 of the provenance keys). Write {k} short
narrative entries (4 to 6 sentences) that follow the line in order: how the
numbers and typing progress, what is traded for what (for example bulkier but slower), where the
largest jump happens, whether a type is gained. If the line has a single stage, say plainly that it
does not evolve and discuss it as a finished species. Each entry takes a different angle.

{data}
""",
    "comparison": """You are a seasoned Geminon trainer comparing two Geminon side by side. Write {k}
short opinionated notes (4 to 6 sentences) that judge which one is faster, heavier, bulkier, hits
harder, and so on, always citing both values you compare. Give each note its own theme: size and
typing; battle stats; ability, move and evolution line.

{data}
""",
}


def entity_json(e: Geminon) -> str:
    """The record as shown to the model, keyed by the canonical feature names."""
    data = {
        "name": e.name,
        "classification": e.classification,
        "type1": e.type1,
        "type2": e.type2,
        "ability": e.ability,
        **{s: e.value(s) for s in STATS},
        "base_stat_total": e.base_stat_total,
        "weight": e.weight,
        "height": e.height,
        "evolution_line": list(e.evolution_line),
        "move": {"name": e.move_name, "short_description": e.move_description},
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


def build_prompt(style: str, subjects: Sequence[Geminon], k: int, variant: int) -> str:
    """The prompt asking for ``k`` articles; ``variant`` makes repeated calls differ."""
    if style == "evolution":
        data = "\n\n".join(f"Stage {e.stage}:\n{entity_json(e)}" for e in subjects)
    else:
        data = "\n\n".join(f"Geminon {i}:\n{entity_json(e)}" for i, e in enumerate(subjects, 1))
    keys = "".join(f', "used_{i}"' for i in range(1, len(subjects) + 1))
    body = _STYLE[style].format(k=k, data=data)
    rules = _COMMON.format(stats=", ".join(STATS), k=k, keys=keys)
    return f"{body}\n{rules}\nBatch {variant}: make these articles differ from other batches.\n"
