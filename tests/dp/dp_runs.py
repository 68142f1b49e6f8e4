"""Arguments of the tiny DP runs the DP tests share, the walk that finds a private statistic in a
published folder, and a command's one error line (a module, not conftest: conftest names clash across
test folders)."""

import json
import shlex
from pathlib import Path

# What the tiny runs share: 4 steps, LoRA rank 4 (PROMPT_ARGS drops the rank: DP_ARGS's first two words).
_TINY = "--lora_r 4 --steps 4 --max_length 48 --eval_steps 2 --save_steps 2 --learning_rate 1e-3 --seed 0"
# A DP run of seconds: 4 steps of expected batch 8 (Poisson: exact accounting in seconds), LoRA rank 4.
DP_ARGS = shlex.split(
    f"{_TINY} --epsilon 10 --sampling poisson --expected_batch_size 8 --micro_batch_size 4 --logging_steps 1"
)
# A few records from a tiny generator, in batches of 3 (synthesize's options, after --generator).
SYNTHESIS_ARGS = ["--num_samples", "6", "--max_new_tokens", "12", "--batch_size", "3"]
# The same DP run training a soft prompt of 4 virtual tokens instead of LoRA adapters.
PROMPT_ARGS = [*DP_ARGS[2:], "--tuning", "prompt", "--num_virtual_tokens", "4"]
NONPRIVATE_ARGS = shlex.split(
    f"{_TINY} --per_device_train_batch_size 4 --samples_per_step 4 --disable_tqdm true"
)


def noiseless(model, params, expected_batch_size: int, **options):
    """DP-SGD's components around plain SGD (learning rate 1) with no noise: a step subtracts the clipped
    mean gradient (the tests compare it with one they compute)."""
    import torch

    from continuousbench.dp import dpsgd

    return dpsgd.make_private(
        model,
        torch.optim.SGD(params, lr=1.0),
        noise_multiplier=0.0,
        expected_batch_size=expected_batch_size,
        generator=torch.Generator(),
        **options,
    )


def renderings(x: float) -> set[str]:
    return {repr(x), f"{x:.6f}", f"{x:.5f}", f"{x:.8g}", json.dumps(x)}


def walk_for_private_statistics(folder: Path, stats: list[float], secrets: list[str]) -> list[str]:
    """Every (file, rendering) of a raw training statistic or secret found in ``folder``."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for needle in {r for x in stats for r in renderings(x)} | set(secrets):
            if needle.encode() in data:
                found.append(f"{path.relative_to(folder)}: {needle}")
    return found


def one_line_error(invoke, command: str, argv: list[str]) -> str:
    """``continuousbench <command> <argv>`` fails with exit status 2 and one error line (progress bars
    aside); returns that line."""
    result = invoke([command, *argv])
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]
