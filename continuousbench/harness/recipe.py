"""The fixed harness: a recipe YAML read as a self-contained file, its settings' digest, and whether a
run used one of the benchmark's canonical recipes.

A recipe names everything it needs (base model, replay corpus) by paths relative to the YAML itself, so
that its own usage line runs from any folder with no extra flag. The *settings* of a run are what
decides its scores once the release and the candidate corpus are fixed: model and tuning, the replay
mixture, the trainer's schedule and checkpoint selection, the generation budget and the QA limits.
Hardware knobs (per-device batch and accumulation, processes, bf16 autocast, QA batch size) are left
out, as are the seed (a replicate) and a DP run's epsilon (the budget axis the leaderboard filters by).
The sha256 of the settings is the recipe's digest; a run is *canonical* when its digest is one of
:data:`CANONICAL` (the evaluator recipes shipped in ``recipes/configs``, by name), whatever the file it
was read from. An option changed on the command line makes a different, non-canonical recipe.

    python -m continuousbench.harness.recipe recipes/configs/*.yaml   # print the digests (the table below)
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench.errors import UserError
from continuousbench.files import sha256_file
from continuousbench.training.arguments import REPLAY_FRACTION, HarnessArguments, ModelArguments
from continuousbench.training.options import DP_KEYS

if TYPE_CHECKING:
    from continuousbench.training.config import EvaluatorConfig

# The trainer options results.json lists (DP runs: the DP loop's own).
TRAINING_KEYS = (
    "learning_rate", "adam_beta1", "adam_beta2", "weight_decay", "lr_scheduler_type", "warmup_steps",
    "max_steps", "samples_per_step", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_length", "packing", "packing_strategy", "bf16", "eval_steps", "save_steps", "seed",
)  # fmt: skip
DP_TRAINING_KEYS = (
    "learning_rate", "adam_beta1", "adam_beta2", "weight_decay", "lr_scheduler_type", "warmup_steps",
    "max_steps", "max_length", "bf16", "eval_steps", "save_steps", "seed", *DP_KEYS,
)  # fmt: skip
# Not part of a recipe: memory and speed only, a replicate's seed, a DP run's budget.


def dataclasses_() -> tuple[type, ...]:
    """The evaluator's three argument groups; the trainer's (``EvaluatorConfig``) imports torch, so it is
    loaded when a run parses, not for ``--help``."""
    from continuousbench.training.config import EvaluatorConfig

    return HarnessArguments, ModelArguments, EvaluatorConfig


HARDWARE = {
    "per_device_train_batch_size", "gradient_accumulation_steps", "bf16", "physical_batch_size",
    "micro_batch_size", "seed", "insecure_noise_seed", "epsilon",
}  # fmt: skip
MODEL_KEYS = ("model", "tuning", "lora_r", "lora_alpha", "lora_targets", "dtype", "attn_implementation")
HARNESS_KEYS = (
    "track", "replay_corpus", "replay_fraction", "max_document_blocks", "qa_eval_limit", "qa_test_limit",
    "max_new_tokens",
)  # fmt: skip
PATH_KEYS = ("model", "replay_corpus")  # options a recipe may name relative to itself

# The canonical evaluator recipes: name (the file in recipes/configs) -> digest of its settings.
# Regenerate with the command in the module docstring when a recipe changes on purpose.
CANONICAL = {
    "dp-direct-geminon-1b": "34cf52215e4a6a5e82d0cfd1f66995c57935c1ca98e5b9c7b07f9858616d3718",
    "dp-direct-geminon-4b": "23b7ec5c495283e8f8de8f9e628664a4b169b83ec18bd99607bac639385f88d8",
    "dp-direct-news-1b": "1ff82f4b1c91b717f7aeba390c2b57cfac627d099adc4320fae629280e7b22b8",
    "dp-direct-news-4b": "da503d6812559bcbd0ab3129a7e6cdc229710416b7b9d1ef9759aad55e31d60d",
    "geminon-1b-full": "2775e6269b962bf545e575592491966c0276eca403178556e124b87a0cff9cd2",
    "geminon-1b-lora": "f9823b3ec13e0927b59da2b291963fed9abacb1a404e80d605636ced4a8388a6",
    "geminon-4b-full": "d39c524a3fd10be866b58deba3a9a60f108f094aae4ae0c884b33799a842c14a",
    "geminon-4b-lora": "1cc2755c2e768a82e66fac87333a1d23a9b0f420a5678be5fe6a2f2c960185ab",
    "geminon-tiny-demo-dp-direct": "7169af85545ea0722cf720adc2ee422a4c0d7d333761bcf051454cb6192364b4",
    "geminon-tiny-demo": "27f6988c4a543be0dcc39de75513483b312a0de58e1fab5c8f4e87eeb8dbd7b6",
    "news-1b-full": "b36ff27dd0e16358d3b67d10aa248f67955cf0dc63f48e2b289f5ef5422214de",
    "news-1b-lora": "430cc3191d237744f3e059672f257c705e27a428c672f8556957057ba09177a9",
    "news-4b-full": "d71bf0e1d7e9d63415ef878f67016607d28c7e1fe2430114a66aa662623bb8f0",
    "news-4b-lora": "9a6b24e8cc3e1247e6eb1c56020201b67dcfec409d192c4b46963248a56f80f2",
}


def rebase(h: HarnessArguments, m: ModelArguments, path: str | None) -> None:
    """Paths the recipe YAML names (model, replay corpus) read relative to the YAML, as they were
    written there; a value given on the command line, or a Hub id, is left as it is."""
    if path is None:
        return
    import yaml

    file = Path(path).expanduser().resolve()  # a recipe linked into recipes/configs: its real folder
    written = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    for group in (h, m):
        for key in PATH_KEYS:
            value = getattr(group, key, None)
            if not isinstance(value, str) or written.get(key) != value or Path(value).is_absolute():
                continue
            beside = file.parent / value
            if beside.exists():
                setattr(group, key, str(beside))


def check(h: HarnessArguments) -> None:
    """A recipe option that needs a missing input is refused; a replay corpus without a share gets
    the default share."""
    if h.replay_fraction is not None and not h.replay_corpus:
        raise UserError(
            f"replay_fraction {h.replay_fraction} is set but no replay corpus is given; name it in the "
            "recipe (replay_corpus: <path relative to the YAML>) or pass --replay_corpus, or drop "
            "replay_fraction"
        )
    if h.replay_corpus and h.replay_fraction is None:
        h.replay_fraction = REPLAY_FRACTION


def _where(value: str | None, base: Path | None) -> str | None:
    """A local path relative to the recipe's folder (absolute without a recipe); a Hub id as given."""
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.exists():
        return value
    return os.path.relpath(path.resolve(), base) if base is not None else str(path.resolve())


