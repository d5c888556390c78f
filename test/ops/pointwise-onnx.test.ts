/**
 * ONNX pointwise ops: our importer + interpreter against onnxruntime on one-node models, with
 * broadcasting, 0-d and size-0 shapes, integer and float16 types, attributes and opsets.
 */
import { selectConverter } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { loadOnnx } from '../../lib/frontends/onnx';
import type { DType } from '../../lib/ir/dtype';
import { formatType } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { Tensor, type Shape } from '../../lib/ir/tensor';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, floatAttr, type OrtOpSpec } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const rng = new Random(20240611);
const FP16 = { rtol: 2e-3, atol: 2e-3 };

const f32 = (shape: Shape, lo = -3, hi = 3): Tensor => rng.tensor(shape, 'float32', lo, hi);
const f16 = (shape: Shape, lo = -3, hi = 3): Tensor => rng.tensor(shape, 'float16', lo, hi);
const ints = (shape: Shape, dtype: DType = 'int64', lo = -9, hi = 9): Tensor => rng.intTensor(shape, lo, hi, dtype);
const bools = (shape: Shape): Tensor => rng.intTensor(shape, 0, 1, 'bool');
/** Integers without zeros (divisors). */
const nonzero = (shape: Shape, dtype: DType = 'int64', lo = -9, hi = 9): Tensor => {
  const t = ints(shape, dtype, lo, hi);
  return Tensor.from(
    dtype,
    shape,
    t.toArray().map((v) => (v === 0 ? 3 : v)),
  );
};

/** Shape pairs every binary op is run on: broadcasting, scalars, ones and size 0. */
const BROADCAST: Array<[Shape, Shape]> = [
  [
    [2, 3, 4],
    [3, 1],
  ],
  [[2, 3, 4], [4]],
  [[], [2, 3]],
  [[3, 1], []],
  [[1], [5]],
  [
    [2, 0, 3],
    [1, 3],
  ],
  [
    [4, 1, 2],
    [1, 3, 1],
  ],
];

const run = (spec: OrtOpSpec, tol?: { rtol: number; atol: number }): Promise<unknown> => expectOnnxMatchesOrt(spec, tol);

