"""Private prediction's mechanism: disjoint batches, clipping, the exponential mechanism's distribution
(noise and clipping both matter), the sparse vector test, and KV-cached decoding."""

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from continuousbench.dp.prediction import (
    BatchDecoder,
    Mechanism,
    assign_batches,
    check_batches,
    choose_tokens,
    clip_logits,
)
from continuousbench.errors import UserError


def test_batches_are_disjoint_each_record_in_at_most_one():
    rng = np.random.default_rng(0)
    batches = assign_batches(1000, 30, 20, rng)
    assert len(batches) == 30
    used = np.concatenate(batches)
    assert len(used) == len(set(used.tolist())) and used.min() >= 0 and used.max() < 1000
    assert 540 < len(used) < 660  # 30 x 20 expected
    with pytest.raises(UserError, match="lower --num_samples to 50"):
        check_batches(1000, 51, 20)


def test_each_record_joins_each_batch_independently_with_probability_s_over_n():
    """The parallel composition needs a record's batch drawn apart from the others': adding a record
    must leave every other record where it was."""
    rng = np.random.default_rng(1)
    owner = np.full((4000, 12), -1)
    for t in range(4000):
        for j, batch in enumerate(assign_batches(12, 3, 2, rng)):
            owner[t, batch] = j
    for j in range(3):
        assert abs((owner[:, 0] == j).mean() - 2 / 12) < 0.02
    both = ((owner[:, 0] == 0) & (owner[:, 1] == 0)).mean()
    assert abs(both - (2 / 12) ** 2) < 0.01  # independent, not exactly two per batch


def test_clipping_bounds_every_logit_and_keeps_narrow_rows():
    logits = torch.tensor([[50.0, 0.0, -3.0], [1.0, 0.5, 0.0]])
    clipped = clip_logits(logits, 2.0)
    assert clipped.max() == 2.0 and clipped.min() >= -2.0
    assert torch.equal(clipped[0], torch.tensor([2.0, -2.0, -2.0]))
    assert torch.allclose(clipped[1].softmax(-1), logits[1].softmax(-1))  # a range under 2c: unchanged
    assert torch.equal(clip_logits(logits + 7.0, 2.0), clipped)  # shift invariant, like softmax


# A batch of four prompts over five tokens: three lean to token 1, one record screams token 0.
LEANING = [0.0, 2.0, 0.0, 0.0, 0.0]
OUTLIER = [50.0, 0.0, 0.0, 0.0, 0.0]


def _em_draws(draws: int, mech: Mechanism) -> np.ndarray:
    """Token counts of ``draws`` independent batches, each the same four prompts (one call)."""
    rows = torch.tensor([LEANING, LEANING, LEANING, OUTLIER]).repeat(draws, 1)
    owner = torch.arange(draws).repeat_interleave(4)
    generator = torch.Generator().manual_seed(0)
    tokens, private, _ = choose_tokens(rows, owner, draws, mech, generator)
    assert private.all()
    return np.bincount(tokens.numpy(), minlength=5)


def test_tokens_follow_the_clipped_exponential_mechanism_not_the_raw_or_greedy_choice():
    """Worked by hand: clipped at c = 1, the rows are [-1, 1, -1, -1, -1] (x3) and [1, -1, -1, -1, -1];
    their sum over s = 4 is [-0.5, 0.5, -1, -1, -1]; at tau = 0.5 the token is drawn from
    softmax([-1, 1, -2, -2, -2]). Without the clipping the outlier decides (token 0 almost surely);
    without the noise (argmax) it is always token 1. Both are rejected at once by the same test."""
    counts = _em_draws(4000, Mechanism(batch_size=4, clip=1.0, temperature=0.5))
    expected = np.exp([-1.0, 1.0, -2.0, -2.0, -2.0])
    expected /= expected.sum()
    assert chisquare(counts, 4000 * expected).pvalue > 1e-3
    unclipped = np.exp(np.array([12.5, 1.5, 0.0, 0.0, 0.0]) / 0.5) + 1e-9  # the raw mean's softmax
    assert chisquare(counts, 4000 * unclipped / unclipped.sum()).pvalue < 1e-12
    assert counts[1] < 3500  # greedy would give all 4000 to token 1


