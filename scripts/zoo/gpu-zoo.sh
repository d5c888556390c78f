#!/usr/bin/env bash
# On the GPU machine: builds the zoo with PyTorch (scripts/zoo/make_zoo.py), then compiles and
# runs every exported file with the bundle from scripts/gpu-bundle.sh (Node carried in .gpu/),
# and leaves manifest.json, results-<backend>.json and models-<backend>.md under $OUT.
# usage (device): bash scripts/zoo/gpu-zoo.sh [backend ...]   (default: reference)
set -uo pipefail
out=${OUT:-/tmp/out}
repo=$(pwd)
mkdir -p /tmp/trtn "$out"
[ -x /tmp/node ] || { xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node; }
[ -d /tmp/trtn/dist ] || tar -xJf .gpu/bundle.tar.xz -C /tmp/trtn
mkdir -p /tmp/trtn/scripts && cp -r "$repo/scripts/zoo" /tmp/trtn/scripts/
cd /tmp/trtn
start=$(date +%s)
# ZOO_PARALLEL PyTorch processes (each with its share of the cores) make every n-th model.
n=${ZOO_PARALLEL:-4}
threads=$(( $(nproc) / n )); [ "$threads" -ge 1 ] || threads=1
for i in $(seq 0 $((n - 1))); do
  ZOO_SHARD="$i/$n" OMP_NUM_THREADS=$threads timeout "${ZOO_BUILD_S:-600}" python3 scripts/zoo/make_zoo.py /tmp/zoo > "/tmp/zoo-shard$i.log" 2>&1 &
done
wait
grep -hv Warning /tmp/zoo-shard*.log | grep -E '^[a-z0-9_]+: [0-9.]+ s' | tail -80
python3 scripts/zoo/make_zoo.py --merge /tmp/zoo
echo "zoo built in $(( $(date +%s) - start )) s"
cp /tmp/zoo/manifest.json "$out/" 2>/dev/null
for backend in "${@:-reference}"; do
  # Results go straight to $OUT, rewritten after every model (a time limit keeps what is done).
  timeout "${ZOO_EVAL_S:-600}" /tmp/node scripts/zoo/evaluate.js /tmp/zoo "$out/zoo-$backend" --backend "$backend" --jobs "${ZOO_JOBS:-8}"
done
echo "total $(( $(date +%s) - start )) s"