describe('ONNX binary arithmetic vs onnxruntime', () => {
  for (const opType of ['Add', 'Sub', 'Mul', 'Div']) {
    describe(opType, () => {
      for (const opset of [13, 14]) {
        test.each(BROADCAST)(`float32 %j with %j, opset ${opset}`, async (a, b) => {
          await run({ opType, opset, inputs: [f32(a), opType === 'Div' ? f32(b, 0.5, 3) : f32(b)] });
        });
      }
      for (const dtype of ['int64', 'int32'] as const) {
        test.each(BROADCAST.slice(0, 5))(`${dtype} %j with %j`, async (a, b) => {
          await run({ opType, opset: 14, inputs: [ints(a, dtype), nonzero(b, dtype)] });
        });
      }
      test('float16', async () => {
        await run({ opType, opset: 14, inputs: [f16([2, 3, 4]), f16([4], 0.5, 2)] }, FP16);
      });
      test('a constant operand (initializer)', async () => {
        await run({ opType, opset: 17, inputs: [f32([2, 3]), { constant: f32([3], 1, 2) }] });
      });
    });
  }

  test('integer Div truncates toward zero, like C', async () => {
    const a = Tensor.from('int64', [6], [7, -7, 7, -7, 1, -1]);
    const b = Tensor.from('int64', [6], [2, 2, -2, -2, 3, 3]);
    const [out] = (await run({ opType: 'Div', opset: 14, inputs: [a, b] })) as Tensor[];
    expect(out!.toArray()).toEqual([3, -3, -3, 3, 0, 0]);
  });

  describe('Pow', () => {
    test.each(BROADCAST.slice(0, 6))('float32 %j ** %j', async (a, b) => {
      await run({ opType: 'Pow', opset: 15, inputs: [f32(a, 0.1, 3), f32(b, -2, 2)] });
    });
    test('float32 base, int64 exponent', async () => {
      await run({ opType: 'Pow', opset: 13, inputs: [f32([2, 3], -3, 3), ints([3], 'int64', 0, 4)] });
    });
    test('int32 base, int32 exponent', async () => {
      await run({ opType: 'Pow', opset: 15, inputs: [ints([2, 3], 'int32', -5, 5), ints([3], 'int32', 0, 5)] });
    });
    test('int64 base, float32 exponent keeps the base type', async () => {
      const base = ints([2, 4], 'int64', 1, 9);
      const exponent = Tensor.from('float32', [4], [0, 1, 2, 0.5]);
      await run({ opType: 'Pow', opset: 15, inputs: [base, exponent] });
    });
    test('float16 base, float32 exponent keeps float16', async () => {
      await run({ opType: 'Pow', opset: 15, inputs: [f16([3, 2], 0.5, 2), f32([2], -1, 2)] }, FP16);
    });
    test('a constant scalar exponent', async () => {
      await run({ opType: 'Pow', opset: 13, inputs: [f32([2, 3]), { constant: Tensor.scalar('float32', 2) }] });
    });
  });

  describe('Mod', () => {
    test.each(BROADCAST.slice(0, 5))('int64 fmod=0 (sign of the divisor) %j, %j', async (a, b) => {
      await run({ opType: 'Mod', opset: 13, inputs: [ints(a, 'int64', -20, 20), nonzero(b)] });
    });
    test('int32 fmod=1 (sign of the dividend)', async () => {
      await run({ opType: 'Mod', opset: 13, attributes: { fmod: 1 }, inputs: [ints([3, 4], 'int32', -20, 20), nonzero([4], 'int32')] });
    });
    test.each(BROADCAST.slice(0, 5))('float32 fmod=1 %j, %j', async (a, b) => {
      await run({ opType: 'Mod', opset: 13, attributes: { fmod: 1 }, inputs: [f32(a, -10, 10), f32(b, 0.5, 3)] });
    });
    test('float32 with negative divisors, fmod=1', async () => {
      await run({ opType: 'Mod', opset: 13, attributes: { fmod: 1 }, inputs: [f32([2, 5], -10, 10), f32([5], -3, -0.5)] });
    });
  });
});

describe('ONNX variadic Max, Min, Sum, Mean vs onnxruntime', () => {
  for (const opType of ['Max', 'Min', 'Sum', 'Mean']) {
    test(`${opType} of one input`, async () => {
      await run({ opType, opset: 13, inputs: [f32([2, 3])] });
    });
    test(`${opType} of two broadcast inputs`, async () => {
      await run({ opType, opset: 13, inputs: [f32([2, 3, 4]), f32([3, 1])] });
    });
    test(`${opType} of three inputs with a scalar`, async () => {
      await run({ opType, opset: 13, inputs: [f32([4]), f32([2, 1]), f32([])] });
    });
    test(`${opType} with a size-0 dim`, async () => {
      await run({ opType, opset: 13, inputs: [f32([0, 3]), f32([3])] });
    });
    test(`${opType} float16`, async () => {
      await run({ opType, opset: 13, inputs: [f16([2, 3]), f16([3])] }, FP16);
    });
    if (opType === 'Max' || opType === 'Min') {
      // ONNX Sum and Mean are defined for floating-point types only.
      test(`${opType} int64 and int32`, async () => {
        await run({ opType, opset: 13, inputs: [ints([2, 3]), ints([3]), ints([2, 1])] });
        await run({ opType, opset: 13, inputs: [ints([2, 3], 'int32'), ints([3], 'int32')] });
      });
    }
  }
});

