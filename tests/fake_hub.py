"""``HfApi`` at its network boundary, for the submit and publish tests and the bad-input table.

Every fake method is bound to the real method's signature first (:func:`fake_method`), so a call that
``HfApi`` itself would refuse - a misspelt or removed keyword, a missing argument - fails the test instead
of passing against a lenient fake.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import SimpleNamespace

SECRET = "hf_publishTOKENnever0shown1234"


def fake_method(name: str, record: Callable[[object, tuple, dict], None], result=None):
    """A stand-in for ``HfApi.<name>``: checked against the real signature, recorded by ``record(self,
    args, kwargs)``, answering ``result`` (called when callable, raised when an exception)."""
    from huggingface_hub import HfApi

    real = inspect.signature(getattr(HfApi, name))

    def method(self, *args, **kwargs):
        real.bind(self, *args, **kwargs)  # TypeError where HfApi would refuse the call
        record(self, args, kwargs)
        if isinstance(result, Exception):
            raise result
        return result() if callable(result) else result

    return method


def patch_hub(monkeypatch, answers: dict, record: Callable[[str, object, tuple, dict], None]) -> None:
    """Replace each ``HfApi`` method named in ``answers`` (name -> result) by a :func:`fake_method`."""
    from huggingface_hub import HfApi

    for name, result in answers.items():
        note = lambda self, args, kwargs, name=name: record(name, self, args, kwargs)  # noqa: E731
        monkeypatch.setattr(HfApi, name, fake_method(name, note, result))


def fake_hub(monkeypatch, release_id: str, tags: list[str] | None = None) -> SimpleNamespace:
    """Each HfApi call recorded and answered like an empty dataset repo (holding ``tags``)."""
    monkeypatch.setenv("HF_TOKEN", SECRET)
    calls, state = {}, {"tags": list(tags or [])}

    def note(name, self, args, kwargs):
        calls[name] = (args, kwargs)

    def answer(name, result=None):
        patch_hub(monkeypatch, {name: result}, note)

    patch_hub(
        monkeypatch,
        {
            "create_repo": None,
            "list_repo_refs": lambda: SimpleNamespace(tags=[SimpleNamespace(name=t) for t in state["tags"]]),
            "list_repo_files": [f"{release_id}/release.json"],
            "create_commit": SimpleNamespace(oid="b" * 40),
            "create_tag": None,
        },
        note,
    )
    return SimpleNamespace(calls=calls, state=state, answer=answer)
