#!/usr/bin/env bash
# Packs what a GPU-machine check needs into .gpu/bundle.tar.xz: the built JS (dist/), the
# built addon, package.json, the production dependencies (test/fixtures travels with the
# working tree and scripts/gpu-run.sh links it), native/ (its declaration checks compile
# against the real headers there) and bench/gpu. The GPU machine has no Node
# and no network; .gpu/node.xz carries Node itself (see docs/gpu-checks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
[ -f .gpu/node.xz ] || xz -T2 -6 -c "$(command -v node)" > .gpu/node.xz
# Every production dependency, transitive ones included (onnx-proto needs protobufjs...).
prod=$(npm ls --omit=dev --all --parseable 2>/dev/null | tail -n +2 | sed "s#^$PWD/##" | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
tar -cJf .gpu/bundle.tar.xz package.json dist build/Release/tensorrt_node.node $prod test/gpu scripts/gpu-run.sh native bench/gpu
ls -la .gpu
