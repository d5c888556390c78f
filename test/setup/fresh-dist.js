'use strict';
/**
 * Tests that run programs go through a worker thread executing dist/, not lib/: without a
 * fresh build, `npx jest` would test stale code. This decides whether dist/ is stale and
 * rebuilds it (jest's globalSetup, ./global-setup.js).
 *
 * Stale means: dist/index.js is missing, or some file or folder under lib/ (a folder's
 * mtime changes when a file is added or removed), or tsconfig.build.json, is newer than
 * the oldest file in dist/ (the build removes dist/ and writes every file again).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const BUILD_COMMAND = 'npm run build:ts';

/** Every path under `dir` (folders included), with its mtime in ms. */
function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    out.push({ path: p, mtimeMs: fs.statSync(p).mtimeMs, dir: entry.isDirectory() });
    if (entry.isDirectory()) walk(p, out);
  }
  return out;
}

/** Why dist/ under `root` needs a build (a sentence), or null when it is fresh. */
function staleReason(root) {
  const dist = path.join(root, 'dist');
  if (!fs.existsSync(path.join(dist, 'index.js'))) return 'dist/index.js is missing';
  const built = walk(dist).filter((e) => !e.dir);
  const oldest = built.reduce((a, b) => (b.mtimeMs < a.mtimeMs ? b : a));
  const sources = [{ path: path.join(root, 'lib'), mtimeMs: fs.statSync(path.join(root, 'lib')).mtimeMs }, ...walk(path.join(root, 'lib'))];
  const config = path.join(root, 'tsconfig.build.json');
  if (fs.existsSync(config)) sources.push({ path: config, mtimeMs: fs.statSync(config).mtimeMs });
  const newer = sources.find((e) => e.mtimeMs > oldest.mtimeMs);
  if (newer === undefined) return null;
  return `${path.relative(root, newer.path)} is newer than ${path.relative(root, oldest.path)}`;
}

/**
 * Builds dist/ when stale. `run(command, root)` returns the exit status (a shell run of
 * `command` in `root` by default). Throws, naming the command, when the build fails.
 */
function ensureFreshDist(root, run = defaultRun, log = (line) => process.stderr.write(`${line}\n`)) {
  const why = staleReason(root);
  if (why === null) return false;
  log(`jest global setup: ${why}; running \`${BUILD_COMMAND}\``);
  const status = run(BUILD_COMMAND, root);
  if (status !== 0) {
    throw new Error(`dist/ is stale (${why}) and \`${BUILD_COMMAND}\` failed (exit status ${status}); run \`${BUILD_COMMAND}\` and fix the build before testing`);
  }
  const still = staleReason(root);
  if (still !== null) throw new Error(`\`${BUILD_COMMAND}\` succeeded but dist/ is still stale: ${still}`);
  return true;
}

function defaultRun(command, cwd) {
  const r = spawnSync(command, { cwd, shell: true, stdio: ['ignore', 'inherit', 'inherit'] });
  return r.status ?? 1;
}

module.exports = { BUILD_COMMAND, staleReason, ensureFreshDist };
