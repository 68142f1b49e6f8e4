"""Phrase banks of the template realizer for one-entity articles (wiki and journal).

Placeholders: {N} name; {P}/{p} the subject as "It"/"it" or the name; {Ps}/{ps} its possessive;
{cls} classification; {ty} typing ("pure Ghost" / "Ghost and Dark"); {tyA} typing as an adjective;
{tyN} typing as a noun phrase; {ab} ability; {mv} move; {desc} move description; {w} weight;
{h} height; {bst} base stat total; {line} the evolution line's names; {lab}/{v}/{adj} a stat's label,
value and a judgment of that value. A template states exactly the facts its placeholders carry and
nothing else: no invented habitats, no derived numbers.
"""

from __future__ import annotations

WIKI: dict[str, tuple[str, ...]] = {
    "intro": (
        "{N} is a species of Geminon.",
        "{N} is a Geminon recorded in the Gemidex.",
        "This article describes {N}, a Geminon species.",
        "{N} is one of the Geminon documented by the Gemidex.",
        "{N} is a Geminon.",
        "The Gemidex maintains an entry on {N}.",
    ),
    "intro_cls": (
        "{N} is a Geminon known as the {cls}.",
        "{N}, the {cls}, is a species recorded in the Gemidex.",
        "Classified as the {cls}, {N} is a Geminon species.",
        "{N} is listed in the Gemidex as the {cls}.",
        "The {cls}, {N}, is a Geminon.",
        "{N} carries the classification {cls}.",
    ),
    "intro_ty": (
        "{N} is a {tyA} Geminon.",
        "{N} is a Geminon of {tyN}.",
        "A {tyA} species, {N} is recorded in the Gemidex.",
        "{N} is a Geminon whose typing is {ty}.",
        "The Gemidex lists {N} as a {tyA} Geminon.",
        "{N} is a Geminon belonging to {tyN}.",
    ),
    "intro_cls_ty": (
        "{N} is a {tyA} Geminon known as the {cls}.",
        "{N}, the {cls}, is a {tyA} Geminon.",
        "Classified as the {cls}, {N} is a Geminon of {tyN}.",
        "The {cls} {N} is a {tyA} species.",
        "{N} is the {cls}, a Geminon whose typing is {ty}.",
        "Known as the {cls}, {N} is a {tyA} Geminon.",
    ),
    "cls": (
        "{P} is known as the {cls}.",
        "The Gemidex classifies {p} as the {cls}.",
        "{Ps} classification is {cls}.",
        "{P} bears the title of the {cls}.",
        "In the Gemidex, {p} is filed under the {cls}.",
        "{P} is referred to as the {cls}.",
    ),
    "ty": (
        "{P} is a {tyA} Geminon.",
        "{Ps} typing is {ty}.",
        "{P} belongs to {tyN}.",
        "In terms of typing, {p} is {ty}.",
        "{P} is recorded as {ty} in type.",
        "The Gemidex lists {ps} typing as {ty}.",
    ),
    "ab": (
        "{Ps} ability is {ab}.",
        "{P} has the ability {ab}.",
        "The ability associated with {p} is {ab}.",
        "{P} possesses {ab} as its ability.",
        "As its passive trait, {p} has the ability {ab}.",
        "{ab} is the ability of {p}.",
    ),
    "stat": (
        "{P} has a base {lab} of {v}.",
        "{Ps} {lab} stat is {v}.",
        "Its base {lab} stands at {v}.",
        "{P} is recorded with {v} {lab}.",
        "The Gemidex gives {p} a {lab} of {v}.",
        "A base {lab} of {v} is listed for {p}.",
    ),
    "stat_pair": (
        "{Ps} {lab1} of {v1} is higher than its {lab2} of {v2}.",
        "{P} has {v1} {lab1}, exceeding its {v2} {lab2}.",
        "With {v1} {lab1} against {v2} {lab2}, {p} leans toward {lab1}.",
        "Its {lab2} of {v2} trails its {lab1} of {v1}.",
        "{P} records {v1} in {lab1}, more than the {v2} it has in {lab2}.",
        "Between the two, {ps} {lab1} ({v1}) outranks its {lab2} ({v2}).",
    ),
    "stat_list": (
        "{Ps} base stats include {items}.",
        "The Gemidex lists {items} for {p}.",
        "In terms of base stats, {p} has {items}.",
        "Its recorded stats are {items}.",
        "{P} is credited with {items}.",
        "Base stats for {p}: {items}.",
    ),
    "bst": (
        "{Ps} base stat total is {bst}.",
        "Its six base stats sum to a total of {bst}.",
        "{P} has a base stat total of {bst}.",
        "Altogether, {ps} base stats add up to {bst}.",
        "The base stat total of {p} is {bst}.",
        "Summed together, its base stats reach {bst}.",
    ),
    "body": (
        "{P} stands {h} m tall and weighs {w} lbs.",
        "An average {N} is {h} m tall and weighs {w} lbs.",
        "{Ps} height is {h} m, and its weight is {w} lbs.",
        "Physically, {p} measures {h} m in height and {w} lbs in weight.",
        "It weighs {w} lbs and reaches a height of {h} m.",
        "The Gemidex records a height of {h} m and a weight of {w} lbs for {p}.",
    ),
    "weight": (
        "{P} weighs {w} lbs.",
        "{Ps} weight is {w} lbs.",
        "It has a recorded weight of {w} lbs.",
        "The Gemidex lists {ps} weight as {w} lbs.",
        "{P} tips the scales at {w} lbs.",
        "A typical {N} weighs {w} lbs.",
    ),
    "height": (
        "{P} stands {h} m tall.",
        "{Ps} height is {h} m.",
        "It reaches a height of {h} m.",
        "The Gemidex records {ps} height as {h} m.",
        "{P} measures {h} m from the ground up.",
        "A typical {N} is {h} m tall.",
    ),
    "evo_multi": (
        "{N} is part of the evolution line {line}.",
        "Its evolution line runs {line}.",
        "{N} belongs to the line {line}, where it is the {pos} stage.",
        "The evolutionary line of {N} consists of {line}.",
        "Within its line ({line}), {N} is the {pos} stage.",
        "{N} is the {pos} stage of the line {line}.",
    ),
    "evo_single": (
        "{N} is not known to evolve; its evolution line consists of {N} alone.",
        "{N} does not evolve, and its line contains only {N}.",
        "No evolution is recorded for {N}: it forms a single-stage line of its own.",
        "{N} is a single-stage Geminon with no evolutions.",
        "The evolution line of {N} is {N} alone, as it does not evolve.",
        "{N} neither evolves nor evolves from another Geminon.",
    ),
    "move": (
        "{Ps} move is {mv}.",
        "{P} uses the move {mv}.",
        "The move associated with {p} is {mv}.",
        "In battle, {p} relies on {mv}.",
        "{mv} is the signature move of {p}.",
        "{P} is known for the move {mv}.",
    ),
    "move_desc": (
        "{Ps} move is {mv}. {desc}",
        "{P} uses {mv} in battle. The Gemidex describes it this way: {desc}",
        "The signature move of {p} is {mv}, summarised as follows: {desc}",
        "{mv} is the move of {p}. {desc}",
        "In battle, {p} relies on {mv}. {desc}",
        "{P} knows {mv}. Its description reads: {desc}",
    ),
}

