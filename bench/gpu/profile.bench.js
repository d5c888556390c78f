'use strict';
// Where the cuda backend's time goes on the benchmark workloads (exports from bench/gpu/models.py):
// each plan step timed on its own (CudaRunner.profile), summed by layer kind and step kind; the
// largest GEMM and convolution's achieved TFLOP/s against the device's dense fp16 peak; the
// memory-bound steps' achieved bandwidth against a device-to-device copy timed in the same process.
// usage: [PRECISION=fp16|bf16|tf32] [PROFILE_MODE=graph|launch] [PEAK_TFLOPS=989] [STEPS_OUT=dir]
//        node bench/gpu/profile.bench.js DIR [name ...]   (prints one JSON line per workload)
// PROFILE_MODE graph (the default) times each step as a CUDA graph of copies of it: the device's
// time, as in a replay of the whole plan. STEPS_OUT: every step's figures as <name>.steps.json.
const fs = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '..', '..', 'dist');
const lib = require(path.join(dist, 'index.js'));
const { CudaRunner } = require(path.join(dist, 'backends', 'cuda', 'run', 'runner.js'));
const { deserializeCudaEngine } = require(path.join(dist, 'backends', 'cuda', 'engine-format.js'));

const { DeviceTensor } = require(path.join(dist, 'gpu', 'device-tensor.js'));
const { GpuPlan } = require(path.join(dist, 'gpu', 'gpu-plan.js'));

const PRECISION = process.env.PRECISION || 'fp32';
const MODE = process.env.PROFILE_MODE || 'graph';
const PEAK_TFLOPS = Number(process.env.PEAK_TFLOPS || 0) || null;
const round = (x, digits = 3) => +x.toFixed(digits);
/** Compile settings' `precisions`, as bench/gpu/models.bench.js takes them. */
const PRECISIONS = PRECISION === 'fp32' ? {} : { precisions: [PRECISION] };

const STORAGE = { float32: Float32Array, int64: BigInt64Array, complex64: Float32Array };

async function profileOne(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const program = await lib.compile(path.join(dir, 'model.pt2'), { backend: 'cuda', ...PRECISIONS });
  try {
    const segment = program.data.segments.find((s) => s.kind === 'engine');
    const runner = await CudaRunner.load(deserializeCudaEngine(segment.engine), 0);
    const feeds = {};
    meta.inputs.forEach((m, i) => {
      const bytes = fs.readFileSync(path.join(dir, m.file));
      const copy = new Uint8Array(bytes.length);
      copy.set(bytes);
      const Storage = STORAGE[m.dtype];
      const t = new lib.Tensor(m.dtype, m.shape, new Storage(copy.buffer, 0, bytes.length / Storage.BYTES_PER_ELEMENT));
      // The engine's inputs are the segment's values; complex program inputs arrive as float carriers.
      const name = runner.inputNames[i];
      feeds[name] = m.dtype === 'complex64' ? new lib.Tensor('float32', [...m.shape, 2], t.data) : t;
    });
    const steps = await runner.profile(feeds, { repeats: MODE === 'graph' ? 20 : 10, mode: MODE });
    runner.dispose();
    if (process.env.STEPS_OUT) fs.writeFileSync(path.join(process.env.STEPS_OUT, `${meta.name}.steps.json`), JSON.stringify(steps));
    const byKind = {};
    for (const s of steps) {
      const k = `${s.kind} (${s.stepKind})`;
      byKind[k] ??= { steps: 0, ms: 0 };
      byKind[k].steps++;
      byKind[k].ms += s.ms;
    }
    const total = steps.reduce((a, s) => a + s.ms, 0);
    const kinds = Object.entries(byKind).sort((a, b) => b[1].ms - a[1].ms).map(([k, v]) => ({ kind: k, steps: v.steps, ms: +v.ms.toFixed(3), share: +(v.ms / total).toFixed(3) }));
    const slowest = [...steps].sort((a, b) => b.ms - a.ms).slice(0, 12).map((s) => ({ layer: s.layer, kind: s.kind, stepKind: s.stepKind, ms: +s.ms.toFixed(3) }));
    return { name: meta.name, precision: PRECISION, mode: MODE, steps: steps.length, sumMs: +total.toFixed(3), kinds, slowest, ...rates(steps) };
  } finally {
    await program.dispose();
  }
}

/** The largest GEMM and convolution by FLOPs, and the memory-bound steps moving the most bytes, with their achieved rates. */
function rates(steps) {
  const largest = (kind) => steps.filter((s) => s.stepKind === kind && s.flops).sort((a, b) => b.flops - a.flops)[0];
  const compute = (s) =>
    s && {
      layer: s.layer,
      gflop: round(s.flops / 1e9),
      ms: round(s.ms, 4),
      tflops: round(s.flops / s.ms / 1e9, 1),
      ...(PEAK_TFLOPS ? { ofPeak: round(s.flops / s.ms / 1e9 / PEAK_TFLOPS) } : {}),
    };
  // Launches that move at least 4 MiB: their time is their bytes, not their arithmetic.
  const moving = steps.filter((s) => s.stepKind === 'launch' && s.bytes >= 4 << 20).sort((a, b) => b.bytes - a.bytes).slice(0, 6);
  const bandwidth = moving.map((s) => ({ layer: s.layer, kind: s.kind, mib: round(s.bytes / 2 ** 20, 1), ms: round(s.ms, 4), gbps: round(s.bytes / s.ms / 1e6, 0), ofCopy: COPY_GBPS ? round(s.bytes / s.ms / 1e6 / COPY_GBPS) : null }));
  return { largestGemm: compute(largest('gemm')), largestConv: compute(largest('conv')), bandwidth };
}

/** Device-to-device copy bandwidth (bytes read + written per second, GB/s): a 256 MiB copy, 10 copies in one CUDA graph, replayed. */
let COPY_GBPS = null;
async function copyBandwidth() {
  const bytes = 256 << 20;
  const src = await DeviceTensor.allocate('uint8', [bytes], 0);
  const dst = await DeviceTensor.allocate('uint8', [bytes], 0);
  const step = { kind: 'copy', dst: { buffer: 1 }, src: { buffer: 0 }, bytes };
  const plan = await GpuPlan.create({ steps: new Array(10).fill(step) }, [src, dst], [], 0);
  try {
    await plan.capture();
    await plan.replay(2);
    const t0 = process.hrtime.bigint();
    await plan.replay(5);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / 50;
    return round((2 * bytes) / ms / 1e6, 0);
  } finally {
    plan.dispose();
    src.dispose();
    dst.dispose();
  }
}

async function main() {
  COPY_GBPS = await copyBandwidth();
  console.log(JSON.stringify({ copyGBps: COPY_GBPS, peakTflops: PEAK_TFLOPS, mode: MODE }));
  const root = process.argv[2];
  const names = process.argv.slice(3).length ? process.argv.slice(3) : fs.readdirSync(root).filter((n) => fs.existsSync(path.join(root, n, 'meta.json')));
  for (const n of names) {
    try {
      console.log(JSON.stringify(await profileOne(path.join(root, n))));
    } catch (error) {
      console.log(JSON.stringify({ name: n, failed: `${error.code}: ${error.message}`.slice(0, 400) }));
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
