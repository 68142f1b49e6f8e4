"""Text-generation backends behind one interface: ``generate(prompts, **sampling) -> texts``.

Three backends, chosen by a spec string (``make_generator``):

* ``transformers:<path or model id>`` - a local causal LM (batched, left padding, greedy by default);
* ``endpoint:<base_url>[#model]`` - any OpenAI-compatible server (vLLM, TGI, Gemini's compatible API)
  through ``huggingface_hub.InferenceClient``; the key is read from ``CONTINUOUSBENCH_API_KEY`` (or
  ``HF_TOKEN``) in the environment and is never logged or written anywhere;
* ``offline:<name>`` - a deterministic, network-free function registered by the caller (tests, the
  template realizer).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

API_KEY_ENV = ("CONTINUOUSBENCH_API_KEY", "HF_TOKEN")


class TextGenerator(Protocol):
    name: str

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]: ...


class GenerationError(RuntimeError):
    """A backend failed to answer; the message says which and how to fix it."""


@dataclass
class OfflineGenerator:
    """Deterministic backend: applies ``fn(prompt, **sampling)`` to every prompt."""

    fn: Callable[..., str]
    name: str = "offline"

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        seed = sampling.pop("seed", None)  # prompt i gets seed + i, as in the other backends
        if seed is None:
            return [self.fn(p, **sampling) for p in prompts]
        return [self.fn(p, **sampling, seed=seed + i) for i, p in enumerate(prompts)]


@dataclass
class EndpointGenerator:
    """An OpenAI-compatible chat endpoint. Retries with exponential backoff, then fails clearly."""

    base_url: str
    model: str | None = None
    retries: int = 4
    backoff: float = 1.0
    timeout: float = 120.0
    name: str = ""

    def __post_init__(self) -> None:
        from huggingface_hub import InferenceClient

        self.name = self.name or f"endpoint:{self.model or self.base_url}"
        api_key = next((os.environ[k] for k in API_KEY_ENV if os.environ.get(k)), None)
        self._client = InferenceClient(base_url=self.base_url, api_key=api_key, timeout=self.timeout)

    def _one(self, prompt: str, sampling: dict[str, Any]) -> str:
        last: Exception | None = None
        for attempt in range(self.retries):
            try:
                out = self._client.chat_completion(
                    messages=[{"role": "user", "content": prompt}],
                    model=self.model,
                    max_tokens=sampling.get("max_new_tokens", 256),
                    temperature=sampling.get("temperature", 0.0),
                    top_p=sampling.get("top_p"),
                    seed=sampling.get("seed"),
                    stop=sampling.get("stop"),
                )
                return out.choices[0].message.content or ""
            except Exception as err:  # network errors, 5xx, rate limits: all retried the same way
                last = err
                time.sleep(self.backoff * 2**attempt)
        raise GenerationError(
            f"endpoint {self.base_url} did not answer after {self.retries} tries ({type(last).__name__}); "
            "check the URL, that the server is up, and the API key in $CONTINUOUSBENCH_API_KEY"
        )

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        return [self._one(p, sampling) for p in prompts]


def newline_token_ids(tokenizer) -> list[int]:
    """Ids of every vocabulary entry whose decoded text contains a line break (stop tokens)."""
    return [i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])]


def generate_batched(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 256,
    batch_size: int = 32,
    stop_at_newline: bool = False,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
) -> list[str]:
    """Generate continuations for ``prompts`` with an already-loaded causal LM.

    Left padding keeps every prompt's last token adjacent to its first new token. With
    ``stop_at_newline`` a sequence stops at its first line break and the text is cut there: greedy
    decoding makes this identical to generating ``max_new_tokens`` and truncating, at a fraction of
    the cost.
    """
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _StopOnTokens(StoppingCriteria):
        def __init__(self, ids: list[int]):
            self.ids = torch.tensor(ids, dtype=torch.long)

        def __call__(self, input_ids, scores, **kwargs):  # one bool per row
            return torch.isin(input_ids[:, -1], self.ids.to(input_ids.device))

    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    stopping = (
        StoppingCriteriaList([_StopOnTokens(newline_token_ids(tokenizer))]) if stop_at_newline else None
    )
    was_training = model.training
    model.eval()
    texts: list[str] = []
    try:
        for start in range(0, len(prompts), batch_size):
            batch = list(prompts[start : start + batch_size])
            enc = tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=True).to(
                model.device
            )
            if seed is not None:
                torch.manual_seed(seed + start)
            with torch.no_grad():
                out = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    do_sample=do_sample,
                    temperature=temperature if do_sample else None,
                    top_k=top_k if do_sample else None,
                    top_p=top_p if do_sample else None,
                    stopping_criteria=stopping,
                    pad_token_id=tokenizer.pad_token_id,
                    use_cache=True,
                )
            new = out[:, enc["input_ids"].shape[1] :]
            for row in tokenizer.batch_decode(new, skip_special_tokens=True):
                texts.append(row.split("\n", 1)[0] if stop_at_newline else row)
    finally:
        model.train(was_training)
    return texts


@dataclass
class TransformersGenerator:
    """A local causal LM (folder or model id), loaded once."""

    model_path: str
    batch_size: int = 16
    name: str = ""

    def __post_init__(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = self.name or f"transformers:{self.model_path}"
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_path)

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        temperature = sampling.get("temperature", 0.0)
        return generate_batched(
            self.model,
            self.tokenizer,
            prompts,
            max_new_tokens=sampling.get("max_new_tokens", 256),
            batch_size=self.batch_size,
            stop_at_newline=sampling.get("stop_at_newline", False),
            do_sample=temperature > 0,
            temperature=temperature or 1.0,
            top_k=sampling.get("top_k"),
            top_p=sampling.get("top_p"),
            seed=sampling.get("seed"),
        )


OFFLINE: dict[str, Callable[..., str]] = {}


def make_generator(spec: str) -> TextGenerator:
    """Build a backend from ``transformers:<path>``, ``endpoint:<url>[#model]`` or ``offline:<name>``."""
    kind, _, target = spec.partition(":")
    match kind:
        case "transformers" if target:
            return TransformersGenerator(target)
        case "endpoint" if target:
            url, _, model = target.partition("#")
            return EndpointGenerator(url, model or None)
        case "offline" if target in OFFLINE:
            return OfflineGenerator(OFFLINE[target], name=spec)
    raise ValueError(
        f"cannot make a text generator from {spec!r}: use transformers:<path>, endpoint:<url>[#model] "
        f"or offline:<name> with a registered name ({', '.join(OFFLINE) or 'none registered'})"
    )
