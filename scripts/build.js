#!/usr/bin/env node
'use strict';
// Builds the package's parts: `ts` (lib/ → dist/, tsc), `native` (the addon in build/Release,
// node-gyp) and `prebuild` (the release binary in prebuilds/<platform>-<arch>/).
//
//   node scripts/build.js [PART...]              the parts named (default: all), always
//   node scripts/build.js --if-stale [PART...]   only those older than their sources
//
// `prepare` (npm ci, npm install, npm pack), `prepack` and `pretest` use --if-stale, so
// `npm ci && npm test` builds once and npm pack ships JavaScript and this platform's binary.
// Staleness is judged by modification times, like make: git sets a checked-out file's mtime
// to the checkout time, so switching branches or pulling rebuilds what changed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const PARTS = ['ts', 'native', 'prebuild'];
const argv = process.argv.slice(2);
const ifStale = argv.includes('--if-stale');
const named = argv.filter((a) => a !== '--if-stale');
for (const arg of named) {
  if (!PARTS.includes(arg)) {
    process.stderr.write(`build.js: unknown argument ${arg} (expected --if-stale and parts among ${PARTS.join(', ')})\n`);
    process.exit(2);
  }
}
const parts = new Set(named.length > 0 ? named : PARTS);

/** Newest mtime (ms) of the files under `entries` (files or directories), 0 when none exist. */
function newestMtime(entries) {
  let newest = 0;
  const visit = (p) => {
    let stat;
    try {
      stat = fs.statSync(p);
    } catch {
      return;
    }
    if (stat.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const entry of entries) visit(path.join(ROOT, entry));
  return newest;
}

/** The output's mtime (ms), or -1 when it does not exist. */
function mtimeOf(output) {
  try {
    return fs.statSync(path.join(ROOT, output)).mtimeMs;
  } catch {
    return -1;
  }
}

function isFresh(output, sources) {
  return mtimeOf(output) >= newestMtime(sources);
}

function run(command, commandArgs) {
  // Local binaries (tsc, node-gyp) by their JS entry points: no PATH, no shell.
  const result = spawnSync(process.execPath, [require.resolve(command, { paths: [ROOT] }), ...commandArgs], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function step(part, name, output, sources, build) {
  if (!parts.has(part)) return;
  if (ifStale && isFresh(output, sources)) {
    process.stderr.write(`build: ${name} is up to date (${output})\n`);
    return;
  }
  process.stderr.write(`build: ${name}\n`);
  build();
}

// dist/index.mjs is written last (scripts/write-esm-entry.js): a failed build leaves it absent.
step('ts', 'TypeScript → dist/', 'dist/index.mjs', ['lib', 'tsconfig.json', 'tsconfig.build.json', 'scripts/write-esm-entry.js', 'package.json'], () => {
  // A clean dist/ so files of deleted sources never linger in a build or a package.
  fs.rmSync(path.join(ROOT, 'dist'), { recursive: true, force: true });
  run('typescript/bin/tsc', ['-p', 'tsconfig.build.json']);
  run(path.join(ROOT, 'scripts', 'write-esm-entry.js'), []);
});

const NATIVE_SOURCES = ['native', 'binding.gyp'];
step('native', 'addon → build/Release (node-gyp)', 'build/Release/tensorrt_node.node', NATIVE_SOURCES, () => {
  run('node-gyp/bin/node-gyp.js', ['rebuild', ...nodeDirArgs()]);
});

// Node's own headers when this Node ships them (distro and official tarball installs do), so
// the build needs no download of the headers tarball; otherwise node-gyp fetches or reuses its cache.
function nodeDirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? [`--nodedir=${prefix}`] : [];
}

// The release binary is the node-gyp build itself, copied (and stripped where `strip` exists)
// under the name node-gyp-build matches: N-API 8 (NAPI_VERSION in binding.gyp), so one file
// serves every Node ≥ 20.17 and Electron on this platform; the libc tag makes node-gyp-build
// pass over a glibc binary on musl instead of failing to dlopen it. Copying rather than
// recompiling (as prebuildify would) keeps build/Release intact while tests load it.
function libcTag() {
  if (process.platform !== 'linux') return '';
  const header = process.report.getReport().header;
  return header.glibcVersionRuntime ? '.glibc' : '.musl';
}
const PREBUILD_DIR = `prebuilds/${process.platform}-${process.arch}`;
const PREBUILD = `${PREBUILD_DIR}/tensorrt-node.napi${libcTag()}.node`;
step('prebuild', `prebuild → ${PREBUILD}`, PREBUILD, ['build/Release/tensorrt_node.node'], () => {
  fs.rmSync(path.join(ROOT, PREBUILD_DIR), { recursive: true, force: true });
  fs.mkdirSync(path.join(ROOT, PREBUILD_DIR), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'build/Release/tensorrt_node.node'), path.join(ROOT, PREBUILD));
  const strip = spawnSync('strip', ['--strip-unneeded', PREBUILD], { cwd: ROOT, stdio: 'inherit' });
  if (strip.error) process.stderr.write(`build: strip not found; ${PREBUILD} keeps its symbols\n`);
  else if (strip.status !== 0) process.exit(strip.status ?? 1);
});
