"""The results layer: the record (record.py) and its schema (schema.py), privacy statements, labels, report,
compare, submit, plots.

What the leaderboard and the study read, so neither depends on the evaluator.
"""
