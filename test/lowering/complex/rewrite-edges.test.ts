/**
 * Corners of the complex rewrite that rewrite.test.ts does not reach: fallback adapters around
 * complex128 ops carried as float32 (casts both ways), complex128 carriers of computed
 * outputs, the texts of the E_COMPLEX128 and E_UNSUPPORTED_OP errors (sources, details).
 * Numerics are compared with the interpreter on the complex graph.
 */
import '../../../lib/ir/ops';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType } from '../../../lib/ir/graph';
import { printGraph } from '../../../lib/ir/printer';
import { interpret } from '../../../lib/interpreter';
import { lowerComplex } from '../../../lib/lowering/complex';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { thrownError } from '../../helpers/errors';
import { bodyLines, builder, carrierOf } from './helpers';

const Z = Tensor.from('complex64', [2, 3], [1, 0.5, -1, 2, 0.5, 0.25, 2, -1, 1, 1, -0.5, 3]);

test('a complex128 op kept for fallback under truncateDouble: float32 carriers cast to float64 into it and back', () => {
  const g = new Graph('wide_fallback');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const wide = op('aten._to_copy.default', { self: z, dtype: 'complex128' }, 'wide');
  const rows = op('aten.prod.dim_int', { self: wide, dim: 1, keepdim: false, dtype: null }, 'rows');
  g.setOutputs([op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: rows, other: rows }, 'sq') }, 'out')]);
  const [expected] = interpret(g, [Z]);
  const lowering = lowerComplex(g, { fallback: true, truncateDouble: true });
  expect(lowering.report.fallback.map((f) => f.node)).toEqual(['rows']);
  // The kept op is marked as such; the rewritten ones are gone.
  expect(g.nodes.filter((n) => n.meta.complexFallback === true).map((n) => n.name)).toEqual(['rows']);
  const lines = bodyLines(printGraph(g));
  expect(lines.filter((l) => l.includes('_to_copy')).map((l) => l.split(' = ')[0])).toEqual(['%z_uncarried: float64[2, 3, 2]', '%rows_carrier_cast: float32[2, 2]', '%out: float64[2, 2]']);
  expect(lines).toContain('%z_complex: complex128[2, 3] = aten.view_as_complex.default(self=%z_uncarried)');
  expect(lines).toContain('%rows_carrier: float64[2, 2] = aten.view_as_real.default(self=%rows)');
  expect(lines).toContain('%sq: float32[2, 2] = trt.complex_mul(self=%rows_carrier_cast, other=%rows_carrier_cast)');
  const [actual] = interpret(g, [carrierOf(Z)]);
  expect(expected!.dtype).toBe('float64');
  expectClose(actual!, expected!, FP32);
});

test('a complex128 output computed inside the graph, without truncateDouble: carried as float64, and the report says so', () => {
  const g = new Graph('wide_out');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const wide = op('aten._to_copy.default', { self: z, dtype: 'complex128' }, 'wide');
  g.setOutputs([op('aten.mul.Tensor', { self: wide, other: wide }, 'sq'), op('aten.neg.default', { self: z }, 'ng')]);
  const expected = interpret(g, [Z]);
  const lowering = lowerComplex(g);
  expect(lowering.report.outputs).toEqual([
    { index: 0, name: 'sq', dtype: 'complex128', carrier: 'float64' },
    { index: 1, name: 'ng', dtype: 'complex64', carrier: 'float32' },
  ]);
  const actual = interpret(g, [carrierOf(Z)]);
  expect(actual.map((t) => t.dtype)).toEqual(['float64', 'float32']);
  actual.forEach((t, i) => expectClose(t, carrierOf(expected[i]!), FP32, `output ${i}`));
});

test('E_COMPLEX128 names a constant without an origin as a constant, and lists every source in its details', () => {
  const g = new Graph('wide_constant');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex128', [2]));
  const k = g.addConstant('k', Tensor.from('complex128', [2], [1, 0, 0, 1]));
  g.setOutputs([op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: z, other: k }) })]);
  const e = thrownError(() => lowerComplex(g));
  expect(e.code).toBe('E_COMPLEX128');
  expect(e.message).toMatch(/^input "z" complex128\[2\], constant "k" complex128\[2\]: complex128 would be carried as float64 pairs/);
  expect(e.details.inputs).toEqual(['input "z" complex128[2]', 'constant "k" complex128[2]']);
});