describe('ONNX comparisons and logical ops vs onnxruntime', () => {
  for (const opType of ['Equal', 'Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual']) {
    describe(opType, () => {
      test.each(BROADCAST)('float32 %j with %j', async (a, b) => {
        // Values on a coarse grid so that ties occur.
        const grid = (s: Shape): Tensor => Tensor.from('float32', s, ints(s, 'int32', -2, 2).toArray().map((v) => v / 2));
        await run({ opType, opset: 13, inputs: [grid(a), grid(b)] });
      });
      test.each(BROADCAST.slice(0, 4))('int64 %j with %j', async (a, b) => {
        await run({ opType, opset: 16, inputs: [ints(a, 'int64', -2, 2), ints(b, 'int64', -2, 2)] });
      });
      test('int32', async () => {
        await run({ opType, opset: 19, inputs: [ints([3, 4], 'int32', -2, 2), ints([4], 'int32', -2, 2)] });
      });
      test('float16', async () => {
        const a = Tensor.from('float16', [2, 3], [0.5, 1, -1, 2, 0, 0.25]);
        const b = Tensor.from('float16', [3], [0.5, 2, 0]);
        await run({ opType, opset: 13, inputs: [a, b] });
      });
    });
  }
  test('Equal on bool', async () => {
    await run({ opType: 'Equal', opset: 13, inputs: [bools([3, 4]), bools([4])] });
  });
  test('Equal with NaN is false', async () => {
    await run({ opType: 'Equal', opset: 13, inputs: [Tensor.from('float32', [3], [NaN, 1, NaN]), Tensor.from('float32', [3], [NaN, 1, 2])] });
  });
  for (const opType of ['And', 'Or', 'Xor']) {
    test.each(BROADCAST.slice(0, 6))(`${opType} %j with %j`, async (a, b) => {
      await run({ opType, opset: 13, inputs: [bools(a), bools(b)] });
    });
  }
  test('Not', async () => {
    await run({ opType: 'Not', opset: 13, inputs: [bools([2, 3])] });
    await run({ opType: 'Not', opset: 13, inputs: [bools([0, 3])] });
    await run({ opType: 'Not', opset: 13, inputs: [bools([])] });
  });
});

describe('ONNX Where vs onnxruntime', () => {
  const cases: Array<[Shape, Shape, Shape]> = [
    [[2, 3], [2, 3], [2, 3]],
    [[3], [2, 1], []],
    [[2, 1, 4], [3, 1], [4]],
    [[], [2], [3, 1]],
    [[0, 2], [2], [1]],
  ];
  for (const opset of [13, 16]) {
    test.each(cases)(`float32: cond %j, x %j, y %j, opset ${opset}`, async (c, x, y) => {
      await run({ opType: 'Where', opset, inputs: [bools(c), f32(x), f32(y)] });
    });
  }
  test('int64, int32 and uint8 branches', async () => {
    // (onnxruntime's CPU Where has no bool kernel.)
    await run({ opType: 'Where', opset: 13, inputs: [bools([2, 3]), ints([3]), ints([2, 1])] });
    await run({ opType: 'Where', opset: 16, inputs: [bools([2, 3]), ints([3], 'int32'), ints([2, 1], 'int32')] });
    await run({ opType: 'Where', opset: 16, inputs: [bools([2, 3]), ints([3], 'uint8', 0, 255), ints([2, 1], 'uint8', 0, 255)] });
  });
  test('float16 branches', async () => {
    await run({ opType: 'Where', opset: 16, inputs: [bools([2, 3]), f16([3]), f16([2, 1])] });
  });
});

