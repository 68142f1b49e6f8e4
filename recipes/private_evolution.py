"""A Private Evolution corpus (Aug-PE, paper App. D.3) from a private corpus, an API model and an embedder.

    accelerate launch --num_processes 1 recipes/private_evolution.py \
        --config recipes/configs/private-evolution-geminon.yaml --release geminon-small-2026q1 \
        --api transformers:/models/gemma-3-1b-pt --embedding_model /models/sentence-t5-base \
        --output_dir runs/pe-geminon-eps10

Same parser and ``main`` as ``continuousbench pe``.
"""

from continuousbench.dp.pe_command import cli, main, make_parser  # noqa: F401  (re-exported for tools)

if __name__ == "__main__":
    cli()
