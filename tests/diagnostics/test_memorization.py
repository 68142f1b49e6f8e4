"""The verbatim memorisation probe on the tiny release: a model trained on its corpus recites training
documents more than held-out ones, an untrained one does not, and what the figures are made of."""

from __future__ import annotations

import json

import pytest

from continuousbench.diagnostics.memorization import difference, summarise
from continuousbench.diagnostics.verbatim import Probe, common_prefix, cut, decode_greedy, score

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_memorization")


def _row(split: str, exact: bool, prefix: int, rouge: float, style: str = "wiki") -> dict:
    return {
        "id": "d",
        "split": split,
        "style": style,
        "subset": "public",
        "exact": exact,
        "common_prefix": prefix,
        "rouge_l": rouge,
    }


def test_common_prefix_stops_at_the_first_difference():
    assert common_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert common_prefix([], [1]) == 0 and common_prefix([5, 6], [5, 6, 7]) == 2


def test_summary_and_paired_difference():
    train = [_row("train", True, 32, 1.0)] * 6 + [_row("train", False, 3, 0.4)] * 4
    held = [_row("heldout", False, 1, 0.2)] * 10
    summary = summarise(train)
    assert summary["n"] == 10 and summary["exact_suffix_rate"]["value"] == 0.6
    low, high = summary["exact_suffix_rate"]["ci95"]
    assert 0.25 < low < 0.6 < high < 0.9  # Wilson's interval of 6/10
    assert summary["common_prefix"]["value"] == pytest.approx((6 * 32 + 4 * 3) / 10)
    diff = difference(list(zip(train, held, strict=True)))
    assert diff["pairs"] == 10
    assert diff["rouge_l"]["difference"] == pytest.approx(0.6 * 0.8 + 0.4 * 0.2)
    assert diff["exact_suffix_rate"]["difference"] == pytest.approx(0.6)
    assert diff["exact_suffix_rate"]["ci95"][0] > 0 and diff["rouge_l"]["ci95"][0] > 0
    same = difference(list(zip(held, held, strict=True)))
    assert same["rouge_l"]["difference"] == 0 and same["exact_suffix_rate"]["p_value"] == 1.0


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_greedy_suffix_of_a_batch_is_the_one_of_each_document(tiny_model_dir):
    """Scoring is exactly what one-at-a-time greedy decoding with transformers gives, batched or not."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()
    rows = [
        {"id": str(i), "text": t}
        for i, t in enumerate(
            [
                "Stalet is the Mouse Geminon. It stands 12 m tall and weighs 568 lbs, "
                "with 34 hit points and more.",
                "The journal notes a Geminon of the water type whose attack is 50 "
                "and whose speed is 31 in all.",
                "short",
            ]
        )
    ]
    probes, short = cut(tokenizer, rows, "train", 8, 6)
    assert short == 1 and [p.id for p in probes] == ["0", "1"] and all(len(p.suffix) == 6 for p in probes)
    batched = decode_greedy(model, tokenizer, probes, 6, batch_size=2)
    for probe, got in zip(probes, batched, strict=True):
        ids = torch.tensor([[tokenizer.bos_token_id, *probe.prefix]])
        alone = model.generate(ids, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        assert got == alone[0, ids.shape[1] :].tolist()[: len(got)]
    recited = Probe("x", "train", "wiki", "public", probes[0].prefix, batched[0])
    (row,) = score(tokenizer, [recited], [batched[0]])
    assert row["exact"] and row["common_prefix"] == len(batched[0]) and row["rouge_l"] in (0.0, 1.0)


def _probe(invoke, model, release, out, *extra):
    result = invoke(["memorization", "--model", model, "--release", release, "--output", out, *extra])
    assert result.exit_code == 0, result.stderr
    return json.loads(out.read_text()), result


@pytest.mark.slow  # ~7 s: CI only, not the fast lane
def test_untrained_model_recites_nothing_more_for_training_documents(
    invoke, tmp_path, tiny_release, tiny_model_dir
):
    data, result = _probe(
        invoke, tiny_model_dir, tiny_release, tmp_path / "m.json", "--docs", "30", "--suffix_tokens", "16"
    )
    diff = data["train_minus_heldout"]
    assert diff["pairs"] == 30 and data["heldout"]["n"] == 30 and diff["paired_by"] == "style"
    # the training figures are those of the paired documents; the sensitive articles are apart
    assert data["train"]["n"] == 30 and set(data["train"]["by_subset"]) == {"public"}
    assert data["sensitive"]["n"] > 0 and set(data["sensitive"]["by_subset"]) == {"sensitive"}
    assert len(data["floor"]["documents"]) == 30
    assert set(data["heldout"]["by_style"]) <= {"wiki", "journal", "evolution", "comparison"}
    for name in ("exact_suffix_rate", "rouge_l", "common_prefix"):
        low, high = diff[name]["ci95"]
        assert low <= 0 <= high, (name, diff[name])
    assert "rouge_l train" in result.stdout and "30 pairs" in result.stdout
    assert data["model"]["kind"] == "model" and data["settings"]["suffix_tokens"] == 16


def test_all_held_out_documents_when_docs_exceeds_the_split(invoke, tmp_path, tiny_release, tiny_model_dir):
    data, result = _probe(
        invoke,
        tiny_model_dir,
        tiny_release,
        tmp_path / "m.json",
        "--docs",
        "100000",
        "--prefix_tokens",
        "80",
        "--suffix_tokens",
        "4",
        "--batch_size",
        "64",
    )
    held = data["heldout"]["n"]
    assert 0 < held == data["documents"]["heldout_available"] - data["documents"]["heldout_short"]
    assert f"the held-out split has {held} long enough; probing all of them" in result.stderr
    assert "held-out and" in result.stderr and "shorter than 80 + 4 tokens" in result.stderr


def test_a_tokenizer_that_cannot_encode_the_release_is_refused(
    invoke, tmp_path, tiny_release, tiny_model_dir
):
    """A word-level tokenizer that knows five words turns the documents into unknown tokens: one line."""
    import shutil

    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    for file in folder.glob("*token*"):
        file.unlink()
    words = Tokenizer(models.WordLevel({"<unk>": 0, "<bos>": 1, "<eos>": 2, "<pad>": 3, "the": 4}, "<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    special = {"unk_token": "<unk>", "bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"}
    PreTrainedTokenizerFast(tokenizer_object=words, **special).save_pretrained(folder)
    out = tmp_path / "m.json"
    result = invoke(["memorization", "--model", folder, "--release", tiny_release, "--output", out])
    assert result.exit_code == 2 and not out.exists()
    assert "tokenizer cannot encode the release: 100% of the documents hold its unknown" in result.stderr


TRAINED_ON = "train[:32]"  # 32 documents, ~6 passes: the 1M-parameter base memorises them in a minute


@pytest.fixture(scope="module")
def memorizing_run(tmp_path_factory, tiny_release, run_argv):
    """The demo's base model trained in full on part of the real corpus (an evaluate run folder)."""
    from continuousbench.demo.demo import SHIPPED_BASE
    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs-memo") / "real-32"
    extra = (
        "--corpus",
        str(tiny_release),
        "--corpus_split",
        TRAINED_ON,
        "--learning_rate",
        "3e-3",
        "--warmup_steps",
        "0",
        "--eval_steps",
        "40",
        "--save_steps",
        "40",
    )
    cli(run_argv(tiny_release, SHIPPED_BASE, out, *extra, steps=40, tuning="full"))
    return out


