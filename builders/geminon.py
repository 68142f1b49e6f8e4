"""Build a Geminon release (world, corpus, QA, support counts) as a Hugging Face dataset folder.

Usage:
    python builders/geminon.py --config builders/configs/geminon-small.yaml
    python builders/geminon.py --config builders/configs/geminon-tiny.yaml --seed 1 --out /tmp/cb --overwrite

Same dataclass, parser and ``main`` as ``continuousbench build geminon`` (defaults < YAML < command line;
unknown keys are an error).
"""

from continuousbench.geminon.command import GeminonBuildArguments, cli, main, make_parser  # noqa: F401

if __name__ == "__main__":
    cli()
