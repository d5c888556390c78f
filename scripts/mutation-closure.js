'use strict';
// Prints the node_modules folders that mutation testing needs (Stryker, its jest runner, jest,
// swc and the production dependencies, with everything they depend on), one per line, so that
// scripts/mutation-many-cores.sh --pack can carry them without the rest (the device tool
// limits what travels to 64 MiB, fixtures included).
const path = require('path'), fs = require('fs');
const root = path.resolve(__dirname, '..');
const roots = ['@stryker-mutator/core', '@stryker-mutator/jest-runner', 'jest', '@swc/jest', '@swc/core', ...Object.keys(require(path.join(root, 'package.json')).dependencies)];
const seen = new Set();
function pkgDir(name, from) {
  let dir = from;
  for (;;) {
    const cand = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(cand, 'package.json'))) return cand;
    const up = path.dirname(dir); if (up === dir) return null; dir = up;
  }
}
function visit(name, from) {
  const dir = pkgDir(name, from); if (!dir || seen.has(dir)) return;
  seen.add(dir);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json')));
  for (const d of [...Object.keys(pj.dependencies || {}), ...Object.keys(pj.optionalDependencies || {}), ...Object.keys(pj.peerDependencies || {})]) visit(d, dir);
}
for (const r of roots) visit(r, root);
const rel = [...seen].map((d) => path.relative(root, d)).filter((d) => !d.includes('onnxruntime-node') && d !== 'node_modules/typescript');
// keep only top-level-most paths (nested ones are inside their parents)
rel.sort();
const top = rel.filter((d, i) => !rel.some((o) => o !== d && d.startsWith(o + '/')));
process.stdout.write(top.join('\n') + '\n');
