/**
 * POINTWISE converters, the rest: clamps (clip activation and max/min), casts and their
 * checkArgs refusals, identity-like copies, scalar_tensor, and the registration
 * itself (static-only, no complex ops). Each converted graph runs on the reference backend
 * and must match the interpreter.
 */
import { listConverters, selectConverter } from '../../lib/conversion/registry';
import { call } from '../../lib/ir/builder';
import type { DType } from '../../lib/ir/dtype';
import { Graph, tensorType } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { expectConvertedMatches } from '../helpers/convert-compare';
import { check, convertOne, data, reasons, type In } from './pointwise-helpers';

const t = (dtype: DType, shape: number[], kind?: In['kind']): In => ({ dtype, shape, kind });

describe('clamps', () => {
  test('clamp.default: clip for float bounds, max/min otherwise', async () => {
    const run = (x: In, min: number | null, max: number | null): Promise<unknown> => check('aten.clamp.default', [x], (v) => ({ self: v[0]!, min, max }));
    await run(t('float32', [2, 3, 4]), -0.5, 0.5);
    await run(t('float32', [3, 4]), 0.5, -0.5); // min > max gives max, as torch.clamp
    await run(t('float32', [3, 4]), -1, null);
    await run(t('float32', [3, 4]), null, 1.25);
    await run(t('int32', [3, 4]), -5, 5);
    await run(t('int64', [3, 4]), null, 0);
    await run(t('int32', [3, 4]), -2.5, 2.5); // float bounds promote int32 to float32
    await run(t('float16', [3, 4]), -1, 1);
    await run(t('uint8', [3, 4]), 20, 100);
    await run(t('float32', []), 0, 1);
  });

  test('clamp.Tensor with broadcast bounds', async () => {
    await check('aten.clamp.Tensor', [t('float32', [2, 3, 4]), t('float32', [4], 'unit'), t('float32', [3, 1], 'pos')], (v) => ({ self: v[0]!, min: v[1]!, max: v[2]! }));
    await check('aten.clamp.Tensor', [t('float32', [3]), t('float32', [2, 3])], (v) => ({ self: v[0]!, min: null, max: v[1]! }));
    await check('aten.clamp.Tensor', [t('int32', [3, 4]), t('int64', [4])], (v) => ({ self: v[0]!, min: v[1]!, max: null }));
    await check('aten.clamp.Tensor', [t('float16', [3, 4]), t('float16', [4]), t('float16', [4])], (v) => ({ self: v[0]!, min: v[1]!, max: v[2]! }));
  });

  test('clamp_min and clamp_max (Scalar and Tensor bounds)', async () => {
    await check('aten.clamp_min.default', [t('float32', [3, 4])], (v) => ({ self: v[0]!, min: 0 }));
    await check('aten.clamp_min.default', [t('int64', [3, 4])], (v) => ({ self: v[0]!, min: -3 }));
    await check('aten.clamp_min.Tensor', [t('float32', [3, 4]), t('float32', [4])], (v) => ({ self: v[0]!, min: v[1]! }));
    await check('aten.clamp_max.default', [t('int32', [3, 4])], (v) => ({ self: v[0]!, max: 3 }));
    await check('aten.clamp_max.default', [t('float16', [3, 4])], (v) => ({ self: v[0]!, max: 0.5 }));
    await check('aten.clamp_max.Tensor', [t('float32', [4]), t('float32', [3, 4])], (v) => ({ self: v[0]!, max: v[1]! }));
  });

  test('hardtanh', async () => {
    await check('aten.hardtanh.default', [t('float32', [2, 3, 4])], (v) => ({ self: v[0]!, min_val: -1, max_val: 1 }));
    await check('aten.hardtanh.default', [t('float32', [3, 4])], (v) => ({ self: v[0]!, min_val: 0, max_val: 6 }));
    await check('aten.hardtanh.default', [t('int32', [3, 4])], (v) => ({ self: v[0]!, min_val: -2, max_val: 2 }));
    await check('aten.hardtanh.default', [t('float16', [3, 4])], (v) => ({ self: v[0]!, min_val: -0.5, max_val: 0.5 }));
  });
});

