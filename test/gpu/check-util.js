'use strict';
// Shared by the GPU checks (test/gpu/*.check.js; plain Node, no jest: they also run on the GPU
// machine from a bundle, which carries this file with them).
const path = require('node:path');

const { devices } = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

/**
 * The devices() report; without a usable CUDA device, prints why as JSON and exits 3, and on
 * any other failure exits 1. Under jest (test/gpu/gpu.test.ts) a machine without a GPU has
 * skipped the checks before they start, so exit 3 there is a failure.
 */
async function devicesOrSkip() {
  try {
    return await devices();
  } catch (error) {
    console.log(JSON.stringify({ skipped: true, code: error.code, message: error.message }));
    process.exit(error.code === 'E_CUDA_MISSING' || error.code === 'E_NO_DEVICE' ? 3 : 1);
  }
}

module.exports = { devicesOrSkip };
