/**
 * NN converters: matmul (1-D operands, batches, broadcasting across ranks), mm, bmm,
 * addmm (beta/alpha), linear (1-D/2-D weights, bias, higher-rank inputs) and their refusals.
 */
import { check, f16, f32, layerKinds, refused, typed, weight } from './nn-helpers';

describe('matmul', () => {
  test.each([
    ['1-D x 1-D (dot)', [5], [5]],
    ['1-D x 2-D', [4], [4, 3]],
    ['2-D x 1-D', [3, 4], [4]],
    ['1-D x batched', [4], [2, 4, 3]],
    ['batched x 1-D', [2, 3, 3, 4], [4]],
    ['2-D x 2-D', [3, 4], [4, 5]],
    ['batched x 2-D (rank alignment)', [2, 3, 4], [4, 5]],
    ['2-D x batched', [3, 4], [2, 2, 4, 5]],
    ['broadcast batch dims', [2, 1, 3, 4], [1, 3, 4, 2]],
  ])('%s', async (_, a, b) => {
    await check('aten.matmul.default', [f32(...a), f32(...b)], ([x, y]) => ({ self: x!, other: y! }));
  });

  test('float16', async () => {
    await check('aten.matmul.default', [f16(2, 3, 8), f16(8, 4)], ([x, y]) => ({ self: x!, other: y! }));
  });

  test('a 1-D operand uses a vector operation, not reshapes around the product', () => {
    const kinds = layerKinds('aten.matmul.default', [f32(2, 3, 4), f32(4)], ([x, y]) => ({ self: x!, other: y! }));
    expect(kinds).toEqual(['shuffle', 'matmul']);
  });

  test('refused: integer operands (TensorRT multiplies only floats)', () => {
    expect(refused('aten.matmul.default', [typed('int32', 2, 3), typed('int32', 3, 2)], ([x, y]) => ({ self: x!, other: y! }))).toMatch(
      /self is int32; TensorRT computes this only in floating point/,
    );
  });
});

describe('mm / bmm / addmm', () => {
  test('mm and bmm', async () => {
    await check('aten.mm.default', [f32(3, 4), f32(4, 6)], ([x, y]) => ({ self: x!, mat2: y! }));
    await check('aten.bmm.default', [f32(2, 3, 4), f32(2, 4, 5)], ([x, y]) => ({ self: x!, mat2: y! }));
  });

  test.each([
    ['defaults', [3, 5], 1, 1],
    ['beta 0.5 alpha 2, row bias', [5], 0.5, 2],
    ['beta 0 ignores self', [3, 5], 0, 1],
    ['column bias, alpha -1', [3, 1], 1, -1],
  ] as const)('addmm %s', async (_, bias, beta, alpha) => {
    await check('aten.addmm.default', [f32(...bias), f32(3, 4), f32(4, 5)], ([b, x, y]) => ({ self: b!, mat1: x!, mat2: y!, beta, alpha }));
  });

  test('refused: int64 mm', () => {
    expect(refused('aten.mm.default', [typed('int64', 2, 3), typed('int64', 3, 2)], ([x, y]) => ({ self: x!, mat2: y! }))).toMatch(/int64/);
  });
});

describe('linear', () => {
  test.each([
    ['2-D input, bias', [4, 6], [3, 6], [3]],
    ['3-D input (rank-aligned weight), bias', [2, 5, 6], [3, 6], [3]],
    ['4-D input, no bias', [2, 2, 5, 6], [7, 6], null],
    ['1-D input', [6], [3, 6], [3]],
    ['1-D weight', [4, 6], [6], null],
    ['1-D input and weight, scalar bias', [6], [6], []],
  ] as const)('%s', async (_, x, w, b) => {
    const inputs = [f32(...x), weight(...w), ...(b === null ? [] : [weight(...b)])];
    await check('aten.linear.default', inputs, ([i, wt, bias]) => ({ input: i!, weight: wt!, bias: bias ?? null }));
  });

  test('weights as graph inputs, float16', async () => {
    await check('aten.linear.default', [f16(3, 8), f16(4, 8), f16(4)], ([i, w, b]) => ({ input: i!, weight: w!, bias: b! }));
  });

  test('multiplies by the transposed weight in the matmul layer itself', () => {
    const kinds = layerKinds('aten.linear.default', [f32(4, 6), weight(3, 6)], ([i, w]) => ({ input: i!, weight: w!, bias: null }));
    expect(kinds).toEqual(['constant', 'matmul']);
  });
});
