'use strict';
// Writes the ESM faces over the CommonJS build: for each entry point of package.json's
// `exports`, dist/<entry>.mjs and dist/<entry>.d.mts. Each export list is read from the built
// CommonJS module, so it never drifts from its source (lib/index.ts, lib/ir-entry.ts).
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist');
// dist/index.mjs last: scripts/build.js takes it as the sign that the whole build finished.
const ENTRIES = ['ir-entry', 'index'];

for (const entry of ENTRIES) {
  const names = Object.keys(require(path.join(dist, `${entry}.js`))).filter((n) => n !== 'default' && n !== '__esModule');
  const lines = [`import cjs from './${entry}.js';`, ...names.map((n) => `export const ${n} = cjs.${n};`), 'export default cjs;', ''];
  fs.writeFileSync(path.join(dist, `${entry}.mjs`), lines.join('\n'));
  fs.writeFileSync(path.join(dist, `${entry}.d.mts`), `export * from './${entry}.js';\n`);
}
