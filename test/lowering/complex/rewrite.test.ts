/**
 * The complex rewrite on hand-built graphs: the node list it produces for the Llama rotary,
 * dim arguments shifted past the carrier's trailing 2 (negative dims included), symbolic
 * dims kept, complex128 refused or truncated, ops without a rule listed at once or kept for
 * fallback with adapters. Numerics: each rewritten graph, run by the interpreter on the
 * carriers of its complex inputs, matches the original graph run by the interpreter on the
 * complex inputs (its complex kernels are checked against PyTorch in test/kernels), or the
 * formulas where the interpreter has no complex kernel (exp, reciprocal); the lowered dynamic
 * Llama fixture matches the outputs PyTorch stored, at both of its sequence lengths.
 */
import * as path from 'node:path';

import '../../../lib/conversion/converters';
import { loadPt2 } from '../../../lib/frontends/pt2';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Value } from '../../../lib/ir/graph';
import type { DType } from '../../../lib/ir/dtype';
import { printGraph } from '../../../lib/ir/printer';
import { formatShape, sym } from '../../../lib/ir/symbolic';
import { verifyGraph } from '../../../lib/ir/verify';
import { interpret } from '../../../lib/interpreter';
import { isComplexValue, lowerComplex } from '../../../lib/lowering/complex';
import { partition } from '../../../lib/partitioning/partition';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { thrownError } from '../../helpers/errors';
import { loadFixture } from '../../helpers/fixtures';
import { Random } from '../../helpers/random';
import { bodyLines, builder, carrierOf, copyGraph, rotaryGraph } from './helpers';

const rng = new Random(6000);

/** No value of the graph is complex any more. */
function expectNoComplex(g: Graph): void {
  const left = g.nodes.flatMap((n) => n.outputs).filter(isComplexValue);
  expect(left.map((v) => v.name)).toEqual([]);
}

describe('the Llama rotary', () => {
  test('becomes views and trt.complex_mul on float32 carriers, names kept', () => {
    const g = rotaryGraph();
    const lowering = lowerComplex(g);
    expect(bodyLines(printGraph(g))).toEqual([
      '%reshape: float32[1, 8, 4, 8, 2] = aten.view.default(self=%xq, size=[1, 8, 4, 8, 2])',
      '%reshape_k: float32[1, 8, 2, 8, 2] = aten.view.default(self=%xk, size=[1, 8, 2, 8, 2])',
      '%freqs_view: float32[1, 8, 1, 8, 2] = aten.view.default(self=%freqs_cis, size=[1, 8, 1, 8, 2])',
      '%mul: float32[1, 8, 4, 8, 2] = trt.complex_mul(self=%reshape, other=%freqs_view)',
      '%mul_k: float32[1, 8, 2, 8, 2] = trt.complex_mul(self=%reshape_k, other=%freqs_view)',
      '%flatten: float32[1, 8, 4, 16] = aten.view.default(self=%mul, size=[1, 8, 4, 16])',
      '%flatten_k: float32[1, 8, 2, 16] = aten.view.default(self=%mul_k, size=[1, 8, 2, 16])',
      'return (%flatten, %flatten_k)',
    ]);
    expect(g.inputs.map((v) => `${v.name}: ${v.tensorType.dtype}[${v.tensorType.shape.join(', ')}]`)).toEqual([
      'freqs_cis: float32[8, 8, 2]',
      'xq: float32[1, 8, 4, 16]',
      'xk: float32[1, 8, 2, 16]',
    ]);
    expect(lowering.report.inputs).toEqual([{ index: 0, name: 'freqs_cis', dtype: 'complex64', carrier: 'float32' }]);
    expect(lowering.report.rewritten).toBe(7);
    expect(lowering.carrierShapes([{ dtype: 'complex64', shape: [8, 8] }, { dtype: 'float32', shape: [1, 8, 4, 16] }, { dtype: 'float32', shape: [1, 8, 2, 16] }])).toEqual([
      { dtype: 'float32', shape: [8, 8, 2] },
      { dtype: 'float32', shape: [1, 8, 4, 16] },
      { dtype: 'float32', shape: [1, 8, 2, 16] },
    ]);
  });

  test('computes what the complex graph computes', () => {
    const g = rotaryGraph({ layers: 2 });
    const inputs = g.inputs.map((v) => rng.tensor(v.tensorType.shape as number[], v.tensorType.dtype));
    const expected = interpret(g, inputs);
    lowerComplex(g);
    expectNoComplex(g);
    interpret(g, inputs.map(carrierOf)).forEach((t, i) => expectClose(t, expected[i]!, FP32, `output ${i}`));
  });

  test('symbolic dims stay symbolic and the rewritten graph runs at two sizes', () => {
    const g = rotaryGraph({ seq: sym('s0') });
    g.symbols.set('s0', { min: 2, max: 64 });
    const original = copyGraph(g);
    lowerComplex(g);
    expect(g.inputs[0]!.tensorType.shape).toEqual([sym('s0'), 8, 2]);
    expect(printGraph(g)).toContain('%mul: float32[1, s0, 4, 8, 2] = trt.complex_mul(self=%reshape, other=%freqs_view)');
    for (const seq of [3, 5]) {
      const inputs = [rng.tensor([seq, 8], 'complex64'), rng.tensor([1, seq, 4, 16]), rng.tensor([1, seq, 2, 16])];
      const expected = interpret(original, inputs);
      interpret(g, inputs.map(carrierOf)).forEach((t, i) => expectClose(t, expected[i]!, FP32, `seq ${seq} output ${i}`));
    }
  });
});

