"""Hostile inputs, one line each: what a new user might type, and the one line they must get back.

THE place for a new hostile input: add one line to ``CLI`` (a command line) or ``API`` (a Python call).
``CLI`` runs ``continuousbench <argv>`` through the real dispatcher. A case is an argv, or a function of
:class:`hostile.Env` that sets things up first and returns one (``e.file``, ``e.release``, ``e.model``,
``e.evaluate``...: see tests/hostile.py), the exit status, and a fragment of the message. Every case is
also held to the rules every command keeps:

* a failure (status 2) is exactly one line ``error: ...``, the last on stderr, naming an option, a
  value or a file of its command line; Ctrl-C (130) ends with one ``interrupted: ...`` line;
* never a traceback;
* no file that existed before the command is changed or removed (``may_change`` lists the ones a
  successful case is asked to replace), and a failed new run leaves no work folder behind that would
  make the next attempt ask for ``--resume`` (``keeps_work`` marks a case that legitimately keeps one).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from pathlib import Path

import pytest
from hostile import RID, Env, after, dead_endpoint, with_option

from continuousbench.commands import one_line

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_ONLY = pytest.mark.skipif(IS_ROOT, reason="root writes into read-only folders")
SLOW = pytest.mark.slow
ONE_EVALUATOR = "name: s\nrelease: r\nevaluators: [{name: e, config: c}]\n"  # a study file's start
DEMO = Path(__file__).resolve().parents[1] / "continuousbench" / "demo"  # the demo's recipes and base model
DEMO_RECIPE = DEMO / "configs" / "geminon-tiny-demo.yaml"
DP_EVALUATE = tuple(
    shlex.split("--epsilon 10 --sampling poisson --expected_batch_size 8 --micro_batch_size 4")
)


def case(argv, code: int, message: str, *, id: str, may_change=(), keeps_work=False, marks=()):
    return pytest.param(argv, code, message, may_change, keeps_work, id=id, marks=marks)


def _unscreened(manifest: dict) -> None:
    """A manifest that records no closed-book screening (a release built with --closed_book_models none)."""
    from continuousbench.release.write import DIGEST_KEY, manifest_digest

    manifest["generator"]["closed_book"] = {"models": []}
    manifest[DIGEST_KEY] = manifest_digest(manifest)


def mauve(e: Env, *extra: str) -> list[str]:
    e.file("cand.jsonl", '{"text": "a"}\n')
    return [
        "mauve",
        "--candidate",
        "cand.jsonl",
        "--reference",
        str(e.release()),
        "--model",
        str(e.fixture("tiny_model_dir")),
        *extra,
    ]


def news_extract(warc: object) -> list[str]:
    return ["news", "extract", "--warc", str(warc), "--output", "extracted"]


def study(e: Env, text: str, *extra: str) -> list[str]:
    """``study`` on the study file ``text`` (``--plan`` unless other options are given)."""
    return ["study", "--config", str(e.file("s.yaml", text)), *(extra or ["--plan"])]


def news_facts(e: Env, llm: str, *extra: str) -> list[str]:
    return ["news", "facts", "--input", str(e.clustered()), "--output", "facts", "--llm", llm, *extra]


def without_lora(argv: list[str]) -> list[str]:
    """``argv`` without its ``--lora_r`` option (prompt tuning refuses LoRA options first)."""
    i = argv.index("--lora_r")
    return argv[:i] + argv[i + 2 :]


def memorization(e: Env, *extra: str) -> list[str]:
    """The probe's command line; an option of ``extra`` given again overrides (the later one wins)."""
    return [
        "memorization",
        "--model",
        str(e.fixture("tiny_model_dir")),
        "--release",
        str(e.release()),
        "--output",
        "m.json",
        *extra,
    ]


