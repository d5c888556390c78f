import { InvalidArgumentError } from '../../lib/errors';
import { batchNormInference, groupNorm, instanceNorm, layerNorm, layerNormWithStats, machineEpsilon, rmsNorm } from '../../lib/kernels/norm';
import { full } from '../../lib/kernels/shape';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose } from '../helpers/compare';
import { floatAttr, runOrtOp } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

describe('layerNorm', () => {
  const rng = new Random(41);
  it.each([
    [[2, 3, 8], -1, [8]],
    [[2, 3, 8], -2, [3, 8]],
    [[4, 5, 6], 1, [5, 6]],
    [[3, 7], 0, [3, 7]],
    [[2, 3, 4], -2, [1, 4]],
  ])('matches ONNX LayerNormalization for %j, axis %d, weight %j', async (shape, axis, wShape) => {
    const x = rng.tensor(shape, 'float32', -3, 3);
    const w = rng.tensor(wShape);
    const b = rng.tensor(wShape);
    const [y, mean, rstd] = await runOrtOp({
      opType: 'LayerNormalization',
      inputs: [x, w, b],
      attributes: { axis, epsilon: floatAttr(1e-3) },
      outputCount: 3,
    });
    const [gy, gmean, grstd] = layerNormWithStats(x, axis, w, b, 1e-3);
    expectClose(gy, y!);
    expectClose(gmean, mean!);
    expectClose(grstd, rstd!);
    expectClose(layerNorm(x, axis, w, b, 1e-3), y!);
  });

  it('works without weight and bias (ONNX with ones, no bias)', async () => {
    const x = rng.tensor([3, 10]);
    const [y] = await runOrtOp({ opType: 'LayerNormalization', inputs: [x, full([10], 1, 'float32')] });
    expectClose(layerNorm(x, -1), y!);
  });

  it('rejects a weight that does not fit the normalized shape', () => {
    expect(() => layerNorm(rng.tensor([2, 3]), -1, rng.tensor([2]))).toThrow(/weight of shape \[2\]/);
    expect(() => layerNorm(rng.intTensor([2, 3], 0, 3), -1)).toThrow(InvalidArgumentError);
  });
});

describe('batchNormInference', () => {
  const rng = new Random(42);
  it.each([[[2, 3]], [[2, 3, 5]], [[2, 3, 4, 5]], [[1, 4, 2, 3, 2]]])('matches ONNX BatchNormalization for %j', async (shape) => {
    const c = shape[1]!;
    const x = rng.tensor(shape);
    const scale = rng.tensor([c]);
    const bias = rng.tensor([c]);
    const mean = rng.tensor([c]);
    const variance = rng.tensor([c], 'float32', 0.1, 2);
    const [y] = await runOrtOp({ opType: 'BatchNormalization', inputs: [x, scale, bias, mean, variance], attributes: { epsilon: floatAttr(1e-3) } });
    expectClose(batchNormInference(x, mean, variance, scale, bias, 1e-3), y!);
  });

  it('defaults to unit weight and zero bias', async () => {
    const x = rng.tensor([2, 3, 4]);
    const mean = rng.tensor([3]);
    const variance = rng.tensor([3], 'float32', 0.5, 1);
    const [y] = await runOrtOp({ opType: 'BatchNormalization', inputs: [x, full([3], 1, 'float32'), full([3], 0, 'float32'), mean, variance] });
    expectClose(batchNormInference(x, mean, variance), y!);
    expect(() => batchNormInference(x, rng.tensor([2]), variance)).toThrow(/running mean/);
  });
});

