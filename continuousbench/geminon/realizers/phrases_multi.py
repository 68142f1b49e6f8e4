"""Phrase banks for articles about several Geminon (evolution narratives and comparisons).

Placeholders: {a}/{b}/{z} first/middle/final stage names, {line} the line's names, {lab} a feature
label, {v1}/{v2}/{v3} values with units, {verb} a trend verb, {W}/{L} the higher/lower of a pair,
{vw}/{vl} their values, {deg} a degree word, {X}/{Y} the two compared names. Every template states
only the facts behind its placeholders; judgments ("faster", "biggest jump") are computed from values
that the same sentence states.
"""

from __future__ import annotations

EVO_OPEN = (
    "The {a} line runs {line}.",
    "Following this family from start to finish means tracking {line}.",
    "Today's journal entry covers a whole line: {line}.",
    "I spent the week on the line {line}, and the story it tells is worth writing down.",
    "Here is how the line {line} develops, stage by stage.",
    "It all starts with {a}, and the line continues {line}.",
    "Line study: {line}.",
    "One family, one story: {line}.",
    "My notes on the evolution line {line}.",
    "Watching {a} grow up is the whole point of this entry, so here is the line: {line}.",
    "Evolution line under the microscope today: {line}.",
    "From {a} all the way to {z}, the line is {line}.",
    "The path from {a} to {z} goes {line}.",
)
EVO_HEAD = {  # fact-free headings that announce the entry's angle
    "growth": ("Size and build across a line.", "Growth log.", "How big does it get?"),
    "offence": ("Offensive trajectory.", "Does it hit harder as it grows?", "Damage output, stage by stage."),
    "defence": ("Defensive trajectory.", "How much sturdier does it get?", "Survivability notes."),
    "tempo": ("Tempo notes.", "Speed check along the line.", "Who outpaces whom in this family?"),
    "types": ("Type evolution.", "Typing across the stages.", "Does the typing change?"),
    "ability": ("Ability notes.", "Passive traits along the line.", "What each stage brings as an ability."),
    "moves": ("Move evolution.", "Signature moves along the line.", "What each stage fights with."),
    "breakpoint": ("Breakpoint notes.", "Where does the big jump happen?", "Finding the breakpoint."),
    "summary": ("Summary verdict.", "The short version.", "Line overview."),
}
EVO_OPEN_SINGLE = (
    "{a} does not evolve: its line is {a} alone, so this entry looks at it as a complete species.",
    "The Gemidex shows no evolution beyond {a}; its line consists of {a} only.",
    "{a} is a single-stage Geminon with no evolutions, so there is no progression to chart.",
    "Nothing comes after {a}: it does not evolve, and its line is just {a}.",
    "{a} stands alone in its line and never evolves, so I judged it as a finished package.",
    "There is no evolution to follow for {a}; the line begins and ends with {a}.",
)
EVO_TREND2 = (
    "{Lab} {verb} from {v1} in {a} to {v2} in {z}.",
    "{a} starts with {v1} of {lab}, and {z} finishes at {v2}.",
    "On {lab}, the line goes from {v1} ({a}) to {v2} ({z}).",
    "Where {a} sits at {v1} {lab}, {z} reaches {v2}.",
    "By the final stage, {lab} has moved from {v1} to {v2}: {a} to {z}.",
    "{z} ends with {v2} {lab}, compared with the {v1} that {a} starts with.",
)
EVO_TREND3 = (
    "{Lab} {verb} along the line: {v1} for {a}, {v2} for {b} and {v3} for {z}.",
    "{a} starts at {v1} {lab}, {b} reaches {v2}, and {z} finishes at {v3}.",
    "Across the three stages, {lab} reads {v1}, {v2} and {v3}, from {a} through {b} to {z}.",
    "Tracking {lab}: {a} has {v1}, {b} has {v2}, {z} has {v3}.",
    "{Lab} goes {v1} → {v2} → {v3} as {a} becomes {b} and then {z}.",
    "The {lab} curve runs from {v1} in {a}, via {v2} in {b}, to {v3} in {z}.",
)
EVO_JUMP = (
    "The biggest jump in {lab} comes between {x} and {y}, from {vx} to {vy}.",
    "The real breakpoint is {x} to {y}: {lab} leaps from {vx} to {vy}.",
    "If one step matters most, it is {x} becoming {y}, with {lab} rising from {vx} to {vy}.",
    "Most of the {lab} growth happens when {x} evolves into {y} ({vx} to {vy}).",
    "{y} is where {lab} takes off: {vx} before, {vy} after.",
    "The step from {x} to {y} carries the largest {lab} gain, {vx} to {vy}.",
)
EVO_DOUBLE = (
    "That is more than double the {lab} {a} started with.",
    "In other words, {z} has over twice the {lab} of {a}.",
    "{z} ends up with more than twice {a}'s {lab}.",
    "The final form more than doubles its starting {lab}.",
    "That is a more than twofold rise in {lab}.",
    "Put simply, {lab} more than doubles from {a} to {z}.",
)
EVO_TRADE = (
    "The trade-off is clear: {z} gains {up} but gives up {down} compared with {a}.",
    "It is not all growth, though: {up} rises while {down} drops from {a} to {z}.",
    "So the line buys {up} at the cost of {down}.",
    "{z} leans harder into {up} and lets {down} slip relative to {a}.",
    "What {z} wins in {up}, it loses in {down}.",
    "The evolution favours {up} over {down}.",
)
EVO_LIST = (  # one string feature per stage: {items} like "Drought for Phantatch and Levitate for ..."
    "On {lab}, it is {items}.",
    "{Lab} by stage: {items}.",
    "The {lab} changes as it goes: {items}.",
    "Looking at {lab}, I noted {items}.",
    "Stage by stage the {lab} reads {items}.",
    "For {lab}, the Gemidex lists {items}.",
)
EVO_SAME = (
    "Every stage keeps the same {lab}: {val}.",
    "The {lab} never changes along the line; it is {val} throughout.",
    "All stages share {val} as their {lab}.",
    "{val} is the {lab} from the first stage to the last.",
    "No change in {lab}: {val} for every stage.",
    "The whole line sticks with {val} for {lab}.",
)
EVO_GAIN_TYPE = (
    "{y} picks up the {t} type that {x} lacked.",
    "Evolving into {y} adds the {t} type.",
    "The {t} type only arrives with {y}.",
    "A new type appears with {y}: {t}.",
    "{x} has no {t} typing, but {y} gains it.",
    "{y} brings the {t} type into the line.",
)
EVO_CLOSE = (
    "",
    "",
    "A line worth following from the start.",
    "That is the shape of this family.",
    "Worth remembering when choosing which stage to train.",
    "Plenty to think about for team building.",
)

