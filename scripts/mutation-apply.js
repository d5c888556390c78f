#!/usr/bin/env node
'use strict';
// Checks, without rerunning Stryker, whether tests kill given mutants of a Stryker JSON report:
// each mutant's replacement is written over its location in the source, the test files run
// in-process (jest with stryker.conf.js's config: no fresh-dist global setup, so dist/ is never
// rebuilt from a mutated lib/), and the file is restored before the next mutant. The original
// text is also restored on exit, Ctrl-C, SIGTERM and uncaught errors, so no mutated file is left
// behind.
//
//   node scripts/mutation-apply.js <report.json> <id>[,<id>...|all-survived] [test files...]
//
// Without test files, the test files of the module (stryker.conf.js) run. Prints one line per
// mutant: `<id> killed|survived <file>:<line>:<col> <mutator> <replacement>`; exits 1 when any
// mutant survived, 2 when the tests fail before any mutation.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const [reportPath, idsArg, ...testFiles] = process.argv.slice(2);
if (!reportPath || !idsArg) {
  process.stderr.write('usage: node scripts/mutation-apply.js <report.json> <id>[,<id>...|all-survived] [test files...]\n');
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const mutants = [];
for (const [file, entry] of Object.entries(report.files)) for (const m of entry.mutants) mutants.push({ ...m, file });
const wanted =
  idsArg === 'all-survived'
    ? mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    : idsArg.split(',').map((id) => {
        const m = mutants.find((x) => x.id === id);
        if (!m) throw new Error(`${reportPath}: no mutant ${id}`);
        return m;
      });

const strykerConfig = require(path.join(root, 'stryker.conf.js'));
const jestConfig = { ...strykerConfig.jest.config, rootDir: root };
delete jestConfig.globalSetup;
const tests = testFiles.length > 0 ? testFiles : strykerConfig.jest.config.testMatch.map((p) => p.replace('<rootDir>/', ''));

/** Originals of the files currently mutated: restored on every way out. */
const originals = new Map();
function restoreAll() {
  for (const [file, text] of originals) fs.writeFileSync(file, text);
  originals.clear();
}
process.on('exit', restoreAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    restoreAll();
    process.exit(130);
  });
}
process.on('uncaughtException', (e) => {
  restoreAll();
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(2);
});

/** Offset of a 1-based line and column (Stryker's locations) in `text`. */
function offsetOf(text, { line, column }) {
  let off = 0;
  for (let l = 1; l < line; l++) {
    off = text.indexOf('\n', off) + 1;
    if (off === 0) throw new Error(`line ${line} is past the end of the file`);
  }
  return off + column - 1;
}

/** Runs the tests on the source as it is now; true when they pass. */
function testsPass() {
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/jest/bin/jest.js'), '--config', JSON.stringify(jestConfig), '-w', '1', '--bail', '--silent', '--runTestsByPath', ...tests],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { pass: r.status === 0, failing: (r.stderr.match(/● (.+)/) ?? [])[1] ?? `exit ${r.status ?? r.signal}` };
}

// A kill only means something when the tests pass on the unmutated source.
const baseline = testsPass();
if (!baseline.pass) {
  process.stderr.write(`the tests fail on the unmutated source (${baseline.failing.trim()}): fix them first\n`);
  process.exit(2);
}

let survived = 0;
for (const m of wanted) {
  const file = path.join(root, m.file);
  const original = fs.readFileSync(file, 'utf8');
  const start = offsetOf(original, m.location.start);
  const end = offsetOf(original, m.location.end);
  originals.set(file, original);
  try {
    fs.writeFileSync(file, original.slice(0, start) + m.replacement + original.slice(end));
    const r = testsPass();
    const killed = !r.pass;
    if (!killed) survived++;
    const failing = killed ? r.failing : '';
    process.stdout.write(`${m.id} ${killed ? 'killed' : 'survived'} ${m.file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} ${JSON.stringify(m.replacement)}${killed ? ` (${failing.trim()})` : ''}\n`);
  } finally {
    fs.writeFileSync(file, original);
    originals.delete(file);
  }
}
process.exitCode = survived > 0 ? 1 : 0;
