'use strict';
// `npm run bench`: runs every bench/*.bench.js in its own process (so one benchmark's memory
// does not colour the next) and prints their results. Benchmarks use dist/: build first.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

if (!fs.existsSync(path.join(__dirname, '..', 'dist', 'index.js'))) {
  console.error('bench: dist/ is missing; run `npm run build` first');
  process.exit(1);
}
const only = process.argv[2];
const benches = fs.readdirSync(__dirname).filter((f) => f.endsWith('.bench.js') && (!only || f.includes(only)));
let failed = 0;
for (const bench of benches) {
  console.log(`\n# ${bench}`);
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(__dirname, bench)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
