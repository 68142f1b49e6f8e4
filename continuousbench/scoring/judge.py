"""LLM-match: a judge model decides whether a response carries the reference answer (paper §2.2, App. I.3).

Code decides what needs no model (:func:`decide`): an empty response does not match, an exact match
(``scoring.exact_match``) does, and a numeric reference against a response that writes numbers follows
the paper's rule (relative error ``|r - g| / mean(r, g)`` below 0.01 %), so the judge sees only the
cases that need it. Before a run trusts a judge, the judge answers a shipped calibration set
(:func:`calibrate`, ``judge_data/calibration.jsonl``; docs/judge.md) and :func:`gate` refuses one whose
accuracy or false-accept rate is out of bounds.
The judge keeps no cache of its own: its generator's is the only one. A judge built with ``cache_dir``
(``make_generator``) keeps every answer on disk keyed by server (URL without credentials), model,
prompt and sampling (:class:`continuousbench.llm.cache.Cached`), so editing the prompt or changing the
model or the server never reuses stale verdicts, and a rerun of judging sends no request; ``stats``
counts those cache hits (``cached``) and the answers paid for (``judged``). A reply that is not ``0`` or
``1`` is returned as None and counted in ``stats["unparseable"]`` (the judge answers greedily, so it is
cached like any answer: asking again would get the same reply). The ``judge-cache.sqlite`` files of
earlier versions are ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from decimal import Decimal

from continuousbench.credentials import redact
from continuousbench.errors import UserError
from continuousbench.llm import GenerationError, TextGenerator
from continuousbench.scoring.match import as_number, exact_match, normalize, number_tokens

JUDGE_PROMPT = """You are grading a short answer in an automated evaluation. Decide whether the RESPONSE \
gives the same answer as the REFERENCE for the QUESTION below. Do not judge whether the reference is true.

Rules:
- The response matches if it states everything the reference states. Different wording, synonyms and \
reordering are fine.
- Extra detail is fine, and so is a more specific answer (e.g. "Labrador" for "dog"), as long as nothing \
in the reference is missing or contradicted.
- Numbers match only if they differ by less than 0.01% relative error, |response - reference| divided by \
the mean of the two.
- A refusal, an empty response or a different answer does not match.

QUESTION: {question}
REFERENCE: {reference}
RESPONSE: {response}

