"""The Hub model card of an evaluator run (``model-index`` results) and the optional upload.

An evaluator trained with DP-SGD (``evaluate --epsilon``) is labelled a DP *model* - tags, first
sentence and the privacy statement - so that it is never taken for a model trained on DP data."""

from __future__ import annotations

from pathlib import Path

from continuousbench.hub import hub_repo_id
from continuousbench.release.layout import QA_PARTS

METRIC_NAMES = {"exact_match": "Exact match", "contains": "Contains", "llm_match": "LLM match"}


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def judge_lines(judge: dict | None) -> str:
    """The card's account of the LLM-match judge: who, its calibration, and how much code decided."""
    if not judge:
        return ""
    from continuousbench.scoring.judge import label

    c = judge["calibration"]
    text = (
        f"\nLLM match judged by {label(judge)}: calibration accuracy {_pct(c['accuracy'])}%, false "
        f"accepts {_pct(c['false_accept'])}%, false rejects {_pct(c['false_reject'])}% on {c['cases']} cases."
    )
    if c["override"]:
        text += " **It failed calibration and was used anyway (`--judge_override_calibration`).**"
    decided = judge["decided"].get("qa_public")
    if decided:
        code = decided["empty"] + decided["exact"] + decided["numeric"]
        total = code + decided["judge"]
        text += f" On qa_public, code decided {code} of {total} verdicts (empty, exact, numeric)."
    return text + "\n"


def _data_statement(corpus: dict) -> str:
    """What the corpus promised: a DP data run names the generator's epsilon and delta and where its
    statement is; other corpora say they carry no guarantee."""
    privacy = corpus.get("privacy")
    source = corpus["source"]
    given = (corpus.get("privacy_source") or "").removeprefix("--corpus_privacy ")
    where = (
        f"the statement `{Path(given).name}` given with `--corpus_privacy`"
        if given.startswith("/")
        else f"[the generator's statement](https://huggingface.co/datasets/{hub_repo_id(source)})"
        if hub_repo_id(source)
        else f"the generator's statement (`privacy.json` / `README.md` of the corpus `{Path(source).name}`)"
    )
    if privacy and privacy.get("private") and privacy.get("epsilon") is not None:
        delta = privacy.get("delta")
        return (
            f"\n**Trained on DP synthetic data**: the corpus was generated with differential privacy "
            f"(epsilon {privacy['epsilon']:.4g}, delta {delta if delta is None else format(delta, '.3g')}) "
            f"per {privacy.get('unit', 'record')}; see {where}. The guarantee is the generator's: this "
            "model adds none and may be shared as the corpus may.\n"
        )
    if privacy is not None:
        return "\nThe corpus carries **no differential-privacy guarantee** (non-private synthetic data).\n"
    return "\nThe corpus states no privacy guarantee.\n"


def model_card(results: dict, model_name: str):
    """A ``huggingface_hub.ModelCard``: one ``EvalResult`` per part x metric, and a short body."""
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    release = results["release"]["id"]
    evals = [
        EvalResult(
            task_type="question-answering",
            task_name="Few-shot closed-book QA",
            dataset_type=release,
            dataset_name=release,
            dataset_config=part,
            dataset_split="test",
            metric_type=name,
            metric_name=METRIC_NAMES.get(name, name),
            metric_value=round(100 * m["accuracy"], 2) if m["accuracy"] is not None else None,
        )
        for part in QA_PARTS
        if part in results["metrics"]
        for name, m in results["metrics"][part]["metrics"].items()
    ]
    privacy = results.get("model_privacy")
    tags = ["continuousbench", "continued-pretraining", results["tuning"]]
    if privacy:
        tags += ["differential-privacy", "dp-sgd", "opacus", "dp-model"]
    if not privacy and (results["corpus"].get("privacy") or {}).get("private"):
        tags += ["differential-privacy", "dp-synthetic-data"]
    base = (
        hub_repo_id(results["base_model"])
        if results.get("base_model_revision") or not Path(results["base_model"]).is_absolute()
        else None
    )
    published = hub_repo_id(results["release"].get("given"))
    data = ModelCardData(
        model_name=model_name,
        base_model=base,  # a Hub id only when the model came from the Hub; a local path fails its check
        datasets=[published] if published else None,
        license="other",
        license_name="base-model-license",
        license_link=f"https://huggingface.co/{base}" if base else None,
        library_name="peft" if results["tuning"] == "lora" else "transformers",
        tags=tags,
        eval_results=evals,
    )
    rows = "\n".join(
        f"| {part} | {results['metrics'][part]['n']} | "
        + " | ".join(
            _pct(results["metrics"][part]["metrics"].get(k, {}).get("accuracy")) for k in METRIC_NAMES
        )
        + " |"
        for part in QA_PARTS
        if part in results["metrics"]
    )
    selected = results["selected_checkpoint"]
    corpus = results["corpus"]
    if privacy:
        trained = (
            f"trained with **DP-SGD** (epsilon {privacy['epsilon']:.4g}, delta {privacy['delta']:.3g}) by "
            f"the ContinuousBench harness directly on the corpus `{corpus['source']}` ({corpus['documents']} "
            "documents): a **DP model, not DP data** (the direct DP fine-tuning diagnostic, paper App. E)"
        )
    else:
        trained = (
            f"continued-pretrained ({results['tuning']}) by the ContinuousBench harness on a candidate "
            f"corpus (sha256 `{corpus['fingerprint'][:16]}...`, {corpus['documents']} documents)"
        )
    statement = f"\n{privacy['statement']}" if privacy else _data_statement(corpus)
    origin = (
        f"[`{base}`](https://huggingface.co/{base})"
        if base
        else f"`{Path(results['base_model']).name}` (a local model: `{results['base_model']}`)"
    )
    where = f"[`{published}`](https://huggingface.co/datasets/{published})" if published else f"`{release}`"
    judged = judge_lines(results.get("judge"))
    body = f"""
# {model_name}

{origin} {trained}
for {results["steps"]} steps, then scored on the few-shot QA of release {where}.
License: the base model's license applies to these weights.

Selected checkpoint: `{selected["name"]}` (validation contains {_pct(selected["validation_contains"])}%).

| part | questions | exact match % | contains % | LLM match % |
| --- | ---: | ---: | ---: | ---: |
{rows}
{judged}
Recipe values, corpus identity and package version ({results["package_version"]}) are in `results.json`.
{statement}"""
    return ModelCard(f"---\n{data.to_yaml()}\n---\n{body}")


def push_run(model_dir: Path, repo_id: str, *, token: str | None = None, private: bool | None = None) -> str:
    """Upload the selected model folder (weights or adapter, tokenizer, README.md card) to a Hub model repo.

    The token comes from ``token`` or the environment (``HF_TOKEN``) and is never printed.
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    info = api.upload_folder(
        folder_path=str(model_dir),
        repo_id=repo_id,
        repo_type="model",
        commit_message="ContinuousBench evaluator",
    )
    return str(getattr(info, "commit_url", info))
