"""Small fake release parts with the DESIGN columns, and an isolated datasets cache."""

from __future__ import annotations

import pytest

RELEASE_ID = "geminon-tiny-2026q1"


def qa_rows(n: int, start: int, support: int) -> dict[str, list]:
    return {
        "id": [f"q{start + i}" for i in range(n)],
        "question": [f"What is the hp of Entity{start + i}?" for i in range(n)],
        "answer": [str(40 + start + i) for i in range(n)],
        "entity": [10000 + start + i for i in range(n)],
        "name": [f"Entity{start + i}" for i in range(n)],
        "attribute": ["hp"] * n,
        "support_count": [support] * n,
    }


def make_parts(answer_suffix: str = "") -> dict:
    """One small Dataset per config/split; ``answer_suffix`` changes the QA answers (a different release)."""
    from datasets import Dataset

    def corpus(ids: list[int]) -> Dataset:
        return Dataset.from_dict(
            {
                "id": [f"doc{i}" for i in ids],
                "text": [f"Entity{i % 3} is a fire type with {40 + i} hp." for i in ids],
                "style": [("wiki", "journal", "evolution", "comparison")[i % 4] for i in ids],
                "entities": [[10000 + i % 3] for i in ids],
                "mentions": [[f"{10000 + i % 3}:hp", f"{10000 + i % 3}:type1"] for i in ids],
            }
        )

    def qa(n: int, start: int, support: int) -> Dataset:
        rows = qa_rows(n, start, support)
        rows["answer"] = [a + answer_suffix for a in rows["answer"]]
        return Dataset.from_dict(rows)

    return {
        "corpus": {"train": corpus(list(range(6))), "validation": corpus([6, 7])},
        "qa_public": {"validation": qa(2, 0, 200), "test": qa(3, 2, 400)},
        "qa_singleton": {"validation": qa(1, 5, 1), "test": qa(2, 6, 1)},
        "support_counts": {
            "train": Dataset.from_dict(
                {
                    "entity": [10000, 10001],
                    "name": ["Entity0", "Entity1"],
                    "feature": ["hp", "hp"],
                    "count": [2, 2],
                    "subset": ["public", "sensitive"],
                }
            )
        },
        "entities": {
            "train": Dataset.from_dict(
                {
                    "idx": [10000, 10001],
                    "name": ["Entity0", "Entity1"],
                    "type2": [None, "water"],
                    "line": [0, 1],
                    "stage": [1, 1],
                    "subset": ["public", "sensitive"],
                }
            )
        },
    }


@pytest.fixture
def parts() -> dict:
    return make_parts()


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Each test gets its own datasets cache and release root; no Hub repo from the environment."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-datasets-cache"))
    monkeypatch.delenv("CONTINUOUSBENCH_HUB_REPO", raising=False)
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "cb-home"))


@pytest.fixture
def written(tmp_path, parts):
    """A release written under ``tmp_path / 'root'``: (root, folder)."""
    from continuousbench.release import write_release

    root = tmp_path / "root"
    folder = write_release(RELEASE_ID, parts, root=root, seed=7, generator={"realizer": "template", "n": 3})
    return root, folder


def tree_bytes(folder) -> dict[str, bytes]:
    """relative path -> bytes of every file under ``folder``."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(name="tree_bytes")
def tree_bytes_fixture():
    return tree_bytes


@pytest.fixture(name="make_parts")
def make_parts_fixture():
    return make_parts
