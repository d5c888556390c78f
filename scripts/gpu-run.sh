#!/usr/bin/env bash
# Runs on the GPU machine: unpacks Node and the bundle made by scripts/gpu-bundle.sh into
# /tmp/trtn and runs the GPU checks there, writing their outputs under $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p /tmp/trtn "$out"
xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node
tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
cd /tmp/trtn
{
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,uuid,pci.bus_id,memory.total,compute_cap,driver_version --format=csv
  echo "== devices --json"; /tmp/node dist/cli/index.js devices --json; echo "exit=$?"
  echo "== devices"; /tmp/node dist/cli/index.js devices; echo "exit=$?"
  echo "== doctor"; /tmp/node dist/cli/index.js doctor; echo "exit=$?"
  echo "== CUDA_VISIBLE_DEVICES= devices"; CUDA_VISIBLE_DEVICES= /tmp/node dist/cli/index.js devices; echo "exit=$?"
} 2>&1 | tee "$out/gpu-check.txt"
