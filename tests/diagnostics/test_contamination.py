"""Contamination test: Min-K% and Min-K%++ against a direct computation; the world-level test (exact
under its null, both ways on fixed seeds: the demo's pretrained base not flagged, the base trained on
the release flagged); controls of the same world refused; NEWS's date-matched control and blind baseline."""

import json
import math

import numpy as np
import pytest
import torch

from continuousbench.diagnostics import contamination as C
from continuousbench.errors import UserError
from continuousbench.loader import load_model


@pytest.fixture(scope="module")
def base_model():
    """The demo's pretrained base: it saw another world (its pretraining world), none of the tests'."""
    from continuousbench.demo.demo import SHIPPED_BASE

    return SHIPPED_BASE


@pytest.fixture(scope="module")
def seen_model(tmp_path_factory, tiny_release, base_model):
    from continuousbench.demo.tinymodel import train_on_texts
    from continuousbench.release.load import load_release

    texts = load_release(tiny_release, "corpus", "train")["text"]
    return train_on_texts(base_model, texts, tmp_path_factory.mktemp("seen"))


def test_scores_match_a_direct_computation(tiny_model_dir):
    model, tok, _ = load_model(str(tiny_model_dir))
    texts = ["Krinmar is a Lamp Geminon of type Fighting.", "A short one."]
    (lp, mu, sigma), _ = C.token_statistics(model, tok, texts, batch_size=2)  # padded beside a shorter one
    ids = tok(texts[0])["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0, :-1].double().cpu()
    direct = torch.log_softmax(logits, -1)
    for t, token in enumerate(ids[1:]):
        p = direct[t].exp()
        m = float((p * direct[t]).sum())
        s = math.sqrt(float((p * direct[t] ** 2).sum()) - m * m)
        assert lp[t] == pytest.approx(float(direct[t, token]), abs=1e-4)
        assert (mu[t], sigma[t]) == (pytest.approx(m, abs=1e-4), pytest.approx(s, rel=1e-3))
    z = (lp - mu) / sigma
    k = max(1, math.ceil(0.2 * len(lp)))
    scores = C.membership_scores([(lp, mu, sigma)], 0.2)
    assert scores["min_k"][0] == pytest.approx(np.sort(lp)[:k].mean())
    assert scores["min_k_plus_plus"][0] == pytest.approx(np.sort(z)[:k].mean())


@pytest.mark.slow
def test_flags_a_model_trained_on_the_corpus_and_not_its_base(
    invoke, tmp_path, tiny_release, base_model, seen_model
):
    """Both ways on fixed seeds: the pretrained base, which saw none of the worlds, is not flagged; the
    same base trained one epoch on the release is. Three control worlds, built once and reused."""
    reports = {}
    for name, model in (("seen", seen_model), ("base", base_model)):
        out = tmp_path / f"{name}.json"
        argv = ["contamination", "--model", model, "--release", tiny_release, "--documents", "150"]
        result = invoke([*argv, "--controls", "3", "--output", out])
        assert result.exit_code == 0, result.output
        reports[name] = json.loads(out.read_text())
    seen, base = reports["seen"]["tests"]["min_k_plus_plus"], reports["base"]["tests"]["min_k_plus_plus"]
    assert reports["seen"]["verdict"] == "contaminated" and seen["p_value"] < 0.01 and seen["rank"] == 1
    assert reports["base"]["verdict"] == "not detected" and base["p_value"] > 0.05
    folders = {name: [c["folder"] for c in r["controls"]] for name, r in reports.items()}
    assert folders["seen"] == folders["base"]
    seeds = [c["seed"] for c in reports["base"]["controls"]]
    assert len(set(seeds)) == 3 and all(s == C.control_seed(0, i) for i, s in enumerate(seeds))
    scores = reports["base"]["scores"]  # anyone can recompute the test from the report
    assert len(scores["release"]["documents"]) == 150 and len(scores["controls"]) == 3
    worlds = [np.mean([u["min_k_plus_plus"] for u in w["units"]]) for w in scores["controls"]]
    release = np.mean([u["min_k_plus_plus"] for u in scores["release"]["units"]])
    assert C.world_test(release, worlds)["p_value"] == pytest.approx(base["p_value"])


def _forged(tmp_path, release, **changes):
    """A copy of ``release`` whose manifest says ``changes`` (re-digested, so that it still verifies)."""
    import shutil

    from continuousbench.release.write import DIGEST_KEY, manifest_digest

    copy = shutil.copytree(release, tmp_path / "forged" / release.name)
    manifest = {**json.loads((copy / "release.json").read_text()), **changes}
    manifest[DIGEST_KEY] = manifest_digest(manifest)
    (copy / "release.json").write_text(json.dumps(manifest))
    return copy


def _errors(result):
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_control_of_another_size_or_the_release_itself_is_refused(invoke, tmp_path, tiny_release, base_model):
    other = _forged(tmp_path, tiny_release, size="small")
    result = invoke(["contamination", "--model", base_model, "--release", tiny_release, "--control", other])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "is a geminon-small release" in line and "same track and size" in line
    result = invoke(
        ["contamination", "--model", base_model, "--release", tiny_release, "--control", tiny_release]
    )
    assert result.exit_code == 2 and "is the release itself" in _errors(result)[0]


def test_a_control_of_the_same_world_is_refused(invoke, tmp_path, tiny_release, base_model):
    """A --heldout variant holds the release's own world (same world seed): it would say "not detected"
    whatever the model saw. Refused before the model is loaded; another seed's world is accepted."""
    twin = _forged(tmp_path, tiny_release, id="geminon-tiny-2026q1-heldout-entity")
    result = invoke(["contamination", "--model", base_model, "--release", tiny_release, "--control", twin])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "is the same world as geminon-tiny-2026q1" in line
    manifest = json.loads((tiny_release / "release.json").read_text())
    other = {**manifest, "manifest_sha256": "x", "generator": {"seeds": {"world": 1}}}
    C.check_control(manifest, other, "other")  # another world: no error


def test_the_world_test_is_exact_under_a_normal_null():
    """Release and controls drawn alike: the prediction t-test rejects at its level (it would reject far
    more often without the sqrt(1 + 1/M) of the release's own spread), and matches scipy's t."""
    from scipy.stats import t as student

    rng = np.random.default_rng(0)
    draws = rng.normal(size=(4000, 11))
    p = np.array([C.world_test(row[0], row[1:])["p_value"] for row in draws])
    assert abs((p < 0.05).mean() - 0.05) < 0.012 and abs((p < 0.01).mean() - 0.01) < 0.006
    row = draws[0]
    t = (row[0] - row[1:].mean()) / (row[1:].std(ddof=1) * math.sqrt(1 + 1 / 10))
    assert C.world_test(row[0], row[1:])["p_value"] == pytest.approx(student.sf(t, 9))
    assert C.world_test(10.0, row[1:])["rank"] == 1 and C.world_test(-10.0, row[1:])["rank"] == 11
    with pytest.raises(UserError, match="at least 2 control worlds"):
        C.world_test(0.0, [1.0])


def test_control_seeds_are_no_published_world():
    seeds = {C.control_seed(s, i) for s in range(50) for i in range(10)}
    assert len(seeds) == 500 and not seeds & set(range(2_000_000))  # nor seed + 1,000,003 (the demo base's)


def test_tokenizer_that_cannot_score_the_corpus_is_refused(invoke, tmp_path, tiny_release):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from continuousbench.demo.tinymodel import SPECIAL_TOKENS, make_tiny_model

    words = {t: i for i, t in enumerate([*SPECIAL_TOKENS.values(), "the", "is", "a"])}
    tok = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, **SPECIAL_TOKENS)
    make_tiny_model(tokenizer, hidden_size=16, num_layers=1).save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    result = invoke(
        ["contamination", "--model", tmp_path / "m", "--release", tiny_release, "--documents", "4"]
    )
    (line,) = _errors(result)
    assert result.exit_code == 2 and "cannot score this corpus" in line and "'<unk>'" in line


