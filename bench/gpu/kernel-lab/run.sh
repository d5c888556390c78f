#!/usr/bin/env bash
# On the GPU machine: builds lab.cu against cases.h (written here by export.js) and runs it;
# with NCU=1 also profiles the generated kernels with Nsight Compute when it is installed.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -std=c++17 lab.cu -o /tmp/lab -lcuda -lnvrtc 2>&1 | grep -v '^$' | tail -20
/tmp/lab 2>&1 | tee "$out/lab.txt"
if [ -n "${NCU:-}" ]; then
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "== ncu: ${ncu:-absent}"
  [ -n "$ncu" ] && timeout 180 "$ncu" --kernel-name regex:'k_lab_bias|k_softmax|k_normalization' --launch-count 3 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats /tmp/lab 2>&1 | tail -150 | tee "$out/ncu.txt"
  [ -n "$ncu" ] && timeout 180 "$ncu" --kernel-name regex:'k_attention' --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis /tmp/lab 2>&1 | tail -200 | tee "$out/ncu-attention.txt"
fi