CLI = [
    # --- the parser: YAML, flags, ranges (every command shares it) ---
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: ten\n")], 2,
         "seed = 'ten' has the wrong type (expected int)", id="yaml-wrong-type"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: [1\n")], 2,
         "r.yaml is not valid YAML at line", id="yaml-malformed"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "- seed\n")], 2,
         "must hold a mapping", id="yaml-not-a-mapping"),
    case(lambda e: ["evaluate", "--config", e.file("r.yaml", "bf16: maybe\n")], 2,
         "bf16 = 'maybe' has the wrong type (expected true or false)", id="yaml-bool-maybe"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "env: 5\n")], 2,
         "env must be a mapping", id="yaml-env-not-a-mapping"),
    case(lambda e: ["build", "geminon", f"--config={e.file('r.yaml', 'colour: red')}"], 2,
         "unknown key(s) colour", id="yaml-unknown-key"),
    case(["build", "geminon", "--config", "no.yaml"], 2, "--config no.yaml does not exist",
         id="yaml-missing"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: 1\nseed: 2\n")], 2,
         "r.yaml sets seed twice; keep one of them", id="yaml-duplicate-key"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: 1\n"), "--config", "r.yaml"], 2,
         "--config is given more than once", id="yaml-config-twice"),
    case(["build", "geminon", "--out", ""], 2, "--out is empty; give it a value", id="empty-option-value"),
    case(lambda e: e.evaluate("--output_dir", str(e.fixture("tiny_release") / "run")), 2,
         "is inside", id="evaluate-output-inside-its-release"),
    case(lambda e: ["train-generator", "--release", str(e.fixture("tiny_release")), "--corpus", "c.jsonl",
                    "--model", str(e.fixture("tiny_model_dir")), "--output_dir", "gen"], 2,
         "both name the training data; pass one", id="generator-release-and-corpus"),
    case(["build", "geminon", "--colour", "red"], 2, "unknown argument(s) ['--colour', 'red']",
         id="unknown-flag"),
    case(["build", "geminon", "--seed", "abc"], 2,
         "argument --seed: invalid int value: 'abc'; see `continuousbench build geminon --help`",
         id="not-an-int"),
    case(["build", "geminon", "--overwrite", "maybe"], 2, "argument --overwrite: Truthy", id="not-a-bool"),
    case(["build", "geminon", "--seed", "-1"], 2, "--seed -1 is out of range", id="build-negative-seed"),
    case(["build", "geminon", "--oversample", "0.5"], 2, "--oversample 0.5 is out of range: it must lie in",
         id="build-oversample-below-1"),
    case(["mauve"], 2, "the following arguments are required: --candidate, --reference, --model",
         id="mauve-required"),
    case(["mauve", "--help"], 0, "[mauve]", id="mauve-help-names-the-extra"),
    case(["--help"], 0, "MAUVE of a corpus against a release corpus (needs the [mauve] extra)",
         id="help-names-the-extra"),
    case(["frobnicate"], 2, "unknown command 'frobnicate'", id="unknown-command"),
    case(["publish", "model", "x"], 2, "unknown command 'model' for continuousbench publish",
         id="publish-unknown-target"),
    # --- paths: files, read-only, system folders, ~ ---
    case(lambda e: ["build", "geminon", "--out", e.file("afile")], 2, "--out afile is a file, not a folder",
         id="build-out-is-a-file"),
    case(lambda e: ["build", "geminon", "--out", e.file("afile") / "sub"], 2, "--out afile/sub cannot be",
         id="build-out-under-a-file"),
    case(["build", "geminon", "--out", "/proc/self/cb"], 2, "--out /proc/self/cb cannot be written",
         id="build-out-in-proc"),
    case(lambda e: ["build", "geminon", "--out", e.read_only() / "r"], 2, "cannot be written",
         id="build-out-read-only", marks=ROOT_ONLY),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "out: ~/releases\n")], 0,
         f"user/releases/{RID}", id="build-out-tilde-in-yaml", marks=SLOW),
    case(lambda e: ["metric", "install", "--cache_dir", e.file("afile")], 2, "--cache_dir afile is a file",
         id="metric-cache-dir-is-a-file"),
    case(["metric", "install", "--cache_dir", "/proc/cb"], 2, "is a system folder",
         id="metric-cache-dir-in-proc"),
    case(lambda e: ["demo", "--out", e.file("afile")], 2, "--out afile is a file", id="demo-out-is-a-file"),
    case(lambda e: after(e.file("notes.txt"), ["demo", "--out", ".", "--overwrite"]), 2,
         "is not a demo folder", id="demo-overwrite-would-wipe-cwd"),
    case(["demo", "--threads", "0"], 2, "--threads 0 is out of range", id="demo-threads-0"),
    # --- study ---
    case(lambda e: ["study", "--config", e.file("s.yaml", "name: s\nrelease: r\ncolour: red\n"), "--plan"], 2,
         "colour: Extra inputs are not permitted", id="study-unknown-key"),
    case(lambda e: ["study", "--config", e.file("s.yaml", "name: s\n"), "--plan"], 2,
         "give exactly one of release", id="study-no-release"),
    case(lambda e: ["study", "--config", e.file("s.yaml", "name: s\nrelease: r\ncompare: [[syn, real]]\n"),
                    "--plan"], 2, "compare names unknown corpora", id="study-compare-unknown-corpus"),
    case(["study", "--config", "missing.yaml"], 2, "missing.yaml does not exist", id="study-file-missing"),
    case(lambda e: ["study", "--config", e.file("s.yaml", f"{ONE_EVALUATOR}report: {{rows: {{x: e/syn}}}}\n"),
                    "--plan"], 2,
         "report row x names e/syn, not an <evaluator>/<corpus>", id="study-report-row-unknown"),
    case(lambda e: ["study", "--config", e.file("s.yaml", f"{ONE_EVALUATOR}report: {{rows: {{x: e/real}}, "
                                                          "findings: {syn: x}}\n"), "--plan"],
         2, "report findings map each of none, real, syn", id="study-report-findings-roles"),
    case(lambda e: ["study", "--config", e.file("s.yaml", "name: s\nrelease: r\n"), "--executor", "slurm"], 2,
         "needs --partition", id="study-slurm-without-partition"),
    # --- build: existing releases, stale work, generators ---
    case(lambda e: after(e.release(), ["build", "geminon"]), 2, "already exists at", id="build-exists"),
    case(lambda e: after(e.release(), e.file(f"home/{RID}/notes"), ["build", "geminon", "--overwrite"]),
         2, "holds files that are not part of release", id="build-overwrite-keeps-user-files"),
    case(lambda e: e.stale_work(), 0, f"home/{RID}", id="build-past-stale-work-of-other-settings",
         marks=SLOW),
    case(["build", "geminon", "--resume"], 2, f"--resume: nothing to resume: no unfinished build of {RID}",
         id="build-resume-nothing"),
    case(lambda e: after(e.unfinished_build("--realizer", "offline:x", "--seed", "3"),
                         ["build", "geminon", "--realizer", "offline:x", "--seed", "4", "--resume"]), 2,
         "was started with other settings: seed 3 (now 4); rerun with those", id="build-resume-other-seed"),
    case(lambda e: after(e.unfinished_build("--realizer", "endpoint:http://127.0.0.1:9/v1#m"),
                         ["build", "geminon", "--resume", "--sensitive_candidates", "4"]), 2,
         "realizer 'endpoint:http://127.0.0.1:9/v1#m' (now 'template'), sensitive_candidates 100 (now 4)",
         id="build-resume-other-realizer"),
    case(lambda e: after(e.offline_api("x", lambda prompt, **s: "[]"),
                         e.unfinished_build("--realizer", "offline:x", drafts='{"drafts": 3}\n'),
                         ["build", "geminon", "--realizer", "offline:x", "--resume"]), 2,
         "drafts.jsonl line 1 is damaged (drafts of llm:offline:x); delete it",
         id="build-resume-damaged-drafts"),
    case(lambda e: after(e.ctrl_c_on_import(), ["build", "geminon"]), 130, "interrupted: nothing was written",
         id="build-ctrl-c-in-its-first-second"),
    case(["build", "geminon", "--realizer", "nonsense"], 2, "cannot make a text generator from 'nonsense'",
         id="build-bad-realizer"),
    case(lambda e: ["build", "geminon", "--namer", dead_endpoint()], 2, "does not answer",
         id="build-dead-endpoint-before-work"),
    # --- verify ---
    case(lambda e: ["verify", e.manifest(lambda m: m.update(seed=9))], 2, "release.json was edited",
         id="verify-edited-seed"),
    case(lambda e: ["verify", e.manifest(lambda m: m.pop("manifest_sha256"))], 2, "has no manifest_sha256",
         id="verify-manifest-without-digest"),
    case(lambda e: ["verify", e.manifest(raw=b"{not json")], 2, "release.json is malformed",
         id="verify-not-json"),
    case(lambda e: ["verify", e.manifest(raw=b"\xff\xfe{}")], 2, "is malformed (UnicodeDecodeError",
         id="verify-not-utf8"),
    case(lambda e: ["verify", e.manifest(raw=b"[1, 2]")], 2, "release.json is malformed",
         id="verify-json-list"),
    case(lambda e: ["verify", e.tamper()], 2, "checksum mismatch for", id="verify-tampered-parquet"),
    case(lambda e: ["verify", e.file("afile")], 2, "afile is a file, not a release", id="verify-a-file"),
    case(["verify", "./nope"], 2, "release folder ./nope does not exist", id="verify-missing-folder"),
    case(["verify", "/proc"], 2, "/proc is not a release folder: it has no release.json", id="verify-proc"),
    case(["verify", "geminon-tiny-2026q9"], 2, "bad release id", id="verify-bad-quarter"),
    case(["verify", "geminon-medium-2026q2"], 2,
         "continuousbench build geminon --size medium --quarter 2026q2",
         id="verify-unknown-release"),
    case(["verify", RID, RID], 2, "unknown argument(s)", id="verify-two-releases"),
    case(["verify"], 2, "no release given", id="verify-nothing"),
    # --- evaluate: ranges, checked where they are parsed ---
    # --- evaluate --epsilon (direct DP fine-tuning) ---
    case(lambda e: e.evaluate(*DP_EVALUATE, "--epsilon", "0"), 2, "--epsilon",
         id="dp-direct-epsilon-0"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--delta", "1"), 2, "--delta",
         id="dp-direct-delta-1"),
    *[case(lambda e, d=d: e.evaluate(*DP_EVALUATE, "--delta", d), 2, f"--delta {d} is not below 1/n = ",
           id=f"dp-direct-delta-{d}") for d in ("0.5", "0.9999999")],
    case(lambda e: e.evaluate(*DP_EVALUATE, "--clip_norm", "0"), 2, "--clip_norm",
         id="dp-direct-clip-norm-0"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--sampling", "uniform"), 2, "--sampling",
         id="dp-direct-sampling-unknown"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--tuning", "full"), 2, "on LoRA adapters only",
         id="dp-direct-full-tuning"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--steps", "0"), 2, "drop --epsilon",
         id="dp-direct-no-steps"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--expected_batch_size", "many"), 2,
         "--expected_batch_size must be a number or auto",
         id="dp-direct-batch-not-a-number"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--expected_batch_size", "100000"), 2,
         "--expected_batch_size 100000 is larger than the",
         id="dp-direct-batch-over-n"),
    case(lambda e: e.evaluate(*DP_EVALUATE, "--sampling", "truncated_poisson",
                              "--expected_batch_size", "auto", "--physical_batch_size", "5000"), 2,
         "--physical_batch_size 5000 must be smaller than the dataset",
         id="dp-direct-physical-batch-over-n"),
    case(lambda e: e.evaluate("--qa_test_limit", "-5"), 2, "--qa_test_limit -5 is out of range",
         id="evaluate-qa-test-limit-negative"),
    case(lambda e: e.evaluate("--qa_eval_limit", "0"), 2, "--qa_eval_limit 0 is out of range",
         id="evaluate-qa-eval-limit-0"),
    case(lambda e: e.evaluate("--replay_fraction", "1"), 2, "--replay_fraction 1.0 is out of range",
         id="evaluate-replay-fraction-1"),
    case(lambda e: e.evaluate("--steps", "-1"), 2, "--max_steps -1 is out of range",
         id="evaluate-steps-negative"),
    case(lambda e: e.evaluate("--learning_rate", "0"), 2, "--learning_rate 0.0 is out of range",
         id="evaluate-learning-rate-0"),
    case(lambda e: e.evaluate("--lora_r", "0"), 2, "--lora_r 0 is out of range", id="evaluate-lora-rank-0"),
    case(lambda e: e.evaluate("--max_new_tokens", "0"), 2, "--max_new_tokens 0 is out of range",
         id="evaluate-max-new-tokens-0"),
    case(lambda e: e.evaluate("--adam_beta2", "1"), 2, "--adam_beta2 1.0 is out of range",
         id="evaluate-beta2-1"),
    case(lambda e: e.evaluate("--max_document_blocks", "0"), 2, "--max_document_blocks 0 is out of range",
         id="evaluate-document-blocks-0"),
    # --- evaluate: the run folder ---
    case(lambda e: e.evaluate(drop=("--output_dir",)), 2, "--output_dir is missing",
         id="evaluate-no-output-dir"),
    case(lambda e: after(e.file("run", "not a folder"), e.evaluate()), 2, "is a file, not a folder",
         id="evaluate-output-dir-is-a-file"),
    case(lambda e: after(e.file("run/results.json", "{}"), e.evaluate()), 2,
         "was not written by `continuousbench evaluate`", id="evaluate-foreign-results-json"),
    case(lambda e: e.evaluate("--resume"), 2, "nothing to resume", id="evaluate-resume-nothing"),
    case(lambda e: after(e.held("run"), e.evaluate("--overwrite")), 2,
         "run is in use by another continuousbench command (pid ", id="evaluate-folder-in-use"),
    case(lambda e: after(e.held("run"), e.evaluate("--resume")), 2, "(pid ",
         id="evaluate-resume-folder-in-use"),
    case(lambda e: after(e.file("gen/.continuousbench-train-generator.json", '{"names": []}'),
                         e.evaluate(out="gen")), 2,
         "gen holds the output of `continuousbench train-generator`; choose another folder, or pass",
         id="evaluate-into-a-generator-folder"),
    case(lambda e: after(e.finished_run(light=True), [*e.synthesize(), "--output_dir", "run"]), 2,
         "holds the output of `continuousbench evaluate`", id="synthesize-into-an-evaluate-run"),
    case(lambda e: after(e.finished_run(light=True), [*e.train_generator(), "--output_dir", "run"]), 2,
         "holds the output of `continuousbench evaluate`", id="train-generator-into-an-evaluate-run"),
    case(lambda e: after(e.finished_run(light=True),
                         ["audit", *e.train_generator()[1:], "--output_dir", "run"]), 2,
         "holds the output of `continuousbench evaluate`", id="audit-into-an-evaluate-run"),
    case(lambda e: after(e.release(), ["leakage", "--release", RID, "--corpus", "c.jsonl", "--output",
                                       f"home/{RID}/leak.json"]), 2,
         "would be written into home/geminon-tiny-2026q1, a release folder",
         id="leakage-output-into-a-release"),
    # --- evaluate: the corpus ---
    case(lambda e: e.evaluate("--corpus", e.parquet("c.parquet", {"text": []})), 2, "is empty",
         id="evaluate-corpus-empty"),
    case(lambda e: e.evaluate("--corpus", e.file("c.txt", "")), 2, "c.txt is empty",
         id="evaluate-corpus-txt-empty"),
    case(lambda e: e.evaluate("--corpus", e.file("c.txt", "\n\n  \n")), 2, "c.txt is empty",
         id="evaluate-corpus-txt-blank"),
    case(lambda e: e.evaluate("--corpus", e.parquet("c.parquet", {"body": ["a", "b"]})), 2,
         "pass --text_column", id="evaluate-corpus-without-text-column"),
    case(lambda e: e.evaluate("--corpus", e.file("c.txt", b"Alpha.\n\nBeta \xff.\n")), 2,
         "c.txt is not UTF-8 text: line 3", id="evaluate-corpus-txt-not-utf8"),
    case(lambda e: e.evaluate("--corpus", e.file("c.jsonl", b'{"text": "a"}\n{"text": "\xe9"}\n')), 2,
         "line 2", id="evaluate-corpus-jsonl-not-utf8"),
    case(lambda e: e.evaluate("--corpus", "nobody/no-such-corpus"), 2, "the Hub is off",
         id="evaluate-corpus-unknown-hub-id-offline"),
    case(lambda e: e.evaluate("--replay_corpus", "missing.parquet"), 2, "--replay_corpus missing.parquet",
         id="evaluate-replay-corpus-missing"),
    # --- evaluate: the model ---
    case(lambda e: e.evaluate(model=e.model("no-tokenizer")), 2, "has no tokenizer",
         id="evaluate-model-without-tokenizer"),
    case(lambda e: e.evaluate(model=e.model("half-weights")), 2, "model.safetensors is damaged",
         id="evaluate-model-weights-damaged"),
    case(lambda e: e.evaluate("--tuning", "full", model=e.model("encoder")), 2,
         "is not a causal language model checkpoint", id="evaluate-model-is-an-encoder"),
    case(lambda e: e.evaluate(model=e.model("seq2seq")), 2, "is a t5 model, not a causal language model",
         id="evaluate-model-is-seq2seq", marks=SLOW),
    case(lambda e: e.evaluate(model=e.model("short-context")), 2, "reads at most 128",
         id="evaluate-prompt-longer-than-the-context"),
    # --- evaluate: the judge, found before training ---
    case(lambda e: e.evaluate("--judge", dead_endpoint()), 2, "does not answer", id="evaluate-judge-down"),
    case(lambda e: e.evaluate("--judge", "offline:nobody"), 2, "cannot make a text generator",
         id="evaluate-judge-unknown-backend"),
    case(lambda e: e.evaluate("--judge", f"endpoint:{e.server(reply=lambda body: 'Perhaps.')}#fake"), 2,
         "instead of 0 or 1", id="evaluate-judge-answers-nonsense"),
    case(lambda e: e.evaluate("--judge", f"endpoint:{e.server(reply=lambda body: '1')}#fake"), 2,
         "#fake failed calibration on 40 cases: accuracy 50% (needs >= 85%), false accepts 100%",
         id="evaluate-judge-always-one"),
    # --- evaluate --overwrite whose new attempt fails: the finished run is kept as it was ---
    case(lambda e: after(e.finished_run(), e.evaluate("--overwrite", model=e.model("half-weights"))), 2,
         "model.safetensors is damaged", id="evaluate-overwrite-damaged-model"),
    case(lambda e: after(e.finished_run(),
                         e.evaluate("--overwrite", "--corpus", e.parquet("c.parquet", {"text": []}))),
         2, "is empty", id="evaluate-overwrite-empty-corpus"),
    case(lambda e: after(e.finished_run(), e.evaluate("--overwrite", "--judge", dead_endpoint())), 2,
         "does not answer", id="evaluate-overwrite-judge-down"),
    case(lambda e: after(e.finished_run(), e.interrupt_training(2), e.evaluate("--overwrite", steps=3)), 130,
         "interrupted: a previous run in --output_dir is untouched", id="evaluate-overwrite-ctrl-c",
         keeps_work=True, marks=SLOW),
    case(lambda e: after(e.disk_full(at=2), e.evaluate(steps=3)), 2,
         "no space left on the device writing", id="evaluate-disk-full", keeps_work=True, marks=SLOW),
    # --- evaluate --resume with a changed run: refused, the checkpoints kept ---
    *[case(lambda e, change=change: e.killed_run(*change), 2, message, id=f"resume-{name}", keeps_work=True)
      for change, message, name in [
          (("--learning_rate", "2e-3"), "learning_rate: 0.001 -> 0.002", "changed-learning-rate"),
          (("--lora_r", "4"), "lora_r: 8 -> 4", "changed-lora-rank"),
          (("--steps", "5"), "max_steps: 3 -> 5", "changed-steps"),
          (("--max_document_blocks", "8"), "max_document_blocks: 64 -> 8", "changed-document-cut"),
          (("--qa_eval_limit", "3"), "qa_eval_limit: 4 -> 3", "changed-validation-sample"),
          (("--corpus", "other.parquet"), "corpus:", "another-corpus"),
          (("--model", "model-copy"), "model:", "another-model-folder"),
          (("--release", "release-copy"), "release:", "another-release-folder"),
      ]],
    case(lambda e: after(e.interrupted(e.evaluate("--corpus", e.corpus_file("c.parquet"), steps=3)),
                         e.corpus_file("c.parquet", reverse=True),
                         e.evaluate("--corpus", "c.parquet", "--resume", steps=3)), 2,
         "corpus_fingerprint", id="resume-corpus-regenerated-in-place", keeps_work=True, marks=SLOW),
    # --- train-generator ---
    case(["train-generator", "--corpus", "c"], 2, "--output_dir is required",
         id="train-generator-no-output-dir"),
    case(lambda e: e.train_generator("--delta", "1"), 2, "--delta 1.0 is out of range", id="tg-delta-1"),
    case(lambda e: e.train_generator("--delta", "0"), 2, "--delta 0.0 is out of range", id="tg-delta-0"),
    case(lambda e: e.train_generator("--epsilon", "1", "--delta", "0.9"), 2,
         "--delta 0.9 is not below 1/n = ", id="tg-delta-0.9"),
    case(lambda e: e.train_generator("--epsilon", "0"), 2, "--epsilon 0.0", id="tg-epsilon-0"),
    case(lambda e: e.train_generator("--epsilon", "-1"), 2, "--epsilon -1.0", id="tg-epsilon-negative"),
    case(lambda e: e.train_generator("--clip_norm", "0"), 2, "--clip_norm", id="tg-clip-norm-0"),
    case(lambda e: e.train_generator("--micro_batch_size", "0"), 2, "--micro_batch_size",
         id="tg-micro-batch-0"),
    case(lambda e: e.train_generator("--physical_batch_size", "0"), 2, "--physical_batch_size",
         id="tg-physical-batch-0"),
    case(lambda e: e.train_generator("--max_steps", "0"), 2, "--max_steps", id="tg-steps-0"),
    case(lambda e: e.train_generator("--learning_rate=-1e-4"), 2, "--learning_rate", id="tg-negative-lr"),
    case(lambda e: e.train_generator("--eval_limit", "0"), 2, "--eval_limit", id="tg-eval-limit-0"),
    case(lambda e: e.train_generator("--lr_sweep", "1e-4,x"), 2, "--lr_sweep", id="tg-lr-sweep-not-a-number"),
    case(lambda e: e.train_generator("--lr_sweep", "0,1e-4"), 2, "--lr_sweep", id="tg-lr-sweep-zero"),
    case(lambda e: e.train_generator("--insecure_noise_seed", "-1"), 2, "--insecure_noise_seed",
         id="tg-noise-seed-negative"),
    case(lambda e: e.train_generator("--seed", "-1"), 2, "--seed", id="tg-seed-negative"),
    case(lambda e: e.train_generator("--model", "no-model"), 2, "cannot load model", id="tg-model-missing"),
    # --- synthesize ---
    case(lambda e: e.synthesize("--top_p", "2"), 2, "--top_p 2.0 is out of range", id="synthesize-top-p-2"),
    case(lambda e: e.synthesize("--temperature", "-1"), 2, "--temperature -1.0 is out of range",
         id="synthesize-temperature-negative"),
    case(lambda e: e.synthesize("--num_samples", "0"), 2, "--num_samples 0 is out of range",
         id="synthesize-no-samples"),
    case(lambda e: e.synthesize("--backend", dead_endpoint("completions")), 2, "does not answer",
         id="synthesize-dead-endpoint"),
    # --- pe ---
    case(lambda e: e.pe("--epsilon", "0"), 2, "--epsilon 0.0 is out of range", id="pe-epsilon-0"),
    case(lambda e: e.pe("--epsilon", "-1"), 2, "--epsilon -1.0 is out of range", id="pe-epsilon-negative"),
    case(lambda e: e.pe("--temperatures", "0"), 2, "--temperatures [0.0] must be positive",
         id="pe-temperature-0"),
    case(lambda e: e.pe("--iterations", "0"), 2, "--iterations 0 is out of range", id="pe-no-iterations"),
    case(lambda e: e.pe(corpus=e.parquet("empty/data/train-00000-of-00001.parquet", {"text": ["  "]}).parent
                        .parent), 2, "every 'text' value is empty", id="pe-corpus-blank"),
    case(lambda e: e.pe(corpus=e.parquet("train-only.parquet", {"text": ["a b c", "d e f"]})), 2,
         "validation split", id="pe-corpus-without-validation"),
    case(lambda e: e.pe(api=e.offline_api("pe-silent", lambda prompt, **_: "")), 2, "only empty texts",
         id="pe-api-says-nothing", keeps_work=True, marks=SLOW),  # the private embeddings are kept
    case(lambda e: [*e.pe(), "--embedding_model", "nowhere"], 2, "--embedding_model",
         id="pe-no-embedding-model", marks=SLOW),
    case(lambda e: e.pe(api=dead_endpoint("completions")), 2, "does not answer", id="pe-dead-api",
         marks=SLOW),
    # --- news ---
    case(lambda e: news_extract(e.file("page.html", "<html><p>hello</p></html>")), 2,
         "--warc page.html is not a WARC file (it starts with b'<html><p>hel'", id="news-extract-not-a-warc"),
    case(lambda e: news_extract(e.file("a.warc.gz", "WARC/1.0\r\n")), 2,
         "--warc a.warc.gz is named .gz but is not gzip-compressed; rename it without .gz",
         id="news-extract-gz-not-gzip"),
    case(lambda e: news_extract(e.file("a.warc.gz", __import__("gzip").compress(b"<html></html>"))), 2,
         "--warc a.warc.gz is not a WARC file (it starts with b'<html></htm", id="news-extract-gzipped-html"),
    case(lambda e: news_extract(e.file("a.warc.gz", b"")), 2, "--warc a.warc.gz is empty (0 bytes)",
         id="news-extract-empty-file"),
    case(lambda e: after(e.file("crawl/a.warc.gz", b"x"), news_extract("crawl")), 2,
         "--warc crawl is a folder; pass its WARC files, e.g. --warc", id="news-extract-warc-folder"),
    case(news_extract("crawl/*.warc.gz"), 2, "--warc crawl/*.warc.gz matches no file; pass WARC files",
         id="news-extract-glob-matches-nothing"),
    case(lambda e: news_facts(e, dead_endpoint()), 2, "does not answer", id="news-facts-endpoint-down"),
    case(lambda e: news_facts(e, f"endpoint:{e.server(garbage=True)}#fake"), 2, "a malformed response",
         id="news-facts-endpoint-garbage"),
    case(lambda e: news_facts(e, f"endpoint:{e.server()}#qwen"), 2,
         "does not serve model 'qwen'; it serves fake", id="news-facts-model-not-served"),
    case(lambda e: news_facts(e, f"endpoint:{e.server(reply=lambda body: 'Sure! Facts: [1] says so.')}#fake"),
         2, "2 of 2 answers (100%) from endpoint:", id="news-facts-answers-unusable", keeps_work=True),
    case(lambda e: news_facts(e, "offline:news", "--request_timeout", "0"), 2, "--request_timeout 0",
         id="news-facts-request-timeout-zero"),
    case(lambda e: news_facts(e, "offline:news", "--max_dropped", "2"), 2, "--max_dropped 2",
         id="news-facts-max-dropped-above-one"),
    case(lambda e: ["news", "cluster", "--input", str(e.clustered()), "--output", "clusters", "--encoder",
                    "tfidf"], 2, "found 0 clusters in 4 articles", id="news-cluster-finds-nothing",
         keeps_work=True),  # the embeddings, computed first, are kept for the rerun with relaxed settings
    case(["build", "news", "--articles", "a.jsonl", "--quarter", "2026q4", "--start", "2026-01-01", "--llm",
          "offline:news"], 2, "--start 2026-01-01 is outside --quarter 2026q4 (2026-10-01 to 2026-12-31)",
         id="news-build-start-outside-quarter"),
    case(["build", "news", "--articles", "a.jsonl", "--quarter", "2026q4", "--end", "2026-12-32", "--llm",
          "offline:news"], 2, "--end '2026-12-32' is not a date", id="news-build-end-not-a-date"),
    # --- report ---
    case(lambda e: ["report", e.run(), "--json", "run/results.json", "--overwrite"], 2,
         "--json run/results.json is inside", id="report-json-over-the-runs-results"),
    case(lambda e: ["report", e.run(), "--plot", "run/cmp.png"], 2, "is inside", id="report-plot-into-run"),
    case(lambda e: ["report", e.run(), "--plot", e.file("cmp.png")], 2,
         "--plot cmp.png already exists; pass --overwrite", id="report-plot-exists"),
    case(lambda e: ["report", e.run(), "--plot", e.file("cmp.png"), "--overwrite"], 0, "public EM",
         id="report-plot-overwrite", may_change=("cmp.png",)),
    case(lambda e: ["report", e.run(), "--plot", "x.png", "--json", "x.png"], 2, "are the same file",
         id="report-same-output-twice"),
    case(lambda e: ["report", e.run(), "--json", e.run("other")], 2, "--json other is a folder",
         id="report-json-is-a-folder"),
    case(lambda e: ["report", e.run(), "--json", "/proc/self/rows.json"], 2,
         "--json /proc/self/rows.json cannot be written", id="report-json-in-proc"),
    case(lambda e: ["report", e.run(results=[1, 2])], 2, "is not the results.json of",
         id="report-results-list"),
    case(lambda e: ["report", e.run(results={"release": "x", "metrics": {}})], 2, "a field of the wrong type",
         id="report-results-wrong-shape"),
    case(lambda e: ["report", e.file("run/results.json", "")], 2, "is not valid JSON",
         id="report-results-empty"),
    case(["report", "no-such-run"], 2, "run no-such-run does not exist", id="report-missing-run"),
    case(lambda e: ["report", f"a={e.run()}", "--findings", "f.json", "--compare", e.file("c.json", "{}"),
                    "--finding_rows", "none=a"], 2, "--finding_rows needs each of none, real",
         id="report-findings-missing-roles"),
    case(lambda e: ["report", f"a={e.run()}", "--findings", "f.json"], 2, "--findings needs --compare",
         id="report-findings-without-compare"),
    case(lambda e: ["report", f"a={e.run()}", "--mauve", "b=m.json"], 2, "--mauve b=m.json: give ROW=FILE",
         id="report-mauve-unknown-row"),
    case(lambda e: ["report", f"a={e.run()}", f"a={e.run('other')}"], 2, "two runs are named a",
         id="report-two-runs-one-name"),
    case(lambda e: ["report", e.finished_run("a", light=True),
                    e.edited_run("b", lambda r: r["release"].update(manifest_sha256="0" * 64))], 2,
         "a and b ran on two different releases both named geminon-tiny-2026q1",
         id="report-two-releases-one-id"),
    # --- compare: unlike runs are refused ---
    case(["compare", "only-one"], 2, "compare takes two run folders, got 1", id="compare-one-run"),
    case(["compare", "a", "b", "--resamples", "0"], 2, "out of range", id="compare-no-resamples"),
    case(lambda e: ["compare", e.finished_run("a", light=True),
                    e.edited_run("b", lambda r: r["release"].update(id="geminon-tiny-2026q2"))], 2,
         "b on geminon-tiny-2026q2 (", id="compare-other-release"),
    case(lambda e: ["compare", e.finished_run("a", light=True), e.edited_run("b", split="validation")], 2,
         "b on ['validation']: compare runs scored on the same split", id="compare-other-split"),
    case(lambda e: ["compare", e.finished_run("a", light=True), e.finished_run("b", light=True),
                    "--matcher", "llm_match"], 2, "a was not judged (evaluated without --judge)",
                    id="compare-missing-matcher"),
    case(lambda e: ["compare", e.finished_run("a", light=True),
                    after(e.finished_run("b", light=True), (e.tmp / "b/predictions.parquet").unlink(),
                    "b")], 2,
         "has no predictions.parquet", id="compare-no-predictions"),
    case(lambda e: ["compare", e.finished_run("a", light=True), "b"], 2, "has no results.json",
         id="compare-no-results"),
    # --- submit and publish ---
    case(lambda e: ["submit", e.edited_run("run", lambda r: r["metrics"]["qa_public"]["metrics"]
                                           ["exact_match"].update(ci95=[0.5, 0.9])), "--to", "to"], 2,
         "is not a valid results record: metrics.qa_public.metrics.exact_match", id="submit-invalid-record"),
    case(lambda e: ["submit", e.edited_run("run", lambda r: r["metrics"]["qa_public"]["metrics"]
                                           ["exact_match"].update(accuracy=float("nan"))), "--to", "to"], 2,
         "exact_match.accuracy: Input should be a finite number", id="submit-nan-accuracy"),
    case(lambda e: ["submit", e.finished_run(light=True), "--to", "my-org/cb-results"], 2,
         "submitting to dataset repo my-org/cb-results failed (Cannot reach", id="submit-hub-offline"),
    case(lambda e: ["submit", e.finished_run(light=True), "--to", "to", "--model_repo", "a/b/c"], 2,
         "--model_repo 'a/b/c' is not a Hub repo id owner/name", id="submit-bad-model-repo"),
    case(lambda e: ["submit", e.edited_run("run", lambda r: r.update(model_repo="me/pushed")), "--to", "to",
                    "--model_repo", "me/other"], 2,
         "--model_repo me/other differs from the repo the run pushed its model to (me/pushed)",
         id="submit-model-repo-differs"),
    case(lambda e: ["publish", "release", e.release(), "--repo", "org/cb"], 2,
         "publishing to dataset repo org/cb failed (", id="publish-hub-offline"),
    case(lambda e: after(e.unreachable_hub(), ["publish", "release", e.release(), "--repo", "org/cb"]), 2,
         "publishing to dataset repo org/cb failed (", id="publish-hub-unreachable"),
    case(lambda e: after(e.unreachable_hub(), ["submit", e.finished_run(light=True), "--to", "org/cb"]), 2,
         "submitting to dataset repo org/cb failed (", id="submit-hub-unreachable"),
    case(lambda e: ["publish", "release", "nowhere", "--repo", "org/cb"], 2, "nowhere", id="publish-missing"),
    case(lambda e: after(e.hub(tags=[RID]), ["publish", "release", e.release(), "--repo", "org/cb"]), 2,
         f"release {RID} is already tagged in dataset repo org/cb", id="publish-already-tagged"),
    # --- metric ---
    case(["metric", "push"], 2, "is not a Hub repo id owner/name", id="metric-push-without-repo"),
    # --- mauve: refused before any corpus is read or model loaded ---
    case(lambda e: mauve(e, "--output", e.run("out-folder")), 2, "--output out-folder is a folder",
         id="mauve-output-is-a-folder"),
    case(lambda e: mauve(e, "--output", e.file("m.json")), 2, "--output m.json already exists",
         id="mauve-output-exists"),
    case(lambda e: mauve(e, "--batch_size", "0"), 2, "--batch_size 0 is out of range", id="mauve-batch-0"),
    case(lambda e: mauve(e, "--n_samples", "1"), 2, "--n_samples 1 is out of range", id="mauve-one-sample"),
    case(lambda e: mauve(e, "--seeds", "0", "-1"), 2, "--seeds -1 is out of range", id="mauve-negative-seed"),
    case(lambda e: [*mauve(e)[:-1], "no-model"], 2, "--model no-model is not a folder", id="mauve-no-model"),
    case(lambda e: [*mauve(e)[:2], "no.parquet", *mauve(e)[3:]], 2, "--candidate no.parquet does not exist",
         id="mauve-missing-candidate"),
    # --- credentials in an endpoint spec: every line shows them redacted ---
    case(lambda e: news_facts(e, keyed_dead_endpoint()), 2, "http://REDACTED@127.0.0.1:",
         id="news-facts-key-in-url-redacted"),
    case(lambda e: e.evaluate("--judge", keyed_dead_endpoint()), 2, "?api_key=REDACTED&key=REDACTED does not",
         id="evaluate-judge-key-in-url-redacted"),
    case(lambda e: ["build", "geminon", "--namer", keyed_dead_endpoint()], 2, "&key=REDACTED does not answer",
         id="build-namer-key-in-url-redacted"),
    # --- study: the runner as careful as the commands it runs (issue 30), --plan that checks (issue 35) ---
    case(lambda e: study(e, f"{ONE_EVALUATOR}release: q\n"), 2, "s.yaml sets release twice",
         id="study-duplicate-key"),
    case(lambda e: study(e, f"{ONE_EVALUATOR[:-2]}, {{name: e, config: d}}]\n"), 2,
         "evaluator 'e' is given twice", id="study-duplicate-evaluator"),
    case(lambda e: study(e, "name: s\nrelease: r\naudit: [{name: a}, {name: a}]\n"), 2,
         "audit 'a' is given twice", id="study-duplicate-audit"),
    case(lambda e: study(e, "name: s\nrelease: r\naudit: [{name: ../../x}]\n"), 2,
         "name '../../x' must be letters", id="study-name-escapes"),
    case(lambda e: study(e, f"{ONE_EVALUATOR}seeds: []\n"), 2, "seeds: List should have at least 1 item",
         id="study-no-seeds"),
    case(lambda e: study(e, "name: s\nrelease: r\nprivate_prediction: [{name: real}]\n"), 2,
         "corpus name 'real' is used twice or reserved", id="study-private-prediction-reserved-name"),
    case(["private-prediction", "--model", "m", "--output_dir", "o", "--release", "r", "--corpus", "c"], 2,
         "--release r and --corpus c both name the private records", id="private-prediction-two-sources"),
    case(["private-prediction", "--model", "m", "--output_dir", "o", "--release", "r",
          "--max_new_tokens", "8", "--max_private_tokens", "16"], 2, "--max_private_tokens 16 is above",
         id="private-prediction-budget-above-length"),
    case(lambda e: study(e, "name: s\nrelease: r\ngpus: {evaluate: -1}\n"), 2,
         "gpus.evaluate: Input should be greater than or equal to 0", id="study-negative-gpus"),
    case(lambda e: study(e, f"name: s\nrelease: {e.release()}\nevaluators: [{{name: e, config: no.yaml}}]\n"),
         2, "job evaluate/e/none-seed0: its config no.yaml does not exist", id="study-plan-missing-recipe"),
    case(lambda e: study(e, "name: s\nrelease: geminon-tiny-2031q1\n", "--out", "s"), 2,
         "release geminon-tiny-2031q1 not found under", id="study-missing-release"),  # --plan: a build job
    case(lambda e: study(e, f"name: s\nrelease: {e.release()}\nevaluators: [{{name: e, "
                            f"config: {DEMO_RECIPE}, options: {{model: {DEMO / 'base'}, stepz: 50}}}}]\n"), 2,
         "s.yaml: job evaluate/e/none-seed0: unknown argument(s) ['--stepz', '50']",
         id="study-plan-option-typo"),
    case(lambda e: after(e.monkeypatch.setenv("PATH", str(e.tmp)), study(
             e, f"name: s\nrelease: {e.release()}\n", "--executor", "slurm", "--partition", "p")), 2,
         "--executor slurm needs Slurm's sbatch", id="study-slurm-off-cluster"),
    case(lambda e: study(e, "name: s\nrelease: r\n", "--time", "1h", "--plan"), 2,
         "--time 1h is not a Slurm time limit", id="study-bad-time"),
    case(lambda e: [*news_extract("a.warc.gz"), "--time", "1h"], 2, "--time 1h is not a Slurm time limit",
         id="news-bad-time"),
    case(lambda e: study(e, f"name: s\nrelease: {e.release()}\n", "--out", e.held("st")), 2,
         "is in use by another continuousbench command (pid", id="study-folder-in-use"),
    # --- a full disk in every writer: one line naming the path (issue 30) ---
    case(lambda e: after(e.disk_full(at=2, limit=True), e.evaluate(steps=3)), 2,
         ".evaluate-work/checkpoint-2 (a full disk, a quota or the file size limit)",
         id="evaluate-file-size-limit", keeps_work=True, marks=SLOW),
    # --- an audit's generator learnt its canaries: never sampled, even when Ctrl-C stopped the audit ---
    case(lambda e: after(e.copy(e.fixture("tiny_model_dir"), "audited"),
                         (e.tmp / "audited" / ".audit-work").mkdir(),
                         with_option(e.synthesize(), "--generator", "audited")), 2,
         "--generator audited was trained by `continuousbench audit` (.audit-work is there)",
         id="synthesize-stopped-audit"),
    # --- gate, contamination, release (the quarterly cycle) ---
    case(["gate"], 2, "no release given", id="gate-no-release"),
    case(lambda e: ["gate", "--release", str(e.manifest(_unscreened)), "--gates", "unsolvable"], 2,
         "the unsolvable gate needs a closed-book model and the release records none",
         id="gate-unsolvable-without-models"),
    case(lambda e: ["gate", "--release", str(e.release()), "--previous", "missing-folder/x", "--models", "m"],
         2, "missing-folder/x does not exist", id="gate-previous-missing"),
    case(lambda e: ["gate", "--release", str(e.release()), "--gates", "fast"], 2, "unknown gate 'fast'",
         id="gate-unknown-gate"),
    case(lambda e: ["gate", "--release", str(e.release()), "--gates", "unsolvable", "--models",
                    str(e.file("run/results.json", "{}").parent)], 2,
         "--models run is an evaluate run without a trained model", id="gate-model-without-tokenizer"),
    # named as given (before: --model), and what it is (before: "has no tokenizer")
    case(lambda e: ["proxies", "--study", str(e.file("study/manifest.json", "{}").parent)], 2,
         "--study study made no corpus (no synthetic/): proxies ranks the corpora a study's generators",
         id="proxies-study-of-own-corpora"),  # before: "not a study output folder"
    case(lambda e: ["contamination", "--model", str(e.model()), "--release", str(e.release()), "--control",
                    str(e.release())], 2, "is the release itself", id="contamination-control-is-release"),
    case(lambda e: ["contamination", "--release", str(e.release())], 2, "give both",
         id="contamination-no-model"),
    case(["release", "--quarter", "2027q5"], 2, "bad quarter '2027q5'", id="release-malformed-quarter"),
    case(["release", "--quarter", "2026q1", "--size", "huge"], 2, "sizes of geminon: tiny, small, medium;",
         id="release-unknown-size"),  # before: large too, a NEWS size
    case(["release", "--quarter", "2999q1", "--tracks", "news"], 2, "ends on 2999-03-31",
         id="release-news-quarter-not-ended"),
    case(["release", "--quarter", "2026q1", "--tracks", "news"], 2, "needs --warc",
         id="release-news-no-warc"),
    # --- the fixed harness and a participant's corpus ---
    case(lambda e: ["compare", e.finished_run("a", light=True), e.edited_run("b", lambda r: r["recipe"]
                    .update(settings={**r["recipe"]["settings"], "max_steps": 3}))], 2,
         "(max_steps 2 vs 3): a difference would mix the corpus with the recipe",
         id="compare-different-recipes"),
    case(lambda e: e.evaluate("--replay_fraction", "0.3"), 2,
         "replay_fraction 0.3 is set but no replay corpus is given", id="evaluate-replay-fraction-alone"),
    case(lambda e: e.evaluate("--corpus_privacy", e.file("p.json", '{"private": true, "epsilon": 1}')), 2,
         'p.json states "private": true without a "delta" in [0, 1)',
         id="evaluate-corpus-privacy-no-delta"),
    case(lambda e: e.evaluate("--corpus_privacy", "missing.json"), 2,
         "--corpus_privacy missing.json does not exist", id="evaluate-corpus-privacy-missing"),
    case(lambda e: ["study", "--config", e.file("s.yaml", ONE_EVALUATOR.replace(
                    "config: c}", "config: c, corpora: [none, ../mine.jsonl]}"))], 2,
         "trains on unknown corpora ['../mine.jsonl']; the names known are none, real",
         id="study-corpus-path-not-name"),
    # --- train-generator: prompt tuning, LoRA placement, sweeps (issue 32): (id, extra options, message) ---
    *[case(lambda e, extra=extra: e.train_generator(*extra), 2, message, id=name)
      for name, extra, message in (
        ("tg-prompt-with-lora-options", ["--tuning", "prompt", "--epsilon", "10"],
         "--lora_r: LoRA options do not apply to --tuning prompt"),
        ("tg-lora-with-prompt", ["--num_virtual_tokens", "8"],
         "--num_virtual_tokens: prompt-tuning options do not apply to --tuning lora"),
        ("tg-lora-targets-empty", ["--lora_targets", ""], "--lora_targets"),
        ("tg-lora-targets-unknown", ["--lora_targets", "heads"], "--lora_targets"),
        ("tg-sweep-unknown-key", ["--sweep", "lr=1e-4,2e-4"], "--sweep key 'lr' is not an option"),
        ("tg-sweep-plan-key", ["--sweep", "max_steps=2,4"], "--sweep key 'max_steps' cannot be swept"),
        ("tg-sweep-alias-key", ["--sweep", "steps=2,4"], "--sweep key 'steps' cannot be swept"),
        ("tg-sweep-and-lr-sweep", ["--sweep", "learning_rate=1e-4", "--lr_sweep", "1e-4"],
         "--lr_sweep and --sweep both"),
        # --- train-generator --tuning full (issue 43) ---
        ("tg-full-nonprivate", ["--tuning", "full"], "--tuning full trains with the DP engine only"),
        ("tg-full-ghost", ["--tuning", "full", "--epsilon", "10", "--clipping", "ghost"],
         "--tuning full clips with --clipping bookkeeping, not ghost"),
        ("tg-full-bf16-weights", ["--tuning", "full", "--epsilon", "10", "--dtype", "bfloat16"],
         "--dtype bfloat16 keeps the weights in half precision"),
    )],
    case(lambda e: without_lora(e.train_generator("--tuning", "prompt", "--num_virtual_tokens", "0")), 2,
         "--num_virtual_tokens 0 is out of range", id="tg-prompt-zero-virtual-tokens"),  # not silently 20
    case(lambda e: e.evaluate("--tuning", "prompt", drop=("--lora_r",)), 2,
         "--tuning prompt trains generators only", id="evaluate-prompt-tuning"),
    # --- memorization: refused before any document is decoded ---
    case(lambda e: memorization(e, "--prefix_tokens", "5000"), 2,
         "no held-out document has 5000 + 32 tokens (42 too short); lower --prefix_tokens",
         id="memorization-prefix-longer-than-documents"),
    case(lambda e: memorization(e, "--train_split", "train[:0]"), 2,
         "--train_split train[:0] holds no document", id="memorization-empty-train-split"),
    case(lambda e: memorization(e, "--output", f"home/{RID}/m.json"), 2,
         "--output home/geminon-tiny-2026q1/m.json is inside", id="memorization-output-into-a-release"),
    case(lambda e: memorization(e, "--train_split", "validation"), 2,
         "--train_split validation is not a part of train",
         id="memorization-train-split-held-out"),
    case(lambda e: after(e.finished_run(light=True),
                         memorization(e, "--model", "run", "--output", "run/m.json")), 2,
         "--output run/m.json is inside", id="memorization-output-into-the-run"),
    # --- evaluate's forgetting monitor ---
    case(lambda e: e.evaluate("--mix_ratio", "0.5"), 2, "--mix_ratio 0.5 is set but no --mix_corpus is given",
         id="evaluate-mix-ratio-alone"),
    case(lambda e: e.evaluate("--mix_corpus", "missing.parquet"), 2, "--mix_corpus missing.parquet",
         id="evaluate-mix-corpus-missing"),
    case(lambda e: e.evaluate("--mix_corpus", str(e.file("g.txt", "One line of general text.\n")),
                              "--mix_ratio", "1"), 2, "--mix_ratio 1.0 is out of range",
         id="evaluate-mix-ratio-one"),
    case(lambda e: e.evaluate("--mix_corpus", str(e.file("g.txt", "One line.\n\nAnother.\n")),
                              "--mix_ratio", "-0.1"), 2, "--mix_ratio -0.1 is out of range",
         id="evaluate-mix-ratio-negative"),
    case(lambda e: e.evaluate("--mix_corpus", str(e.file("g.txt", "One line.\n\nAnother.\n")),
                              "--replay_corpus", str(e.file("r.txt", "Replay.\n"))), 2,
         "--mix_corpus and --replay_corpus both mix a corpus", id="evaluate-mix-and-replay"),
    # --- FictionalQA's held-out splits ---
    case(["build", "geminon", "--heldout", "entities"], 2, "--heldout entities is not a held-out split",
         id="build-heldout-unknown-split"),
    case(lambda e: with_option(e.evaluate(), "--release", "geminon-tiny-2026q1-heldout-author"), 2,
         "bad release id", id="evaluate-heldout-unknown-split-id"),
    # --- report of a run that does not exist (its parent folder was taken for an input) ---
    case(["report", "nowhere", "--plot", "out/p.png"], 2, "run nowhere does not exist",
         id="report-missing-run-with-plot"),
    case(lambda e: ["report", f"a={e.run()}", "b=gone/results.json", "--json", "r.json"], 2,
         "run gone/results.json does not exist", id="report-named-missing-run"),
]  # fmt: skip


