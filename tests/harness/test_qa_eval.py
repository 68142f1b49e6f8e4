import pytest
from datasets import load_dataset

from continuousbench.harness.qa_eval import evaluate_qa, generate_answers, references, subsample
from continuousbench.llm.local import generate_batched
from continuousbench.scoring.match import score
from continuousbench.scoring.prompts import qa_prompt

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_qa_eval")


@pytest.fixture(scope="module")
def qa(tiny_release):
    return load_dataset(str(tiny_release), "qa_public", split="validation")


@pytest.fixture(scope="module")
def qa_model(tiny_model_dir, qa, tmp_path_factory):
    """The tiny Llama after a few seconds on QA-formatted lines, so that it answers and ends lines."""
    from datasets import Dataset

    from continuousbench.training.config import EvaluatorConfig
    from continuousbench.training.modeling import load_model_and_tokenizer
    from continuousbench.training.sft import continued_pretraining

    model, tokenizer = load_model_and_tokenizer(str(tiny_model_dir), tuning="full")
    lines = [f"Q: {q}\nA: {a}\n" for q, a in zip(qa["question"], qa["answer"], strict=True)]
    args = EvaluatorConfig(
        output_dir=str(tmp_path_factory.mktemp("qa-model")),
        max_steps=80,
        per_device_train_batch_size=8,
        samples_per_step=8,
        max_length=32,
        learning_rate=3e-3,
        save_strategy="no",
        eval_strategy="no",
        load_best_model_at_end=False,
        logging_steps=10,
        disable_tqdm=True,
    )
    continued_pretraining(model, tokenizer, Dataset.from_dict({"text": lines * 4}), args)
    return model, tokenizer


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_batched_generation_equals_one_at_a_time(qa_model, qa):
    model, tokenizer = qa_model
    questions = qa["question"][:12]
    batched = generate_answers(model, tokenizer, questions, batch_size=8, max_new_tokens=16)
    single = [generate_answers(model, tokenizer, [q], batch_size=1, max_new_tokens=16)[0] for q in questions]
    assert batched == single
    assert any(batched)


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_answers_with_the_few_shot_prefix_run_once_are_those_without(qa_model, qa, monkeypatch):
    """The harness runs the shared few-shot block once a batch; its answers are the ones a full prefill
    of every prompt gives (the demo's whole evaluation was checked the same way)."""
    import continuousbench.llm.local as local

    model, tokenizer = qa_model
    questions = qa["question"][:24]
    prompts = [qa_prompt(q) for q in questions]
    without = local.greedy_answers(model, tokenizer, prompts, batch_size=8, max_new_tokens=16)
    built, cache = [], local.PrefixCache

    class Spy(cache):
        def __init__(self, *args):
            built.append(super().__init__(*args))

    monkeypatch.setattr(local, "PrefixCache", Spy)
    reused = generate_answers(model, tokenizer, questions, batch_size=8, max_new_tokens=16)
    assert built, "the harness's answers did not reuse the prefix"
    assert reused == without and any(reused)


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_stop_at_newline_scores_like_truncating_256_tokens(qa_model, qa):
    model, tokenizer = qa_model
    rows = qa.select(range(8))
    prompts = [qa_prompt(q) for q in rows["question"]]
    full = generate_batched(
        model, tokenizer, prompts, max_new_tokens=256, batch_size=8, stop_at_newline=False
    )
    assert any("\n" in text for text in full)  # otherwise the comparison would be vacuous
    truncated = [text.split("\n", 1)[0].strip() for text in full]
    stopped = generate_answers(model, tokenizer, rows["question"], batch_size=8, max_new_tokens=256)
    assert stopped == truncated
    refs = references(rows)
    assert score(stopped, refs)["per_example"] == score(full, refs)["per_example"]


def test_evaluate_qa_report(qa_model, qa):
    model, tokenizer = qa_model
    rows = qa.select(range(6))
    report, predictions = evaluate_qa(model, tokenizer, rows, max_new_tokens=8, batch_size=4)
    assert len(predictions) == 6 and report["n"] == 6
    assert set(report["metrics"]) == {"exact_match", "contains"}
    assert report["by_support"][">=0"]["n"] == 6
    assert sum(b["n"] for b in report["buckets"]) == 6


def test_references_include_aliases(qa):
    rows = qa.filter(lambda r: len(r["aliases"]) > 0)
    if len(rows):
        assert references(rows)[0] == [rows[0]["answer"], *rows[0]["aliases"]]
    assert references(qa.remove_columns("aliases"))[0] == [qa[0]["answer"]]


def test_subsample_is_seeded(qa):
    a, b = subsample(qa, 5, seed=0), subsample(qa, 5, seed=0)
    assert a["id"] == b["id"] and len(a) == 5
    assert subsample(qa, 5, seed=1)["id"] != a["id"]
    assert len(subsample(qa, None, seed=0)) == len(qa)


def test_newline_stop_ids_are_computed_once_per_tokenizer(tiny_model_dir, monkeypatch):
    from transformers import AutoTokenizer

    from continuousbench.llm import local as llm

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    expected = [i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])]
    scans = []
    decode_each = llm._decode_each
    monkeypatch.setattr(llm, "_decode_each", lambda tok, ids: scans.append(len(ids)) or decode_each(tok, ids))
    assert llm.newline_token_ids(tokenizer) == expected and expected
    assert llm.newline_token_ids(tokenizer) == expected and len(scans) == 1
    tokenizer.add_tokens(["two\nlines"])  # a changed vocabulary is scanned again
    assert llm.newline_token_ids(tokenizer) == [*expected, len(tokenizer) - 1] and len(scans) == 2


def test_answers_decode_in_the_weights_precision_even_after_bf16_training(tiny_model_dir):
    """accelerate's bf16 mixed precision wraps ``forward`` in autocast on the model object the run then
    scores; decoding must not run under it (and the wrapper is back afterwards, for training)."""
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from continuousbench.harness.qa_eval import generate_answers, weights_precision

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    from accelerate.state import AcceleratorState

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    AcceleratorState._reset_state(reset_partial_state=True)  # a process-wide singleton: other tests set it
    try:
        model = Accelerator(mixed_precision="bf16", cpu=True).prepare(model)
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)
    seen = []  # a layer inside forward sees whether autocast is on
    model.lm_head.register_forward_hook(lambda *_: seen.append(torch.is_autocast_enabled("cpu")))
    wrapped = model.forward
    generate_answers(model, tokenizer, ["Who founded the city?"], max_new_tokens=2)
    assert seen and not any(seen)  # every forward of decoding ran without autocast
    assert model.forward == wrapped
    with weights_precision(model) as dtype:
        assert dtype == "float32"
    seen.clear()
    model(torch.tensor([[1, 2]]))
    assert all(seen)  # training's forward keeps its autocast
