"""The fixed harness: a recipe YAML read as a self-contained file, its settings' digest, and whether a
run used one of the benchmark's canonical recipes.

A recipe names everything it needs (base model, replay corpus) by paths relative to the YAML itself, so
that its own usage line runs from any folder with no extra flag. The *settings* of a run are exactly what
changes the mathematics of its training and evaluation once the release and the candidate corpus are
fixed: model and tuning, the replay mixture, the trainer's schedule and checkpoint selection, the DP
mechanism (delta, sampling, the batch cap of truncated Poisson sampling, which sets q and sigma), the
generation budget and the QA limits. Left out: choices with the same mathematics (per-device batch and
accumulation, processes, micro-batches, bf16 autocast, QA batch size, the clipping algorithm - ghost or
per-sample -, the noise sampler's implementation), the seed (a replicate) and a DP run's epsilon (the
budget axis the leaderboard filters by). A local base model or replay corpus is named by its contents
(sha256 of the model's config, weights and tokenizer files; of the corpus's files), not by its path, so a
recipe copied beside another ``base/`` folder is another recipe; a Hub id is named as given.

The digest of the settings (:func:`continuousbench.results.canonical.digest`, the one recipe digest) is
the recipe's identity; a run is *canonical* when it is a current entry of the published list
(``continuousbench/results/canonical_recipes.json``: the evaluator recipes shipped in
``recipes/configs``, by name, with every earlier digest and its dates), whatever the file it was read
from. An option changed on the command line makes a different, non-canonical recipe.

    python -m continuousbench.harness.recipe recipes/configs/*.yaml            # print the digests
    python -m continuousbench.harness.recipe --update recipes/configs/*.yaml   # publish changed ones
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench.errors import UserError
from continuousbench.files import sha256_file, write_text
from continuousbench.results.canonical import LIST_FILE, current, digest, published
from continuousbench.training.arguments import MIX_RATIO, REPLAY_FRACTION, HarnessArguments, ModelArguments
from continuousbench.training.identity import content_digest
from continuousbench.training.options import DP_KEYS

if TYPE_CHECKING:
    from continuousbench.training.config import EvaluatorConfig

# The trainer options results.json lists (DP runs: the DP loop's own); both begin with the optimizer's.
_OPTIMIZER_KEYS = (
    "learning_rate",
    "adam_beta1",
    "adam_beta2",
    "weight_decay",
    "lr_scheduler_type",
    "warmup_steps",
    "max_steps",
)
TRAINING_KEYS = (
    *_OPTIMIZER_KEYS,
    "samples_per_step",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "max_length",
    "packing",
    "packing_strategy",
    "bf16",
    "eval_steps",
    "save_steps",
    "seed",
)
DP_TRAINING_KEYS = (*_OPTIMIZER_KEYS, "max_length", "bf16", "eval_steps", "save_steps", "seed", *DP_KEYS)
# Not part of a recipe: memory and speed only, a replicate's seed, a DP run's budget.


def dataclasses_() -> tuple[type, ...]:
    """The evaluator's three argument groups; the trainer's (``EvaluatorConfig``) imports torch, so it is
    loaded when a run parses, not for ``--help``."""
    from continuousbench.training.config import EvaluatorConfig

    return HarnessArguments, ModelArguments, EvaluatorConfig


HARDWARE = {
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "bf16",
    "micro_batch_size",
    "clipping",
    "secure_noise",
    "seed",
    "insecure_noise_seed",
    "epsilon",
}
MODEL_KEYS = ("model", "tuning", "lora_r", "lora_alpha", "lora_targets", "dtype", "attn_implementation")
HARNESS_KEYS = (
    "track",
    "replay_corpus",
    "replay_fraction",
    "max_document_blocks",
    "qa_eval_limit",
    "qa_test_limit",
    "max_new_tokens",
)
PATH_KEYS = ("model", "replay_corpus")  # options a recipe may name relative to itself


def rebase(h: HarnessArguments, m: ModelArguments, path: str | None) -> None:
    """Paths the recipe YAML names (model, replay corpus) read relative to the YAML, as they were
    written there; a value given on the command line, or a Hub id, is left as it is."""
    if path is None:
        return
    from continuousbench.strict_yaml import load_yaml

    file = Path(path).expanduser().resolve()  # a recipe linked into recipes/configs: its real folder
    written = load_yaml(file.read_text(encoding="utf-8"), f"--config {path}") or {}
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
    if h.mix_ratio is not None and not h.mix_corpus:
        raise UserError(
            f"--mix_ratio {h.mix_ratio} is set but no --mix_corpus is given: nothing would be mixed in; pass "
            "--mix_corpus <general corpus> or drop --mix_ratio"
        )
    if h.mix_corpus and h.mix_ratio is None:
        h.mix_ratio = MIX_RATIO


def _named(value: str | None, key: str) -> str | None:
    """A local model or replay corpus by its contents (``sha256:<hex>``); a Hub id as given."""
    if value is None or not Path(value).expanduser().exists():
        return value
    return "sha256:" + content_digest(value, model=key == "model")


def settings(h: HarnessArguments, m: ModelArguments, t: EvaluatorConfig, path: str | None) -> dict:
    """What the recipe sets, as a run applied it (see the module docstring for what is left out)."""
    out: dict[str, Any] = {"dp": t.private}  # every value is a JSON scalar
    for group, keys in ((m, MODEL_KEYS), (h, HARNESS_KEYS)):
        for key in keys:
            value = getattr(group, key)
            out[key] = _named(value, key) if key in PATH_KEYS else value
    for key in DP_TRAINING_KEYS if t.private else TRAINING_KEYS:
        if key not in HARDWARE:
            out[key] = getattr(t, key)
    if out.get("sampling") == "poisson":  # the batch cap only exists (and sets q and sigma) when truncating
        out.pop("physical_batch_size", None)
    # 50 in a YAML and --eval_steps 50 (a float) are the same setting
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in out.items()}


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
    names = {v: k for k, v in current().items()}
    out = {
        "given": path,
        "path": None,
        "file_sha256": None,
        "sha256": sha,
        "name": names.get(sha),
        "canonical": sha in names,
        "settings": values,
        "why_not_canonical": None,
    }
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
    if digest(own) not in current().values():
        return f"{Path(path).name} is not one of the canonical recipes (recipes/configs)"
    changed = [k for k in sorted(own) if own[k] != values.get(k)]
    shown = ", ".join(f"{k} {own[k]} -> {values.get(k)}" for k in changed[:4])
    return f"changed on the command line: {shown}"


def evaluator_recipes(paths: list[str]) -> dict[str, str]:
    """name -> digest of each evaluator recipe among ``paths`` (generator and PE recipes are skipped)."""
    from continuousbench.commands import run

    found = {}
    for path in paths:
        name = Path(path).stem
        if not (name.startswith(("generator-", "private-evolution")) or name.endswith("-generator")):
            found[name] = digest(run(lambda path=path: file_settings(path)))
    return found


def updated_list(found: dict[str, str], today: str) -> list[dict]:
    """The published list with ``found`` canonical from ``today``: a recipe whose digest changed gets a
    new entry and its old one is closed (``until``); nothing is ever removed."""
    entries = [dict(e) for e in published()]
    for name, sha in sorted(found.items()):
        if current().get(name) == sha:
            continue
        for e in entries:
            if e["name"] == name and e["until"] is None:
                e["until"] = today
        entries.append({"name": name, "sha256": sha, "since": today, "until": None})
    return entries


def main(argv: list[str]) -> None:
    """Print ``name: digest`` of each evaluator recipe; ``--update``: write the changed ones into the
    published list (:data:`continuousbench.results.canonical.LIST_FILE`)."""
    update = "--update" in argv
    found = evaluator_recipes([a for a in argv if a != "--update"])
    for name, sha in found.items():
        print(f"{name}: {sha}" + ("" if current().get(name) == sha else "  (not the published digest)"))
    if update:
        text = json.loads(LIST_FILE.read_text(encoding="utf-8"))
        text["recipes"] = updated_list(found, date.today().isoformat())
        write_text(LIST_FILE, json.dumps(text, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