describe('ONNX unary math vs onnxruntime', () => {
  const floatUnary: Array<[string, number, number]> = [
    ['Neg', -3, 3],
    ['Abs', -3, 3],
    ['Sign', -3, 3],
    ['Exp', -3, 3],
    ['Log', 0.01, 5],
    ['Sqrt', 0, 5],
    ['Reciprocal', 0.2, 3],
    ['Sin', -4, 4],
    ['Cos', -4, 4],
    ['Tan', -1.4, 1.4],
    ['Tanh', -4, 4],
    ['Sigmoid', -6, 6],
    ['Relu', -3, 3],
    ['Erf', -3, 3],
    ['Floor', -3, 3],
    ['Ceil', -3, 3],
  ];
  for (const [opType, lo, hi] of floatUnary) {
    describe(opType, () => {
      for (const opset of [13, 18]) {
        test(`float32 [2, 3, 4], opset ${opset}`, async () => {
          await run({ opType, opset, inputs: [f32([2, 3, 4], lo, hi)] });
        });
      }
      test('scalar and size-0 inputs', async () => {
        await run({ opType, opset: 13, inputs: [f32([], lo, hi)] });
        await run({ opType, opset: 13, inputs: [f32([3, 0], lo, hi)] });
      });
    });
  }
  for (const opType of ['Exp', 'Sigmoid', 'Tanh', 'Relu', 'Abs', 'Neg', 'Sqrt']) {
    test(`${opType} float16`, async () => {
      await run({ opType, opset: 14, inputs: [f16([3, 4], opType === 'Sqrt' ? 0 : -3, 3)] }, FP16);
    });
  }
  for (const [opType, opset] of [
    ['Neg', 13],
    ['Abs', 13],
    ['Sign', 13],
  ] as const) {
    test(`${opType} on int64 and int32`, async () => {
      await run({ opType, opset, inputs: [ints([2, 5])] });
      await run({ opType, opset, inputs: [ints([2, 5], 'int32')] });
    });
  }
  test('Relu on int32 and int8 (opset 14)', async () => {
    // onnxruntime implements integer Relu for int32 and int8.
    await run({ opType: 'Relu', opset: 14, inputs: [ints([2, 5], 'int32')] });
    await run({ opType: 'Relu', opset: 14, inputs: [ints([2, 5], 'int8')] });
  });
  test('Round: halves go to even', async () => {
    const x = Tensor.from('float32', [10], [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 0]);
    await run({ opType: 'Round', opset: 13, inputs: [x] });
    await run({ opType: 'Round', opset: 19, inputs: [f32([3, 4], -5, 5)] });
  });
  test('Sign of zero and Relu of NaN', async () => {
    await run({ opType: 'Sign', opset: 13, inputs: [Tensor.from('float32', [3], [0, -0, 2])] });
    await run({ opType: 'Relu', opset: 13, inputs: [Tensor.from('float32', [3], [NaN, -1, 1])] });
  });
  test('IsNaN', async () => {
    const x = Tensor.from('float32', [2, 3], [NaN, 1, Infinity, -Infinity, 0, NaN]);
    await run({ opType: 'IsNaN', opset: 13, inputs: [x] });
    await run({ opType: 'IsNaN', opset: 20, inputs: [x] });
    await run({ opType: 'IsNaN', opset: 13, inputs: [Tensor.from('float16', [3], [NaN, 1, 0])] });
  });
  describe('IsInf', () => {
    const x = Tensor.from('float32', [2, 3], [NaN, 1, Infinity, -Infinity, 0, Infinity]);
    test.each([
      [{}],
      [{ detect_positive: 0 }],
      [{ detect_negative: 0 }],
      [{ detect_positive: 0, detect_negative: 0 }],
    ])('attributes %j', async (attributes) => {
      await run({ opType: 'IsInf', opset: 13, attributes, inputs: [x] });
      await run({ opType: 'IsInf', opset: 20, attributes, inputs: [x] });
    });
  });
});

