"""A tiny base model made from scratch, for when no pretrained checkpoint can be downloaded (the demo).

The benchmark measures what continued pretraining on a candidate corpus teaches a base model that
already reads prose and answers questions. A from-scratch model has neither skill, so it is first
pretrained on a *separate* Geminon world: its documents (same realizer, same coverage sampling as a
release) plus question/answer text in the harness's few-shot format about most of its entities (the rest
are held out to measure how well the model turns documents into answers). That world is disjoint
from the release (another seed, and the release's names are forbidden), so the base model knows the
QA format and how facts in documents map to answers, but none of the release's facts. The tokenizer
is trained on the pretraining world's text with its entity names cut out, so that names of either
world split into sub-word pieces alike.

    world = make_pretraining_world(forbidden_names=release_names(release_folder))
    qa_world, held_out = world.hold_out(0.2)
    texts = qa_world.texts(qa_fraction=0.4)
    pretrain_base_model("base-model", texts, BaseRecipe(), tokenizer_texts=world.without_names(texts),
                        eval_questions=qa_world.questions[:104], held_out_questions=held_out)
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

import numpy as np

import continuousbench
from continuousbench.files import atomic_write, replace_dir, write_json
from continuousbench.geminon.sizes import SizeSpec

logger = logging.getLogger(__name__)

# 60 entities, all public: 2.5x the tiny release, so "document facts -> answer" is learned across many
# entities rather than memorised per entity; ~100 documents each, in the tiny release's style mix.
PRETRAIN_SPEC = SizeSpec(
    name="pretrain",
    lines={3: 10, 2: 10, 1: 10},
    sensitive_lines={},
    mix={"comparison": 2400, "evolution": 800, "journal": 1600, "wiki": 1200},
)
# The few-shot prefix (~210 tokens) opens every QA document; with 6 pairs per document it was most of the
# QA text, and the base model answered 49% of its own world's questions after 800 steps (24 pairs: 84-96%).
QA_PAIRS_PER_DOC = 24
INFO_FILE = "pretraining.json"


@dataclass(frozen=True)
class PretrainingWorld:
    """A Geminon world with its corpus and its questions (every entity, all 13 templates)."""

    world: list  # list[Geminon]
    documents: list[str]
    questions: list[dict]  # rows of continuousbench.geminon.qa.question_rows
    seed: int

    def hold_out(self, fraction: float, seed: int = 0) -> tuple[PretrainingWorld, list[dict]]:
        """This world without the questions of a seeded ``fraction`` of its entities, and those questions.

        Held-out entities appear in the documents only: the base model's accuracy on them measures how
        well it turns documents into answers, which is what continued pretraining on a release asks."""
        entities = sorted({q["entity"] for q in self.questions})
        n = int(round(fraction * len(entities)))
        held = {int(e) for e in np.random.default_rng([self.seed, seed]).choice(entities, n, replace=False)}
        kept = [q for q in self.questions if q["entity"] not in held]
        return replace(self, questions=kept), [q for q in self.questions if q["entity"] in held]

    def without_names(self, texts: Sequence[str]) -> list[str]:
        """``texts`` with this world's entity names cut out: the text to train the tokenizer on.

        A tokenizer trained on the raw texts gives each pretraining name a token of its own, while the
        release's names (never seen) fall apart into 3-4 pieces, so the model would learn to answer
        about one-token names only. Without the names, both worlds' names split into sub-word pieces."""
        names = sorted((re.escape(g.name) for g in self.world), key=len, reverse=True)
        pattern = re.compile("|".join(names))
        return [pattern.sub("", t) for t in texts]

    def qa_documents(self, n_pairs: int, rng: np.random.Generator, track: str = "geminon") -> list[str]:
        """``n_pairs`` question/answer pairs (cycling through shuffles of all questions), as documents laid
        out exactly like an evaluation prompt: the harness's few-shot prefix (real-world facts, never
        release data), then ``Q: ...`` / ``A: ...`` blocks. The model thus learns to answer at the
        positions where the harness asks, and the tokenizer learns the prefix's words."""
        from continuousbench.scoring.prompts import few_shot_prefix
        from continuousbench.training.data import shuffled_cycle

        prefix = few_shot_prefix(track)
        order = list(islice(shuffled_cycle(len(self.questions), rng), n_pairs))
        docs = []
        for start in range(0, n_pairs, QA_PAIRS_PER_DOC):
            rows = [self.questions[i] for i in order[start : min(start + QA_PAIRS_PER_DOC, n_pairs)]]
            docs.append(prefix + "\n\n".join(f"Q: {r['question']}\nA: {r['answer']}" for r in rows))
        return docs

    def texts(self, qa_fraction: float = 0.25, seed: int | None = None) -> list[str]:
        """Documents plus QA documents making up ``qa_fraction`` of the characters, shuffled (seeded)."""
        if not 0 <= qa_fraction < 1:
            raise ValueError(f"qa_fraction must be in [0, 1), got {qa_fraction}")
        from continuousbench.scoring.prompts import few_shot_prefix

        rng = np.random.default_rng(self.seed if seed is None else seed)
        doc_chars = sum(len(d) for d in self.documents)
        header = len(few_shot_prefix("geminon")) / QA_PAIRS_PER_DOC  # each QA document repeats the prefix
        pair_chars = np.mean([len(r["question"]) + len(r["answer"]) + 8 for r in self.questions]) + header
        n_pairs = int(round(qa_fraction / (1 - qa_fraction) * doc_chars / pair_chars))
        texts = self.documents + (self.qa_documents(n_pairs, rng) if n_pairs else [])
        return [texts[i] for i in rng.permutation(len(texts))]


