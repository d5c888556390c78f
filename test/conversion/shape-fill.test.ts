/**
 * SHAPE converters, part 3: padding (fill / reflect / clamp / wrap slices), filled tensors,
 * arange, triangles, flips, rolls, scatters of slices and the SymInt plumbing (refused, or a
 * constant for static values).
 */
import { selectConverter } from '../../lib/conversion/registry';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType, type Arg } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { expectConvertedMatches } from '../helpers/convert-compare';
import { compileAndRun, DynGraph } from '../legalization/helpers';
import { check, verdict } from './shape-helpers';

const DTYPES: DType[] = ['float32', 'float16', 'int64', 'bool'];

/** A graph of one factory op (no inputs). */
async function factory(target: string, args: Record<string, Arg>): Promise<void> {
  const g = new Graph(target);
  const node = call(g, target, args);
  g.setOutputs(node.outputs);
  await expectConvertedMatches(g, []);
}

describe('padding', () => {
  test.each(DTYPES)('constant_pad_nd with positive, negative and partial pads (%s)', async (dtype) => {
    const value = dtype === 'bool' ? 1 : -2;
    await check('aten.constant_pad_nd.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, pad: [1, 2], value }));
    await check('aten.constant_pad_nd.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, pad: [-1, 2, 0, 3, 1, -1] }));
    await check('aten.constant_pad_nd.default', [{ dtype, shape: [3, 4] }], (v) => ({ self: v[0]!, pad: [0, 0] }));
  });

  test('constant_pad_nd with a float value on float16 and an empty input', async () => {
    await check('aten.constant_pad_nd.default', [{ dtype: 'float16', shape: [2, 2] }], (v) => ({ self: v[0]!, pad: [1, 1, 1, 1], value: 0.1 }));
    await check('aten.constant_pad_nd.default', [{ dtype: 'float32', shape: [2, 0] }], (v) => ({ self: v[0]!, pad: [1, 2], value: 7 }));
  });

  test.each(DTYPES)('pad reflect, replicate and circular (%s)', async (dtype) => {
    await check('aten.pad.default', [{ dtype, shape: [1, 2, 5] }], (v) => ({ self: v[0]!, pad: [3, 2], mode: 'reflect' }));
    await check('aten.pad.default', [{ dtype, shape: [1, 4, 5] }], (v) => ({ self: v[0]!, pad: [1, 4, 3, 2], mode: 'reflect' }));
    await check('aten.pad.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, pad: [2, 3, 1, 0], mode: 'replicate' }));
    await check('aten.pad.default', [{ dtype, shape: [2, 3, 4] }], (v) => ({ self: v[0]!, pad: [4, 2, -1, 3], mode: 'circular' }));
    await check('aten.pad.default', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, pad: [1, 1], mode: 'constant', value: dtype === 'bool' ? 1 : 3 }));
  });

  test('pad of an empty dim by a non-constant mode is refused', () => {
    expect(verdict('aten.pad.default', [{ dtype: 'float32', shape: [2, 0] }], (v) => ({ self: v[0]!, pad: [1, 1], mode: 'replicate' }))).toMatch(/empty dim/);
  });
});

describe('filled tensors', () => {
  test('full, zeros and ones with dtypes', async () => {
    await factory('aten.full.default', { size: [2, 3], fill_value: 1.5 });
    await factory('aten.full.default', { size: [2, 3], fill_value: 7 });
    await factory('aten.full.default', { size: [4], fill_value: true });
    await factory('aten.full.default', { size: [2, 2], fill_value: -3.7, dtype: 'int32' });
    await factory('aten.full.default', { size: [], fill_value: 2, dtype: 'float16' });
    await factory('aten.zeros.default', { size: [3, 0, 2] });
    await factory('aten.zeros.default', { size: [3, 2], dtype: 'bool' });
    await factory('aten.ones.default', { size: [2, 3, 4], dtype: 'int64' });
  });

  test.each(DTYPES)('*_like and new_* (%s)', async (dtype) => {
    await check('aten.full_like.default', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, fill_value: 1 }));
    await check('aten.zeros_like.default', [{ dtype, shape: [2, 3] }], (v) => ({ self: v[0]! }));
    await check('aten.ones_like.default', [{ dtype, shape: [4] }], (v) => ({ self: v[0]!, dtype: 'float32' }));
    await check('aten.new_full.default', [{ dtype, shape: [2] }], (v) => ({ self: v[0]!, size: [3, 2], fill_value: 0 }));
    await check('aten.new_zeros.default', [{ dtype, shape: [2] }], (v) => ({ self: v[0]!, size: [1, 5] }));
    await check('aten.new_ones.default', [{ dtype, shape: [2] }], (v) => ({ self: v[0]!, size: [2, 2], dtype: 'int32' }));
  });

  test('new_* of a dynamic-batch tensor with static sizes are converted (swin: x.new_zeros((1, H, W, 1)))', async () => {
    const d = new DynGraph('new-fills', { B: { min: 1, max: 8 } });
    const x = d.input('x', 'float32', ['B', 3]);
    const zeros = d.call('aten.new_zeros.default', { self: x, size: [1, 3] }).output;
    const ones = d.call('aten.new_ones.default', { self: x, size: [2, 3], dtype: 'int32' }).output;
    const full = d.call('aten.new_full.default', { self: x, size: [1, 3], fill_value: 2.5 }).output;
    // Read with x, so the fills sit inside a dynamic segment rather than folding away alone.
    const sum = d.call('aten.add.Tensor', { self: d.call('aten.add.Tensor', { self: x, other: zeros }).output, other: full }).output;
    const runs = [[Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6])], [Tensor.from('float32', [1, 3], [-1, 0, 1])]];
    const { program, outputs } = await compileAndRun(d.outputs(sum, ones), { minBlockSize: 1, inputs: { x: { min: [1, 3], opt: [2, 3], max: [8, 3] } } }, runs);
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.target}: ${o.reasons.join('; ')}`)).toEqual([]);
    expect(Array.from(outputs[0]![0]!.data as Float32Array)).toEqual([3.5, 4.5, 5.5, 6.5, 7.5, 8.5]);
    expect(Array.from(outputs[1]![0]!.data as Float32Array)).toEqual([1.5, 2.5, 3.5]);
    expect(outputs[0]![1]!.dtype).toBe('int32');
    expect(Array.from(outputs[0]![1]!.data as Int32Array)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  test('arange in every form', async () => {
    await factory('aten.arange.default', { end: 7 });
    await factory('aten.arange.default', { end: 4.5 });
    await factory('aten.arange.start', { start: -3, end: 5, dtype: 'float16' });
    await factory('aten.arange.start_step', { start: 10, end: -2, step: -3 });
    await factory('aten.arange.start_step', { start: 0.5, end: 2, step: 0.25 });
    await factory('aten.arange.start_step', { start: 0, end: 0, step: 1 });
    await factory('aten.arange.start_step', { start: 1, end: 10, step: 2, dtype: 'int32' });
  });
});

describe('triangles, flips and rolls', () => {
  test.each(DTYPES)('triu and tril with diagonals (%s)', async (dtype) => {
    for (const diagonal of [0, 1, -2, 5]) {
      await check('aten.triu.default', [{ dtype, shape: [2, 4, 5] }], (v) => ({ self: v[0]!, diagonal }));
      await check('aten.tril.default', [{ dtype, shape: [5, 3] }], (v) => ({ self: v[0]!, diagonal }));
    }
  });

  test.each(DTYPES)('flip (%s)', async (dtype) => {
    await check('aten.flip.default', [{ dtype, shape: [3, 4, 2] }], (v) => ({ self: v[0]!, dims: [0, -1] }));
    await check('aten.flip.default', [{ dtype, shape: [5] }], (v) => ({ self: v[0]!, dims: [-1] }));
    await check('aten.flip.default', [{ dtype, shape: [3, 0] }], (v) => ({ self: v[0]!, dims: [1] }));
    await check('aten.flip.default', [{ dtype, shape: [3, 2] }], (v) => ({ self: v[0]!, dims: [] }));
  });

  test.each(DTYPES)('roll (%s)', async (dtype) => {
    await check('aten.roll.default', [{ dtype, shape: [3, 4] }], (v) => ({ self: v[0]!, shifts: [5], dims: [] }));
    await check('aten.roll.default', [{ dtype, shape: [3, 4] }], (v) => ({ self: v[0]!, shifts: [-1, 6], dims: [-1, 0] }));
    await check('aten.roll.default', [{ dtype, shape: [3, 4] }], (v) => ({ self: v[0]!, shifts: [4], dims: [1] }));
  });
});

describe('scatters of slices', () => {
  test.each(DTYPES)('slice_scatter with steps 1 and 2, negative and clamped bounds (%s)', async (dtype) => {
    await check('aten.slice_scatter.default', [{ dtype, shape: [6, 3] }, { dtype, shape: [2, 3] }], (v) => ({ self: v[0]!, src: v[1]!, dim: 0, start: 1, end: 3 }));
    await check('aten.slice_scatter.default', [{ dtype, shape: [6, 3] }, { dtype, shape: [6, 2] }], (v) => ({ self: v[0]!, src: v[1]!, dim: -1, start: -2, end: 100 }));
    await check('aten.slice_scatter.default', [{ dtype, shape: [7, 2] }, { dtype, shape: [3, 2] }], (v) => ({ self: v[0]!, src: v[1]!, dim: 0, start: 1, step: 2 }));
    await check('aten.slice_scatter.default', [{ dtype, shape: [7, 2] }, { dtype, shape: [4, 2] }], (v) => ({ self: v[0]!, src: v[1]!, end: 9223372036854775807, step: 2 }));
    await check('aten.slice_scatter.default', [{ dtype, shape: [4, 2] }, { dtype, shape: [0, 2] }], (v) => ({ self: v[0]!, src: v[1]!, start: 3, end: 1 }));
  });

  test.each(DTYPES)('select_scatter (%s)', async (dtype) => {
    await check('aten.select_scatter.default', [{ dtype, shape: [4, 3] }, { dtype, shape: [3] }], (v) => ({ self: v[0]!, src: v[1]!, dim: 0, index: -1 }));
    await check('aten.select_scatter.default', [{ dtype, shape: [4, 3, 2] }, { dtype, shape: [4, 2] }], (v) => ({ self: v[0]!, src: v[1]!, dim: 1, index: 1 }));
    await check('aten.select_scatter.default', [{ dtype, shape: [4, 3] }, { dtype, shape: [4] }], (v) => ({ self: v[0]!, src: v[1]!, dim: -1, index: 0 }));
  });
});

describe('SymInt plumbing', () => {
  test('trt.sym_tensor with static values becomes a constant', async () => {
    await factory('trt.sym_tensor', { values: [3, 4, 5] });
    await factory('trt.sym_tensor', { values: [7], scalar: true, dtype: 'int32' });
  });

  test('sym_size.int and sym.* are refused with the reason', () => {
    expect(verdict('aten.sym_size.int', [{ dtype: 'float32', shape: [2, 3] }], (v) => ({ self: v[0]!, dim: 1 }))).toMatch(/computes a SymInt on the host/);
    const g = new Graph('sym');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    const size = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const sum = call(g, 'sym.add', { a: size, b: 3 });
    // Its input is a SymInt, so the node counts as dynamic; the reason still says why.
    const s = selectConverter(sum);
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.reasons.join('; ')).toMatch(/computes a SymInt on the host/);
  });
});
