"""continuousbench proxies: rank correlations of proxy metrics with QA over a study's corpora."""

import json

import pytest

from continuousbench.diagnostics.proxies import rank_correlations

QA = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4, "pe": 0.5}
MAUVE = {"a": 0.5, "b": 0.6, "c": 0.7, "d": 0.8, "pe": 0.9}  # the same order as QA
LOSS = {"a": 4.0, "b": 3.0, "c": 1.0, "d": 2.0}  # PE has no generator, so no validation loss


def _study(root, names):
    """A study folder as `continuousbench study` leaves it, with known QA and proxies per corpus."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for name in names:
        data = root / "synthetic" / name / "data"
        data.mkdir(parents=True)
        texts = [f"text of {name} {i}" for i in range(4)]
        pq.write_table(pa.table({"text": texts}), data / "train-0.parquet")
        run = root / "runs" / "demo" / f"{name}-seed0"
        run.mkdir(parents=True)
        metrics = {"qa_public": {"metrics": {"exact_match": {"accuracy": QA[name]}}}}
        (run / "results.json").write_text(json.dumps({"metrics": metrics}))
        (root / "mauve").mkdir(exist_ok=True)
        mauve = {"candidate_vs_reference": {"mean": MAUVE[name]}}
        (root / "mauve" / f"{name}.json").write_text(json.dumps(mauve))
        if name in LOSS:
            (root / "generators" / name).mkdir(parents=True)
            privacy = {"validation": {"loss": LOSS[name]}}
            (root / "generators" / name / "privacy.json").write_text(json.dumps(privacy))
    return root


def test_known_orders_give_known_coefficients(tmp_path, invoke):
    from scipy.stats import kendalltau

    study = _study(tmp_path / "study", list(QA))
    out = tmp_path / "proxies.json"
    plot = tmp_path / "p.png"
    result = invoke(["proxies", "--study", study, "--output", out, "--plot", plot, "--bootstrap", "300"])
    assert result.exit_code == 0, result.stderr
    r = json.loads(out.read_text())["correlations"]
    assert r["mauve"]["n"] == 5 and r["mauve"]["spearman"]["value"] == pytest.approx(1.0)
    assert r["mauve"]["kendall"]["value"] == pytest.approx(1.0)
    assert r["mauve"]["spearman"]["ci95"] == pytest.approx([1.0, 1.0])  # every resample agrees
    # loss ranks 4, 3, 1, 2 against QA ranks 1..4: rho = 1 - 6 * 18 / (4 * 15), tau = (1 - 5) / 6
    assert r["validation_loss"]["n"] == 4 and r["validation_loss"]["spearman"]["value"] == pytest.approx(-0.8)
    assert r["validation_loss"]["kendall"]["value"] == pytest.approx(-4 / 6)
    low, high = r["validation_loss"]["spearman"]["ci95"]
    assert -1 <= low <= -0.8 <= high <= 1
    assert r["leakage"]["note"] and r["fid"]["note"]  # no release folder, no --model
    # exact permutation p-values beside the intervals: 5 corpora in QA's order, 2 of the 120 pairings are
    # as extreme; 4 corpora, tau -4/6: scipy's exact Kendall test says the same
    assert r["mauve"]["spearman"]["p_value"] == pytest.approx(2 / 120) == r["mauve"]["kendall"]["p_value"]
    assert r["mauve"]["kendall"]["permutations"] == "all"
    exact = kendalltau(range(4), [4, 3, 1, 2], method="exact").pvalue
    assert r["validation_loss"]["kendall"]["p_value"] == pytest.approx(exact)
    assert "mauve" in result.stdout and "+1.00" in result.stdout and plot.stat().st_size > 0


def test_fewer_than_three_corpora_get_one_line(tmp_path, invoke):
    study = _study(tmp_path / "study", ["a", "b"])
    result = invoke(["proxies", "--study", study])
    assert result.exit_code == 2 and "has 2 synthetic corpora" in result.stderr
    assert "at least 3" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_proxy_equal_for_every_corpus_is_noted_not_correlated():
    from continuousbench.diagnostics.proxies import correlate

    row = {"mauve": 0.5, "validation_loss": None, "fid": None, "leakage": 0.0}
    table = {n: {"qa": q, **row} for n, q in QA.items()}
    result = correlate(table, resamples=50, seed=0)
    assert result["mauve"]["note"] == result["leakage"]["note"] == "the same for every corpus: no ranking"


def test_the_bootstrap_is_seeded():
    import math

    qa, proxy = [i / 30 for i in range(30)], [i + 10 * math.sin(i) for i in range(30)]
    one = rank_correlations(qa, proxy, resamples=300, seed=3)
    assert one == rank_correlations(qa, proxy, resamples=300, seed=3)
    assert one != rank_correlations(qa, proxy, resamples=300, seed=4)


@pytest.mark.slow  # embeds the tiny release's corpus
def test_fid_and_leakage_come_from_the_release_and_its_embeddings(tmp_path, tiny_release, tiny_model_dir):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from continuousbench.diagnostics.leakage import singleton_facts
    from continuousbench.diagnostics.proxies import ProxiesArguments, main

    study = _study(tmp_path / "study", ["a", "b", "c"])
    fact = singleton_facts(str(tiny_release))[0]  # corpus c repeats one sensitive fact verbatim
    leaked = pa.table({"text": [f"{fact.name} is known for {fact.values[0]}."]})
    pq.write_table(leaked, study / "synthetic" / "c" / "data" / "train-1.parquet")
    args = ProxiesArguments(str(study), release=str(tiny_release), model=str(tiny_model_dir), bootstrap=50)
    corpora = main(args)["corpora"]
    assert all(row["fid"] > 0 for row in corpora.values())  # none of these texts is the real corpus
    assert corpora["a"]["leakage"] == corpora["b"]["leakage"] == 0 < corpora["c"]["leakage"]


def test_the_vectorised_correlations_are_scipys():
    """The permutation test's statistics, computed for many pairings at once, equal scipy's spearmanr and
    kendalltau (tau-b) pairing by pairing, ties included."""
    import numpy as np
    from scipy.stats import kendalltau, spearmanr

    from continuousbench.diagnostics.proxies import _kendall, _spearman

    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, size=(50, 7)).astype(float), rng.normal(size=(50, 7))
    assert _spearman(x, y) == pytest.approx([spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)])
    assert _kendall(x, y) == pytest.approx([kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])


@pytest.mark.parametrize("n", [4, 9])
def test_the_bootstrap_interval_is_scipys_resample_by_resample(n):
    """The vectorised bootstrap gives the interval of scipy's statistics computed resample by resample
    (those with a constant side dropped), few corpora with repeats and ties included."""
    import numpy as np
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(n)
    qa, proxy = rng.integers(0, 3, size=n).astype(float), rng.normal(size=n)
    draws = np.random.default_rng(5).integers(0, n, size=(400, n))  # rank_correlations' draws at seed 5
    got = rank_correlations(list(qa), list(proxy), resamples=400, seed=5)
    for name, fn in (("spearman", spearmanr), ("kendall", kendalltau)):
        varied = [i for i in draws if len(set(qa[i])) > 1 and len(set(proxy[i])) > 1]
        boot = [fn(qa[i], proxy[i]).statistic for i in varied]
        assert got[name]["ci95"] == pytest.approx(np.percentile(boot, [2.5, 97.5]), abs=1e-12)


def test_fid_is_the_mauve_jobs_where_it_used_the_same_featuriser(tmp_path, monkeypatch, tiny_release):
    """A study's MAUVE files carry the FID of their features: proxies reads it rather than loading the
    model and embedding the corpora again; a file measured with another model is not taken."""
    import continuousbench.embeddings.fid as fid_module
    from continuousbench.diagnostics import proxies
    from continuousbench.embeddings import encoders

    study = _study(tmp_path / "study", ["a", "b", "c"])
    model = tmp_path / "featuriser"
    for n, fid in (("a", 3.0), ("b", 2.0), ("c", 1.0)):
        file = study / "mauve" / f"{n}.json"
        measured = json.loads(file.read_text())
        measured["candidate_vs_reference"] |= {"fid": fid, "model": str(model if n != "c" else tmp_path)}
        file.write_text(json.dumps(measured))
    embedded = []
    monkeypatch.setattr(encoders, "embed_texts", lambda texts, path: embedded.append(path) or texts)
    monkeypatch.setattr(fid_module, "frechet_distance", lambda a, b: 7.0)
    args = proxies.ProxiesArguments(str(study), release=str(tiny_release), model=str(model), bootstrap=10)
    corpora = proxies.main(args)["corpora"]
    assert {n: corpora[n]["fid"] for n in "abc"} == {"a": 3.0, "b": 2.0, "c": 7.0}
    assert embedded == [str(model)] * 2  # the real corpus and c, nothing else
