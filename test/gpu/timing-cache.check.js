'use strict';
// GPU check of the cuda backend's timing cache (lib/backends/cuda/run/timing-cache.ts). SqueezeNet
// 1.1 at fp16 runs its 1×1 convolutions as cuBLASLt GEMMs whose candidates are timed when a plan
// is made. Each phase is a fresh Node process (the choices are also remembered per process, so
// only a new process shows what the file does), all with TENSORRT_NODE_TIMING_CACHE at one file:
//   1. no file yet: GEMM problems are timed and written to the file, scoped by this device's
//      name, compute capability and cuBLASLt version;
//   2. the file from 1: nothing is timed, every timed GEMM takes the file's choice, and the
//      outputs are bit-identical to 1's;
//   3. the file's algorithms replaced by bytes cuBLASLt never offers: they are ignored, the
//      problems are timed again and the outputs still match PyTorch;
//   4. the file from 3 with TENSORRT_NODE_TUNING_BUDGET_MS=0: the file's choices are still taken
//      (nothing timed, nothing over budget) and the outputs are bit-identical to 3's;
//   5. no file and a budget of 0: nothing is timed, every timed GEMM keeps cuBLASLt's first
//      choice (counted over budget) and the outputs still match PyTorch;
//   6. a malformed file: the first run is refused with E_INVALID_ARGUMENT naming the file, and
//      the file is left as it was.
// Every phase's outputs are compared with PyTorch's fp32 outputs (scaled error ≤ 1e-2).
// Exit 0: passed; 1: failed; 3: no usable GPU here.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { gpuCheck, assert, lib, loadFixture } = require('./check-util');

const FIXTURE = 'squeezenet1_1';
const TOL = 1e-2;

/** In a child: compile the fixture at fp16, run it once, print what the parent checks. */
async function child() {
  const fixture = loadFixture(FIXTURE);
  const format = fixture.files.pt2 ? 'pt2' : 'onnx';
  const c = fixture.cases[0];
  const program = await lib.compile(path.join(fixture.dir, fixture.files[format]), {
    backend: 'cuda',
    precisions: ['fp16'],
    inputs: c.inputs.map((t) => ({ shape: [...t.shape] })),
  });
  try {
    let outputs;
    try {
      outputs = await program.run(c.inputs);
    } catch (error) {
      console.log(JSON.stringify({ error: { code: error.code, message: error.message } }));
      return;
    }
    const worst = outputs.map((t, i) => {
      const want = c.outputs[i].data;
      let scale = 0;
      for (const v of want) scale = Math.max(scale, Math.abs(v));
      let w = 0;
      for (let j = 0; j < want.length; j++) w = Math.max(w, Math.abs(Number(t.data[j]) - want[j]) / (scale + Math.abs(want[j])));
      return w;
    });
    const bytes = outputs.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('base64'));
    const { timed, reused, overBudget } = require(path.join(__dirname, '..', '..', 'dist', 'gpu', 'binding.js')).gpuBinding().gpuTuningCounts();
    console.log(JSON.stringify({ timed, reused, overBudget, worst, bytes }));
  } finally {
    await program.dispose();
  }
}

/** One fresh process over the file: its result line, and the runner's log (DEBUG=tensorrt-node goes to stderr). */
function phase(file, budgetMs) {
  const env = { ...process.env, TENSORRT_NODE_TIMING_CACHE: file ?? '', DEBUG: 'tensorrt-node' };
  delete env.TENSORRT_NODE_ENGINE_CACHE;
  delete env.TENSORRT_NODE_GEMM_TUNE;
  delete env.TENSORRT_NODE_TUNING_BUDGET_MS;
  if (budgetMs !== undefined) env.TENSORRT_NODE_TUNING_BUDGET_MS = String(budgetMs);
  const child = spawnSync(process.execPath, [__filename, '--child'], { env, encoding: 'utf8', timeout: 120_000 });
  assert(child.status === 0, `the child process exited with ${child.status} (${child.signal ?? ''}): ${child.stderr.slice(-2000)}`);
  const result = JSON.parse(child.stdout.trim().split('\n').pop());
  result.logs = child.stderr.split('\n').filter((l) => l.includes('timing cache'));
  if (result.error === undefined) assert(result.worst.every((w) => w <= TOL), `outputs within ${TOL} of PyTorch fp32 (worst ${result.worst})`);
  return result;
}

if (process.argv[2] === '--child') {
  child().catch((error) => {
    console.error(error.stack);
    process.exit(1);
  });
} else {
  gpuCheck('timing-cache', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-timing-'));
    const file = path.join(dir, 'cuda-timing.json');
    try {
      const first = phase(file);
      assert(first.timed > 0, `phase 1 timed GEMM problems (${first.timed})`);
      const written = JSON.parse(fs.readFileSync(file, 'utf8'));
      const scope = written.scopes[0];
      const entries = Object.keys(scope.gemms).length;
      assert(written.scopes.length === 1 && entries === first.timed, `the file holds one scope with the ${first.timed} problems timed (${written.scopes.length} scopes, ${entries} problems)`);
      const name = (await lib.devices()).devices[0].name;
      assert(scope.device === name && /^\d+\.\d+$/.test(scope.computeCapability) && scope.cublasLt > 0, `the scope names the device "${name}" (${JSON.stringify({ ...scope, gemms: undefined })})`);

      const second = phase(file);
      assert(second.timed === 0 && second.reused >= first.timed, `phase 2 timed nothing and reused the file's choices (timed ${second.timed}, reused ${second.reused})`);
      assert(second.bytes.every((b, i) => b === first.bytes[i]), 'phase 2 outputs are bit-identical to phase 1');
      assert(second.logs.some((l) => l.includes(`${entries} GEMM algorithm choices read`)), `phase 2 logged the choices it read (${second.logs})`);

      const foreign = { ...written, scopes: [{ ...scope, gemms: Object.fromEntries(Object.keys(scope.gemms).map((p) => [p, Buffer.alloc(64, 0xa5).toString('base64')])) }] };
      fs.writeFileSync(file, JSON.stringify(foreign));
      const third = phase(file);
      assert(third.timed === first.timed, `phase 3 timed every problem again, ignoring algorithms cuBLASLt does not offer (timed ${third.timed})`);

      const budgeted = phase(file, 0);
      assert(budgeted.timed === 0 && budgeted.overBudget === 0 && budgeted.reused >= entries, `phase 4 took the file's choices within a budget of 0 (${JSON.stringify({ ...budgeted, bytes: undefined })})`);
      assert(budgeted.bytes.every((b, i) => b === third.bytes[i]), 'phase 4 outputs are bit-identical to phase 3 (same choices)');

      const untimed = phase(null, 0);
      assert(untimed.timed === 0 && untimed.reused === 0 && untimed.overBudget === second.reused, `phase 5 timed nothing and kept the first choice of each of the ${second.reused} timed GEMMs (${JSON.stringify({ ...untimed, bytes: undefined })})`);

      const malformed = '{"format": "tensorrt-node cuda timing cache", "version": 1, "scopes": [';
      fs.writeFileSync(file, malformed);
      const sixth = phase(file);
      assert(sixth.error?.code === 'E_INVALID_ARGUMENT' && sixth.error.message.includes(file) && sixth.error.message.includes('not JSON'), `phase 6 is refused naming the file (${JSON.stringify(sixth.error)})`);
      assert(fs.readFileSync(file, 'utf8') === malformed, 'phase 6 left the malformed file as it was');
      return { problems: entries, reused: second.reused, overBudget: untimed.overBudget, worst: [first.worst, second.worst, third.worst, budgeted.worst, untimed.worst] };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