test('E_UNSUPPORTED_OP names a node by its source location when it has one, and gives each reason in its details', () => {
  const g = new Graph('located');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [3]));
  const root = op('aten.sqrt.default', { self: z }, 'root');
  root.producer.meta.where = 'model.py:12 (forward)';
  const pad = op('aten.constant_pad_nd.default', { self: z, pad: [1, 0], value: 2 }, 'pd');
  g.setOutputs([op('aten.view_as_real.default', { self: root }), op('aten.view_as_real.default', { self: pad })]);
  const e = thrownError(() => lowerComplex(g));
  expect(e.code).toBe('E_UNSUPPORTED_OP');
  expect(e.message.split('\n')).toEqual([
    '2 op(s) on complex values have no rewrite into real arithmetic, so they cannot be converted into an engine segment:',
    '  - model.py:12 (forward): no rule rewrites aten.sqrt.default on complex values into real arithmetic',
    '  - node pd (aten.constant_pad_nd.default): padding complex values with a nonzero value has no rule',
    'Set complexFallback: true to run them in fallback segments instead.',
  ]);
  expect(e.details.ops).toEqual([
    { node: 'root', target: 'aten.sqrt.default', reason: 'no rule rewrites aten.sqrt.default on complex values into real arithmetic' },
    { node: 'pd', target: 'aten.constant_pad_nd.default', reason: 'padding complex values with a nonzero value has no rule' },
  ]);
});

test('rules that refuse some forms of their op give the reason: dtype arguments, roll without dims', () => {
  const g = new Graph('refused');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const outs = [
    op('aten.sum.dim_IntList', { self: z, dim: [0], keepdim: false, dtype: 'complex128' }, 'sum_wide'),
    op('aten.mean.dim', { self: z, dim: [0], keepdim: false, dtype: 'complex128' }, 'mean_wide'),
    op('aten.sum.default', { self: z, dtype: 'complex128' }, 'total_wide'),
    op('aten.mean.default', { self: z, dtype: 'complex128' }, 'average_wide'),
    op('aten.cumsum.default', { self: z, dim: 1, dtype: 'complex128' }, 'running_wide'),
    op('aten.roll.default', { self: z, shifts: [1] }, 'flat_roll'),
  ];
  // The same ops in their accepted forms are rewritten.
  const accepted = [
    op('aten.div.Tensor_mode', { self: z, other: z, rounding_mode: null }, 'div_plain'),
    op('aten.sum.dim_IntList', { self: z, dim: [0], keepdim: false, dtype: null }, 'sum_plain'),
    op('aten.cumsum.default', { self: z, dim: 1, dtype: null }, 'running_plain'),
    op('aten.roll.default', { self: z, shifts: [1], dims: [1] }, 'roll_plain'),
    op('aten.constant_pad_nd.default', { self: z, pad: [1, 0], value: false }, 'pad_false'),
  ];
  g.setOutputs([...outs, ...accepted].map((v) => op('aten.view_as_real.default', { self: v })));
  const e = thrownError(() => lowerComplex(g));
  expect(e.code).toBe('E_UNSUPPORTED_OP');
  expect(e.details.ops).toEqual([
    { node: 'sum_wide', target: 'aten.sum.dim_IntList', reason: 'sum with a dtype argument on complex values has no rule' },
    { node: 'mean_wide', target: 'aten.mean.dim', reason: 'mean with a dtype argument on complex values has no rule' },
    { node: 'total_wide', target: 'aten.sum.default', reason: 'sum with a dtype argument on complex values has no rule' },
    { node: 'average_wide', target: 'aten.mean.default', reason: 'mean with a dtype argument on complex values has no rule' },
    { node: 'running_wide', target: 'aten.cumsum.default', reason: 'cumsum with a dtype argument on complex values has no rule' },
    { node: 'flat_roll', target: 'aten.roll.default', reason: 'roll without dims (over the flattened tensor) has no rule for complex values' },
  ]);
});

