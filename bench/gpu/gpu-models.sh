#!/usr/bin/env bash
# On the device machine: the benchmark suite in PyTorch (bench/gpu/models.py) and through the cuda
# backend (bench/gpu/models.bench.js), in one command, results under $OUT (torch.txt, torch.json,
# models-bench.txt with the Markdown table, results.json). Runs the built bundle (.gpu/bundle.tar.xz,
# unpacked into /tmp/trtn) with the carried Node (/tmp/node); bench/gpu/bench-gpu.sh is the same on a
# machine of one's own (docs/gpu-benchmark.md).
# usage (device): [MODELS="resnet50_b1 ..." | GROUP=1|2|3] [PRECISION=fp16] [SKIP_TORCH_COMPILE=1]
#   [MAX_AUTOTUNE=1 [MAX_AUTOTUNE_S=300]] [TORCH_REPS=50] [OURS_REPS=50] [OVERLAP=32] [GIT_COMMIT=sha]
#   [TORCH_S=900] [OURS_S=600] [PROFILE=1 [PROFILE_MODE=graph|launch]] [SKIP_TIMES=1] bash bench/gpu/gpu-models.sh
# (PRECISION: what models.bench.js compiles with: fp32 (default), tf32, fp16 or bf16.)
# One device command may run 600 s at most, and the whole suite takes longer: run it a group at a
# time (GROUP=N: models.py's SUITE_GROUPS, a third of the suite each) or name the models (MODELS),
# with TORCH_S + OURS_S inside the command's limit, e.g. GROUP=1 TORCH_S=340 OURS_S=200.
# TORCH_S stops PyTorch's side; the models it finished by then are still run through ours.
set -uo pipefail
out=${OUT:-/tmp/out}
repo=$(pwd)
mkdir -p /tmp/trtn "$out" /tmp/bench
[ -x /tmp/node ] || { xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node; }
[ -d /tmp/trtn/dist ] || tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
# Every script of bench/gpu (the bench scripts require ./export-io.js beside them).
mkdir -p /tmp/trtn/bench/gpu && cp "$repo"/bench/gpu/*.py "$repo"/bench/gpu/*.js /tmp/trtn/bench/gpu/
cd /tmp/trtn
# A previous call's torch.json must not stand for this one's (models.py rewrites it after each model).
rm -f /tmp/bench/torch.json
# MODELS wins over GROUP (models.py reads GROUP from the environment when no names are given).
PYTHONUNBUFFERED=1 timeout "${TORCH_S:-900}" python3 bench/gpu/models.py /tmp/bench ${MODELS:-} 2>&1 | grep -v -i warn | tee "$out/torch.txt"
cp /tmp/bench/torch.json "$out/" 2>/dev/null
if [ -z "${SKIP_TIMES:-}" ] && [ -f /tmp/bench/torch.json ]; then
  RESULTS_JSON="$out/results.json" timeout "${OURS_S:-600}" /tmp/node bench/gpu/models.bench.js /tmp/bench 2>&1 | tee "$out/models-bench.txt"
fi
if [ -n "${PROFILE:-}" ]; then
  # The dense fp16 tensor-core peak from the device itself: SMs x max SM clock x 4096 FLOP per
  # clock per SM (sm_90; 132 SMs at 1830 MHz gives the H100/H200 SXM datasheet's 989 TFLOP/s).
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
  sms=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)')
  mhz=$(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits | head -1)
  peak=$(python3 -c "print(round($sms * $mhz * 1e6 * 4096 / 1e12, 1))")
  echo "SMs $sms, max SM clock $mhz MHz: dense fp16 peak $peak TFLOP/s" | tee -a "$out/gpu.txt"
  mkdir -p "$out/steps"
  # The workloads this call exported (/tmp/bench may hold earlier calls' exports too).
  names=$(python3 -c 'import json; print(" ".join(t["name"] for t in json.load(open("/tmp/bench/torch.json")) if "error" not in t))' 2>/dev/null)
  PEAK_TFLOPS=${PEAK_TFLOPS:-$peak} STEPS_OUT="$out/steps" timeout "${PROFILE_S:-200}" /tmp/node bench/gpu/profile.bench.js /tmp/bench $names 2>&1 | tee "$out/profile.txt"
fi
exit 0