Reply with a single character: 1 if the response matches the reference, 0 if it does not."""

# Bump with any change to JUDGE_PROMPT: results carry it, and compare refuses runs judged differently.
PROMPT_VERSION = "2"
_VERDICT = re.compile(r"^[\s\"'*`]*([01])[\s\"'*`.]*$")
NUMERIC_TOLERANCE = Decimal("0.0001")  # 0.01 % relative error


def parse_verdict(text: str) -> bool | None:
    """``"1"`` -> True, ``"0"`` -> False (quotes, markdown stars and a final period tolerated), else None."""
    found = _VERDICT.match(text)
    return None if found is None else found.group(1) == "1"


def numbers_close(a: Decimal, b: Decimal) -> bool:
    """The paper's rule: ``|a - b| / |mean(a, b)|`` below 0.01 %. Equal numbers (two zeros too) match;
    a zero mean with different numbers (``5`` and ``-5``) is an infinite error."""
    if a == b:
        return True
    mean = abs(a + b) / 2
    return mean != 0 and abs(a - b) / mean < NUMERIC_TOLERANCE


def numeric_match(response: str, reference: str) -> bool | None:
    """The relative-error rule when ``reference`` is a number and the response writes at least one
    number (any of them may match: an answer may list alternatives); else None (the judge decides,
    e.g. ``"seventy-nine"``)."""
    ref = as_number(normalize(reference))
    tokens = number_tokens(response) if ref is not None else []
    return any(numbers_close(tok, ref) for tok in tokens) if tokens else None


DECIDERS = ("empty", "exact", "numeric")  # the verdicts code takes before any request, in this order


def decide(response: str, references: Sequence[str]) -> tuple[str, bool] | None:
    """``(rule, verdict)`` when code decides the match without the judge, else None.

    An empty answer does not match; an exact match (numbers by value, aliases included) does; a numeric
    reference is decided by :func:`numeric_match` when the response writes a number."""
    if not normalize(response):
        return "empty", False
    if exact_match(response, references):
        return "exact", True
    numeric = numeric_match(response, references[0])
    return None if numeric is None else ("numeric", numeric)


def decision_counts(references: Sequence[Sequence[str]], responses: Sequence[str]) -> dict[str, int]:
    """How many verdicts each rule of :func:`decide` took and how many were left to the judge."""
    counts = dict.fromkeys((*DECIDERS, "judge"), 0)
    for refs, response in zip(references, responses, strict=True):
        decided = decide(response, refs)
        counts["judge" if decided is None else decided[0]] += 1
    return counts


def _shown_reference(references: Sequence[str]) -> str:
    """The ground truth as the judge sees it: the answer, plus aliases when there are any."""
    first, *aliases = references
    return first if not aliases else f"{first} (equivalent forms: {'; '.join(aliases)})"


class Judge:
    """LLM-match with a text generator as judge; ``match(questions, references, responses)``.

    ``generator`` answers (and caches, when made with ``cache_dir``) the judge prompts;
    ``model_name`` names the judge in errors. The judge asks each batch once: the endpoint's retries are
    the only retry layer (a second one on top multiplied one failing request: 4 x 3 went out)."""

    def __init__(self, generator: TextGenerator, model_name: str, batch_size: int = 64):
        self.generator, self.model_name, self.batch_size = generator, model_name, batch_size
        self.stats = {**dict.fromkeys(DECIDERS, 0), "cached": 0, "judged": 0, "unparseable": 0}

    def _cache_hits(self) -> int:
        """The generator's cache hits so far (0 for a backend without a cache)."""
        return int(getattr(self.generator, "stats", {}).get("cached", 0))

    def _ask(self, prompts: list[str]) -> list[str]:
        """One batch through the generator (which retries, if it can), or one clear error."""
        try:
            texts = self.generator.generate(prompts, temperature=0.0, max_new_tokens=4)
        except Exception as err:  # endpoint errors, a scripted backend's failure: one line naming the judge
            raise GenerationError(
                f"judge {self.model_name!r} did not answer ({type(err).__name__}: {err}); "
                "check the judge endpoint or model"
            ) from err
        if len(texts) != len(prompts):
            raise GenerationError(
                f"judge {self.model_name!r} gave {len(texts)} verdicts for {len(prompts)} "
                "prompts; check the judge backend"
            )
        return list(texts)

    def prompt(self, question: str, references: Sequence[str], response: str) -> str:
        """The prompt of one case: the judge sees the aliases and the response's first line."""
        shown, answer = _shown_reference(references), response.split("\n", 1)[0].strip()
        return JUDGE_PROMPT.format(question=question, reference=shown, response=answer)

    def ask(self, prompts: Sequence[str]) -> list[bool | None]:
        """The judge's verdict on each prompt; each distinct prompt is asked once, in batches, and the
        generator's cache answers those it already holds."""
        unique = list(dict.fromkeys(prompts))
        verdict: dict[str, bool | None] = {}
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start : start + self.batch_size]
            hits = self._cache_hits()
            texts = self._ask(batch)
            cached = self._cache_hits() - hits
            self.stats["cached"] += cached
            self.stats["judged"] += len(batch) - cached
            verdict.update(zip(batch, map(parse_verdict, texts), strict=True))
        verdicts = [verdict[p] for p in prompts]
        self.stats["unparseable"] += sum(v is None for v in verdicts)
        return verdicts

    def match(
        self, questions: Sequence[str], references: Sequence[Sequence[str]], responses: Sequence[str]
    ) -> list[bool | None]:
        """One verdict per response: True/False, or None when the judge's reply was unparseable.
        Code decides first (:func:`decide`); only the rest reach the judge."""
        verdicts: list[bool | None] = [None] * len(responses)
        rows, prompts = [], []
        for i, (question, refs, response) in enumerate(zip(questions, references, responses, strict=True)):
            decided = decide(response, refs)
            if decided is not None:
                self.stats[decided[0]] += 1
                verdicts[i] = decided[1]
            else:
                rows.append(i)
                prompts.append(self.prompt(question, refs, response))
        for i, verdict in zip(rows, self.ask(prompts), strict=True):
            verdicts[i] = verdict
        return verdicts


# ---------------------------------------------------------------------------------------------------
# Calibration: the judge answers cases of known verdict before a run trusts it (docs/judge.md)

CALIBRATION_FILE = "scoring/judge_data/calibration.jsonl"
MIN_ACCURACY = 0.85  # always-"1", always-"0" and coin-flip judges score about 0.5 on the balanced set
MAX_FALSE_ACCEPT = 0.2  # a judge accepting half the wrong answers is refused even if it is right elsewhere


