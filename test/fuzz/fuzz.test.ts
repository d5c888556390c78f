/**
 * The fuzzing harness in CI: a short deterministic run (fixed seed) of the four mutated readers
 * and of the generated input classes ends in success or typed errors only (and, for the
 * differential class, in the same outcome on both CPU backends), and the harness itself catches
 * each way an input can misbehave (hang, memory, crash, untyped error). Runs fuzz/run.js against
 * dist/, as `npm run fuzz` does.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

interface Summary {
  total: number;
  readers: Record<string, { inputs: number; outcomes: Record<string, number> }>;
  findings: Array<{ reader: string; index: number; kind: string; file?: string; message: string }>;
}

const made: string[] = [];
afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function fuzz(args: string[]): { status: number | null; summary: Summary; findings: string } {
  const findings = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-test-'));
  made.push(findings);
  const run = spawnSync(process.execPath, ['fuzz/run.js', '--json', '--findings', findings, ...args], { cwd: ROOT, encoding: 'utf8' });
  if (run.stdout.trim() === '') throw new Error(`fuzz/run.js printed nothing: ${run.stderr}`);
  return { status: run.status, summary: JSON.parse(run.stdout) as Summary, findings };
}

test('150 inputs of each mutated reader (seed 1): success or a typed error, nothing else', () => {
  const { status, summary } = fuzz(['--readers', 'onnx,pt2,trtp,npy', '--count', '150', '--seed', '1']);
  expect(summary.findings).toEqual([]);
  expect(status).toBe(0);
  expect(summary.total).toBe(600);
  const typed: Record<string, string> = { onnx: 'E_BAD_MODEL', pt2: 'E_BAD_MODEL', trtp: 'E_BAD_PROGRAM', npy: 'E_INVALID_ARGUMENT' };
  for (const [reader, code] of Object.entries(typed)) {
    const { inputs, outcomes } = summary.readers[reader]!;
    expect(inputs).toBe(150);
    // The mutations must reach both sides: inputs that still read, and inputs refused.
    expect(outcomes.ok).toBeGreaterThan(0);
    expect(outcomes[code]).toBeGreaterThan(0);
    expect(Object.keys(outcomes).every((k) => k === 'ok' || k.startsWith('E_'))).toBe(true);
  }
}, 120_000);

test('the generated input classes (seed 1) reach the limits and checks they aim at', () => {
  const { summary } = fuzz(['--readers', 'pt2bomb,shapefold,compile,differential,extdata,dupnames', '--count', '12', '--seed', '1', '--timeout-ms', '20000']);
  expect(summary.findings).toEqual([]);
  const { pt2bomb, shapefold, compile, differential, extdata, dupnames } = summary.readers;
  expect(shapefold!.inputs).toBe(12);
  // Bombs are refused typed: by the zip limits (E_BAD_MODEL) or the made-up weight budget (E_RESOURCE_LIMIT).
  expect((pt2bomb!.outcomes.E_BAD_MODEL ?? 0) + (pt2bomb!.outcomes.E_RESOURCE_LIMIT ?? 0)).toBeGreaterThan(0);
  // A small maxProgramBytes refuses expanded constants at compile; programs under it compile and run.
  expect(compile!.outcomes.E_RESOURCE_LIMIT).toBeGreaterThan(0);
  expect((compile!.outcomes.compiled ?? 0) + (compile!.outcomes.ran ?? 0)).toBeGreaterThan(0);
  // The backends agree: on answers, and on refusing out-of-range indices.
  expect(Object.keys(differential!.outcomes).every((k) => k.startsWith('agree:'))).toBe(true);
  expect(extdata!.outcomes.E_BAD_MODEL).toBeGreaterThan(0);
  expect(dupnames!.outcomes.E_BAD_MODEL).toBeGreaterThan(0);
}, 180_000);

test('the harness catches hangs, memory blow-ups, crashes and untyped errors, and saves each input', () => {
  const { status, summary, findings } = fuzz(['--readers', 'selftest', '--count', '30', '--seed', '1', '--timeout-ms', '1000', '--max-rss-mb', '300']);
  expect(status).toBe(1);
  expect(new Set(summary.findings.map((f) => f.kind))).toEqual(new Set(['hang', 'oom', 'crash', 'untyped']));
  // Every input was accounted for, those after a killed child included.
  expect(summary.readers.selftest!.inputs).toBe(30);
  for (const f of summary.findings.filter((x) => x.file !== undefined)) {
    const note = fs.readFileSync(`${f.file}.txt`, 'utf8');
    expect(note).toContain(`kind: ${f.kind}`);
    expect(fs.readFileSync(f.file!).length).toBe(1);
  }
  // An input and its note per distinct (kind, input): the four misbehaving inputs at least.
  const saved = new Set(summary.findings.flatMap((f) => (f.file === undefined ? [] : [f.file])));
  expect(saved.size).toBeGreaterThanOrEqual(4);
  expect(fs.readdirSync(findings).length).toBe(2 * saved.size);
}, 120_000);
