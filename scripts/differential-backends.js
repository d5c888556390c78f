#!/usr/bin/env node
'use strict';
/**
 * The differential test of the CPU backends: every ONNX node-test case of a set and every
 * fixture of test/fixtures is compiled with the same settings on `reference` and on
 * `onnxruntime`, run on the same inputs, and the two outcomes are compared with each other
 * (not only with the expected outputs): the same answer (bit-exact for integer and bool
 * outputs, within a per-dtype tolerance for floats), the same typed error code at the same
 * stage, or a disagreement. The rules and tolerances: scripts/differential-backends-lib.js.
 *
 * Prints progress on stderr, then every disagreement and inconclusive case with both
 * outcomes, then the counts. Exit status: 0 when the backends agree on every case, 1 on any
 * disagreement, 3 when there is none but some case timed out, 2 when there is nothing to run.
 *
 *   npm run build:ts && node scripts/differential-backends.js [--set 1.16.2|1.23.0] [--json out.json]
 *       [--timeout SECONDS] [--filter REGEX] [--no-fixtures] [--no-node-tests]
 *
 * --set picks the node-test set (../shared/third_party/onnx-VERSION/node-tests.tar.xz, or
 * $ONNX_NODE_TESTS_DIR); --timeout bounds one backend's compile and runs of one case (default
 * 60); --filter keeps the cases whose name matches.
 */
const fs = require('node:fs');
const path = require('node:path');

const conformance = require('./onnx-conformance-lib');
const diff = require('./differential-backends-lib');

const root = path.join(__dirname, '..');
const dist = (p) => require(path.join(root, 'dist', p));

/** The folder of unpacked node-test cases of ONNX `version`, or null when the set is absent. */
function nodeTestsDir(version) {
  const tarball = conformance.findSuite(root, version);
  return tarball === null ? null : conformance.unpackSuite(tarball);
}

function progress(done, total, name, started) {
  if (!process.stderr.isTTY && done % 25 !== 0 && done !== total) return;
  const s = ((Date.now() - started) / 1000).toFixed(0);
  const line = `[${done}/${total}] ${s} s ${name}`;
  process.stderr.write(process.stderr.isTTY ? `\r${line.slice(0, 110).padEnd(110)}` : `${line}\n`);
}

async function main() {
  const args = process.argv.slice(2);
  const version = conformance.option(args, '--set', '1.16.2');
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    process.stderr.write(`--set takes an ONNX version such as 1.23.0, got ${JSON.stringify(version)}\n`);
    process.exit(2);
  }
  const timeoutMs = 1000 * Number(conformance.option(args, '--timeout', String(diff.DEFAULT_TIMEOUT_MS / 1000)));
  if (!(timeoutMs > 0)) {
    process.stderr.write('--timeout takes a number of seconds greater than 0\n');
    process.exit(2);
  }
  const filter = new RegExp(conformance.option(args, '--filter', ''));
  const api = {
    onnx: require('onnx-proto').onnx,
    compile: dist('index.js').compile,
    loadOnnx: dist('frontends/onnx').loadOnnx,
    tensorFromProto: dist('frontends/onnx/tensor-proto').tensorFromProto,
    valueFromProtoBytes: dist('frontends/onnx/value-proto').valueFromProtoBytes,
    readTensors: conformance.readTensors,
    compareExpected: conformance.compareTensor,
    Tensor: dist('ir/tensor').Tensor,
    dtypeInfo: dist('ir/dtype').dtypeInfo,
  };

  // The work: [{ group, name, run: () => Promise<result> }].
  const work = [];
  const stats = {};
  if (!args.includes('--no-node-tests')) {
    const casesDir = nodeTestsDir(version);
    if (casesDir === null) process.stderr.write(`ONNX ${version} node tests not found; running the fixtures only\n`);
    else {
      for (const name of conformance.listCases(casesDir).filter((n) => filter.test(n))) {
        work.push({ group: `onnx-${version}`, name, run: () => diff.differentialNodeCase(api, casesDir, name, { timeoutMs, stats }) });
      }
    }
  }
  if (!args.includes('--no-fixtures')) {
    for (const c of diff.fixtureCases(api, path.join(root, 'test', 'fixtures')).filter((x) => filter.test(x.name))) {
      work.push({ group: 'fixtures', name: c.name, run: () => diff.differentialCase(api, { ...c, timeoutMs, stats }) });
    }
  }
  if (work.length === 0) {
    process.stderr.write('nothing to run\n');
    process.exit(2);
  }

  const started = Date.now();
  const results = [];
  for (const [k, w] of work.entries()) {
    const r = diff.plain(await w.run());
    r.group = w.group;
    results.push(r);
    progress(k + 1, work.length, w.name, started);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');

  for (const r of results.filter((x) => x.verdict === 'disagreement' || x.verdict === 'inconclusive')) {
    process.stdout.write(`${r.verdict.toUpperCase()}\t${r.group}\t${r.name}\t${r.reason}\n`);
    for (const [backend, o] of Object.entries(r.outcomes)) process.stdout.write(`\t${backend}: ${o.describe}\n`);
  }
  const groups = [...new Set(results.map((r) => r.group))];
  const summary = {};
  for (const g of groups) {
    const of = results.filter((r) => r.group === g);
    summary[g] = { cases: of.length, ...diff.countVerdicts(of), sameErrorAtImport: of.filter((r) => r.atImport).length };
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  for (const [g, s] of Object.entries(summary)) {
    process.stdout.write(
      `${g}: ${s.cases} cases: ${s['same-answer']} same answer, ${s['same-error']} same error (${s.sameErrorAtImport} refused at import, before any backend), ` +
        `${s.disagreement} disagreements, ${s.inconclusive} inconclusive (timeout), ${s.skipped} skipped (test data of a type the project lacks)\n`,
    );
  }
  // Information, not a verdict: agreeing backends that both differ from a case's expected outputs
  // (ONNX's disputed cases: expected data that contradicts the op's specification).
  const bothOff = results.filter((r) => r.verdict === 'same-answer' && r.vsExpected !== undefined && Object.values(r.vsExpected).every((v) => v !== 'match'));
  if (bothOff.length > 0) process.stdout.write(`agreeing, but both differ from the expected outputs: ${bothOff.map((r) => r.name).join(', ')}\n`);
  const closeness = Object.entries(stats)
    .map(([d, v]) => `${d} ${(100 * v).toFixed(1)}%`)
    .join(', ');
  process.stdout.write(`largest float difference of agreeing outputs, as a share of its tolerance: ${closeness || 'none'}\n`);
  process.stdout.write(`${seconds} s\n`);
  const json = conformance.option(args, '--json', undefined);
  if (json !== undefined) fs.writeFileSync(json, JSON.stringify({ set: version, tolerance: diff.VALUE_TOLERANCE, summary, closeness: stats, seconds: Number(seconds), results }, null, 1));
  const disagreements = results.filter((r) => r.verdict === 'disagreement').length;
  const inconclusive = results.filter((r) => r.verdict === 'inconclusive').length;
  process.exit(disagreements > 0 ? 1 : inconclusive > 0 ? 3 : 0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
