/**
 * The linux-arm64 prebuild (Jetson, Grace Hopper), cross-compiled by
 * `npm run build:prebuild:arm64` and committed: that it is an AArch64 shared object with the
 * name node-gyp-build matches and no newer glibc/libstdc++ than documented, and, where
 * qemu-user and an arm64 Node 20 are installed (`bash scripts/arm64-node-sysroot.sh`), that an
 * arm64 Node finds it through the package's loader, loads it and gets the typed error for the
 * missing NVIDIA driver from devices(). Without qemu or that Node the emulated run is skipped,
 * and the title says why.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { BUILT_ADDON, childEnv, makeTempDir, removeTempDir, REPO_ROOT, requireBuild } from '../helpers/built-package';

const NAME = 'tensorrt-node.napi.glibc.node';
const PREBUILD = path.join(REPO_ROOT, 'prebuilds', 'linux-arm64', NAME);
const EM_AARCH64 = 183;
const FIX = 'run `npm run build:prebuild:arm64`';

/** The first of `names` found on PATH, or undefined. */
function onPath(...names: string[]): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of names) {
      const file = path.join(dir, name);
      if (dir !== '' && fs.existsSync(file)) return file;
    }
  }
  return undefined;
}

const SYSROOT = process.env.TENSORRT_NODE_ARM64_SYSROOT || path.join(os.homedir(), '.cache', 'tensorrt-node', 'arm64-sysroot');
const ARM64_NODE = path.join(SYSROOT, 'usr', 'bin', 'node');
const QEMU = onPath('qemu-aarch64', 'qemu-aarch64-static');
const READELF = onPath('readelf', 'aarch64-linux-gnu-readelf');

const missing = [
  QEMU === undefined ? 'qemu-aarch64 (qemu-user)' : '',
  fs.existsSync(ARM64_NODE) ? '' : `an arm64 Node at ${ARM64_NODE}`,
].filter(Boolean);

/** Orders dotted versions (2.34 < 2.35, 3.4.9 < 3.4.29) as readelf prints them. */
function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const underQemu = missing.length === 0 ? test : test.skip;
const skipNote = missing.length === 0 ? '' : ` (skipped: missing ${missing.join(' and ')}; \`bash scripts/arm64-node-sysroot.sh\` installs them)`;

describe('linux-arm64 prebuild', () => {
  test('is an AArch64 ELF shared object under the name node-gyp-build matches on arm64 glibc', () => {
    expect({ exists: fs.existsSync(PREBUILD), fix: FIX }).toEqual({ exists: true, fix: FIX });
    const elf = fs.readFileSync(PREBUILD);
    expect(elf.subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    expect(elf[4]).toBe(2); // ELFCLASS64
    expect(elf.readUInt16LE(16)).toBe(3); // ET_DYN: a shared object, as dlopen needs
    expect(elf.readUInt16LE(18)).toBe(EM_AARCH64);
    // At least the size of the addon's code: not a placeholder.
    expect(elf.length).toBeGreaterThan(50_000);
  });

  (READELF === undefined ? test.skip : test)(
    `needs no glibc newer than 2.34 and no libstdc++ newer than GLIBCXX_3.4.30, as docs/packaging.md says${READELF === undefined ? ' (skipped: no readelf)' : ''}`,
    () => {
      const result = spawnSync(READELF!, ['--version-info', '--wide', PREBUILD], { encoding: 'utf8' });
      expect(result.status).toBe(0);
      const needed = (prefix: string): number[][] =>
        [...result.stdout.matchAll(new RegExp(`Name: ${prefix}_([0-9.]+)`, 'g'))].map((m) => m[1]!.split('.').map(Number));
      const newest = (versions: number[][]): string => versions.reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b)).join('.');
      const glibc = needed('GLIBC');
      const glibcxx = needed('GLIBCXX');
      // Sanity: the dynamic section was read (dlopen itself is versioned), so an empty match
      // cannot pass for "no requirement".
      expect(glibc.length).toBeGreaterThan(0);
      expect(newest(glibc)).toBe('2.34');
      expect(['3.4.29', '3.4.30']).toContain(newest(glibcxx));
    },
  );

  underQemu(
    `loads under qemu with an arm64 Node through the package's loader, and devices() reports the missing driver as E_CUDA_MISSING${skipNote}`,
    () => {
      requireBuild();
      // A package root holding only the arm64 prebuild: the repository's build/Release is the
      // host's x64 addon, which node-gyp-build would pick first.
      const root = makeTempDir('arm64');
      try {
        fs.mkdirSync(path.join(root, 'prebuilds'));
        fs.symlinkSync(path.dirname(PREBUILD), path.join(root, 'prebuilds', 'linux-arm64'), 'dir');
        const script = [
          `const { loadAddon } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'native.js'))});`,
          `const { devices } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'devices.js'))});`,
          'const addon = loadAddon();',
          'const out = { arch: process.arch, node: process.version, path: addon.path, source: addon.source, info: addon.info, exports: Object.keys(addon.binding).sort() };',
          'devices().then(',
          "  (r) => console.log(JSON.stringify({ ...out, devices: r })),",
          '  (e) => console.log(JSON.stringify({ ...out, error: { code: e.code, name: e.name, message: e.message, tried: e.details && e.details.tried } })),',
          ');',
        ].join('\n');
        const run = spawnSync(QEMU!, ['-L', SYSROOT, ARM64_NODE, '-e', script], {
          cwd: root,
          // No TENSORRT_NODE_CUDA_LIBRARY or other redirection from the parent; an empty
          // LD_LIBRARY_PATH so the host's libcuda (on a GPU machine) is not offered to arm64 code.
          env: childEnv({ TENSORRT_NODE_PREBUILD: root, LD_LIBRARY_PATH: '' }),
          encoding: 'utf8',
          timeout: 90_000,
        });
        expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toMatchObject({ status: 0 });
        const out = JSON.parse(run.stdout) as {
          arch: string;
          node: string;
          path: string;
          source: string;
          info: { bindingAbi: number; napiVersion: number };
          exports: string[];
          error?: { code: string; name: string; message: string };
        };
        expect(out.arch).toBe('arm64');
        expect(out.node).toMatch(/^v2\d\./);
        expect(fs.realpathSync(out.path)).toBe(fs.realpathSync(PREBUILD));
        expect(out.source).toBe('prebuilds');
        expect(out.info.napiVersion).toBeGreaterThanOrEqual(8);
        expect(out.error).toMatchObject({ code: 'E_CUDA_MISSING', name: 'CudaMissingError' });
        expect(out.error!.message).toContain('libcuda.so.1');

        // The same native interface as the host's addon built from these sources: an arm64
        // file left from older sources exports another set of functions.
        const host = spawnSync(process.execPath, ['-p', `JSON.stringify(Object.keys(require(${JSON.stringify(BUILT_ADDON)})).sort())`], { encoding: 'utf8' });
        expect(host.status).toBe(0);
        expect(out.exports).toEqual(JSON.parse(host.stdout));
      } finally {
        removeTempDir(root);
      }
    },
    120_000,
  );
});
