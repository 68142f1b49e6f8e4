"""The ``continuousbench`` command.

Training and evaluation subcommands forward their arguments untouched to the same dataclass parser
and ``main`` as the recipe scripts, so ``continuousbench evaluate ...`` and
``accelerate launch recipes/evaluate.py ...`` cannot drift apart.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="ContinuousBench: DP synthetic text, measured by the knowledge it carries.", no_args_is_help=True
)
metric_app = typer.Typer(help="The `evaluate` metric continuousbench/qa_match.", no_args_is_help=True)
app.add_typer(metric_app, name="metric")

FORWARD = {
    "context_settings": {"allow_extra_args": True, "ignore_unknown_options": True},
    "add_help_option": False,
}


def _forward(module: str, ctx: typer.Context) -> None:
    """Hand the raw arguments to ``<module>.cli`` (the recipe's parser and main)."""
    importlib.import_module(module).cli(list(ctx.args))


def fail(message: str) -> None:
    """One clear line on stderr, exit status 2."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(2)


@app.command()
def build(
    track: Annotated[str, typer.Argument(help="Track to build: geminon.")],
    size: Annotated[str, typer.Option(help="tiny, small or medium.")] = "tiny",
    quarter: Annotated[str, typer.Option(help="Release quarter, e.g. 2026q1.")] = "2026q1",
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Root folder (default $CONTINUOUSBENCH_HOME).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing release.")] = False,
    namer: Annotated[str, typer.Option(help="offline, or a text-generation spec for names.")] = "offline",
    realizer: Annotated[
        str, typer.Option(help="template, or a text-generation spec for prose.")
    ] = "template",
) -> None:
    """Build a release (world, corpus, QA, support counts) as a Hugging Face dataset folder."""
    if track != "geminon":
        fail(f"unknown track {track!r}: only 'geminon' can be built in this version")
    from continuousbench.geminon.build import build_release

    try:
        path = build_release(
            size=size,
            quarter=quarter,
            seed=seed,
            root=out,
            overwrite=overwrite,
            namer=namer,
            realizer=realizer,
        )
    except (ValueError, FileExistsError, FileNotFoundError) as err:
        fail(str(err))
    typer.echo(str(path))


@app.command()
def verify(release: Annotated[str, typer.Argument(help="Release id or folder.")]) -> None:
    """Check every data file of a release against its manifest checksums."""
    from continuousbench.release.load import verify_release

    try:
        manifest = verify_release(release)
    except (ValueError, FileNotFoundError) as err:
        fail(str(err))
    typer.echo(f"{manifest['id']}: {len(manifest['files'])} files verified")


@app.command("train-generator", **FORWARD)
def train_generator(ctx: typer.Context) -> None:
    """Train a (DP) generator: same parser as `accelerate launch recipes/train_generator.py`."""
    _forward("continuousbench.dp.train", ctx)


@app.command(**FORWARD)
def synthesize(ctx: typer.Context) -> None:
    """Sample a synthetic corpus: same parser as `accelerate launch recipes/synthesize.py`."""
    _forward("continuousbench.dp.synthesize", ctx)


@app.command(**FORWARD)
def evaluate(ctx: typer.Context) -> None:
    """Continue pretraining on a corpus and score QA: same parser as `recipes/evaluate.py`."""
    _forward("continuousbench.harness.run", ctx)


@app.command(**FORWARD)
def mauve(ctx: typer.Context) -> None:
    """MAUVE between a candidate corpus and the release corpus (needs the [mauve] extra)."""
    _forward("continuousbench.diagnostics.mauve", ctx)


@app.command(**FORWARD)
def report(ctx: typer.Context) -> None:
    """Tabulate and plot results.json files of several runs."""
    _forward("continuousbench.harness.report", ctx)


@app.command(**FORWARD)
def compare(ctx: typer.Context) -> None:
    """Paired comparison of two runs: difference, bootstrap interval, McNemar p."""
    _forward("continuousbench.harness.compare", ctx)


@app.command(**FORWARD)
def submit(ctx: typer.Context) -> None:
    """Add a run's validated results record to a results dataset (folder or Hub repo)."""
    _forward("continuousbench.harness.submit", ctx)


@app.command(**FORWARD)
def publish(ctx: typer.Context) -> None:
    """Publish to the Hub: `publish release <id> --repo <org/name>` (a tagged revision)."""
    _forward("continuousbench.publish", ctx)


@app.command(**FORWARD)
def demo(ctx: typer.Context) -> None:
    """The whole study in miniature, on CPU, offline."""
    _forward("continuousbench.demo", ctx)


@metric_app.command("install")
def metric_install(
    cache_dir: Annotated[
        Path | None, typer.Option(help="evaluate's module cache (default: its own).")
    ] = None,
) -> None:
    """Place the metric where `evaluate.load("continuousbench/qa_match")` resolves it offline."""
    from continuousbench.metric import install_metric

    typer.echo(str(install_metric(cache_dir)))


@metric_app.command("push")
def metric_push(
    repo_id: Annotated[str, typer.Option(help="Space id, e.g. my-org/qa_match.")],
    private: Annotated[bool, typer.Option(help="Create the Space private.")] = False,
) -> None:
    """Publish the metric module to a Hugging Face Space."""
    from continuousbench.metric import push_metric

    typer.echo(push_metric(repo_id, private=private))


def main() -> None:  # pragma: no cover - console entry for `python -m continuousbench.cli`
    app(prog_name="continuousbench")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
