#!/usr/bin/env node
'use strict';
/**
 * Compiles and runs every model of the zoo made by scripts/zoo/make_zoo.py, through each file
 * that exported (.pt2, dynamo .onnx, TorchScript .onnx), and compares with PyTorch's outputs
 * at every stored size from one compile (dynamic batch, and sequence for text models). Writes
 * results.json and the table docs/models.md is made of (models.md) into the output folder.
 *
 * usage: node scripts/zoo/evaluate.js ZOO_DIR OUT_DIR [--backend reference|cuda|auto] [--jobs N] [model ...]
 * One child process per model file (--jobs at a time), so one model that crashes or hangs
 * cannot take the others with it; each gets ZOO_TIMEOUT_S seconds (default 240).
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const FILE_KEYS = [
  ['pt2', 'torch.export'],
  ['pt2_auto', 'torch.export (Dim.AUTO)'],
  ['pt2_static', 'torch.export (static)'],
  ['onnx_dynamo', 'ONNX (dynamo)'],
  ['onnx_torchscript', 'ONNX (TorchScript)'],
];

function parseArgs(argv) {
  const args = { backend: 'reference', jobs: 4, models: [] };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--backend') args.backend = argv[++i];
    else if (argv[i] === '--jobs') args.jobs = Number(argv[++i]);
    else rest.push(argv[i]);
  }
  [args.zoo, args.out, ...args.models] = rest;
  if (!args.zoo || !args.out) throw new Error('usage: evaluate.js ZOO_DIR OUT_DIR [--backend B] [--jobs N] [model ...]');
  return args;
}

/** The child: one model file, one compile, every stored size. Prints one JSON line. */
async function evaluateOne(lib, zoo, model, key, backend) {
  const entry = zoo.models.find((m) => m.name === model);
  const file = path.join(zoo.dir, model, entry.exports[key].file);
  const isStatic = key === 'pt2_static';
  // A static export runs only at the size it was exported at (the second stored size).
  const sizes = isStatic ? [1] : entry.sizes.map((_, i) => i);
  // A dim torch.export made dynamic by itself (Dim.AUTO) has the range the export proved, from
  // 2 where the example's size was (PyTorch specializes sizes 0 and 1): the compile keeps to it
  // and a stored size outside it is reported as such, not run.
  // The graph is loaded once, for its ranges and for compile(); null where it does not load (compile() then says why).
  const graph = file.endsWith('.pt2') && !isStatic ? loadedPt2(file) : null;
  const exportRanges = graph !== null ? symbolMins(graph, entry) : noMins(entry);
  const inputs = entry.inputs.map((spec, j) => {
    const example = lib.readNpy(fs.readFileSync(path.join(zoo.dir, model, `size1_input${j}.npy`)));
    if (isStatic) return { shape: [...example.shape] };
    const min = spec.min.map((m, d) => Math.max(m, exportRanges[j][d]));
    return { min, opt: spec.opt.map((o, d) => Math.max(o, min[d])), max: spec.max };
  });
  const result = { model, file: path.basename(file), exporter: key, backend };
  const t0 = Date.now();
  let program;
  try {
    program = await lib.compile(graph ?? file, { backend, inputs, dynamicFallback: true, complexFallback: true });
  } catch (e) {
    // The first lines name what failed (an unsupported op's list follows its count).
    return { ...result, imported: false, stage: 'compile', error: `${e.code ?? e.name}: ${String(e.message).split('\n').slice(0, 4).join(' ').slice(0, 500)}` };
  }
  result.compileMs = Date.now() - t0;
  result.backendUsed = program.backend;
  const report = program.report;
  result.segments = { engine: report.segments.filter((s) => s.kind === 'engine').length, fallback: report.segments.filter((s) => s.kind !== 'engine').length };
  result.ops = report.ops.length;
  const fallback = report.ops.filter((o) => !o.converted);
  result.fallbackOps = fallback.length;
  const reasons = new Map();
  for (const o of fallback) {
    const why = `${o.target}: ${(o.reasons[0] ?? 'no reason').slice(0, 160)}`;
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  result.fallbackReasons = [...reasons].map(([why, n]) => `${n}× ${why}`);
  result.sizes = [];
  for (const i of sizes) {
    const args = entry.inputs.map((_, j) => lib.readNpy(fs.readFileSync(path.join(zoo.dir, model, `size${i}_input${j}.npy`))));
    const below = args.flatMap((a, j) => (isStatic ? [] : a.shape.flatMap((n, d) => (n < inputs[j].min[d] ? [`input ${j} dim ${d} is ${n}, the export's range starts at ${inputs[j].min[d]}`] : []))));
    if (below.length > 0) {
      result.sizes.push({ size: entry.sizes[i], ok: null, outside: below.join('; ') });
      continue;
    }
    const expected = lib.readNpy(fs.readFileSync(path.join(zoo.dir, model, `size${i}_output0.npy`)));
    try {
      const t1 = Date.now();
      const [out] = await program.run(args);
      const ms = Date.now() - t1;
      const host = typeof out.toHost === 'function' && !(out instanceof lib.Tensor) ? await out.toHost() : out;
      const a = host.toArray().flat(Infinity).map(Number);
      const b = expected.toArray().flat(Infinity).map(Number);
      let maxAbs = 0;
      let maxRef = 0;
      let bad = 0;
      for (let k = 0; k < b.length; k++) {
        const d = Math.abs(a[k] - b[k]);
        if (!(d <= maxAbs)) maxAbs = Number.isNaN(d) ? Infinity : Math.max(maxAbs, d);
        maxRef = Math.max(maxRef, Math.abs(b[k]));
        if (!(d <= 1e-4 * Math.abs(b[k]) + 1e-4)) bad++;
      }
      const shapeOk = JSON.stringify(host.shape) === JSON.stringify(expected.shape);
      result.sizes.push({ size: entry.sizes[i], ms, maxAbs, maxRef, mismatches: bad, shapeOk, ok: shapeOk && bad === 0 });
    } catch (e) {
      result.sizes.push({ size: entry.sizes[i], ok: false, error: `${e.code ?? e.name}: ${String(e.message).split('\n')[0].slice(0, 300)}` });
    }
  }
  result.imported = true;
  await program.dispose();
  return result;
}

const noMins = (entry) => entry.inputs.map((s) => s.min.map(() => 0));

/** The .pt2 at `file` as a Graph, or null where it does not load. */
function loadedPt2(file) {
  const { loadPt2 } = require('../../dist/ir-entry.js');
  try {
    return loadPt2(file);
  } catch {
    return null;
  }
}

/** Per input of `entry`, per dim: the least size the graph's own symbol for that dim allows (0 where it names none). */
function symbolMins(graph, entry) {
  return entry.inputs.map((spec, j) => {
    const shape = graph.inputs[j]?.tensorType.shape ?? [];
    return spec.min.map((_, d) => {
      const dim = shape[d];
      const range = dim !== undefined && typeof dim === 'object' && dim.op === 'sym' ? graph.symbols.get(dim.name) : undefined;
      return range === undefined ? 0 : range.min;
    });
  });
}

function runChild(model, key, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [__filename, '--child', args.zoo, model, key, args.backend], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), Number(process.env.ZOO_TIMEOUT_S ?? 240) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop();
      try {
        resolve(JSON.parse(line));
      } catch {
        resolve({ model, exporter: key, imported: false, stage: 'process', error: `exit ${code ?? signal}: ${stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 400)}` });
      }
    });
  });
}

