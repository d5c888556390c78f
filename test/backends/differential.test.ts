/**
 * The differential test of the CPU backends (scripts/differential-backends-lib.js, shared
 * with scripts/differential-backends.js): each model compiled with the same settings on
 * `reference` and on `onnxruntime` and run on the same inputs must give the same answer
 * (bit-exact integers and bools, floats within a per-dtype tolerance) or the same typed
 * error code at the same stage. Runs every fixture of test/fixtures, and a deterministic
 * sample of ONNX 1.16.2's node tests when ../shared/third_party holds them (skipped, saying
 * so, otherwise). The whole set: `node scripts/differential-backends.js` (docs/testing.md).
 */
import * as path from 'node:path';

import { onnx } from 'onnx-proto';

import { compile } from '../../lib/compile';
import { loadOnnx } from '../../lib/frontends/onnx';
import { tensorFromProto } from '../../lib/frontends/onnx/tensor-proto';
import { dtypeInfo } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';

type Outcome =
  | { status: 'ok'; sets: Array<{ set: string; outputs: Tensor[] }>; fallbackOps?: number }
  | { status: 'error'; stage: 'import' | 'compile' | 'run'; set?: string; code: string; message: string }
  | { status: 'timeout'; stage: string; set?: string };

interface DiffResult {
  name: string;
  verdict: 'same-answer' | 'same-error' | 'disagreement' | 'inconclusive' | 'skipped';
  reason: string;
  outcomes: Record<string, Outcome>;
}

interface DiffCase {
  name: string;
  model: string;
  settings: object;
  sets: Array<{ set: string; feed: Tensor[] }>;
}

/** scripts/differential-backends-lib.js (plain CommonJS, shared with the script). */
interface DifferentialLib {
  VALUE_TOLERANCE: Record<string, { rtol: number; atol: number }>;
  judge(a: Outcome, b: Outcome): { verdict: DiffResult['verdict']; reason: string };
  compareOutputs(a: Tensor, b: Tensor, label: string): string | null;
  describeOutcome(o: Outcome): string;
  fixtureCases(api: object, fixturesDir: string): DiffCase[];
  differentialCase(api: object, c: DiffCase & { timeoutMs?: number }): Promise<DiffResult>;
  differentialNodeCase(api: object, casesDir: string, name: string, options?: { timeoutMs?: number }): Promise<DiffResult>;
}

