#!/usr/bin/env bash
# Mutation testing of the seed cores on a many-core machine (the 2-core development machine
# needs about an hour per module). Pack on the development machine with `--pack` (a stripped
# Node and the modules scripts/mutation-closure.js lists, into .gpu/; carry only
# .gpu/node.xz, .gpu/dev-modules.tar.xz, .gpu/ort-modules.tar.xz and .gpu/dist.tar.xz); run there with no argument: each chunk of files is its own Stryker run, several side
# by side, each writing reports/mutation/mutation-<chunk>.json (copied to $OUT when set).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--pack" ]; then
  mkdir -p .gpu
  strip -o .gpu/node-stripped "$(command -v node)" && xz -T2 -9 -c .gpu/node-stripped > .gpu/node.xz && rm .gpu/node-stripped
  node scripts/mutation-closure.js > .gpu/mutation-modules.txt
  # Stryker reads tsconfig.json with TypeScript's own parser (typescript.js is enough for that).
  # Type declarations, source maps, docs and unused module formats are not needed to run.
  tar -cf - --exclude='*.ts' --exclude='*.mts' --exclude='*.cts' --exclude='*.map' --exclude='*.md' \
    --exclude=node_modules/rxjs/src --exclude=node_modules/rxjs/dist/esm5 --exclude=node_modules/rxjs/dist/esm \
    --exclude=node_modules/rxjs/dist/bundles --exclude=node_modules/zod/src --exclude=node_modules/protobufjs/dist --exclude=node_modules/protobufjs/cli \
    -T .gpu/mutation-modules.txt node_modules/.bin \
    node_modules/typescript/package.json node_modules/typescript/lib/typescript.js | xz -T2 -9 > .gpu/dev-modules.tar.xz
  # The legalization tests compare with onnxruntime-node and run programs through the worker,
  # which executes dist/: both travel packed (onnxruntime for linux-x64 only).
  tar -cf - --exclude='node_modules/onnxruntime-node/bin/napi-v6/darwin' --exclude='node_modules/onnxruntime-node/bin/napi-v6/win32' --exclude='node_modules/onnxruntime-node/bin/napi-v6/linux/arm64' \
    node_modules/onnxruntime-node node_modules/onnxruntime-common | xz -T2 -6 > .gpu/ort-modules.tar.xz
  tar -cJf .gpu/dist.tar.xz dist
  ls -la .gpu
  exit 0
fi
if ! command -v node >/dev/null; then
  # The many-core machine: no Node there, so unpack the packed one and the modules (each time,
  # since a previous call may have left an older node_modules).
  mkdir -p /tmp/mutation-node
  xz -dc .gpu/node.xz > /tmp/mutation-node/node && chmod +x /tmp/mutation-node/node
  rm -rf node_modules dist && tar -xJf .gpu/dev-modules.tar.xz && tar -xJf .gpu/ort-modules.tar.xz && tar -xJf .gpu/dist.tar.xz
  export PATH=/tmp/mutation-node:$PATH
fi
cores=$(nproc)
# chunk name : module : files (or file:first-last line ranges, so that a long file is split)
all_chunks=(
  "complex-rules-a:complex:lib/lowering/complex/rules.ts:1-250"
  "complex-rules-b:complex:lib/lowering/complex/rules.ts:251-506"
  "complex-rewrite:complex:lib/lowering/complex/rewrite.ts"
  "complex-detect:complex:lib/lowering/complex/detect.ts,lib/lowering/complex/index.ts"
  "dynamic-legalize-a:dynamic:lib/legalization/legalize.ts:1-235"
  "dynamic-legalize-b:dynamic:lib/legalization/legalize.ts:236-470"
  "dynamic-variants:dynamic:lib/legalization/variants.ts,lib/legalization/index.ts"
)
# MUTATION_CHUNKS="complex-rules-a dynamic-legalize-b" runs only those chunks (all by default).
chunks=()
for c in "${all_chunks[@]}"; do
  case " ${MUTATION_CHUNKS:-${c%%:*}} " in *" ${c%%:*} "*) chunks+=("$c") ;; esac
done
[ "${#chunks[@]}" -gt 0 ] || { echo "MUTATION_CHUNKS=$MUTATION_CHUNKS names no chunk (known: ${all_chunks[*]%%:*})" >&2; exit 2; }
per=$(( cores / ${#chunks[@]} )); [ "$per" -lt 1 ] && per=1
mkdir -p reports/mutation
for c in "${chunks[@]}"; do
  IFS=: read -r name module files <<<"$c"
  STRYKER_MODULE=$module STRYKER_MUTATE=$files STRYKER_SUFFIX=-$name STRYKER_CONCURRENCY=$per STRYKER_TIMEOUT_MS=${STRYKER_TIMEOUT_MS:-20000} \
    node node_modules/@stryker-mutator/core/bin/stryker.js run stryker.conf.js --reporters json,clear-text \
    > "reports/mutation/log-$name.txt" 2>&1 &
done
wait
for c in "${chunks[@]}"; do
  name=${c%%:*}
  echo "== $name"; tail -n 40 "reports/mutation/log-$name.txt"
done
if [ -n "${OUT:-}" ]; then cp reports/mutation/*.json reports/mutation/log-*.txt "$OUT"/ 2>/dev/null; fi
