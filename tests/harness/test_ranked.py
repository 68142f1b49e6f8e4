"""Ranked-choice knowledge: the options of each question, and the pick against a plain transformers
computation of the options' log-likelihoods."""

from __future__ import annotations

import pytest

from continuousbench.harness.ranked import rank, release_options, shared_prefix
from continuousbench.scoring.mcq import K, derive_options, pick, question_kind
from continuousbench.scoring.prompts import qa_prompt


@pytest.fixture(scope="module")
def qa_rows(tiny_release):
    from continuousbench.release.load import load_release

    return [
        r
        for part in ("qa_public", "qa_singleton")
        for s in load_release(tiny_release, part).values()
        for r in s.to_list()
    ]


def test_options_are_same_attribute_values_drawn_with_the_seed(qa_rows, tiny_release):
    options = derive_options(qa_rows, seed=0)
    by_kind = {}
    for row in qa_rows:
        by_kind.setdefault(question_kind(row), set()).add(row["answer"])
    for row in qa_rows:
        mine = options[row["id"]]
        assert row["answer"] in mine and len(set(mine)) == len(mine)
        assert len(mine) == min(K, len(by_kind[question_kind(row)]))
        assert set(mine) <= by_kind[row["attribute"]]
    assert derive_options(list(reversed(qa_rows)), seed=0) == options  # the order of rows does not matter
    assert derive_options(qa_rows, seed=1) != options  # another release seed, other options
    recorded = release_options(str(tiny_release), seed=0)  # release format 2: the options column
    assert all(r["options"] for r in qa_rows) and recorded == options  # what an older release derives
    positions = {options[r["id"]].index(r["answer"]) for r in qa_rows}
    assert positions == set(range(K))  # the true answer is not always first


def lm_eval_picks(lls, choices) -> tuple[int, int]:
    """(acc_norm's pick, acc's pick) as lm-evaluation-harness computes them (lm_eval/api/task.py,
    ConfigurableTask.process_results, output_type multiple_choice): ``completion_len`` is the characters
    of each choice from ``doc_to_choice``, which does not hold the " " target delimiter."""
    import numpy as np

    completion_len = np.array([float(len(i)) for i in choices])
    return int(np.argmax(np.array(lls) / completion_len)), int(np.argmax(lls))


def test_pick_normalises_by_length():
    assert pick([-10.0, -6.0], ["a much longer option", "b"]) == 0  # -10/20 beats -6/1
    assert pick([-3.0, -3.0], ["x", "y"]) == 0
    assert pick([-3.0, -2.0], ["x", "y"], normalise=False) == 1


def test_pick_is_lm_evals_rule_where_counting_the_delimiter_is_not():
    """Numeric options of 2 and 3 digits (a real tiny-release question, 10007-attack): per character of
    the option 104 wins; per character of " " + option (the rule before) 96 would; unnormalised, 96."""
    lls, options = [-3.0, -3.2, -4.4, -3.1], ["96", "88", "104", "86"]
    assert (pick(lls, options), pick(lls, options, normalise=False)) == lm_eval_picks(lls, options) == (2, 0)
    with_delimiter = [ll / len(" " + o) for ll, o in zip(lls, options, strict=True)]
    assert max(range(4), key=with_delimiter.__getitem__) == 0  # what the docs once called acc_norm


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_pick_equals_an_independent_transformers_computation(tiny_model_dir, tiny_release, qa_rows):
    """On 20 questions: the options' log-likelihoods summed token by token with a plain forward pass per
    option (no batching, no padding, no cached few-shot prefix), picked by lm-eval's rule, give the same
    picks, normalised or not, and the same answer NLL (up to float32 rounding)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()
    qa = Dataset.from_list(qa_rows[:20])
    options = release_options(str(tiny_release), seed=0)
    picks, correct, raw, nll = rank(model, tokenizer, qa, options, track="geminon")
    prompts = [qa_prompt(q) for q in qa["question"]]
    assert shared_prefix(model, tokenizer, prompts) is not None  # rank ran the few-shot block once

    def loglik(prompt: str, continuation: str) -> tuple[float, int]:
        head = tokenizer(prompt)["input_ids"]
        tail = tokenizer(continuation, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([head + tail])).logits[0].double()
        logprobs = torch.log_softmax(logits, dim=-1)
        return sum(float(logprobs[len(head) - 1 + j, t]) for j, t in enumerate(tail)), len(tail)

    expected_picks, expected_raw, expected_nll = [], [], []
    for row in qa_rows[:20]:
        prompt, opts = qa_prompt(row["question"]), options[row["id"]]
        norm, plain = lm_eval_picks([loglik(prompt, " " + o)[0] for o in opts], opts)
        expected_picks.append(norm)
        expected_raw.append(opts[plain] == row["answer"])
        ll, n = loglik(prompt, " " + row["answer"])
        expected_nll.append(-ll / n)
    assert picks == expected_picks and raw == expected_raw
    assert nll == pytest.approx(expected_nll, rel=1e-4)
    assert correct == [options[r["id"]][p] == r["answer"] for r, p in zip(qa_rows[:20], picks, strict=True)]
