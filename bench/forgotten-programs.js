'use strict';
// Forgotten programs release their worker threads: creates N programs,
// runs each once (which starts its worker), drops them without dispose(), forces GC, and
// checks that the process's thread count is back to its baseline. Prints one JSON line and
// exits 1 when threads remain. Linux only (threads are counted in /proc/self/task).
//
//   node --expose-gc bench/forgotten-programs.js [N=300] [program|tensor-parallel]
//
// Uses dist/: build first. test/runtime/forgotten-programs.test.ts runs it with a small N.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const { compile, Program, Tensor, TensorParallelProgram } = require(path.join(root, 'dist', 'index.js'));
// Built here from compile()'s shards, which the public API does not do: the class itself, not the entry's face.
const { TensorParallelProgram: TensorParallelProgramClass } = require(path.join(root, 'dist', 'runtime', 'tensor-parallel', 'program.js'));

const n = Number(process.argv[2] ?? 300);
const kind = process.argv[3] ?? 'program';
if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
if (!fs.existsSync('/proc/self/task')) throw new Error('counting threads needs /proc/self/task (Linux)');

const threads = () => fs.readdirSync('/proc/self/task').length;
const rssMB = () => Math.round(process.memoryUsage().rss / 2 ** 20);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Compiles the model once; `make()` then builds a new program object (with its own worker) over it. */
async function setup() {
  if (kind === 'program') {
    const model = path.join(root, 'test', 'fixtures', 'mlp', 'model.onnx');
    const x = Tensor.from('float32', [1, 32], Array.from({ length: 32 }, (_, i) => i / 32));
    // compile() itself each time: the way a service forgets programs.
    return { make: () => compile(model, { backend: 'reference', inputs: [{ shape: [1, 32] }] }), inputs: [x] };
  }
  if (kind === 'tensor-parallel') {
    const fixture = path.join(root, 'test', 'fixtures', 'llama_rotary_complex_input');
    const meta = JSON.parse(fs.readFileSync(path.join(fixture, 'meta.json'), 'utf8'));
    const inputs = meta.inputs.map((i) => {
      const bytes = fs.readFileSync(path.join(fixture, i.file));
      const storage = { float32: Float32Array, int64: BigInt64Array, complex64: Float32Array }[i.dtype];
      const data = new storage(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      return new Tensor(i.dtype, i.shape, data);
    });
    const tp = await compile(path.join(fixture, 'model.pt2'), { backend: 'reference', tensorParallel: 2, inputs: inputs.map((t) => ({ shape: [...t.shape] })) });
    await tp.dispose();
    // The compile worker idles for 2 s before it exits (lib/compile/compile-thread.ts): let it
    // go now, or its exit during the count would hide one forgotten worker.
    await sleep(2500);
    return { make: async () => new TensorParallelProgramClass(tp.ranks, tp.blocks), inputs };
  }
  throw new Error(`unknown kind ${kind} (program or tensor-parallel)`);
}

/**
 * Creates, runs and drops `count` programs; nothing here outlives the call. Returns the most
 * threads seen after a run: sampled after each one, since a forgotten program may already be
 * collected (its worker gone) before the loop ends on a loaded machine.
 */
async function forget(make, inputs, count) {
  let most = threads();
  for (let i = 0; i < count; i++) {
    const program = await make();
    if (!(program instanceof Program || program instanceof TensorParallelProgram)) throw new Error('not a program');
    await program.run(inputs);
    most = Math.max(most, threads());
  }
  return most;
}

async function main() {
  const { make, inputs } = await setup();
  // One program run and disposed first, so that threads started once per process (the
  // libuv pool, V8's platform workers) are in the baseline.
  const first = await make();
  await first.run(inputs);
  await first.dispose();
  // A disposed program's worker thread exits asynchronously: wait until the count settles,
  // or the baseline would count it and hide one forgotten worker.
  let baseline = threads();
  for (let stable = 0, i = 0; stable < 3 && i < 100; i++) {
    global.gc();
    await sleep(100);
    const now = threads();
    stable = now === baseline ? stable + 1 : 0;
    baseline = now;
  }
  const rssBefore = rssMB();
  const started = Date.now();
  const peak = await forget(make, inputs, n);
  for (let i = 0; i < 100 && threads() > baseline; i++) {
    global.gc();
    await sleep(100);
  }
  const after = threads();
  const result = { kind, n, baseline, peak, after, rssBeforeMB: rssBefore, rssAfterMB: rssMB(), seconds: (Date.now() - started) / 1000 };
  console.log(JSON.stringify(result));
  process.exitCode = after <= baseline ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
