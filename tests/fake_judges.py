"""Judges of known quality for tests, as ``reply(body)`` functions of the fake OpenAI server (or of a
prompt, for offline backends): always "1", always "0", a coin flip, one that accepts half the wrong
answers, and one that follows the rules (right on the calibration set but for a few cases, and a
reasonable word-overlap rule elsewhere)."""

from __future__ import annotations

import random
import re

from fake_endpoint import prompt_of

from continuousbench.scoring.judge import calibration_cases

FIELDS = re.compile(r"^QUESTION: (.*)\nREFERENCE: (.*)\nRESPONSE: (.*)$", re.MULTILINE)
CASES = {(c["question"], c["reference"], c["response"]): c for c in calibration_cases()}
RULE_FOLLOWER_MISTAKES = {"paraphrase-6", "number-in-3", "general-2"}  # a good judge is not perfect


def fields(prompt: str) -> tuple[str, str, str]:
    """(question, reference shown, response) of a judge prompt."""
    return FIELDS.search(prompt).groups()


def _case(prompt: str) -> dict | None:
    return CASES.get(fields(prompt))


def rule_following(prompt: str, **_) -> str:
    case = _case(prompt)
    if case is not None:
        return str(case["verdict"] ^ (case["id"] in RULE_FOLLOWER_MISTAKES))
    _, reference, response = fields(prompt)
    words = re.findall(r"\w+", reference.split(" (equivalent forms")[0].casefold())
    return "1" if words and all(w in response.casefold() for w in words) else "0"


def half_wrong_accepting(prompt: str, **_) -> str:
    """Right on every right answer, but accepts every other wrong one."""
    case = _case(prompt)
    if case is None or case["verdict"] == 1:
        return "1"
    return "1" if sorted(c["id"] for c in CASES.values() if c["verdict"] == 0).index(case["id"]) % 2 else "0"


def coin_flip(seed: int = 0):
    rng = random.Random(seed)
    return lambda prompt, **_: rng.choice("01")


def always(answer: str):
    return lambda prompt, **_: answer


def served(judge):
    """The same judge as the fake server's ``reply(body)``."""
    return lambda body: judge(prompt_of(body))
