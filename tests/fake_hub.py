"""``HfApi`` at its network boundary, for the publish tests and the bad-input table."""

from __future__ import annotations

from types import SimpleNamespace

SECRET = "hf_publishTOKENnever0shown1234"


def fake_hub(monkeypatch, release_id: str, tags: list[str] | None = None) -> SimpleNamespace:
    """Each HfApi call recorded and answered like an empty dataset repo (holding ``tags``)."""
    from huggingface_hub import HfApi

    monkeypatch.setenv("HF_TOKEN", SECRET)
    calls, state = {}, {"tags": list(tags or [])}

    import inspect

    def answer(name, result=None):
        real = inspect.signature(getattr(HfApi, name))

        def method(self, *args, **kwargs):
            real.bind(self, *args, **kwargs)  # the real signature: a call HfApi would refuse fails here
            calls[name] = (args, kwargs)
            if isinstance(result, Exception):
                raise result
            return result() if callable(result) else result

        monkeypatch.setattr(HfApi, name, method)

    answer("create_repo")
    answer("list_repo_refs", lambda: SimpleNamespace(tags=[SimpleNamespace(name=t) for t in state["tags"]]))
    answer("list_repo_files", [f"{release_id}/release.json"])
    answer("create_commit", SimpleNamespace(oid="b" * 40))
    answer("create_tag")
    return SimpleNamespace(calls=calls, state=state, answer=answer)
