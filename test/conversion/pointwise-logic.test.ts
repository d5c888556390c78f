/**
 * POINTWISE converters, comparisons and selection: eq/ne/lt/le/gt/ge (Tensor and Scalar),
 * logical and/or/xor/not, bitwise_not, where (all four overloads) and masked_fill. Each
 * converted graph runs on the reference backend and must match the interpreter.
 */
import type { DType } from '../../lib/ir/dtype';
import { check, type In } from './pointwise-helpers';

const t = (dtype: DType, shape: number[], kind?: In['kind']): In => ({ dtype, shape, kind });

describe('comparisons', () => {
  const ops = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];

  test.each(ops)('%s.Tensor', async (op) => {
    const run = (a: In, b: In): Promise<unknown> => check(`aten.${op}.Tensor`, [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
    await run(t('float32', [2, 3, 4], 'small'), t('float32', [4], 'small'));
    await run(t('float32', [2, 3]), t('float32', [2, 1]));
    await run(t('int32', [4, 5], 'small'), t('int32', [5], 'small'));
    await run(t('int64', [4, 5], 'small'), t('int32', [4, 1], 'small'));
    await run(t('int32', [3], 'small'), t('float32', [2, 3], 'small'));
    await run(t('bool', [3, 4]), t('bool', [4]));
    await run(t('float16', [3, 4], 'small'), t('float16', [3, 4], 'small'));
    await run(t('uint8', [3, 4], 'small'), t('uint8', [3, 4], 'small'));
    await run(t('float32', [5], 'small'), t('int64', [], 'small'));
  });

  test.each(ops)('%s.Scalar', async (op) => {
    const run = (a: In, other: number | boolean): Promise<unknown> => check(`aten.${op}.Scalar`, [a], (v) => ({ self: v[0]!, other }));
    await run(t('float32', [3, 4], 'small'), 1);
    await run(t('float32', [3, 4]), 0.25);
    await run(t('int32', [3, 4], 'small'), -1);
    await run(t('int64', [3, 4], 'small'), 1.5);
    await run(t('bool', [3, 4]), true);
    await run(t('float16', [3, 4], 'small'), 2);
    await run(t('float32', [], 'small'), 0);
  });

  test('NaN compares unequal (ne is not equal)', async () => {
    await check('aten.ne.Tensor', [t('float32', [12], 'special'), t('float32', [12], 'special')], (v) => ({ self: v[0]!, other: v[1]! }));
    await check('aten.eq.Tensor', [t('float32', [12], 'special'), t('float32', [12], 'special')], (v) => ({ self: v[0]!, other: v[1]! }));
  });
});

describe('logical ops', () => {
  test.each(['logical_and', 'logical_or', 'logical_xor'])('%s', async (op) => {
    const run = (a: In, b: In): Promise<unknown> => check(`aten.${op}.default`, [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
    await run(t('bool', [2, 3, 4]), t('bool', [4]));
    await run(t('float32', [3, 4], 'small'), t('bool', [3, 1]));
    await run(t('int32', [3, 4], 'small'), t('int64', [4], 'small'));
    await run(t('float16', [3, 4], 'small'), t('float16', [3, 4], 'small'));
    await run(t('float32', [], 'small'), t('bool', [5]));
  });

  test('logical_not', async () => {
    for (const x of [t('bool', [3, 4]), t('float32', [3, 4], 'small'), t('int64', [5], 'small'), t('float16', [2, 2], 'small'), t('uint8', [6], 'small')]) {
      await check('aten.logical_not.default', [x], (v) => ({ self: v[0]! }));
    }
  });

  test('bitwise_not on bool, int32, int64 and uint8', async () => {
    for (const x of [t('bool', [3, 4]), t('int32', [3, 4]), t('int64', [5]), t('uint8', [2, 3])]) {
      await check('aten.bitwise_not.default', [x], (v) => ({ self: v[0]! }));
    }
  });
});

describe('where', () => {
  test('where.self with three-way broadcasting and promotion', async () => {
    await check('aten.where.self', [t('bool', [3]), t('float32', [2, 3]), t('float32', [2, 1])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
    await check('aten.where.self', [t('bool', [2, 1, 4]), t('int32', [3, 1]), t('int64', [4])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
    await check('aten.where.self', [t('bool', [3, 4]), t('int32', [3, 4]), t('float16', [4])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
    await check('aten.where.self', [t('bool', [3, 4]), t('bool', [3, 4]), t('bool', [1])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
    await check('aten.where.self', [t('bool', [3, 4]), t('uint8', [3, 4]), t('uint8', [4])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
    await check('aten.where.self', [t('bool', []), t('float32', [2]), t('float32', [])], (v) => ({ condition: v[0]!, self: v[1]!, other: v[2]! }));
  });

  test('where.ScalarSelf, where.ScalarOther, where.Scalar', async () => {
    await check('aten.where.ScalarSelf', [t('bool', [2, 3]), t('float32', [3])], (v) => ({ condition: v[0]!, self: 1.5, other: v[1]! }));
    await check('aten.where.ScalarSelf', [t('bool', [2, 3]), t('int32', [2, 3])], (v) => ({ condition: v[0]!, self: 2.5, other: v[1]! }));
    await check('aten.where.ScalarOther', [t('bool', [2, 3]), t('int64', [2, 1])], (v) => ({ condition: v[0]!, self: v[1]!, other: -7 }));
    await check('aten.where.ScalarOther', [t('bool', [4]), t('float16', [2, 4])], (v) => ({ condition: v[0]!, self: v[1]!, other: 0.5 }));
    await check('aten.where.Scalar', [t('bool', [2, 3])], (v) => ({ condition: v[0]!, self: 1.0, other: 0.25 }));
    await check('aten.where.Scalar', [t('bool', [2, 3])], (v) => ({ condition: v[0]!, self: 1, other: 0 }));
    await check('aten.where.Scalar', [t('bool', [2, 3])], (v) => ({ condition: v[0]!, self: true, other: false }));
  });
});

describe('masked_fill', () => {
  test('masked_fill.Scalar', async () => {
    await check('aten.masked_fill.Scalar', [t('float32', [2, 3, 4]), t('bool', [3, 1])], (v) => ({ self: v[0]!, mask: v[1]!, value: -1e4 }));
    await check('aten.masked_fill.Scalar', [t('int32', [3, 4]), t('bool', [3, 4])], (v) => ({ self: v[0]!, mask: v[1]!, value: 2.7 }));
    await check('aten.masked_fill.Scalar', [t('int64', [4]), t('bool', [2, 4])], (v) => ({ self: v[0]!, mask: v[1]!, value: -3 }));
    await check('aten.masked_fill.Scalar', [t('bool', [3, 4]), t('bool', [4])], (v) => ({ self: v[0]!, mask: v[1]!, value: true }));
    await check('aten.masked_fill.Scalar', [t('float16', [3, 4]), t('bool', [3, 4])], (v) => ({ self: v[0]!, mask: v[1]!, value: -Infinity }));
    await check('aten.masked_fill.Scalar', [t('uint8', [3, 4]), t('bool', [3, 4])], (v) => ({ self: v[0]!, mask: v[1]!, value: 9 }));
  });

  test('masked_fill.Tensor (0-d value, cast to self)', async () => {
    await check('aten.masked_fill.Tensor', [t('float32', [2, 3]), t('bool', [2, 3]), t('float32', [])], (v) => ({ self: v[0]!, mask: v[1]!, value: v[2]! }));
    await check('aten.masked_fill.Tensor', [t('float32', [2, 3]), t('bool', [3]), t('int64', [])], (v) => ({ self: v[0]!, mask: v[1]!, value: v[2]! }));
    await check('aten.masked_fill.Tensor', [t('int32', [3]), t('bool', [2, 3]), t('int64', [])], (v) => ({ self: v[0]!, mask: v[1]!, value: v[2]! }));
  });
});
