'use strict';
// Reading the exports of bench/gpu/models.py (meta.json and raw little-endian tensors) for the
// GPU benchmarks, and the feeds a program's one cuda engine takes for them.
const fs = require('node:fs');
const path = require('node:path');

const STORAGE = { float32: Float32Array, int64: BigInt64Array, complex64: Float32Array };

/** The tensor `m` ({file, dtype, shape}) of export `dir`, in its own (aligned) buffer. */
function readTensor(lib, dir, m) {
  const bytes = fs.readFileSync(path.join(dir, m.file));
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const Storage = STORAGE[m.dtype];
  return new lib.Tensor(m.dtype, m.shape, new Storage(copy.buffer, 0, bytes.length / Storage.BYTES_PER_ELEMENT));
}

/** `inputs` by the engine's input names; complex program inputs reach the engine as float carriers [..., 2]. */
function engineFeeds(lib, runner, inputs) {
  const feeds = {};
  runner.inputNames.forEach((name, i) => {
    const t = inputs[i];
    feeds[name] = t.dtype === 'complex64' ? new lib.Tensor('float32', [...t.shape, 2], t.data) : t;
  });
  return feeds;
}

module.exports = { readTensor, engineFeeds };