def keyed_dead_endpoint() -> str:
    """A spec whose URL carries credentials (the tests then check that no line shows them)."""
    keyed = dead_endpoint().replace("http://", "http://me:pw-9z@")
    return keyed.replace("/v1", "/v1?api_key=k3y-1&key=k3y-2")


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and "/proc" not in str(p)
    }


def _work_folders(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob(".*-work") if p.is_dir()}


def _named(line: str, argv: list[str]) -> bool:
    """Whether the error line names an option, a value or a file of the command line (command names
    aside); trivially true when there is none to name."""
    from continuousbench.cli import COMMANDS

    table, words = COMMANDS, list(argv)
    while words and isinstance(table, dict) and words[0] in table:  # the command and its group
        target = table[words.pop(0)][0]
        table = target if isinstance(target, dict) else None
    tokens = [t for a in words for t in a.split("=", 1) if t]
    tokens += [Path(t).name for t in tokens if "/" in t]
    tokens += [t.split(":", 1)[1].split("#")[0] for t in tokens if "://" in t]  # endpoint:<url>#<model>
    missing = re.search(r"--\w+ is (missing|required)", line)  # names an option that is not there
    return not tokens or bool(missing) or any(t.lstrip("-") in line for t in tokens)


@pytest.fixture
def env(tmp_path, monkeypatch, request):
    import datasets

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CONTINUOUSBENCH_HUB_REPO", raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    yield Env(tmp_path, request, monkeypatch)
    for path in tmp_path.rglob("*"):  # let pytest clean up read-only folders
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


