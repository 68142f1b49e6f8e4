"""A study expanded into jobs: each one of our commands (its argv) with its own folder and done marker.

Layout under the study folder: ``releases/``, ``generators/<g>``, ``synthetic/<corpus>``,
``runs/<evaluator>/<corpus>-seed<k>``, ``mauve/<corpus>.json``, ``memorization/<generator>.json``,
``audit/<name>``, ``report/``,
``compare/``, ``logs/<job>.log`` and ``manifest.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError
from continuousbench.study.schema import Report, Study

CPU_KINDS = ("build", "report", "compare", "proxies")  # no GPU: bookkeeping (and a small FID embedding)


@dataclass(frozen=True)
class Job:
    """One command of the study. It is finished when ``done`` exists (the command writes it last);
    a folder holding a command's hidden ``.<command>-work`` folder was stopped mid-way and resumes with
    the command's own ``--resume``."""

    name: str  # unique, also the log's name: "<kind>/<what>"
    kind: str
    argv: tuple[str, ...]  # the continuousbench command line, without the program name
    out: Path  # the job's folder (or file)
    done: Path
    after: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()  # files it reads (recipe, own corpus, statement): sha256 in the manifest
    gpus: int = 1
    stdout: Path | None = None  # where the command's standard output is kept (compare prints JSON)
    recipe: dict[str, Any] = field(default_factory=dict, compare=False)  # for --plan: the options it runs
    log: Path = Path()  # logs/<name>.log in the study folder: the command's stdout and stderr


def argv(options: dict[str, Any]) -> list[str]:
    """``--key value`` pairs for a command's parser (lists as several values, None left out)."""
    out: list[str] = []
    for key, value in options.items():
        if value is None:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        out += [f"--{key}", *(str(v).lower() if isinstance(v, bool) else str(v) for v in values)]
    return out


def read_recipe(path: str | None, job: str) -> dict[str, Any]:
    """The recipe a job names (its command reads it again, strictly); a missing one is refused before
    anything runs, naming the job."""
    from continuousbench.strict_yaml import load_yaml

    if path is None:
        return {}
    if not Path(path).is_file():
        raise UserError(
            f"job {job}: its config {path} does not exist (relative paths are read from the study file's "
            "folder); fix the study file"
        )
    recipe = load_yaml(Path(path).read_text(encoding="utf-8"), f"job {job}: config {path}") or {}
    if not isinstance(recipe, dict):
        return {}
    model = recipe.get("model")
    if isinstance(model, str) and not Path(model).is_absolute() and (Path(path).parent / model).exists():
        recipe["model"] = str((Path(path).parent / model).resolve())  # its command reads it from the recipe
    return recipe


class _Graph:
    def __init__(self, study: Study, out: Path):
        self.study, self.out, self.jobs = study, out, []

    def add(
        self,
        kind: str,
        what: str,
        command: list[str],
        out: Path,
        done: Path,
        after=(),
        config=None,
        options=None,
        stdout=None,
        reads=(),
        priced=None,
        gpus=None,
    ) -> str:
        """Add a job; ``reads``: the files it reads beyond its recipe (a participant's corpus, its
        statement), whose digests the manifest keeps too; ``priced``: what only the plan reads (a build's
        screening); ``gpus``: the kind's default when the study gives none."""
        name = f"{kind}/{what}"
        config = self.study.path(config) if config else None
        options = {k: self.study.option(v) for k, v in (options or {}).items()}
        recipe = {**read_recipe(config, name), **options, **(priced or {})}
        gpus = self.study.gpus.get(kind, (0 if kind in CPU_KINDS else 1) if gpus is None else gpus)
        full = [*command, *(["--config", config] if config else []), *argv(options or {})]
        log = self.out / "logs" / f"{name.replace('/', '--')}.log"
        inputs = (*((config,) if config else ()), *reads)
        job = Job(name, kind, tuple(full), out, done, tuple(after), inputs, gpus, stdout, recipe, log)
        self.jobs.append(job)
        return name


