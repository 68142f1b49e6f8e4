"""What a study job costs: a model of each kind of job's work, priced on a device (``study --plan``).

A job's work is compute-bound FLOPs (training, prefill: prompts, ranked choices, embeddings) and decode
steps (one new token for each sequence of a batch). FLOPs run at a fraction of the device's peak (MFU);
a decode step reads the weights and the batch's KV cache, so it takes the longest of those bytes over
the memory bandwidth (MBU of it), its FLOPs, and the dispatch floor of one step of eager ``generate``
(the Python and kernel-launch work every layer costs, whatever the batch): decoding is priced by
bandwidth and batching, not by FLOPs. docs/study.md ("--plan") states every figure and its source.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from continuousbench.dp.dpsgd import step_cost
from continuousbench.training.data import CHARS_PER_TOKEN  # prompts and corpora by characters


@dataclass(frozen=True)
class Device:
    name: str
    flops: float  # peak dense bf16 FLOP/s (a CPU thread: its fitted fp32 rate)
    bandwidth: float  # memory bandwidth, bytes/s
    # share of peak FLOP/s a training or prefill pass reaches: measured on an H200 (bf16 autocast, eager
    # PyTorch, Gemma 3 1B/4B shapes): full fine-tuning 0.20-0.22, prefill 0.28, LoRA r128 0.10
    mfu: float = 0.2
    mbu: float = 0.7  # share of the bandwidth a decode step's reads reach (an assumption)
    weight_bytes: int = 2  # bytes a parameter is read as (bf16; fp32 on CPU)
    row_s: float = 0.0  # a decode step's own work per sequence (sampling, small matmuls): a CPU's, serial
    # The dispatch floor of one step of transformers' eager generate, per layer (plus STEP_S): on a GPU
    # measured on an H200 (Gemma 3 1B greedy, batch 32: 55 ms a step over 26 layers; 4B: 91 ms over 34)
    layer_s: float = 2.05e-3


# Vendors' datasheets (SXM parts unless named): dense bf16 tensor peak, HBM bandwidth.
GPUS: dict[str, Device] = {
    "a100-40gb": Device("NVIDIA A100 40GB", 312e12, 1.555e12),
    "a100-80gb": Device("NVIDIA A100 80GB", 312e12, 2.039e12),
    "h100": Device("NVIDIA H100 SXM 80GB", 989.4e12, 3.35e12),
    "h100-pcie": Device("NVIDIA H100 PCIe 80GB", 756e12, 2.0e12),
    "h200": Device("NVIDIA H200 141GB", 989.4e12, 4.8e12),
    "l40s": Device("NVIDIA L40S 48GB", 362e12, 0.864e12),
}
DEFAULT_GPU = "a100-80gb"  # what the recipes were made for ("Made for one NVIDIA A100 80GB")
# One fp32 CPU thread, fitted to the demo's jobs (docs/study.md): rates already effective (MFU 1).
CPU = Device("one CPU thread", 50e9, 10e9, mfu=1.0, mbu=1.0, weight_bytes=4, row_s=0.2e-3, layer_s=0.47e-3)
CPU_START_S = 1.0  # a CPU job's start: its model and data loaded, its own imports (the demo's jobs)
DP_SETUP_S = 7.0  # a DP run's noise calibration and Opacus (quick demo: a 4-step DP generator, 6.8 s more)
BOOKKEEPING_START_S = 0.5  # a job without a model (compare, report: docs/performance.md, forked jobs)
# The fixed part of a decode step's dispatch floor: CPU time of a model too small to compute
# (benchmarks/study_plan.py --floor, with the CPU's 0.47 ms a layer); a GPU's layers: Device.layer_s.
STEP_S = 1.8e-3
# Geminon builds on one CPU without their screening, which is priced as closed-book answers
# (docs/performance.md: small 16.5 s, medium 42.8 s; tiny, the demo's).
BUILD_CPU_S = {"tiny": 0.5, "small": 17.0, "medium": 43.0}
BYTES_PER_DOCUMENT = 180  # a release's parquet per document (Geminon small: 33.9 MiB, 200,120 documents)
ANSWER_TOKENS = 16  # decode steps of a QA batch: it ends once every answer reached its newline


@dataclass(frozen=True)
class Shape:
    """What the cost models need of a model: its parameters and the shape of its KV cache and LoRA."""

    parameters: float
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int

    @property
    def kv_bytes(self) -> float:
        """KV cache bytes per token (K and V of every layer, bf16)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    def lora_parameters(self, rank: int) -> float:
        """LoRA on the seven attention and MLP projections (the recipes' targets)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        per_layer = 2 * (self.hidden + q) + 2 * (self.hidden + kv) + 3 * (self.hidden + self.intermediate)
        return float(self.layers * rank * per_layer)


# The paper's models (their configs on the Hub); a study adds sizes under ``parameters:``.
SHAPES = {
    "google/gemma-3-1b": Shape(1.0e9, 26, 1152, 6912, 4, 1, 256),
    "google/gemma-3-4b": Shape(4.3e9, 34, 2560, 10240, 8, 4, 256),
}


def shape_of(model: str, parameters: dict[str, float]) -> Shape | None:
    """``model``'s shape: the paper's Gemma models, a local folder's config.json and safetensors; a size
    under ``parameters:`` replaces the count (on Gemma 3 1B's shape when nothing else tells it); None
    when nothing tells its size."""
    known = next((s for prefix, s in SHAPES.items() if model.startswith(prefix)), None)
    found = known or _folder_shape(model)
    if model in parameters:
        return replace(found or SHAPES["google/gemma-3-1b"], parameters=float(parameters[model]))
    return found


@cache
def _folder_shape(model: str) -> Shape | None:
    """A local model folder's shape: config.json (a multimodal config's text part) and the parameters
    counted from its safetensors headers (no weights read)."""
    folder = Path(model)
    if not (folder / "config.json").is_file():
        return None
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config = config.get("text_config") or config
    heads = config.get("num_attention_heads", 1)
    head_dim = config.get("head_dim") or config.get("hidden_size", 0) // max(1, heads)
    counted = _counted(folder)
    if counted is None:
        return None
    return Shape(
        counted,
        config.get("num_hidden_layers", 1),
        config.get("hidden_size", 0),
        config.get("intermediate_size", 0),
        heads,
        config.get("num_key_value_heads", heads),
        head_dim,
    )


def _counted(folder: Path) -> float | None:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    from safetensors import safe_open

    total = 0
    for file in files:
        with safe_open(str(file), "np") as f:
            total += sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())  # noqa: SIM118
    return float(total)


@dataclass
class Work:
    """A job's work: compute-bound FLOPs, and decode passes of (steps, batch, context): ``steps`` steps
    of ``batch`` sequences holding ``context`` tokens each on average (their KV cache is read every step)."""

    flops: float = 0.0
    decodes: list[tuple[float, float, float]] = field(default_factory=list)
    tokens: float = 0.0  # trained, embedded or generated: what the plan shows
    disk: float = 0.0  # bytes the job leaves
    scratch: float = 0.0  # bytes it needs meanwhile beyond them (checkpoints)
    fixed_s: float = 0.0  # CPU seconds that do not depend on the device (a Geminon build)

    def __add__(self, other: Work) -> Work:
        return Work(
            self.flops + other.flops,
            self.decodes + other.decodes,
            self.tokens + other.tokens,
            self.disk + other.disk,
            max(self.scratch, other.scratch),
            self.fixed_s + other.fixed_s,
        )


def seconds(work: Work, shape: Shape | None, device: Device) -> float | None:
    """The work's seconds on ``device``; None when its model's size is unknown."""
    if math.isnan(work.flops) or (shape is None and (work.flops or work.decodes)):
        return None
    total = work.fixed_s + work.flops / (device.flops * device.mfu)
    for steps, batch, context in work.decodes if shape is not None else ():
        read = shape.parameters * device.weight_bytes + batch * context * shape.kv_bytes
        step = max(
            read / (device.bandwidth * device.mbu),
            2 * shape.parameters * batch / (device.flops * device.mfu),
            STEP_S + device.layer_s * shape.layers,
        )
        total += steps * (step + device.row_s * batch)
    return total


def _number(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _decode(sequences: float, new: float, batch: float, prompt: float = 1.0) -> Work:
    """``sequences`` of ``new`` tokens, ``batch`` at a time: every batch runs ``new`` steps (a batch
    ends with its longest sequence)."""
    if not sequences:
        return Work()
    steps = math.ceil(sequences / max(batch, 1)) * new
    return Work(decodes=[(steps, min(batch, sequences), prompt + new / 2)], tokens=sequences * new)


def _prefill(tokens: float, n: float) -> Work:
    return Work(flops=2 * n * tokens, tokens=tokens)


QUESTION = "Q: What is the base stat total stat of Zorblax?\nA:"  # a typical question, as prompted


def prompt_tokens(track: str) -> float:
    """Tokens of a QA prompt: the track's few-shot examples and one question."""
    from continuousbench.scoring.prompts import few_shot_prefix

    return (len(few_shot_prefix(track)) + len(QUESTION)) / CHARS_PER_TOKEN