describe('casts', () => {
  const CASTS: Array<[DType, DType, In['kind']]> = [
    ['float32', 'int32', 'any'],
    ['float32', 'int64', 'half'],
    ['float32', 'bool', 'small'],
    ['float32', 'float16', 'any'],
    ['float16', 'float32', 'any'],
    ['int64', 'float16', 'any'],
    ['int64', 'int32', 'any'],
    ['int32', 'int64', 'any'],
    ['int32', 'bool', 'small'],
    ['bool', 'float32', 'any'],
    ['bool', 'int64', 'any'],
    ['uint8', 'float32', 'any'],
    ['float32', 'uint8', 'pos'],
    ['float32', 'float32', 'any'],
  ];

  test.each(CASTS)('_to_copy %s → %s', async (from, to, kind) => {
    await check('aten._to_copy.default', [t(from, [2, 3, 4], kind)], (v) => ({ self: v[0]!, dtype: to }));
  });

  test('_to_copy without a dtype, to.dtype, type_as', async () => {
    await check('aten._to_copy.default', [t('float32', [3, 4])], (v) => ({ self: v[0]! }));
    await check('aten._to_copy.default', [t('float32', [3, 4])], (v) => ({ self: v[0]!, dtype: 'float16', memory_format: 'channels_last', layout: 'strided' }));
    await check('aten.to.dtype', [t('float32', [3, 4], 'half')], (v) => ({ self: v[0]!, dtype: 'int64' }));
    await check('aten.to.dtype', [t('int64', [3, 4])], (v) => ({ self: v[0]!, dtype: 'float32' }));
    await check('aten.to.device', [t('float32', [3, 4])], (v) => ({ self: v[0]!, device: 'cuda:0', dtype: 'int32' }));
    await check('aten.to.dtype_layout', [t('int64', [3, 4])], (v) => ({ self: v[0]!, dtype: 'float32', layout: 'strided', device: 'cuda:0' }));
    await check('aten.lift_fresh_copy.default', [t('float32', [3, 4])], (v) => ({ self: v[0]! }));
    await check('aten.type_as.default', [t('int32', [3, 4]), t('float32', [2])], (v) => ({ self: v[0]!, other: v[1]! }));
    await check('aten.type_as.default', [t('float16', [3, 4]), t('float16', [])], (v) => ({ self: v[0]!, other: v[1]! }));
  });

  test('_to_copy to a dtype TensorRT cannot hold is refused, with the reason', () => {
    const toF64 = reasons('aten._to_copy.default', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'float64' }));
    expect(toF64?.join()).toMatch(/float64/);
    expect(reasons('aten._to_copy.default', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'float64' }), { truncateDouble: true })).toBeNull();
    expect(reasons('aten._to_copy.default', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'complex64' }))?.join()).toMatch(/complex/);
    expect(reasons('aten.to.dtype', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'float64' }))?.join()).toMatch(/float64/);
    expect(reasons('aten._to_copy.default', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'float16', layout: 'sparse_coo' }))).toEqual([
      'aten._to_copy.default: _to_copy to layout sparse_coo is not supported (TensorRT tensors are dense)',
    ]);
  });

  test('with truncateDouble, float64 is computed in float32', () => {
    const net = convertOne('aten._to_copy.default', [t('float32', [3])], (v) => ({ self: v[0]!, dtype: 'float64' }), { truncateDouble: true });
    expect(net.tensors[net.outputs[0]!.tensor]!.dtype).toBe('float32');
    const add = convertOne('aten.add.Scalar', [t('float64', [3])], (v) => ({ self: v[0]!, other: 0.5, alpha: 2 }), { truncateDouble: true });
    expect(add.tensors[add.outputs[0]!.tensor]!.dtype).toBe('float32');
    expect(add.layers.map((l) => l.params.kind)).toEqual(['constant', 'elementwise']);
  });
});