describe('ONNX activations vs onnxruntime', () => {
  test.each(['none', 'tanh'])('Gelu approximate=%s (opset 20, 21)', async (approximate) => {
    await run({ opType: 'Gelu', opset: 20, attributes: { approximate }, inputs: [f32([2, 3, 4], -4, 4)] });
    await run({ opType: 'Gelu', opset: 21, attributes: { approximate }, inputs: [f32([5])] });
  });
  test('Gelu default attribute', async () => {
    await run({ opType: 'Gelu', opset: 20, inputs: [f32([3, 4], -4, 4)] });
  });
  describe('HardSigmoid', () => {
    test('defaults alpha 0.2, beta 0.5', async () => {
      await run({ opType: 'HardSigmoid', opset: 13, inputs: [f32([3, 4], -5, 5)] });
    });
    test('custom alpha and beta', async () => {
      await run({ opType: 'HardSigmoid', opset: 13, attributes: { alpha: floatAttr(0.3), beta: floatAttr(0.1) }, inputs: [f32([3, 4], -5, 5)] });
    });
    test("PyTorch's alpha 1/6 (maps to aten.hardsigmoid)", async () => {
      const spec = { opType: 'HardSigmoid', opset: 17, attributes: { alpha: floatAttr(1 / 6), beta: floatAttr(0.5) }, inputs: [f32([3, 4], -5, 5)] };
      await run(spec);
      expect(loadOnnx(buildSingleOpModel(spec)).calls().map((n) => n.target)).toEqual(['aten.hardsigmoid.default']);
    });
    test('float16', async () => {
      await run({ opType: 'HardSigmoid', opset: 13, inputs: [f16([3, 4], -5, 5)] }, FP16);
    });
  });
  test('HardSwish', async () => {
    await run({ opType: 'HardSwish', opset: 14, inputs: [f32([2, 3, 4], -5, 5)] });
    await run({ opType: 'HardSwish', opset: 14, inputs: [f32([0, 4])] });
  });
  test.each([[undefined], [0.2], [1.5]])('LeakyRelu alpha %p', async (alpha) => {
    const attributes = alpha === undefined ? {} : { alpha: floatAttr(alpha) };
    await run({ opType: 'LeakyRelu', opset: 16, attributes, inputs: [f32([2, 3, 4])] });
    await run({ opType: 'LeakyRelu', opset: 13, attributes, inputs: [f32([])] });
  });
  test.each([[undefined], [0.5], [2]])('Elu alpha %p', async (alpha) => {
    const attributes = alpha === undefined ? {} : { alpha: floatAttr(alpha) };
    await run({ opType: 'Elu', opset: 13, attributes, inputs: [f32([2, 3, 4])] });
  });
  test('Softplus', async () => {
    await run({ opType: 'Softplus', opset: 13, inputs: [f32([2, 3, 4], -30, 30)] });
    await run({ opType: 'Softplus', opset: 13, inputs: [f16([4], -3, 3)] }, FP16);
  });
  test('Softsign', async () => {
    await run({ opType: 'Softsign', opset: 13, inputs: [f32([2, 3, 4], -10, 10)] });
    await run({ opType: 'Softsign', opset: 13, inputs: [f32([])] });
  });
  describe('PRelu', () => {
    const cases: Array<[Shape, Shape]> = [
      [
        [2, 3, 4, 5],
        [3, 1, 1],
      ],
      [[2, 3, 4], [4]],
      [[2, 3], []],
      [
        [2, 3],
        [2, 3],
      ],
      [
        [0, 3],
        [3],
      ],
    ];
    for (const opset of [13, 16]) {
      test.each(cases)(`x %j, slope %j, opset ${opset}`, async (x, slope) => {
        await run({ opType: 'PRelu', opset, inputs: [f32(x), f32(slope, 0, 0.5)] });
      });
    }
    test('constant slope (weights)', async () => {
      await run({ opType: 'PRelu', opset: 13, inputs: [f32([1, 3, 2, 2]), { constant: f32([3, 1, 1], 0, 0.5) }] });
    });
    test('int32 (opset 16)', async () => {
      await run({ opType: 'PRelu', opset: 16, inputs: [ints([2, 4], 'int32'), ints([4], 'int32', 0, 3)] });
    });
  });
});