@pytest.mark.slow
def test_run_trained_on_the_real_corpus_recites_its_training_documents(
    invoke, tmp_path, memorizing_run, tiny_release
):
    """The acceptance test, both ways: the evaluate run (a folder, loaded through its model/) trained on
    real documents completes them better than held-out ones, with a paired interval above 0; its base
    model, which never saw them, shows no such difference."""
    from continuousbench.demo.demo import SHIPPED_BASE

    probed = {}
    for name, model in (("run", memorizing_run), ("base", SHIPPED_BASE)):
        probed[name], _ = _probe(
            invoke, model, tiny_release, tmp_path / f"{name}.json", "--train_split", TRAINED_ON
        )
    run, base = probed["run"]["train_minus_heldout"], probed["base"]["train_minus_heldout"]
    assert probed["run"]["model"]["kind"] == "evaluate run" and run["pairs"] >= 15
    assert run["rouge_l"]["ci95"][0] > 0, run
    assert base["rouge_l"]["ci95"][0] <= 0 <= base["rouge_l"]["ci95"][1], base
    assert probed["run"]["train"]["rouge_l"]["value"] > probed["base"]["train"]["rouge_l"]["value"]


def test_the_demo_study_probes_the_non_private_and_eps10_generators(tmp_path):
    """The demo's study file: a probe job per named generator, after its training, read by the report."""
    from continuousbench.demo.demo import demo_study
    from continuousbench.study.graph import expand

    jobs = {j.name: j for j in expand(demo_study(quick=True, seed=0, bf16=False, base=None), tmp_path)}
    for name in ("syn", "dp-eps10"):
        job = jobs[f"memorization/{name}"]
        assert job.after == (f"train-generator/{name}",) and job.gpus == 0
        argv = list(job.argv)
        assert argv[0] == "memorization"
        assert argv[argv.index("--model") + 1] == str(tmp_path / "generators" / name)
        assert argv[argv.index("--docs") + 1] == "16"  # --quick
    assert "memorization/dp-eps100" not in jobs
    report = list(jobs["report/all"].argv)
    probed = report[report.index("--memorization") + 1 : report.index("--memorization") + 3]
    assert probed == [f"{g}={tmp_path / 'memorization' / f'{g}.json'}" for g in ("syn", "dp-eps10")]
    assert {"memorization/syn", "memorization/dp-eps10"} <= set(jobs["report/all"].after)


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_report_prints_the_probes_under_the_table(
    invoke, tmp_path, tiny_release, tiny_model_dir, finished_run
):
    probe, _ = _probe(invoke, tiny_model_dir, tiny_release, tmp_path / "m.json", "--docs", "8")
    result = invoke(["report", finished_run, "--memorization", f"untrained={tmp_path / 'm.json'}"])
    assert result.exit_code == 0, result.stderr
    assert "Verbatim memorisation" in result.stdout and "untrained" in result.stdout
    assert f"{probe['train']['rouge_l']['value']:.3f}" in result.stdout
    bad = invoke(["report", finished_run, "--memorization", f"x={finished_run / 'results.json'}"])
    assert bad.exit_code == 2 and "--memorization x=" in bad.stderr