@pytest.mark.usefixtures("no_backoff")  # what a failing endpoint ends in, without its real backoff waits
@pytest.mark.parametrize("argv, code, message, may_change, keeps_work", CLI)
def test_cli(argv, code, message, may_change, keeps_work, env, invoke):
    argv = [str(a) for a in (argv(env) if callable(argv) else argv)]
    before, work_before = _snapshot(env.tmp), _work_folders(env.tmp)
    result = invoke(argv)
    assert result.exit_code == code, result.output[-3000:]
    assert message in result.output, result.output[-3000:]
    assert "Traceback" not in result.output, result.output[-3000:]
    assert "k3y-" not in result.output and "pw-9z" not in result.output  # keyed_dead_endpoint's secrets
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    if code == 2:  # progress lines may come first; the error is one line, the last
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and last == errors[0], result.stderr[-3000:]
        assert _named(errors[0], argv), f"names nothing of the command line: {errors[0]}"
    if code == 130:
        assert last.startswith("interrupted: "), result.stderr[-3000:]
    after_ = _snapshot(env.tmp)
    lost = {name for name, digest in before.items() if after_.get(name) != digest} - set(may_change)
    assert not lost, f"changed or removed: {sorted(lost)}"
    if code and not keeps_work:
        left = _work_folders(env.tmp) - work_before
        assert not left, f"a failed new run left {sorted(left)}: the next attempt would need --resume"