def _trainable(r: dict, shape: Shape) -> float:
    """Parameters a run trains: all (full), LoRA's adapters, or a soft prompt's (negligible)."""
    tuning = r.get("tuning", "lora")
    if tuning == "full":
        return shape.parameters
    return shape.lora_parameters(int(_number(r.get("lora_r"), 128))) if tuning == "lora" else 0.0


def _trained(r: dict, shape: Shape) -> tuple[float, float]:
    """(bytes a trained model leaves, bytes of the checkpoints kept meanwhile: the best and the latest,
    each with AdamW's two moments); a full model in bf16, adapters in fp32."""
    if r.get("tuning", "lora") == "full":
        return 2 * shape.parameters, 2 * 3 * 2 * shape.parameters
    trainable = max(_trainable(r, shape), 1e6)  # a soft prompt's folder: its config and tokenizer
    return 4 * trainable, 2 * 3 * 4 * trainable


def _training(r: dict, shape: Shape, batch: float) -> Work:
    """Steps x batch x max_length tokens at 6 FLOPs a token for each trained parameter and 4 for each
    frozen one (the backward pass still carries activation gradients through frozen weights; LoRA's own
    matmuls count, which matters where its rank is a large share of the width), times the clipping's
    pass factor under DP-SGD."""
    tokens = _steps(r) * batch * _length(r)
    full = r.get("tuning", "lora") == "full"
    per_token = 6 * shape.parameters if full else 4 * shape.parameters + 6 * _trainable(r, shape)
    setup = 0.0
    if r.get("epsilon") is not None:
        per_token *= step_cost(r.get("tuning", "lora"), r.get("clipping"))  # its clipping's extra passes
        setup = DP_SETUP_S
    kept, meanwhile = _trained(r, shape)
    return Work(flops=per_token * tokens, tokens=tokens, disk=kept, scratch=meanwhile, fixed_s=setup)