def test_the_public_divisor_is_s_not_the_batch_size():
    """The same four prompts divided by s = 16 instead of 4: every score a quarter of the above."""
    counts = _em_draws(4000, Mechanism(batch_size=16, clip=1.0, temperature=0.5))
    expected = np.exp(np.array([-0.5, 0.5, -1.0, -1.0, -1.0]) / 4 / 0.5)
    assert chisquare(counts, 4000 * expected / expected.sum()).pvalue > 1e-3


def _svt(private_rows, public_rows, threshold: float, noise: float, thresholds=None):
    groups = len(public_rows)
    rows = torch.tensor(private_rows).repeat(groups, 1)
    owner = torch.arange(groups).repeat_interleave(len(private_rows))
    mech = Mechanism(len(private_rows), 5.0, 1.0, svt_threshold=threshold, svt_noise=noise)
    start = torch.full((groups,), threshold, dtype=torch.float64) if thresholds is None else thresholds
    generator = torch.Generator().manual_seed(1)
    return choose_tokens(rows, owner, groups, mech, generator, torch.tensor(public_rows), start)


def test_sparse_vector_emits_public_tokens_only_when_its_test_passes():
    agree = [[0.0, 4.0, 0.0]] * 2
    tokens, private, after = _svt(agree, [[0.0, 4.0, 0.0]] * 500, threshold=0.5, noise=0.01)
    assert not private.any()  # distance 0, far below the threshold: every token public, free
    assert torch.all(after == 0.5)  # and no threshold redrawn (the run goes on)
    disagree = [[9.0, 0.0, 0.0]] * 2
    tokens, private, after = _svt(disagree, [[0.0, 0.0, 9.0]] * 500, threshold=0.5, noise=0.01)
    assert private.all() and torch.all(tokens == 0)  # distance ~2: every token private (and paid for)
    assert not torch.any(after == 0.5)  # each run ended: fresh noisy thresholds
    assert torch.all((after - 0.5).abs() < 0.2)


def test_sparse_vector_noise_is_used():
    """Distance equal to the threshold: the noisy comparison goes either way, about half and half."""
    rows, public = [[0.0, 0.0]] * 2, [[0.0, 0.0]] * 4000
    distance_zero = torch.zeros(4000, dtype=torch.float64)
    _, private, _ = _svt(rows, public, threshold=0.1, noise=0.05, thresholds=distance_zero)
    assert 0.45 < private.double().mean() < 0.55


@pytest.fixture(scope="module")
def tiny_lm(dp_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(dp_model_dir).eval(), AutoTokenizer.from_pretrained(
        dp_model_dir
    )


BATCHES = [
    [f"Geminon {i} has attack {i % 90} and lives in zone {i % 13}." for i in range(k, k + 3)] for k in (0, 10)
]


def test_kv_cache_decodes_what_recomputing_the_prompts_decodes(tiny_lm):
    model, tokenizer = tiny_lm
    mech = Mechanism(batch_size=3, clip=4.0, temperature=1.0, svt_threshold=0.6, svt_noise=0.1)
    made = {}
    for cached in (True, False):
        decoder = BatchDecoder(model, tokenizer, mech, max_new_tokens=12, private_tokens=12, kv_cache=cached)
        made[cached] = decoder.decode(BATCHES, "", torch.Generator().manual_seed(3))
    assert made[True] == made[False] and all(len(g.tokens) > 0 for g in made[True])
    emitted = {token for g in made[True] for token in g.tokens}
    assert not emitted & set(tokenizer.all_special_ids)  # candidates: no <pad>, <bos>, <unk> from the floor


def test_a_record_stops_after_its_private_budget_public_tokens_are_free(tiny_lm):
    model, tokenizer = tiny_lm
    always_private = Mechanism(batch_size=3, clip=4.0, temperature=1.0, svt_threshold=1e-6, svt_noise=1e-9)
    decoder = BatchDecoder(model, tokenizer, always_private, max_new_tokens=20, private_tokens=4)
    for g in decoder.decode(BATCHES, "", torch.Generator().manual_seed(0)):
        assert g.public == 0 and g.private == (4 if g.stop == "budget" else len(g.tokens) + 1)
        assert g.stop in ("budget", "eos")
    mostly_public = Mechanism(batch_size=3, clip=4.0, temperature=1.0, svt_threshold=2.0, svt_noise=1e-9)
    decoder = BatchDecoder(model, tokenizer, mostly_public, max_new_tokens=20, private_tokens=4)
    for g in decoder.decode(BATCHES, "", torch.Generator().manual_seed(0)):
        assert g.private == 0 and g.public == len(g.tokens) + (g.stop == "eos")