def settings(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig, path: str | None) -> dict:
    """What the recipe sets, as a run applied it (see the module docstring for what is left out)."""
    base = Path(path).expanduser().resolve().parent if path else None
    out: dict[str, Any] = {"dp": t.private}  # every value is a JSON scalar
    for group, keys in ((m, MODEL_KEYS), (h, HARNESS_KEYS)):
        for key in keys:
            value = getattr(group, key)
            out[key] = _where(value, base) if key in PATH_KEYS else value
    for key in DP_TRAINING_KEYS if t.private else TRAINING_KEYS:
        if key not in HARDWARE:
            out[key] = getattr(t, key)
    if t.private:  # the clipping that runs, whether named or the tuning's default
        from continuousbench.dp.dpsgd import resolve_clipping

        out["clipping"] = resolve_clipping(m.tuning, t.clipping)
    # 50 in a YAML and --eval_steps 50 (a float) are the same setting
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in out.items()}


def digest(values: dict) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode("utf-8")).hexdigest()


def _parse_alone(path: str) -> tuple:
    from continuousbench.commands import CommandParser

    h, m, t = CommandParser(dataclasses_()).parse(["--config", path, "--output_dir", os.devnull])
    rebase(h, m, path)
    return h, m, t


def file_settings(path: str) -> dict:
    """The settings of the recipe file as it is, with nothing changed on the command line."""
    return settings(*_parse_alone(path), path)


def record(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig, path: str | None) -> dict:
    """results.json ``recipe``: the file, the settings and their digest, the canonical name (or why not)."""
    values = settings(h, m, t, path)
    sha = digest(values)
    names = {v: k for k, v in CANONICAL.items()}
    out = {
        "given": path, "path": None, "file_sha256": None, "sha256": sha, "name": names.get(sha),
        "canonical": sha in names, "settings": values, "why_not_canonical": None,
    }  # fmt: skip
    if path is not None:
        file = Path(path).expanduser()
        out["path"], out["file_sha256"] = str(file.resolve()), sha256_file(file)
    if not out["canonical"]:
        out["why_not_canonical"] = why_not(values, path)
    return out


def why_not(values: dict, path: str | None) -> str:
    """One phrase: no recipe file, a file that is not canonical, or the options changed from it."""
    if path is None:
        return "no recipe file (--config)"
    own = file_settings(path)
    if digest(own) not in CANONICAL.values():
        return f"{Path(path).name} is not one of the canonical recipes (recipes/configs)"
    changed = [k for k in sorted(own) if own[k] != values.get(k)]
    shown = ", ".join(f"{k} {own[k]} -> {values.get(k)}" for k in changed[:4])
    return f"changed on the command line: {shown}"


def main(paths: list[str]) -> None:
    """Print ``name: digest`` of each evaluator recipe (generator and PE recipes are skipped)."""
    from continuousbench.commands import run

    for path in paths:
        name = Path(path).stem
        if name.startswith(("generator-", "private-evolution")) or name.endswith("-generator"):
            continue
        values = run(lambda path=path: file_settings(path))
        print(f'    "{name}": "{digest(values)}",')


if __name__ == "__main__":
    main(sys.argv[1:])