interface ConformanceLib {
  SUITE_DIR: string;
  findSuite(repoRoot: string): string | null;
  unpackSuite(tarball: string): string;
  listCases(casesDir: string): string[];
  readTensors(dir: string, prefix: string, api: object): Tensor[];
  compareTensor(actual: Tensor, expected: Tensor, name: string): string | null;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const diff = require('../../scripts/differential-backends-lib.js') as DifferentialLib;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const conformance = require('../../scripts/onnx-conformance-lib.js') as ConformanceLib;

const root = path.join(__dirname, '..', '..');
const api = { onnx, compile, loadOnnx, tensorFromProto, readTensors: conformance.readTensors, compareExpected: conformance.compareTensor, Tensor, dtypeInfo };

/** Every node-test case whose index is a multiple of this is in the sample (about 80 of 1,282). */
const NODE_TEST_STRIDE = 16;

/** Fails with both outcomes unless the backends agreed. */
function expectAgreement(r: DiffResult): void {
  if (r.verdict === 'same-answer' || r.verdict === 'same-error' || r.verdict === 'skipped') return;
  const lines = Object.entries(r.outcomes).map(([backend, o]) => `  ${backend}: ${diff.describeOutcome(o)}`);
  throw new Error(`${r.name}: ${r.verdict} (${r.reason})\n${lines.join('\n')}`);
}

describe('the judgement of two outcomes', () => {
  const f32 = (values: number[]) => Tensor.from('float32', [values.length], values);
  const ok = (...outputs: Tensor[]): Outcome => ({ status: 'ok', sets: [{ set: 's0', outputs }] });
  const error = (code: string, stage: 'compile' | 'run', set?: string): Outcome => ({ status: 'error', stage, set, code, message: 'm' });

  it('takes float32 results within rtol 1e-4 + atol 1e-5 of each other, NaN against NaN, as the same answer', () => {
    expect(diff.judge(ok(f32([1000, NaN, 0, Infinity])), ok(f32([1000.09, NaN, 9e-6, Infinity]))).verdict).toBe('same-answer');
  });

  it('calls a float past the tolerance, a NaN against a number, or opposite infinities a disagreement', () => {
    expect(diff.judge(ok(f32([1000])), ok(f32([1000.2]))).reason).toMatch(/different values: s0 output 0: element 0 is 1000 vs 1000\.2/);
    expect(diff.judge(ok(f32([NaN])), ok(f32([0]))).verdict).toBe('disagreement');
    expect(diff.judge(ok(f32([Infinity])), ok(f32([-Infinity]))).verdict).toBe('disagreement');
  });

  it('wants integer and bool outputs bit-exact, and the same dtype, shape and output count', () => {
    expect(diff.judge(ok(Tensor.from('int64', [1], [7])), ok(Tensor.from('int64', [1], [8]))).reason).toMatch(/element 0 is 7 vs 8 \(int64, exact\)/);
    expect(diff.judge(ok(Tensor.from('bool', [2], [1, 0])), ok(Tensor.from('bool', [2], [1, 1]))).verdict).toBe('disagreement');
    expect(diff.judge(ok(f32([1])), ok(Tensor.from('float64', [1], [1]))).reason).toMatch(/dtype float32 vs float64/);
    expect(diff.judge(ok(f32([1, 2])), ok(Tensor.from('float32', [2, 1], [1, 2]))).reason).toMatch(/shape \[2\] vs \[2, 1\]/);
    expect(diff.judge(ok(f32([1])), ok(f32([1]), f32([2]))).reason).toMatch(/1 outputs vs 2/);
    expect(diff.judge(ok(Tensor.from('int32', [2], [3, 4])), ok(Tensor.from('int32', [2], [3, 4]))).verdict).toBe('same-answer');
  });

  it('takes the same code at the same stage and data set as the same error, and nothing looser', () => {
    expect(diff.judge(error('E_BAD_INPUT', 'run', 's0'), error('E_BAD_INPUT', 'run', 's0'))).toEqual({ verdict: 'same-error', reason: 'E_BAD_INPUT' });
    expect(diff.judge(error('E_UNSUPPORTED_OP', 'compile'), error('E_UNSUPPORTED_OP', 'run', 's0')).reason).toMatch(/E_UNSUPPORTED_OP at different stages: compile vs run \(s0\)/);
    expect(diff.judge(error('E_BAD_INPUT', 'run', 's0'), error('E_BAD_INPUT', 'run', 's1')).verdict).toBe('disagreement');
    expect(diff.judge(error('E_BAD_INPUT', 'run', 's0'), error('E_INTERNAL', 'run', 's0')).reason).toMatch(/different codes: E_BAD_INPUT vs E_INTERNAL/);
    expect(diff.judge(error('untyped:TypeError', 'run', 's0'), error('untyped:TypeError', 'run', 's0')).reason).toMatch(/without a typed code/);
    expect(diff.judge(ok(f32([1])), error('E_BAD_INPUT', 'run', 's0')).reason).toMatch(/one gives an answer, the other an error/);
    expect(diff.judge({ status: 'timeout', stage: 'run' }, ok(f32([1]))).verdict).toBe('inconclusive');
  });
});

describe('the fixtures on reference and onnxruntime', () => {
  const cases = diff.fixtureCases(api, path.join(root, 'test', 'fixtures'));

  it('has every fixture folder and model file', () => {
    expect(cases.filter((c) => !c.name.startsWith('fuzz-findings/')).length).toBeGreaterThanOrEqual(17);
  });

  test.each(cases.map((c) => [c.name, c] as const))('%s: same answer or same error', async (_name, c) => {
    expectAgreement(await diff.differentialCase(api, c));
  }, 120_000);
});

const tarball = conformance.findSuite(root);
if (tarball === null) {
  const why = `${conformance.SUITE_DIR}/node-tests.tar.xz is not next to this checkout (set ONNX_NODE_TESTS_DIR to its folder)`;
  process.stderr.write(`differential test: ONNX node-test sample skipped: ${why}\n`);
  describe('a sample of ONNX node tests on reference and onnxruntime', () => {
    it.skip(`skipped: ${why}`, () => {});
  });
} else {
  const casesDir = conformance.unpackSuite(tarball);
  const sample = conformance.listCases(casesDir).filter((_n, i) => i % NODE_TEST_STRIDE === 0);
  describe(`a sample of ONNX node tests (every ${NODE_TEST_STRIDE}th case) on reference and onnxruntime`, () => {
    test.each(sample)('%s: same answer or same error', async (name) => {
      expectAgreement(await diff.differentialNodeCase(api, casesDir, name));
    }, 120_000);
  });
}
