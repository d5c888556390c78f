#!/usr/bin/env bash
# Mutation testing of the seed cores on a many-core machine (the 2-core development machine
# needs about an hour per module). Pack on the development machine with `--pack` (a stripped
# Node and the modules scripts/mutation-closure.js lists, into .gpu/; carry only
# .gpu/node.xz and .gpu/dev-modules.tar.xz); run there with no argument: each chunk of files is its own Stryker run, several side
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
    --exclude=node_modules/rxjs/dist/bundles --exclude=node_modules/zod/src --exclude=node_modules/protobufjs/dist \
    -T .gpu/mutation-modules.txt node_modules/.bin \
    node_modules/typescript/package.json node_modules/typescript/lib/typescript.js | xz -T2 -9 > .gpu/dev-modules.tar.xz
  ls -la .gpu
  exit 0
fi
if ! command -v node >/dev/null; then
  # The many-core machine: no Node there, so unpack the packed one and the modules (each time,
  # since a previous call may have left an older node_modules).
  mkdir -p /tmp/mutation-node
  xz -dc .gpu/node.xz > /tmp/mutation-node/node && chmod +x /tmp/mutation-node/node
  rm -rf node_modules && tar -xJf .gpu/dev-modules.tar.xz
  export PATH=/tmp/mutation-node:$PATH
fi
cores=$(nproc)
# chunk name : module : files
chunks=(
  "complex-rules:complex:lib/lowering/complex/rules.ts"
  "complex-rewrite:complex:lib/lowering/complex/rewrite.ts"
  "complex-detect:complex:lib/lowering/complex/detect.ts,lib/lowering/complex/index.ts"
  "dynamic-legalize:dynamic:lib/legalization/legalize.ts"
  "dynamic-variants:dynamic:lib/legalization/variants.ts,lib/legalization/index.ts"
)
per=$(( cores / ${#chunks[@]} )); [ "$per" -lt 1 ] && per=1
mkdir -p reports/mutation
for c in "${chunks[@]}"; do
  IFS=: read -r name module files <<<"$c"
  STRYKER_MODULE=$module STRYKER_MUTATE=$files STRYKER_SUFFIX=-$name STRYKER_CONCURRENCY=$per \
    node node_modules/@stryker-mutator/core/bin/stryker.js run stryker.conf.js --reporters json,clear-text \
    > "reports/mutation/log-$name.txt" 2>&1 &
done
wait
for c in "${chunks[@]}"; do
  name=${c%%:*}
  echo "== $name"; tail -n 40 "reports/mutation/log-$name.txt"
done
if [ -n "${OUT:-}" ]; then cp reports/mutation/*.json reports/mutation/log-*.txt "$OUT"/ 2>/dev/null; fi