def _dp_batch(r: dict) -> float:
    """A DP run's expected batch: the number given, else (``auto``) its Poisson cap, which ``auto``
    sits just below."""
    batch = r.get("expected_batch_size")
    return _number(batch, _number(r.get("physical_batch_size"), 512))


def work(job, shape: Shape | None, rows: dict | None, track: str) -> Work:
    """The job's work (its kind's model; ``rows``: the release's row counts, for its QA passes)."""
    r, kind = job.recipe, job.kind
    if kind == "build":  # a NEWS build's LLM stages run on its --llm endpoint: not priced ("?")
        size = str(r.get("size", "small"))
        if job.argv[1:2] == ("news",) or size not in BUILD_CPU_S:
            return Work(flops=math.nan, disk=_release_bytes(rows))
        built = Work(fixed_s=BUILD_CPU_S[size], disk=_release_bytes(rows))
        return built + (_closed_book(_number(r.get("questions")), shape, track) if shape else Work())
    if shape is None:  # proxies without a model computes no FID
        return Work(flops=math.nan) if kind in MODEL_KINDS and kind != "proxies" else Work()
    n = shape.parameters
    if kind == "train-generator":
        private = r.get("epsilon") is not None
        done = _training(r, shape, _dp_batch(r) if private else _number(r.get("samples_per_step"), 32))
        return done + _prefill(_evaluations(r) * _number(r.get("eval_limit"), 512) * _length(r), n)
    if kind == "evaluate":
        return _evaluate(r, shape, rows or {}, track)
    if kind == "synthesize":
        made = _decode(
            _number(r.get("num_samples"), 1000),
            _number(r.get("max_new_tokens"), 256),
            _number(r.get("batch_size"), 32),
        )
        made.disk = made.tokens * CHARS_PER_TOKEN
        return made
    if kind == "pe":  # the private corpus embedded once; every iteration writes `variations` rewrites of
        # each sample and embeds them (with the API's model: the embedding model's size is not looked up)
        texts = _number(r.get("num_samples"), 2000) * (
            1 + _number(r.get("iterations"), 10) * _number(r.get("variations"), 6)
        )
        new, cap = _number(r.get("max_new_tokens"), 256), _number(r.get("embed_max_length"), 256)
        private = (rows or {}).get("corpus", {}).get("train", 0) * cap / 2  # documents at half the cap
        made = _decode(texts, new, 32) if str(r.get("api", "")).startswith("transformers:") else Work()
        return made + _prefill(texts * new + private, n) + Work(fixed_s=DP_SETUP_S)
    if kind == "private-prediction":  # each record: its s private prompts and the public row, prefilled
        # once (the KV cache) and decoded together, `batches_at_once` records at a time
        rows_per, records = _number(r.get("batch_size"), 32) + 1, _number(r.get("num_samples"), 1000)
        prompt, new = _number(r.get("max_record_tokens"), 256), _number(r.get("max_new_tokens"), 256)
        made = _decode(records * rows_per, new, rows_per * _number(r.get("batches_at_once"), 4), prompt)
        made.disk = records * new * CHARS_PER_TOKEN
        return _prefill(records * rows_per * prompt, n) + made + Work(fixed_s=DP_SETUP_S)
    if kind == "memorization":  # prefix read, suffix decoded, for --docs documents of each split
        docs = 2 * _number(r.get("docs"), 500)
        prefix, suffix = _number(r.get("prefix_tokens"), 32), _number(r.get("suffix_tokens"), 32)
        return _prefill(docs * prefix, n) + _decode(docs, suffix, _number(r.get("batch_size"), 16), prefix)
    if kind == "mauve":  # candidate and reference texts embedded, for each seed (texts at half the cap)
        seeds = len(r.get("seeds") or [0, 1, 2])
        return _prefill(2 * seeds * _number(r.get("n_samples"), 1000) * _length(r) / 2, n)
    if kind == "proxies":  # FID: a sample of each scored corpus and of the real one, embedded once
        return _prefill(_number(r.get("texts"), 2000) * 128, n)
    if kind == "gate":  # closed-book answers of every model (`release --plan`)
        answers = _number(r.get("models"), 0) * _number(r.get("questions"))
        return _closed_book(answers, shape, track, _number(r.get("max_new_tokens"), 32))
    return Work()