describe('ONNX Clip vs onnxruntime', () => {
  const x = (): Tensor => f32([2, 3, 4], -4, 4);
  const s = (v: number, dtype: DType = 'float32'): Tensor => Tensor.scalar(dtype, v);
  test.each([13, 18])('constant min and max, opset %d', async (opset) => {
    await run({ opType: 'Clip', opset, inputs: [x(), { constant: s(-1) }, { constant: s(2) }] });
  });
  test('runtime min and max inputs', async () => {
    await run({ opType: 'Clip', opset: 13, inputs: [x(), s(-1.5), s(0.5)] });
  });
  test('only min / only max / neither', async () => {
    await run({ opType: 'Clip', opset: 13, inputs: [x(), { constant: s(0) }] });
    await run({ opType: 'Clip', opset: 13, inputs: [x(), null, { constant: s(1) }] });
    await run({ opType: 'Clip', opset: 13, inputs: [x(), null, s(1)] });
    await run({ opType: 'Clip', opset: 13, inputs: [x()] });
  });
  test('min > max gives max', async () => {
    await run({ opType: 'Clip', opset: 13, inputs: [x(), { constant: s(2) }, { constant: s(1) }] });
  });
  test('int32 and int64', async () => {
    await run({ opType: 'Clip', opset: 13, inputs: [ints([3, 4], 'int32'), { constant: s(-2, 'int32') }, { constant: s(5, 'int32') }] });
    await run({ opType: 'Clip', opset: 13, inputs: [ints([3, 4]), s(-2, 'int64'), s(5, 'int64')] });
  });
  test('float16, scalar and size-0 inputs', async () => {
    await run({ opType: 'Clip', opset: 13, inputs: [f16([3, 4]), { constant: s(-1, 'float16') }, { constant: s(1, 'float16') }] }, FP16);
    await run({ opType: 'Clip', opset: 13, inputs: [f32([]), { constant: s(-1) }, { constant: s(1) }] });
    await run({ opType: 'Clip', opset: 13, inputs: [f32([0, 3]), { constant: s(-1) }, { constant: s(1) }] });
  });
});

describe('ONNX Cast and CastLike vs onnxruntime', () => {
  // ONNX TensorProto element types.
  const CODE: Partial<Record<DType, number>> = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11 };
  const sources: Array<[string, () => Tensor]> = [
    ['float32', () => f32([2, 3, 4], -100, 100)],
    ['int64', () => ints([2, 3, 4], 'int64', -100, 100)],
    ['int32', () => ints([2, 3, 4], 'int32', -100, 100)],
    ['bool', () => bools([2, 3, 4])],
    ['float16', () => f16([2, 3, 4], -100, 100)],
  ];
  const targets: DType[] = ['float32', 'int64', 'int32', 'bool', 'float16', 'float64', 'int8'];
  for (const [from, make] of sources) {
    for (const to of targets) {
      test(`${from} → ${to}`, async () => {
        await run({ opType: 'Cast', opset: 13, attributes: { to: CODE[to]! }, inputs: [make()] });
      });
    }
  }
  test.each([19, 21])('opset %d (saturate attribute ignored for non-float8 targets)', async (opset) => {
    await run({ opType: 'Cast', opset, attributes: { to: 6 }, inputs: [f32([3, 4], -50, 50)] });
    await run({ opType: 'Cast', opset, attributes: { to: 1, saturate: 1 }, inputs: [ints([3, 4])] });
  });
  test('int64 → int32 wraps', async () => {
    const x = Tensor.from('int64', [3], [2n ** 31n + 5n, -(2n ** 33n) - 1n, 7n]);
    await run({ opType: 'Cast', opset: 13, attributes: { to: 6 }, inputs: [x] });
  });
  test('scalar and size-0 inputs', async () => {
    await run({ opType: 'Cast', opset: 13, attributes: { to: 7 }, inputs: [f32([], 0, 10)] });
    await run({ opType: 'Cast', opset: 13, attributes: { to: 7 }, inputs: [f32([0, 2])] });
  });
  test('CastLike (opset 15, 19, 21)', async () => {
    await run({ opType: 'CastLike', opset: 15, inputs: [f32([2, 3], -50, 50), ints([1], 'int32')] });
    await run({ opType: 'CastLike', opset: 19, inputs: [ints([2, 3]), f16([])] });
    await run({ opType: 'CastLike', opset: 21, inputs: [f32([2, 3]), f32([4])] });
  });
});

