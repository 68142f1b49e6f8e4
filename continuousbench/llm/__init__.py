"""Text-generation backends behind one interface: ``generate(prompts, **sampling) -> texts``.

Three backends, chosen by a spec string (``make_generator``):

* ``transformers:<path or model id>`` - a local causal LM (batched, left padding, greedy by default);
* ``endpoint:<base_url>[#model]`` / ``completions:<base_url>[#model]`` - any OpenAI-compatible server
  (vLLM, llama.cpp, transformers serve, TGI), chat or raw-text completions, over plain HTTP with a
  bounded number of requests in flight, the one retry layer, the one answer cache, structured output
  and timeouts (docs/llm-servers.md); the key is read from
  ``CONTINUOUSBENCH_API_KEY`` (or ``HF_TOKEN``), or given in the URL (``?key=``, ``user:pw@``), and is
  never logged or written anywhere (:mod:`continuousbench.credentials`);
* ``offline:<name>`` - a deterministic, network-free function in :data:`OFFLINE`, the registry that
  the higher layers fill before they name one (``offline:news``: :func:`continuousbench.news.offline.
  register`, called by the NEWS stages and the ``continuousbench`` program; tests register their own).

This module is the interface and the factory; the backends live in :mod:`.local` (also batched
generation with a model already in memory, the harness's QA) and :mod:`.endpoint`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from continuousbench.errors import UserError


class TextGenerator(Protocol):
    name: str

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]: ...


class GenerationError(RuntimeError):
    """A backend failed to answer; the message says which and how to fix it."""


class Cut(str):
    """An answer dropped because it stayed cut at its token budget: reads as ``""`` everywhere, and the
    parser counts it as ``dropped_truncated`` (raise the budget), not as an empty response."""


CUT = Cut()


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


# name -> function: filled by the layers above (never at import time, never named here by a string).
OFFLINE: dict[str, Callable[..., str]] = {}


def make_generator(spec: str, **options: Any) -> TextGenerator:
    """Build a backend from a spec: ``transformers:<path>``, ``endpoint:<url>[#model]`` (chat),
    ``completions:<url>[#model]`` (raw text) or ``offline:<name>``. ``cache_dir`` puts the endpoint and
    transformers backends behind the one answer cache (:class:`continuousbench.llm.cache.Cached`; offline
    functions are computed, not paid for, and keep none), ``cache_identity`` adds to its keys what the
    backend cannot know (the served weights' sha256); the other ``options`` go to the endpoint
    backends (``max_in_flight``, ``retries``, ``request_timeout``, ``backoff``) and are ignored by the
    others."""
    from continuousbench.credentials import redact, reveal

    kind, _, target = reveal(spec).partition(":")  # a redacted spec of the command line: its key again
    cache_dir, identity = options.pop("cache_dir", None), options.pop("cache_identity", None)
    backend: TextGenerator
    match kind:
        case "transformers" if target:
            from continuousbench.llm.local import TransformersGenerator

            backend = TransformersGenerator(target)
        case "endpoint" | "completions" if target:
            from continuousbench.llm.endpoint import EndpointGenerator

            url, _, model = target.partition("#")
            api = "chat" if kind == "endpoint" else "completions"
            name = redact(f"{kind}:{target}")
            backend = EndpointGenerator(url, model or None, api=api, name=name, **options)
        case "offline" if target in OFFLINE:
            return OfflineGenerator(OFFLINE[target], name=spec)
        case _:
            raise UserError(
                f"cannot make a text generator from {redact(spec)!r}: use transformers:<path>, "
                f"endpoint:<url>[#model], completions:<url>[#model] or offline:<name> with a registered "
                f"name ({', '.join(OFFLINE) or 'none'})"
            )
    if cache_dir is None:
        return backend
    from continuousbench.llm.cache import Cached

    return Cached(backend, cache_dir, identity)