CMP_OPEN = (
    "Put {X} next to {Y} and the differences jump out.",
    "Comparing {X} and {Y} today.",
    "{X} or {Y}? Here is my take.",
    "Side by side: {X} and {Y}.",
    "Had {X} and {Y} on the scanner back to back.",
    "Time for a matchup: {X} against {Y}.",
    "Quick comparison between {X} and {Y}.",
    "{X} against {Y}, by the numbers.",
    "People keep asking me whether {X} or {Y} is the better pick.",
    "I lined up {X} and {Y} in the Gemidex to settle an argument.",
    "Notes from a long day of scanning: {X} versus {Y}.",
    "{Y} and {X} keep showing up on the same shortlist, so here is how they stack up.",
)
CMP_HEAD = {  # fact-free headings that announce the note's angle
    "physical": ("Size and typing check.", "David and Goliath, maybe?", "Body and type notes."),
    "combat": ("Combat profile.", "Who wins the stat sheet?", "Battle numbers."),
    "bulk": ("Who is the tank?", "Bulk check.", "Taking hits."),
    "utility": ("Kit and utility.", "Abilities and moves.", "Utility notes."),
    "overall": ("Overall verdict.", "The big picture.", "Quick verdict."),
}
CMP_MORE = (
    "{W} is {deg} ahead on {lab}, {vw} against {vl} for {L}.",
    "{W} has {deg} more {lab} than {L}: {vw} versus {vl}.",
    "On {lab}, {W} comes out {deg} ahead with {vw} to {L}'s {vl}.",
    "{L} only has {vl} {lab}, while {W} brings {vw}.",
    "{W} tops {L} in {lab}, {vw} to {vl}.",
    "{vw} {lab} for {W} beats the {vl} of {L}.",
)
CMP_ADJ = (  # {adj}: a comparative that the feature licenses ("faster", "heavier", "taller")
    "{W} is {deg} {adj} than {L}, {vw} to {vl}.",
    "{L} is the {adj_lo} one at {vl}; {W} comes in at {vw}.",
    "With {vw} against {vl}, {W} is {deg} {adj} than {L}.",
    "{W} ({vw}) is {deg} {adj} than {L} ({vl}).",
    "{W} is the {adj} of the pair, {vw} versus {vl} for {L}.",
    "{L} is {adj_lo} than {W}, {vl} to {vw}.",
)
CMP_TWICE = (
    "That is at least twice {L}'s {lab}.",
    "{W} has at least double the {lab} of {L}.",
    "{L} does not even reach half of {W}'s {lab}.",
    "The gap is huge: {W} has twice the {lab} of {L} or more.",
    "{W} at least doubles {L} on {lab}.",
    "Twice the {lab}, at least, for {W}.",
)
CMP_TIE = (
    "Dead even on {lab}: both have {v}.",
    "{X} and {Y} are tied at {v} {lab}.",
    "No difference in {lab}, {v} apiece.",
    "Both sit at exactly {v} {lab}.",
    "Same {lab} for both: {v}.",
    "{lab_cap} is a wash at {v} each.",
)
CMP_PAIR = (  # string features: {va}/{vb} the values of {X}/{Y}
    "{X} has {va} as its {lab}, {Y} has {vb}.",
    "For {lab}, it is {va} on {X}'s side and {vb} on {Y}'s.",
    "{lab_cap}: {va} for {X}, {vb} for {Y}.",
    "{X} brings {va} while {Y} counters with {vb} ({lab}).",
    "Their {lab} differs: {X} has {va}, {Y} has {vb}.",
    "{Y} runs {vb} as its {lab}, where {X} runs {va}.",
)
CMP_SAME = (
    "Both share the same {lab}: {v}.",
    "{X} and {Y} have {v} in common as their {lab}.",
    "Same {lab} on both: {v}.",
    "No difference in {lab}, both have {v}.",
    "They match on {lab} with {v}.",
    "{v} is the {lab} for each of them.",
)
CMP_TYPES = (
    "{X} is {tx} while {Y} is {ty}.",
    "Typing: {tx} for {X}, {ty} for {Y}.",
    "It is a clash of typings, {tx} ({X}) against {ty} ({Y}).",
    "{Y} brings {ty} typing to face the {tx} of {X}.",
    "On types, {X} is {tx} and {Y} is {ty}.",
    "{X} fights as {tx}; {Y} fights as {ty}.",
)
CMP_BULK = (
    "Add HP and both defenses together and {W} is the bulkier of the two.",
    "Overall, {W} is the one that can take hits better than {L}.",
    "Taken together, those numbers make {W} the tank and {L} the softer target.",
    "All told, {W} is sturdier than {L}.",
    "{W} is the bulkier pick when I sum up its defensive stats.",
    "If I need something to absorb damage, {W} beats {L}.",
)
CMP_CLOSE = (
    "",
    "",
    "Tough call, but the numbers do not lie.",
    "It depends on the team, honestly.",
    "I know which one I am packing next time.",
    "Both have a place, just not the same place.",
)
DEGREES = (
    (2.0, ("far", "massively")),
    (1.4, ("much", "a lot")),
    (1.1, ("noticeably", "clearly")),
    (0.0, ("slightly", "a little")),
)
ADJ = {"speed": ("faster", "slower"), "weight": ("heavier", "lighter"), "height": ("taller", "shorter")}
TREND = {1: ("climbs", "rises", "grows"), -1: ("drops", "falls", "shrinks"), 0: ("shifts", "changes")}
LINE_OF = (  # {X}'s evolution line in a comparison
    "{X} belongs to the line {line}.",
    "{X} comes from the line {line}.",
    "Evolution-wise, {X} sits in the line {line}.",
    "{X} is part of {line}.",
    "The line for {X} reads {line}.",
    "{X} is one stage of the line {line}.",
)
LINE_SINGLE = (
    "{X} does not evolve at all; its line is just {X}.",
    "{X} is single-stage, so what you see is final.",
    "There is no evolution for {X}; it stands alone in its line.",
    "{X} never evolves.",
    "{X} has no other forms in its line.",
    "{X} is a one-stage line by itself.",
)
MOVE_DESC = (  # {X} uses {mv}, described by {desc}
    "{X} uses {mv}. {desc}",
    "{X}'s move is {mv}. The Gemidex says: {desc}",
    "Then there is {mv} on {X}. {desc}",
    "{X} brings {mv}. {desc}",
    "For {X}, the move is {mv}. {desc}",
    "{mv} belongs to {X}. Its entry reads: {desc}",
)
SHARED_TYPE = (
    "They share the {t} type.",
    "The {t} type is common to both.",
    "Both carry {t} typing.",
    "At least they overlap on {t}.",
    "{t} shows up on both sides.",
    "Each of them has the {t} type.",
)