describe('ONNX Dropout vs onnxruntime', () => {
  test('inference: identity', async () => {
    await run({ opType: 'Dropout', opset: 13, inputs: [f32([2, 3, 4])] });
    await run({ opType: 'Dropout', opset: 13, inputs: [f32([2, 3]), { constant: Tensor.scalar('float32', 0.3) }] });
  });
  test('training_mode false, with the mask output', async () => {
    const inputs = [f32([2, 3]), { constant: Tensor.scalar('float32', 0.5) }, { constant: Tensor.scalar('bool', 0) }];
    await run({ opType: 'Dropout', opset: 13, inputs, outputCount: 2 });
    await run({ opType: 'Dropout', opset: 18, inputs: [f32([0, 3])], outputCount: 2 });
  });
  test('training_mode true with ratio 0 is the identity', async () => {
    const inputs = [f32([2, 3]), { constant: Tensor.scalar('float32', 0) }, { constant: Tensor.scalar('bool', 1) }];
    await run({ opType: 'Dropout', opset: 13, inputs });
  });
});

describe('ONNX Dropout with training_mode a graph input', () => {
  const x = f32([2, 3]);
  const spec = (ratio: OrtOpSpec['inputs'][number], training: boolean): OrtOpSpec => ({ opType: 'Dropout', opset: 22, inputs: [x, ratio, Tensor.scalar('bool', training ? 1 : 0)], outputCount: 2 });

  test('a run that does not train, or trains with ratio 0, matches onnxruntime: the input and an all-true mask', async () => {
    await run(spec({ constant: Tensor.scalar('float32', 0.5) }, false));
    await run(spec(Tensor.scalar('float32', 0.75), false));
    await run(spec(Tensor.scalar('float32', 0), true));
    // No ratio: 0.5 by default, which matters only when training.
    await run({ opType: 'Dropout', opset: 22, inputs: [x, null, Tensor.scalar('bool', 0)] });
  });

  test('the node is trt.dropout_onnx, which has no converter; a constant ratio 0 needs no node', () => {
    const g = loadOnnx(buildSingleOpModel(spec(Tensor.scalar('float32', 0.5), false)));
    const node = g.calls().find((n) => n.target === 'trt.dropout_onnx')!;
    expect(node).toBeDefined();
    expect(selectConverter(node).ok).toBe(false);
    const identity = loadOnnx(buildSingleOpModel(spec({ constant: Tensor.scalar('float32', 0) }, true)));
    expect(identity.calls().map((n) => n.target)).not.toContain('trt.dropout_onnx');
  });

  test('a run that trains with a nonzero ratio is E_BAD_INPUT naming the node and the ratio', () => {
    const s = spec(Tensor.scalar('float32', 0.75), true);
    const g = loadOnnx(buildSingleOpModel(s));
    expect(() => interpret(g, s.inputs as Tensor[])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringMatching(/Dropout_0.*ratio 0\.75/) }));
  });

  test('a training_mode that is not a bool scalar is E_BAD_MODEL', () => {
    const bad = { opType: 'Dropout', opset: 22, inputs: [x, null, Tensor.from('bool', [1], [0])] };
    expect(() => loadOnnx(buildSingleOpModel(bad))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('training_mode must be a bool scalar') }));
  });
});

