"""``continuousbench submit RUN --to <folder | org/name>``: add a run's record to a results dataset.

The record is the run's ``results.json`` (validated against the results schema first) plus ``questions``: per
part, the question ids, support counts and one ``0``/``1`` per question and matcher from
``predictions.parquet``, so that the leaderboard can compare submissions question by question.
Credentials never travel: keys named like a secret are dropped, ``user:password@`` in URLs and
secret-named query parameters (``?key=...``, ``&api_key=...``) are redacted, absolute local paths keep only
their last component (``.../run``: where things lay on the submitter's disk is theirs), and a record
that still holds something shaped like an access token is refused. ``--model_repo`` names the Hub model
repo holding the run's model and card when it was pushed by hand (``evaluate --push_to_hub`` records it).

One file per run, ``<release id>/<name>-<sha256 of the record, 12 hex>.json``: content-addressed, so a
submission never replaces another's; submitting the same record twice finds it already there. A local
folder is written atomically without ever replacing a file (``os.link``); a Hub dataset repo gets one
commit (or a pull request with ``--pr``), with the token from ``HF_TOKEN`` or ``hf auth login``.

    continuousbench submit runs/dp-syn-eps10 --to ./results
    continuousbench submit runs/dp-syn-eps10 --to my-org/continuousbench-results --pr
    continuousbench submit runs/dp-syn-eps10 --to ./results --model_repo my-org/dp-syn-eps10-evaluator
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.commands import command
from continuousbench.credentials import redact
from continuousbench.errors import UserError
from continuousbench.hub import hub_repo_id
from continuousbench.results.timeline import model_key

# hub_token, api_key, password... but not max_new_tokens or tokens_per_step
_SECRET_KEY = re.compile(
    r"(^|_)(token|secret|password|passwd|api_?key|authorization|credentials?)($|_)", re.IGNORECASE
)
_TOKEN_SHAPES = re.compile(
    r"\bhf_[A-Za-z0-9]{20,}|\bsk-[A-Za-z0-9_-]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bBearer\s+\S{10,}"
)


def scrub(value: Any, where: str = "record") -> Any:
    """A copy of ``value`` without secret-named keys or URL credentials; ValueError on a token shape."""
    if isinstance(value, dict):
        return {k: scrub(v, f"{where}.{k}") for k, v in value.items() if not _SECRET_KEY.search(str(k))}
    if isinstance(value, list):
        return [scrub(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str):
        value = redact(value)
        if value.startswith(("/", "~")) and "\n" not in value:  # an absolute local path: its last part
            value = f".../{Path(value).name}"
        if _TOKEN_SHAPES.search(value):
            raise UserError(
                f"{where} holds what looks like an access token; remove it from the run's settings"
            )
    return value


def question_outcomes(run_dir: Path, record: dict) -> dict | None:
    """``questions`` of the record from the run's predictions (None when the run has none)."""
    from continuousbench.results.record import PREDICTIONS

    file = run_dir / PREDICTIONS
    if not file.is_file():
        return None
    import pandas as pd

    table = pd.read_parquet(file)
    out = {}
    for part, rows in table.groupby("part", sort=True):
        outcomes = {
            m: "".join("-" if pd.isna(v) else "1" if v else "0" for v in rows[m])
            for m in record["matchers"]
            if m in rows.columns
        }
        support = [int(c) for c in rows["support_count"]]
        out[part] = {"ids": rows["id"].astype(str).tolist(), "support_counts": support, "outcomes": outcomes}
    return out


def run_name(run_dir: str | Path) -> str:
    """``<parent>/<run>``: the run folder and the one naming its method or evaluator (a study's
    ``runs/dp-direct/real-seed0`` and ``runs/demo/real-seed0`` stay apart)."""
    folder = Path(run_dir).resolve()
    return f"{folder.parent.name}/{folder.name}" if folder.parent.name else folder.name


def build_submission(run_dir: str | Path, model_repo: str | None = None, name: str | None = None) -> dict:
    """The validated, scrubbed record of a finished run, with its per-question outcomes, what ``submit``
    found (``submitted``: name, run folder, canonical recipe, privacy statement) and, when given, the Hub
    repo of its model (``model_repo``: the leaderboard links that model's card)."""
    from continuousbench.results import schema  # pydantic: not for --help
    from continuousbench.results.canonical import standing
    from continuousbench.results.record import load

    run_dir = Path(run_dir)
    record = schema.check(load(run_dir), run_dir / "results.json")
    record = scrub({k: v for k, v in record.items() if k != "questions"})
    record["base_model"] = model_key(record["base_model"])  # as contamination keys it (results/timeline.py)
    if model_repo is not None:
        from continuousbench.hub import check_repo_id

        recorded = record.get("model_repo")
        if recorded not in (None, check_repo_id(model_repo, "--model_repo")):
            raise UserError(
                f"--model_repo {model_repo} differs from the repo the run pushed its model to ({recorded}); "
                "drop --model_repo"
            )
        # Older schemas are schema 3 without its optional keys, so the record now says 3.
        record.update(model_repo=model_repo, schema_version=schema.SCHEMA_VERSION)
    record["questions"] = question_outcomes(run_dir, record)
    record["submitted"] = {
        "name": name or run_name(run_dir),
        "run_folder": run_name(run_dir),
        "canonical": standing(record).canonical,  # recomputed, as the leaderboard does
        "privacy_statement": (record["corpus"].get("privacy") or record.get("model_privacy")) is not None,
    }
    record["schema_version"] = max(record["schema_version"], 4)  # `submitted` is schema 4's
    return schema.check(record, f"the submission of {run_dir}")


