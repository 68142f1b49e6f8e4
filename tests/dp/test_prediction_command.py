"""`continuousbench private-prediction`: the published corpus and its guarantee, batches used once,
the budget's one line, resume, and the statement going through evaluate and submit unchanged."""

import json
from pathlib import Path

import pytest
from dp_runs import one_line_error, walk_for_private_statistics

from continuousbench.dp import prediction, prediction_command
from continuousbench.dp.published import publishable
from continuousbench.results.privacy_statement import corpus_privacy, stated_privacy
from continuousbench.training.data import corpus_fingerprint, load_corpus

PP = "private-prediction"


def pp_argv(source, model, out, *extra, option: str = "--corpus") -> list[str]:
    return [
        option,
        str(source),
        "--model",
        str(model),
        "--output_dir",
        str(out),
        "--prompt_set",
        "document",
        "--num_samples",
        "6",
        "--batch_size",
        "8",
        "--max_new_tokens",
        "8",
        "--clip",
        "2",
        "--epsilon",
        "50",
        *extra,
    ]


def test_publishes_a_dp_corpus_the_harness_loads(dp_corpus, dp_model_dir, tmp_path, invoke):
    out = tmp_path / "pp"
    result = invoke([PP, *pp_argv(dp_corpus, dp_model_dir, out)])
    assert result.exit_code == 0 and result.stdout.strip() == str(out)
    published = sorted(p.name for p in out.iterdir())
    assert published == [
        ".continuousbench-private-prediction.json",
        "README.md",
        "data",
        "prediction.json",
        "privacy.json",
    ]
    privacy = json.loads((out / "privacy.json").read_text())
    assert publishable(privacy) == privacy  # every key classified as publishable
    assert privacy["private"] and privacy["epsilon"] <= 50.0 and privacy["target_epsilon"] == 50.0
    assert privacy["delta"] == pytest.approx(1 / 200**1.1) and privacy["kind"] == "private-prediction"
    assert corpus_privacy(out) == stated_privacy(out, out / "privacy.json")[0]  # as evaluate reads it
    record = json.loads((out / "prediction.json").read_text())
    emitted = record["emitted"]
    assert emitted["records"] == 6 and emitted["public_tokens"] == 0  # no sparse vector test
    assert 0 < emitted["private_tokens"] <= 6 * 8 and sum(emitted["stopped_by"].values()) == 6
    assert len(load_corpus(str(out))) == 6 - emitted["dropped_empty"]
    card = (out / "README.md").read_text()
    assert f"**({privacy['epsilon']:.4g}," in card and "differential-privacy" in card
    secrets = [corpus_fingerprint({"text": load_corpus(str(dp_corpus))["text"]}), "batches.npz", "streams-"]
    assert not walk_for_private_statistics(out, [], secrets)  # the batches and streams stayed in the work
    assert "temperature (tau)" in card and "Serialised DP event" in card


def test_each_record_is_in_at_most_one_batch(dp_corpus, dp_model_dir, tmp_path, monkeypatch):
    seen = []
    decode = prediction.BatchDecoder.decode

    def spy(self, batches, public, generator):
        seen.extend(batches)
        return decode(self, batches, public, generator)

    monkeypatch.setattr(prediction.BatchDecoder, "decode", spy)
    seeded = ("--batches_at_once", "4", "--insecure_noise_seed", "3")
    prediction_command.cli(pp_argv(dp_corpus, dp_model_dir, tmp_path / "pp", *seeded))
    assert len(seen) == 6  # one batch per record written
    prompts = [p for batch in seen for p in batch]
    assert len(prompts) == len(set(prompts)) > 0  # disjoint: no record twice
    records = set(load_corpus(str(dp_corpus))["text"])
    assert all(p.split("<eos>")[0] in records for p in prompts)  # the template around a record


def test_a_budget_too_small_too_many_samples_or_too_long_is_one_line(
    dp_corpus, dp_model_dir, tmp_path, invoke
):
    err = one_line_error(invoke, PP, pp_argv(dp_corpus, dp_model_dir, tmp_path / "a", "--epsilon", "0.5"))
    assert "covers " in err and "private tokens per record at --max_temperature 1 " in err
    err = one_line_error(invoke, PP, pp_argv(dp_corpus, dp_model_dir, tmp_path / "b", "--num_samples", "30"))
    assert "30 x --batch_size 8 = 240 private prompts, but the corpus has 200 records" in err
    err = one_line_error(
        invoke, PP, pp_argv(dp_corpus, dp_model_dir, tmp_path / "c", "--max_record_tokens", "510")
    )
    assert "--max_record_tokens 510 and --max_new_tokens 8 exceed the model's 512 positions" in err
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing left behind


def test_a_killed_job_resumes_with_the_same_streams(
    dp_corpus, dp_model_dir, tmp_path, monkeypatch, capsys, invoke
):
    monkeypatch.setattr(prediction_command, "CHUNK_BATCHES", 2)
    calls = {"n": 0}
    decode = prediction.BatchDecoder.decode

    def flaky(self, batches, public, generator):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # what a killed job looks like from inside
        return decode(self, batches, public, generator)

    monkeypatch.setattr(prediction.BatchDecoder, "decode", flaky)
    seeded = ("--insecure_noise_seed", "7", "--batches_at_once", "1", "--svt_threshold", "0.5")
    out = tmp_path / "resumed"
    with pytest.raises(SystemExit):
        prediction_command.cli(pp_argv(dp_corpus, dp_model_dir, out, *seeded))
    assert "--resume" in capsys.readouterr().err
    assert sorted(p.name for p in (out / ".private-prediction-work").glob("chunk-*")) == [
        "chunk-00000.parquet"
    ]
    err = one_line_error(
        invoke, PP, [*pp_argv(dp_corpus, dp_model_dir, out, *seeded), "--resume", "--clip", "3"]
    )
    assert "changed configuration" in err and "clip" in err
    prediction_command.cli([*pp_argv(dp_corpus, dp_model_dir, out, *seeded), "--resume"])
    straight = tmp_path / "straight"
    prediction_command.cli(pp_argv(dp_corpus, dp_model_dir, straight, *seeded))
    assert load_corpus(str(out))["text"] == load_corpus(str(straight))["text"]
    assert json.loads((out / "privacy.json").read_text())["private"] is False  # a public seed: no guarantee
    assert "**No DP guarantee.**" in (out / "README.md").read_text()


@pytest.mark.slow
def test_its_privacy_json_goes_through_evaluate_and_submit_unchanged(
    tiny_release, tiny_model_dir, run_argv, tmp_path
):
    from continuousbench.harness.run import cli as evaluate
    from continuousbench.results import submit

    corpus = tmp_path / "pp"
    prediction_command.cli(
        pp_argv(tiny_release, tiny_model_dir, corpus, "--max_new_tokens", "24", option="--release")
    )
    run = tmp_path / "run"
    evaluate(
        run_argv(
            tiny_release,
            tiny_model_dir,
            run,
            "--corpus",
            str(corpus),
            "--corpus_privacy",
            str(corpus / "privacy.json"),
            steps=1,
        )
    )
    stated = stated_privacy(corpus, corpus / "privacy.json")[0]
    assert json.loads((run / "results.json").read_text())["corpus"]["privacy"] == stated
    where = submit.cli([str(run), "--to", str(tmp_path / "results")])["path"]
    record = json.loads(Path(where).read_text())
    assert record["corpus"]["privacy"] == stated and record["submitted"]["privacy_statement"]
    assert stated["epsilon"] <= 50 and stated["target_epsilon"] == 50 and stated["accountant"] == "rdp"
