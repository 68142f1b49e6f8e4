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
    max_in_flight: int = field(default=32, metadata=bounds("[1, inf)", "Requests sent at once."))
    temperature: float = field(default=0.0, metadata=bounds("[0, inf)", "Sampling temperature."))
    max_new_tokens: int = field(default=4096, metadata=bounds("[1, inf)", "Answer budget per request."))


def generator(spec: str | None, cache_dir: Path | None, max_in_flight: int = 32, option: str = "--llm"):
    """A text generator whose answers are cached in ``cache_dir`` (endpoints only)."""
    if not spec:
        raise UserError(f"{option} is missing: pass endpoint:<url>#<model>, or offline:news for a dry run")
    from continuousbench import llm

    return llm.make_generator(spec, cache_dir=cache_dir, max_in_flight=max_in_flight)


def check(model: ModelArguments, *, judge: bool = False) -> None:
    """Fail in one line now, before a work folder exists, when a model is missing or does not answer."""
    specs = [("--llm", model.llm)] + ([("--judge", model.judge or model.llm)] if judge else [])
    for option, spec in specs:
        found = generator(spec, None, option=option)
        if hasattr(found, "check"):
            found.check()


def judge(spec: str, cache_dir: Path, max_in_flight: int = 32):
    """The harness's LLM-match judge (:class:`continuousbench.judge.Judge`) on ``spec``."""
    from continuousbench.judge import Judge

    model = generator(spec, cache_dir / "judge-llm", max_in_flight, option="--judge")
    return Judge(model, cache_dir=cache_dir / "judge", model_name=spec, batch_size=1024)


OUTPUT_ONLY = ("overwrite", "resume", "output", "chunk")  # options a resumed stage may change


def open_stage(
    stage: str, args: Any, model: ModelArguments, inputs: Mapping[str, Any], *,
    judge: bool = False, resume: bool | None = None,
) -> tuple[Any, Any]:
    """(stage output, model) of an LLM stage; ``inputs`` maps each input option to its value.

    The run pins every option but the output-only ones, the input files, and the model settings (spec,
    judge, temperature, answer budget; requests in flight change no answer), so ``--resume`` refuses a
    changed stage; the model is checked before the work folder exists.
    """  # fmt: skip
    from continuousbench.news.shards import StageOutput, input_files

    config = {k: v for k, v in vars(args).items() if k not in OUTPUT_ONLY}
    for option, source in inputs.items():
        config[f"{option.lstrip('-')}_files"] = [str(p) for p in input_files(source, option)]
    config |= {"llm": model.llm, "judge": model.judge or model.llm, "temperature": model.temperature,
               "max_new_tokens": model.max_new_tokens}  # fmt: skip
    check(model, judge=judge)
    out = StageOutput(args.output, stage, config, overwrite=args.overwrite,
                      resume=args.resume if resume is None else resume, inputs=inputs.values())  # fmt: skip
    return out, generator(model.llm, out.path("llm-cache"), model.max_in_flight)