def submission_path(record: dict, name: str) -> str:
    """``<release id>/<name>-<12 hex of the record's sha256>.json`` (a classification run: under
    ``classification-<dataset>/``, apart from every release)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.") or "run"
    digest = hashlib.sha256(_dump(record)).hexdigest()[:12]
    folder = (record.get("release") or {}).get("id")
    if folder is None:  # a classification run (schema 5)
        name = Path(record["dataset"]["name"]).name.lower()
        folder = "classification-" + re.sub(r"[^a-z0-9._-]+", "-", name)
    return f"{folder}/{slug}-{digest}.json"


def _dump(record: dict) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _to_folder(data: bytes, folder: Path, relative: str) -> tuple[str, bool]:
    target = folder / relative
    if target.exists():
        if target.read_bytes() == data:
            return str(target), False
        raise FileExistsError(f"{target} exists with other content; it is never replaced")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.link(tmp, target)  # atomic, and fails rather than replace a file that appeared meanwhile
    except FileExistsError:
        raise FileExistsError(f"{target} appeared while submitting; it is never replaced") from None
    finally:
        os.remove(tmp)
    return str(target), True


def _to_hub(data: bytes, repo_id: str, relative: str, pr: bool) -> tuple[str, bool]:
    from huggingface_hub import HfApi

    from continuousbench.release.targets import hub_errors, hub_failure

    api = HfApi()
    try:
        if api.file_exists(repo_id, relative, repo_type="dataset"):
            return f"{api.endpoint}/datasets/{repo_id}/blob/main/{relative}", False
        info = api.upload_file(
            path_or_fileobj=data,
            path_in_repo=relative,
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=f"Submit {relative}",
            create_pr=pr,
        )
    except hub_errors() as err:
        raise hub_failure(err, f"submitting to dataset repo {repo_id}") from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", info)), True


@dataclass
class SubmitArguments:
    run: str | None = field(
        default=None,
        metadata={"help": "A finished run folder (results.json, predictions.parquet).", "positional": True},
    )
    to: str | None = field(
        default=None, metadata={"help": "A local results folder, or a Hub dataset repo org/name."}
    )
    name: str | None = field(
        default=None,
        metadata={"help": "Name of the submission (default: <parent>/<run> of the run folder)."},
    )
    pr: bool = field(default=False, metadata={"help": "Hub: open a pull request instead of committing."})
    model_repo: str | None = field(
        default=None,
        metadata={
            "help": "Hub model repo org/name holding the run's model and card "
            "(evaluate --push_to_hub records it itself)."
        },
    )


def main(args: SubmitArguments) -> dict:
    """Submit; return ``{"path", "added"}`` (``added`` False when the same record was already there)."""
    if args.run is None or args.to is None:
        raise UserError("continuousbench submit RUN --to <results folder | org/name>: give both")
    record = build_submission(args.run, args.model_repo, args.name)
    relative = submission_path(record, record["submitted"]["name"])
    data = _dump(record)
    if hub_repo_id(args.to):
        where, added = _to_hub(data, hub_repo_id(args.to), relative, args.pr)
    else:
        folder = Path(args.to).expanduser()
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--to {args.to} is a file: pass a results folder or a Hub dataset repo org/name")
        where, added = _to_folder(data, folder, relative)
    return {"path": where, "added": added, "notes": notes(record)}


def notes(record: dict) -> list[str]:
    """What the leaderboard will make of the record: a recipe that is not canonical, a corpus that
    states no privacy guarantee."""
    from continuousbench.results.canonical import standing

    out = []
    if not record["submitted"]["canonical"]:
        why = standing(record).why_apart
        out.append(f"not a canonical recipe ({why}): the leaderboard lists it apart from the main table")
    if not record["submitted"]["privacy_statement"]:
        out.append(
            "the corpus states no privacy guarantee: its row shows epsilon 'no statement'; put a "
            "privacy.json beside the corpus or pass evaluate --corpus_privacy <file> (docs/results-format.md)"
        )
    return out


def _report(result: dict) -> None:
    print(("submitted: " if result["added"] else "already submitted: ") + result["path"])
    for note in result["notes"]:
        print(f"note: {note}")


make_parser, cli = command(
    SubmitArguments,
    "continuousbench submit",
    __doc__.splitlines()[0],
    main,
    report=_report,
)
