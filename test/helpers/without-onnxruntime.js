'use strict';
// Preloaded (`NODE_OPTIONS=-r …`) into a child process, and so into its worker threads: every
// require of onnxruntime-node fails as it does where the optional peer dependency is not
// installed, though this repository has it as a devDependency. In-process tests simulate
// the same with jest.doMock, which reaches neither the compile worker nor a program's worker.
const Module = require('node:module');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'onnxruntime-node' || request.startsWith('onnxruntime-node/')) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
