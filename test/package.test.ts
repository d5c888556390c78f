/**
 * What `npm publish` would ship. Runs `npm pack --dry-run` against the current dist/, so it
 * needs `npm run build:ts` first (as the test suite does through `npm test`'s pretest).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { requireBuild } from './helpers/built-package';

const ROOT = path.resolve(__dirname, '..');

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

beforeAll(() => {
  requireBuild();
  // npm prints warnings (e.g. about project config) on stderr; the JSON is on stdout.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 60_000,
  });
  const packed = JSON.parse(out) as { files: { path: string }[] }[];
  files = packed[0]!.files.map((f) => f.path);
}, 60_000);

describe('npm package contents', () => {
  test.each([
    'package.json',
    'README.md',
    'binding.gyp',
    'CMakeLists.txt',
    'native/addon.cc',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/index.mjs',
    'dist/index.d.mts',
    'dist/cli/index.js',
  ])('ships %s', (file) => {
    expect(files).toContain(file);
  });

  test('ships every source of the addon build, so users without a prebuild can compile it', () => {
    const gypSources = fs
      .readFileSync(path.join(ROOT, 'binding.gyp'), 'utf8')
      .match(/"native\/[^"]+"/g)!
      .map((s) => s.slice(1, -1));
    expect(gypSources.length).toBeGreaterThan(0);
    for (const source of gypSources) expect(files).toContain(source);
  });

  test('ships no tests, build outputs, dependencies, source maps, objects or fixtures', () => {
    const unwanted = files.filter(
      (f) =>
        /^(test|build|build-cmake|node_modules|coverage|bench|scripts|lib)\//.test(f) ||
        /\.(map|o|obj|tgz)$/.test(f) ||
        /(^|\/)fixtures\//.test(f) ||
        /(^|\/)\.[^/]+$/.test(f), // dotfiles: .npmrc, .gitignore, editor state
    );
    expect(unwanted).toEqual([]);
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
    // in the package. gypfile:false stops npm's implicit `node-gyp rebuild` for binding.gyp.
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[hook]).toBeUndefined();
    expect(pkg.gypfile).toBe(false);
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
