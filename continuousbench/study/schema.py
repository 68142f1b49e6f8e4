"""The study file: which release, generators, baselines, evaluators, seeds and reports (docs/study.md).

Each section names a recipe (``config``: a command's own ``--config`` YAML, e.g. recipes/configs/*.yaml)
and ``options`` passed to that command on its command line, so a study adds no training knob of its
own. Paths in the file (a recipe, an option naming a file or folder, ``transformers:<folder>``) are read
relative to the file's folder when they exist there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from continuousbench.errors import UserError

Options = dict[str, Any]
KINDS = (
    "build",
    "train-generator",
    "synthesize",
    "pe",
    "private-prediction",
    "evaluate",
    "mauve",
    "memorization",
    "audit",
    "report",
    "compare",
    "proxies",
)
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")  # a name that is one path part, never `..` or `a/b`


def _path_part(name: str) -> str:
    """Names become folder and file names of the study folder (``runs/<evaluator>/<corpus>-seed<k>``), so
    a name with ``/``, a leading dot or ``..`` would write outside it, or over another job's output."""
    if not SAFE_NAME.fullmatch(name) or ".." in name:
        raise ValueError(
            f"name {name!r} must be letters, digits, '.', '_', '+' or '-' (a folder name of the study), "
            "starting with a letter or digit"
        )
    return name


Name = Annotated[str, AfterValidator(_path_part)]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Build(Section):
    """Build the release as the study's first job (``continuousbench build <track>``)."""

    track: str = "geminon"
    options: Options = Field(default_factory=dict)  # e.g. size, quarter, seed


class Generator(Section):
    """A generator: trained on the real corpus, then sampled (``synthesize``) into the corpus ``name``."""

    name: Name
    config: str
    epsilon: float | None = None  # None: non-private (Syn, epsilon = infinity)
    options: Options = Field(default_factory=dict)


class PrivateEvolution(Section):
    name: Name
    config: str | None = None
    options: Options = Field(default_factory=dict)  # api, embedding_model, ...


class PrivatePrediction(PrivateEvolution):
    """A corpus made by ``continuousbench private-prediction`` (options: model, epsilon, ...)."""


class Corpus(Section):
    """A participant's corpus (``corpora: {name: {path: ..., privacy: ...}}``, or ``{name: path}``): a
    file, folder or Hub dataset id, and the privacy statement it is ranked under (a JSON file,
    docs/results-format.md), passed to its runs as ``evaluate --corpus_privacy``. Without a statement
    its runs are listed as "no statement", and the study says so."""

    path: str
    privacy: str | None = None


def _corpus(value: Any) -> Any:
    return {"path": value} if isinstance(value, str) else value


class Evaluator(Section):
    """An evaluator recipe, trained on each corpus of ``corpora`` (``none``: scored without training,
    ``real``: the release's own corpus, else a generator's, PE's, private prediction's or the study's
    ``corpora`` name;
    default: all of them)."""

    name: Name
    config: str
    corpora: list[str] | None = None
    options: Options = Field(default_factory=dict)


class Mauve(Section):
    model: str
    options: Options = Field(default_factory=dict)  # n_samples, seeds, ...


class Memorization(Section):
    """The verbatim memorisation probe (``continuousbench memorization``) on generators of the study."""

    generators: list[str]
    options: Options = Field(default_factory=dict)  # docs, prefix_tokens, suffix_tokens, ...


class Audit(Section):
    name: Name
    options: Options = Field(default_factory=dict)


class Report(Section):
    """``continuousbench report`` over the study's runs. ``rows``: row name -> ``<evaluator>/<corpus>``
    (default: every run, named by its folder); with several seeds a row per seed (``<name>-seed<k>``).
    Rows get a MAUVE column from the study's ``mauve`` jobs, and the paired comparisons of ``compare``
    are printed under the table. ``findings``: role -> row name (``harness.findings.ROLES``), to check
    the paper's four findings (needs ``compare`` of the ``syn`` and ``dp_syn`` rows' corpora)."""

    rows: dict[str, str] = Field(default_factory=dict)
    findings: dict[str, str] = Field(default_factory=dict)


