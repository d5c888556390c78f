/** Reference backend: gather, scatter, topk, resize and nonzero layers against onnxruntime. */
import { BadInputError } from '../../../lib/errors';
import { Network, type LayerParams, type ResizeCoordinateTransformation, type ResizeRoundMode } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor } from '../../helpers/compare';
import { runOrtOp, runOrtOp1 } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { runLayer, runLayer1, runNetwork } from './helpers';

const rng = new Random(99);
const i64 = (shape: number[], values: number[]): Tensor => Tensor.from('int64', shape, values);

describe('gather', () => {
  const data = rng.tensor([3, 4, 5]);

  it('default mode matches ONNX Gather on indices in [0, d)', async () => {
    const indices = i64([2, 2], [0, 3, 3, 1]);
    const actual = await runLayer1({ kind: 'gather', mode: 'default', axis: 1 }, [data, indices]);
    expectExact(actual, await runOrtOp1({ opType: 'Gather', inputs: [data, indices], attributes: { axis: 1 } }));
    const scalarIndex = Tensor.from('int32', [], [2]);
    expectExact(
      await runLayer1({ kind: 'gather', mode: 'default', axis: 0 }, [data, scalarIndex]),
      await runOrtOp1({ opType: 'Gather', inputs: [data, scalarIndex], attributes: { axis: 0 } }),
    );
  });

  // TensorRT gathers do not count negatives from the end: the conversion wraps them once
  // (lib/conversion/impl/indices.ts), so a negative index reaching the layer is out of range.
  it('refuses indices outside [0, d), negatives included, with a BadInputError naming the index and range', async () => {
    const params: LayerParams = { kind: 'gather', mode: 'default', axis: 1 };
    for (const bad of [4, -1, -5]) {
      const run = runLayer1(params, [data, i64([2], [0, bad])]);
      await expect(run).rejects.toThrow(BadInputError);
      await expect(runLayer1(params, [data, i64([2], [0, bad])])).rejects.toThrow(`index ${bad} (element 1 of the indices) is out of range [0, 4) for axis 1`);
    }
    const huge = Tensor.from('int64', [1], [-(2n ** 63n)]);
    await expect(runLayer1(params, [data, huge])).rejects.toThrow(`index -9223372036854775808 (element 0 of the indices) is out of range [0, 4)`);
  });

  it('element mode matches ONNX GatherElements', async () => {
    const d = rng.tensor([3, 4]);
    const indices = Tensor.from('int32', [3, 2], [0, 3, 1, 1, 3, 2]);
    expectExact(
      await runLayer1({ kind: 'gather', mode: 'element', axis: 1 }, [d, indices]),
      await runOrtOp1({ opType: 'GatherElements', inputs: [d, indices], attributes: { axis: 1 } }),
    );
  });

  it('nd mode matches ONNX GatherND, with nbElementWiseDims as batch_dims', async () => {
    const d = rng.tensor([2, 3, 4]);
    const idx0 = i64([3, 2], [0, 1, 1, 2, 1, 0]);
    expectExact(await runLayer1({ kind: 'gather', mode: 'nd', axis: 0 }, [d, idx0]), await runOrtOp1({ opType: 'GatherND', inputs: [d, idx0] }));
    const idx1 = i64([2, 2, 1], [2, 0, 1, 1]);
    expectExact(
      await runLayer1({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: 1 }, [d, idx1]),
      await runOrtOp1({ opType: 'GatherND', inputs: [d, idx1], attributes: { batch_dims: 1 } }),
    );
    await expect(runLayer1({ kind: 'gather', mode: 'nd', axis: 0 }, [d, i64([1, 2], [0, 3])])).rejects.toThrow(/out of range \[0, 3\) for axis 1/);
  });
});

describe('scatter', () => {
  it('element mode matches ONNX ScatterElements', async () => {
    const data = rng.tensor([3, 4]);
    const indices = i64([2, 4], [2, 0, 1, 2, 0, 1, 2, 0]);
    const updates = rng.tensor([2, 4]);
    expectExact(
      await runLayer1({ kind: 'scatter', mode: 'element', axis: 0 }, [data, indices, updates]),
      await runOrtOp1({ opType: 'ScatterElements', inputs: [data, indices, updates], attributes: { axis: 0 } }),
    );
  });

  it('nd mode matches ONNX ScatterND', async () => {
    const data = rng.tensor([4, 3, 2]);
    const indices = i64([2, 1], [3, 1]);
    const updates = rng.tensor([2, 3, 2]);
    expectExact(await runLayer1({ kind: 'scatter', mode: 'nd', axis: 0 }, [data, indices, updates]), await runOrtOp1({ opType: 'ScatterND', inputs: [data, indices, updates] }));
    await expect(runLayer1({ kind: 'scatter', mode: 'nd', axis: 0 }, [data, i64([2, 1], [3, 4]), updates])).rejects.toThrow(BadInputError);
  });
});

describe('topk', () => {
  const x = Tensor.from('float32', [2, 6], [3, 1, 3, 2, 5, 1, -1, 4, 4, 4, 0, -2]);
  it.each([
    ['max', 1],
    ['min', 0],
  ] as const)('%s matches ONNX TopK (values and indices, ties to the lower index)', async (op, largest) => {
    const [values, indices] = await runLayer({ kind: 'topk', op, k: 3, axis: 1, indicesType: 'int64' }, [x]);
    const [ev, ei] = await runOrtOp({ opType: 'TopK', inputs: [x, { constant: i64([1], [3]) }], attributes: { axis: 1, largest }, outputCount: 2 });
    expectExact(values!, ev!);
    expectExact(indices!, ei!);
  });

  it('gives int32 indices when asked, ties to the lower index', async () => {
    const [values, indices] = await runLayer({ kind: 'topk', op: 'max', k: 4, axis: 1, indicesType: 'int32' }, [x]);
    expectTensor(values!, 'float32', [2, 4], [5, 3, 3, 2, 4, 4, 4, 0]);
    expectTensor(indices!, 'int32', [2, 4], [4, 0, 2, 3, 1, 2, 3, 4]);
  });
});

