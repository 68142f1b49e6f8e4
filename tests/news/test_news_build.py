"""``build news`` end to end on the fixture's WARC files with the offline model; the harness on it."""

from __future__ import annotations

import json
import shutil

import pytest
from newspages import TINY_CLUSTERING

from continuousbench.news.build import NewsBuildArguments, main
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.models import ModelArguments
from continuousbench.release import load_release, verify_release

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_news_build")]


def build(warc_dir, root, **kw):
    args = NewsBuildArguments(
        warc=[str(warc_dir / "*.warc*")], size="tiny", out=str(root), min_support=2, **TINY_CLUSTERING, **kw
    )
    model = ModelArguments(llm="offline:news", max_dropped=1.0, judge_override_calibration=True)
    return main(args, model, ExecutorArguments(tasks=2))


@pytest.fixture(scope="module")
def news_release(warc_dir, tmp_path_factory):
    return build(warc_dir, tmp_path_factory.mktemp("news-home"))


def files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_release_parts_agree(news_release):
    manifest = verify_release(news_release)
    assert manifest["id"] == "news-tiny-2026q1" and manifest["track"] == "news"
    assert manifest["evaluation"] == {
        "part": "qa_public",
        "split": "test",
        "primary_metric": "llm_match",
        "selection_metric": "contains",
        "min_support": 2,
        "strata": [400, 600, 800],
    }
    assert "## Canonical evaluation" in (news_release / "README.md").read_text()
    corpus = load_release(news_release, "corpus")
    train = set(corpus["train"]["id"])
    assert train.isdisjoint(corpus["validation"]["id"])
    qa = load_release(news_release, "qa_public")
    support = {r["id"]: r for r in load_release(news_release, "support_counts", "train")}
    assert len(support) == len(qa["validation"]) + len(qa["test"]) >= 2
    for split in ("validation", "test"):
        for q in qa[split]:
            s = support[q["id"]]
            assert q["support_count"] == s["support_count"] == len(s["article_ids"]) and s["split"] == split
            assert set(s["article_ids"]) <= train  # support counts only what a participant trains on
    clusters = set(qa["validation"]["cluster"]) | set(qa["test"]["cluster"])
    (work,) = (news_release.parent / ".work").glob("news-tiny-2026q1-*")
    assert len(clusters) >= 2, json.loads((work / "extract" / "stats.json").read_text())  # else one is split
    assert set(qa["validation"]["cluster"]).isdisjoint(qa["test"]["cluster"])
    with pytest.raises(ValueError, match="has no part 'qa_singleton'"):
        load_release(news_release, "qa_singleton")


def test_rebuild_is_byte_identical_and_resumes_by_stage(news_release, warc_dir, tmp_path):
    again = build(warc_dir, tmp_path)
    assert files(again) == files(news_release)
    (work,) = (tmp_path / ".work").glob("news-tiny-2026q1-*")  # keyed by the build's settings
    shutil.rmtree(work / "support")  # as if the build had been killed during its last stage
    before = {s: (work / s / "stats.json").stat().st_mtime_ns for s in ("extract", "cluster", "filter")}
    assert files(build(warc_dir, tmp_path, overwrite=True)) == files(news_release)
    assert before == {s: (work / s / "stats.json").stat().st_mtime_ns for s in before}  # kept, not rerun
    shutil.rmtree(work / "cluster")  # killed while clustering: its work folder holds what it had done
    (work / "cluster" / ".news-cluster-work" / "embeddings-work").mkdir(parents=True)
    assert files(build(warc_dir, tmp_path, overwrite=True)) == files(news_release)  # continued, not refused


def test_existing_release_is_one_line(news_release, warc_dir, capsys):
    from continuousbench.news.build import cli

    with pytest.raises(SystemExit) as exit_info:
        cli(
            [
                "--warc",
                str(warc_dir / "a.warc.gz"),
                "--size",
                "tiny",
                "--out",
                str(news_release.parent),
                "--llm",
                "offline:news",
                "--max_dropped",
                "1",
            ]
        )
    assert exit_info.value.code == 2 and "--overwrite" in capsys.readouterr().err