test('the dynamic Llama fixture (symbolic seq, sym_size of the complex input) matches PyTorch at both sizes after lowering', () => {
  const fixture = loadFixture('llama_rotary_complex_input_dynamic');
  const g = loadPt2(path.join(fixture.dir, fixture.files.pt2!));
  lowerComplex(g);
  expectNoComplex(g);
  expect(formatShape(g.inputs[1]!.tensorType.shape)).toBe('[s25, 8, 2]');
  expect(fixture.cases.length).toBe(2);
  for (const [i, c] of fixture.cases.entries()) {
    interpret(g, c.inputs.map(carrierOf)).forEach((t, j) => expectClose(t, c.outputs[j]!, FP32, `case ${i} output ${j}`));
  }
});

describe('dim arguments gain the trailing 2', () => {
  test('negative dims count one more from the end; sizes gain a 2; permutations keep it last', () => {
    const g = new Graph('dims');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [2, 3, 4]));
    const a = op('aten.slice.Tensor', { self: z, dim: -1, start: 1, end: 4, step: 2 }, 'sl');
    const b = op('aten.transpose.int', { self: a, dim0: -1, dim1: 0 }, 'tr');
    const c = op('aten.unsqueeze.default', { self: b, dim: -1 }, 'us');
    const d = op('aten.permute.default', { self: c, dims: [3, 0, -2, 1] }, 'pm');
    const e = op('aten.view.default', { self: d, size: [1, -1] }, 'vw');
    const f = op('aten.cat.default', { tensors: [e, e], dim: -1 }, 'ct');
    const h = op('aten.select.int', { self: f, dim: 0, index: 0 }, 'se');
    const s = op('aten.sum.dim_IntList', { self: z, dim: [-1, 0], keepdim: false, dtype: null }, 'sm');
    const n = call1(g, 'aten.sym_size.int', { self: z, dim: -2 }, 'sz');
    g.setOutputs([h, s, n]);
    const inputs = [rng.tensor([2, 3, 4], 'complex64')];
    const expected = interpret(g, inputs);
    lowerComplex(g);
    expect(bodyLines(printGraph(g))).toEqual([
      '%sl: float32[2, 3, 2, 2] = aten.slice.Tensor(self=%z, dim=-2, start=1, end=4, step=2)',
      '%tr: float32[2, 3, 2, 2] = aten.transpose.int(self=%sl, dim0=-2, dim1=0)',
      '%us: float32[2, 3, 2, 1, 2] = aten.unsqueeze.default(self=%tr, dim=-2)',
      '%pm: float32[1, 2, 2, 3, 2] = aten.permute.default(self=%us, dims=[3, 0, 2, 1, 4])',
      '%vw: float32[1, 12, 2] = aten.view.default(self=%pm, size=[1, -1, 2])',
      '%ct: float32[1, 24, 2] = aten.cat.default(tensors=[%vw, %vw], dim=-2)',
      '%se: float32[24, 2] = aten.select.int(self=%ct, dim=0, index=0)',
      '%sm: float32[3, 2] = aten.sum.dim_IntList(self=%z, dim=[-2, 0], keepdim=false, dtype=null)',
      '%sz: SymInt(3) = aten.sym_size.int(self=%z, dim=-3)',
      'return (%se, %sm, %sz)',
    ]);
    const actual = interpret(g, inputs.map(carrierOf));
    expectClose(actual[0]!, carrierOf(expected[0]!), FP32, 'select');
    expectClose(actual[1]!, carrierOf(expected[1]!), FP32, 'sum');
    expect(actual[2]!.toArray()).toEqual(expected[2]!.toArray());
  });
});

