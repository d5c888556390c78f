#!/usr/bin/env node
'use strict';
/**
 * ONNX's node tests through compile() on a backend: every case that passes through loadOnnx +
 * interpret (scripts/onnx-conformance.js; those passing only with shape-like inputs fixed at
 * import are left out) is compiled with `backend` (minBlockSize 1) and run on each data set,
 * and its outputs compared with ONNX's expected ones the same way. Prints counts (pass: every op
 * in the backend's engines; pass-with-fallback: some ops left to interpreted fallback segments;
 * wrong; refused at compile; refused at run) and every case that does neither pass.
 *
 *   npm run build:ts && node scripts/onnx-conformance-compiled.js [--set 1.23.0] [--backend reference|onnxruntime] [--json out.json]
 */
const fs = require('node:fs');
const path = require('node:path');

const lib = require('./onnx-conformance-lib');

const root = path.join(__dirname, '..');
const dist = (p) => require(path.join(root, 'dist', p));

async function main() {
  const args = process.argv.slice(2);
  const version = lib.option(args, '--set', '1.16.2');
  const backend = lib.option(args, '--backend', 'reference');
  const tarball = lib.findSuite(root, version);
  if (tarball === null) {
    process.stderr.write(`ONNX ${version} node tests not found; nothing to do\n`);
    process.exit(2);
  }
  const casesDir = lib.unpackSuite(tarball);
  const api = { onnx: require('onnx-proto').onnx, loadOnnx: dist('frontends/onnx').loadOnnx, interpret: dist('interpreter').interpret, tensorFromProto: dist('frontends/onnx/tensor-proto').tensorFromProto };
  const { compile } = dist('index.js');
  const results = [];
  for (const name of lib.listCases(casesDir)) {
    const interpreted = lib.runCase(casesDir, name, api);
    if (interpreted.category !== 'pass') continue;
    const dir = path.join(casesDir, name);
    const bytes = fs.readFileSync(path.join(dir, 'model.onnx'));
    const model = api.onnx.ModelProto.decode(bytes);
    const inputNames = (model.graph.input ?? []).map((i) => i.name);
    const outputNames = (model.graph.output ?? []).map((o) => o.name);
    let program;
    try {
      program = await compile(api.loadOnnx(new Uint8Array(bytes)), { backend, minBlockSize: 1 });
    } catch (error) {
      results.push({ name, status: 'refused-at-compile', reason: `${error.code ?? error.name}: ${String(error.message).split('\n')[0].slice(0, 240)}` });
      continue;
    }
    // Ops left to fallback segments run on the interpreter: a pass through them is not the backend's.
    const fallbackOps = program.report.segments.filter((seg) => seg.kind !== 'engine').reduce((n, seg) => n + seg.ops, 0);
    let result = { name, status: fallbackOps > 0 ? 'pass-with-fallback' : 'pass', reason: fallbackOps > 0 ? `${fallbackOps} op(s) in fallback segments` : '' };
    try {
      for (const set of fs.readdirSync(dir).filter((d) => d.startsWith('test_data_set_')).sort()) {
        const inputs = lib.readTensors(path.join(dir, set), 'input_', api);
        const expected = lib.readTensors(path.join(dir, set), 'output_', api);
        const byName = {};
        inputs.forEach((t, i) => (byName[inputNames[i]] = t));
        const feed = program.inputs.map((io) => byName[io.name]);
        let actual;
        try {
          actual = await program.run(feed);
        } catch (error) {
          result = { name, status: 'refused-at-run', reason: `${set}: ${error.code ?? error.name}: ${String(error.message).split('\n')[0].slice(0, 240)}` };
          break;
        }
        const why = expected.map((e, i) => (actual[i] === undefined ? `${set}: output ${outputNames[i]} missing` : lib.compareTensor(actual[i], e, `${set} output ${outputNames[i]}`))).find((w) => w !== null);
        if (why !== undefined) {
          result = { name, status: 'wrong', reason: why };
          break;
        }
      }
    } finally {
      await program.dispose();
    }
    results.push(result);
  }
  const counts = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  for (const r of results.filter((x) => x.status !== 'pass' && x.status !== 'pass-with-fallback')) process.stdout.write(`${r.status}\t${r.name}\t${r.reason}\n`);
  process.stdout.write(`ONNX ${version}, backend ${backend}: of ${results.length} cases that pass through the interpreter: ${JSON.stringify(counts)}\n`);
  const json = lib.option(args, '--json', undefined);
  if (json !== undefined) fs.writeFileSync(json, JSON.stringify(results, null, 1));
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
