"""A real small instruct model (SmolLM2-135M-Instruct behind a real OpenAI-compatible server) as judge:
its calibration figures are measured and recorded, and the gate refuses it in one line naming them."""

from __future__ import annotations

import pytest

from continuousbench.errors import UserError
from continuousbench.llm import make_generator
from continuousbench.scoring.judge import Judge, calibrate, calibration_cases, gate, identity

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]  # 40 requests to a CPU model: ~1-2 min


def test_a_real_small_judge_gets_its_figures_recorded(real_llm_endpoint, tmp_path):
    judge = Judge(make_generator(real_llm_endpoint, cache_dir=tmp_path), real_llm_endpoint)
    figures = calibrate(judge)
    n = len(calibration_cases())
    assert figures["cases"] == n and judge.stats["judged"] == n
    assert 0 <= figures["accuracy"] <= 1 and len(figures["missed"]) == round((1 - figures["accuracy"]) * n)
    print(f"\nSmolLM2-135M-Instruct as judge: {figures}")  # the measured figures, in the test log
    recorded = gate(figures, "smollm2", min_accuracy=0.0, max_false_accept=1.0)
    assert recorded["passed"] and recorded["accuracy"] == figures["accuracy"]
    if figures["accuracy"] < 0.85 or figures["false_accept"] > 0.2:  # what a 135M model is expected to do
        with pytest.raises(UserError, match=rf"accuracy {figures['accuracy']:.0%} \(needs >= 85%\)"):
            gate(figures, real_llm_endpoint)
    assert identity(real_llm_endpoint)["kind"] == "endpoint"
    # every answer, unparseable ones too, is in the endpoint's cache: a rerun asks nothing
    again = Judge(make_generator(real_llm_endpoint, cache_dir=tmp_path), real_llm_endpoint)
    assert calibrate(again) == figures and again.stats["judged"] == 0 and again.stats["cached"] == n
