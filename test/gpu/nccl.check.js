'use strict';
// NCCL on one GPU: the library and its version, a one-rank communicator whose
// all-reduce is the identity for every dtype and op (bit-exact, checked against the input bytes),
// two ranks on the same GPU in two worker threads (NCCL normally refuses: then the typed error),
// an aborted communicator and a peer that never joins (typed errors, no hang), and doctor.
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { gpuCheck, assert, rejection, randomFloats } = require('./check-util');

const dist = path.join(__dirname, '..', '..', 'dist');
const { NcclCommunicator, ncclStatus } = require(path.join(dist, 'collectives', 'index.js'));

/** Finite test values of each dtype, as the bytes of a host Tensor. */
function values(lib, dtype, n, seed) {
  const f = randomFloats(n, seed);
  const bytes = new Uint8Array(f.buffer.slice(0));
  switch (dtype) {
    case 'float32':
      return new lib.Tensor(dtype, [n], f);
    case 'float64':
      return new lib.Tensor(dtype, [n], Float64Array.from(f, (x) => x * 1e3));
    case 'float16':
    case 'bfloat16': {
      // Random 16-bit patterns with the exponent never all ones (no inf/NaN in either format).
      const u = new Uint16Array(bytes.buffer).slice(0, n);
      for (let i = 0; i < n; i++) if ((dtype === 'float16' ? (u[i] >> 10) & 0x1f : (u[i] >> 7) & 0xff) === (dtype === 'float16' ? 0x1f : 0xff)) u[i] ^= 0x4000;
      return new lib.Tensor(dtype, [n], u);
    }
    case 'int8':
      return new lib.Tensor(dtype, [n], new Int8Array(bytes.buffer, 0, n).slice());
    case 'uint8':
      return new lib.Tensor(dtype, [n], bytes.slice(0, n));
    case 'bool':
      return new lib.Tensor(dtype, [n], Uint8Array.from(bytes.slice(0, n), (b) => b & 1));
    case 'int32':
      return new lib.Tensor(dtype, [n], new Int32Array(bytes.buffer, 0, n).slice());
    case 'int64':
      return new lib.Tensor(dtype, [n], BigInt64Array.from(new Int32Array(bytes.buffer, 0, n), (x) => BigInt(x) * 4294967311n));
    case 'complex64':
      return new lib.Tensor(dtype, [n / 2], f);
    default:
      throw new Error(dtype);
  }
}

const OPS = {
  float32: ['sum', 'prod', 'max', 'min', 'avg'],
  float16: ['sum', 'prod', 'max', 'min', 'avg'],
  bfloat16: ['sum', 'prod', 'max', 'min', 'avg'],
  float64: ['sum', 'prod', 'max', 'min', 'avg'],
  int8: ['sum', 'prod', 'max', 'min', 'avg'],
  uint8: ['sum', 'prod', 'max', 'min', 'avg'],
  int32: ['sum', 'prod', 'max', 'min', 'avg'],
  int64: ['sum', 'prod', 'max', 'min', 'avg'],
  bool: ['max', 'min', 'prod'],
  complex64: ['sum', 'avg'],
};

function sameBytes(a, b) {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Rank `rank` of 2 on device 0 in a worker thread: create, all-reduce sum of [rank + 1, ...], report. */
function rankInWorker(id, rank) {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const lib = require(${JSON.stringify(path.join(dist, 'index.js'))});
    const { NcclCommunicator } = require(${JSON.stringify(path.join(dist, 'collectives', 'index.js'))});
    (async () => {
      const comm = await NcclCommunicator.create({ id: workerData.id, size: 2, rank: workerData.rank, device: 0, timeoutMs: 30000 });
      const t = await lib.toDevice(new lib.Tensor('float32', [4], new Float32Array([1, 2, 3, 4]).map((x) => x * (workerData.rank + 1))));
      await comm.allReduce(t, 'sum', { timeoutMs: 30000 });
      const out = Array.from((await t.toHost()).data);
      await comm.dispose();
      return { ok: true, out };
    })().then((r) => parentPort.postMessage(r), (e) => parentPort.postMessage({ ok: false, code: e.code, message: e.message, details: e.details }));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { id, rank } });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

