"""Sample a synthetic corpus from a generator.

    accelerate launch recipes/synthesize.py --generator runs/gen-eps10 --output_dir runs/syn-eps10 \
        --num_samples 200000 --temperature 1.0

Same parser and ``main`` as ``continuousbench synthesize``.
"""

from continuousbench.dp.synthesize import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
