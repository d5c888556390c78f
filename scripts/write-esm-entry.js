'use strict';
// Writes dist/index.mjs and dist/index.d.mts: an ESM face over the CommonJS build.
// The export list is read from the built CommonJS module, so it never drifts from lib/index.ts.
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist');
const names = Object.keys(require(path.join(dist, 'index.js'))).filter((n) => n !== 'default' && n !== '__esModule');
const lines = [
  "import cjs from './index.js';",
  ...names.map((n) => `export const ${n} = cjs.${n};`),
  'export default cjs;',
  '',
];
fs.writeFileSync(path.join(dist, 'index.mjs'), lines.join('\n'));
fs.writeFileSync(path.join(dist, 'index.d.mts'), "export * from './index.js';\n");