def _closed_book(answers: float, shape: Shape, track: str, new: float = 32) -> Work:
    """Closed-book answers (a build's screening, the unsolvable gate) in batches of 32: the few-shot block
    prefilled once a batch (the answers reuse its KV cache), each question's own tokens, then up to
    ``new`` tokens decoded."""
    prompt = prompt_tokens(track)
    tokens = math.ceil(answers / 32) * prompt + answers * len(QUESTION) / CHARS_PER_TOKEN
    return _prefill(tokens, shape.parameters) + _decode(answers, new, 32, prompt)


MODEL_KINDS = (
    "train-generator",
    "evaluate",
    "synthesize",
    "pe",
    "private-prediction",
    "memorization",
    "mauve",
    "gate",
    "proxies",
)


def _evaluate(r: dict, shape: Shape, rows: dict, track: str) -> Work:
    """Training (``steps`` x ``samples_per_step`` blocks; DP: Poisson batches), a validation QA pass
    every ``eval_steps`` (prompt prefill and greedy answers), and the test set: greedy answers and the
    ranked choice (four options and the answer after the same prompt) of every test question. The
    few-shot block every prompt shares is prefilled once a pass (the harness caches it), so each
    question's rows prefill only the question and the option."""
    steps = _steps(r)
    private = r.get("epsilon") is not None
    batch = _dp_batch(r) if private else _number(r.get("samples_per_step"), 32)
    done = _training(r, shape, batch) if steps else Work()
    prompt, new = prompt_tokens(track), min(_number(r.get("max_new_tokens"), 256), ANSWER_TOKENS)
    batch, n = _number(r.get("qa_batch_size"), 32), shape.parameters
    validation = _limited(rows.get("qa_public", {}).get("validation", 0), r.get("qa_eval_limit"))
    evals = _evaluations(r)
    test = sum(
        _limited(split.get("test", 0), r.get("qa_test_limit"))
        for part, split in rows.items()
        if part.startswith("qa_")
    )
    for questions, ranked in ((evals * validation, 0), (test, 4)):
        own = questions * (1 + ranked) * (len(QUESTION) / CHARS_PER_TOKEN + 4 * (ranked > 0))
        done += _prefill(own + prompt, n)
        done += _decode(questions, new, batch, prompt)
    return done