def save_texts(path: str | Path, texts: Sequence[str]) -> Path:
    """``texts`` as a one-column (``text``) parquet file, written atomically; a corpus the harness loads."""
    from datasets import Dataset

    data = Dataset.from_dict({"text": list(texts)})
    return atomic_write(path, lambda tmp: data.to_parquet(str(tmp)))


def release_names(release: str | Path) -> list[str]:
    """Entity names of a release (to forbid them in the pretraining world)."""
    from continuousbench.release.load import load_release

    return list(load_release(release, "entities", split="train")["name"])


def make_pretraining_world(
    spec: SizeSpec = PRETRAIN_SPEC,
    seed: int = 1_000_003,
    *,
    forbidden_names: Collection[str] = (),
    realizer: str = "template",
    rounds: int = 20,
) -> PretrainingWorld:
    """A world disjoint from a release (``forbidden_names``), its corpus (the release builder's realizer
    and coverage-aware sampling, ``spec.mix`` documents) and its questions (all entities)."""
    from continuousbench.geminon import qa as Q
    from continuousbench.geminon.realizers import make_realizer
    from continuousbench.geminon.selection import select_public
    from continuousbench.geminon.world import build_world

    world = build_world(spec, seed, forbidden_names=forbidden_names)
    clash = {n.lower() for n in forbidden_names} & {g.name.lower() for g in world}
    if clash:  # build_world guarantees this; checked because disjointness is the point of this world
        raise RuntimeError(f"pretraining world reuses release names {sorted(clash)}")
    text_maker = make_realizer(realizer)
    rng = np.random.default_rng([seed, 1])
    drafts = select_public(
        world, spec.mix, text_maker, draft_rng=rng, sample_rng=rng, oversample=2.0, rounds=rounds
    ).drafts
    documents = [t for t in text_maker.render(drafts, {g.idx: g for g in world}) if t and t.strip()]
    mentions = [[f"{i}:{f}" for i, f in d.mentions] for d in drafts]
    questions = Q.question_rows(Q.mention_matrix(mentions, world), world, "public")
    return PretrainingWorld(world=world, documents=documents, questions=questions, seed=seed)


