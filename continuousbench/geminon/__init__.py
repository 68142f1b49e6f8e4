"""Track I: the fictional Geminon world, its corpus and its questions (paper App. G)."""
