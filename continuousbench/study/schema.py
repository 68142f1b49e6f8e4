"""The study file: which release, generators, baselines, evaluators, seeds and reports (docs/study.md).

Each section names a recipe (``config``: a command's own ``--config`` YAML, e.g. recipes/configs/*.yaml)
and ``options`` passed to that command on its command line, so a study adds no training knob of its
own. Paths in the file are read relative to the file's folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from continuousbench.errors import UserError

Options = dict[str, Any]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Build(Section):
    """Build the release as the study's first job (``continuousbench build <track>``)."""

    track: str = "geminon"
    options: Options = Field(default_factory=dict)  # e.g. size, quarter, seed


class Generator(Section):
    """A generator: trained on the real corpus, then sampled (``synthesize``) into the corpus ``name``."""

    name: str
    config: str
    epsilon: float | None = None  # None: non-private (Syn, epsilon = infinity)
    options: Options = Field(default_factory=dict)


class PrivateEvolution(Section):
    name: str
    config: str | None = None
    options: Options = Field(default_factory=dict)  # api, embedding_model, ...


class Evaluator(Section):
    """An evaluator recipe, trained on each corpus of ``corpora`` (``none``: scored without training,
    ``real``: the release's own corpus, else a generator's or PE's name; default: all of them)."""

    name: str
    config: str
    corpora: list[str] | None = None
    options: Options = Field(default_factory=dict)


class Mauve(Section):
    model: str
    options: Options = Field(default_factory=dict)  # n_samples, seeds, ...


class Audit(Section):
    name: str
    options: Options = Field(default_factory=dict)


class Study(Section):
    name: str
    release: str | None = None  # a release id or folder; omitted when ``build`` makes it
    build: Build | None = None
    generators: list[Generator] = Field(default_factory=list)
    synthesis: Options = Field(default_factory=dict)  # options of every synthesize job
    pe: list[PrivateEvolution] = Field(default_factory=list)
    evaluators: list[Evaluator] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=lambda: [0])  # evaluator seeds: one run per seed
    mauve: Mauve | None = None
    audit: list[Audit] = Field(default_factory=list)
    report: bool = True
    compare: list[tuple[str, str]] = Field(default_factory=list)  # corpus pairs, per evaluator and seed
    gpus: dict[str, int] = Field(default_factory=dict)  # GPUs per job of a kind (default 1; build, report: 0)
    parameters: dict[str, float] = Field(default_factory=dict)  # model -> parameter count (for --plan)
    root: Path = Path(".")  # the study file's folder: relative paths are read from here

    @model_validator(mode="after")
    def _check(self) -> Study:
        if (self.release is None) == (self.build is None):
            raise ValueError("give exactly one of release (an id or folder) and build")
        names = [g.name for g in self.generators] + [p.name for p in self.pe]
        for name in names:
            if names.count(name) > 1 or name in ("none", "real"):
                raise ValueError(f"corpus name {name!r} is used twice or reserved; rename it")
        known = {"none", "real", *names}
        for ev in self.evaluators:
            unknown = set(ev.corpora or ()) - known
            if unknown:
                raise ValueError(f"evaluator {ev.name} trains on unknown corpora {sorted(unknown)}")
        for a, b in self.compare:
            if not {a, b} <= known:
                raise ValueError(f"compare names unknown corpora in ({a}, {b}); use {sorted(known)}")
        return self

    def path(self, value: str) -> str:
        """A path of the study file, relative to its folder; ids and absolute paths unchanged."""
        candidate = self.root / value
        return str(candidate) if not Path(value).is_absolute() and candidate.exists() else value


def load_study(path: str | Path) -> Study:
    """The study file at ``path``, validated; a mistake is one line naming the key."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"--config {path} does not exist; pass a study file (see recipes/paper/)") from None
    except yaml.YAMLError:
        raise UserError(f"--config {path} is not valid YAML; fix the file") from None
    if not isinstance(data, dict):
        raise UserError(f"--config {path} must hold a mapping (name, release, generators, ...)")
    try:
        return Study(**data, root=path.resolve().parent)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise UserError(f"--config {path}: {where}: {first['msg']}; fix the study file") from None