function call1(g: Graph, target: string, args: Record<string, Arg>, name: string): Value {
  return builder(g)(target, args, name);
}

// ---------------------------------------------------------------------------------------
// Every rule against the complex graph it replaces.

interface Case {
  name: string;
  inputs: Array<[DType, number[]]>;
  build: (op: ReturnType<typeof builder>, xs: Value[], graph: Graph) => Value | Value[];
  /** Values for the inputs (default: uniform in [-1, 1)). */
  values?: (i: number, shape: number[], dtype: DType) => Tensor;
  truncateDouble?: boolean;
  /** Expected outputs computed directly (for ops the interpreter has no complex kernel for). */
  oracle?: (inputs: Tensor[]) => Tensor[];
}

const c64 = (shape: number[]): [DType, number[]] => ['complex64', shape];
const f32 = (shape: number[]): [DType, number[]] => ['float32', shape];

const CASES: Case[] = [
  { name: 'view_as_complex / view_as_real', inputs: [f32([3, 2])], build: (op, [x]) => op('aten.view_as_real.default', { self: op('aten.view_as_complex.default', { self: x! }) }) },
  { name: 'real, imag', inputs: [c64([2, 3])], build: (op, [z]) => [op('aten.real.default', { self: z! }), op('aten.imag.default', { self: z! })] },
  { name: 'abs', inputs: [c64([2, 3])], build: (op, [z]) => op('aten.abs.default', { self: z! }) },
  {
    name: 'angle in all four quadrants and on the axes',
    inputs: [c64([8])],
    values: () => Tensor.from('complex64', [8], [1, 1, -1, 1, -1, -1, 1, -1, -2, 0, 0, 3, 0, -3, 2, 0]),
    build: (op, [z]) => op('aten.angle.default', { self: z! }),
  },
  { name: 'conj (_conj, conj_physical)', inputs: [c64([4])], build: (op, [z]) => [op('aten._conj.default', { self: z! }), op('aten.conj_physical.default', { self: z! })] },
  { name: 'polar', inputs: [f32([2, 3]), f32([3])], build: (op, [r, t]) => op('aten.polar.default', { abs: r!, angle: t! }) },
  { name: 'mul complex × complex, broadcasting', inputs: [c64([2, 1, 3]), c64([4, 1])], build: (op, [a, b]) => op('aten.mul.Tensor', { self: a!, other: b! }) },
  { name: 'mul complex × real tensor and real × complex', inputs: [c64([2, 3]), f32([3])], build: (op, [a, b]) => [op('aten.mul.Tensor', { self: a!, other: b! }), op('aten.mul.Tensor', { self: b!, other: a! })] },
  { name: 'mul by a real 0-d tensor and by a Scalar', inputs: [c64([2, 3]), f32([])], build: (op, [a, b]) => [op('aten.mul.Tensor', { self: a!, other: b! }), op('aten.mul.Scalar', { self: a!, other: 2.5 })] },
  {
    name: 'add / sub / rsub of tensors (complex and real), with alpha',
    inputs: [c64([2, 3]), c64([3]), f32([2, 3])],
    build: (op, [a, b, r]) => [
      op('aten.add.Tensor', { self: a!, other: b!, alpha: 2 }),
      op('aten.sub.Tensor', { self: a!, other: r!, alpha: 1 }),
      op('aten.sub.Tensor', { self: r!, other: a!, alpha: 0.5 }),
      op('aten.rsub.Tensor', { self: a!, other: b!, alpha: 3 }),
    ],
  },
  {
    name: 'add / sub / rsub with a Scalar',
    inputs: [c64([2, 3])],
    build: (op, [a]) => [
      op('aten.add.Scalar', { self: a!, other: 1.5, alpha: 2 }),
      op('aten.sub.Scalar', { self: a!, other: 0.25, alpha: 1 }),
      op('aten.rsub.Scalar', { self: a!, other: 2, alpha: 3 }),
    ],
  },
  {
    name: 'div complex / complex, complex / real, real / complex, by a Scalar, reciprocal',
    inputs: [c64([2, 3]), c64([3]), f32([2, 3])],
    values: (i, shape, dtype) => (i === 2 ? Tensor.from(dtype, shape, rng.floats(6, 0.5, 2)) : rng.tensor(shape, dtype)),
    build: (op, [a, b, r]) => [
      op('aten.div.Tensor', { self: a!, other: b! }),
      op('aten.div.Tensor', { self: a!, other: r! }),
      op('aten.div.Tensor', { self: r!, other: a! }),
      op('aten.div.Scalar', { self: a!, other: 4 }),
      op('aten.div.Tensor_mode', { self: a!, other: b!, rounding_mode: null }),
    ],
  },
  { name: 'neg', inputs: [c64([2, 3])], build: (op, [a]) => op('aten.neg.default', { self: a! }) },
  {
    // The interpreter has no complex exp or reciprocal: the expected values come from the formulas.
    name: 'exp, reciprocal',
    inputs: [c64([2, 3])],
    build: (op, [a]) => [op('aten.exp.default', { self: a! }), op('aten.reciprocal.default', { self: a! })],
    oracle: ([z]) => {
      const v = z!.toArray();
      const exp: number[] = [];
      const rec: number[] = [];
      for (let k = 0; k < v.length; k += 2) {
        const [a, b] = [v[k]!, v[k + 1]!];
        exp.push(Math.exp(a) * Math.cos(b), Math.exp(a) * Math.sin(b));
        rec.push(a / (a * a + b * b), -b / (a * a + b * b));
      }
      return [Tensor.from('complex64', z!.shape, exp), Tensor.from('complex64', z!.shape, rec)];
    },
  },
  {
    name: 'matmul (2-D and 1-D), mm, bmm',
    inputs: [c64([2, 3]), c64([3, 4]), c64([2, 2, 3]), c64([2, 3, 2]), c64([3])],
    build: (op, [a, b, p, q, v]) => [
      op('aten.matmul.default', { self: a!, other: b! }),
      op('aten.mm.default', { self: a!, mat2: b! }),
      op('aten.bmm.default', { self: p!, mat2: q! }),
      op('aten.matmul.default', { self: a!, other: v! }),
    ],
  },
  {
    name: 'sum and mean over dims and over everything',
    inputs: [c64([2, 3, 4])],
    build: (op, [a]) => [
      op('aten.sum.dim_IntList', { self: a!, dim: [-1], keepdim: true, dtype: null }),
      op('aten.sum.dim_IntList', { self: a!, dim: null, keepdim: false, dtype: null }),
      op('aten.sum.default', { self: a!, dtype: null }),
      op('aten.mean.dim', { self: a!, dim: [0, -2], keepdim: false, dtype: null }),
      op('aten.mean.default', { self: a!, dtype: null }),
    ],
  },
  {
    name: 'eq / ne',
    inputs: [c64([4]), c64([4])],
    values: (i) => Tensor.from('complex64', [4], i === 0 ? [1, 2, 3, 4, 5, 6, 2, 0] : [1, 2, 3, 5, 0, 6, 2, 0]),
    build: (op, [a, b]) => [op('aten.eq.Tensor', { self: a!, other: b! }), op('aten.ne.Tensor', { self: a!, other: b! }), op('aten.eq.Scalar', { self: a!, other: 2 }), op('aten.ne.Scalar', { self: b!, other: 2 })],
  },
  {
    name: 'where and masked_fill',
    inputs: [['bool', [2, 3]], c64([2, 3]), c64([3]), f32([2, 3])],
    values: (i, shape, dtype) => (dtype === 'bool' ? Tensor.from('bool', shape, [1, 0, 0, 1, 1, 0]) : rng.tensor(shape, dtype)),
    build: (op, [m, a, b, r]) => [
      op('aten.where.self', { condition: m!, self: a!, other: b! }),
      op('aten.where.self', { condition: m!, self: r!, other: a! }),
      op('aten.where.ScalarOther', { condition: m!, self: a!, other: 3 }),
      op('aten.masked_fill.Scalar', { self: a!, mask: m!, value: -1 }),
    ],
  },
  {
    name: 'casts: complex64 ↔ complex128 (carried as float64), complex → real parts / bool, real → complex',
    inputs: [c64([2, 3]), f32([2, 3])],
    values: (i, shape, dtype) => (i === 0 ? Tensor.from(dtype, shape, [1, 2, 0, 0, 0, -1, 3, 0, 0.5, 0.5, -2, 1]) : rng.tensor(shape, dtype)),
    build: (op, [a, r]) => {
      const wide = op('aten._to_copy.default', { self: a!, dtype: 'complex128' });
      return [
        op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: wide, other: wide }) }),
        op('aten._to_copy.default', { self: a!, dtype: 'float32' }),
        op('aten._to_copy.default', { self: a!, dtype: 'bool' }),
        op('aten.to.dtype', { self: r!, dtype: 'complex64' }),
        op('aten.type_as.default', { self: r!, other: a! }),
        op('aten.clone.default', { self: a! }),
      ];
    },
  },
  {
    name: 'views and reshapes',
    inputs: [c64([2, 3, 4])],
    build: (op, [a]) => [
      op('aten.reshape.default', { self: a!, shape: [4, -1] }),
      op('aten._unsafe_view.default', { self: a!, size: [6, 4] }),
      op('aten.expand.default', { self: op('aten.unsqueeze.default', { self: a!, dim: 0 }), size: [3, -1, -1, -1] }),
      op('aten.repeat.default', { self: a!, repeats: [1, 2, 1] }),
      op('aten.t.default', { self: op('aten.select.int', { self: a!, dim: 0, index: 1 }) }),
      op('aten.flatten.using_ints', { self: a!, start_dim: 1, end_dim: -1 }),
      op('aten.unflatten.int', { self: a!, dim: -1, sizes: [2, 2] }),
      op('aten.squeeze.default', { self: op('aten.unsqueeze.default', { self: a!, dim: -1 }) }),
      op('aten.squeeze.dim', { self: op('aten.unsqueeze.default', { self: a!, dim: -1 }), dim: -1 }),
      op('aten.squeeze.dims', { self: op('aten.unsqueeze.default', { self: a!, dim: 1 }), dim: [1, -4] }),
    ],
  },
  {
    name: 'slices, gathers, flips, pads',
    inputs: [c64([3, 4]), ['int64', [2]]],
    values: (i, shape, dtype) => (dtype === 'int64' ? Tensor.from('int64', shape, [2, 0]) : rng.tensor(shape, dtype)),
    build: (op, [a, idx]) => [
      op('aten.slice.Tensor', { self: a!, dim: -1, start: 1, end: null, step: 2 }),
      op('aten.narrow.default', { self: a!, dim: -2, start: 1, length: 2 }),
      op('aten.index_select.default', { self: a!, dim: -1, index: idx! }),
      op('aten.index.Tensor', { self: a!, indices: [null, idx!] }),
      op('aten.flip.default', { self: a!, dims: [-1, 0] }),
      op('aten.roll.default', { self: a!, shifts: [1], dims: [-1] }),
      op('aten.constant_pad_nd.default', { self: a!, pad: [1, 2], value: 0 }),
    ],
  },
  {
    name: 'cumsum, tril, triu',
    inputs: [c64([2, 3, 4])],
    build: (op, [a]) => [
      op('aten.cumsum.default', { self: a!, dim: -1, dtype: null }),
      op('aten.tril.default', { self: a!, diagonal: 0 }),
      op('aten.triu.default', { self: a!, diagonal: 1 }),
    ],
  },
  {
    name: 'joins and splits',
    inputs: [c64([2, 4]), f32([2, 4])],
    build: (op, [a, r], g) => {
      const parts = (target: string, args: Record<string, Arg>): Value[] => builderNode(g, target, args);
      return [
        op('aten.cat.default', { tensors: [a!, r!], dim: -1 }),
        op('aten.stack.default', { tensors: [a!, a!], dim: -1 }),
        ...parts('aten.split.Tensor', { self: a!, split_size: 3, dim: -1 }),
        ...parts('aten.split_with_sizes.default', { self: a!, split_sizes: [1, 3], dim: 1 }),
        ...parts('aten.chunk.default', { self: a!, chunks: 2, dim: 0 }),
        ...parts('aten.unbind.int', { self: a!, dim: -1 }),
      ];
    },
  },
  {
    name: 'where with a Scalar self, masked_fill with a 0-d complex or real tensor value',
    inputs: [['bool', [2, 3]], c64([2, 3]), c64([]), f32([])],
    values: (i, shape, dtype) => (dtype === 'bool' ? Tensor.from('bool', shape, [0, 1, 1, 0, 1, 0]) : rng.tensor(shape, dtype)),
    build: (op, [m, a, v, r]) => [
      op('aten.where.ScalarSelf', { condition: m!, self: -2, other: a! }),
      op('aten.masked_fill.Tensor', { self: a!, mask: m!, value: v! }),
      op('aten.masked_fill.Tensor', { self: a!, mask: m!, value: r! }),
    ],
  },
  {
    name: 'rank corners: sum of a 0-d value and over an empty dim list, t of a vector, flatten of a 0-d value',
    inputs: [c64([]), c64([2, 3]), c64([4])],
    build: (op, [z, a, v]) => [
      op('aten.sum.dim_IntList', { self: z!, dim: null, keepdim: false, dtype: null }),
      op('aten.sum.dim_IntList', { self: a!, dim: [], keepdim: true, dtype: null }),
      op('aten.mean.dim', { self: a!, dim: [], keepdim: false, dtype: null }),
      op('aten.t.default', { self: v! }),
      op('aten.flatten.using_ints', { self: z!, start_dim: 0, end_dim: -1 }),
    ],
  },
  {
    // 0.1 as float32 is 0.10000000149...: equal to the float64 0.1 only if compared in float32.
    name: 'eq / ne of complex64 with float64 compare in float64 (complex128 promotion)',
    inputs: [c64([3]), ['float64', [3]]],
    values: (i) => (i === 0 ? Tensor.from('complex64', [3], [0.1, 0, 0.5, 0, 2, 1]) : Tensor.from('float64', [3], [0.1, 0.5, 2])),
    build: (op, [a, d]) => [op('aten.eq.Tensor', { self: a!, other: d! }), op('aten.ne.Tensor', { self: d!, other: a! })],
    oracle: () => [Tensor.from('bool', [3], [0, 1, 0]), Tensor.from('bool', [3], [1, 0, 1])],
  },
  {
    name: 'the real part cast to float64 and to int32',
    inputs: [c64([2, 3])],
    values: (i, shape) => Tensor.from('complex64', shape, [1.5, 2, -3.25, 0, 0.5, 0.5, 7, 1, -1, 1, 4.75, -2]),
    build: (op, [a]) => [op('aten._to_copy.default', { self: a!, dtype: 'float64' }), op('aten._to_copy.default', { self: a!, dtype: 'int32' })],
  },
  {
    name: 'complex128 inside the graph with truncateDouble (carried as float32)',
    inputs: [c64([3]), ['float64', [3]]],
    truncateDouble: true,
    build: (op, [a, d]) => [op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: a!, other: d! }) }), op('aten.abs.default', { self: op('aten.add.Tensor', { self: a!, other: d!, alpha: 1 }) })],
  },
];

