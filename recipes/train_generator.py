"""Train a (DP) generator on a corpus.

    accelerate launch recipes/train_generator.py --config recipes/configs/generator-geminon-1b-dp.yaml \
        --release geminon-small-2026q1 --epsilon 10 --output_dir runs/gen-eps10

Same parser and ``main`` as ``continuousbench train-generator``; ``--epsilon`` unset or inf trains the
non-private generator with the evaluator recipe.
"""

from continuousbench.dp.train import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
