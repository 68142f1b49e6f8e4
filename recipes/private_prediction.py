"""A private-prediction corpus (Amin et al. 2024) from a private corpus and a base model, without training.

    accelerate launch --num_processes 1 recipes/private_prediction.py \
        --config recipes/configs/private-prediction-geminon.yaml --release geminon-small-2026q1 \
        --model google/gemma-3-1b-pt --epsilon 10 --output_dir runs/pp-geminon-eps10

Same parser and ``main`` as ``continuousbench private-prediction``.
"""

from continuousbench.dp.prediction_command import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
