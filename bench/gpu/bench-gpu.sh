#!/usr/bin/env bash
# `npm run bench:gpu`: the GPU benchmark suite on this machine, in one command (docs/gpu-benchmark.md).
# Every workload of bench/gpu/models.py is exported and timed in PyTorch, then compiled and timed
# through tensorrt-node's cuda backend (bench/gpu/models.bench.js), into one output folder:
#   torch.txt, torch.json         PyTorch's side (a JSON line per model; the list)
#   models-bench.txt, table.md    ours, beside PyTorch's figures, and the Markdown table
#   results.json                  everything: device, date, commit, both sides per model, the summary
#   exports/                      the .pt2 files, inputs and outputs (GBs: removed at the end unless KEEP_EXPORTS=1)
# Needs: an NVIDIA GPU, python3 with PyTorch (CUDA), torchvision and transformers, Node ($NODE, else
# node on PATH), and this repository built (dist/: npm run build).
# usage: [OUT_DIR=dir] [MODELS="a b" | GROUP=N] [PRECISION=fp16] [SKIP_TORCH_COMPILE=1]
#        [MAX_AUTOTUNE=1 [MAX_AUTOTUNE_S=300]] [TORCH_REPS=50] [OURS_REPS=50] [OVERLAP=32]
#        [TORCH_CUDNN_BENCHMARK=1] [KEEP_EXPORTS=1] [PYTHON=python3] [NODE=node] npm run bench:gpu [-- name ...]
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
fail() {
  echo "bench:gpu: $*" >&2
  exit 1
}

node=${NODE:-node}
python=${PYTHON:-python3}
[ -f dist/index.js ] || fail "dist/ is missing in $repo: build tensorrt-node first (npm run build)"
command -v "$node" > /dev/null || fail "no Node: put node on PATH or set NODE=/path/to/node"
command -v "$python" > /dev/null || fail "no $python: install Python 3 with PyTorch, torchvision and transformers, or set PYTHON=/path/to/python"
"$python" -c 'import torch' > /dev/null 2>&1 || fail "$python cannot import torch: install PyTorch with CUDA support (or set PYTHON to a Python that has it)"
"$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() and torch.cuda.device_count() > 0 else 1)' > /dev/null 2>&1 ||
  fail "PyTorch $("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null) sees no CUDA device (a CPU-only build, no NVIDIA driver, or CUDA_VISIBLE_DEVICES hides the GPUs)"
for m in torchvision transformers; do
  "$python" -c "import $m" > /dev/null 2>&1 || echo "bench:gpu: warning: $python cannot import $m: the workloads built from it will fail (and be reported as failed)" >&2
done

# MODELS or arguments name the workloads; GROUP picks a third of the suite; neither runs it all.
names=("$@")
[ ${#names[@]} -eq 0 ] && [ -n "${MODELS:-}" ] && read -r -a names <<< "$MODELS"

out_dir=${OUT_DIR:-bench/gpu/out/$(date +%Y-%m-%d-%H%M%S)}
exports="$out_dir/exports"
mkdir -p "$exports" || fail "cannot make $exports"
out_dir=$(cd "$out_dir" && pwd)
exports="$out_dir/exports"

# The commit measured, "-dirty" when the working tree differs from it.
if [ -z "${GIT_COMMIT:-}" ] && commit=$(git rev-parse --short=12 HEAD 2> /dev/null); then
  git diff --quiet HEAD -- 2> /dev/null || commit="$commit-dirty"
  GIT_COMMIT=$commit
fi
export GIT_COMMIT=${GIT_COMMIT:-}
# Ours at fp16 by default: PyTorch's figures it is set against are fp16.
export PRECISION=${PRECISION:-fp16}

echo "bench:gpu: output in $out_dir (commit ${GIT_COMMIT:-unknown}, ours at $PRECISION)"
PYTHONUNBUFFERED=1 "$python" bench/gpu/models.py "$exports" ${names[@]+"${names[@]}"} 2>&1 | tee "$out_dir/torch.txt"
torch_rc=${PIPESTATUS[0]}
# Whatever models.py finished is run through ours, also when it stopped early.
[ -f "$exports/torch.json" ] || fail "models.py wrote no torch.json (exit $torch_rc): see $out_dir/torch.txt"
cp "$exports/torch.json" "$out_dir/torch.json"

RESULTS_JSON="$out_dir/results.json" TABLE_MD="$out_dir/table.md" "$node" bench/gpu/models.bench.js "$exports" 2>&1 | tee "$out_dir/models-bench.txt"
ours_rc=${PIPESTATUS[0]}

if [ -z "${KEEP_EXPORTS:-}" ]; then
  rm -rf -- "$exports"
fi
echo "bench:gpu: results in $out_dir (results.json, table.md)"
[ "$torch_rc" -eq 0 ] || fail "models.py exited $torch_rc"
[ "$ours_rc" -eq 0 ] || fail "models.bench.js exited $ours_rc"
exit 0