JOURNAL: dict[str, tuple[str, ...]] = {
    "intro": (
        "Just logged a {N} in my Gemidex.",
        "Ran into a {N} today.",
        "Field note on {N}.",
        "Finally got a proper look at a {N}.",
        "Spent the afternoon watching a {N}.",
        "New entry for my journal: {N}.",
        "Okay, {N} time.",
    ),
    "intro_cls": (
        "Just logged a {N}, the {cls}, in my Gemidex.",
        "Ran into a {N} today. The Gemidex calls it the {cls}.",
        "Field note on {N}, a.k.a. the {cls}.",
        "Finally scanned a {N}, which the Gemidex files as the {cls}.",
        "New entry: {N}, the {cls}.",
        "Met a {N} today, the so-called {cls}.",
    ),
    "intro_ty": (
        "Just logged a {N}, a {tyA} Geminon.",
        "Ran into a {tyA} {N} today.",
        "Field note on {N}, which is {ty} by type.",
        "Scanned a {N} and the Gemidex says its typing is {ty}.",
        "New entry: {N}, {ty} type.",
        "Met a {N} today, a {tyA} one.",
    ),
    "intro_cls_ty": (
        "Just logged a {N}, the {cls}, a {tyA} Geminon.",
        "Ran into a {N} today: the {cls}, typed {ty}.",
        "Field note on {N}, the {cls}, {ty} type.",
        "Scanned a {N}. The Gemidex calls it the {cls} and lists it as {ty}.",
        "New entry: {N}, a {tyA} Geminon known as the {cls}.",
        "Met a {N}, the {cls}, and it's {ty} by type.",
    ),
    "cls": (
        "The Gemidex calls it the {cls}, which fits.",
        "Its classification reads {cls}.",
        "Officially it's the {cls}.",
        "Funny name for a category, but it's filed as the {cls}.",
        "The scanner tags it as the {cls}.",
        "I like that it's known as the {cls}.",
    ),
    "ty": (
        "Typing is {ty}, so I'll plan around that.",
        "It's a {tyA} Geminon, worth remembering for matchups.",
        "The scanner says {ty} for its typing.",
        "Being {ty} shapes how I'd use it.",
        "Type check: {ty}.",
        "I keep forgetting it's {ty} in type.",
    ),
    "ab": (
        "Its ability is {ab}, which could come in handy.",
        "It has {ab} as its ability, and I'm curious how that plays out.",
        "Ability: {ab}. Not bad at all.",
        "The ability here is {ab}, a nice passive perk.",
        "I noticed its ability is {ab}.",
        "{ab} is its ability, so I'll keep that in mind.",
    ),
    "stat": (
        "Its {lab} is {v}, which is {adj}.",
        "The Gemidex shows {v} {lab}. I'd call that {adj}.",
        "{lab} sits at {v}, honestly {adj}.",
        "With {v} {lab}, it's {adj} in that department.",
        "I checked its {lab}: {v}. Pretty {adj}.",
        "That {v} {lab} is {adj}.",
    ),
    "stat_pair": (
        "Its {v1} {lab1} beats its {v2} {lab2}, so I know where its strength is.",
        "{lab1} at {v1} and {lab2} only at {v2}, so I'd lean on the {lab1}.",
        "It's got {v1} {lab1} but just {v2} {lab2}.",
        "I'll take the {v1} {lab1} over the {v2} {lab2} any day.",
        "The {lab2} ({v2}) lags behind the {lab1} ({v1}).",
        "Clearly built for {lab1}: {v1} there versus {v2} in {lab2}.",
    ),
    "stat_list": (
        "Quick stat check: {items}.",
        "The numbers I wrote down: {items}.",
        "Scanner readout says {items}.",
        "For the record, {items}.",
        "Jotting the stats: {items}.",
        "Here's what the Gemidex gave me: {items}.",
    ),
    "bst": (
        "Base stat total is {bst}, which is {adj}.",
        "Adding it all up, it has a base stat total of {bst}. I'd say {adj}.",
        "A base stat total of {bst} feels {adj} to me.",
        "Total stats come to {bst}, {adj} overall.",
        "Its base stat total reads {bst}, so {adj} on paper.",
        "The Gemidex says {bst} total, which I'd call {adj}.",
    ),
    "body": (
        "It's {h} m tall and weighs {w} lbs, so {adj}.",
        "At {w} lbs and {h} m, it's {adj}.",
        "Measured it at {h} m and {w} lbs. Definitely {adj}.",
        "Height {h} m, weight {w} lbs, {adj} overall.",
        "It stands {h} m tall and weighs {w} lbs, which I'd call {adj}.",
        "The Gemidex says {w} lbs and {h} m tall, pretty {adj}.",
    ),
    "weight": (
        "It weighs {w} lbs.",
        "The scale said {w} lbs.",
        "At {w} lbs, it's not something I'd carry around.",
        "Weight check: {w} lbs.",
        "The Gemidex lists {w} lbs for its weight.",
        "It comes in at {w} lbs.",
    ),
    "height": (
        "It stands {h} m tall.",
        "Height check: {h} m.",
        "It's {h} m tall, by the Gemidex.",
        "The Gemidex puts it at {h} m in height.",
        "I measured {h} m from head to toe.",
        "It reaches {h} m.",
    ),
    "evo_multi": (
        "Its line goes {line}, and this one is the {pos} stage.",
        "Evolution-wise it's the {pos} stage of {line}.",
        "I'm tracking the whole line: {line}.",
        "The Gemidex shows the line as {line}.",
        "It's the {pos} stage in the {line} line, good to know.",
        "Noting the evolution line for later: {line}.",
    ),
    "evo_single": (
        "No evolutions for {N}: its line is just {N}.",
        "{N} doesn't evolve, so what I see is what I get.",
        "The Gemidex shows {N} as a single-stage line, so no evolving.",
        "{N} stays {N} forever; it doesn't evolve.",
        "Its evolution line is only {N}, no further forms.",
        "Heads up: {N} does not evolve.",
    ),
    "move": (
        "Its move is {mv}, which I want to see in action.",
        "It uses {mv}.",
        "Saw it pull off {mv}.",
        "The move to remember is {mv}.",
        "{mv} is its go-to move.",
        "The Gemidex lists {mv} as its move.",
    ),
    "move_desc": (
        "Its move is {mv}. Gemidex note: {desc}",
        "It uses {mv}. The Gemidex says: {desc}",
        "Saw it use {mv}. {desc}",
        "The move to remember is {mv}. {desc}",
        "{mv} is its go-to move. Per the Gemidex: {desc}",
        "Checked its move, {mv}. {desc}",
    ),
}

