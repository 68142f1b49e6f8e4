"""The built tiny release against the paper's rules (App. G.2-G.3), determinism, refusal and resume."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from datasets import load_dataset

from continuousbench.geminon import build as B
from continuousbench.geminon.realizers.grounding import check_grounding
from continuousbench.geminon.schema import Geminon
from continuousbench.geminon.sizes import get_size
from continuousbench.release.layout import CONFIGS, MANIFEST
from continuousbench.stages import StageProgress

PARTS = tuple(CONFIGS)


@pytest.fixture(scope="module")
def release(tiny_release):
    return {part: load_dataset(str(tiny_release), part) for part in PARTS}


@pytest.fixture(scope="module")
def world(release) -> dict[int, Geminon]:
    return {r["idx"]: Geminon.from_record(r) for r in release["entities"]["train"]}


@pytest.fixture(scope="module")
def unscreened(tmp_path_factory):
    """The tiny release built without closed-book screening (three quarters of a tiny build's time): what
    the builds of the tests of locks and full disks must give, where screening plays no part (a resume
    after screening: test_interrupted_build_resumes_from_finished_stages)."""
    args = B.GeminonBuildArguments(
        size="tiny", out=str(tmp_path_factory.mktemp("unscreened")), closed_book_models=["none"]
    )
    return B.build_release(args, progress=False)


def _docs(release):
    return [r for split in ("train", "validation") for r in release["corpus"][split]]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_part_loads_with_the_manifest_row_counts(tiny_release, release):
    manifest = json.loads((tiny_release / MANIFEST).read_text())
    assert manifest["id"] == "geminon-tiny-2026q1" and manifest["seed"] == 0
    for part, splits in CONFIGS.items():
        assert {s: len(release[part][s]) for s in splits} == manifest["rows"][part]
    assert release["corpus"]["train"].column_names == [
        "id",
        "text",
        "style",
        "subset",
        "entities",
        "mentions",
    ]
    generator = manifest["generator"]
    assert generator["namer"] == "offline" and generator["realizer"] == "template"
    assert generator["pools"]["comparison"]["candidates"] >= 1.5 * generator["pools"]["comparison"]["target"]


def test_corpus_mix_split_and_ids(release):
    spec = get_size("tiny")
    docs = _docs(release)
    public = Counter(d["style"] for d in docs if d["subset"] == "public")
    assert public == spec.mix  # the template realizer drops nothing
    assert len({d["id"] for d in docs}) == len(docs)
    assert all(d["id"].startswith("geminon-tiny-2026q1/") for d in docs)
    validation = release["corpus"]["validation"]
    assert len(validation) == round(spec.corpus_validation_fraction * sum(spec.mix.values()))
    assert set(validation["subset"]) == {"public"}


def test_sensitive_entities_have_exactly_one_train_document(release, world):
    sensitive = {i for i, g in world.items() if g.subset == "sensitive"}
    docs = _docs(release)
    appearances = Counter(e for d in docs for e in d["entities"] if e in sensitive)
    assert appearances == dict.fromkeys(sensitive, 1)
    train_sensitive = [d for d in release["corpus"]["train"] if d["subset"] == "sensitive"]
    assert sorted(d["entities"][0] for d in train_sensitive) == sorted(sensitive)
    for d in train_sensitive:  # the best-covering wiki article states every applicable feature
        (e,) = d["entities"]
        assert d["style"] == "wiki" and set(d["mentions"]) == {f"{e}:{f}" for f in world[e].features()}
    mentioned = {int(m.split(":")[0]) for d in docs if d["subset"] == "public" for m in d["mentions"]}
    assert not mentioned & sensitive


def test_public_documents_never_name_a_sensitive_entity(release, world):
    names = [g.name.lower() for g in world.values() if g.subset == "sensitive"]
    for d in _docs(release):
        if d["subset"] == "public":
            text = d["text"].lower()
            assert not any(n in text for n in names), d["text"]


def test_singleton_questions_have_support_exactly_one(release):
    rows = [r for s in ("validation", "test") for r in release["qa_singleton"][s]]
    assert rows and {r["support_count"] for r in rows} == {1}
    public = [r["support_count"] for s in ("validation", "test") for r in release["qa_public"][s]]
    assert min(public) >= 10  # tiny: ~100 documents per public entity


def test_every_document_states_exactly_its_mentions(release, world):
    problems = {d["id"]: p for d in _docs(release) if (p := check_grounding(d["text"], d["mentions"], world))}
    assert not problems


def test_support_counts_cover_every_entity_feature(release, world):
    rows = release["support_counts"]["train"]
    assert {(r["entity"], r["feature"]) for r in rows} == {
        (i, f) for i, g in world.items() for f in g.features()
    }
    assert all(
        r["subset"] == world[r["entity"]].subset and r["name"] == world[r["entity"]].name for r in rows
    )


def test_quarters_seed_fresh_worlds():
    q1, q2 = (
        B.stage_seeds(0, B.release_id("tiny", "2026q1")),
        B.stage_seeds(0, B.release_id("tiny", "2026q2")),
    )
    assert q1 == B.stage_seeds(0, B.release_id("tiny", "2026q1"))
    assert not set(q1.values()) & set(q2.values())


@pytest.mark.parametrize("quarter", ["2026Q1", "2026q5", "26q1", "2026-q1"])
def test_bad_quarter_is_one_clear_error(quarter, tmp_path):
    with pytest.raises(ValueError, match="YYYYqN"):
        B.build_release(B.GeminonBuildArguments(quarter=quarter, out=str(tmp_path)), progress=False)
    assert not any(tmp_path.iterdir())  # refused before any work


@pytest.mark.slow  # ~12 s: CI only, not the fast lane
def test_cli_build_is_byte_identical_refuses_and_overwrites(invoke, tiny_release, tmp_path):
    args = ["build", "geminon", "--size", "tiny", "--quarter", "2026q1", "--seed", "0", "--out", tmp_path]
    first = invoke(args)
    assert first.exit_code == 0, first.output
    built = tmp_path / "geminon-tiny-2026q1"
    assert _files(built) == _files(tiny_release)  # same seed, other root: the same bytes
    assert not (tmp_path / ".work").exists()

    marker = built / "data" / "corpus" / "train-00000-of-00001.parquet"
    marker.write_bytes(b"stale")
    refused = invoke(args)
    assert refused.exit_code == 2 and "already exists" in refused.output and "--overwrite" in refused.output
    assert marker.read_bytes() == b"stale" and not (tmp_path / ".work").exists()  # refused before any work
    replaced = invoke([*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert _files(built) == _files(tiny_release)


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_build_in_forked_processes_gives_the_same_bytes(tiny_release, tmp_path, monkeypatch):
    """The template realizer's candidate units and render chunks in two forked processes: the release is
    byte-identical to the one built in one process (one render chunk, units drafted in turn)."""
    from continuousbench.geminon import corpus, forked

    monkeypatch.setattr(B, "RENDER_CHUNK", 400)  # several chunks
    monkeypatch.setattr(corpus, "UNIT_CHUNK", 7)  # several pieces per candidate pool
    monkeypatch.setattr(forked, "usable_cores", lambda: 2)  # two workers, even on one core
    pieces = []
    original = forked.ordered_map

    def spy(state, count, realizer):
        pieces.append(count)
        return original(state, count, realizer)

    monkeypatch.setattr(forked, "ordered_map", spy)
    built = B.build_release(B.GeminonBuildArguments(size="tiny", out=str(tmp_path)), progress=False)
    assert len(pieces) == 5 and sum(p > 1 for p in pieces) >= 4  # four candidate pools and the render
    assert _files(built) == _files(tiny_release)


# sha256 (first 16 hex digits) of the tiny release's data files as the code before the build's speed-ups
# (forked render, arrow columns) wrote them: a faster build must publish the same bytes. A deliberate
# change of the release's content updates these (the QA parts changed when they gained their ranked-choice
# `options`, release format 2).
TINY_DATA_SHA256 = {
    "data/corpus/train-00000-of-00001.parquet": "40d629728cf71784",
    "data/corpus/validation-00000-of-00001.parquet": "8343829b6504dc70",
    "data/entities/train-00000-of-00001.parquet": "ac53644d514fb8a3",
    "data/qa_public/test-00000-of-00001.parquet": "860653ed7ac34d2d",
    "data/qa_public/validation-00000-of-00001.parquet": "eb15ce8947adb459",
    "data/qa_singleton/test-00000-of-00001.parquet": "52d25603273884c6",
    "data/qa_singleton/validation-00000-of-00001.parquet": "53e9bb974d1baba4",
    "data/support_counts/train-00000-of-00001.parquet": "9b88c23cb01ee9ac",
}


def test_tiny_release_data_keeps_its_digests(tiny_release):
    import hashlib

    found = {
        name: hashlib.sha256(data).hexdigest()[:16]
        for name, data in _files(tiny_release).items()
        if name.startswith("data/")
    }
    assert found == TINY_DATA_SHA256


@pytest.mark.slow  # ~7 s: CI only, not the fast lane
def test_interrupted_build_resumes_from_finished_stages(tiny_release, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("interrupted")

    with monkeypatch.context() as m:
        m.setattr(B, "assemble", boom)
        with pytest.raises(RuntimeError, match="interrupted"):
            B.build_release(B.GeminonBuildArguments(out=str(tmp_path)), progress=False)
    (work,) = (tmp_path / ".work").iterdir()  # <release id>-<hash of the settings>
    assert work.name.startswith("geminon-tiny-2026q1-")
    assert (work / "world.json").exists() and (work / "selection.json").exists()
    assert list((work / "render").glob("part-*.parquet"))
    assert not (tmp_path / "geminon-tiny-2026q1").exists()

    # a build with other settings neither reuses nor disturbs that work: it starts over in its own folder
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    with monkeypatch.context() as m:
        m.setattr(B, "assemble", boom)
        with pytest.raises(RuntimeError, match="interrupted"):
            B.build_release(B.GeminonBuildArguments(out=str(tmp_path), rounds=7), progress=False)
    other = next(p for p in (tmp_path / ".work").iterdir() if p != work)
    assert B.WorkDir.finished_in(other) == ["render", "selection.json", "selection.parquet", "world.json"]
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == before

    from continuousbench.geminon import corpus, world
    from continuousbench.geminon.realizers.template import TemplateRealizer

    monkeypatch.setattr(world, "build_world", boom)  # finished stages must not run again
    monkeypatch.setattr(corpus, "draft_pool", boom)
    monkeypatch.setattr(TemplateRealizer, "render", boom)
    timings: dict[str, float] = {}
    path = B.build_release(B.GeminonBuildArguments(out=str(tmp_path)), progress=False, timings=timings)
    assert set(timings) == {"render", "qa", "closed-book", "write"}
    assert _files(path) == _files(tiny_release)
    assert list((tmp_path / ".work").iterdir()) == [other]  # the other build's work is kept, said in the log


@pytest.mark.slow
def test_small_selection_gives_public_support_in_the_hundreds(tmp_path):
    """World, candidates and selection of a `small` build (no render): public support >= 100 everywhere."""
    from continuousbench.geminon import qa as Q
    from continuousbench.geminon.realizers import make_realizer
    from continuousbench.geminon.selection import selection_stage
    from continuousbench.geminon.world import build_world

    spec = get_size("small")
    rid = B.release_id("small", "2026q1")
    seeds = B.stage_seeds(0, rid)
    world = build_world(spec, seeds["world"])
    work = B.WorkDir(tmp_path, {"test": True})
    stages = StageProgress(False, {})
    rows = selection_stage(
        work, stages, spec.mix, world, make_realizer("template"), seeds, None, B.ROUNDS, 100
    )
    public = [m for m, s in zip(rows["mentions"], rows["subset"], strict=True) if s == "public"]
    assert len(public) == sum(spec.mix.values())
    support = np.array(
        [r["support_count"] for r in Q.question_rows(Q.mention_matrix(public, world), world, "public")]
    )
    assert len(support) == 13 * 480 and support.min() >= 100


def test_builder_configs_parse_with_the_real_parser(monkeypatch):
    import importlib.util
    import sys

    repo = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("geminon_builder", repo / "builders" / "geminon.py")
    builder = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, builder)  # dataclasses resolve annotations through it
    spec.loader.exec_module(builder)
    configs = sorted((repo / "builders" / "configs").glob("geminon-*.yaml"))
    assert [c.stem for c in configs] == ["geminon-medium", "geminon-small", "geminon-tiny"]
    for config in configs:
        (args,) = builder.make_parser().parse(["--config", str(config), "--seed", "5"])
        assert f"geminon-{args.size}" == config.stem and args.seed == 5 and args.realizer == "template"
    with pytest.raises(ValueError, match="unknown argument"):
        builder.make_parser().parse(["--config", str(configs[0]), "--colour", "red"])


def test_one_llm_spec_is_built_once_for_namer_and_realizer(tmp_path, monkeypatch):
    """The namer's and the realizer's specs are parsed and their generators built once, before any work
    (they were built up to three times: realizer, endpoint check, namer)."""
    from continuousbench import llm

    built = []

    def counting(spec, **options):
        built.append(spec)
        return real(spec, **options)

    class Stop(Exception):
        pass

    def world_stage(work, stages, spec, seed, namer, generator, forbidden):
        assert generator is not None and generator.name == "offline:same"
        raise Stop

    real = llm.make_generator
    monkeypatch.setitem(llm.OFFLINE, "same", lambda prompt, **kw: "[]")
    monkeypatch.setattr(llm, "make_generator", counting)
    monkeypatch.setattr(B, "_world_stage", world_stage)
    with pytest.raises(Stop):
        args = B.GeminonBuildArguments(out=str(tmp_path), namer="offline:same", realizer="offline:same")
        B.build_release(args, progress=False)
    assert built == ["offline:same"]


@pytest.mark.slow
def test_second_build_of_a_release_is_refused_naming_the_first_and_a_killed_build_resumes(
    unscreened, tmp_path
):
    """Two builds of one release started together: the second refuses at once naming the first's pid
    (before, both built into one work folder and raced to publish); the first, killed, resumes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    argv = [
        sys.executable,
        "-m",
        "continuousbench.cli",
        "build",
        "geminon",
        "--size",
        "tiny",
        "--out",
        str(tmp_path),
        "--closed_book_models",
        "none",
    ]
    quiet = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    first = subprocess.Popen(argv, **quiet)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / ".work").glob("*/settings.json")):  # its work has started
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()[0]
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGSTOP)  # held mid-build, whatever the machine's load
        second = subprocess.run(argv, timeout=120, **quiet)
        assert second.returncode == 2, second.stdout
        (line,) = [ln for ln in second.stdout.splitlines() if ln.startswith("error:")]
        assert f"pid {first.pid}" in line and "geminon-tiny-2026q1" in line, second.stdout
        assert not (tmp_path / "geminon-tiny-2026q1").exists()
    finally:
        os.kill(first.pid, signal.SIGKILL)  # killed mid-build: its lock dies with it, its work stays
        first.wait()
    assert list((tmp_path / ".work").glob("*/settings.json"))
    again = subprocess.run(argv, timeout=300, **quiet)
    assert again.returncode == 0, again.stdout
    assert _files(tmp_path / "geminon-tiny-2026q1") == _files(unscreened)
    assert not (tmp_path / ".work").exists()