def test_harness_scores_the_news_release(news_release, tmp_path):
    from datasets import load_dataset

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.harness import run
    from continuousbench.news.models import generator

    generator("offline:news", None)  # registers the offline judge
    texts = load_dataset(str(news_release), "corpus", split="train")["text"]
    model = save_tiny_model(tmp_path / "model", texts, arch="llama", vocab_size=512)
    out = tmp_path / "run"
    argv = [
        "--release",
        str(news_release),
        "--model",
        str(model),
        "--output_dir",
        str(out),
        "--steps",
        "0",
        "--max-new-tokens",
        "8",
        "--judge",
        "offline:news",
        "--lora_r",
        "4",
        "--judge_override_calibration",  # the stand-in's contains rule fails calibration
    ]
    results = run.cli(argv)
    assert results["judge"]["calibration"]["override"]
    assert set(results["metrics"]) == {"qa_public"}
    canonical = results["canonical"]
    test = load_dataset(str(news_release), "qa_public", split="test")
    assert canonical["n"] == sum(c >= 2 for c in test["support_count"])
    assert canonical["primary_metric"] == "llm_match" and canonical["accuracy"] is not None
    assert set(canonical["by_stratum"]) == {">=2", ">=400", ">=600", ">=800"}
    assert json.loads((out / "results.json").read_text())["canonical"] == canonical


def test_other_settings_do_not_reuse_finished_stages(news_release, warc_dir, tmp_path):
    """Other settings build in a work folder of their own (the first's finished stages are kept); under
    a --work folder the user named, they are refused in one line."""
    root = tmp_path / "root"
    shutil.copytree(news_release.parent / ".work", root / ".work")
    (first,) = (root / ".work").glob("news-tiny-2026q1-*")
    kept = {p: p.stat().st_mtime_ns for p in first.rglob("*") if p.is_file()}
    build(warc_dir, root, max_questions=3)
    assert {p: p.stat().st_mtime_ns for p in first.rglob("*") if p.is_file()} == kept
    assert len(list((root / ".work").glob("news-tiny-2026q1-*"))) == 2
    with pytest.raises(ValueError, match="other settings"):
        build(warc_dir, news_release.parent, overwrite=True, max_questions=3, work=str(first))


def test_a_key_in_the_llm_spec_reaches_the_server_and_no_file(warc_dir, tmp_path, fake_openai_server, capsys):
    """release.json, the dataset card, the work folders and stderr carry ``?key=REDACTED``; the server
    still gets the key (it answers 401 without it), after the path."""
    from fake_endpoint import prompt_of

    from continuousbench.news.build import cli
    from continuousbench.news.offline import answer

    server = fake_openai_server(reply=lambda body: answer(prompt_of(body)), query_key="k3y-news")
    spec = f"endpoint:{server.url}?key=k3y-news#fake"
    clustering = [f"--{k}={v}" for k, v in TINY_CLUSTERING.items()]
    out = cli(
        [
            "--warc",
            str(warc_dir / "*.warc*"),
            "--size",
            "tiny",
            "--out",
            str(tmp_path),
            "--min_support",
            "2",
            "--llm",
            spec,
            "--max_dropped",
            "1",
            "--tasks",
            "2",
            "--judge_override_calibration",
            *clustering,
        ]
    )
    assert server.paths and all(p.endswith("?key=k3y-news") for p in server.paths)
    assert "key=REDACTED" in (out / "release.json").read_text()
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and b"k3y-news" in p.read_bytes()]
    assert not leaked and "k3y-news" not in "".join(capsys.readouterr())


def test_a_build_of_a_release_being_built_is_refused_naming_the_builder(warc_dir, tmp_path):
    """`build news` takes the release's lock like `build geminon`: one line with the holder's pid, no work."""
    import subprocess
    import sys

    hold = (
        "import sys, time; from pathlib import Path; from continuousbench.release.ids import ReleaseId; "
        "from continuousbench.release.write import release_lock\n"
        "with release_lock(ReleaseId.parse('news-tiny-2026q1'), Path(sys.argv[1])):\n"
        "    print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match=f"news-tiny-2026q1 .* is being built by .*pid {holder.pid}"):
            build(warc_dir, tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert [p.name for p in (tmp_path / ".work").iterdir()] == ["news-tiny-2026q1.lock"]  # no work began


def test_questions_an_earlier_quarter_asked_are_dropped_and_counted(tmp_path):
    import json

    from continuousbench.news.build import without_earlier
    from continuousbench.release.ids import ReleaseId

    for rid, asked in (("news-small-2026q1", ["Who won the  Final?"]), ("news-tiny-2026q3", ["Who lost?"])):
        (tmp_path / rid).mkdir()
        (tmp_path / rid / "release.json").write_text("{}")
        (tmp_path / rid / "names.json").write_text(json.dumps({"questions": asked}))
    questions = [{"question": "who won the final?"}, {"question": "Who lost?"}, {"question": "Who scored?"}]
    kept, avoided = without_earlier(questions, ReleaseId.parse("news-tiny-2026q2"), tmp_path, None)
    assert kept == questions[1:]  # q3 is not earlier than q2; case and spaces do not make a question new
    assert avoided["releases"] == ["news-small-2026q1"] and avoided["dropped_repeated_question"] == 1
