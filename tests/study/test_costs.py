"""The plan's cost models (continuousbench/study/costs.py): decoding priced by the bytes a step reads over
the memory bandwidth, with batching; DP-SGD by its clipping's pass factor; an evaluation with its QA
passes; a release not built yet from its size preset."""

from pathlib import Path

import pytest

from continuousbench.study import costs
from continuousbench.study.graph import Job

GEMMA_1B, GEMMA_4B = costs.SHAPES["google/gemma-3-1b"], costs.SHAPES["google/gemma-3-4b"]
A100 = costs.GPUS[costs.DEFAULT_GPU]


def _job(kind: str, **recipe) -> Job:
    return Job(name=f"{kind}/x", kind=kind, argv=(kind,), out=Path("x"), done=Path("x/done"), recipe=recipe)


def test_a_decode_step_reads_the_weights_and_the_batchs_kv_cache_over_the_bandwidth():
    """256 long sequences of a 4B model: each step reads 221 GB (8.6 of weights, the rest KV cache), so it
    takes that over the bandwidth, on an A100 80GB and an H100 alike (their FLOP/s differ by 3.2x), above
    the dispatch floor (72 ms for 34 layers)."""
    work = costs.Work(decodes=[(100, 256, 6000)])
    read = GEMMA_4B.parameters * 2 + 256 * 6000 * GEMMA_4B.kv_bytes
    assert 100 * (costs.STEP_S + A100.layer_s * GEMMA_4B.layers) < costs.seconds(work, GEMMA_4B, A100)
    assert costs.seconds(work, GEMMA_4B, A100) == pytest.approx(100 * read / (A100.bandwidth * A100.mbu))
    h100 = costs.GPUS["h100"]
    assert costs.seconds(work, GEMMA_4B, h100) == pytest.approx(100 * read / (h100.bandwidth * h100.mbu))


def test_batching_amortises_a_decode_step_down_to_its_floor():
    """Sampling 200,000 documents of 256 tokens (Fig. 3's synthesis) costs the steps, not the FLOPs: 32 at
    a time it is hours of eager decode steps; the FLOPs alone (the plan before) were 0.06 GPU-hours."""

    def seconds(batch: int) -> float:
        job = _job("synthesize", num_samples=200_000, max_new_tokens=256, batch_size=batch)
        return costs.seconds(costs.work(job, GEMMA_1B, None, "geminon"), GEMMA_1B, A100)

    one, wide = seconds(32), seconds(512)
    flops_only = 2 * GEMMA_1B.parameters * 200_000 * 256 / (A100.flops * A100.mfu)
    floor = 6250 * 256 * (costs.STEP_S + A100.layer_s * GEMMA_1B.layers)
    assert one == pytest.approx(floor) and one > 30 * flops_only
    assert wide < one / 10


def test_dp_sgd_costs_its_clipping_passes():
    plain = _job("train-generator", steps=100, samples_per_step=512, tuning="lora")
    plain = costs.work(plain, GEMMA_1B, None, "")
    ghost = costs.work(
        _job(
            "train-generator",
            steps=100,
            expected_batch_size="auto",
            physical_batch_size=512,
            epsilon=10,
            clipping="ghost",
            tuning="lora",
        ),
        GEMMA_1B,
        None,
        "",
    )
    assert ghost.flops / plain.flops == pytest.approx(1.71)  # ghost clipping's second backward pass
    lora = GEMMA_1B.lora_parameters(128)  # 104M: LoRA's own matmuls count too
    assert plain.flops == pytest.approx((4 * GEMMA_1B.parameters + 6 * lora) * 100 * 512 * 256)
    assert 1.03e8 < lora < 1.05e8


def test_an_evaluation_counts_its_validation_and_test_qa_passes():
    """Before: training alone (validation every eval_steps x 1,248 questions and the test set left out)."""
    rows = costs.preset_rows("geminon", "small")
    assert rows["qa_public"] == {"validation": 1248, "test": 4992} and rows["qa_singleton"]["test"] == 1248
    assert rows["corpus"]["train"] == 200_120

    def hours(**recipe):
        return (
            costs.seconds(
                costs.work(_job("evaluate", tuning="full", **recipe), GEMMA_1B, rows, "geminon"),
                GEMMA_1B,
                A100,
            )
            / 3600
        )

    trained = hours(steps=10_000, eval_steps=500)
    assert hours(steps=10_000, eval_steps=250) > trained > hours(steps=10_000, eval_steps=10_000)
    assert hours(steps=0) > 0  # no training: the test set is still answered and ranked


def test_a_model_folder_gives_its_own_shape(tiny_model_dir):
    shape = costs.shape_of(str(tiny_model_dir), {})
    assert shape is not None and shape.layers >= 1 and 1e5 < shape.parameters < 1e7
    assert costs.shape_of("org/unknown-model", {}) is None
    assert costs.shape_of("org/unknown-model", {"org/unknown-model": 7e9}).parameters == 7e9
