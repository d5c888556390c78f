/**
 * ONNX 1.16.2's backend node tests through loadOnnx + interpret (lib/, not dist/), judged as
 * ONNX's own runner judges them (scripts/onnx-conformance-lib.js). Every case that does not
 * pass plainly is listed in onnx-node-expectations.json with its reason category (or as passing
 * only with its shape-like inputs fixed at import): a listed case that
 * now passes is reported (update the list with `node scripts/onnx-conformance.js
 * --expectations`), an unlisted case that fails or any wrong answer fails the test.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { onnx } from 'onnx-proto';

import { loadOnnx } from '../../lib/frontends/onnx';
import { tensorFromProto } from '../../lib/frontends/onnx/tensor-proto';
import { valueFromProtoBytes } from '../../lib/frontends/onnx/value-proto';
import { interpret, interpretValues } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';

interface CaseResult {
  name: string;
  opset: number;
  status: 'pass' | 'wrong' | 'disputed' | 'refused' | 'unsupported-type';
  category: string;
  reason: string;
}

/** scripts/onnx-conformance-lib.js (plain CommonJS, shared with the docs generator). */
interface ConformanceLib {
  SUITE_DIR: string;
  BOUND_PASS: string;
  findSuite(repoRoot: string): string | null;
  unpackSuite(tarball: string): string;
  listCases(casesDir: string): string[];
  runCase(casesDir: string, name: string, api: object): CaseResult;
  compareTensor(actual: Tensor, expected: Tensor, name: string): string | null;
  summarize(results: CaseResult[]): { pass: number; typed: number; wrong: number };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lib = require('../../scripts/onnx-conformance-lib.js') as ConformanceLib;

const root = path.join(__dirname, '..', '..');
const tarball = lib.findSuite(root);
const expectations = JSON.parse(fs.readFileSync(path.join(__dirname, 'onnx-node-expectations.json'), 'utf8')) as Record<string, string>;

describe('the comparison of ONNX node test outputs', () => {
  const f32 = (values: number[]) => Tensor.from('float32', [values.length], values);
  it('accepts differences within rtol 1e-3 + atol 1e-7 and NaN against NaN', () => {
    expect(lib.compareTensor(f32([1000, NaN, 0]), f32([1000.9, NaN, 0]), 'y')).toBeNull();
  });
  it('refuses a difference past the tolerance, a dtype or a shape that differs, an inexact integer', () => {
    expect(lib.compareTensor(f32([1000]), f32([1001.1]), 'y')).toMatch(/element 0 is 1000, expected 1001\.09/);
    expect(lib.compareTensor(f32([1]), Tensor.from('float64', [1], [1]), 'y')).toMatch(/dtype float32, expected float64/);
    expect(lib.compareTensor(f32([1, 2]), Tensor.from('float32', [2, 1], [1, 2]), 'y')).toMatch(/shape \[2\], expected \[2, 1\]/);
    expect(lib.compareTensor(Tensor.from('int32', [1], [5]), Tensor.from('int32', [1], [6]), 'y')).toMatch(/element 0 is 5/);
    // uint64 and int64 compare their bigints: as numbers 2^53 + 1 and 2^53 would be equal.
    expect(lib.compareTensor(Tensor.from('uint64', [1], [2n ** 53n + 1n]), Tensor.from('uint64', [1], [2n ** 53n]), 'y')).toMatch(/element 0 is 9007199254740993, expected 9007199254740992/);
    expect(lib.compareTensor(f32([NaN]), f32([0]), 'y')).toMatch(/element 0/);
  });
});

if (tarball === null) {
  describe('ONNX backend node tests', () => {
    it.skip(`skipped: ${lib.SUITE_DIR}/node-tests.tar.xz is not next to this checkout (set ONNX_NODE_TESTS_DIR to its folder)`, () => {});
  });
} else {
  describe('ONNX backend node tests (ONNX 1.16.2)', () => {
    let results: CaseResult[] = [];
    beforeAll(() => {
      const casesDir = lib.unpackSuite(tarball!);
      const api = { onnx, loadOnnx, interpret, interpretValues, tensorFromProto, valueFromProtoBytes };
      results = lib.listCases(casesDir).map((name) => lib.runCase(casesDir, name, api));
      // For working on the importer without rebuilding dist/: the raw results of this run.
      if (process.env.ONNX_CONFORMANCE_JSON) fs.writeFileSync(process.env.ONNX_CONFORMANCE_JSON, JSON.stringify(results, null, 1));
    }, 120_000);

    it('gives no wrong answer and no untyped error', () => {
      const bad = results.filter((r) => r.status === 'wrong' || r.category === 'crash').map((r) => `${r.name}: ${r.reason}`);
      expect(bad).toEqual([]);
    });

    it('passes every case that the expectation file does not list or lists as passing with fixed inputs', () => {
      const regressed = (r: CaseResult): boolean => {
        const expected = expectations[r.name];
        if (r.status !== 'pass') return expected === undefined || expected === lib.BOUND_PASS;
        return r.category === lib.BOUND_PASS && expected === undefined;
      };
      expect(results.filter(regressed).map((r) => `${r.name} (${r.category}): ${r.reason}`)).toEqual([]);
    });

    it('lists only cases that exist, and reports listed cases that now pass', () => {
      const names = new Set(results.map((r) => r.name));
      expect(Object.keys(expectations).filter((n) => !names.has(n))).toEqual([]);
      const newPasses = results.filter((r) => r.status === 'pass' && expectations[r.name] !== undefined && expectations[r.name] !== r.category).map((r) => r.name);
      if (newPasses.length > 0) {
        process.stderr.write(`ONNX node tests now passing (remove them from onnx-node-expectations.json): ${newPasses.join(', ')}\n`);
      }
      const s = lib.summarize(results);
      process.stderr.write(`ONNX node tests: ${s.pass} of ${s.typed} cases with supported types pass, ${s.wrong} wrong\n`);
    });
  });
}
