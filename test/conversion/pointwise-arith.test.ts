/**
 * POINTWISE converters, arithmetic: add/sub/rsub (alpha), mul, div (true, floor, trunc),
 * floor_divide, pow, maximum/minimum, remainder and fmod. Each converted graph runs on the
 * reference backend and must match the interpreter; shapes broadcast across ranks, Scalars
 * and 0-d tensors take part in PyTorch's promotion, and bool/int32/int64/float16 variants
 * are covered where the op allows.
 */
import type { DType } from '../../lib/ir/dtype';
import { check, reasons, type In } from './pointwise-helpers';

const t = (dtype: DType, shape: number[], kind?: In['kind']): In => ({ dtype, shape, kind });

describe('add, sub, rsub', () => {
  test.each([
    ['float32 rank 3 + rank 1', t('float32', [2, 3, 4]), t('float32', [4]), 1],
    ['float32 [3,1] + [1,5], alpha 2.5', t('float32', [3, 1]), t('float32', [1, 5]), 2.5],
    ['int32 + int64 (promotes to int64), alpha 3', t('int32', [2, 3]), t('int64', [3]), 3],
    ['int32 + float32 (promotes to float32)', t('int32', [2, 3]), t('float32', [2, 3]), 1],
    ['float16, alpha -2', t('float16', [4, 5]), t('float16', [5]), -2],
    ['bool + bool (bool)', t('bool', [3, 4]), t('bool', [4]), 1],
    ['bool + 0-d float32 (float32)', t('bool', [3, 2]), t('float32', []), 1],
    ['int64 + 0-d float16 (float16)', t('int64', [6]), t('float16', []), 1],
    ['0-d + 0-d', t('float32', []), t('float32', []), 0.5],
  ] as const)('add.Tensor %s', async (_, a, b, alpha) => {
    await check('aten.add.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]!, alpha }));
  });

  test.each([
    ['float32 + 1.5, alpha 2', 'float32', 1.5, 2],
    ['int64 + 3', 'int64', 3, 1],
    ['int32 + 2.5 (float32)', 'int32', 2.5, 1],
    ['float16 + 0.1', 'float16', 0.1, 1],
    ['bool + true (bool)', 'bool', true, 1],
    ['bool + 2 (int64)', 'bool', 2, 1],
  ] as const)('add.Scalar %s', async (_, dtype, other, alpha) => {
    await check('aten.add.Scalar', [t(dtype, [3, 4])], (v) => ({ self: v[0]!, other, alpha }));
  });

  test.each([
    ['float32 [4,1,3] - [2,3], alpha -1.5', t('float32', [4, 1, 3]), t('float32', [2, 3]), -1.5],
    ['int64 - int32, alpha 2', t('int64', [5]), t('int32', [2, 5]), 2],
    ['float16', t('float16', [2, 3]), t('float16', [2, 3]), 1],
  ] as const)('sub.Tensor %s', async (_, a, b, alpha) => {
    await check('aten.sub.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]!, alpha }));
  });

  test('sub.Scalar', async () => {
    await check('aten.sub.Scalar', [t('int32', [3, 4])], (v) => ({ self: v[0]!, other: 4, alpha: 2 }));
    await check('aten.sub.Scalar', [t('float32', [3, 4])], (v) => ({ self: v[0]!, other: -0.75, alpha: 1 }));
  });

  test('rsub.Tensor and rsub.Scalar (other − alpha·self)', async () => {
    await check('aten.rsub.Tensor', [t('float32', [2, 3, 4]), t('float32', [3, 1])], (v) => ({ self: v[0]!, other: v[1]!, alpha: 0.5 }));
    await check('aten.rsub.Tensor', [t('int32', [4]), t('int64', [2, 4])], (v) => ({ self: v[0]!, other: v[1]!, alpha: 1 }));
    await check('aten.rsub.Scalar', [t('int64', [3, 2])], (v) => ({ self: v[0]!, other: 5, alpha: 2 }));
    await check('aten.rsub.Scalar', [t('float16', [3, 2])], (v) => ({ self: v[0]!, other: 1, alpha: 1 }));
  });
});

describe('mul and div', () => {
  test.each([
    ['float32 [2,3] * [3]', t('float32', [2, 3]), t('float32', [3])],
    ['int64 * int32', t('int64', [2, 3]), t('int32', [1, 3])],
    ['bool * bool', t('bool', [4, 3]), t('bool', [3])],
    ['float16 * float16 rank 4 vs 2', t('float16', [2, 1, 3, 4]), t('float16', [3, 1])],
    ['bool * int32', t('bool', [5]), t('int32', [5])],
  ] as const)('mul.Tensor %s', async (_, a, b) => {
    await check('aten.mul.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
  });

  test('mul.Scalar', async () => {
    await check('aten.mul.Scalar', [t('float32', [3, 4])], (v) => ({ self: v[0]!, other: 0.5 }));
    await check('aten.mul.Scalar', [t('int32', [3, 4])], (v) => ({ self: v[0]!, other: 3 }));
    await check('aten.mul.Scalar', [t('bool', [3, 4])], (v) => ({ self: v[0]!, other: 2 }));
    await check('aten.mul.Scalar', [t('int64', [3, 4])], (v) => ({ self: v[0]!, other: -1.5 }));
  });

  test.each([
    ['float32', t('float32', [2, 3, 4]), t('float32', [4], 'nonzero')],
    ['int32 / int32 (float32)', t('int32', [3, 4]), t('int32', [3, 4], 'nonzero')],
    ['int64 / float16 (float16)', t('int64', [3, 4]), t('float16', [4], 'nonzero')],
    ['float16', t('float16', [5]), t('float16', [2, 5], 'nonzero')],
    ['bool / float32', t('bool', [5]), t('float32', [5], 'nonzero')],
  ] as const)('div.Tensor %s', async (_, a, b) => {
    await check('aten.div.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
  });

  test('div.Scalar', async () => {
    await check('aten.div.Scalar', [t('int64', [3, 4])], (v) => ({ self: v[0]!, other: 4 }));
    await check('aten.div.Scalar', [t('float32', [3, 4])], (v) => ({ self: v[0]!, other: -0.3 }));
  });

  test.each(['floor', 'trunc', null] as const)('div.Tensor_mode %s', async (mode) => {
    await check('aten.div.Tensor_mode', [t('float32', [2, 3, 4]), t('float32', [3, 4], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: mode }));
    await check('aten.div.Tensor_mode', [t('int32', [4, 5]), t('int32', [5], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: mode }));
    await check('aten.div.Tensor_mode', [t('int64', [4, 5]), t('int32', [4, 1], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: mode }));
    await check('aten.div.Tensor_mode', [t('float16', [4, 5]), t('float16', [5], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: mode }));
  });

  test.each(['floor', 'trunc'] as const)('div.Scalar_mode %s', async (mode) => {
    await check('aten.div.Scalar_mode', [t('int32', [3, 4])], (v) => ({ self: v[0]!, other: -3, rounding_mode: mode }));
    await check('aten.div.Scalar_mode', [t('float32', [3, 4])], (v) => ({ self: v[0]!, other: 0.7, rounding_mode: mode }));
    await check('aten.div.Scalar_mode', [t('int64', [3, 4])], (v) => ({ self: v[0]!, other: 2.5, rounding_mode: mode }));
  });

  test('floor_divide', async () => {
    await check('aten.floor_divide.default', [t('float32', [3, 4]), t('float32', [4], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]! }));
    await check('aten.floor_divide.default', [t('int32', [3, 4]), t('int32', [3, 1], 'nonzero')], (v) => ({ self: v[0]!, other: v[1]! }));
    await check('aten.floor_divide.Scalar', [t('int64', [6])], (v) => ({ self: v[0]!, other: 4 }));
    await check('aten.floor_divide.Scalar', [t('float16', [6])], (v) => ({ self: v[0]!, other: -0.6 }));
  });

  test('rounding division of bool and arithmetic in 8-bit integers are refused with a reason', () => {
    expect(reasons('aten.div.Tensor_mode', [t('bool', [3]), t('bool', [3])], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: 'floor' }))?.join()).toMatch(
      /rounding_mode 'floor' on bool/,
    );
    expect(reasons('aten.floor_divide.default', [t('bool', [3]), t('bool', [3])], (v) => ({ self: v[0]!, other: v[1]! }))?.join()).toMatch(/bool/);
    expect(reasons('aten.add.Tensor', [t('uint8', [3]), t('uint8', [3])], (v) => ({ self: v[0]!, other: v[1]!, alpha: 1 }))?.join()).toMatch(
      /add in uint8 is not supported: TensorRT has no uint8 arithmetic/,
    );
    expect(reasons('aten.mul.Scalar', [t('int8', [3])], (v) => ({ self: v[0]!, other: 2 }))?.join()).toMatch(/mul in int8 is not supported/);
    expect(reasons('aten.div.Tensor_mode', [t('int8', [3]), t('int8', [3])], (v) => ({ self: v[0]!, other: v[1]!, rounding_mode: 'trunc' }))?.join()).toMatch(/int8/);
    // True division of 8-bit integers computes in float32, which TensorRT has.
    expect(reasons('aten.div.Tensor', [t('uint8', [3]), t('uint8', [3])], (v) => ({ self: v[0]!, other: v[1]! }))).toBeNull();
  });

  test('8-bit integer true division runs (through float32)', async () => {
    await check('aten.div.Tensor', [t('uint8', [2, 3]), t('uint8', [3], 'pos')], (v) => ({ self: v[0]!, other: v[1]! }));
  });
});

describe('pow', () => {
  test.each([
    ['float32 ** 2', t('float32', [2, 3, 4]), 2],
    ['float32 ** 0.5', t('float32', [3, 4], 'pos'), 0.5],
    ['float32 ** 3', t('float32', [3, 4]), 3],
    ['float32 ** -1', t('float32', [3, 4], 'nonzero'), -1],
    ['float32 ** 1', t('float32', [3, 4]), 1],
    ['float32 ** 1.7', t('float32', [3, 4], 'pos'), 1.7],
    ['float32 ** -2.5', t('float32', [3, 4], 'pos'), -2.5],
    ['float16 ** 2', t('float16', [3, 4]), 2],
    ['float16 ** 0.5', t('float16', [3, 4], 'pos'), 0.5],
    ['int32 ** 3', t('int32', [3, 4], 'small'), 3],
    ['int64 ** 0', t('int64', [3, 4], 'small'), 0],
    ['int64 ** -1 (0 unless |x| = 1)', t('int64', [3, 4], 'small'), -1],
    ['int32 ** -2', t('int32', [3, 4], 'small'), -2],
    ['int32 ** 0.5 (float32)', t('int32', [3, 4], 'pos'), 0.5],
  ] as const)('pow.Tensor_Scalar %s', async (_, x, exponent) => {
    await check('aten.pow.Tensor_Scalar', [x], (v) => ({ self: v[0]!, exponent }));
  });

  test.each([
    ['float32 positive base, rank 3 vs 1', t('float32', [2, 3, 4], 'pos'), t('float32', [4])],
    ['float16', t('float16', [3, 4], 'pos'), t('float16', [3, 1], 'unit')],
    ['int32 with negative exponents', t('int32', [4, 5], 'small'), t('int32', [5], 'small')],
    ['int64 ** int32', t('int64', [3, 4], 'small'), t('int32', [3, 4], 'small')],
    ['float32 ** int64 (float32)', t('float32', [3, 4], 'pos'), t('int64', [4], 'small')],
  ] as const)('pow.Tensor_Tensor %s', async (_, x, e) => {
    await check('aten.pow.Tensor_Tensor', [x, e], (v) => ({ self: v[0]!, exponent: v[1]! }));
  });

  test('pow.Scalar (Scalar base)', async () => {
    await check('aten.pow.Scalar', [t('float32', [3, 4])], (v) => ({ self: 2.5, exponent: v[0]! }));
    await check('aten.pow.Scalar', [t('int64', [3, 4], 'small')], (v) => ({ self: 3, exponent: v[0]! }));
    await check('aten.pow.Scalar', [t('int32', [3, 4], 'small')], (v) => ({ self: 0.5, exponent: v[0]! }));
  });

  test('pow in 8-bit integers is refused', () => {
    expect(reasons('aten.pow.Tensor_Scalar', [t('uint8', [3])], (v) => ({ self: v[0]!, exponent: 2 }))?.join()).toMatch(/pow in uint8 is not supported/);
  });
});

describe('maximum, minimum', () => {
  test.each(['aten.maximum.default', 'aten.minimum.default', 'aten.max.other', 'aten.min.other'])('%s', async (target) => {
    const run = (a: In, b: In): Promise<unknown> => check(target, [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
    await run(t('float32', [2, 3, 4]), t('float32', [3, 1]));
    await run(t('int32', [4, 5]), t('int32', [5]));
    await run(t('int64', [4, 5]), t('int32', [4, 5]));
    await run(t('bool', [4, 5]), t('bool', [1, 5]));
    await run(t('float16', [4, 5]), t('float16', [4, 5]));
    await run(t('int32', [3]), t('float32', [2, 3]));
    await run(t('uint8', [2, 3]), t('uint8', [3]));
    await run(t('float32', []), t('float32', [4]));
  });
});

describe('remainder, fmod', () => {
  test.each([
    ['float32', t('float32', [2, 3, 4]), t('float32', [4], 'nonzero')],
    ['int32 with negative operands', t('int32', [4, 5]), t('int32', [5], 'nonzero')],
    ['int64 vs int32', t('int64', [4, 5]), t('int32', [4, 1], 'nonzero')],
    ['float16', t('float16', [4, 5]), t('float16', [5], 'nonzero')],
    ['uint8', t('uint8', [4, 5]), t('uint8', [5], 'nonzero')],
  ] as const)('remainder.Tensor and fmod.Tensor %s', async (_, a, b) => {
    await check('aten.remainder.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
    await check('aten.fmod.Tensor', [a, b], (v) => ({ self: v[0]!, other: v[1]! }));
  });

  test.each([
    ['float32 by -1.5', 'float32', -1.5],
    ['float32 by 0.7', 'float32', 0.7],
    ['int64 by 3', 'int64', 3],
    ['int32 by -4', 'int32', -4],
    ['int32 by 2.5 (float32)', 'int32', 2.5],
  ] as const)('remainder.Scalar and fmod.Scalar %s', async (_, dtype, other) => {
    await check('aten.remainder.Scalar', [t(dtype, [3, 4])], (v) => ({ self: v[0]!, other }));
    await check('aten.fmod.Scalar', [t(dtype, [3, 4])], (v) => ({ self: v[0]!, other }));
  });

  test('remainder.Scalar_Tensor (Scalar dividend)', async () => {
    await check('aten.remainder.Scalar_Tensor', [t('int32', [3, 4], 'nonzero')], (v) => ({ self: 7, other: v[0]! }));
    await check('aten.remainder.Scalar_Tensor', [t('float32', [3, 4], 'nonzero')], (v) => ({ self: -2.5, other: v[0]! }));
  });
});
