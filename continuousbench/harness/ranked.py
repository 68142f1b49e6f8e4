"""Graded knowledge beside exact match: ranked-choice accuracy and the answer's loss (FictionalQA).

For every question, the few-shot prompt of the greedy QA (:func:`.prompts.qa_prompt`) is continued by
``" " + option`` for each option of :mod:`continuousbench.scoring.mcq`; the model's pick is the option
with the highest log-likelihood per character of the option (lm-eval's ``acc_norm``; the unnormalised
pick, its ``acc``, is kept beside it). ``answer_nll`` is the mean negative
log-likelihood per token of the true answer after the same prompt: it falls as a model comes closer to
the fact long before the greedy answer is right. Scored in the precision of the model's weights, as the
greedy answers are; shared out across processes.
"""

from __future__ import annotations

from collections.abc import Sequence

from continuousbench.errors import UserError
from continuousbench.harness.qa_eval import weights_precision
from continuousbench.llm.local import PrefixCache, common_prefix
from continuousbench.processes import share_out
from continuousbench.scoring.mcq import derive_options, pick
from continuousbench.scoring.prompts import qa_prompt


def continuation_logliks(
    model,
    tokenizer,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 16,
    prefix: PrefixCache | None = None,
):
    """(sum of log-probabilities, token count) of each ``continuation`` after its ``context``.

    The context is tokenised as the greedy QA tokenises its prompt (with the tokenizer's special
    tokens), the continuation on its own and appended, so the two never merge into one token. With
    ``prefix`` (the ids every context starts with, run once) only each row's own tokens are run."""
    import torch

    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    skip = len(prefix.ids) if prefix is not None else 0
    out: list[tuple[float, int]] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        heads = tokenizer([c for c, _ in batch], add_special_tokens=True)["input_ids"]
        tails = tokenizer([t for _, t in batch], add_special_tokens=False)["input_ids"]
        rows = [(h + t)[skip:] for h, t in zip(heads, tails, strict=True)]
        width = max(map(len, rows))
        ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=device)
        mask = torch.tensor([[1] * (skip + len(r)) + [0] * (width - len(r)) for r in rows], device=device)
        cached = {} if prefix is None else {"past_key_values": prefix.repeated(len(rows)), "use_cache": True}
        with torch.inference_mode():
            logits = model(input_ids=ids, attention_mask=mask, **cached).logits.float()
            logprobs = torch.log_softmax(logits, dim=-1)
        for i, (head, tail) in enumerate(zip(heads, tails, strict=True)):
            first = len(head) - skip  # the continuation's first token, in this row's own tokens
            positions = torch.arange(first - 1, first + len(tail) - 1, device=device)
            targets = ids[i, first : first + len(tail)]
            out.append((float(logprobs[i, positions, targets].sum()), len(tail)))
    return out


def rank(model, tokenizer, qa, options: dict[str, list[str]], *, track: str):
    """Per question of ``qa``: the index of the option picked (``acc_norm``), whether it is the true
    answer, whether the unnormalised pick (``acc``) is, and the answer's NLL per token.

    The few-shot block every prompt starts with is run once (:class:`~continuousbench.llm.local.PrefixCache`,
    from all the questions before they are shared out), then each question's options and answer are
    scored together as one batch, whatever else is scored and however the questions are shared out: the
    same figures from one process or several (padding changes the last bits of a float32 forward pass)."""
    answers, ids = [str(a) for a in qa["answer"]], list(qa["id"])
    batches = []
    for q, a, i in zip(qa["question"], answers, ids, strict=True):
        prompt = qa_prompt(q, track)
        batches.append([(prompt, " " + o) for o in options[i]] + [(prompt, " " + a)])

    with weights_precision(model):
        prefix = shared_prefix(model, tokenizer, [pairs[0][0] for pairs in batches])

        def work(share: list) -> list:
            return [continuation_logliks(model, tokenizer, pairs, len(pairs), prefix) for pairs in share]

        scored = share_out(batches, work)
    picks, correct, raw, nll = [], [], [], []
    for lls, i, a in zip(scored, ids, answers, strict=True):
        logliks = [ll for ll, _ in lls[:-1]]
        picks.append(pick(logliks, options[i]))
        correct.append(options[i][picks[-1]] == a)
        raw.append(options[i][pick(logliks, options[i], normalise=False)] == a)
        nll.append(-lls[-1][0] / lls[-1][1])
    return picks, correct, raw, nll


def shared_prefix(model, tokenizer, prompts: Sequence[str]) -> PrefixCache | None:
    """The keys and values of the token prefix all ``prompts`` share, or None when it is too short to
    be worth a cache (or there are no prompts)."""
    import torch

    if not prompts:
        return None
    heads = tokenizer(sorted(set(prompts)), add_special_tokens=True)["input_ids"]
    shared = common_prefix(heads)
    if shared < PrefixCache.MIN_TOKENS:
        return None
    with torch.inference_mode():
        return PrefixCache(model, heads[0][:shared])


def release_options(release_path: str, seed: int) -> dict[str, list[str]]:
    """The options of every question of the release: its ``options`` column where it has one (release
    format 2), else derived from all its questions as the builder derives them."""
    from continuousbench.release.layout import QA_PARTS
    from continuousbench.release.load import load_release

    rows = []
    for part in QA_PARTS:
        try:
            splits = load_release(release_path, part, verify=False)  # the harness verified it
        except UserError:  # a NEWS release has no qa_singleton
            continue
        for split in splits.values():
            rows += split.to_list()
    if rows and all(r.get("options") for r in rows):
        return {str(r["id"]): list(r["options"]) for r in rows}
    return derive_options(rows, seed=seed)
