#!/usr/bin/env bash
# On the GPU machine: the benchmark workloads in PyTorch (bench/gpu/models.py) and through the
# cuda backend (bench/gpu/models.bench.js), in one command, results under $OUT.
# usage (device): [MODELS="resnet50_b1 ..."] [PRECISION=fp16] [PROFILE=1 [PROFILE_MODE=graph|launch]] [SKIP_TIMES=1] [SKIP_TORCH_COMPILE=1] bash bench/gpu/gpu-models.sh
# (PRECISION: what models.bench.js compiles with: fp32 (default), tf32, fp16 or bf16)
set -uo pipefail
out=${OUT:-/tmp/out}
repo=$(pwd)
mkdir -p /tmp/trtn "$out" /tmp/bench
[ -x /tmp/node ] || { xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node; }
[ -d /tmp/trtn/dist ] || tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
mkdir -p /tmp/trtn/bench/gpu && cp "$repo"/bench/gpu/models.* "$repo"/bench/gpu/profile.bench.js "$repo"/bench/gpu/export-io.js /tmp/trtn/bench/gpu/
cd /tmp/trtn
timeout "${TORCH_S:-400}" python3 bench/gpu/models.py /tmp/bench ${MODELS:-} 2>&1 | grep -v -i warn | tee "$out/torch.txt"
cp /tmp/bench/torch.json "$out/" 2>/dev/null
[ -z "${SKIP_TIMES:-}" ] && timeout "${OURS_S:-300}" /tmp/node bench/gpu/models.bench.js /tmp/bench 2>&1 | tee "$out/models-bench.txt"
if [ -n "${PROFILE:-}" ]; then
  # The dense fp16 tensor-core peak from the device itself: SMs x max SM clock x 4096 FLOP per
  # clock per SM (sm_90; 132 SMs at 1830 MHz gives the H100/H200 SXM datasheet's 989 TFLOP/s).
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
  sms=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)')
  mhz=$(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits | head -1)
  peak=$(python3 -c "print(round($sms * $mhz * 1e6 * 4096 / 1e12, 1))")
  echo "SMs $sms, max SM clock $mhz MHz: dense fp16 peak $peak TFLOP/s" | tee -a "$out/gpu.txt"
  mkdir -p "$out/steps"
  PEAK_TFLOPS=${PEAK_TFLOPS:-$peak} STEPS_OUT="$out/steps" timeout "${PROFILE_S:-200}" /tmp/node bench/gpu/profile.bench.js /tmp/bench ${MODELS:-} 2>&1 | tee "$out/profile.txt"
fi
exit 0