/** All outputs of a multi-output node (split, chunk...). */
function builderNode(g: Graph, target: string, args: Record<string, Arg>): Value[] {
  return call(g, target, args).outputs;
}

describe.each(CASES)('$name', (c) => {
  test('rewritten graph matches the complex graph', () => {
    const g = new Graph(c.name.replace(/\W+/g, '_'));
    const xs = c.inputs.map(([dtype, shape], i) => g.addInput(`x${i}`, tensorType(dtype, shape)));
    const outs = c.build(builder(g), xs, g);
    g.setOutputs(Array.isArray(outs) ? outs : [outs]);
    const inputs = c.inputs.map(([dtype, shape], i) => (c.values ? c.values(i, shape, dtype) : dtype === 'int64' ? rng.intTensor(shape, 0, shape[0]! - 1) : rng.tensor(shape, dtype)));
    const expected = c.oracle ? c.oracle(inputs) : interpret(g, inputs);
    const lowering = lowerComplex(g, { truncateDouble: c.truncateDouble });
    verifyGraph(g);
    expectNoComplex(g);
    expect(lowering.report.fallback).toEqual([]);
    const actual = interpret(g, inputs.map(carrierOf));
    expected.forEach((e, i) => {
      const want = carrierOf(e);
      const got = actual[i]!;
      // Truncated complex128 outputs come back as float32 carriers.
      expectClose(got.dtype === want.dtype ? got : new Tensor(want.dtype, got.shape, Float64Array.from(got.data as Float32Array)), want, { rtol: 1e-5, atol: 1e-6 }, `output ${i}`);
    });
  });
});