# Connectives that carry no fact; prefixed to some sentences so articles do not read as a list.
CONNECTIVES: dict[str, tuple[str, ...]] = {
    "wiki": ("In addition, ", "Notably, ", "Furthermore, ", "According to the Gemidex, ", "Moreover, "),
    "journal": ("Also, ", "Oh, and ", "Plus, ", "On top of that, ", "Anyway, ", "Side note: "),
}

# Value bands for judgments (upper bound exclusive, words); journal voice only.
STAT_BANDS = (
    (40, ("weak", "pretty poor", "underwhelming")),
    (70, ("modest", "middling", "so-so")),
    (100, ("solid", "decent", "respectable")),
    (130, ("strong", "great", "impressive")),
    (10**9, ("huge", "massive", "outstanding")),
)
BST_BANDS = (
    (300, ("on the low side", "modest")),
    (450, ("middle of the road", "fair")),
    (550, ("solid", "pretty good")),
    (10**9, ("excellent", "top tier")),
)
WEIGHT_BANDS = (
    (30, ("featherweight", "light as anything")),
    (150, ("easy to handle", "compact")),
    (400, ("hefty", "solidly built")),
    (10**9, ("enormous", "massive")),
)

STAT_LABELS: dict[str, tuple[str, ...]] = {
    "hp": ("HP", "HP", "hit points"),
    "attack": ("attack", "Attack", "physical attack"),
    "defense": ("defense", "Defense", "physical defense"),
    "special attack": ("special attack", "Special Attack", "Sp. Atk"),
    "special defense": ("special defense", "Special Defense", "Sp. Def"),
    "speed": ("speed", "Speed", "speed"),
}

INFOBOX_HEADERS = ("Gemidex data", "Quick facts", "At a glance", "Profile", "Summary card")
