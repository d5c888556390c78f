/**
 * A program's complex boundary: complex128 inputs (refused without truncateDouble, correct
 * within float32 tolerance with it, against the rotary_only PyTorch outputs), complex
 * outputs rebuilt from their carriers, complex inputs converted without copying, ops without
 * a rewrite rule refused or run in fallback segments (complexFallback). Expected complex
 * values are computed here from the formulas, not by the interpreter.
 */
import * as path from 'node:path';

import { compile, dryRun } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import { fromCarrier, toCarrier } from '../../lib/runtime/complex-io';
import type { ProgramIO } from '../../lib/runtime/segments';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { loadFixture } from '../helpers/fixtures';
import { Random } from '../helpers/random';
import { rotaryGraph } from '../lowering/complex/helpers';

const rng = new Random(6128);

const asFloat32 = (t: Tensor): Tensor => (t.dtype === 'float32' ? t : new Tensor('float32', t.shape, Float32Array.from(t.data as Float64Array)));

describe('complex128 inputs (rotary_only with freqs_cis widened to complex128)', () => {
  const fixture = loadFixture('rotary_only');
  const [xq, xk, freqs] = fixture.cases[0]!.inputs;
  const wide = new Tensor('complex128', freqs!.shape, Float64Array.from(freqs!.data as Float32Array));
  const graph = (): Graph => rotaryGraph({ seq: 8, heads: 4, kvHeads: 2, headDim: 16, freqsDType: 'complex128' });

  test('without truncateDouble: E_COMPLEX128 naming the input', async () => {
    const e = await rejection(compile(graph(), { backend: 'reference' }));
    expect(e.code).toBe('E_COMPLEX128');
    expect(e.message).toContain('input "freqs_cis" complex128[8, 8]');
  });

  test('with truncateDouble: one engine segment, float32 carriers, PyTorch outputs within float32 tolerance', async () => {
    const program = await compile(graph(), { backend: 'reference', truncateDouble: true });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      expect(program.inputs[0]).toMatchObject({ name: 'freqs_cis', dtype: 'complex128', shape: [8, 8], complex: { carrier: 'float32' } });
      const [q, k] = await program.run([wide, xq!, xk!]);
      // view_as_real of complex128 is float64 in the graph; the engine segment computed it in float32 (and, as for
      // any float64 output under truncateDouble, the program returns the engine's float32).
      expectClose(asFloat32(q!), fixture.cases[0]!.outputs[0]!, FP32, 'xq rotated');
      expectClose(asFloat32(k!), fixture.cases[0]!.outputs[1]!, FP32, 'xk rotated');
    } finally {
      await program.dispose();
    }
  }, 60_000);
});

describe('complex outputs', () => {
  function graph(): Graph {
    const g = new Graph('complex_out');
    const z = g.addInput('z', tensorType('complex64', [3]));
    const w = g.addInput('w', tensorType('complex64', [2, 3]));
    const op = (target: string, args: Record<string, unknown>): Value => call(g, target, args as never).output;
    const product = op('aten.mul.Tensor', { self: z, other: w });
    const sum = op('aten._to_copy.default', { self: op('aten.add.Tensor', { self: product, other: z, alpha: 1 }), dtype: 'complex128' });
    g.setOutputs([product, sum, z], ['product', 'sum', 'same']);
    return g;
  }

  test('are rebuilt from their carriers (complex128 from float32 with truncateDouble); a passed-through input comes back', async () => {
    const program = await compile(graph(), { backend: 'reference', minBlockSize: 1, truncateDouble: true });
    try {
      expect(program.report.ops.every((o) => o.converted)).toBe(true);
      expect(String(program)).toBe('Program(z: complex64[3], w: complex64[2, 3]) -> (product: complex64[2, 3], sum: complex128[2, 3], same: complex64[3]) [engine(reference)]');
      const z = rng.tensor([3], 'complex64');
      const w = rng.tensor([2, 3], 'complex64');
      const [product, sum, same] = await program.run({ z, w });
      const zv = z.toArray();
      const wv = w.toArray();
      const p: number[] = [];
      const s: number[] = [];
      for (let k = 0; k < 6; k++) {
        const [a, b, c, d] = [zv[2 * (k % 3)]!, zv[2 * (k % 3) + 1]!, wv[2 * k]!, wv[2 * k + 1]!];
        p.push(a * c - b * d, a * d + b * c);
        s.push(a * c - b * d + a, a * d + b * c + b);
      }
      expectClose(product!, Tensor.from('complex64', [2, 3], p), FP32, 'product');
      expectClose(sum!, Tensor.from('complex128', [2, 3], s), FP32, 'sum');
      expectClose(same!, z, FP32, 'same');
    } finally {
      await program.dispose();
    }
  }, 60_000);

  test('run inputs are checked against the complex signature', async () => {
    const program = await compile(graph(), { backend: 'reference', minBlockSize: 1, truncateDouble: true });
    try {
      const e = await rejection(program.run([rng.tensor([3, 2]), rng.tensor([2, 3], 'complex64')]));
      expect(e.code).toBe('E_BAD_INPUT');
      expect(e.message).toContain('input "z" must be complex64');
    } finally {
      await program.dispose();
    }
  }, 60_000);
});