const fmtErr = (x) => (x === undefined ? '' : x < 1e-3 ? x.toExponential(1) : x.toFixed(4));

function table(results, zoo) {
  const lines = [
    `Generated by scripts/zoo/evaluate.js (backend: ${results[0]?.backend ?? '?'}) from the zoo made by scripts/zoo/make_zoo.py`,
    `(torch ${zoo.torch}, torchvision ${zoo.torchvision}, transformers ${zoo.transformers}).`,
    '',
    '| model | frontend | imports | segments (engine / fallback) | ops in fallback | max abs error at each stored size | matches |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const label = FILE_KEYS.find(([k]) => k === r.exporter)?.[1] ?? r.exporter;
    if (!r.imported) {
      lines.push(`| ${r.model} | ${label} | no: ${r.error?.replace(/\|/g, '\\|')} | | | | |`);
      continue;
    }
    const errs = r.sizes.map((s) => (s.error ? `error: ${s.error.replace(/\|/g, '\\|')}` : s.outside ? 'outside the export\'s range' : fmtErr(s.maxAbs))).join(' / ');
    const ok = r.sizes.every((s) => s.ok !== false) && r.sizes.some((s) => s.ok);
    lines.push(`| ${r.model} | ${label} | yes | ${r.segments.engine} / ${r.segments.fallback} | ${r.fallbackOps} of ${r.ops} | ${errs} | ${ok ? 'yes' : 'no'} |`);
  }
  const failedExports = [];
  for (const m of zoo.models) {
    if (m.error) failedExports.push(`- ${m.name}: the model could not be built: ${m.error.split('\n')[0]}`);
    for (const [k, e] of Object.entries(m.exports ?? {})) if (!e.ok) failedExports.push(`- ${m.name}, ${k}: ${e.error}`);
  }
  const imported = results.filter((r) => r.imported);
  const matching = imported.filter((r) => r.sizes.every((s) => s.ok !== false) && r.sizes.some((s) => s.ok));
  const zeroFallback = imported.filter((r) => r.fallbackOps === 0);
  const pct = (n) => (results.length === 0 ? '0' : ((100 * n) / results.length).toFixed(0));
  lines.splice(
    3,
    0,
    `${results.length} model files: ${imported.length} import and compile (${pct(imported.length)}%), ${matching.length} match PyTorch at every stored size (${pct(matching.length)}%), ` +
      `${zeroFallback.length} compile with zero fallback (${pct(zeroFallback.length)}%).`,
    '',
  );
  const reasons = results.filter((r) => r.fallbackReasons?.length).map((r) => `- ${r.model} (${r.exporter}): ${r.fallbackReasons.join('; ')}`);
  return [...lines, '', '### Exports that failed in PyTorch', '', ...(failedExports.length ? failedExports : ['none']), '', '### Ops in fallback, with reasons', '', ...(reasons.length ? reasons : ['none']), ''].join('\n');
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    const [, zooDir, model, key, backend] = argv;
    const lib = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));
    const zoo = { ...JSON.parse(fs.readFileSync(path.join(zooDir, 'manifest.json'), 'utf8')), dir: zooDir };
    process.stdout.write(`${JSON.stringify(await evaluateOne(lib, zoo, model, key, backend))}\n`);
    return;
  }
  const args = parseArgs(argv);
  const zoo = JSON.parse(fs.readFileSync(path.join(args.zoo, 'manifest.json'), 'utf8'));
  const work = [];
  for (const m of zoo.models) {
    if (args.models.length && !args.models.includes(m.name)) continue;
    for (const [key] of FILE_KEYS) if (m.exports?.[key]?.ok) work.push([m.name, key]);
  }
  const results = new Array(work.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, args.jobs) }, async () => {
      while (next < work.length) {
        const i = next++;
        results[i] = await runChild(work[i][0], work[i][1], args);
        const r = results[i];
        // Written after every model, so a run cut short by a time limit still leaves its table.
        writeResults(args.out, results.filter(Boolean), zoo);
        process.stderr.write(`${r.model} ${r.exporter}: ${r.imported ? `${r.fallbackOps}/${r.ops} fallback, ${r.sizes.map((s) => (s.ok ? 'ok' : s.ok === null ? 'outside-range' : 'MISMATCH')).join(' ')}` : `not imported: ${r.error}`}\n`);
      }
    }),
  );
  writeResults(args.out, results, zoo);
}

function writeResults(out, results, zoo) {
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'results.json'), JSON.stringify(results, null, 1));
  fs.writeFileSync(path.join(out, 'models.md'), table(results, zoo));
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { table };
