"""The harness's QA with the few-shot block run once (``PrefixCache``) against a full prefill of every
prompt: the same greedy answers and ranked picks? and CPU seconds of each, alternated, one thread.

    python benchmarks/qa_prefix.py --release <demo>/releases/geminon-tiny-2026q1 --models <model> ...

Models: the demo's base (continuousbench/demo/base), a demo evaluate run's ``model/``, a generator's
LoRA adapter. Greedy answers: every validation and test question; ranked: every test question.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True)
    parser.add_argument("--models", nargs="+", required=True)
    args = parser.parse_args()
    import torch

    import continuousbench.harness.ranked as ranked
    import continuousbench.llm.local as local
    from continuousbench.release.load import load_release
    from continuousbench.scoring.prompts import qa_prompt
    from continuousbench.training.modeling import load_model_and_tokenizer

    torch.set_num_threads(1)
    splits = {
        (p, s): load_release(args.release, p, s)
        for p in ("qa_public", "qa_singleton")
        for s in ("validation", "test")
    }
    prompts = [qa_prompt(q) for qa in splits.values() for q in qa["question"]]
    tests = [qa for (_, s), qa in splits.items() if s == "test"]
    options, real = ranked.release_options(args.release, 0), ranked.shared_prefix
    print(
        f"load average {os.getloadavg()[0]:.1f}; {len(prompts)} greedy answers, "
        f"{sum(map(len, tests))} ranked questions"
    )
    print(
        "| model | answers identical | picks identical | max answer-NLL diff | greedy CPU s (full / prefix) "
        "| ranked CPU s (full / prefix) |\n| --- | --- | --- | ---: | ---: | ---: |"
    )
    for path in args.models:
        model, tokenizer = load_model_and_tokenizer(path)
        model = model.float()
        got: dict = {}
        for _ in range(2):
            for reuse in (False, True):
                started = time.process_time()
                with torch.inference_mode():
                    answers = local.greedy_answers(
                        model, tokenizer, prompts, batch_size=64, max_new_tokens=24, reuse_prefix=reuse
                    )
                middle = time.process_time()
                ranked.shared_prefix = real if reuse else (lambda *a: None)
                picks = [ranked.rank(model, tokenizer, qa, options, track="geminon") for qa in tests]
                ranked.shared_prefix = real
                got.setdefault(reuse, []).append(
                    (answers, picks, middle - started, time.process_time() - middle)
                )
        (full, cached) = got[False][0], got[True][0]
        nll = max(
            abs(a - b)
            for f, c in zip(full[1], cached[1], strict=True)
            for a, b in zip(f[3], c[3], strict=True)
        )
        same = all(f[:3] == c[:3] for f, c in zip(full[1], cached[1], strict=True))
        greedy = [min(r[2] for r in got[k]) for k in (False, True)]
        rank_s = [min(r[3] for r in got[k]) for k in (False, True)]
        print(
            f"| {path} | {full[0] == cached[0]} | {same} | {nll:.1e} | {greedy[0]:.1f} / {greedy[1]:.1f} "
            f"| {rank_s[0]:.1f} / {rank_s[1]:.1f} |"
        )


if __name__ == "__main__":
    main()
