"""Our own themed noun list for Geminon classifications ("<Noun> Geminon"), keyed by type.

Each type has groups of related common nouns, ordered roughly from small to grand, so a line's
classifications can stay the same or move to a related noun as it evolves.
"""

from __future__ import annotations

THEMES: dict[str, tuple[str, ...]] = {
    "normal": (
        "Pebble Button Cushion Pillow",
        "Sparrow Pigeon Hawk",
        "Mouse Rabbit Badger Bear",
        "Whistle Bell Drum",
        "Sock Scarf Blanket Quilt",
        "Acorn Sapling Oak",
    ),
    "fighting": (
        "Fist Glove Gauntlet",
        "Cub Brawler Champion",
        "Rope Belt Banner",
        "Stone Boulder Mountain",
        "Drum March Parade",
        "Sparrow Falcon Eagle",
    ),
    "flying": (
        "Feather Wing Kite",
        "Breeze Gust Gale",
        "Sparrow Swallow Falcon Eagle",
        "Balloon Glider Zeppelin",
        "Cloud Sky Horizon",
        "Leaf Seed Dandelion",
    ),
    "poison": (
        "Drop Vial Potion",
        "Mushroom Toadstool Spore",
        "Sting Fang Venom",
        "Puddle Swamp Bog Marsh",
        "Smoke Fog Smog",
        "Thorn Nettle Ivy",
    ),
    "ground": (
        "Pebble Rock Boulder",
        "Sand Dune Desert",
        "Mole Burrow Tunnel",
        "Clay Brick Pot",
        "Root Stump Trunk",
        "Shovel Drill Quarry",
    ),
    "rock": (
        "Pebble Stone Boulder Cliff",
        "Crystal Geode Gem",
        "Shell Fossil Skull",
        "Wall Tower Fortress",
        "Mountain Peak Summit",
        "Brick Pillar Column",
    ),
    "bug": (
        "Larva Cocoon Moth",
        "Ant Beetle Scarab",
        "Seed Leaf Blossom",
        "Web Thread Silk",
        "Cricket Grasshopper Locust",
        "Bee Hive Honey",
    ),
    "ghost": (
        "Candle Lantern Lamp",
        "Shadow Shade Phantom",
        "Mask Veil Shroud",
        "Mist Fog Haze",
        "Bell Clock Tower",
        "Doll Puppet Mirror",
    ),
    "steel": (
        "Nail Bolt Anvil",
        "Key Lock Vault",
        "Coin Medal Crown",
        "Gear Spring Engine",
        "Blade Sword Shield",
        "Bell Chain Armor",
    ),
    "fire": (
        "Spark Ember Flame Blaze",
        "Candle Torch Lantern Beacon",
        "Coal Furnace Volcano",
        "Match Fuse Rocket",
        "Ash Cinder Smoke",
        "Pepper Chili Sun",
    ),
    "water": (
        "Droplet Puddle Pond Lake",
        "Wave Tide Current",
        "Shell Pearl Coral",
        "Tadpole Frog Toad",
        "Fin Tail Whale",
        "Fountain River Waterfall",
    ),
    "grass": (
        "Seed Sprout Sapling Tree",
        "Bud Blossom Bloom",
        "Leaf Vine Canopy",
        "Moss Fern Thicket",
        "Acorn Nut Orchard",
        "Reed Bamboo Forest",
    ),
    "electric": (
        "Spark Bolt Thunder",
        "Battery Wire Dynamo",
        "Bulb Lamp Beacon",
        "Static Current Storm",
        "Magnet Coil Turbine",
        "Plug Socket Generator",
    ),
    "psychic": (
        "Dream Vision Oracle",
        "Spoon Mirror Prism",
        "Star Comet Nebula",
        "Crystal Orb Eye",
        "Riddle Puzzle Mind",
        "Candle Moon Halo",
    ),
    "ice": (
        "Snowflake Icicle Glacier",
        "Frost Sleet Blizzard",
        "Crystal Shard Aurora",
        "Pebble Iceberg Floe",
        "Mitten Scarf Parka",
        "Snowball Igloo Avalanche",
    ),
    "dragon": (
        "Egg Hatchling Wyrm",
        "Scale Claw Crest",
        "Ember Comet Meteor",
        "Serpent Drake Titan",
        "Cave Lair Citadel",
        "Lizard Gecko Monitor",
    ),
    "dark": (
        "Shadow Dusk Midnight",
        "Crow Raven Vulture",
        "Mask Cloak Hood",
        "Fang Claw Jaw",
        "Alley Cellar Dungeon",
        "Coin Dagger Trickster",
    ),
    "fairy": (
        "Ribbon Bow Tiara",
        "Petal Blossom Bouquet",
        "Dewdrop Sparkle Glimmer",
        "Charm Locket Jewel",
        "Candy Cupcake Cake",
        "Bubble Rainbow Halo",
    ),
}


def noun_groups(type_name: str) -> list[tuple[str, ...]]:
    """Groups of related nouns for a type name (case-insensitive); every type has several."""
    try:
        return [tuple(group.split()) for group in THEMES[type_name.lower()]]
    except KeyError:
        raise ValueError(
            f"no classification themes for type {type_name!r}; known: {', '.join(THEMES)}"
        ) from None
