"""Private Evolution with a real model behind a real server as its API."""

from __future__ import annotations

import pytest
from test_pe_command import pe_argv

from continuousbench.training.data import load_corpus

pytestmark = pytest.mark.real_llm


def test_pe_with_a_real_server_as_its_api(dp_corpus, dp_model_dir, real_llm_endpoint, tmp_path, invoke):
    argv = pe_argv(dp_corpus, dp_model_dir, real_llm_endpoint, tmp_path / "pe", "--epsilon", "inf")
    argv[argv.index("--iterations") + 1] = "1"
    argv[argv.index("--num_samples") + 1] = "4"
    result = invoke(["pe", *argv, "--variations", "1", "--max_in_flight", "2"])
    assert result.exit_code == 0, result.output
    texts = load_corpus(str(tmp_path / "pe"))["text"]
    assert len(texts) == 4 and all(t.strip() for t in texts)
