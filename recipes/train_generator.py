"""Train a (DP) generator on a corpus.

    continuousbench train-generator --config recipes/configs/generator-geminon-1b-dp.yaml \
        --release geminon-small-2026q1 --epsilon 10 --output_dir runs/gen-eps10
    torchrun --standalone --nproc_per_node 2 recipes/train_generator.py \
        --config recipes/configs/generator-geminon-1b.yaml --release geminon-small-2026q1 \
        --output_dir runs/gen-inf

Same parser and ``main`` as ``continuousbench train-generator``; ``--epsilon`` unset or inf trains the
non-private generator with the evaluator recipe. Under several processes (torchrun, or
``accelerate launch`` where Accelerate can start them) the work is shared and process 0 alone writes.
"""

from continuousbench.dp.train import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
