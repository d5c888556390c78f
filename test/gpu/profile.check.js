'use strict';
// GPU check of program.profile() and the CLI's trtexec flags on the cuda backend (plain Node
// over dist/, no jest: it runs on the GPU machine from a bundle). The mlp and squeezenet1_1
// fixtures compiled with `backend: 'cuda'` (fp32, then squeezenet at fp16) and profiled: one
// entry per plan step (CudaRunner.profile()'s `launch` timing), shares adding up to 1, the
// steps traced back to model nodes, on the calling thread. Then a program of a cuda engine,
// a fallback segment and another cuda engine: every segment profiled, the fallback's node by
// the interpreter. Then `bench --profile --json --fp16 --device 0` through the binary: no
// warning (the cuda backend uses precisions), and the entries. Prints the squeezenet fp16
// table. Exit 0: passed; 1: failed; 3: no usable GPU here.
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { gpuCheck, assert, lib, loadFixture } = require('./check-util');

const root = path.join(__dirname, '..', '..');
const { formatProfile } = require(path.join(root, 'dist', 'cli', 'profile-table.js'));

/** The checks every profile passes: shares add up to 1, the total is the entries' sum. */
function checkProfile(profile, what) {
  const sum = profile.entries.reduce((a, e) => a + e.ms, 0);
  const shares = profile.entries.reduce((a, e) => a + e.share, 0);
  assert(profile.entries.length > 0, `${what}: entries`);
  assert(Math.abs(sum - profile.totalMs) <= 1e-9 * Math.max(1, sum), `${what}: totalMs ${profile.totalMs} is the sum ${sum}`);
  assert(Math.abs(shares - 1) < 1e-9, `${what}: shares add up to ${shares}`);
  for (const e of profile.entries) assert(e.ms > 0 && Number.isFinite(e.ms), `${what}: ${e.name} has ${e.ms} ms`);
  return { entries: profile.entries.length, totalMs: profile.totalMs, wallMs: profile.wallMs, traced: profile.entries.filter((e) => e.from !== undefined).length };
}

gpuCheck('profile', async () => {
  const summary = {};
  for (const [name, precisions] of [['mlp', undefined], ['squeezenet1_1', undefined], ['squeezenet1_1', ['fp16']]]) {
    const fixture = loadFixture(name);
    const inputs = fixture.cases[0].inputs;
    const program = await lib.compile(path.join(fixture.dir, 'model.onnx'), { backend: 'cuda', inputs: inputs.map((t) => ({ shape: [...t.shape] })), ...(precisions && { precisions }) });
    try {
      assert(program.runsOn === 'calling thread', `${name}: a program of cuda engines runs on the calling thread`);
      const profile = await program.profile(inputs, { runs: 5 });
      const key = `${name}${precisions ? `_${precisions[0]}` : ''}`;
      summary[key] = checkProfile(profile, key);
      for (const e of profile.entries) assert(e.timing === 'cuda-step' && e.backend === 'cuda' && typeof e.detail === 'string', `${key}: ${e.name} is a cuda plan step`);
      assert(summary[key].traced > 0, `${key}: some steps trace back to the model`);
      // Convolutions fused with their activation (`conv+relu`) trace through their first layer.
      for (const e of profile.entries) if (e.kind === 'convolution') assert(e.from !== undefined, `${key}: ${e.name} traces back to the model`);
      if (key === 'squeezenet1_1_fp16') console.error(formatProfile(profile));
    } finally {
      await program.dispose();
    }
  }

  const mlp = loadFixture('mlp');
  const mixed = await lib.compile(path.join(mlp.dir, 'model.onnx'), { backend: 'cuda', inputs: [{ shape: [...mlp.cases[0].inputs[0].shape] }], torchExecutedOps: ['aten.erf.default'], minBlockSize: 1 });
  try {
    const profile = await mixed.profile(mlp.cases[0].inputs, { runs: 3 });
    summary.mixed = checkProfile(profile, 'mixed');
    const kinds = profile.segments.map((s) => `${s.kind}:${s.backend}`);
    assert(kinds.join(',') === 'engine:cuda,fallback:interpreter,engine:cuda', `mixed: segments ${kinds}`);
    assert(profile.entries.some((e) => e.segment === 1 && e.kind === 'aten.erf.default'), 'mixed: the fallback node is an entry');
  } finally {
    await mixed.dispose();
  }

  const cli = spawnSync(process.execPath, [path.join(root, 'dist', 'cli', 'index.js'), 'bench', path.join(mlp.dir, 'model.onnx'), '--shape', 'input0=4x32', '--random-inputs', '--backend', 'cuda', '--fp16', '--device', '0', '--iterations', '5', '--profile', '--json', '-q'], { encoding: 'utf8', timeout: 300_000 });
  assert(cli.status === 0, `bench --profile: exit ${cli.status}: ${cli.stderr}`);
  assert(cli.stderr === '', `bench --fp16 on cuda warns nothing: ${cli.stderr}`);
  const bench = JSON.parse(cli.stdout);
  summary.cli = checkProfile(bench.profile, 'cli');
  assert(bench.backend === 'cuda', `cli: backend ${bench.backend}`);
  return summary;
});
