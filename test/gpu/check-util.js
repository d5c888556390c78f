'use strict';
// Shared by the GPU checks (test/gpu/*.check.js; plain Node, no jest: they also run on the GPU
// machine from a bundle, which carries this file with them).
const fs = require('node:fs');
const path = require('node:path');

const lib = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
const FIXTURES = path.join(__dirname, '..', 'fixtures');
const { devices } = lib;

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

/** Runs `fn(lib, report)` on a machine with a GPU; failures print the error and exit 1. */
function gpuCheck(name, fn) {
  devicesOrSkip()
    .then((report) => fn(lib, report))
    .then((summary) => {
      console.log(JSON.stringify({ check: name, ok: true, ...summary }));
    })
    .catch((error) => {
      console.log(JSON.stringify({ check: name, ok: false, code: error.code, message: error.message, stack: error.stack }));
      process.exitCode = 1;
    });
}

/** Throws with `message` unless `condition`. */
function assert(condition, message) {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

/** The error `promise` rejects with, or an assertion failure if it resolves. */
async function rejection(promise, what) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`assertion failed: ${what} should have failed`);
}

/** Deterministic pseudo-random floats in [-1, 1) (xorshift32), so failures reproduce. */
function randomFloats(n, seed = 1) {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s / 2147483648 - 1;
  }
  return out;
}

/** Deterministic pseudo-random bytes. */
function randomBytes(n, seed = 7) {
  const f = randomFloats(Math.ceil(n / 4), seed);
  return new Uint8Array(f.buffer, 0, n).slice();
}

const STORAGE = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, complex64: Float32Array, bool: Uint8Array, uint8: Uint8Array };

/** One tensor of a fixture (`m`: its meta.json entry), over bytes of its own. */
function readBin(dir, m) {
  const bytes = fs.readFileSync(path.join(dir, m.file));
  const Storage = STORAGE[m.dtype];
  if (Storage === undefined) throw new Error(`${dir}/${m.file}: dtype ${m.dtype} is not handled by the GPU checks`);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new lib.Tensor(m.dtype, m.shape, new Storage(copy.buffer, 0, bytes.length / Storage.BYTES_PER_ELEMENT));
}

/** A fixture of test/fixtures/: its files and the cases PyTorch ran (inputs and outputs; a second size when it has one). */
function loadFixture(name) {
  const dir = path.join(FIXTURES, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const cases = [{ inputs: meta.inputs.map((m) => readBin(dir, m)), outputs: meta.outputs.map((m) => readBin(dir, m)) }];
  if (meta.second_case) cases.push({ inputs: meta.second_case.inputs.map((m) => readBin(dir, m)), outputs: meta.second_case.outputs.map((m) => readBin(dir, m)) });
  return { name, dir, files: meta.files, cases };
}

/**
 * Two kernels the worker-thread and completion checks share: `axpb` (y = a*x + b over n floats)
 * and `spin` (a serial loop of `iterations` FMAs per thread: GPU work that takes a while).
 */
const AXPB_SPIN_SOURCE = `
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void spin(float* y, unsigned int iterations) {
  float v = y[threadIdx.x];
  for (unsigned int i = 0; i < iterations; ++i) v = v * 0.999999f + 1e-7f;
  y[threadIdx.x] = v;
}
`;

module.exports = { devicesOrSkip, gpuCheck, assert, rejection, randomFloats, randomBytes, lib, loadFixture, AXPB_SPIN_SOURCE };