describe('ONNX pointwise errors name the node', () => {
  const load = (spec: OrtOpSpec): unknown => loadOnnx(buildSingleOpModel(spec));
  const expectError = (spec: OrtOpSpec, code: string, pattern: RegExp): void => {
    let caught: unknown;
    try {
      load(spec);
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ code });
    expect((caught as Error).message).toMatch(pattern);
  };
  test('Mod with fmod=2 is E_BAD_MODEL', () => {
    expectError({ opType: 'Mod', opset: 13, attributes: { fmod: 2 }, inputs: [ints([2]), ints([2])] }, 'E_BAD_MODEL', /"Mod_0".*fmod/);
  });
  test('float Mod with fmod=0 is E_BAD_MODEL (ONNX requires fmod=1 for floats)', () => {
    expectError({ opType: 'Mod', opset: 13, inputs: [f32([2]), f32([2])] }, 'E_BAD_MODEL', /"Mod_0"/);
  });
  test('Gelu before opset 20 is E_UNSUPPORTED_OP', () => {
    expectError({ opType: 'Gelu', opset: 17, inputs: [f32([2])] }, 'E_UNSUPPORTED_OP', /"Gelu_0".*opset 20/);
  });
  test('Gelu with a bad approximate is E_BAD_MODEL', () => {
    expectError({ opType: 'Gelu', opset: 20, attributes: { approximate: 'fast' }, inputs: [f32([2])] }, 'E_BAD_MODEL', /"Gelu_0".*approximate/);
  });
  test('Cast to STRING is E_UNSUPPORTED_OP', () => {
    expectError({ opType: 'Cast', opset: 13, attributes: { to: 8 }, inputs: [f32([2])] }, 'E_UNSUPPORTED_OP', /"Cast_0".*STRING/);
  });
  test('Cast without "to" is E_BAD_MODEL', () => {
    expectError({ opType: 'Cast', opset: 13, inputs: [f32([2])] }, 'E_BAD_MODEL', /"Cast_0".*to/);
  });
  test('Dropout in training mode is E_UNSUPPORTED_OP', () => {
    const inputs = [f32([2, 3]), { constant: Tensor.scalar('float32', 0.5) }, { constant: Tensor.scalar('bool', 1) }];
    expectError({ opType: 'Dropout', opset: 13, inputs }, 'E_UNSUPPORTED_OP', /"Dropout_0".*training/);
  });
  test('Add of mismatched types is E_BAD_MODEL', () => {
    expectError({ opType: 'Add', opset: 14, inputs: [f32([2]), ints([2])] }, 'E_BAD_MODEL', /"Add_0".*element type/);
  });
  test('Add of shapes that do not broadcast is E_BAD_MODEL', () => {
    expectError({ opType: 'Add', opset: 14, inputs: [f32([2, 3]), f32([4])] }, 'E_BAD_MODEL', /"Add_0".*broadcast/);
  });
  test('Clip with a non-scalar bound is E_BAD_MODEL', () => {
    expectError({ opType: 'Clip', opset: 13, inputs: [f32([2, 3]), f32([3])] }, 'E_BAD_MODEL', /"Clip_0".*scalar/);
  });
});

describe('ONNX pointwise ops on symbolic shapes', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { onnx } = require('onnx-proto');
  /** The single-op model with input dims replaced by names where `dims` says so. */
  function symbolic(spec: OrtOpSpec, dims: Array<Array<string | null>>): Uint8Array {
    const model = onnx.ModelProto.decode(buildSingleOpModel(spec));
    model.graph.input.forEach((input: { type: { tensorType: { shape: { dim: Array<Record<string, unknown>> } } } }, i: number) => {
      input.type.tensorType.shape.dim.forEach((d, axis) => {
        const name = dims[i]?.[axis];
        if (name) {
          delete d.dimValue;
          d.dimParam = name;
        }
      });
    });
    return onnx.ModelProto.encode(model).finish();
  }
  test('Add, Where, Mul and Clip infer exact symbolic shapes', () => {
    const x = f32([2, 3]);
    const y = f32([3]);
    const add = loadOnnx(symbolic({ opType: 'Add', opset: 14, inputs: [x, y] }, [['batch', null], [null]]));
    expect(formatType(add.outputs[0]!.type)).toBe('float32[batch, 3]');
    const [sum] = interpret(add, [x, y]);
    expect(sum!.toArray()).toEqual(x.toArray().map((v, i) => Math.fround(v + y.toArray()[i % 3]!)));

    const where = loadOnnx(symbolic({ opType: 'Where', opset: 16, inputs: [bools([2, 1]), f32([1, 4]), f32([])] }, [['n', null], [null, 'm'], []]));
    expect(formatType(where.outputs[0]!.type)).toBe('float32[n, m]');

    const mul = loadOnnx(symbolic({ opType: 'Mul', opset: 14, inputs: [f32([2, 3]), f32([2, 3])] }, [['a', null], ['b', null]]));
    expect(formatType(mul.outputs[0]!.type)).toBe('float32[max(a, b), 3]');

    const clip = loadOnnx(symbolic({ opType: 'Clip', opset: 13, inputs: [f32([2, 3]), { constant: Tensor.scalar('float32', 0) }] }, [['n', 'k']]));
    expect(formatType(clip.outputs[0]!.type)).toBe('float32[n, k]');
  });
});
