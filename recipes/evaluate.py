"""Train the fixed evaluator on a candidate corpus and score a release's QA (paper §2.2, App. I.1, I.3).

    accelerate launch --config_file recipes/accelerate_configs/single_gpu.yaml recipes/evaluate.py \
        --config recipes/configs/geminon-1b-lora.yaml \
        --release geminon-small-2026q1 --corpus runs/syn-eps10 --output_dir runs/eval-eps10

Same parser and ``main`` as ``continuousbench evaluate`` (``continuousbench.harness.run``); see
``recipes/README.md`` for the no-training baseline, resuming and pushing to the Hub.
"""

from continuousbench.harness.run import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