class Study(Section):
    name: Name
    release: str | None = None  # a release id or folder; omitted when ``build`` makes it
    build: Build | None = None
    generators: list[Generator] = Field(default_factory=list)
    synthesis: Options = Field(default_factory=dict)  # options of every synthesize job
    pe: list[PrivateEvolution] = Field(default_factory=list)
    private_prediction: list[PrivatePrediction] = Field(default_factory=list)
    corpora: dict[Name, Annotated[Corpus, BeforeValidator(_corpus)]] = Field(default_factory=dict)  # your own
    evaluators: list[Evaluator] = Field(default_factory=list)
    seeds: list[Annotated[int, Field(ge=0)]] = Field(default_factory=lambda: [0], min_length=1)  # a run each
    mauve: Mauve | None = None
    memorization: Memorization | None = None
    audit: list[Audit] = Field(default_factory=list)
    report: Report | bool = True  # true: every run, named by its folder; false: no report job
    compare: list[tuple[str, str]] = Field(default_factory=list)  # corpus pairs, per evaluator and seed
    gpus: dict[str, Annotated[int, Field(ge=0, le=64)]] = Field(default_factory=dict)  # per job of a kind
    parameters: dict[str, float] = Field(default_factory=dict)  # model -> parameter count (for --plan)
    root: Path = Path(".")  # the study file's folder: relative paths are read from here

    @model_validator(mode="after")
    def _check(self) -> Study:
        if (self.release is None) == (self.build is None):
            raise ValueError("give exactly one of release (an id or folder) and build")
        names = [g.name for g in self.generators] + [p.name for p in [*self.pe, *self.private_prediction]]
        names += list(self.corpora)
        for name in names:
            if names.count(name) > 1 or name in ("none", "real"):
                raise ValueError(f"corpus name {name!r} is used twice or reserved; rename it")
        named = {
            "evaluator": [e.name for e in self.evaluators],
            "audit": [a.name for a in self.audit],
            "seed": self.seeds,
        }
        for what, given in named.items():
            twice = next((n for i, n in enumerate(given) if n in given[:i]), None)
            if twice is not None:  # one would silently take the other's folder
                raise ValueError(f"{what} {twice!r} is given twice; give each its own name")
        unknown = sorted(set(self.gpus) - set(KINDS))
        if unknown:
            raise ValueError(f"gpus names unknown job kind(s) {', '.join(unknown)}; use {', '.join(KINDS)}")
        known = {"none", "real", *names}
        for ev in self.evaluators:
            unknown = set(ev.corpora or ()) - known
            if unknown:
                raise ValueError(
                    f"evaluator {ev.name} trains on unknown corpora {sorted(unknown)}; the names known are "
                    f"{', '.join(sorted(known))} (a corpus of your own: corpora: "
                    "{name: {path: ..., privacy: ...}})"
                )
        for name in self.corpora:
            self._check_corpus(name)
        probed = set(self.memorization.generators if self.memorization else ())
        if probed - {g.name for g in self.generators}:
            raise ValueError(f"memorization probes unknown generators {sorted(probed - set(names))}")
        for a, b in self.compare:
            if not {a, b} <= known:
                raise ValueError(f"compare names unknown corpora in ({a}, {b}); use {sorted(known)}")
        if isinstance(self.report, Report):
            self._check_report(self.report, known)
        return self

    def _check_report(self, report: Report, known: set[str]) -> None:
        from continuousbench.results.findings import ROLES

        evaluators = {ev.name: set(ev.corpora or known) for ev in self.evaluators}
        for name, key in report.rows.items():
            ev, _, corpus = key.partition("/")
            if corpus not in evaluators.get(ev, ()):
                raise ValueError(f"report row {name} names {key}, not an <evaluator>/<corpus> of this study")
        if report.findings:
            if set(report.findings) != set(ROLES) or not set(report.findings.values()) <= set(report.rows):
                raise ValueError(f"report findings map each of {', '.join(ROLES)} to a row of report.rows")
            if len(self.seeds) != 1:
                raise ValueError("report findings are checked on one seed's runs; give one seed")

    def _check_corpus(self, name: str) -> None:
        """A corpus of ``corpora`` found, and its statement a valid one, before any job runs (a missing
        file would otherwise fail its job after the generators trained)."""
        from continuousbench.results.privacy_statement import stated_privacy

        source, statement = self.corpus(name)
        if Path(source).is_absolute() and not Path(source).exists():
            raise ValueError(
                f"corpora.{name}: {source} does not exist (paths are read from the study file's "
                "folder; a Hub dataset is owner/name)"
            )
        if statement is not None:
            if not Path(statement).is_file():
                raise ValueError(
                    f"corpora.{name}.privacy: {statement} is not a file; give the corpus's "
                    "privacy statement, a JSON file (docs/results-format.md)"
                )
            try:
                stated_privacy(source, statement)
            except ValueError as err:
                raise ValueError(f"corpora.{name}.privacy: {err}") from None

    def corpus(self, name: str) -> tuple[str, str | None]:
        """(source, statement) of corpus ``name`` of ``corpora``, as its jobs get them: a local path whole
        (read from the study file's folder, resolved), a Hub dataset id as given; the statement's path
        whole, or None."""
        given = self.corpora[name]
        statement = None if given.privacy is None else self._whole(given.privacy)
        return self._whole(given.path, hub=True), statement

    def _whole(self, value: str, hub: bool = False) -> str:
        from continuousbench.hub import hub_repo_id

        path = Path(value).expanduser()
        path = path if path.is_absolute() else self.root / path
        return value if hub and not path.exists() and hub_repo_id(value) else str(path.resolve())

    def path(self, value: str) -> str:
        """A path of the study file, relative to its folder; ids and absolute paths unchanged."""
        candidate = self.root / value
        return str(candidate) if not Path(value).is_absolute() and candidate.exists() else value

    def option(self, value: Any) -> Any:
        """An option's value with its paths read relative to the study file (``prefix:path`` too, as in
        ``api: transformers:<model folder>``); other values unchanged."""
        if isinstance(value, (list, tuple)):
            return [self.option(v) for v in value]
        if not isinstance(value, str) or not value:
            return value
        prefix, sep, rest = value.partition(":")
        if sep and rest and self.path(rest) != rest and "/" not in prefix:
            return f"{prefix}:{self.path(rest)}"
        return self.path(value)

    def as_file(self) -> dict[str, Any]:
        """The study as a file that reads the same from any folder: recipes and paths made absolute."""

        def absolute(section: dict) -> dict:
            out = {k: self.option(v) if k in ("config", "model") else v for k, v in section.items()}
            if "options" in out:
                out["options"] = {k: self.option(v) for k, v in out["options"].items()}
            return out

        data = self.model_dump(mode="json", exclude={"root"}, exclude_none=True)
        for key in ("generators", "pe", "private_prediction", "evaluators", "audit"):
            data[key] = [absolute(s) for s in data[key]]
        for key in ("build", "mauve"):
            if key in data:
                data[key] = absolute(data[key])
        if "release" in data:
            data["release"] = self.path(data["release"])
        data["corpora"] = {}
        for name in self.corpora:
            source, statement = self.corpus(name)
            data["corpora"][name] = {"path": source, **({"privacy": statement} if statement else {})}
        data["synthesis"] = {k: self.option(v) for k, v in data["synthesis"].items()}
        return data


def load_study(path: str | Path) -> Study:
    """The study file at ``path``, validated; a mistake is one line naming the key."""
    from continuousbench.strict_yaml import load_yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"--config {path} does not exist; pass a study file (see recipes/paper/)") from None
    except (IsADirectoryError, UnicodeDecodeError) as err:
        raise UserError(f"--config {path} is not a readable YAML file ({type(err).__name__})") from None
    data = load_yaml(text, f"--config {path}")  # the recipes' strict loader: a key given twice is refused
    if not isinstance(data, dict):
        raise UserError(f"--config {path} must hold a mapping (name, release, generators, ...)")
    try:
        return Study(**data, root=path.resolve().parent)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        message = first["msg"].removeprefix("Value error, ")
        raise UserError(f"--config {path}: {where}: {message}; fix the study file") from None