@pytest.mark.slow
def test_a_full_disk_is_one_line_naming_the_release_and_the_build_resumes(unscreened, tmp_path):
    """Writes past the file size limit (``ulimit -f``, a full disk's stand-in) end the build in one line
    naming where it wrote (before: "[Errno 27] File too large"); the rerun finishes the same release."""
    from hostile import one_error_line, with_file_limit

    argv = ["build", "geminon", "--size", "tiny", "--out", tmp_path, "--closed_book_models", "none"]
    line = one_error_line(with_file_limit(argv, 50_000, tmp_path))
    assert line.startswith(f"error: no space left on the device writing {tmp_path}/"), line
    assert with_file_limit(argv, 2**40, tmp_path).returncode == 0
    assert _files(tmp_path / "geminon-tiny-2026q1") == _files(unscreened)


@pytest.mark.slow  # ~6 s: CI only, not the fast lane
def test_corpus_in_several_row_groups_is_what_plain_arrays_give(tmp_path, monkeypatch):
    """datasets cuts a parquet file into row groups by the arrays' bytes (``_estimate_nbytes``): the
    build's columnar corpus (taken, filtered) must count the bytes that plain arrays of the same rows
    count, and give the same file cut in several row groups, as a large corpus is."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(datasets.config, "MAX_ROW_GROUP_SIZE", "200KB")
    seen, original = {}, B._datasets

    def spy(parts):
        seen["parts"] = original(parts)
        return seen["parts"]

    monkeypatch.setattr(B, "_datasets", spy)
    built = B.build_release(B.GeminonBuildArguments(size="tiny", out=str(tmp_path)), progress=False)
    features = B._features()["corpus"]
    schema = features.arrow_schema
    for split, ds in seen["parts"]["corpus"].items():
        plain = datasets.Dataset.from_dict(
            {k: pa.array(ds.data.column(k).to_pylist(), schema.field(k).type) for k in schema.names},
            features=features,
        )
        assert ds._estimate_nbytes() == plain._estimate_nbytes()
        plain.to_parquet(str(tmp_path / f"{split}.parquet"))
        written = built / "data" / "corpus" / f"{split}-00000-of-00001.parquet"
        assert (tmp_path / f"{split}.parquet").read_bytes() == written.read_bytes()
    assert pq.read_metadata(built / "data" / "corpus" / "train-00000-of-00001.parquet").num_row_groups > 1


def _names(folder: Path) -> set[str]:
    return set(json.loads((folder / "names.json").read_text())["names"])


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_a_later_quarter_draws_no_name_of_an_earlier_one(tmp_path, tiny_release):
    """The earlier quarter here holds exactly the names 2026q2 draws when nothing is avoided."""

    def build(root):
        args = B.GeminonBuildArguments(quarter="2026q2", out=str(root), closed_book_models=["none"])
        folder = B.build_release(args, progress=False)
        return folder, _names(folder)

    _, drawn = build(tmp_path / "alone")
    earlier = tmp_path / "root" / "geminon-tiny-2026q1"
    earlier.mkdir(parents=True)
    for name in ("release.json", "README.md"):  # what listing releases and the root's card read
        (earlier / name).write_bytes((tiny_release / name).read_bytes())
    (earlier / "names.json").write_text(json.dumps({"names": sorted(drawn)}))
    later, names = build(tmp_path / "root")
    assert len(names) == 18 and not names & drawn
    generator = json.loads((later / "release.json").read_text())["generator"]
    assert generator["avoided"]["releases"] == ["geminon-tiny-2026q1"] and generator["avoided"]["names"] == 18
    assert generator["closed_book"]["models"] == []


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_releases_of_the_same_or_a_later_quarter_at_another_size_change_nothing(tmp_path, tiny_release):
    """A rehearsal never poisons the real build: other sizes of the same quarter (and later quarters) are
    not earlier, so their names are not avoided, and the bytes are those built beside 2026q1 alone."""
    import shutil

    def build(root):
        shutil.copytree(tiny_release, root / tiny_release.name)
        args = B.GeminonBuildArguments(quarter="2026q2", out=str(root), closed_book_models=["none"])
        return B.build_release(args, progress=False)

    alone = build(tmp_path / "alone")
    crowded = tmp_path / "crowded"
    for rid in ("geminon-small-2026q2", "geminon-medium-2026q3"):  # holding exactly 2026q2's names
        (crowded / rid).mkdir(parents=True)
        for name in ("release.json", "README.md"):
            (crowded / rid / name).write_bytes((tiny_release / name).read_bytes())
        (crowded / rid / "names.json").write_text(json.dumps({"names": sorted(_names(alone))}))
    assert _files(build(crowded)) == _files(alone)