def _steps(r: dict) -> float:
    return _number(r.get("steps", r.get("max_steps")), 10000)


def _length(r: dict) -> float:
    return _number(r.get("max_length"), 256)


def _evaluations(r: dict) -> float:
    """Validation passes while training: one every ``eval_steps`` (below 1: a fraction of the steps)."""
    every = _number(r.get("eval_steps"), 500)
    return _steps(r) // max(every * _steps(r) if every < 1 else every, 1)


def _limited(count: float, limit: Any) -> float:
    return min(count, _number(limit, math.inf)) if count else 0.0


def _release_bytes(rows: dict | None) -> float:
    return sum((rows or {}).get("corpus", {}).values()) * BYTES_PER_DOCUMENT


def preset_rows(track: str, size: str) -> dict | None:
    """A release's row counts from its size preset, before it is built (Geminon: 13 questions an
    entity, a share of the entities in validation; NEWS: up to 12 questions for each of the 500 largest
    clusters, 80% of them in test)."""
    if track == "news":
        return {"corpus": {"train": 200_000}, "qa_public": {"validation": 1200, "test": 4800}}
    from continuousbench.errors import UserError
    from continuousbench.geminon.qa import TEMPLATES
    from continuousbench.geminon.sizes import get_size

    try:
        spec = get_size(size)
    except UserError:
        return None
    sensitive = sum(stages * n for stages, n in spec.sensitive_lines.items())
    rows: dict[str, dict[str, float]] = {"corpus": {"train": sum(spec.mix.values()) + sensitive}}
    for part, entities in (("qa_public", spec.n_entities - sensitive), ("qa_singleton", sensitive)):
        held = round(entities * spec.qa_validation_fraction)
        rows[part] = {"validation": held * len(TEMPLATES), "test": (entities - held) * len(TEMPLATES)}
    return rows
