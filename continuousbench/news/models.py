"""The model behind the LLM stages: any spec of :func:`continuousbench.llm.make_generator`.

``endpoint:<url>#<model>`` is the usual choice (vLLM, TGI, Gemini's OpenAI-compatible API): requests
go out ``max_in_flight`` at a time and every answer is cached on disk in the stage's work folder, so a
killed stage resumes without paying twice. ``offline:news`` is the deterministic model of
:mod:`continuousbench.news.offline` (tests, smoke runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.commands import bounds
from continuousbench.errors import UserError


@dataclass
class ModelArguments:
    llm: str | None = field(
        default=None,
        metadata={"help": "Model: endpoint:<url>#<model> (any OpenAI-compatible server) or offline:news."},
    )
    judge: str | None = field(
        default=None, metadata={"help": "LLM-match judge (same kinds of spec; default: --llm)."}
    )
    max_in_flight: int = field(
        default=4,
        metadata=bounds(
            "[1, inf)", "Requests sent at once (raise it for vLLM; a one-at-a-time server queues them)."
        ),
    )
    temperature: float = field(default=0.0, metadata=bounds("[0, inf)", "Sampling temperature."))
    max_new_tokens: int = field(
        default=1024,
        metadata=bounds(
            "[1, inf)", "Answer budget of facts and qa (tokens); a cut answer is asked again with twice it."
        ),
    )
    request_timeout: float = field(
        default=300.0,
        metadata=bounds(
            "(0, inf)", "Seconds one answer may take in all (connect, queue, generation, a stalled server)."
        ),
    )
    judge_override_calibration: bool = field(
        default=False,
        metadata={"help": "Use a judge that fails calibration anyway (docs/judge.md); stats.json says so."},
    )
    max_dropped: float = field(
        default=0.5,
        metadata=bounds(
            "[0, 1]", "Share of a stage's model answers that may be unusable before the stage fails."
        ),
    )


def generator(
    spec: str | None,
    cache_dir: Path | None,
    max_in_flight: int = 4,
    option: str = "--llm",
    request_timeout: float = 300.0,
):
    """A text generator whose answers are cached in ``cache_dir`` (endpoints only)."""
    if not spec:
        raise UserError(f"{option} is missing: pass endpoint:<url>#<model>, or offline:news for a dry run")
    from continuousbench import llm
    from continuousbench.news import offline

    offline.register()  # offline:news, the stand-in model
    return llm.make_generator(
        spec, cache_dir=cache_dir, max_in_flight=max_in_flight, request_timeout=request_timeout
    )


def check(model: ModelArguments, *, judge: bool = False) -> None:
    """Fail in one line now, before a work folder exists, when a model is missing, does not answer or
    does not serve ``#model`` (one probe per endpoint and process: ``build news`` probes once)."""
    specs = [("--llm", model.llm)] + ([("--judge", model.judge or model.llm)] if judge else [])
    for option, spec in specs:
        found = generator(spec, None, option=option, request_timeout=model.request_timeout)
        if hasattr(found, "check"):
            try:
                found.check()
            finally:
                found.close()


def judge(spec: str, cache_dir: Path, model: ModelArguments) -> tuple[Any, dict]:
    """(judge, its record): the harness's LLM-match judge on ``spec``, through the same calibration gate
    (:func:`continuousbench.scoring.judge.trusted`) before it decides anything; the endpoint layer is the
    only retry layer (the judge asks once) and its answer cache in ``cache_dir`` the only cache."""
    from continuousbench.scoring.judge import trusted

    found = generator(spec, cache_dir, model.max_in_flight, "--judge", model.request_timeout)
    return trusted(found, spec, override=model.judge_override_calibration, batch_size=1024)


def require_usable(
    out: Any, spec: str | None, asked: int, unusable: int, counts: Mapping[str, int], model: ModelArguments
) -> None:
    """Fail in one line when more than ``--max_dropped`` of a stage's model answers were unusable: a
    release built from them would be silently wrong (zeros where the model could not be read). The
    counts stay in the work folder's stats.json and the answers in its cache (``--resume`` reuses them).
    """
    from continuousbench.files import write_json
    from continuousbench.news.shards import STATS, sum_counts

    if not asked or unusable / asked <= model.max_dropped:
        return
    drops = {k: v for k, v in sum_counts(counts).items() if k.startswith("dropped_") and v}
    why = ", ".join(f"{k} {v}" for k, v in sorted(drops.items(), key=lambda kv: -kv[1])[:4])
    if drops.get("dropped_truncated"):
        why += f"; answers cut at --max_new_tokens {model.max_new_tokens}: raise it"
    write_json(out.work / STATS, {"stage": out.stage, "input": asked, "output": 0, **sum_counts(counts)})
    raise UserError(
        f"news {out.stage}: {unusable} of {asked} answers ({unusable / asked:.0%}) from {spec} were unusable "
        f"({why or 'no reason counted'}; above --max_dropped {model.max_dropped:g}); nothing is published: "
        f"check that the model follows the prompt's format (counts in {out.work / STATS}), or raise "
        f"--max_dropped"
    )


OUTPUT_ONLY = ("overwrite", "resume", "output", "chunk")  # options a resumed stage may change


def provenance(model: ModelArguments, llm: Any) -> dict[str, Any]:
    """What an LLM stage's ``stats.json`` records of its model: the spec and the output form negotiated."""
    return {"llm": model.llm, "structured_output": getattr(llm, "structured_output", None)}


def judged_provenance(model: ModelArguments, judge_record: dict | None) -> dict[str, Any]:
    """What a judged stage's ``stats.json`` records of its models: the spec, the judge's spec, and the
    judge's identity and calibration figures."""
    return {"llm": model.llm, "judge": model.judge or model.llm, "judge_record": judge_record}


def open_stage(
    stage: str,
    args: Any,
    model: ModelArguments,
    inputs: Mapping[str, Any],
    *,
    judge: bool = False,
) -> tuple[Any, Any]:
    """(stage output, model) of an LLM stage; ``inputs`` maps each input option to its value.

    The run pins every option but the output-only ones, the input files, and the model settings (spec,
    judge, temperature, answer budget; requests in flight, timeouts and the drop threshold change no
    answer), so ``--resume`` refuses a changed stage; the model is checked before the work folder exists.
    """
    from continuousbench.news.shards import StageOutput, input_files

    config = {k: v for k, v in vars(args).items() if k not in OUTPUT_ONLY}
    for option, source in inputs.items():
        config[f"{option.lstrip('-')}_files"] = [str(p) for p in input_files(source, option)]
    config |= {
        "llm": model.llm,
        "judge": model.judge or model.llm,
        "temperature": model.temperature,
        "max_new_tokens": model.max_new_tokens,
    }
    check(model, judge=judge)
    out = StageOutput(
        args.output,
        stage,
        config,
        overwrite=args.overwrite,
        resume=args.resume,
        inputs=inputs.values(),
    )
    llm = generator(model.llm, out.path("llm-cache"), model.max_in_flight, "--llm", model.request_timeout)
    return out, llm