def expand(study: Study, out: Path) -> list[Job]:
    """Every job of ``study`` under ``out``, each after the jobs whose outputs it reads."""
    g = _Graph(study, out)
    after_release: tuple[str, ...] = ()
    if study.build is not None:
        releases = out / "releases"
        opts = study.build.options
        size, quarter = opts.get("size", "small"), opts.get("quarter", "2026q1")
        release = str(releases / f"{study.build.track}-{size}-{quarter}")
        screening = screening_recipe(study.build.track, size, opts.get("closed_book_models"))
        built = g.add(
            "build",
            study.build.track,
            ["build", study.build.track],
            releases,
            Path(release) / "release.json",
            options={**opts, "out": releases},
            priced=screening,
            gpus=screening_gpus(screening),
        )
        after_release = (built,)
    else:
        release = study.path(study.release)
    corpora: dict[str, tuple[str, tuple[str, ...]]] = {"real": (release, after_release)}  # name -> path, job
    own: dict[str, tuple[str, ...]] = {}  # a participant's corpus -> the files its jobs read
    for name in study.corpora:
        source, statement = study.corpus(name)
        corpora[name] = (source, after_release)
        own[name] = tuple(f for f in (source, statement) if f and Path(f).is_absolute())
    for gen in study.generators:
        folder, corpus = out / "generators" / gen.name, out / "synthetic" / gen.name
        opts = {"release": release, "output_dir": folder, "epsilon": gen.epsilon, **gen.options}
        trained = g.add(
            "train-generator",
            gen.name,
            ["train-generator"],
            folder,
            folder / "privacy.json",
            after_release,
            gen.config,
            opts,
        )
        opts = {"generator": folder, "output_dir": corpus, **study.synthesis}
        made = g.add(
            "synthesize", gen.name, ["synthesize"], corpus, corpus / "README.md", (trained,), options=opts
        )
        corpora[gen.name] = (str(corpus), (made,))
        g.jobs[-1] = _with_recipe(g.jobs[-1], {**g.jobs[-2].recipe, **study.synthesis})  # generator's model
    baselines = [("pe", s) for s in study.pe] + [("private-prediction", s) for s in study.private_prediction]
    for kind, section in baselines:  # the training-free families: one command each, from the release
        corpus = out / "synthetic" / section.name
        opts = {"release": release, "output_dir": corpus, **section.options}
        made = g.add(
            kind, section.name, [kind], corpus, corpus / "README.md", after_release, section.config, opts
        )
        corpora[section.name] = (str(corpus), (made,))
    runs: dict[tuple[str, str, int], Path] = {}
    for ev in study.evaluators:
        for name in ev.corpora or ["none", *corpora]:
            path, made = corpora.get(name, (None, after_release))
            for seed in study.seeds:
                run = out / "runs" / ev.name / f"{name}-seed{seed}"
                statement = study.corpus(name)[1] if name in own else None
                opts = {
                    "release": release,
                    "output_dir": run,
                    "seed": seed,
                    "corpus": path if name not in ("none", "real") else None,
                    "corpus_privacy": statement,
                    **ev.options,
                }
                if name == "none":  # scored as it is: no training options
                    unused = ("eval_steps", "save_steps", "replay_corpus")
                    opts = {k: v for k, v in opts.items() if k not in unused}
                    opts["steps"] = 0
                g.add(
                    "evaluate",
                    f"{ev.name}/{name}-seed{seed}",
                    ["evaluate"],
                    run,
                    run / "results.json",
                    made,
                    ev.config,
                    opts,
                    reads=own.get(name, ()),
                )
                runs[ev.name, name, seed] = run
    mauve: dict[str, Path] = {}  # corpus -> its MAUVE file
    if study.mauve is not None:
        for name, (path, made) in corpora.items():
            if name == "real":
                continue
            file = mauve[name] = out / "mauve" / f"{name}.json"
            opts = {
                "candidate": path,
                "reference": release,
                "model": study.path(study.mauve.model),
                "output": file,
                **study.mauve.options,
            }
            if len(mauve) > 1:  # the real corpus's disjoint halves (the ceiling): once, in the first file
                opts.setdefault("with_reference", False)
            g.add("mauve", name, ["mauve"], file, file, made, options=opts, reads=own.get(name, ())[:1])
    probed: dict[str, Path] = {}  # generator -> its memorisation probe's file
    for name in study.memorization.generators if study.memorization else ():
        file = probed[name] = out / "memorization" / f"{name}.json"
        opts = {
            "model": out / "generators" / name,
            "release": release,
            "output": file,
            **study.memorization.options,
        }
        trained = f"train-generator/{name}"
        g.add("memorization", name, ["memorization"], file, file, (trained,), options=opts)
        base = next(j.recipe for j in g.jobs if j.name == trained)  # --plan: the generator's base model
        g.jobs[-1] = _with_recipe(g.jobs[-1], {**base, **{k: v for k, v in opts.items() if k != "model"}})
    for audit in study.audit:
        folder = out / "audit" / audit.name
        g.add(
            "audit",
            audit.name,
            ["audit"],
            folder,
            folder / "audit.json",
            after_release,
            options={"output_dir": folder, **audit.options},
        )
    compared: list[Path] = []
    for a, b in study.compare:
        for ev in study.evaluators:
            for seed in study.seeds:
                if (ev.name, a, seed) in runs and (ev.name, b, seed) in runs:
                    file = out / "compare" / f"{ev.name}-{a}-vs-{b}-seed{seed}.json"
                    pair = (runs[ev.name, a, seed], runs[ev.name, b, seed])
                    needs = tuple(f"evaluate/{ev.name}/{c}-seed{seed}" for c in (a, b))
                    what = f"{ev.name}/{a}-vs-{b}-seed{seed}"
                    line = ["compare", *map(str, pair), "--json"]
                    g.add("compare", what, line, file, file, needs, stdout=file)
                    compared.append(file)
    if study.report and runs:
        spec = study.report if isinstance(study.report, Report) else Report()
        _report(g, spec, runs, mauve, compared, probed)
        _proxies(g, study, release, [n for n in corpora if n not in ("real", *own)], runs)
    return g.jobs


