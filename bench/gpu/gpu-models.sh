#!/usr/bin/env bash
# On the GPU machine: the issue-19 workloads in PyTorch (bench/gpu/models.py) and through the
# cuda backend (bench/gpu/models.bench.js), in one command, results under $OUT.
# usage (device): [MODELS="resnet50_b1 ..."] [PRECISION=fp16] [PROFILE=1] [SKIP_TIMES=1] [SKIP_TORCH_COMPILE=1] bash bench/gpu/gpu-models.sh
# (PRECISION: what models.bench.js compiles with: fp32 (default), tf32, fp16 or bf16)
set -uo pipefail
out=${OUT:-/tmp/out}
repo=$(pwd)
mkdir -p /tmp/trtn "$out" /tmp/bench
[ -x /tmp/node ] || { xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node; }
[ -d /tmp/trtn/dist ] || tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
mkdir -p /tmp/trtn/bench/gpu && cp "$repo"/bench/gpu/models.* "$repo"/bench/gpu/export-io.js /tmp/trtn/bench/gpu/
cd /tmp/trtn
timeout "${TORCH_S:-400}" python3 bench/gpu/models.py /tmp/bench ${MODELS:-} 2>&1 | grep -v -i warn | tee "$out/torch.txt"
cp /tmp/bench/torch.json "$out/" 2>/dev/null
[ -z "${SKIP_TIMES:-}" ] && timeout "${OURS_S:-300}" /tmp/node bench/gpu/models.bench.js /tmp/bench 2>&1 | tee "$out/models-bench.txt"
[ -n "${PROFILE:-}" ] && timeout "${PROFILE_S:-200}" /tmp/node bench/gpu/profile.bench.js /tmp/bench 2>&1 | tee "$out/profile.txt"
exit 0
