'use strict';
// Two projects: `unit` runs everywhere (CI has no GPU); `gpu` needs a CUDA device and runs
// serially, because GPU tests share one device and must not race for its memory.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] };
module.exports = {
  // Program tests run dist/ in a worker thread: rebuild it first when lib/ is newer.
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/test/gpu/'],
    },
    {
      displayName: 'gpu',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/test/gpu'],
      testMatch: ['**/*.test.ts'],
    },
  ],
};
