'use strict';
// Mutation testing of the seed cores (`npm run test:mutation`; not in CI: it takes tens of
// minutes). Only the test files that exercise each module run, in-process (coverageAnalysis
// perTest picks, per mutant, the tests that reach it). A program's run goes through the worker
// thread, which executes dist/ (copied into the sandbox unmutated): such tests kill only
// mutants of code that runs at compile time, in-process. See
// docs/testing.md for the scores and the surviving mutants.
//
// One module at a time (each with its own tests): STRYKER_MODULE=registry npm run test:mutation
// (registry, complex, dynamic, device-selection; all four by default). Static mutants (code
// run when a module loads, e.g. the registry's tables) are ignored: each would rerun every
// test file, and the tests that build those tables are the same as for the code around them.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] };

/** The modules under test: the files mutated and the test files that exercise them. */
const MODULES = {
  registry: { mutate: ['lib/conversion/registry.ts'], tests: ['test/conversion/registry.test.ts', 'test/conversion/registry-order.test.ts', 'test/conversion/registry-api.test.ts'] },
  complex: { mutate: ['lib/lowering/complex/**/*.ts'], tests: ['test/lowering/complex/*.test.ts'] },
  dynamic: { mutate: ['lib/legalization/**/*.ts'], tests: ['test/legalization/*.test.ts'] },
  'device-selection': { mutate: ['lib/engine/device-selection.ts'], tests: ['test/runtime/device-selection.test.ts'] },
};

const chosen = process.env.STRYKER_MODULE ? [process.env.STRYKER_MODULE] : Object.keys(MODULES);
for (const m of chosen) if (!(m in MODULES)) throw new Error(`STRYKER_MODULE=${m}: expected one of ${Object.keys(MODULES).join(', ')}`);
const selected = chosen.map((m) => MODULES[m]);
// STRYKER_MUTATE (comma-separated files) narrows a module to some of its files, and
// STRYKER_SUFFIX names the reports: scripts/mutation-many-cores.sh runs a module in file chunks
// side by side on a many-core machine, each chunk writing its own report.
const suffix = process.env.STRYKER_SUFFIX ?? (process.env.STRYKER_MODULE ? `-${process.env.STRYKER_MODULE}` : '');
const mutate = process.env.STRYKER_MUTATE ? process.env.STRYKER_MUTATE.split(',') : selected.flatMap((m) => m.mutate);
// STRYKER_TIMEOUT_MS: a mutant that loops forever (a union-find or a while loop) costs this
// plus a test-runner restart; the in-process tests of a mutant take seconds, so a chunk run
// on a loaded 2-core machine may lower it from the default 60 s.
const timeoutMS = Number(process.env.STRYKER_TIMEOUT_MS ?? 60_000);

module.exports = {
  packageManager: 'npm',
  testRunner: 'jest',
  mutate,
  ignoreStatic: true,
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  timeoutMS,
  timeoutFactor: 2,
  incremental: true,
  incrementalFile: `reports/mutation/stryker-incremental${suffix}.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/mutation${suffix}.html` },
  jsonReporter: { fileName: `reports/mutation/mutation${suffix}.json` },
  thresholds: { high: 90, low: 80, break: null },
  ignorePatterns: ['build', 'build-cmake', 'prebuilds', 'reports', 'bench', '.gpu'],
  jest: {
    projectType: 'custom',
    enableFindRelatedTests: false,
    config: {
      testEnvironment: 'node',
      // The tests chosen above run in-process and never load dist/, so jest.config.js's
      // fresh-dist check is not needed here (and a many-core machine without tsc has no dist/).
      globalSetup: null,
      transform,
      roots: ['<rootDir>/test'],
      testMatch: [...new Set(selected.flatMap((m) => m.tests))].map((p) => `<rootDir>/${p}`),
    },
  },
};