def pretrain_base_model(
    out_dir: str | Path,
    texts: Sequence[str],
    recipe: BaseRecipe,
    *,
    tokenizer_texts: Sequence[str] | None = None,
    eval_questions: Sequence[dict] = (),
    held_out_questions: Sequence[dict] = (),
    extra_texts: dict[str, Sequence[str]] | None = None,
    extra_info: dict | None = None,
    overwrite: bool = False,
) -> Path:
    """Train a tokenizer on ``texts``, build a tiny causal LM and pretrain it on ``texts`` with the
    harness's training function as ``recipe`` says (its model and run fields: packed blocks of
    ``max_length``, AdamW, cosine); save model, tokenizer and ``pretraining.json`` to ``out_dir`` (written
    in a temporary folder, then renamed).

    ``eval_questions`` (rows with ``question``, ``answer``, ``aliases``, ``support_count``; e.g. a sample of
    :attr:`PretrainingWorld.questions`) are answered with the harness's few-shot prompt after training,
    and their accuracy is recorded: a base model that cannot answer its own world's questions will not
    answer the release's either. ``held_out_questions`` (about entities seen in documents only, see
    :meth:`PretrainingWorld.hold_out`) are scored the same way. The tokenizer is trained on
    ``tokenizer_texts`` when given (e.g. :meth:`PretrainingWorld.without_names`), else on ``texts``."""
    from datasets import Dataset

    from continuousbench.demo.tinymodel import make_tiny_model, train_tokenizer
    from continuousbench.training.config import EvaluatorConfig
    from continuousbench.training.sft import continued_pretraining

    out = Path(out_dir)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} already exists: pass overwrite=True (--overwrite) to replace it")
    r = recipe
    if r.steps < 1 or not texts:
        raise ValueError("pretraining needs steps >= 1 and a non-empty list of texts")
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    start = time.perf_counter()
    tokenizer = train_tokenizer(texts if tokenizer_texts is None else tokenizer_texts, r.vocab_size)
    model = make_tiny_model(
        tokenizer,
        arch=r.arch,
        hidden_size=r.hidden_size,
        num_layers=r.num_layers,
        num_heads=r.num_heads,
        max_positions=max(512, r.max_length),
        seed=r.seed,
    )
    args = EvaluatorConfig(
        output_dir=str(tmp / "trainer"),
        max_steps=r.steps,
        learning_rate=r.learning_rate,
        max_length=r.max_length,
        samples_per_step=r.samples_per_step,
        per_device_train_batch_size=r.samples_per_step,
        bf16=r.bf16,
        weight_decay=0.0,  # a from-scratch model: no pull towards zero (the evaluator recipe keeps 0.1)
        eval_strategy="steps" if r.curve_every else "no",
        eval_steps=r.curve_every or None,
        metric_for_best_model=None,
        save_strategy="no",
        load_best_model_at_end=False,
        logging_steps=max(1, r.steps // 20),
        disable_tqdm=True,
        seed=r.seed,
        dataloader_num_workers=0,
    )
    probes = {"world": eval_questions, "held_out": held_out_questions}

    def curve_point(m) -> dict[str, float]:  # accuracy during training: how the skill grows with steps
        return {f"{k}_em": _qa_accuracy(m, tokenizer, q)["exact_match"] for k, q in probes.items() if q}

    trainer = continued_pretraining(
        model,
        tokenizer,
        Dataset.from_dict({"text": list(texts)}),
        args,
        eval_fn=curve_point if r.curve_every and (eval_questions or held_out_questions) else None,
    )
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    curve = [
        {"step": e["step"]} | {k[5:]: v for k, v in e.items() if k.startswith("eval_") and k.endswith("_em")}
        for e in trainer.state.log_history
        if any(k.startswith("eval_") and k.endswith("_em") for k in e)
    ]
    world_qa = _qa_accuracy(trainer.model, tokenizer, eval_questions) if eval_questions else None
    held_out_qa = _qa_accuracy(trainer.model, tokenizer, held_out_questions) if held_out_questions else None
    trainer.save_model(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    for name, extra in (extra_texts or {}).items():
        save_texts(tmp / name, extra)
    shutil.rmtree(tmp / "trainer", ignore_errors=True)
    (tmp / "training_args.bin").unlink(missing_ok=True)  # a pickle: nothing a model folder needs
    info = {
        "package_version": continuousbench.__version__,
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": len(tokenizer),
        "architecture": {
            "arch": r.arch,
            "hidden_size": r.hidden_size,
            "layers": r.num_layers,
            "heads": r.num_heads,
        },
        "training": {
            "steps": r.steps,
            "learning_rate": r.learning_rate,
            "max_length": r.max_length,
            "samples_per_step": r.samples_per_step,
            "bf16": r.bf16,
            "seed": r.seed,
        },
        "documents": len(texts),
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "seconds": round(time.perf_counter() - start, 1),
        "pretraining_world_qa": world_qa,
        "held_out_qa": held_out_qa,
        "curve": curve,
        **(extra_info or {}),
    }
    write_json(tmp / INFO_FILE, info)
    return replace_dir(tmp, out)


@dataclass(frozen=True)
class BaseRecipe:
    """Everything that makes a demo base model: the pretraining world, its text mixture, the model and the
    run; :func:`build_base_model` turns it into a folder. The defaults are the shipped base model's recipe
    (``docs/demo.md``, "The base model", measures the alternatives)."""

    # 120 entities (6.7x the tiny release), 100 documents each: 60 entities reached 57% test EM on the
    # release after the same 3,000 steps, 120 reached 90% (extraction generalises across more entities).
    lines: tuple[int, int, int] = (20, 20, 20)  # 3-, 2- and 1-stage evolution lines of the world
    documents: int = 12_000  # in the tiny release's style mix
    qa_fraction: float = 0.4  # share of the text that is QA documents about the world's entities
    held_out_fraction: float = 0.2  # entities seen in documents only: their QA measures transfer
    world_seed: int = 1_000_003  # any seed other than a release's gives another world
    steps: int = 3000  # ~5 passes; 800 steps left documents-only entities at 13-28%
    learning_rate: float = 3e-3
    samples_per_step: int = 16  # packed blocks of max_length tokens (also the per-device batch)
    max_length: int = 256  # must cover the few-shot prompt (~210 tokens): unseen positions break QA
    arch: str = "llama"
    hidden_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    vocab_size: int = 2048
    bf16: bool = True  # autocast where the CPU computes bf16 natively (the shipped model was made so)
    seed: int = 0
    probe_questions: int = 156  # trained-entity questions scored after training
    curve_every: int = 500  # steps between accuracy probes during training (0: none)

    def spec(self) -> SizeSpec:
        """The world's size: ``lines``, and ``documents`` split like the tiny release's corpus."""
        from continuousbench.geminon.sizes import SIZES

        mix = SIZES["tiny"].mix
        scale = self.documents / sum(mix.values())
        lines = dict(zip((3, 2, 1), self.lines, strict=True))
        return SizeSpec(
            name="pretrain",
            lines=lines,
            sensitive_lines={},
            mix={k: round(v * scale) for k, v in mix.items()},
        )


REPLAY_FILE = "replay.parquet"  # QA documents about the trained entities: the evaluator's replay mixture


def build_base_model(
    out_dir: str | Path, recipe: BaseRecipe, *, forbidden_names: Collection[str] = ()
) -> Path:
    """Make the pretraining world of ``recipe`` (``forbidden_names`` excluded), pretrain a base model on
    it and write it to ``out_dir`` with ``pretraining.json`` (recipe, accuracies, the world's names) and
    :data:`REPLAY_FILE`."""
    from dataclasses import asdict

    world = make_pretraining_world(recipe.spec(), seed=recipe.world_seed, forbidden_names=forbidden_names)
    qa_world, held_out = world.hold_out(recipe.held_out_fraction, recipe.seed)
    texts = qa_world.texts(qa_fraction=recipe.qa_fraction)
    rng = np.random.default_rng(recipe.seed)
    replay = qa_world.qa_documents(2 * len(qa_world.questions), rng)
    n_probe = min(recipe.probe_questions, len(qa_world.questions))
    probe = sorted(int(i) for i in rng.choice(len(qa_world.questions), size=n_probe, replace=False))
    info = {
        "entities": len(world.world),
        "documents": len(world.documents),
        "seed": world.seed,
        "names": sorted(g.name for g in world.world),
    }
    return pretrain_base_model(
        out_dir,
        texts,
        recipe,
        overwrite=True,
        eval_questions=[qa_world.questions[i] for i in probe],
        held_out_questions=held_out,
        tokenizer_texts=world.without_names(texts),
        extra_texts={REPLAY_FILE: replay},
        extra_info={"pretraining_world": info, "recipe": asdict(recipe)},
    )


def _qa_accuracy(model, tokenizer, rows: Sequence[dict]) -> dict[str, float]:
    from datasets import Dataset

    from continuousbench.harness.qa_eval import evaluate_qa

    keys = ("question", "answer", "aliases", "support_count")
    qa = Dataset.from_dict({k: [r[k] for r in rows] for k in keys})
    report, _ = evaluate_qa(model, tokenizer, qa, max_new_tokens=24, batch_size=64, buckets=None)
    return {name: m["accuracy"] for name, m in report["metrics"].items()} | {"questions": len(rows)}