// ---------------------------------------------------------------------------------------
// complex128 data and ops without a rule.

describe('complex128 inputs and constants', () => {
  function wideGraph(): Graph {
    const g = new Graph('wide');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex128', [3]));
    const k = g.addConstant('k', Tensor.from('complex128', [3], [1, 0, 0, 1, -1, 0.5]), 'buffer');
    g.setOutputs([op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: z, other: k }) })]);
    return g;
  }

  test('without truncateDouble: E_COMPLEX128 naming the input and the buffer, the graph unchanged', () => {
    const g = wideGraph();
    const before = printGraph(g);
    const e = thrownError(() => lowerComplex(g));
    expect(e.code).toBe('E_COMPLEX128');
    expect(e.message).toContain('input "z" complex128[3]');
    expect(e.message).toContain('buffer "k" complex128[3]');
    expect(e.message).toContain('truncateDouble');
    expect(printGraph(g)).toBe(before);
  });

  test('with truncateDouble: float32 carriers, results within float32 rounding', () => {
    const g = wideGraph();
    const z = Tensor.from('complex128', [3], [0.5, -1, 2, 0.25, 1 / 3, 3]);
    const [expected] = interpret(g, [z]);
    const lowering = lowerComplex(g, { truncateDouble: true });
    expect(g.inputs[0]!.tensorType).toEqual(tensorType('float32', [3, 2]));
    expect(lowering.report.constants).toEqual(['k']);
    expect(g.nodes.find((n) => n.name === 'k')!.tensor!.dtype).toBe('float32');
    const [actual] = interpret(g, [new Tensor('float32', [3, 2], Float32Array.from(z.data as Float64Array))]);
    expect(actual!.dtype).toBe('float64'); // view_as_real of complex128 is float64; TensorRT computes it in float32
    expectClose(actual!, expected!, FP32);
  });
});

