#!/usr/bin/env bash
# On the GPU machine: builds lab.cu against cases.h (written here by export.js) and runs it;
# with NCU=1 also profiles the generated kernels with Nsight Compute when it is installed.
#   LAB_ONLY=<text>    only the cases whose name contains it
#   NCU_KERNELS=<re>   with NCU=1, profile these kernels once each (LAB_ONCE) with stall
#                      reasons and instruction counts, instead of the default sections
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -std=c++17 lab.cu -o /tmp/lab -lcuda -lnvrtc 2>&1 | grep -v '^$' | tail -20
/tmp/lab 2>&1 | tee "$out/lab.txt"
if [ -n "${NCU:-}" ]; then
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "== ncu: ${ncu:-absent}"
  [ -z "$ncu" ] && exit 0
  if [ -n "${NCU_KERNELS:-}" ]; then
    stalls=$(for r in long_scoreboard short_scoreboard wait barrier lg_throttle mio_throttle math_pipe_throttle not_selected selected dispatch_stall no_instruction drain membar branch_resolving tex_throttle imc_miss sleeping misc; do
      printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' "$r"; done)
    LAB_ONCE=1 timeout 240 "$ncu" --clock-control none --kernel-name regex:"$NCU_KERNELS" --launch-count 40 \
      --metrics "gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,smsp__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,smsp__average_warp_latency_per_inst_issued.ratio,${stalls%,}" \
      /tmp/lab 2>&1 | tail -600 | tee "$out/ncu.txt"
    exit 0
  fi
  timeout 180 "$ncu" --kernel-name regex:'k_lab_bias|k_softmax|k_normalization' --launch-count 3 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats /tmp/lab 2>&1 | tail -150 | tee "$out/ncu.txt"
  timeout 180 "$ncu" --kernel-name regex:'k_attention' --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis /tmp/lab 2>&1 | tail -200 | tee "$out/ncu-attention.txt"
fi
