'use strict';
// Memory over many program lifetimes: N cycles of compile → run → dispose of the
// mlp fixture, sampling RSS (after a forced GC) every `every` cycles. After the first
// `warmup` cycles RSS must stay within 10% of its value then; prints each sample and a JSON
// summary, and exits 1 when it grows more.
//
//   nice node --expose-gc bench/run-cycles.js [N=10000] [warmup=1000] [every=200] [lanes=1]
//
// `lanes` > 1 runs that many cycles at a time (each its own program), for shorter wall time.
//
// Uses dist/: build first. Long (minutes): not part of `npm run bench`.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const { compile, Tensor } = require(path.join(root, 'dist', 'index.js'));

const n = Number(process.argv[2] ?? 10_000);
const warmup = Number(process.argv[3] ?? 1000);
const every = Number(process.argv[4] ?? 200);
const lanes = Number(process.argv[5] ?? 1);
if (every % lanes !== 0) throw new Error('every must be a multiple of lanes');
if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');

const model = fs.readFileSync(path.join(root, 'test', 'fixtures', 'mlp', 'model.onnx'));
const x = Tensor.from('float32', [2, 32], Array.from({ length: 64 }, (_, i) => Math.sin(i)));
const threads = () => (fs.existsSync('/proc/self/task') ? fs.readdirSync('/proc/self/task').length : -1);

async function cycle() {
  const program = await compile(model, { backend: 'reference', inputs: [{ shape: [2, 32] }] });
  const [y] = await program.run([x]);
  await program.dispose();
  // softmax rows sum to 1: a cheap check that every cycle really ran.
  const v = y.toArray();
  if (Math.abs(v.slice(0, 10).reduce((a, b) => a + b, 0) - 1) > 1e-5) throw new Error('wrong output');
}

async function main() {
  const samples = [];
  const started = Date.now();
  for (let i = lanes; i <= n; i += lanes) {
    await Promise.all(Array.from({ length: lanes }, cycle));
    if (i % every === 0) {
      global.gc();
      const sample = { cycle: i, rssMB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1), heapMB: +(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1), threads: threads(), seconds: (Date.now() - started) / 1000 };
      samples.push(sample);
      console.log(JSON.stringify(sample));
    }
  }
  const after = samples.filter((s) => s.cycle >= warmup);
  const base = after[0].rssMB;
  const max = Math.max(...after.map((s) => s.rssMB));
  const min = Math.min(...after.map((s) => s.rssMB));
  const last = after[after.length - 1].rssMB;
  const summary = { cycles: n, lanes, warmup, rssAtWarmupMB: base, minMB: min, maxMB: max, lastMB: last, growth: +((max - base) / base).toFixed(4), seconds: (Date.now() - started) / 1000 };
  console.log(JSON.stringify(summary));
  process.exitCode = max <= base * 1.1 ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
