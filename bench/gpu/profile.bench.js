'use strict';
// Where the cuda backend's time goes on the issue-19 workloads (exports from bench/gpu/models.py):
// each plan step timed on its own (CudaRunner.profile), summed by layer kind and step kind.
// usage: [PRECISION=fp16|bf16|tf32] node bench/gpu/profile.bench.js DIR [name ...]   (prints one JSON line per workload)
const fs = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '..', '..', 'dist');
const lib = require(path.join(dist, 'index.js'));
const { CudaRunner } = require(path.join(dist, 'backends', 'cuda', 'runner.js'));
const { deserializeCudaEngine } = require(path.join(dist, 'backends', 'cuda', 'engine-format.js'));

const PRECISION = process.env.PRECISION || 'fp32';
/** Compile settings' `precisions`, as bench/gpu/models.bench.js takes them. */
const PRECISIONS = PRECISION === 'fp32' ? {} : { precisions: [PRECISION] };

const STORAGE = { float32: Float32Array, int64: BigInt64Array, complex64: Float32Array };

async function profileOne(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const program = await lib.compile(path.join(dir, 'model.pt2'), { backend: 'cuda', ...PRECISIONS });
  try {
    const segment = program.data.segments.find((s) => s.kind === 'tensorrt');
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
    const steps = await runner.profile(feeds, { repeats: 10 });
    runner.dispose();
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
    return { name: meta.name, precision: PRECISION, steps: steps.length, sumMs: +total.toFixed(3), kinds, slowest };
  } finally {
    await program.dispose();
  }
}

async function main() {
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