gpuCheck('nccl', async (lib) => {
  const summary = {};
  const status = await ncclStatus();
  summary.nccl = status;
  assert(status.found, `NCCL loads (${status.error && status.error.message})`);
  summary.nvlsEnable = process.env.NCCL_NVLS_ENABLE ?? '(unset in JS; the addon sets 0 natively)';

  // One rank: every all-reduce is the identity, bit for bit.
  let t0 = Date.now();
  const comm = await NcclCommunicator.create({ id: await NcclCommunicator.uniqueId(), size: 1, rank: 0, device: 0, timeoutMs: 60000 });
  summary.oneRankInitMs = Date.now() - t0;
  assert(comm.state === 'ready' && comm.size === 1 && comm.rank === 0, `one-rank communicator ready (${comm.state})`);
  const results = [];
  for (const [dtype, ops] of Object.entries(OPS)) {
    const host = values(lib, dtype, 1 << 12, 7 + results.length);
    for (const op of ops) {
      const input = await lib.toDevice(host);
      const output = await lib.DeviceTensor.allocate(host.dtype, host.shape);
      await comm.allReduce(input, op, { output });
      const inPlace = await comm.allReduce(input, op);
      const got = await output.toHost();
      const again = await inPlace.toHost();
      const exact = sameBytes(got.data, host.data) && sameBytes(again.data, host.data);
      results.push(`${dtype}/${op}:${exact ? 'exact' : 'DIFFERENT'}`);
      input.dispose();
      output.dispose();
    }
  }
  summary.identity = results;
  assert(results.every((r) => r.endsWith(':exact')), `n = 1 all-reduce is the identity: ${results.filter((r) => !r.endsWith(':exact')).join(', ')}`);

  // Two ranks on the same GPU, one per worker thread.
  const id = await NcclCommunicator.uniqueId();
  t0 = Date.now();
  const ranks = await Promise.all([rankInWorker(id, 0), rankInWorker(id, 1)]);
  summary.twoRanksOneGpu = { ms: Date.now() - t0, ranks };
  if (ranks.every((r) => r.ok)) {
    for (const r of ranks) assert(JSON.stringify(r.out) === JSON.stringify([3, 6, 9, 12]), `two-rank sum ${JSON.stringify(r.out)}`);
  } else {
    for (const r of ranks) {
      assert(!r.ok && r.code === 'E_NCCL', `each rank fails with E_NCCL: ${JSON.stringify(r)}`);
    }
  }

  // An aborted communicator: typed errors, no hang.
  await comm.abort();
  assert(comm.state === 'aborted', `state after abort: ${comm.state}`);
  const t = await lib.toDevice(values(lib, 'float32', 16, 3));
  const afterAbort = await rejection(comm.allReduce(t), 'all-reduce on an aborted communicator');
  summary.afterAbort = { code: afterAbort.code, message: afterAbort.message };
  assert(afterAbort.code === 'E_NCCL' && afterAbort.details.reason === 'aborted', `E_NCCL aborted: ${afterAbort.message}`);
  await comm.dispose();

  // A peer that never joins: init times out and aborts.
  t0 = Date.now();
  const lonely = await rejection(
    NcclCommunicator.create({ id: await NcclCommunicator.uniqueId(), size: 2, rank: 0, device: 0, timeoutMs: 3000 }),
    'init without the other rank',
  );
  summary.peerNeverJoins = { ms: Date.now() - t0, code: lonely.code, message: lonely.message };
  assert(lonely.code === 'E_NCCL' && lonely.details.reason === 'timeout', `E_NCCL timeout: ${lonely.message}`);

  // A device that does not exist.
  const bad = await rejection(NcclCommunicator.create({ id: await NcclCommunicator.uniqueId(), size: 1, rank: 0, device: 64 }), 'device 64');
  summary.badDevice = { code: bad.code, message: bad.message };
  assert(bad.code !== undefined && bad.name !== 'Error', `typed error for device 64: ${bad.message}`);

  const text = lib.formatDoctorReport(await lib.doctor());
  summary.doctor = text.split('\n').filter((line) => line.startsWith('nccl'));
  assert(summary.doctor.length === 1 && summary.doctor[0].includes(status.version), `doctor lists NCCL: ${summary.doctor}`);
  return summary;
});
