/**
 * NN family, normalization: ONNX BatchNormalization, LayerNormalization, GroupNormalization
 * (opset 18 per-group and 21 per-channel scale) and InstanceNormalization against
 * onnxruntime; ATen-only ops (rms_norm, native_layer_norm's statistics, native_group_norm,
 * batch norm) against hand-derived values; symbolic inference.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { formatShape, sym } from '../../lib/ir/symbolic';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, floatAttr } from '../helpers/ort-single-op';
import { expectValues, f32, run } from '../helpers/ops-setup';
import { Random } from '../helpers/random';

describe('ONNX BatchNormalization against onnxruntime', () => {
  const rng = new Random(301);
  it.each([[[2, 3, 4, 5]], [[2, 3]], [[1, 3, 6]], [[2, 3, 2, 2, 2]]])('input %j', async (shape) => {
    const c = shape[1]!;
    const inputs = [rng.tensor(shape), rng.tensor([c]), rng.tensor([c]), rng.tensor([c]), rng.tensor([c], 'float32', 0.1, 2)];
    for (const opset of [13, 15]) await expectOnnxMatchesOrt({ opType: 'BatchNormalization', inputs, attributes: { epsilon: floatAttr(1e-3) }, opset });
  });

  it('with constant statistics (initializers)', async () => {
    const inputs = [rng.tensor([2, 4, 3]), ...[0, 1, 2].map(() => ({ constant: rng.tensor([4]) })), { constant: rng.tensor([4], 'float32', 0.5, 1.5) }];
    await expectOnnxMatchesOrt({ opType: 'BatchNormalization', inputs, opset: 14 });
  });

  it('training_mode=1 normalizes with the batch statistics and updates the running ones', async () => {
    const inputs = [rng.tensor([2, 3, 4]), rng.tensor([3]), rng.tensor([3]), rng.tensor([3]), rng.tensor([3], 'float32', 0.1, 1)];
    await expectOnnxMatchesOrt({ opType: 'BatchNormalization', inputs, attributes: { training_mode: 1 }, outputCount: 3, opset: 15 });
  });
});

describe('ONNX LayerNormalization against onnxruntime', () => {
  const rng = new Random(302);
  it.each([
    [[2, 3, 8], -1],
    [[2, 3, 8], 1],
    [[2, 3, 8], -2],
    [[4, 6], 0],
    [[3, 1], -1],
  ])('input %j axis %i with Mean and InvStdDev outputs', async (shape, axis) => {
    const a = axis < 0 ? axis + shape.length : axis;
    const normalized = shape.slice(a);
    await expectOnnxMatchesOrt({
      opType: 'LayerNormalization',
      inputs: [rng.tensor(shape), rng.tensor(normalized), rng.tensor(normalized)],
      attributes: { axis, epsilon: floatAttr(1e-4) },
      outputCount: 3,
      opset: 17,
    });
  });

  it('without bias, at opset 21', async () => {
    await expectOnnxMatchesOrt({ opType: 'LayerNormalization', inputs: [rng.tensor([2, 5]), rng.tensor([5])], opset: 21 });
  });

  it('float16 input: Mean and InvStdDev come out float32 (stash_type 1)', async () => {
    const shape = [2, 3, 8];
    const outs = await expectOnnxMatchesOrt(
      {
        opType: 'LayerNormalization',
        inputs: [rng.tensor(shape, 'float16'), rng.tensor([8], 'float16'), rng.tensor([8], 'float16')],
        outputCount: 3,
        opset: 17,
      },
      { rtol: 1e-2, atol: 1e-2 },
    );
    expect(outs.map((t) => t.dtype)).toEqual(['float16', 'float32', 'float32']);
  });

  it('rejects a broadcast Scale as E_UNSUPPORTED_OP', () => {
    const model = buildSingleOpModel({ opType: 'LayerNormalization', inputs: [rng.tensor([2, 3, 4]), rng.tensor([4])], attributes: { axis: 1 }, opset: 17 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });
});

describe('ONNX GroupNormalization and InstanceNormalization against onnxruntime', () => {
  const rng = new Random(303);
  it.each([
    [[2, 6, 4], 3],
    [[2, 6, 3, 3], 2],
    [[1, 4, 5], 4],
    [[2, 4, 5], 1],
  ])('GroupNormalization-18 (per-group scale) on %j with %i groups', async (shape, groups) => {
    await expectOnnxMatchesOrt({
      opType: 'GroupNormalization',
      inputs: [rng.tensor(shape), { constant: rng.tensor([groups]) }, { constant: rng.tensor([groups]) }],
      attributes: { num_groups: groups, epsilon: floatAttr(1e-3) },
      opset: 18,
    });
  });

  it.each([
    [[2, 6, 4], 3],
    [[2, 6, 3, 3], 2],
    [[2, 4, 5], 4],
  ])('GroupNormalization-21 (per-channel scale) on %j with %i groups', async (shape, groups) => {
    await expectOnnxMatchesOrt({
      opType: 'GroupNormalization',
      inputs: [rng.tensor(shape), rng.tensor([shape[1]!]), rng.tensor([shape[1]!])],
      attributes: { num_groups: groups },
      opset: 21,
    });
  });

  it('GroupNormalization-18 needs constant per-group parameters', () => {
    const model = buildSingleOpModel({ opType: 'GroupNormalization', inputs: [rng.tensor([2, 6, 4]), rng.tensor([3]), rng.tensor([3])], attributes: { num_groups: 3 }, opset: 18 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('ONNX node "GroupNormalization_0"') }));
  });

  it.each([[[2, 3, 5]], [[1, 4, 3, 3]], [[2, 2, 2, 2, 3]]])('InstanceNormalization on %j', async (shape) => {
    const c = shape[1]!;
    for (const opset of [13, 21]) {
      await expectOnnxMatchesOrt({ opType: 'InstanceNormalization', inputs: [rng.tensor(shape), rng.tensor([c]), rng.tensor([c])], attributes: { epsilon: floatAttr(1e-4) }, opset });
    }
  });
});

describe('ATen normalization on hand-derived values', () => {
  const x = f32([2, 4], [1, 2, 3, 4, 2, 2, 2, 6]);

  it('native_layer_norm returns the output, mean and rstd shaped [N, 1]', () => {
    const eps = 1e-5;
    const [y, m, r] = run('aten.native_layer_norm.default', [x], ([input]) => ({ input, normalized_shape: [4], weight: null, bias: null, eps }));
    expect(m!.shape).toEqual([2, 1]);
    expect(r!.shape).toEqual([2, 1]);
    // row 0: mean 2.5, var 1.25; row 1: mean 3, var 3
    expectValues(m!, [2.5, 3]);
    expectValues(r!, [1 / Math.sqrt(1.25 + eps), 1 / Math.sqrt(3 + eps)]);
    const r0 = 1 / Math.sqrt(1.25 + eps);
    const r1 = 1 / Math.sqrt(3 + eps);
    expectValues(y!, [-1.5 * r0, -0.5 * r0, 0.5 * r0, 1.5 * r0, -r1, -r1, -r1, 3 * r1]);
  });

  it('layer_norm with weight and bias over two dims', () => {
    const x3 = f32([1, 2, 2], [0, 2, 4, 6]);
    const w = f32([2, 2], [1, 2, 1, 2]);
    const b = f32([2, 2], [0, 0, 1, 1]);
    const [y] = run('aten.layer_norm.default', [x3, w, b], ([input, weight, bias]) => ({ input, normalized_shape: [2, 2], weight, bias, eps: 0 }));
    // mean 3, var 5
    const s = 1 / Math.sqrt(5);
    expectValues(y!, [-3 * s, -2 * s, s + 1, 6 * s + 1]);
  });

  it('rms_norm: x / sqrt(mean(x²) + eps) * weight; eps defaults to float32 epsilon', () => {
    const w = f32([4], [1, 1, 2, 2]);
    const [y] = run('aten.rms_norm.default', [x, w], ([input, weight]) => ({ input, normalized_shape: [4], weight, eps: 0.5 }));
    const r0 = 1 / Math.sqrt((1 + 4 + 9 + 16) / 4 + 0.5);
    const r1 = 1 / Math.sqrt((4 + 4 + 4 + 36) / 4 + 0.5);
    expectValues(y!, [r0, 2 * r0, 6 * r0, 8 * r0, 2 * r1, 2 * r1, 4 * r1, 12 * r1]);
    const [d] = run('aten.rms_norm.default', [f32([2], [3, 4])], ([input]) => ({ input, normalized_shape: [2] }));
    const rd = 1 / Math.sqrt(12.5 + 2 ** -23);
    expectValues(d!, [3 * rd, 4 * rd], 6);
  });

  it('_native_batch_norm_legit_no_training and batch_norm use the running statistics', () => {
    const input = f32([1, 2, 2], [1, 3, 5, 7]);
    const mean = f32([2], [1, 5]);
    const variance = f32([2], [4, 16]);
    const weight = f32([2], [2, 1]);
    const bias = f32([2], [0, 1]);
    const [y, saveMean, saveRstd] = run('aten._native_batch_norm_legit_no_training.default', [input, weight, bias, mean, variance], (vs) => ({
      input: vs[0],
      weight: vs[1],
      bias: vs[2],
      running_mean: vs[3],
      running_var: vs[4],
      momentum: 0.1,
      eps: 0,
    }));
    expectValues(y!, [0, 2, 1, 1.5]);
    expect(saveMean!.shape).toEqual([0]);
    expect(saveRstd!.shape).toEqual([0]);
    const [z] = run('aten.batch_norm.default', [input, mean, variance], (vs) => ({
      input: vs[0],
      weight: null,
      bias: null,
      running_mean: vs[1],
      running_var: vs[2],
      training: false,
      momentum: 0.1,
      eps: 0,
      cudnn_enabled: true,
    }));
    expectValues(z!, [0, 1, 0, 0.5]);
  });

  it('native_group_norm returns mean and rstd per (sample, group)', () => {
    const input = f32([1, 4, 1], [1, 3, 10, 10]);
    const [y, m, r] = run('aten.native_group_norm.default', [input], ([inp]) => ({ input: inp, weight: null, bias: null, N: 1, C: 4, HxW: 1, group: 2, eps: 1 }));
    expect(m!.shape).toEqual([1, 2]);
    expectValues(m!, [2, 10]);
    // group 0: var 1 (+eps 1); group 1: var 0 (+eps 1)
    expectValues(r!, [1 / Math.sqrt(2), 1]);
    expectValues(y!, [-1 / Math.sqrt(2), 1 / Math.sqrt(2), 0, 0]);
    const [g] = run('aten.group_norm.default', [input], ([inp]) => ({ input: inp, num_groups: 2, eps: 1 }));
    expectValues(g!, y!.toArray());
  });
});

describe('symbolic inference of normalization', () => {
  it('native_layer_norm statistics keep the leading symbolic dims', () => {
    const g = new Graph();
    g.symbols.set('s0', { min: 1, max: 64 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 7, 16]));
    const node = call(g, 'aten.native_layer_norm.default', { input: x, normalized_shape: [16], weight: null, bias: null, eps: 1e-5 });
    expect(node.outputs.map((v) => formatShape(v.tensorType.shape))).toEqual(['[s0, 7, 16]', '[s0, 7, 1]', '[s0, 7, 1]']);
  });

  it('fails naming the node when normalized_shape does not match', () => {
    const g = new Graph();
    const x = g.addInput('x', tensorType('float32', [2, 8]));
    expect(() => call(g, 'aten.layer_norm.default', { input: x, normalized_shape: [4] }, { name: 'ln' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ln') }),
    );
    expect(() => call(g, 'aten.group_norm.default', { input: x, num_groups: 3 }, { name: 'gn' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('gn') }),
    );
  });
});