test('a multi-output op keeps its own output names (no renaming), and dead complex ops without a rule are not refused', () => {
  const g = new Graph('split');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [4, 3]));
  const halves = call(g, 'aten.split.Tensor', { self: z, split_size: 2, dim: 0 }, { name: 'halves' }).outputs;
  op('aten.sqrt.default', { self: z }, 'dead');
  g.setOutputs(halves);
  lowerComplex(g);
  expect(bodyLines(printGraph(g))).toEqual([
    '%halves_2: float32[2, 3, 2], %halves_2_1: float32[2, 3, 2] = aten.split.Tensor(self=%z, split_size=2, dim=0)',
    'return (halves=%halves_2, halves_1=%halves_2_1)',
  ]);
  const [first, second] = interpret(g, [carrierOf(Tensor.from('complex64', [4, 3], Array.from({ length: 24 }, (_, i) => i)))]);
  expect(first!.toArray()).toEqual(Array.from({ length: 12 }, (_, i) => i));
  expect(second!.toArray()).toEqual(Array.from({ length: 12 }, (_, i) => 12 + i));
});

test('complex constants: complex64 data is shared with the carrier (no copy); truncated complex128 data is float32', () => {
  const g = new Graph('constants');
  const op = builder(g);
  const narrow = Tensor.from('complex64', [2], [1, -1, 0.5, 2]);
  const wide = Tensor.from('complex128', [2], [0.1, 0.2, -3, 4]);
  const a = g.addConstant('a', narrow);
  const b = g.addConstant('b', wide);
  g.setOutputs([op('aten.view_as_real.default', { self: op('aten.mul.Tensor', { self: a, other: op('aten._to_copy.default', { self: b, dtype: 'complex64' }) }) })]);
  const [expected] = interpret(g, []);
  lowerComplex(g, { truncateDouble: true });
  const constant = (name: string): Tensor => g.nodes.find((n) => n.name === name)!.tensor!;
  expect(constant('a').data).toBe(narrow.data);
  expect(constant('a').shape).toEqual([2, 2]);
  expect(constant('b').data).toBeInstanceOf(Float32Array);
  expect(constant('b').toArray()).toEqual([0.1, 0.2, -3, 4].map(Math.fround));
  expectClose(interpret(g, [])[0]!, expected!, FP32);
});

test('the live real nodes of a graph without complex values are left alone, dead ones too', () => {
  const g = new Graph('real');
  const op = builder(g);
  const x = g.addInput('x', tensorType('float32', [2]));
  op('aten.neg.default', { self: x }, 'unused');
  g.setOutputs([op('aten.relu.default', { self: x }, 'r')]);
  const before = printGraph(g);
  expect(lowerComplex(g).report.rewritten).toBe(0);
  expect(printGraph(g)).toBe(before);
});

test('an op without a rule that reads complex values and gives a real one (isnan) is kept with an input adapter only', () => {
  const g = new Graph('real_out');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const nan = op('aten.isnan.default', { self: op('aten.mul.Tensor', { self: z, other: z }, 'sq') }, 'nan');
  g.setOutputs([nan]);
  const input = Tensor.from('complex64', [2, 3], [1, NaN, 0, 0, 2, 1, NaN, NaN, -1, 0.5, 3, -3]);
  const [expected] = interpret(g, [input]);
  const lowering = lowerComplex(g, { fallback: true });
  expect(lowering.report.fallback.map((f) => f.node)).toEqual(['nan']);
  expect(bodyLines(printGraph(g))).toEqual([
    '%sq: float32[2, 3, 2] = trt.complex_mul(self=%z, other=%z)',
    '%sq_complex: complex64[2, 3] = aten.view_as_complex.default(self=%sq)',
    '%nan: bool[2, 3] = aten.isnan.default(self=%sq_complex)',
    'return (%nan)',
  ]);
  expect(expected!.toArray()).toEqual([1, 0, 0, 1, 0, 0]);
  expect(interpret(g, [carrierOf(input)])[0]!.toArray()).toEqual(expected!.toArray());
});

test('the report of a graph without complex values is empty', () => {
  const g = new Graph('plain');
  const x = g.addInput('x', tensorType('float32', [2]));
  g.setOutputs([builder(g)('aten.neg.default', { self: x }, 'n')]);
  expect(lowerComplex(g).report).toStrictEqual({ subgraphs: [], indices: { inputs: [], outputs: [] }, inputs: [], outputs: [], constants: [], rewritten: 0, fallback: [] });
});