def _proxies(g: _Graph, study: Study, release: str, synthetic: list[str], runs: dict) -> None:
    """The proxy table (``report/proxies.txt``): QA against MAUVE, validation loss, FID and leakage, for
    the first evaluator that scored at least three of the corpora the study made (``synthetic``)."""
    from continuousbench.diagnostics.proxies import MIN_CORPORA

    for ev in study.evaluators:
        scored = {name for e, name, _ in runs if e == ev.name and name in synthetic}
        if len(scored) >= MIN_CORPORA:
            break
    else:
        return
    folder = g.out / "report"
    options = {
        "study": g.out,
        "evaluator": ev.name,
        "release": release,
        "output": folder / "proxies.json",
        "plot": folder / "proxies.png",
        "overwrite": True,
    }
    if study.mauve is not None:  # FID in the MAUVE featuriser's space
        options["model"] = study.path(study.mauve.model)
    after = [j.name for j in g.jobs if j.kind in ("train-generator", "evaluate", "mauve", "report")]
    text = folder / "proxies.txt"
    g.add("proxies", "all", ["proxies"], folder / "proxies.json", text, after, options=options, stdout=text)
    corpus_kinds = ("synthesize", "pe", "private-prediction")
    made = {j.name.split("/", 1)[1]: j.recipe for j in g.jobs if j.kind in corpus_kinds}
    per_side = options.get("n_samples", 500)  # --plan: the texts its FID embeds, each corpus's and the real
    texts = per_side + sum(min(per_side, int(made[n].get("num_samples", per_side))) for n in scored)
    if study.mauve is not None:  # each corpus's MAUVE job measured its FID in the same featuriser's space
        texts = 0
    g.jobs[-1] = _with_recipe(g.jobs[-1], {**g.jobs[-1].recipe, "texts": texts})


def _report(
    g: _Graph,
    spec: Report,
    runs: dict[tuple[str, str, int], Path],
    mauve: dict[str, Path],
    compared: list[Path],
    probed: dict[str, Path],
) -> None:
    """The report job: every run (or the rows of ``spec``) with MAUVE, comparisons and findings. Its
    printed table is kept in ``report/report.txt``, written last (the job's done marker)."""
    seeds = sorted({seed for _, _, seed in runs})
    if spec.rows:
        rows = {
            (name if len(seeds) == 1 else f"{name}-seed{seed}"): (*key.split("/", 1), seed)
            for name, key in spec.rows.items()
            for seed in seeds
        }
    else:
        several = len({ev for ev, _, _ in runs}) > 1
        rows = {(f"{k[0]}/{run.name}" if several else run.name): k for k, run in runs.items()}
    dp_models = {j.out for j in g.jobs if j.kind == "evaluate" and j.recipe.get("epsilon") is not None}
    scored = []  # a DP model's row has no MAUVE: its corpus is the real one, not DP data
    for name, (ev, corpus, seed) in rows.items():
        file = mauve.get(corpus) or (next(iter(mauve.values()), None) if corpus == "real" else None)
        if file is not None and runs[ev, corpus, seed] not in dp_models:
            scored.append(f"{name}={file}")
    folder = g.out / "report"
    line = ["report", *(f"{name}={runs[k]}" for name, k in rows.items())]
    options = {
        "mauve": scored or None,
        "compare": compared or None,
        "json": folder / "results.json",
        "plot": folder / "results.png",
        "overwrite": True,
        "memorization": [f"{name}={file}" for name, file in probed.items()] or None,
    }
    if spec.findings:
        options |= {
            "findings": folder / "findings.json",
            "finding_rows": [f"{role}={name}" for role, name in spec.findings.items()],
        }
    after = [j.name for j in g.jobs if j.kind in ("evaluate", "mauve", "compare", "memorization")]
    text = folder / "report.txt"
    g.add("report", "all", line, folder, text, after, options=options, stdout=text)


def _with_recipe(job: Job, recipe: dict[str, Any]) -> Job:
    from dataclasses import replace

    return replace(job, recipe=recipe)


def screening_recipe(track: str, size: str, models) -> dict:
    """What the plan prices of a build's closed-book screening: its first model and its answers."""
    from continuousbench.geminon.closed_book import screening_answers

    if isinstance(models, str):
        models = [models]
    model, questions = screening_answers(track, size, list(models or ()))
    return {"model": model, "questions": questions} if model and questions else {}


def screening_gpus(screening: dict) -> int:
    """A build screening with a Hub model (Gemma) runs it on the job's GPU; the demo's base, on a CPU."""
    from continuousbench.geminon.closed_book import DEMO_BASE, model_path

    return int(bool(screening) and screening["model"] != model_path(DEMO_BASE))
