'use strict';
// Where the host time of one program.run() with device I/O goes on the cuda backend:
// each layer of the call timed on its own, interleaved round-robin, median of ROUNDS (default
// 100). Layers: program.run() → the engine's run (input copies, the graph replay, output copies)
// → each of those alone → the device's time for the graph (CudaRunner.timeGraph). Reads the
// runner's internals. usage: [PRECISION=fp16] node bench/gpu/run-breakdown.js DIR [name ...]
// (DIR: the exports of bench/gpu/models.py).
const fs = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '..', '..', 'dist');
const lib = require(path.join(dist, 'index.js'));
const { CudaRunner } = require(path.join(dist, 'backends', 'cuda', 'run', 'runner.js'));
const { deserializeCudaEngine } = require(path.join(dist, 'backends', 'cuda', 'engine-format.js'));

const PRECISION = process.env.PRECISION || 'fp32';
const ROUNDS = Number(process.env.ROUNDS ?? 100);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const { readTensor, engineFeeds } = require('./export-io');

async function breakdown(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const program = await lib.compile(path.join(dir, 'model.pt2'), { backend: 'cuda', ...(PRECISION === 'fp32' ? {} : { precisions: [PRECISION] }) });
  const logs = [];
  const segment = program.data.segments.find((s) => s.kind === 'engine');
  const runner = await CudaRunner.load(deserializeCudaEngine(segment.engine), 0, { logger: (level, message) => logs.push(`${level}: ${message}`) });
  try {
    const inputs = meta.inputs.map((m) => readTensor(lib, dir, m));
    const onDevice = [];
    for (const t of inputs) onDevice.push(await lib.toDevice(t, 0));
    const feeds = engineFeeds(lib, runner, inputs);
    for (const name of Object.keys(feeds)) feeds[name] = await lib.toDevice(feeds[name], 0);
    Object.values(await runner.run(feeds)).forEach((t) => t.dispose());
    const instance = runner.plans.get(runner.plans.keys()[0]);
    const layers = {
      'program.run() (device I/O)': async () => (await program.run(onDevice, { outputs: 'device' })).forEach((t) => t.dispose()),
      'engine run (copies + replay + clones)': async () => Object.values(await runner.run(feeds)).forEach((t) => t.dispose()),
      'input copies': () => Promise.all([...instance.inputs].map(([name, buffer]) => runner.copyIn(name, feeds[name], buffer))),
      'graph replay (one run, waited)': () => runner.execute(instance),
      'output clones': async () => (await Promise.all(instance.outputs.map(([, buffer]) => buffer.clone()))).forEach((t) => t.dispose()),
    };
    const times = Object.fromEntries(Object.keys(layers).map((k) => [k, []]));
    for (let r = 0; r < ROUNDS + 10; r++) {
      for (const [k, f] of Object.entries(layers)) {
        const t0 = process.hrtime.bigint();
        await f();
        if (r >= 10) times[k].push(Number(process.hrtime.bigint() - t0) / 1e3);
      }
    }
    const out = { name: meta.name, precision: PRECISION, graph: instance.graph, steps: instance.parts.spec.steps.length, us: {} };
    for (const k of Object.keys(layers)) out.us[k] = Math.round(median(times[k]) * 10) / 10;
    out.us['device time per replay (timeGraph)'] = Math.round((await runner.timeGraph(feeds, { repeats: 100 })) * 1e4) / 10;
    out.logs = logs.filter((l) => !l.startsWith('debug'));
    console.log(JSON.stringify(out));
    for (const t of [...onDevice, ...Object.values(feeds)]) t.dispose();
  } finally {
    runner.dispose();
    await program.dispose();
  }
}

(async () => {
  const root = process.argv[2];
  const names = process.argv.slice(3);
  const dirs = names.length > 0 ? names : fs.readdirSync(root).filter((n) => fs.existsSync(path.join(root, n, 'meta.json')));
  for (const name of dirs) await breakdown(path.join(root, name));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