describe('resize', () => {
  const ONNX_NEAREST: Record<ResizeRoundMode, string> = { half_up: 'round_prefer_ceil', half_down: 'round_prefer_floor', floor: 'floor', ceil: 'ceil' };
  const params = (
    mode: 'nearest' | 'linear',
    outputDims: number[],
    coordinateTransformation: ResizeCoordinateTransformation,
    nearestRounding: ResizeRoundMode = 'floor',
    selector: 'formula' | 'upper' = 'formula',
  ): LayerParams => ({ kind: 'resize', mode, outputDims, coordinateTransformation, selector, nearestRounding });

  const cases: Array<[string, number[], number[], 'nearest' | 'linear', ResizeCoordinateTransformation, ResizeRoundMode]> = [
    ['nearest 2x asymmetric floor', [1, 1, 3, 4], [1, 1, 6, 8], 'nearest', 'asymmetric', 'floor'],
    ['nearest down half_pixel half_down', [1, 2, 5, 7], [1, 2, 3, 4], 'nearest', 'half_pixel', 'half_down'],
    ['nearest up half_pixel half_up', [1, 2, 3, 4], [1, 2, 7, 9], 'nearest', 'half_pixel', 'half_up'],
    ['nearest align_corners ceil', [1, 1, 4, 5], [1, 1, 7, 3], 'nearest', 'align_corners', 'ceil'],
    ['linear half_pixel', [1, 2, 4, 5], [1, 2, 7, 3], 'linear', 'half_pixel', 'floor'],
    ['linear align_corners', [2, 1, 3, 3], [2, 1, 5, 8], 'linear', 'align_corners', 'floor'],
    ['linear asymmetric 3-D', [1, 1, 2, 3, 4], [1, 1, 3, 5, 6], 'linear', 'asymmetric', 'floor'],
  ];
  it.each(cases)('%s matches ONNX Resize', async (_name, inShape, outShape, mode, transform, rounding) => {
    const x = rng.tensor(inShape);
    const actual = await runLayer1(params(mode, outShape, transform, rounding), [x]);
    const expected = await runOrtOp1({
      opType: 'Resize',
      inputs: [x, null, null, { constant: i64([outShape.length], outShape) }],
      attributes: { mode, coordinate_transformation_mode: transform, nearest_mode: ONNX_NEAREST[rounding] },
      opset: 13,
    });
    expectClose(actual, expected);
  });

  it('selector upper maps a one-element output to element 0 (ONNX pytorch_half_pixel); formula uses half_pixel', async () => {
    const x = rng.tensor([1, 1, 4, 6]);
    const out = [1, 1, 1, 3];
    const onnx = (transform: string): Promise<Tensor> =>
      runOrtOp1({ opType: 'Resize', inputs: [x, null, null, { constant: i64([4], out) }], attributes: { mode: 'linear', coordinate_transformation_mode: transform }, opset: 13 });
    expectClose(await runLayer1(params('linear', out, 'half_pixel', 'floor', 'upper'), [x]), await onnx('pytorch_half_pixel'));
    expectClose(await runLayer1(params('linear', out, 'half_pixel', 'floor', 'formula'), [x]), await onnx('half_pixel'));
    const upper = await runLayer1(params('nearest', [1, 1, 1, 1], 'half_pixel', 'half_up', 'upper'), [x]);
    expectTensor(upper, 'float32', [1, 1, 1, 1], [x.toArray()[0]!]);
  });

  it('reads output dims from a shape tensor at run time', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [1, 1, 2, 2]);
    const dims = net.addInput('dims', 'int64', [4]);
    const y = net.add1(params('nearest', [], 'asymmetric'), [x, dims], 'resize');
    net.markOutput(y, 'y');
    const xs = Tensor.from('float32', [1, 1, 2, 2], [1, 2, 3, 4]);
    const { y: out } = await runNetwork(net, { x: xs, dims: i64([4], [1, 1, 4, 4]) });
    expectTensor(out!, 'float32', [1, 1, 4, 4], [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
  });
});

describe('nonzero', () => {
  it.each([
    ['float32 with -0 and NaN', Tensor.from('float32', [2, 3], [0, -0, NaN, 1.5, 0, -2])],
    ['int32 of rank 3', rng.intTensor([2, 3, 2], -1, 2, 'int32')],
    ['bool', Tensor.from('bool', [4], [0, 1, 1, 0])],
    ['float16', Tensor.from('float16', [3], [0, 0.25, 0])],
    ['no nonzero element', Tensor.from('float32', [2, 2], [0, 0, 0, 0])],
  ])('%s: the positions onnxruntime NonZero gives, the count decided by the data', async (_label, x) => {
    expectExact(await runLayer1({ kind: 'nonzero' }, [x]), await runOrtOp1({ opType: 'NonZero', inputs: [x], opset: 13 }));
  });

  it('declares a run-time count: -1 in the network, the run gives the size', async () => {
    const net = new Network();
    const nz = net.add1({ kind: 'nonzero' }, [net.addInput('x', 'int32', [5])], 'nz');
    expect(nz.shape).toEqual([1, -1]);
    net.markOutput(nz, 'y');
    const { y } = await runNetwork(net, { x: Tensor.from('int32', [5], [0, 3, 0, 0, -1]) });
    expectExact(y!, i64([1, 2], [1, 4]));
  });
});
