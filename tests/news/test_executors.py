"""The parallel stages on Slurm and Ray (continuousbench.news.executors): the same output as the local
executor. On Slurm a stage is queued, run by the cluster and published on ``--resume``."""

from __future__ import annotations

import itertools
import json

import pytest
from fake_slurm import FakeSlurm

from continuousbench.news import dedup, extract
from continuousbench.news.executors import queued
from continuousbench.news.shards import read_rows


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    cluster = FakeSlurm(tmp_path / "slurm")
    monkeypatch.setenv("PATH", cluster.path)
    monkeypatch.setenv("FAKE_SLURM_QUEUE", str(cluster.queue))
    return cluster


def _rows(folder) -> list[dict]:
    return sorted(read_rows(folder).to_pylist(), key=lambda row: row["url"])


def _kind(job: dict) -> str:
    return "merge_stats" if "merge_stats" in job["script"] else "pipeline"


def _same_output(folder, local) -> bool:
    """The same articles (shards may split them differently) and the same counts as the local run."""
    stats = [json.loads((f / "stats.json").read_text()) for f in (folder, local)]
    return _rows(folder) == _rows(local) and stats[0] == stats[1]


@pytest.mark.slow
def test_extract_then_dedup_on_slurm_publish_what_the_local_executor_does(
    slurm, warc_dir, extracted, deduped, tmp_path, capsys
):
    on_slurm = ["--executor", "slurm", "--partition", "cpu", "--tasks", "2"]
    out = tmp_path / "extract"
    argv = ["--warc", str(warc_dir / "*.warc*"), "--output", str(out), "--timeout", "30", *on_slurm]
    extract.cli(argv)
    assert capsys.readouterr().out.strip() == queued(str(out))
    assert not (out / "data").exists()  # nothing is published while the jobs are queued
    with pytest.raises(SystemExit):  # a rerun before the jobs ran would queue a second copy of them
        extract.cli([*argv, "--resume"])
    assert "Slurm jobs 1 of this stage are still queued or running" in capsys.readouterr().err
    assert len(list(slurm.queue.glob("*.json"))) == 2  # the pipeline and its stats merge, once

    jobs = slurm.run()  # one array job of two tasks, then datatrove's stats merge after it
    assert [(_kind(job), job["tasks"], job["dependency"]) for job in jobs] == [
        ("pipeline", 2, ""),
        ("merge_stats", 1, "afterok:1"),
    ]
    assert extract.cli([*argv, "--resume"]) == out
    assert _same_output(out, extracted)

    deduped_out = tmp_path / "dedup"
    argv = ["--input", str(out), "--output", str(deduped_out), *on_slurm]
    assert dedup.cli(argv) == queued(str(deduped_out))
    jobs = slurm.run()
    pipelines = [job for job in jobs if _kind(job) == "pipeline"]  # signatures, duplicates, drop
    assert [job["tasks"] for job in pipelines] == [2, 1, 2]
    for before, after in itertools.pairwise(pipelines):  # each waits for the one before
        assert after["dependency"] == f"afterok:{before['id']}"
    assert dedup.cli([*argv, "--resume"]) == deduped_out
    assert _same_output(deduped_out, deduped)


@pytest.fixture
def ray_cluster():
    """A local Ray cluster of two CPUs in this process (the executor uses the one already started)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_extract_then_dedup_on_ray_publish_what_the_local_executor_does(
    ray_cluster, warc_dir, extracted, deduped, tmp_path
):
    on_ray = ["--executor", "ray", "--tasks", "2", "--workers", "2", "--mem_per_cpu_gb", "0.5"]
    out = extract.cli(
        [
            "--warc",
            str(warc_dir / "*.warc*"),
            "--output",
            str(tmp_path / "extract"),
            "--timeout",
            "30",
            *on_ray,
        ]
    )
    assert out == tmp_path / "extract" and _same_output(out, extracted)
    out = dedup.cli(["--input", str(out), "--output", str(tmp_path / "dedup"), *on_ray])
    assert out == tmp_path / "dedup" and _same_output(out, deduped)
