#!/usr/bin/env bash
# The GPU checks of the benchmarks, in one run (a CUDA machine; nothing in CI needs one). Each check has
# its own time limit, so one that hangs leaves the others their turn; every log is kept under $OUT.
#
#   OUT=/tmp/gpu bash benchmarks/gpu_checks.sh [release folder for private prediction]
#
# 1. DP-SGD's step cost against a plain step (LoRA: per-record hooks, ghost clipping; full fine-tuning:
#    ours beside Opacus's engines) at a GPU-sized model, bf16: study/costs.py's pass factors;
# 2. the study plan's GPU assumptions (decode floor, prefill and training MFU) on a Gemma 3 1B shape;
# 3. the fork server's GPU smoke test (its preload leaves CUDA alone; a job computes on its GPU);
# 4. private prediction's decoding on the GPU (KV cache vs recompute vs plain generate);
# 5. the saturation plan's MFU assumptions (Gemma 3 1B full fine-tuning, 4B LoRA).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-checks}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
check() {  # check <name> <seconds> <command...>
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo "== $name: exit $? after $((SECONDS - start)) s" | tee -a "$OUT/summary.txt"
  tail -n 25 "$OUT/$name.log"
}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/summary.txt"
check dp_step 150 python3 benchmarks/dp_step.py --kinds plain per_sample ghost full_plain full_bookkeeping \
  full_opacus_hooks full_opacus_ghost full_plain_twice --bf16 --hidden 1024 --layers 8 --length 256 \
  --repeats 5
check study_plan_gpu 120 python3 benchmarks/study_plan_gpu.py
check forked_gpu 60 python3 -m pytest -q -p no:cacheprovider tests/study/test_forked.py -k gpu
check private_prediction 60 python3 benchmarks/private_prediction.py --device cuda --batch_size 16 \
  --batches 8 --tokens 48 ${1:+--release "$1"}
check saturation_gpu 120 python3 benchmarks/saturation_gpu.py --peak 989e12
