"""The privacy statement of a DP *model*: the evaluator itself trained with DP-SGD on the corpus.

This is the direct DP fine-tuning diagnostic of paper App. E (``continuousbench evaluate --epsilon``).
What is released is a model and its QA scores, not a dataset: the statement says so first, then answers
the same checklist as a generator's (:mod:`.statement`, whose accounting table, headline and software
items it reuses). Unlike a generator, the checkpoint is selected by the release's **validation QA**, not
by a validation split of the corpus: those questions are not protected, but the accuracies computed on
them are post-processing of the DP checkpoints, so they are published and stay covered.
"""

from __future__ import annotations

from continuousbench.dp.accounting import PrivacyGuarantee
from continuousbench.dp.statement import (
    NOT_PUBLISHED,
    RunFacts,
    accounting_table,
    published_table,
    sampling_line,
    software_and_event,
    statement_headline,
)

KIND = "dp-model"  # results.json `model_privacy.kind`: a DP model, never to be read as DP data
UNIT = "one corpus document (record), add-or-remove adjacency"
SELECTION = (
    "validation qa_public contains accuracy of every evaluated checkpoint (the release's validation QA: "
    "not protected; post-processing of the DP checkpoints)"
)


def _published_table() -> str:
    rows = [
        ("LoRA adapter weights (`model/`)", "yes (DP-SGD output, post-processing of the noisy gradients)"),
        (
            "validation QA accuracy at each evaluation, the selected step (`validation_history`, "
            "`selected_checkpoint`)",
            "yes: computed from the DP checkpoints and the public validation questions",
        ),
        (
            "test scores, predictions, support strata and intervals (`metrics`, `predictions.parquet`)",
            "yes: the selected DP model answering public questions",
        ),
        ("the number of documents n (and delta when derived from it)", "treated as public"),
        ("the corpus's fingerprint, the number of documents cut at the length limit", "**not published**"),
        ("everything else (settings, accounting)", "public: fixed before training"),
    ]
    return published_table(rows)


def evaluator_statement(
    g: PrivacyGuarantee, facts: RunFacts, *, questions: int, corpus_documents: int, replay_documents: int = 0
) -> str:
    """Markdown statement of a DP-trained evaluator; ``questions``: validation questions per evaluation."""
    length = facts.max_length or "the training sequence length in"
    replay = (
        f" The n = {g.dataset_size} records are the corpus's {corpus_documents} documents and "
        f"{replay_documents} documents of the public replay corpus (`--replay_corpus`), sampled, clipped "
        "and noised alike: the guarantee holds for every corpus document."
        if replay_documents
        else ""
    )
    return f"""## Privacy statement (a DP model, not DP data)

{statement_headline(g, facts.secret, "This evaluator")}
It is a **DP model**: the evaluator itself was fine-tuned with DP-SGD directly on the corpus (the direct
DP fine-tuning diagnostic, paper App. E), and no synthetic data was made. It bounds what the same privacy
budget lets a model learn from the original documents; it is not a DP synthetic corpus and must not be
compared as one.

1. **DP setting.** Central DP: the party that trains the evaluator is trusted to run the mechanism as
   described. The trained model (its LoRA adapter weights) and its QA scores are released.
2. **What the guarantee covers.** One training run. The mechanism's output is the whole sequence of
   noisy gradients, so every checkpoint, the released weights and every answer they give are covered by
   post-processing. **Checkpoint selection uses the release's validation QA** ({questions} `qa_public`
   validation questions, contains accuracy at every evaluation): these questions are **not protected**
   (public benchmark data outside the guarantee), and selecting with them is post-processing of the DP
   checkpoints. Not covered: the base checkpoint (public data), the release's QA (validation and test)
   and support counts. Hyperparameter tuning, if any was done before this run, is not accounted for.
3. **Unit of privacy.** One corpus document (one record), example-level DP, full document. A document
   is at most {length} tokens of the tokenizer of `{facts.base_model}` ({facts.tokenizer}); longer
   documents are cut to their first {length} tokens. Each document is one example with an empty
   prompt; its loss is the mean over its tokens.{replay}
4. **Adjacency.** Add-or-remove one document.
5. **Sampling.** {sampling_line(g)}. Batches are drawn exactly as accounted (no shuffling, no packing).
6. **Randomness.** {facts.randomness}
7. **Accounting.** PLD, for the formal statement above.

{accounting_table(g, facts)}

8. **Published numbers and whether they are private.** {NOT_PUBLISHED} The corpus's
   fingerprint (a hash of every document: with all documents but one, it would confirm a guess of the
   last) and the count of documents cut at the length limit are left out of `results.json`.

{_published_table()}

{software_and_event(g, facts)}"""