def calibration_cases() -> list[dict]:
    """The shipped cases: id, kind, question, reference, response and the right verdict (1 or 0)."""
    from importlib.resources import files

    text = files("continuousbench").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def calibrate(judge: Judge, cases: Sequence[dict] | None = None) -> dict:
    """The judge's figures on the calibration cases, every case asked of the model (none decided by
    code: this measures the model). An unparseable reply is an error, never a match."""
    cases = calibration_cases() if cases is None else list(cases)
    asked = judge.ask([judge.prompt(c["question"], [c["reference"]], c["response"]) for c in cases])
    right = [v is True for c, v in zip(cases, asked, strict=True) if c["verdict"] == 1]
    wrong = [v is True for c, v in zip(cases, asked, strict=True) if c["verdict"] == 0]
    missed = [c["id"] for c, v in zip(cases, asked, strict=True) if v is None or int(v) != c["verdict"]]
    digest = hashlib.sha256(json.dumps(cases, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {
        "cases": len(cases),
        "set_sha256": digest,
        "accuracy": (len(cases) - len(missed)) / len(cases),
        "false_accept": sum(wrong) / len(wrong) if wrong else 0.0,
        "false_reject": (len(right) - sum(right)) / len(right) if right else 0.0,
        "unparseable": sum(v is None for v in asked),
        "missed": missed,
    }


def gate(
    figures: dict,
    name: str,
    *,
    min_accuracy: float = MIN_ACCURACY,
    max_false_accept: float = MAX_FALSE_ACCEPT,
    override: bool = False,
) -> dict:
    """``figures`` with the thresholds and the outcome; a judge out of bounds fails in one line unless
    ``override`` (then ``override`` is true in what it returns, and the results carry it)."""
    passed = figures["accuracy"] >= min_accuracy and figures["false_accept"] <= max_false_accept
    if not passed and not override:
        raise UserError(
            f"--judge {name} failed calibration on {figures['cases']} cases: accuracy "
            f"{figures['accuracy']:.0%} (needs >= {min_accuracy:.0%}), false accepts "
            f"{figures['false_accept']:.0%} (at most {max_false_accept:.0%}), false rejects "
            f"{figures['false_reject']:.0%}, unparseable {figures['unparseable']}; use a stronger judge "
            "model, or pass --judge_override_calibration to score with it anyway (the results say so)"
        )
    return {
        **figures,
        "min_accuracy": min_accuracy,
        "max_false_accept": max_false_accept,
        "passed": passed,
        "override": not passed,
    }


def trusted(
    generator: TextGenerator,
    spec: str,
    *,
    min_accuracy: float = MIN_ACCURACY,
    max_false_accept: float = MAX_FALSE_ACCEPT,
    override: bool = False,
    batch_size: int = 64,
) -> tuple[Judge, dict]:
    """(judge, its record) for the judge ``spec`` answered by ``generator``: calibrated and gated
    (:func:`gate`) before it decides anything, the one path of every command that judges (the harness,
    the NEWS filter); the record holds its :func:`identity` and calibration."""
    judge = Judge(generator, model_name=spec, batch_size=batch_size)
    calibration = gate(
        calibrate(judge),
        spec,
        min_accuracy=min_accuracy,
        max_false_accept=max_false_accept,
        override=override,
    )
    return judge, {**identity(spec, generator), "calibration": calibration}


def identity(spec: str, generator: TextGenerator | None = None) -> dict:
    """What makes two judges the same: backend kind, model, prompt version; and, for an endpoint, which
    server answered: its URL without credentials and its ``fingerprint`` (what ``/models`` listed, the
    ``model`` field of its first answer), since servers share generic model names."""
    kind, _, target = redact(spec).partition(":")
    model: str | None = target
    endpoint = None
    if kind in ("endpoint", "completions"):
        endpoint, _, model = target.partition("#")
        model = model or None  # the server's default model: unnamed
    found = {
        "kind": kind,
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "prompt_sha256": hashlib.sha256(JUDGE_PROMPT.encode()).hexdigest(),
    }
    if endpoint is not None:
        fingerprint = getattr(generator, "fingerprint", None) or {}
        found["endpoint"] = endpoint
        found["server"] = {"served": fingerprint.get("served"), "answered_by": fingerprint.get("answered_by")}
    return found


def same_judge(a: dict | None, b: dict | None) -> bool:
    """Whether two records' judges (their ``judge`` entries) give comparable LLM-match verdicts: same kind,
    model and prompt, and, where both records name it, the same model answering (the server's own name)."""
    keys = ("kind", "model", "prompt_version")
    if a is None or b is None or any(a.get(k) != b.get(k) for k in keys):
        return False
    served = [(judge.get("server") or {}).get("answered_by") for judge in (a, b)]
    return None in served or served[0] == served[1]


def label(judge: dict | None) -> str:
    """``model (kind, prompt vN, calibration 95%)`` for tables; ``-`` without a judge."""
    if not judge:
        return "-"
    calibration = judge.get("calibration") or {}
    figure = f", calibration {calibration['accuracy']:.0%}" if "accuracy" in calibration else ""
    flag = " OVERRIDDEN" if calibration.get("override") else ""
    model = judge.get("model") or "default model"
    return f"{model} ({judge['kind']}, prompt v{judge['prompt_version']}{figure}){flag}"