@pytest.mark.slow
def test_two_processes_share_the_documents_and_write_one_output(tmp_path, memorizing_run, tiny_release):
    """torchrun, two CPU processes: each decodes half of the documents, process 0 writes the one file,
    with the figures of one process."""
    import os
    import subprocess
    import sys

    from continuousbench.diagnostics.memorization import cli

    argv = [
        "--model",
        str(memorizing_run),
        "--release",
        str(tiny_release),
        "--train_split",
        TRAINED_ON,
        "--docs",
        "24",
    ]
    one = cli([*argv, "--output", str(tmp_path / "one.json")])
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    command = [*torchrun, "-m", "continuousbench.cli", "memorization", *argv, "--output", "two.json"]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "items answered in 2 shares" in proc.stderr and proc.stdout.count("rouge_l train") == 1
    two = json.loads((tmp_path / "two.json").read_text())
    for key in ("train", "heldout", "train_minus_heldout"):
        assert two[key] == one[key]


@pytest.mark.slow  # ~6 s: CI only, not the fast lane
def test_a_style_held_out_release_is_probed_on_its_held_out_documents(invoke, tmp_path, tiny_model_dir):
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    args = GeminonBuildArguments(size="tiny", out=str(tmp_path), heldout="style")
    release = build_release(args, progress=False)
    style = json.loads((release / "release.json").read_text())["generator"]["heldout"]["style"]
    data, _ = _probe(
        invoke, tiny_model_dir, release, tmp_path / "m.json", "--docs", "12", "--suffix_tokens", "8"
    )
    assert data["release"]["heldout"] == "style" and set(data["heldout"]["by_style"]) == {style}
    # no training document has the held-out style: each is paired with a public one of another style,
    # and the output says so rather than "paired by style"
    diff = data["train_minus_heldout"]
    assert diff["pairs"] == 12 and data["documents"]["unpaired"] == 0
    assert diff["paired_by"] == {"style": "except", "random": [style]}
    assert data["train"]["n"] == 12 and style not in data["train"]["by_style"]


def test_the_floor_is_disjoint_from_every_selection_split(invoke, tmp_path, tiny_release, tiny_model_dir):
    """The floor's documents are the probe half of corpus.validation: none of them is in the selection half
    that train-generator (and Private Evolution) select checkpoints on, nor in corpus.train; the two
    halves make up the split. Failed when the floor was all of corpus.validation."""
    from continuousbench.release.load import load_release
    from continuousbench.training.data import train_and_validation

    options = ("--docs", "100000", "--prefix_tokens", "4", "--suffix_tokens", "4")
    data, _ = _probe(invoke, tiny_model_dir, tiny_release, tmp_path / "m.json", *options)
    validation = load_release(tiny_release, "corpus", "validation")
    text_of = dict(zip(validation["id"], validation["text"], strict=True))
    floor = {text_of[i] for i in data["floor"]["documents"]}
    train, selection = train_and_validation(str(tiny_release), purpose="selection")
    assert floor and len(selection) and floor.isdisjoint(selection["text"])
    assert floor.isdisjoint(train["text"])
    assert len(floor) + len(selection) == len(validation) - data["documents"]["heldout_short"]
