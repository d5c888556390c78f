'use strict';
// GPU check of tensor-parallel program files (plain Node over dist/, no jest). With the real
// devices() list and the cuda backend: compile the Llama fixture with tensorParallel n (2 when
// this machine has 2+ GPUs, else 1), save it as one .trtp, load it back: rank r's engines must
// be placed on device r (one device per rank), and every rank's outputs on the fixture's inputs
// must equal the in-memory program's bit for bit and PyTorch's stored output within fp32
// tolerance (rtol 1e-4, atol 1e-5). Then a file of (GPUs + 1) ranks must be refused with
// E_NO_COMPATIBLE_DEVICE naming the rank without a device. The all-reduces: the same file loaded
// with collectives 'nccl' (NCCL on the ranks' devices) must match PyTorch within fp32
// tolerance, repeat bit for bit, and agree with collectives 'host' (bit for bit with one rank,
// where NCCL's sum is a copy; within fp32 tolerance otherwise); disposing the NCCL program
// destroys its communicators in its worker (timed). Prints one JSON line: n, placements, max
// errors, the refusal's message, the NCCL figures. Exit 0: passed; 1: failed; 3: no usable GPU here.
const crypto = require('node:crypto');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { gpuCheck, assert, rejection, loadFixture } = require('./check-util');
const { zipSync, unzipSync } = require(require.resolve('fflate', { paths: [root] }));

const FIXTURE = loadFixture('llama_rotary_complex_input');
const MODEL = path.join(FIXTURE.dir, FIXTURE.files.pt2);
/** x [1, 8, 64] and freqs_cis complex64 [8, 8], as PyTorch ran them, and PyTorch's output. */
const { inputs: XS, outputs: [TORCH] } = FIXTURE.cases[0];
const SHAPES = XS.map((t) => ({ shape: [...t.shape] }));
const RTOL = 1e-4;
const ATOL = 1e-5;

function maxErrors(actual, expected) {
  let abs = 0;
  let worst = 0;
  for (let i = 0; i < actual.data.length; i++) {
    const d = Math.abs(actual.data[i] - expected.data[i]);
    abs = Math.max(abs, d);
    worst = Math.max(worst, d / (ATOL + RTOL * Math.abs(expected.data[i])));
  }
  return { abs, ratio: worst };
}

const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');

/** A tensor-parallel file of `count` ranks, each a copy of rank 0's program file (placement fails before the ranks are compared). */
function copiesOfRank0(bytes, count) {
  const files = unzipSync(bytes);
  const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
  const rank0 = files['ranks/rank0.trtp'];
  const entries = {};
  manifest.worldSize = count;
  manifest.ranks = Array.from({ length: count }, (_, r) => ({ ...manifest.ranks[0], rank: r, program: `ranks/rank${r}.trtp`, targetDevice: { type: 'gpu', gpuId: r } }));
  manifest.blobs = {};
  for (let r = 0; r < count; r++) {
    entries[`ranks/rank${r}.trtp`] = rank0;
    manifest.blobs[`ranks/rank${r}.trtp`] = { sha256: sha256(rank0), bytes: rank0.length };
  }
  return zipSync({ 'manifest.json': new TextEncoder().encode(JSON.stringify(manifest)), ...entries }, { level: 0 });
}

const sameBits = (a, b) => a.data.length === b.data.length && a.data.every((v, i) => Object.is(v, b.data[i]));

/** Asserts that `out` is within fp32 tolerance of PyTorch's output; returns the errors. */
function againstTorch(out, what) {
  const e = maxErrors(out, TORCH);
  assert(e.ratio <= 1, `${what}: max abs error ${e.abs} against PyTorch exceeds rtol ${RTOL} / atol ${ATOL} (ratio ${e.ratio})`);
  return e;
}

/** The all-reduces through NCCL against PyTorch and the host all-reduce (see the top). */
async function collectiveChecks(lib, bytes, n) {
  const viaNccl = await lib.loadTensorParallelProgramBuffer(bytes, { collectives: 'nccl' });
  const viaHost = await lib.loadTensorParallelProgramBuffer(bytes, { collectives: 'host' });
  try {
    const t0 = performance.now();
    const first = await viaNccl.runAllRanks(XS);
    const firstRunMs = performance.now() - t0;
    const t1 = performance.now();
    const second = await viaNccl.runAllRanks(XS);
    const warmRunMs = performance.now() - t1;
    const onHost = await viaHost.runAllRanks(XS);
    const errors = first.map(([out], r) => {
      assert(sameBits(out, second[r][0]), `rank ${r}: two NCCL runs differ`);
      const vsHost = maxErrors(out, onHost[r][0]);
      if (n === 1) assert(sameBits(out, onHost[r][0]), `rank ${r}: the one-rank NCCL all-reduce changed the values (max abs ${vsHost.abs} vs the host all-reduce)`);
      assert(vsHost.ratio <= 1, `rank ${r}: NCCL vs host all-reduce max abs error ${vsHost.abs} (ratio ${vsHost.ratio})`);
      return { vsTorch: againstTorch(out, `rank ${r} through NCCL`).abs, vsHost: vsHost.abs };
    });
    const t2 = performance.now();
    await viaNccl.dispose();
    const disposeMs = performance.now() - t2;
    return { firstRunMs, warmRunMs, disposeMs, errors };
  } finally {
    await viaNccl.dispose();
    await viaHost.dispose();
  }
}

gpuCheck('tensor-parallel-file', async (lib, report) => {
  const gpus = report.devices.length;
  const n = gpus >= 2 ? 2 : 1;
  const tp = await lib.compile(MODEL, { backend: 'cuda', tensorParallel: n, inputs: SHAPES });
  try {
    const bytes = tp.saveBuffer();
    const loaded = await lib.loadTensorParallelProgramBuffer(bytes);
    try {
      const placements = loaded.ranks.map((rank) => [...new Set(rank.data.segments.filter((s) => s.kind === 'engine').map((s) => (s.placement ? s.placement.ordinal : null)))]);
      const engines = loaded.ranks.map((rank) => rank.data.segments.filter((s) => s.kind === 'engine').length);
      placements.forEach((p, r) => assert(engines[r] === 0 || (p.length === 1 && p[0] === r), `rank ${r}'s engines are placed on ${JSON.stringify(p)}, not [${r}]`));
      const fresh = await tp.runAllRanks(XS);
      const back = await loaded.runAllRanks(XS);
      const errors = back.map(([out], r) => {
        assert(sameBits(out, fresh[r][0]), `rank ${r}: the loaded program's output differs from the in-memory program's`);
        return againstTorch(out, `rank ${r} (loaded, collectives auto)`);
      });
      const nccl = await collectiveChecks(lib, bytes, n);
      const tooMany = copiesOfRank0(bytes, gpus + 1);
      const refusal = await rejection(lib.loadTensorParallelProgramBuffer(tooMany), `a ${gpus + 1}-rank file on ${gpus} GPU(s)`);
      assert(refusal.code === 'E_NO_COMPATIBLE_DEVICE', `a ${gpus + 1}-rank file on ${gpus} GPU(s): ${refusal.code} ${refusal.message}`);
      assert(refusal.message.includes(`rank ${gpus} has no device`), `the refusal names rank ${gpus}: ${refusal.message}`);
      return { n, gpus, fileBytes: bytes.length, engines, placements, errors, refusal: refusal.message, nccl };
    } finally {
      await loaded.dispose();
    }
  } finally {
    await tp.dispose();
  }
});
