#!/usr/bin/env node
'use strict';
// Cross-compiles the addon for Linux arm64 (Jetson, Grace Hopper) with prebuildify and the
// GNU aarch64 cross compiler, and puts it where node-gyp-build looks on such a machine:
// prebuilds/linux-arm64/tensorrt-node.napi.glibc.node.
//
//   npm run build:prebuild:arm64
//   (needs aarch64-linux-gnu-g++: on Debian/Ubuntu `apt-get install g++-aarch64-linux-gnu`)
//
// prebuildify runs `node-gyp rebuild` in its working directory, which deletes and rewrites
// build/. Run in the package root, that would swap the x64 build/Release that the tests load
// for an arm64 one. So it runs in a temporary copy of the sources (binding.gyp, native/,
// package.json for the prebuild's name, a link to node_modules for node-addon-api), and only
// the finished prebuild is copied back.
//
// Environment: CROSS_PREFIX (default `aarch64-linux-gnu-`) names another toolchain;
// TENSORRT_ROOT / TENSORRT_INCLUDE_DIR compile the TensorRT backend in, as for the x64 build.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const ARCH = 'arm64';
const CROSS = process.env.CROSS_PREFIX ?? 'aarch64-linux-gnu-';
const NAME = 'tensorrt-node.napi.glibc.node';
const DEST_DIR = path.join(ROOT, 'prebuilds', `linux-${ARCH}`);
// ELF e_machine of AArch64: the check that the cross compiler, not the host's, made the file.
const EM_AARCH64 = 183;

function fail(message) {
  process.stderr.write(`prebuild-arm64: ${message}\n`);
  process.exit(1);
}

const probe = spawnSync(`${CROSS}g++`, ['--version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  fail(`${CROSS}g++ was not found. Install the cross compiler (Debian/Ubuntu: apt-get install g++-aarch64-linux-gnu) or set CROSS_PREFIX.`);
}
process.stderr.write(`prebuild-arm64: ${probe.stdout.split('\n')[0]}\n`);

// Node's own headers when this Node ships them, as scripts/build.js does: node-gyp would
// otherwise download the headers of prebuildify's default target. Node-API headers are the
// same for every architecture, so the host's serve the arm64 build.
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? prefix : undefined;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tensorrt-node-prebuild-'));
try {
  fs.copyFileSync(path.join(ROOT, 'binding.gyp'), path.join(work, 'binding.gyp'));
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(work, 'package.json'));
  fs.cpSync(path.join(ROOT, 'native'), path.join(work, 'native'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'), 'dir');

  const env = {
    ...process.env,
    CC: `${CROSS}gcc`,
    CXX: `${CROSS}g++`,
    LINK: `${CROSS}g++`,
    AR: `${CROSS}ar`,
    // Two jobs: the machines that build this have two cores, shared with other work.
    JOBS: process.env.JOBS ?? '2',
  };
  const dir = nodeDir();
  if (dir !== undefined) env.npm_config_nodedir = dir;

  const args = [
    require.resolve('prebuildify/bin.js', { paths: [ROOT] }),
    '--napi',
    // prebuildify names a Node-API build <name>.<tags>.node with no `napi` tag; naming it
    // `tensorrt-node.napi` gives the linux-x64 prebuild's name, tensorrt-node.napi.glibc.node,
    // which node-gyp-build reads as Node-API (any runtime, Electron included) for glibc.
    '--name=tensorrt-node.napi',
    // The target only names the headers node-gyp uses; a Node-API 8 build runs on every
    // Node ≥ 20.17 (and Electron) whatever version compiled it.
    `--target=${process.versions.node}`,
    `--arch=${ARCH}`,
    '--platform=linux',
    '--tag-libc',
    '--libc=glibc',
    '--strip',
    `--strip-bin=${CROSS}strip`,
    `--node-gyp=${require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] })}`,
    `--cwd=${work}`,
  ];
  const result = spawnSync(process.execPath, args, { cwd: work, env, stdio: 'inherit' });
  if (result.status !== 0) fail(`prebuildify exited with ${result.status ?? result.signal}`);

  const built = path.join(work, 'prebuilds', `linux-${ARCH}`, NAME);
  if (!fs.existsSync(built)) {
    const found = fs.existsSync(path.dirname(built)) ? fs.readdirSync(path.dirname(built)).join(', ') : 'nothing';
    fail(`prebuildify did not write ${NAME} (it wrote: ${found})`);
  }
  const elf = fs.readFileSync(built);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf.readUInt16LE(18) !== EM_AARCH64) {
    fail(`${built} is not an AArch64 ELF file (e_machine ${elf.readUInt16LE(18)})`);
  }

  fs.rmSync(DEST_DIR, { recursive: true, force: true });
  fs.mkdirSync(DEST_DIR, { recursive: true });
  fs.copyFileSync(built, path.join(DEST_DIR, NAME));
  process.stderr.write(`prebuild-arm64: wrote ${path.relative(ROOT, path.join(DEST_DIR, NAME))} (${elf.length} bytes)\n`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
