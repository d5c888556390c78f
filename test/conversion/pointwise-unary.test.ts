/**
 * POINTWISE converters, unary: math functions (integer inputs give float32), neg/abs/sign,
 * rounding (TensorRT's round is half to even, as torch.round), isnan/isinf, and the
 * activations (relu, gelu, silu, hardswish, hardsigmoid, leaky_relu, elu, softplus, prelu).
 * Each converted graph runs on the reference backend and must match the interpreter.
 */
import type { DType } from '../../lib/ir/dtype';
import { fromNumbers } from '../../lib/kernels/access';
import { expectConvertedMatches, opGraph } from '../helpers/convert-compare';
import { check, reasons, type In } from './pointwise-helpers';

const t = (dtype: DType, shape: number[], kind?: In['kind']): In => ({ dtype, shape, kind });
const unary = (target: string, x: In, extra: Record<string, number | string | boolean> = {}): Promise<unknown> =>
  check(target, [x], (v) => ({ self: v[0]!, ...extra }));

describe('float functions', () => {
  test.each([
    ['exp', 'any'],
    ['log', 'pos'],
    ['log1p', 'unit'],
    ['sqrt', 'pos'],
    ['rsqrt', 'pos'],
    ['reciprocal', 'nonzero'],
    ['sin', 'any'],
    ['cos', 'any'],
    ['tan', 'unit'],
    ['tanh', 'any'],
    ['sigmoid', 'any'],
    ['erf', 'any'],
  ] as const)('%s on float32, float16, int32, int64 and bool', async (op, kind) => {
    const target = `aten.${op}.default`;
    await unary(target, t('float32', [2, 3, 4], kind));
    await unary(target, t('float32', [], kind));
    await unary(target, t('float16', [3, 5], kind));
    if (kind !== 'unit') {
      await unary(target, t('int32', [4, 3], kind === 'any' ? 'small' : kind));
      await unary(target, t('int64', [6], kind === 'any' ? 'small' : kind));
    }
    if (kind === 'any') await unary(target, t('bool', [5]));
  });

  test('log1p keeps its accuracy near 0 and at the edges', async () => {
    await unary('aten.log1p.default', t('float32', [4, 4], 'unit'));
    await unary('aten.log1p.default', t('float32', [20], 'special'));
  });
});

describe('neg, abs, sign', () => {
  test.each(['neg', 'abs', 'sign'])('%s on float32, float16, int32, int64', async (op) => {
    const target = `aten.${op}.default`;
    await unary(target, t('float32', [2, 3, 4], 'small'));
    await unary(target, t('float32', [3, 4]));
    await unary(target, t('float16', [3, 4], 'small'));
    await unary(target, t('int32', [3, 4]));
    await unary(target, t('int64', [7]));
    await unary(target, t('float32', []));
  });

  test('abs and sign of bool and uint8', async () => {
    await unary('aten.abs.default', t('bool', [4]));
    await unary('aten.abs.default', t('uint8', [4]));
    await unary('aten.sign.default', t('bool', [4]));
    await unary('aten.sign.default', t('uint8', [6], 'small'));
  });

  test('neg of uint8 and abs of int8 wrap in PyTorch and are refused', () => {
    expect(reasons('aten.neg.default', [t('uint8', [3])], (v) => ({ self: v[0]! }))?.join()).toMatch(/neg in uint8 is not supported/);
    expect(reasons('aten.abs.default', [t('int8', [3])], (v) => ({ self: v[0]! }))?.join()).toMatch(/abs of int8/);
  });
});

describe('rounding', () => {
  test.each(['floor', 'ceil', 'round', 'trunc'])('%s on float32 (halves included), float16, and integers (unchanged)', async (op) => {
    const target = `aten.${op}.default`;
    await unary(target, t('float32', [3, 4, 5], 'half'));
    await unary(target, t('float32', [10], 'special'));
    await unary(target, t('float16', [4, 5], 'half'));
    await unary(target, t('int32', [3, 4]));
    await unary(target, t('int64', [5]));
    await unary(target, t('float32', [], 'half'));
  });

  test('round.decimals', async () => {
    await unary('aten.round.decimals', t('float32', [4, 5]), { decimals: 2 });
    await unary('aten.round.decimals', t('float32', [4, 5]), { decimals: 0 });
    await unary('aten.round.decimals', t('float16', [4, 5]), { decimals: 1 });
    await check('aten.round.decimals', [t('float32', [4, 5])], (v) => ({ self: v[0]!, decimals: -1 }));
    await unary('aten.round.decimals', t('int32', [4]), { decimals: 1 });
  });
});

