"""The privacy statement of a private-prediction corpus (the checklist of :mod:`.statement`)."""

from __future__ import annotations

from continuousbench.dp.prediction_accounting import PredictionGuarantee
from continuousbench.dp.statement import published_table


def _headline(g: PredictionGuarantee, secret: bool) -> str:
    if secret:
        return (
            "This corpus was made by private prediction (Amin et al. 2024) and satisfies "
            f"**({g.epsilon:.4g}, {g.delta:.3g})-differential privacy** with respect to the private corpus."
        )
    return (
        "**No DP guarantee.** This corpus was made by private prediction whose batches, noise and token "
        "draws came from a public test seed (`--insecure_noise_seed`); the accounting below is what the "
        f"run would have had, ({g.epsilon:.4g}, {g.delta:.3g}), but anyone who knows the seed can "
        "reproduce its randomness. Do not release it."
    )


def prediction_statement(g: PredictionGuarantee, *, secret: bool, args) -> str:
    """Markdown statement; ``args`` are the command's arguments (model, template, record length)."""
    svt = (
        f"With the sparse vector test (threshold {g.svt_threshold:g}, noise Laplace({g.svt_noise:g}) on the "
        f"threshold and Laplace({2 * g.svt_noise:g}) on each distance), a token is drawn from the public "
        "prediction (no private record in the prompt) while the L1 distance between the batch's mean "
        "next-token distribution and the public one stays below the threshold: such a public token costs "
        "nothing; the AboveThreshold run it belongs to is paid for by the private token that ends it."
        if g.svt_threshold is not None
        else "Every token is private (no sparse vector test)."
    )
    bounded = 2 * g.logit_clip / (g.expected_batch_size * g.temperature)
    rows = [
        ("epsilon", f"{g.epsilon:.4g}"),
        ("delta", f"{g.delta:.3g}"),
        ("zCDP rho of the corpus", f"{g.rho:.6g} = {g.private_tokens} x ({g.rho_em:.6g} + {g.rho_svt:.6g})"),
        (
            "accountant",
            "zCDP per token (Theorem 1 of the paper), composed and converted to (epsilon, "
            "delta) by `dp_accounting.rdp.RdpAccountant`",
        ),
        ("private tokens per record (r)", str(g.private_tokens)),
        ("expected batch size (s)", str(g.expected_batch_size)),
        ("logit clip (c)", f"{g.logit_clip:g}"),
        ("temperature (tau)", f"{g.temperature:.6g}"),
        (
            "per private token",
            f"exponential mechanism, {bounded:.4g}-bounded range (2c / (s tau)), zCDP eps^2 / 8",
        ),
        ("batches (records written)", str(g.batches)),
        ("dataset size n", str(g.dataset_size)),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    published = published_table(
        [
            ("the records (text)", "yes: post-processing of the emitted tokens"),
            (
                "private and public token counts, why each record stopped (prediction.json)",
                "yes: functions of the emitted tokens and the test's answers, "
                "which are the mechanism's output",
            ),
            (
                "the batch assignment and the actual batch sizes",
                "never published (secret, in the work folder, deleted on publishing)",
            ),
            ("dataset size n (and delta when derived from it)", "treated as public"),
            ("everything else here (settings, accounting)", "public: fixed before decoding"),
        ]
    )
    return f"""## Privacy statement

{_headline(g, secret)}

1. **DP setting.** Central DP: the party running the job is trusted to run the mechanism as described.
   The synthetic corpus is released; the base model `{args.model}` is public and not changed.
2. **What the guarantee covers.** Every token emitted, and for each whether it was private: the
   whole output. Not covered: hyperparameters chosen before this job (not accounted for). The base
   model and the prompt template `{args.prompt_set}` are public.
3. **Unit of privacy and adjacency.** One corpus record (one document), cut to its first
   {args.max_record_tokens} tokens of the model's tokenizer; add-or-remove one record.
4. **Batches.** Each record joins batch j (one per synthetic record) with probability s / n, or none,
   independently of the others: the batches are disjoint and a record is in at most one, so adding or
   removing it changes one batch (parallel composition). A batch's prompts are encoded once and reused
   for all its tokens.
5. **One token.** Each private prompt's logits are shifted so the largest is c and floored at -c, summed
   and divided by s (public; the actual batch size is not used), and the token is drawn from
   softmax(sum / tau) over the tokenizer's tokens but its special ones (end-of-text aside; a public
   candidate set): the exponential mechanism, whose scores one record moves by at most c / s.
   {svt} A record stops at its end-of-text token, at the template's stop text, at
   {args.max_new_tokens} tokens or after r private tokens.
6. **Randomness.** The batches are drawn by a numpy PCG64 generator seeded with 128 bits, the noise and
   every token by a torch generator seeded with 64 bits, both from the operating system's entropy (not
   from any published seed), kept only in the hidden work folder and deleted on publishing. The draws
   are floating-point computations, not hardened against floating-point attacks.
7. **Accounting.**

| quantity | value |
| --- | --- |
{table}

8. **Published numbers and whether they are private.**

{published}

9. **Serialised DP event** (`dp_accounting` DpEvent, `continuousbench.dp.accounting.dp_event_from_json`
   rebuilds it):

```json
{g.event_json}
```
"""