describe('identity-like ops and scalar_tensor', () => {
  test.each(['clone', 'alias', 'detach', 'contiguous'])('%s passes its input through', async (op) => {
    await check(`aten.${op}.default`, [t('float32', [2, 3])], (v) => ({ self: v[0]! }));
    await check(`aten.${op}.default`, [t('bool', [4])], (v) => ({ self: v[0]! }));
    const net = convertOne(`aten.${op}.default`, [t('int64', [4])], (v) => ({ self: v[0]! }));
    expect(net.layers.map((l) => l.params.kind)).toEqual(['identity']);
  });

  test('dropout in eval mode is the identity', async () => {
    await check('aten.dropout.default', [t('float32', [2, 3])], (v) => ({ input: v[0]!, p: 0.5, train: false }));
  });

  test('copies inside a graph add no layers', async () => {
    const g = new Graph('chain');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    const c = call(g, 'aten.clone.default', { self: x }).output;
    const d = call(g, 'aten.detach.default', { self: c }).output;
    const y = call(g, 'aten.mul.Scalar', { self: d, other: 2 }).output;
    g.setOutputs([y]);
    await expectConvertedMatches(g, [data(t('float32', [2, 3]))]);
  });

  test('scalar_tensor', async () => {
    for (const [s, dtype] of [
      [2.5, null],
      [3, 'int64'],
      [-7, 'int32'],
      [true, 'bool'],
      [0.1, 'float16'],
    ] as const) {
      const g = new Graph('scalar_tensor');
      const x = g.addInput('x', tensorType('float32', [2]));
      const st = call(g, 'aten.scalar_tensor.default', { s, dtype }).output;
      const y = call(g, 'aten.add.Tensor', { self: x, other: st }).output;
      g.setOutputs([st, y]);
      await expectConvertedMatches(g, [data(t('float32', [2]))], dtype === 'float16' ? { rtol: 4e-3, atol: 4e-3 } : undefined);
    }
  });
});

describe('registration', () => {
  const TARGETS = [
    'aten.add.Tensor',
    'aten.add.Scalar',
    'aten.sub.Tensor',
    'aten.rsub.Scalar',
    'aten.mul.Tensor',
    'aten.div.Tensor_mode',
    'aten.floor_divide.default',
    'aten.pow.Scalar',
    'aten.maximum.default',
    'aten.remainder.Scalar_Tensor',
    'aten.fmod.Scalar',
    'aten.ge.Scalar',
    'aten.logical_xor.default',
    'aten.bitwise_not.default',
    'aten.where.Scalar',
    'aten.masked_fill.Tensor',
    'aten.log1p.default',
    'aten.round.decimals',
    'aten.isinf.default',
    'aten.softplus.default',
    'trt.hardsigmoid_onnx',
    'aten._prelu_kernel.default',
    'aten.clamp.Tensor',
    'aten.hardtanh.default',
    'aten._to_copy.default',
    'aten.type_as.default',
    'aten.dropout.default',
    'aten.scalar_tensor.default',
  ];

  test('the pointwise converters have one static converter that checks its arguments', () => {
    const listing = listConverters();
    for (const target of TARGETS) {
      const entries = listing.filter((c) => c.target === target && c.static);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ dynamic: false, static: true, checksArgs: true });
    }
  });

  test('complex ops are left to the complex lowering (nothing registered)', () => {
    const targets = new Set(listConverters().map((c) => c.target));
    for (const op of ['view_as_real', 'view_as_complex', 'polar', 'real', 'imag', 'angle', 'conj_physical', '_conj']) {
      expect([...targets].filter((x) => x.startsWith(`aten.${op}.`))).toEqual([]);
    }
  });

  test('a node with run-time dims gets the dynamic-only registration of the same converter', () => {
    const g = new Graph('dyn');
    g.symbols.set('s0', { min: 1, max: 8 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 3]));
    const n = call(g, 'aten.relu.default', { self: x });
    const s = selectConverter(n);
    expect(s.ok && s.converter).toMatchObject({ name: 'aten.relu.default (dynamic)', static: false, dynamic: true });
    // scalar_tensor has no dynamic registration: its SymInt operand is the legalization's business.
    expect(listConverters().filter((c) => c.target === 'aten.scalar_tensor.default' && c.dynamic)).toEqual([]);
  });
});
