/**
 * NN converters: layer_norm / native_layer_norm (with statistics), rms_norm, batch norm in
 * inference (folded constants and run-time parameters), group_norm / native_group_norm,
 * with and without affine parameters, float32 and float16.
 */
import { check, f16, f32, layerKinds, refused, weight, type In } from './nn-helpers';

/** A positive variance-like input. */
const positive = (...shape: number[]): In => ({ dtype: 'float32', shape, constant: true, range: [0.5, 2] });

describe('layer_norm', () => {
  test.each([
    ['last dim, weight and bias', [2, 3, 8], [8], true, true],
    ['last two dims, weight only', [2, 3, 4], [3, 4], true, false],
    ['whole input, bias only', [3, 5], [3, 5], false, true],
    ['no affine', [4, 6], [6], false, false],
  ] as const)('layer_norm %s', async (_, shape, normalized, w, b) => {
    const inputs: In[] = [f32(...shape), ...(w ? [weight(...normalized)] : []), ...(b ? [weight(...normalized)] : [])];
    await check('aten.layer_norm.default', inputs, ([x, ...p]) => ({
      input: x!,
      normalized_shape: [...normalized],
      weight: w ? p[0]! : null,
      bias: b ? p[w ? 1 : 0]! : null,
      eps: 1e-5,
    }));
  });

  test('native_layer_norm: output, mean and rstd', async () => {
    await check('aten.native_layer_norm.default', [f32(2, 3, 8), weight(8), weight(8)], ([x, w, b]) => ({ input: x!, normalized_shape: [8], weight: w!, bias: b!, eps: 1e-5 }));
    await check('aten.native_layer_norm.default', [f32(4, 2, 3)], ([x]) => ({ input: x!, normalized_shape: [2, 3], weight: null, bias: null, eps: 1e-3 }));
  });

  test('float16 with run-time parameters', async () => {
    await check('aten.native_layer_norm.default', [f16(3, 16), f16(16), f16(16)], ([x, w, b]) => ({ input: x!, normalized_shape: [16], weight: w!, bias: b!, eps: 1e-5 }));
  });

  test('uses the normalization layer', () => {
    expect(layerKinds('aten.layer_norm.default', [f32(2, 8), weight(8), weight(8)], ([x, w, b]) => ({ input: x!, normalized_shape: [8], weight: w!, bias: b!, eps: 1e-5 }))).toContain(
      'normalization',
    );
  });
});

describe('rms_norm', () => {
  test('with weight, without, explicit and default eps', async () => {
    await check('aten.rms_norm.default', [f32(2, 3, 8), weight(8)], ([x, w]) => ({ input: x!, normalized_shape: [8], weight: w!, eps: 1e-6 }));
    await check('aten.rms_norm.default', [f32(2, 3, 4)], ([x]) => ({ input: x!, normalized_shape: [3, 4], weight: null, eps: null }));
  });

  test('float16 (computed in float32)', async () => {
    await check('aten.rms_norm.default', [f16(4, 32), f16(32)], ([x, w]) => ({ input: x!, normalized_shape: [32], weight: w!, eps: null }));
  });
});

describe('batch norm (inference)', () => {
  const args =
    (w: boolean, b: boolean) =>
    ([x, mean, variance, ...p]: import('../../lib/ir/graph').Value[]) => ({
      input: x!,
      weight: w ? p[0]! : null,
      bias: b ? p[w ? 1 : 0]! : null,
      running_mean: mean!,
      running_var: variance!,
      momentum: 0.1,
      eps: 1e-5,
    });

  test.each([
    ['constant weight and bias', [2, 3, 4, 5], true, true],
    ['no affine', [2, 3, 4, 5], false, false],
    ['rank 2 [N, C]', [4, 3], true, false],
    ['rank 3', [2, 3, 7], false, true],
  ] as const)('_native_batch_norm_legit_no_training %s', async (_, shape, w, b) => {
    const c = shape[1]!;
    const inputs: In[] = [f32(...shape), weight(c), positive(c), ...(w ? [weight(c)] : []), ...(b ? [weight(c)] : [])];
    await check('aten._native_batch_norm_legit_no_training.default', inputs, args(w, b));
  });

  test('constants fold into one scale and one shift', () => {
    const kinds = layerKinds('aten._native_batch_norm_legit_no_training.default', [f32(2, 3, 4, 4), weight(3), positive(3), weight(3), weight(3)], args(true, true));
    expect(kinds.filter((k) => k === 'elementwise')).toHaveLength(2);
  });

  test('run-time statistics and parameters', async () => {
    const inputs: In[] = [f32(2, 3, 4), f32(3), { dtype: 'float32', shape: [3], range: [0.5, 2] }, f32(3), f32(3)];
    await check('aten._native_batch_norm_legit_no_training.default', inputs, args(true, true));
  });

  test('batch_norm.default (training=False), float16', async () => {
    const inputs: In[] = [f16(2, 4, 3, 3), { ...weight(4), dtype: 'float16' }, { ...positive(4), dtype: 'float16' }, { ...weight(4), dtype: 'float16' }, { ...weight(4), dtype: 'float16' }];
    await check('aten.batch_norm.default', inputs, ([x, mean, variance, w, b]) => ({
      input: x!,
      weight: w!,
      bias: b!,
      running_mean: mean!,
      running_var: variance!,
      training: false,
      momentum: 0.1,
      eps: 1e-5,
      cudnn_enabled: true,
    }));
  });
});

describe('group norm', () => {
  test.each([
    ['2 groups, weight and bias', [2, 4, 3, 3], 2, true, true],
    ['1 group (layer norm over C, H, W), no affine', [2, 3, 4], 1, false, false],
    ['C groups (instance norm), weight only', [1, 3, 5, 2], 3, true, false],
  ] as const)('group_norm %s', async (_, shape, groups, w, b) => {
    const c = shape[1]!;
    const inputs: In[] = [f32(...shape), ...(w ? [weight(c)] : []), ...(b ? [weight(c)] : [])];
    await check('aten.group_norm.default', inputs, ([x, ...p]) => ({ input: x!, num_groups: groups, weight: w ? p[0]! : null, bias: b ? p[w ? 1 : 0]! : null, eps: 1e-5 }));
  });

  test('native_group_norm: output, mean and rstd per (sample, group)', async () => {
    await check('aten.native_group_norm.default', [f32(2, 6, 4, 4), weight(6), weight(6)], ([x, w, b]) => ({
      input: x!,
      weight: w!,
      bias: b!,
      N: 2,
      C: 6,
      HxW: 16,
      group: 3,
      eps: 1e-5,
    }));
  });

  test('float16', async () => {
    await check('aten.group_norm.default', [f16(2, 8, 4, 4), f16(8), f16(8)], ([x, w, b]) => ({ input: x!, num_groups: 4, weight: w!, bias: b!, eps: 1e-5 }));
  });

  test('refused: nothing in inference; training-mode batch_norm never reaches a converter', () => {
    // The IR itself rejects training=True, so no refusal reason is needed here.
    expect(() =>
      refused('aten.batch_norm.default', [f32(2, 3), weight(3), positive(3)], ([x, m, v]) => ({
        input: x!,
        weight: null,
        bias: null,
        running_mean: m!,
        running_var: v!,
        training: true,
        momentum: 0.1,
        eps: 1e-5,
        cudnn_enabled: true,
      })),
    ).toThrow(/eval\(\) mode/);
  });
});
