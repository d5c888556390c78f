/**
 * The fixture loader refuses a fixture that cannot discriminate: one whose outputs are so
 * small against the comparison tolerance that a zero or sign-flipped result would pass (the
 * old mobilenet_v3_small fixture had outputs of 1.5e-9 under atol 1e-5).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from './compare';
import { DISCRIMINATION, loadFixture, loadFixtureFrom, ONNX_FIXTURES, PT2_FIXTURES } from './fixtures';

function writeFixture(outputs: number[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixture-'));
  fs.writeFileSync(path.join(dir, 'input0.bin'), Buffer.from(new Float32Array([1, 2]).buffer));
  fs.writeFileSync(path.join(dir, 'output0.bin'), Buffer.from(new Float32Array(outputs).buffer));
  const meta = {
    inputs: [{ file: 'input0.bin', dtype: 'float32', shape: [2] }],
    outputs: [{ file: 'output0.bin', dtype: 'float32', shape: [outputs.length] }],
    files: {},
  };
  fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(meta));
  return dir;
}

describe('loadFixture', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const fixture = (outputs: number[]): string => {
    const d = writeFixture(outputs);
    dirs.push(d);
    return d;
  };

  test('refuses outputs below 1000 × atol, naming the fixture, the case and the output', () => {
    const dir = fixture([1.5e-9, -1.2e-9, 0]);
    expect(() => loadFixtureFrom(dir)).toThrow(
      new RegExp(`fixture ${path.basename(dir)} case 0 output 0: largest \\|output\\| 1\\.50e-9 is below ${DISCRIMINATION} × atol 0\\.00001`),
    );
  });

  test('the bound is inclusive and scales with the tolerance used', () => {
    const dir = fixture([0, -0.5]);
    expect(loadFixtureFrom(dir, { rtol: 0, atol: 0.5 / DISCRIMINATION }).cases[0]!.outputs[0]!.shape).toEqual([2]);
    expect(() => loadFixtureFrom(dir, { rtol: 0, atol: 0.501 / DISCRIMINATION })).toThrow(/below 1000 × atol/);
  });

  test('a NaN output does not count as large', () => {
    expect(() => loadFixtureFrom(fixture([Number.NaN, 1e-9]))).toThrow(/largest \|output\|/);
  });

  test('every stored fixture discriminates at the fp32 tolerance', () => {
    for (const name of new Set([...ONNX_FIXTURES, ...PT2_FIXTURES])) expect(loadFixture(name).cases.length).toBeGreaterThan(0);
  });

  test('mobilenet_v3_small has both sizes and O(1) outputs: an all-zero answer fails', () => {
    const { cases } = loadFixture('mobilenet_v3_small');
    expect(cases.map((c) => c.inputs[0]!.shape)).toEqual([
      [2, 3, 96, 96],
      [5, 3, 96, 96],
    ]);
    for (const c of cases) {
      const out = c.outputs[0]!;
      expect(() => expectClose(new Tensor(out.dtype, out.shape), out, FP32)).toThrow(/expected/);
      const flipped = new Tensor(out.dtype, out.shape, (out.data as Float32Array).map((x) => -x));
      expect(() => expectClose(flipped, out, FP32)).toThrow(/expected/);
    }
  });
});
