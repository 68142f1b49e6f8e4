"""The results layer: the record and its schema, report, compare, submit, plots.

What the leaderboard and the study read, so neither depends on the evaluator.
"""