test('the boundary adapters: complex64 ↔ float32 carriers share the data; complex128 is copied into float32', () => {
  const io: ProgramIO = { name: 'z', value: 'z', dtype: 'complex64', shape: [2], complex: { carrier: 'float32' } };
  const z = Tensor.from('complex64', [2], [1, 2, 3, 4]);
  const c = toCarrier(io, z);
  expect(c.dtype).toBe('float32');
  expect([...c.shape]).toEqual([2, 2]);
  expect(c.data).toBe(z.data);
  expect(fromCarrier(io, c).data).toBe(z.data);
  const wideIO: ProgramIO = { ...io, dtype: 'complex128' };
  const w = toCarrier(wideIO, Tensor.from('complex128', [2], [0.1, 2, 3, 4]));
  expect(w.data).toBeInstanceOf(Float32Array);
  expect(w.toArray()).toEqual([Math.fround(0.1), 2, 3, 4]);
  expect(fromCarrier(wideIO, w).dtype).toBe('complex128');
  const plain: ProgramIO = { name: 'x', value: 'x', dtype: 'float32', shape: [1] };
  const x = Tensor.from('float32', [1], [5]);
  expect(toCarrier(plain, x)).toBe(x);
});

describe('ops without a rewrite rule', () => {
  function graph(): Graph {
    const g = new Graph('products');
    const z = g.addInput('z', tensorType('complex64', [2, 3]));
    const op = (target: string, args: Record<string, unknown>): Value => call(g, target, args as never).output;
    const rows = op('aten.prod.dim_int', { self: op('aten.mul.Tensor', { self: z, other: z }), dim: 1, keepdim: true, dtype: null });
    g.setOutputs([op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: rows, other: z }) })]);
    return g;
  }

  test('fail compile() listing them, or run in a fallback segment with complexFallback', async () => {
    const e = await rejection(compile(graph(), { backend: 'reference' }));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toContain('(aten.prod.dim_int): no rule rewrites aten.prod.dim_int on complex values');
    const program = await compile(graph(), { backend: 'reference', complexFallback: true, minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
      const z = rng.tensor([2, 3], 'complex64');
      const [out] = await program.run([z]);
      // rows[i] = Π_j z[i,j]²; out[i,j] = rows[i]·z[i,j] (as [re, im] pairs).
      const v = z.toArray();
      const expected: number[] = [];
      for (let i = 0; i < 2; i++) {
        let [pr, pi] = [1, 0];
        for (let j = 0; j < 3; j++) {
          const [a, b] = [v[2 * (3 * i + j)]!, v[2 * (3 * i + j) + 1]!];
          const [sr, si] = [a * a - b * b, 2 * a * b];
          [pr, pi] = [pr * sr - pi * si, pr * si + pi * sr];
        }
        for (let j = 0; j < 3; j++) {
          const [a, b] = [v[2 * (3 * i + j)]!, v[2 * (3 * i + j) + 1]!];
          expected.push(pr * a - pi * b, pr * b + pi * a);
        }
      }
      expectClose(out!, Tensor.from('float32', [2, 3, 2], expected), FP32);
    } finally {
      await program.dispose();
    }
  }, 60_000);
});

test('dryRun reports the rotary fixture as one engine segment', async () => {
  const fixture = loadFixture('llama_rotary_complex_input');
  const report = await dryRun(path.join(fixture.dir, fixture.files.pt2!), { inputs: fixture.cases[0]!.inputs.map((t) => ({ shape: [...t.shape] })) });
  expect(report.segments.map((s) => s.kind)).toEqual(['engine']);
  expect(report.ops.every((o) => o.converted)).toBe(true);
});
