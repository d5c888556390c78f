/**
 * What `npm publish` would ship: `npm pack` of the current build (dist/ and the prebuild, which
 * `npm test`'s pretest makes). test/package/consume.test.ts installs such a tarball and uses it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { makeTempDir, npmPack, removeTempDir, REPO_ROOT } from '../helpers/built-package';

const ROOT = REPO_ROOT;

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  gypfile?: boolean;
  scripts?: Record<string, string>;
  exports: Record<string, Record<string, Record<string, string>> | string>;
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;

let files: string[] = [];
let sizes = new Map<string, number>();
let dest: string | undefined;

beforeAll(() => {
  dest = makeTempDir('pack');
  const packed = npmPack(dest);
  files = packed.files.map((f) => f.path);
  sizes = new Map(packed.files.map((f) => [f.path, f.size]));
}, 60_000);

afterAll(() => removeTempDir(dest));

describe('npm package contents', () => {
  test.each([
    'package.json',
    'README.md',
    'LICENSE',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/index.mjs',
    'dist/index.d.mts',
    'dist/cli/index.js',
    'dist/runtime/worker/worker.js',
    'dist/runtime/worker/tensor-parallel-worker.js',
  ])('ships %s', (file) => {
    expect(files).toContain(file);
  });

  test('ships the Linux x64 N-API prebuild (glibc), not an empty placeholder', () => {
    // scripts/build.js names it for node-gyp-build: N-API, any runtime, glibc only.
    const prebuild = 'prebuilds/linux-x64/tensorrt-node.napi.glibc.node';
    if (process.platform === 'linux' && process.arch === 'x64') {
      expect(files).toContain(prebuild);
      // A real shared object: the ELF magic, and at least the size of the addon's code.
      expect(sizes.get(prebuild)).toBeGreaterThan(50_000);
      expect(fs.readFileSync(path.join(ROOT, prebuild)).subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    }
    expect(files.filter((f) => f.startsWith('prebuilds/')).every((f) => /^prebuilds\/[a-z0-9]+-[a-z0-9]+\/tensorrt-node\.napi(\.(glibc|musl))?\.node$/.test(f))).toBe(true);
  });

  test('ships the committed Linux arm64 prebuild (glibc) on every platform that packs', () => {
    // Cross-compiled by `npm run build:prebuild:arm64` and committed, not rebuilt by npm pack:
    // test/package/prebuild-arm64.test.ts checks the file itself.
    const prebuild = 'prebuilds/linux-arm64/tensorrt-node.napi.glibc.node';
    expect(files).toContain(prebuild);
    expect(sizes.get(prebuild)).toBe(fs.statSync(path.join(ROOT, prebuild)).size);
  });

  test('ships no binding.gyp: npm would compile the addon on every lockfile install (npm ci) of a consumer', () => {
    // npm ignores `gypfile: false` when a lockfile drives the install (the lockfile does not
    // record it) and runs a synthetic `node-gyp rebuild` for any binding.gyp it finds.
    expect(files.filter((f) => /(^|\/)binding\.gyp$/.test(f))).toEqual([]);
  });

  test('ships no tests, build outputs, dependencies, source maps, objects or fixtures', () => {
    const unwanted = files.filter(
      (f) =>
        /^(test|build|build-cmake|node_modules|coverage|bench|scripts|lib|native)\//.test(f) ||
        /\.test\.[cm]?[jt]s$/.test(f) ||
        /\.(map|o|obj|tgz)$/.test(f) ||
        /(^|\/)fixtures\//.test(f) ||
        /(^|\/)\.[^/]+$/.test(f), // dotfiles: .npmrc, .gitignore, editor state
    );
    expect(unwanted).toEqual([]);
  });

  test('ships the user documentation with the generated API reference, and not the repository\'s own pages', () => {
    // docs/packaging.md ("The documentation in the package") lists both sides.
    for (const doc of ['docs/api.md', 'docs/packaging.md', 'docs/program-format.md', 'docs/tensorrt.md']) expect(files).toContain(doc);
    // The reference `npm run docs:api` writes from the declarations: one page per export.
    for (const page of [
      'docs/api-reference/README.md',
      'docs/api-reference/tensorrt-node/functions/compile.md',
      'docs/api-reference/tensorrt-node/classes/Tensor.md',
      'docs/api-reference/tensorrt-node/ir/functions/loadOnnx.md',
      'docs/api-reference/tensorrt-node/ir/classes/Graph.md',
    ]) {
      expect(files).toContain(page);
    }
    const internal = ['testing.md', 'gpu-checks.md', 'gpu-benchmark.md', 'models.md', 'models-manifest.json', 'onnx-conformance.md', 'onnx-conformance-1.23.0.md'];
    expect(files.filter((f) => internal.includes(f.replace(/^docs\//, '')))).toEqual([]);
  });

  test('every entry point named in package.json is shipped', () => {
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.bin)];
    for (const condition of Object.values(pkg.exports)) {
      if (typeof condition === 'string') targets.push(condition);
      else for (const branch of Object.values(condition)) targets.push(...Object.values(branch));
    }
    for (const target of targets) expect(files).toContain(path.posix.normalize(target));
  });
});

describe('package.json', () => {
  test('runs nothing at install time: no install scripts, and npm must not run node-gyp', () => {
    // Installing must never compile or download: the addon loads lazily and prebuilds ship
    // in the package. gypfile:false stops npm's implicit `node-gyp rebuild` for binding.gyp
    // where npm reads the package's own package.json (the tarball ships none anyway).
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[hook]).toBeUndefined();
    expect(pkg.gypfile).toBe(false);
  });

  test('no npm pre-hook runs a build step twice: only prepare, prepack and pretest are hooks', () => {
    // npm runs `preX` before `npm run X`: a script named `prebuild` once ran before every build.
    const hooks = Object.keys(pkg.scripts ?? {}).filter((name) => /^(pre|post)/.test(name));
    expect(hooks.sort()).toEqual(['prepack', 'prepare', 'pretest']);
  });

  test('the bin entry exists in dist and is a node script', () => {
    const entries = Object.entries(pkg.bin);
    expect(entries.map(([name]) => name)).toEqual(['tensorrt-node']);
    for (const [, file] of entries) {
      expect(file.startsWith('dist/')).toBe(true);
      const full = path.join(ROOT, file);
      expect(fs.existsSync(full)).toBe(true);
      expect(fs.readFileSync(full, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    }
  });
});
