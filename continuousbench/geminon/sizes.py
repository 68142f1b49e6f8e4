"""Release sizes: how many evolution lines, how many sensitive ones, and the corpus mix (paper G.1.1, G.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from continuousbench.errors import UserError


@dataclass(frozen=True)
class SizeSpec:
    name: str
    lines: dict[int, int]  # stages per line -> number of lines
    sensitive_lines: dict[int, int]  # stages per line -> number of sensitive lines
    mix: dict[str, int] = field(default_factory=dict)  # public style -> documents in the corpus
    corpus_validation_fraction: float = 0.01
    qa_validation_fraction: float = 0.2  # share of entities whose questions go to `validation`

    @property
    def n_entities(self) -> int:
        return sum(stages * n for stages, n in self.lines.items())


SIZES: dict[str, SizeSpec] = {
    # CPU tests and the demo: 18 entities (12 public, 6 sensitive), ~140 documents per public entity. A
    # 1M-parameter model learns a fact from the number of documents stating it, so the demo keeps the
    # support (~55 documents per fact) and has few entities: each pass over the corpus costs less. A
    # third of the public entities go to validation (52 questions): checkpoint selection needs them.
    "tiny": SizeSpec(
        name="tiny",
        lines={3: 3, 2: 3, 1: 3},
        sensitive_lines={3: 1, 2: 1, 1: 1},
        mix={"comparison": 720, "evolution": 240, "journal": 480, "wiki": 360},
        corpus_validation_fraction=0.05,
        qa_validation_fraction=1 / 3,
    ),
    # Paper: 600 entities, 120 sensitive; 200,000 public documents (+120 sensitive).
    "small": SizeSpec(
        name="small",
        lines={3: 100, 2: 100, 1: 100},
        sensitive_lines={3: 20, 2: 20, 1: 20},
        mix={"comparison": 100_000, "evolution": 40_000, "journal": 40_000, "wiki": 20_000},
    ),
    "medium": SizeSpec(
        name="medium",
        lines={3: 100, 2: 100, 1: 100},
        sensitive_lines={3: 20, 2: 20, 1: 20},
        mix={"comparison": 300_000, "evolution": 100_000, "journal": 300_000, "wiki": 300_000},
    ),
}


def get_size(name: str) -> SizeSpec:
    try:
        return SIZES[name]
    except KeyError:
        raise UserError(f"unknown size {name!r}: choose one of {', '.join(SIZES)}") from None