# --- the Python API ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qa_metric():
    import evaluate

    return evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "qa_match"))


def _score(**kw):
    from continuousbench.scoring.match import score

    return score(**{"predictions": ["a"], "references": ["a"], **kw})


def _load(*args, **kw):
    from continuousbench.release import load_release

    return load_release(*args, **kw)


def _mauve(e: Env, candidate, reference, **kw):
    from continuousbench.diagnostics.mauve import mauve_score

    return mauve_score(candidate, reference, model_path=e.fixture("tiny_model_dir"), **kw)


def metric(e: Env, **options):
    """The qa_match module loaded from this repository (once per test module unless given options)."""
    if options:
        import evaluate

        return evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "qa_match"), **options)
    return e.fixture("qa_metric")


def _write_release(e: Env, **kw):
    from continuousbench.release import CONFIGS, load_release, write_release

    parts = {c: dict(load_release(e.release(), c)) for c in CONFIGS}
    return write_release(RID, parts, **{"root": "out", "seed": 0, "generator": {}, **kw})


API = [
    pytest.param(lambda e: _score(predictions=[], references=[]), "predictions is empty", id="score-empty"),
    pytest.param(lambda e: _score(support_counts=[1.7]), "support_counts[0] = 1.7", id="score-support-1.7"),
    pytest.param(lambda e: _score(support_counts=[True]), "support_counts[0] = True", id="score-bool"),
    pytest.param(lambda e: _score(support_counts="5"), "support_counts must be a list", id="score-support-s"),
    pytest.param(lambda e: _score(references=None), "references must be a list", id="score-references-none"),
    pytest.param(lambda e: _score(predictions="a"), "predictions must be a sequence of strings",
                 id="score-predictions-str"),
    pytest.param(lambda e: _score(matchers="contains"), "matchers must be distinct", id="score-matchers-str"),
    pytest.param(lambda e: _score(thresholds=None), "thresholds must be non-negative integers",
                 id="score-thresholds-none"),
    pytest.param(lambda e: _score(thresholds=[True]), "thresholds must be non-negative",
                 id="score-threshold-bool"),
    pytest.param(lambda e: metric(e).compute(predictions=[], references=[]), "predictions is empty",
                 id="metric-empty"),
    pytest.param(lambda e: metric(e).compute(predictions=["a"], references=[["a"]], support_counts=[1.7]),
                 "support_counts[0] = 1.7", id="metric-support-1.7"),
    pytest.param(lambda e: metric(e).compute(predictions=["a"], references=[["a"]], support_counts=[True]),
                 "support_counts[0] = True", id="metric-support-bool"),
    pytest.param(lambda e: metric(e).compute(predictions="abc", references="abc"),
                 "predictions must be a sequence of strings", id="metric-strings-not-lists"),
    pytest.param(lambda e: metric(e).add(prediction=3, reference="3"),
                 "predictions must be a sequence of strings", id="metric-add-a-number"),
    pytest.param(lambda e: metric(e, thresholds=[1.5]), "thresholds must be non-negative integers",
                 id="metric-load-bad-thresholds"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="test[:x]"), "bad split 'test[:x]'",
                 id="load-bad-slice"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="train"), "unknown split 'train'",
                 id="load-unknown-split"),
    pytest.param(lambda e: _load(e.release(), None), "unknown release part None", id="load-part-none"),
    pytest.param(lambda e: _load(e.manifest(lambda m: m.update(seed=9)), "qa_public"),
                 "release.json was edited", id="load-edited-manifest"),
    pytest.param(lambda e: _load(Path("/proc")), "no release.json", id="load-proc"),
    pytest.param(lambda e: _load(e.tamper("data/entities/train-00000-of-00001.parquet", b"x"), "entities",
                                 verify=False), "is not a readable parquet file", id="load-unverified-junk"),
    pytest.param(lambda e: _write_release(e, root="/proc/self/cb"), "root /proc/self/cb cannot be written",
                 id="write-into-proc"),
    pytest.param(lambda e: _write_release(e, seed="7"), "seed must be a non-negative integer",
                 id="write-seed-str"),
    pytest.param(lambda e: _load(e.tamper("data/corpus/train-00000-of-00001.parquet"), "qa_public"),
                 "checksum mismatch", id="load-other-part-tampered"),
    pytest.param(lambda e: _mauve(e, ["one"], ["a b", "c d", "e f"], n_samples=2),
                 "at least 2 texts per side",
                 id="mauve-one-text"),
    pytest.param(lambda e: _mauve(e, ["a b", "c d"], ["a b", "c d"], n_samples=1), "n_samples",
                 id="mauve-one-sample"),
    pytest.param(lambda e: __import__("continuousbench.embeddings.encoders").embeddings.encoders.embed_texts(
                     ["x"], e.tmp / "missing"), "embedding model folder", id="mauve-embed-missing-model"),
    pytest.param(lambda e: __import__("continuousbench.diagnostics.one_run").diagnostics.one_run.p_value(
                     10, 5, 6, 1.0, 0.0), "0 <= v <= r <= m", id="audit-p-value-counts"),
    pytest.param(lambda e: __import__("continuousbench.diagnostics.one_run").diagnostics.one_run.audit(
                     [1.0], [True], delta=1e-5), "at least 2 canaries", id="audit-one-canary"),
]  # fmt: skip