describe('groupNorm / instanceNorm', () => {
  const rng = new Random(43);
  it.each([
    [[2, 6, 5], 3],
    [[2, 6, 4, 3], 2],
    [[1, 4, 3, 3], 4],
    [[3, 4, 5], 1],
  ])('matches ONNX GroupNormalization-21 for %j with %d groups', async (shape, groups) => {
    const c = shape[1]!;
    const x = rng.tensor(shape, 'float32', -2, 2);
    const w = rng.tensor([c]);
    const b = rng.tensor([c]);
    const [y] = await runOrtOp({ opType: 'GroupNormalization', inputs: [x, w, b], attributes: { num_groups: groups, epsilon: floatAttr(1e-4) }, opset: 21 });
    expectClose(groupNorm(x, groups, w, b, 1e-4), y!);
  });

  it.each([[[2, 3, 7]], [[2, 3, 4, 5]], [[1, 2, 3, 2, 4]]])('matches ONNX InstanceNormalization for %j', async (shape) => {
    const c = shape[1]!;
    const x = rng.tensor(shape);
    const w = rng.tensor([c]);
    const b = rng.tensor([c]);
    const [y] = await runOrtOp({ opType: 'InstanceNormalization', inputs: [x, w, b], attributes: { epsilon: floatAttr(1e-5) } });
    expectClose(instanceNorm(x, w, b), y!);
  });

  it('normalizes each group to zero mean and unit variance without affine (hand-checked)', () => {
    const x = Tensor.from('float32', [1, 2, 2], [1, 3, 10, 30]);
    // one group per channel: [1, 3] -> mean 2, var 1 -> [-1, 1]; [10, 30] -> mean 20, var 100 -> [-1, 1]
    expectClose(groupNorm(x, 2, null, null, 0), Tensor.from('float32', [1, 2, 2], [-1, 1, -1, 1]));
    expect(() => groupNorm(x, 3)).toThrow(/3 groups/);
  });
});

describe('rmsNorm', () => {
  const rng = new Random(44);
  it('matches x / sqrt(mean(x^2) + eps) * w (hand-computed)', () => {
    const x = Tensor.from('float32', [2, 2], [3, 4, 1, -1]);
    // rows: mean(x^2) = 12.5 and 1
    const y = rmsNorm(x, -1, Tensor.from('float32', [2], [1, 2]), 0);
    expectClose(y, Tensor.from('float32', [2, 2], [3 / Math.sqrt(12.5), 8 / Math.sqrt(12.5), 1, -2]));
  });

  it('defaults eps to the dtype machine epsilon, as torch.rms_norm', () => {
    expect(machineEpsilon('float32')).toBe(1.1920928955078125e-7);
    expect(machineEpsilon('float64')).toBe(2.220446049250313e-16);
    expect(machineEpsilon('float16')).toBe(0.0009765625);
    expect(machineEpsilon('bfloat16')).toBe(0.0078125);
    // all-zero rows divide 0 by sqrt(eps); tiny rows reveal eps: x = 1e-4 -> x / sqrt(x^2 + eps)
    const x = Tensor.from('float64', [1, 1], [1e-4]);
    expect(rmsNorm(x, -1).toArray()[0]).toBeCloseTo(1e-4 / Math.sqrt(1e-8 + 2 ** -52), 12);
    const h = Tensor.from('float32', [1, 1], [1e-2]);
    expect(rmsNorm(h, -1).toArray()[0]).toBeCloseTo(Math.fround(1e-2 / Math.sqrt(1e-4 + 2 ** -23)), 6);
  });

  it.each([
    [[2, 3, 4], -2, [3, 4]],
    [[2, 3, 4], -1, [4]],
    [[5, 6], 0, [1, 6]],
  ])('matches ONNX RMSNormalization-23 for %j, axis %d, weight %j', async (shape, axis, wShape) => {
    const x = rng.tensor(shape);
    const w = rng.tensor(wShape);
    const [expected] = await runOrtOp({ opType: 'RMSNormalization', inputs: [x, w], attributes: { axis, epsilon: floatAttr(1e-5) }, opset: 23 });
    expectClose(rmsNorm(x, axis, w, 1e-5), expected!);
  });

  it('rejects integer inputs', () => {
    expect(() => rmsNorm(rng.intTensor([2], 0, 3), -1)).toThrow(/rmsNorm/);
  });
});
