"""Arguments of the tiny DP runs the DP tests share, the walk that finds a private statistic in a
published folder, and a command's one error line (a module, not conftest: conftest names clash across
test folders)."""

import json
from pathlib import Path

# A DP run of seconds: 4 steps of expected batch 8 (Poisson: exact accounting in seconds), LoRA rank 4.
DP_ARGS = [
    "--lora_r", "4", "--steps", "4", "--max_length", "48", "--eval_steps", "2", "--save_steps", "2",
    "--learning_rate", "1e-3", "--seed", "0", "--epsilon", "10", "--sampling", "poisson",
    "--expected_batch_size", "8", "--micro_batch_size", "4", "--logging_steps", "1",
]  # fmt: skip
# The same DP run training a soft prompt of 4 virtual tokens instead of LoRA adapters.
PROMPT_ARGS = [*DP_ARGS[2:], "--tuning", "prompt", "--num_virtual_tokens", "4"]
NONPRIVATE_ARGS = [
    "--lora_r", "4", "--steps", "4", "--max_length", "48", "--eval_steps", "2", "--save_steps", "2",
    "--learning_rate", "1e-3", "--seed", "0", "--per_device_train_batch_size", "4", "--samples_per_step", "4",
    "--disable_tqdm", "true",
]  # fmt: skip


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
