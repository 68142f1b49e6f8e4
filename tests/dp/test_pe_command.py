"""`continuousbench pe`: the published corpus, its guarantee, the sweep, resume, and bad settings."""

import json
import math

import pytest
from dp_runs import one_line_error
from test_pe import pld_epsilon

from continuousbench.dp import pe_command
from continuousbench.llm import OFFLINE
from continuousbench.results.privacy_statement import corpus_privacy
from continuousbench.training.data import load_corpus


def pe_argv(corpus, model, api, out, *extra) -> list[str]:
    return [
        "--corpus",
        str(corpus),
        "--api",
        api,
        "--embedding_model",
        str(model),
        "--output_dir",
        str(out),
        "--iterations",
        "3",
        "--num_samples",
        "12",
        "--sweep_num_samples",
        "8",
        "--max_new_tokens",
        "16",
        *extra,
    ]


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_publishes_a_dp_corpus_the_harness_loads(dp_corpus, dp_model_dir, pe_word_api, tmp_path, invoke):
    out = tmp_path / "pe"
    result = invoke(["pe", *pe_argv(dp_corpus, dp_model_dir, pe_word_api, out, "--epsilon", "4")])
    assert result.exit_code == 0 and result.stdout.strip() == str(out)
    published = sorted(p.name for p in out.iterdir())
    assert published == [".continuousbench-pe.json", "README.md", "data", "pe.json", "privacy.json"]
    stated = corpus_privacy(out)  # what the harness records with a result on this corpus
    assert stated["target_epsilon"] == 4.0 and stated["epsilon"] <= 4.0 and stated["private"]
    assert len(load_corpus(str(out))) == 12
    record = json.loads((out / "pe.json").read_text())
    g = record["guarantee"]
    assert g["delta"] == pytest.approx(1 / 200**1.1) and g["mechanisms"] == 3 and g["private_runs"] == 1
    assert g["epsilon"] == pytest.approx(pld_epsilon(g["noise_multiplier"], 3, g["delta"]), rel=1e-12)
    assert g["epsilon"] <= 4.0 and g["noise_multiplier"] > 0
    history = record["final"]["history"]
    assert [h["iteration"] for h in history] == [0, 1, 2, 3] and all(h["fid"] > 0 for h in history)
    assert not any(key in h for h in history for key in ("counts", "votes"))  # no clean statistic
    card = (out / "README.md").read_text()
    assert "configs:" in card and "differential-privacy" in card and f"**({g['epsilon']:.4g}," in card
    assert "validation split" in card and "not protected" in card


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_sweep_picks_the_lowest_final_fid_and_accounts_private_sweeps(
    dp_corpus, dp_model_dir, pe_word_api, tmp_path
):
    for voters, private_runs in (("private", 3), ("validation", 1)):
        out = tmp_path / voters
        argv = pe_argv(dp_corpus, dp_model_dir, pe_word_api, out, "--temperatures", "0.8", "1.2")
        pe_command.cli([*argv, "--sweep_voters", voters])
        record = json.loads((out / "pe.json").read_text())
        assert record["guarantee"]["private_runs"] == private_runs
        assert record["guarantee"]["mechanisms"] == 3 * private_runs
        finals = {r["temperature"]: r["history"][-1]["fid"] for r in record["sweep"]}
        assert [len(r["history"]) for r in record["sweep"]] == [4, 4] and len(finals) == 2
        assert record["selected_temperature"] == min(finals, key=finals.get)
        assert [h["population"] for h in record["sweep"][0]["history"]][1:] == [8, 8, 8]
        assert len(load_corpus(str(out))) == 12


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_api_behind_an_endpoint(dp_corpus, dp_model_dir, pe_word_api, fake_openai_server, tmp_path, invoke):
    from fake_endpoint import prompt_of

    word_api = OFFLINE[pe_word_api.split(":")[1]]
    server = fake_openai_server(reply=lambda body: word_api(prompt_of(body), seed=body["seed"]))
    argv = pe_argv(
        dp_corpus, dp_model_dir, f"endpoint:{server.url}#fake", tmp_path / "pe", "--epsilon", "inf"
    )
    assert invoke(["pe", *argv]).exit_code == 0
    chats = [r for r in server.requests if "messages" in r]
    assert len(chats) == 12 + 3 * 12 * 6 and {r["temperature"] for r in chats} == {1.0}
    assert len({r["seed"] for r in chats[:12]}) == 12  # one seed per request: repeated prompts still differ
    assert len(set(load_corpus(str(tmp_path / "pe"))["text"])) > 1


def test_non_private_run_says_so(dp_corpus, dp_model_dir, pe_word_api, tmp_path):
    out = tmp_path / "inf"
    pe_command.cli(pe_argv(dp_corpus, dp_model_dir, pe_word_api, out, "--epsilon", "inf"))
    record = json.loads((out / "pe.json").read_text())
    assert math.isinf(record["guarantee"]["epsilon"]) and record["guarantee"]["noise_multiplier"] == 0
    card = (out / "README.md").read_text()
    assert "without noise" in card and "differential-privacy" not in card


def test_killed_job_resumes_and_refuses_a_changed_configuration(
    dp_corpus, dp_model_dir, pe_word_api, tmp_path, capsys, invoke
):
    word_api = OFFLINE[pe_word_api.split(":")[1]]
    calls = {"n": 0, "limit": 12 + 12 * 6 + 5}  # the initial population, one iteration, then a crash

    def flaky(prompt, **sampling):
        calls["n"] += 1
        if calls["n"] > calls["limit"]:
            raise KeyboardInterrupt  # what a killed job looks like from inside
        return word_api(prompt, **sampling)

    OFFLINE["pe-flaky"] = flaky
    out = tmp_path / "resumed"
    argv = pe_argv(dp_corpus, dp_model_dir, "offline:pe-flaky", out, "--epsilon", "inf")
    with pytest.raises(SystemExit):
        pe_command.cli(argv)
    assert "--resume" in capsys.readouterr().err
    assert not (out / "data").exists()
    assert len(list(out.glob(".pe-work/runs/final/iteration-*.parquet"))) == 2
    err = one_line_error(invoke, "pe", [*argv, "--resume", "--iterations", "4"])
    assert "changed configuration" in err and "iterations" in err
    calls["limit"] = math.inf
    pe_command.cli([*argv, "--resume"])
    pe_command.cli(pe_argv(dp_corpus, dp_model_dir, pe_word_api, tmp_path / "straight", "--epsilon", "inf"))
    assert load_corpus(str(out))["text"] == load_corpus(str(tmp_path / "straight"))["text"]
