#!/usr/bin/env bash
# Runs on the GPU machine: unpacks Node and the bundle made by scripts/gpu-bundle.sh into
# /tmp/trtn and runs the GPU checks, the declaration checks and the GPU benchmarks there,
# writing their outputs under $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p /tmp/trtn "$out"
xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node
tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
# Every fixture comes with the working tree (tracked files travel there): link rather than pack them.
mkdir -p /tmp/trtn/test && rm -rf /tmp/trtn/test/fixtures && ln -s "$(pwd)/test/fixtures" /tmp/trtn/test/fixtures
cd /tmp/trtn
# One check with its output in a file of its own, killed after CHECK_TIMEOUT seconds and then
# left behind: a process stuck in the GPU driver (a kernel that never ends) cannot be reaped,
# and neither `timeout` nor a pipe it holds open may stall the checks after it. CHECK_PROGRESS=1
# makes the checks that list cases name each case as it starts, so a stall names its case.
run_check() {
  local c=$1 log waited=0 limit=${CHECK_TIMEOUT:-300}
  log="$out/$(basename "$c" .js).log"
  CHECK_PROGRESS=1 /tmp/node "$c" > "$log" 2>&1 < /dev/null &
  local pid=$!
  while kill -0 "$pid" 2> /dev/null && [ "$waited" -lt "$limit" ]; do sleep 1; waited=$((waited + 1)); done
  cat "$log"
  if kill -0 "$pid" 2> /dev/null; then
    kill -9 "$pid" 2> /dev/null; disown "$pid" 2> /dev/null
    echo "$c exit=killed after $limit s (last lines above; the process may stay stuck in the driver)"
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
  else
    wait "$pid"; echo "$c exit=$?"
  fi
}
{
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,uuid,pci.bus_id,memory.total,compute_cap,driver_version --format=csv
  echo "== devices --json"; /tmp/node dist/cli/index.js devices --json; echo "exit=$?"
  echo "== devices"; /tmp/node dist/cli/index.js devices; echo "exit=$?"
  echo "== doctor"; /tmp/node dist/cli/index.js doctor; echo "exit=$?"
  echo "== CUDA_VISIBLE_DEVICES= devices"; CUDA_VISIBLE_DEVICES= /tmp/node dist/cli/index.js devices; echo "exit=$?"
  echo "== libraries"
  ls -l /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda/lib64/libcublasLt.so* 2>&1
  ldconfig -p | grep -E 'libnvrtc|libcublasLt|libcudnn.so' 2>&1
  echo "== declarations against the real headers"
  for f in native/cuda/check_declarations.cc native/cuda/check_runtime_declarations.cc native/nvrtc/check_declarations.cc \
           native/cublaslt/check_declarations.cc native/cudnn/check_declarations.cc native/nccl/check_declarations.cc; do
    g++ -std=c++17 -I/usr/local/cuda/include -I/usr/include/x86_64-linux-gnu -o /tmp/declcheck "$f" && /tmp/declcheck
    echo "$f exit=$?"
  done
  echo "== GPU checks"
  for c in ${GPU_CHECKS:-test/gpu/*.check.js}; do run_check "$c"; done
} 2>&1 | tee "$out/gpu-check.txt"
[ -n "${SKIP_BENCH:-}" ] && exit 0
{
  echo "== C++ baseline"
  g++ -O2 -std=c++17 -I/usr/local/cuda/include bench/gpu/copy_baseline.cc -o /tmp/copy_baseline \
    -L/usr/local/cuda/lib64/stubs -lcuda && /tmp/copy_baseline > /tmp/baseline.json; cat /tmp/baseline.json
  echo "== runtime benchmarks"
  /tmp/node bench/gpu/runtime.bench.js "$(cat /tmp/baseline.json)"; echo "exit=$?"
} 2>&1 | tee "$out/gpu-bench.txt"