describe('isnan, isinf', () => {
  test.each(['isnan', 'isinf'])('%s', async (op) => {
    const target = `aten.${op}.default`;
    await unary(target, t('float32', [4, 5], 'special'));
    await unary(target, t('float16', [12], 'special'));
    await unary(target, t('int32', [3, 4]));
    await unary(target, t('int64', [3]));
    await unary(target, t('bool', [3]));
  });
});

describe('activations', () => {
  test('relu on float32, float16, int32, int64, uint8', async () => {
    for (const x of [t('float32', [2, 3, 4]), t('float16', [3, 4]), t('int32', [3, 4]), t('int64', [5]), t('uint8', [5]), t('float32', [])]) {
      await unary('aten.relu.default', x);
    }
  });

  test.each(['none', 'tanh'])('gelu approximate=%s', async (approximate) => {
    await unary('aten.gelu.default', t('float32', [2, 3, 4]), { approximate });
    await unary('aten.gelu.default', t('float16', [3, 4]), { approximate });
  });

  test.each(['silu', 'hardswish', 'hardsigmoid'])('%s', async (op) => {
    const target = `aten.${op}.default`;
    await unary(target, t('float32', [2, 3, 4], 'half'));
    await unary(target, t('float32', [3, 4]));
    await unary(target, t('float16', [3, 4], 'half'));
  });

  test('trt.hardsigmoid_onnx with its alpha and beta', async () => {
    await unary('trt.hardsigmoid_onnx', t('float32', [3, 4], 'half'), { alpha: 0.2, beta: 0.5 });
    await unary('trt.hardsigmoid_onnx', t('float32', [3, 4], 'half'), { alpha: -0.7, beta: 0.1 });
    await unary('trt.hardsigmoid_onnx', t('float16', [3, 4], 'half'), { alpha: 0.3, beta: 0.6 });
  });

  test('leaky_relu', async () => {
    await unary('aten.leaky_relu.default', t('float32', [2, 3, 4]), { negative_slope: 0.01 });
    await unary('aten.leaky_relu.default', t('float32', [3, 4]), { negative_slope: 0.2 });
    await unary('aten.leaky_relu.default', t('float16', [3, 4]), { negative_slope: -1.5 });
  });

  test('elu, with the activation and composed for scale and input_scale', async () => {
    await unary('aten.elu.default', t('float32', [2, 3, 4]), { alpha: 1, scale: 1, input_scale: 1 });
    await unary('aten.elu.default', t('float32', [3, 4]), { alpha: 1.5, scale: 1, input_scale: 1 });
    await unary('aten.elu.default', t('float32', [3, 4]), { alpha: 1.6732632423543772, scale: 1.0507009873554805, input_scale: 1 });
    await unary('aten.elu.default', t('float32', [3, 4]), { alpha: 0.5, scale: 2, input_scale: 0.5 });
    await unary('aten.elu.default', t('float32', [3, 4]), { alpha: 0.5, scale: 1, input_scale: -2 });
    await unary('aten.elu.default', t('float16', [3, 4]), { alpha: 1, scale: 2, input_scale: 1 });
  });

  test('softplus: beta, and the threshold above which it is linear', async () => {
    const wide: In = { dtype: 'float32', shape: [6, 10] };
    const values = Array.from({ length: 60 }, (_, i) => -150 + i * 5.1);
    for (const [beta, threshold] of [
      [1, 20],
      [2, 5],
      [0.5, 1],
      [-1, 20],
    ]) {
      const g = opGraph('aten.softplus.default', [wide], (v) => ({ self: v[0]!, beta: beta!, threshold: threshold! }));
      await expectConvertedMatches(g, [fromNumbers('float32', [6, 10], values)]);
      await unary('aten.softplus.default', t('float32', [3, 4]), { beta: beta!, threshold: threshold! });
      await unary('aten.softplus.default', t('float16', [3, 4]), { beta: beta!, threshold: threshold! });
    }
  });

  test('_prelu_kernel with weights broadcast against x', async () => {
    await check('aten._prelu_kernel.default', [t('float32', [2, 3, 4, 5]), t('float32', [3, 1, 1])], (v) => ({ self: v[0]!, weight: v[1]! }));
    await check('aten._prelu_kernel.default', [t('float32', [2, 3]), t('float32', [1])], (v) => ({ self: v[0]!, weight: v[1]! }));
    await check('aten._prelu_kernel.default', [t('float16', [4, 3]), t('float16', [3])], (v) => ({ self: v[0]!, weight: v[1]! }));
    await check('aten._prelu_kernel.default', [t('float32', [3]), t('float32', [2, 3])], (v) => ({ self: v[0]!, weight: v[1]! }));
  });
});
