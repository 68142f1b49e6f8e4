"""Step 1 of a harness run: everything the run reads, loaded and checked before any training.

The release (verified) and its QA splits, the candidate corpus (plus the replay mixture, documents cut
at a bounded length), the judge (asked one canned question and the calibration set, so that a dead or
untrustworthy judge is found now and not after hours of training), the base model and its tokenizer,
and a generation budget that fits the model's context. Each input's resolved absolute path is kept
beside what was given, so that ``results.json`` says exactly what was read and a run can be repeated
from another directory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError
from continuousbench.files import sha256_file
from continuousbench.release.layout import QA_PARTS as PARTS  # the QA parts a run scores
from continuousbench.training.arguments import HarnessArguments, ModelArguments
from continuousbench.training.config import EvaluatorConfig

logger = logging.getLogger(__name__)

# The canned pair a judge must get right before the run starts (an obvious match).
MIX_HELDOUT = 64  # documents of --mix_corpus kept out of training: the forgetting monitor's sample
CANNED = {"question": "What colour is a clear daytime sky?", "reference": "blue", "response": "Blue"}


@dataclass
class Inputs:
    """What a run reads; the ``*_record`` dicts go into ``results.json`` as they are."""

    release: dict  # id, manifest_sha256, track, given, path
    qa_validation: Any
    qa_test: dict[str, Any]
    corpus: Any  # the training text: candidate (+ replay), long documents cut
    corpus_record: dict  # source, path, documents, fingerprint, replay, cut
    model: Any
    tokenizer: Any
    model_record: dict  # given, path
    judge: Any | None
    generation: dict  # track, batch_size, max_new_tokens: keyword arguments of QA generation
    generation_record: dict  # requested and effective max_new_tokens, model context, longest prompt
    evaluation: dict | None = None  # the release's canonical evaluation (manifest), when it names one
    judge_record: dict | None = None  # identity and calibration figures (results.json `judge`)
    options: dict[str, list[str]] = field(default_factory=dict)  # question id -> ranked-choice options
    mix: dict | None = None  # --mix_corpus: source, ratio, fingerprint and its held-out sample's texts
    heldout_entities: frozenset[int] | None = None  # a build --heldout entity release's held-out entities


def resolved(source: str | None) -> str | None:
    """The absolute path of a local file or folder; anything else (a Hub id) unchanged."""
    if source is None:
        return None
    path = Path(source).expanduser()
    return str(path.resolve()) if path.exists() else source


def load_release(release: str, track: str | None) -> dict:
    """The verified release: id, sha256 of ``release.json``, track, and where it is."""
    from continuousbench.release.layout import MANIFEST
    from continuousbench.release.load import resolve_release, verify_release

    folder = resolve_release(release)
    manifest = verify_release(folder)
    return {
        "id": manifest["id"],
        "manifest_sha256": sha256_file(folder / MANIFEST),
        "track": track or manifest["track"],
        "seed": manifest.get("seed"),
        "given": release,
        "path": str(Path(folder).resolve()),
        "manifest": manifest,  # taken out by load_inputs: not part of the record
    }


def load_qa(folder: str, part: str, split: str, limit: int | None, seed: int, option: str):
    from continuousbench.harness.qa_eval import subsample
    from continuousbench.release.load import load_release as load_part

    return subsample(load_part(folder, part, split=split, verify=False), limit, seed, option)


def load_training_text(h: HarnessArguments, max_length: int, seed: int, release_path: str):
    """(training text, record): the candidate corpus, the replay mixture if any, long documents cut."""
    from continuousbench.results.privacy_check import delta_problem
    from continuousbench.results.privacy_statement import stated_privacy
    from continuousbench.training.data import (
        CHARS_PER_TOKEN,
        cap_documents,
        corpus_fingerprint,
        load_corpus,
        mix_replay,
    )

    source = h.corpus or release_path
    privacy, stated_in = stated_privacy(source, h.corpus_privacy)  # a bad statement fails before training
    corpus = load_corpus(source, h.text_column, h.corpus_split, option="--corpus")
    problem = delta_problem(privacy, len(corpus), given=h.corpus_privacy is not None)
    if problem:  # refused rather than ranked as DP data (docs/results-format.md)
        raise UserError(f"{stated_in}: {problem}; state a delta below 1/n, or evaluate without the statement")
    record = {
        "source": source,
        "path": resolved(source),
        "documents": len(corpus),
        "fingerprint": corpus_fingerprint(corpus),
        "replay": None,
        "privacy": privacy,
        "privacy_source": stated_in,
    }
    if h.replay_corpus:
        replay = load_corpus(h.replay_corpus, option="--replay_corpus")
        record["replay"] = {
            "source": h.replay_corpus,
            "path": resolved(h.replay_corpus),
            "fraction": h.replay_fraction,
            "fingerprint": corpus_fingerprint(replay),
        }
        corpus = mix_replay(corpus, replay, h.replay_fraction, seed)
    mix = None
    if h.mix_corpus:
        corpus, mix = mix_general_text(corpus, h, seed)
    corpus, record["cut"] = cap_documents(corpus, h.max_document_blocks * max_length * CHARS_PER_TOKEN)
    return corpus, record, mix


def mix_general_text(corpus, h: HarnessArguments, seed: int):
    """(training text with ``--mix_corpus`` mixed in at ``--mix_ratio``, the forgetting record with the
    texts of its held-out sample): FictionalQA trains on 5% fiction in 95% web text and watches the web
    text's loss; the sample is drawn with the seed and never trained on."""
    import numpy as np

    from continuousbench.training.data import corpus_fingerprint, load_corpus, mix_replay

    if h.replay_corpus:
        raise UserError("--mix_corpus and --replay_corpus both mix a corpus into the training text; pass one")
    general = load_corpus(h.mix_corpus, h.text_column, option="--mix_corpus")
    held = min(MIX_HELDOUT, len(general) // 2)
    if held < 1:
        raise UserError(f"--mix_corpus {h.mix_corpus} has one document; the monitor needs at least two")
    order = np.random.default_rng(seed).permutation(len(general))
    heldout = general.select(sorted(int(i) for i in order[:held]))
    if h.mix_ratio > 0:
        corpus = mix_replay(corpus, general.select(sorted(int(i) for i in order[held:])), h.mix_ratio, seed)
    mix = {
        "source": h.mix_corpus,
        "path": resolved(h.mix_corpus),
        "ratio": h.mix_ratio,
        "fingerprint": corpus_fingerprint(general),
        "heldout_documents": held,
        "texts": list(heldout["text"]),
    }
    return corpus, mix


def make_judge(h: HarnessArguments) -> tuple[Any, dict]:
    """(judge, its record): the LLM-match judge, asked one canned question and then the calibration set
    now (answers cached like every verdict), so that a dead judge, one that answers something other
    than 0 or 1, or one that cannot tell right from wrong fails here in one line, not after training."""
    from continuousbench.llm import GenerationError, make_generator
    from continuousbench.release.layout import default_root
    from continuousbench.scoring.judge import JUDGE_PROMPT, parse_verdict, trusted

    spec, cache = h.judge, default_root() / "judge-cache"
    generator = make_generator(spec, cache_dir=cache / "llm")  # the verdicts' only cache (endpoints)
    check = getattr(generator, "check", None)
    if check is not None:
        check()  # an endpoint that is down fails fast, without retries
    reply = generator.generate([JUDGE_PROMPT.format(**CANNED)], temperature=0.0, max_new_tokens=4)[0]
    if parse_verdict(reply) is None:
        raise GenerationError(
            f"--judge {spec} answered {reply[:40]!r} to a test question instead of 0 or 1; "
            "use an instruction-following model as judge"
        )
    judge, record = trusted(
        generator,
        spec,
        min_accuracy=h.judge_min_accuracy,
        max_false_accept=h.judge_max_false_accept,
        override=h.judge_override_calibration,
    )
    calibration = record["calibration"]
    if calibration["override"]:
        logger.warning(
            "--judge %s failed calibration (accuracy %.0f%%, false accepts %.0f%%) and is used anyway "
            "(--judge_override_calibration; recorded in results.json)",
            spec,
            100 * calibration["accuracy"],
            100 * calibration["false_accept"],
        )
    return judge, record


def model_context(model) -> int | None:
    """The most positions the model reads (``max_position_embeddings`` of its text config), if known."""
    config = model.config
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return getattr(text, "max_position_embeddings", None)


def generation_budget(model, tokenizer, questions, track: str, requested: int, model_name: str) -> dict:
    """``max_new_tokens`` capped so that the longest QA prompt plus the answer fits the model's context.

    Capping rather than failing: answers stop at the first newline, a few tokens in, so the cap binds
    only on answers that ramble past it, which score the same cut a few tokens earlier; and the cap
    depends only on the release's questions and the base model, so every run compared on that pair
    gets the same one. It is recorded in ``results.json``. A prompt that alone does not fit fails.
    """
    from continuousbench.scoring.prompts import qa_prompt

    prompts = [qa_prompt(q, track) for q in questions]
    longest = max(len(ids) for ids in tokenizer(prompts, add_special_tokens=True)["input_ids"])
    context = model_context(model)
    effective = requested if context is None else min(requested, context - longest)
    if effective < 1:
        raise UserError(
            f"the longest QA prompt has {longest} tokens but --model {model_name} reads at most {context}; "
            "use a base model with a longer context"
        )
    if effective < requested:
        logger.warning(
            "--max_new_tokens %d capped to %d: the longest QA prompt (%d tokens) and the answer must fit "
            "the model's %d positions (recorded in results.json)",
            requested,
            effective,
            longest,
            context,
        )
    return {
        "max_new_tokens": requested,
        "effective_max_new_tokens": effective,
        "model_context": context,
        "longest_prompt_tokens": longest,
    }


def load_inputs(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig, *, with_judge: bool) -> Inputs:
    """Every input of the run, checked; ``with_judge``: build the judge (the main process only)."""
    from transformers import set_seed

    from continuousbench.harness.ranked import release_options
    from continuousbench.release.layout import configs
    from continuousbench.training.modeling import load_model_and_tokenizer

    release = load_release(h.release, h.track)
    manifest = release.pop("manifest")
    folder, seed = release["path"], t.seed
    qa_validation = load_qa(folder, "qa_public", "validation", h.qa_eval_limit, seed, "--qa_eval_limit")
    parts = [p for p in PARTS if p in configs(manifest["track"])]  # a NEWS release has no qa_singleton
    qa_test = {
        part: load_qa(folder, part, "test", h.qa_test_limit, seed, "--qa_test_limit") for part in parts
    }
    corpus, corpus_record, mix = load_training_text(h, t.max_length, seed, folder)
    judge, judge_record = make_judge(h) if with_judge and h.judge else (None, None)
    set_seed(t.seed)  # LoRA initialisation is random
    model, tokenizer = load_model_and_tokenizer(m.model, **m.loading())  # --lora_targets included
    if t.use_cpu:
        model = model.to("cpu")
    questions = [q for qa in (qa_validation, *qa_test.values()) for q in qa["question"]]
    budget = generation_budget(model, tokenizer, questions, release["track"], h.max_new_tokens, m.model)
    return Inputs(
        release=release,
        qa_validation=qa_validation,
        qa_test=qa_test,
        corpus=corpus,
        corpus_record=corpus_record,
        model=model,
        tokenizer=tokenizer,
        model_record={"given": m.model, "path": resolved(m.model)},
        judge=judge,
        generation={
            "track": release["track"],
            "batch_size": h.qa_batch_size,
            "max_new_tokens": budget["effective_max_new_tokens"],
        },
        generation_record={
            **budget,
            "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
            "autocast": None,
        },  # decoding: the weights' precision (qa_eval.weights_precision)
        evaluation=manifest.get("evaluation"),
        judge_record=judge_record,
        options=release_options(folder, manifest.get("seed") or 0),
        mix=mix,
        heldout_entities=heldout_entities(manifest),
    )


def heldout_entities(manifest: dict) -> frozenset[int] | None:
    """The entities a ``build --heldout entity`` release kept out of ``corpus.train``; None otherwise."""
    entities = (manifest.get("generator") or {}).get("heldout", {}).get("entities")
    return None if entities is None else frozenset(int(e) for e in entities)