@pytest.mark.parametrize("call, message", API)
def test_api(call, message, env):
    with pytest.raises(Exception) as err:  # noqa: PT011 - the type is checked through one_line below
        call(env)
    line = one_line(err.value)
    assert line is not None, f"a bug, not bad input: {err.value!r}"
    assert message in line and "\n" not in line, line


# Inputs the library must accept, and what it must return for them.
RETURNS = [
    pytest.param(lambda e: after(e.tampered_copy(), _load(RID, "qa_public", split="test")),
                 lambda rows, e: "TAMPERED" not in rows["answer"], id="load-pristine-after-tampered-copy"),
    pytest.param(lambda e: _load(f"{e.in_user_home()}/{RID}", "qa_public", split="test"),
                 lambda rows, e: rows.num_rows > 0, id="load-tilde-folder"),
    pytest.param(lambda e: _load(RID, "entities", split="train", root=e.in_user_home()),
                 lambda rows, e: rows.num_rows > 0, id="load-tilde-root"),
    pytest.param(lambda e: _write_release(e, root="~/copy"),
                 lambda path, e: path == e.tmp / "user" / "copy" / RID, id="write-tilde-root"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="test[:2]+validation[-1:]"),
                 lambda rows, e: rows.num_rows == 3, id="load-slices"),
    pytest.param(lambda e: _score(support_counts=__import__("numpy").array([3])),
                 lambda out, e: out["by_support"][">=0"]["n"] == 1, id="score-numpy-support"),
]  # fmt: skip


@pytest.mark.parametrize("call, check", RETURNS)
def test_api_returns(call, check, env):
    assert check(call(env), env)