describe('ops without a rule', () => {
  function unsupported(): Graph {
    const g = new Graph('unsupported');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [4]));
    const s = op('aten.sqrt.default', { self: op('aten.mul.Tensor', { self: z, other: z }, 'sq') }, 'root');
    const l = op('aten.log.default', { self: s }, 'lg');
    const m = op('aten.mul.Tensor', { self: l, other: z }, 'again');
    g.setOutputs([op('aten.view_as_real.default', { self: m }, 'out'), op('aten.abs.default', { self: op('aten.sin.default', { self: z }, 'sn') }, 'mag')]);
    return g;
  }

  /** Ops without a rule that the interpreter can run on complex values (complex products). */
  function interpretable(): Graph {
    const g = new Graph('products');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [2, 3]));
    const p = op('aten.prod.dim_int', { self: op('aten.mul.Tensor', { self: z, other: z }, 'sq'), dim: 1, keepdim: true, dtype: null }, 'rows');
    const q = op('aten.prod.dim_int', { self: p, dim: 0, keepdim: false, dtype: null }, 'all');
    const m = op('aten.mul.Tensor', { self: q, other: z }, 'again');
    g.setOutputs([op('aten.view_as_real.default', { self: m }, 'out'), op('aten.abs.default', { self: op('aten.prod.default', { self: z, dtype: null }, 'whole') }, 'mag')]);
    return g;
  }

  test('are listed in one E_UNSUPPORTED_OP, nothing rewritten', () => {
    const g = unsupported();
    const e = thrownError(() => lowerComplex(g));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/^3 op\(s\) on complex values/);
    for (const what of ['node root (aten.sqrt.default)', 'node lg (aten.log.default)', 'node sn (aten.sin.default)', 'complexFallback: true']) expect(e.message).toContain(what);
    expect((e.details.ops as Array<{ node: string }>).map((o) => o.node)).toEqual(['root', 'lg', 'sn']);
    expect(g.inputs[0]!.tensorType.dtype).toBe('complex64');
  });

  test('with fallback: kept complex between view_as_complex / view_as_real adapters, the rest rewritten; the partitioner sends exactly those to fallback', () => {
    const g = interpretable();
    const z = rng.tensor([2, 3], 'complex64');
    const expected = interpret(g, [z]);
    const lowering = lowerComplex(g, { fallback: true });
    expect(lowering.report.fallback.map((f) => f.node)).toEqual(['rows', 'all', 'whole']);
    expect(bodyLines(printGraph(g))).toEqual([
      '%sq: float32[2, 3, 2] = trt.complex_mul(self=%z, other=%z)',
      '%sq_complex: complex64[2, 3] = aten.view_as_complex.default(self=%sq)',
      '%rows: complex64[2, 1] = aten.prod.dim_int(self=%sq_complex, dim=1, keepdim=true, dtype=null)',
      '%all: complex64[1] = aten.prod.dim_int(self=%rows, dim=0, keepdim=false, dtype=null)',
      '%all_carrier: float32[1, 2] = aten.view_as_real.default(self=%all)',
      '%again: float32[2, 3, 2] = trt.complex_mul(self=%all_carrier, other=%z)',
      '%z_complex: complex64[2, 3] = aten.view_as_complex.default(self=%z)',
      '%whole: complex64[] = aten.prod.default(self=%z_complex, dtype=null)',
      '%whole_carrier: float32[2] = aten.view_as_real.default(self=%whole)',
      '%mag_sq: float32[2] = aten.mul.Tensor(self=%whole_carrier, other=%whole_carrier)',
      '%mag_norm2: float32[] = aten.sum.dim_IntList(self=%mag_sq, dim=[-1], keepdim=false, dtype=null)',
      '%mag: float32[] = aten.sqrt.default(self=%mag_norm2)',
      'return (out=%again, %mag)',
    ]);
    const actual = interpret(g, [carrierOf(z)]);
    expectClose(actual[0]!, expected[0]!, FP32, 'out');
    expectClose(actual[1]!, expected[1]!, FP32, 'mag');
    const { report } = partition(g, { minBlockSize: 1 });
    const fallback = report.ops.filter((o) => !o.converted).map((o) => o.node);
    expect(fallback).toEqual(['sq_complex', 'rows', 'all', 'all_carrier', 'z_complex', 'whole', 'whole_carrier']);
  });
});