TOPICS = {"sport": "match goal league striker coach", "budget": "tax deficit minister spending vote"}


def _texts(n, topic):
    words = TOPICS[topic]
    return [f"{words} report number {i} {words.split()[i % 5]}" for i in range(n)]


def test_the_news_control_comes_from_the_releases_weeks():
    """Control articles: of the release's weeks only, as many per week as the release has there, never
    a release article; release documents of a week without control articles are left out."""
    release = C.Sample(["a", "b", "c", "d"], ["t"] * 4, ["a", "b", "c", "d"])
    dates = ["2026-01-05", "2026-01-06", "2026-01-14", None]  # weeks 2, 2, 3, undated
    days = {"a": "2026-01-05", "p": "2026-01-07", "q": "2026-01-08", "r": "2026-01-09", "z": "2026-03-02"}
    pool = [{"id": x, "text": x, "date": d, "crawl_date": None} for x, d in days.items()]
    members, control, info = C.date_matched_control(release, dates, pool, {"a", "b", "c", "d"}, seed=0)
    assert members.ids == ["a", "b"] and len(control.ids) == 2 and set(control.ids) <= {"p", "q", "r"}
    assert info == {"weeks": 2, "undated": 1, "unmatched": 1, "pool": 4}
    assert C.date_matched_control(release, dates, pool, {"a", "b", "c", "d"}, seed=0)[1].ids == control.ids


def test_the_blind_baseline_sees_topics_not_membership():
    """Two sets about different things are told apart without a model (the verdict would be withheld);
    two halves of one set are not."""
    sport, budget = _texts(40, "sport"), _texts(40, "budget")
    apart = C.blind_baseline(sport, budget, seed=0)
    alike = C.blind_baseline(sport[::2], sport[1::2], seed=0)
    assert apart["auc"] > 0.95 and apart["p_value"] < C.BLIND_ALPHA < alike["p_value"]


def _news_release(root, topics: dict[str, str], seed: int = 0):
    """A small NEWS release of sport articles from two January weeks, drawn uniformly from a pool of
    article shards (a stand-in for the ``dedup`` stage's output) whose other articles are about
    ``topics["pool"]``; returns (release folder, pool folder)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from continuousbench.news.release import assemble, write

    rng = np.random.default_rng(seed)
    days = ["2026-01-05", "2026-01-07", "2026-01-13", "2026-01-15"]

    def article(i: int, topic: str) -> dict:
        words = rng.choice([*TOPICS[topic].split(), "the", "a", "of", "in", "on", "report", "says"], size=60)
        day = days[i % 4]
        text = " ".join(words).capitalize() + "."
        return {
            "id": f"{topic}-{i}",
            "url": f"https://news.example/{i}",
            "hostname": "news.example",
            "title": f"Report {i}",
            "date": day,
            "crawl_date": day,
            "language": "en",
            "text": text,
        }

    release_rows = [article(i, "sport") for i in range(48)]
    pool_rows = release_rows + [article(i, topics["pool"]) for i in range(48, 96)]
    question = {"id": "q0", "question": "What league?", "answer": "league", "supporting_ids": ["sport-0"]}
    question |= {"cluster": 0, "verbatim_count": 0, "closed_book_answer": ""}
    questions = [question, {**question, "id": "q1", "cluster": 1}]
    parts = assemble(release_rows, questions, corpus_validation=0.1, qa_validation=0.5, seed=seed)
    release = write("news-tiny-2026q1", parts, root=root / "home", seed=seed, generator={}, overwrite=False)
    (root / "pool").mkdir()
    pq.write_table(pa.Table.from_pylist(pool_rows), root / "pool" / "shard-0.parquet")
    return release, root / "pool"


@pytest.mark.parametrize(("pool", "verdict"), [("sport", "not detected"), ("budget", "withheld")])
def test_news_against_its_weeks_unless_the_blind_baseline_separates(
    invoke, tmp_path, base_model, pool, verdict
):
    """A control of the same weeks and topic: a verdict. A control about something else: withheld, with
    the reason (a bag-of-words classifier tells the two apart without any model)."""
    release, articles = _news_release(tmp_path, {"pool": pool})
    out = tmp_path / "c.json"
    argv = ["contamination", "--model", base_model, "--release", release, "--control", articles]
    result = invoke([*argv, "--output", out])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["unit"] == "document" and report["verdict"] == verdict, report["blind_baseline"]
    matched = report["controls"][0]["matched"]
    assert matched["weeks"] == 2 and matched["unmatched"] == 0 and report["documents"] > 30
    controls = {d["id"] for d in report["scores"]["controls"][0]["documents"]}
    assert controls.isdisjoint(d["id"] for d in report["scores"]["release"]["documents"])
    assert ("withheld_because" in report) == (verdict == "withheld")
    assert invoke([*argv[:-2]]).exit_code == 2  # a NEWS release needs its articles as the control
