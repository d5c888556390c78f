/**
 * Dynamic-batch converters (lib/conversion/converters/nn.ts, `registerDynamic`): one-op ONNX
 * models whose batch is a dim_param, compiled ONCE with a batch range, run at two batch
 * sizes and compared with onnxruntime-node running the same model. Every op must be
 * converted by its `(dynamic)` converter (zero fallback); the same model compiled with a
 * static shape still gets the static converter.
 */
import '../../lib/conversion/converters';
import { loadOnnx } from '../../lib/frontends/onnx';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { buildSingleOpModel, closeOrt, floatAttr, runOrtGraph, runOrtModel, type OrtOpSpec } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';
import { DynGraph, compileAndRun } from '../legalization/helpers';
import { withDynamicBatch } from './dynamic-batch-helpers';

const rng = new Random(20202);
const BATCHES = [3, 7];

afterAll(() => closeOrt());

interface Case {
  label: string;
  /** The op with the batch-1 example of its (single) fed input; the batch is replaced per run. */
  spec: (x: Tensor) => OrtOpSpec;
  /** The fed input's shape without its batch dim. */
  shape: number[];
  /** The ops the model imports to, each expected to be converted by its `(dynamic)` converter. */
  targets: string[];
}

const weight = (shape: number[]): { constant: Tensor } => ({ constant: rng.tensor(shape) });
const int64 = (values: number[]): { constant: Tensor } => ({ constant: Tensor.from('int64', [values.length], values) });

const CASES: Case[] = [
  {
    label: 'Conv 2-D (stride 2, pads, groups 2, bias)',
    shape: [4, 9, 8],
    spec: (x) => ({ opType: 'Conv', inputs: [x, weight([6, 2, 3, 3]), weight([6])], attributes: { strides: [2, 2], pads: [1, 0, 1, 2], group: 2 } }),
    targets: ['trt.conv_padded'],
  },
  {
    label: 'Conv 1-D (dilation 2)',
    shape: [3, 11],
    spec: (x) => ({ opType: 'Conv', inputs: [x, weight([5, 3, 3])], attributes: { dilations: [2], pads: [1, 1] } }),
    targets: ['aten.convolution.default'],
  },
  {
    label: 'ConvTranspose 2-D (output padding beyond the padding: extra rows of bias)',
    shape: [4, 5, 6],
    spec: (x) => ({ opType: 'ConvTranspose', inputs: [x, weight([4, 3, 3, 3]), weight([3])], attributes: { strides: [2, 3], output_padding: [1, 2] } }),
    targets: ['aten.convolution.default'],
  },
  {
    label: 'MaxPool 2-D (ceil mode, pads)',
    shape: [3, 9, 10],
    spec: (x) => ({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 0, 0], ceil_mode: 1 } }),
    targets: ['trt.max_pool_padded'],
  },
  {
    label: 'MaxPool 2-D dilated (composed from taps)',
    shape: [2, 8, 8],
    spec: (x) => ({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [2, 2], dilations: [2, 2], pads: [1, 1, 1, 1] } }),
    targets: ['aten.max_pool2d.default'],
  },
  {
    label: 'AveragePool 2-D (count_include_pad, ceil mode)',
    shape: [3, 7, 9],
    spec: (x) => ({ opType: 'AveragePool', inputs: [x], attributes: { kernel_shape: [3, 2], strides: [2, 2], pads: [1, 1, 1, 1], count_include_pad: 1, ceil_mode: 1 } }),
    targets: ['aten.avg_pool2d.default'],
  },
  {
    label: 'AveragePool 1-D',
    shape: [3, 12],
    spec: (x) => ({ opType: 'AveragePool', inputs: [x], attributes: { kernel_shape: [4], strides: [3], pads: [1, 2] } }),
    targets: ['trt.avg_pool_padded'],
  },
  {
    label: 'BatchNormalization',
    shape: [5, 4, 3],
    spec: (x) => ({
      opType: 'BatchNormalization',
      inputs: [x, weight([5]), weight([5]), weight([5]), { constant: rng.tensor([5], 'float32', 0.5, 2) }],
      attributes: { epsilon: floatAttr(1e-3) },
    }),
    targets: ['aten._native_batch_norm_legit_no_training.default'],
  },
  {
    label: 'Resize nearest by scales',
    shape: [2, 3, 5],
    spec: (x) => ({
      opType: 'Resize',
      inputs: [x, null, { constant: Tensor.from('float32', [4], [1, 1, 2, 3]) }],
      attributes: { mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' },
    }),
    targets: ['aten.upsample_nearest2d.vec'],
  },
  {
    label: 'Resize nearest, half_pixel, round_prefer_ceil, by scales',
    shape: [2, 5, 4],
    spec: (x) => ({
      opType: 'Resize',
      inputs: [x, null, { constant: Tensor.from('float32', [4], [1, 1, 0.6, 2.5]) }],
      attributes: { mode: 'nearest', coordinate_transformation_mode: 'half_pixel', nearest_mode: 'round_prefer_ceil' },
    }),
    targets: ['trt.resize'],
  },
  {
    label: 'Resize linear by fractional scales (half_pixel)',
    shape: [2, 4, 6],
    spec: (x) => ({
      opType: 'Resize',
      inputs: [x, null, { constant: Tensor.from('float32', [4], [1, 1, 1.5, 0.75]) }],
      attributes: { mode: 'linear', coordinate_transformation_mode: 'half_pixel' },
    }),
    targets: ['aten.upsample_bilinear2d.vec'],
  },
  {
    label: 'TopK along a static axis',
    shape: [5, 9],
    spec: (x) => ({ opType: 'TopK', inputs: [x, int64([3])], attributes: { axis: 2 }, outputCount: 2 }),
    targets: ['aten.topk.default'],
  },
];

describe.each(CASES.map((c) => [c.label, c] as const))('%s', (_label, c) => {
  const example = rng.tensor([1, ...c.shape]);
  const model = withDynamicBatch(buildSingleOpModel(c.spec(example)));

  test('compiled once for batch 1..8: all in TensorRT by the (dynamic) converters, matches onnxruntime at two batches', async () => {
    const runs = BATCHES.map((n) => [rng.tensor([n, ...c.shape])]);
    const settings = { minBlockSize: 1, inputs: { in0: { min: [1, ...c.shape], opt: [4, ...c.shape], max: [8, ...c.shape] } } };
    const { program, outputs } = await compileAndRun(loadOnnx(model), settings, runs);
    expect(program.inputs[0]!.shape.map((d) => typeof d === 'number')).toEqual([false, ...c.shape.map(() => true)]);
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
    const used = program.report.ops.filter((o) => c.targets.includes(o.target));
    expect(program.report.ops.map((o) => o.target)).toEqual(expect.arrayContaining(c.targets));
    for (const o of used) expect(o.converter).toBe(`${o.target} (dynamic)`);
    for (const [r, inputs] of runs.entries()) {
      const expected = await runOrtModel(model, inputs);
      expect(outputs[r]!).toHaveLength(expected.length);
      outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${c.label} batch ${inputs[0]!.shape[0]} output ${i}`));
    }
  }, 60_000);

  test('with a static shape the static converter is chosen', async () => {
    const x = rng.tensor([2, ...c.shape]);
    const { program, outputs } = await compileAndRun(loadOnnx(model), { minBlockSize: 1, inputs: { in0: { shape: [2, ...c.shape] } } }, [[x]]);
    const used = program.report.ops.filter((o) => c.targets.includes(o.target));
    expect(used.length).toBeGreaterThan(0);
    for (const o of used) expect(o.converter).toBe(o.target);
    const expected = await runOrtModel(model, [x]);
    outputs[0]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${c.label} static output ${i}`));
  }, 60_000);
});

describe('scatter with a run-time batch', () => {
  /** Per row, `k` distinct column indices in [-cols, cols) (negative ones count from the end). */
  function rowIndices(rows: number, k: number, cols: number): Tensor {
    const data: number[] = [];
    for (let r = 0; r < rows; r++) {
      const perm = Array.from({ length: cols }, (_, i) => i).sort(() => rng.uniform());
      data.push(...perm.slice(0, k).map((c, j) => (j % 2 === 1 ? c - cols : c)));
    }
    return Tensor.from('int64', [rows, k], data);
  }

  test('ONNX ScatterElements (aten.scatter.src): one compile, two batches, matches onnxruntime; static shapes keep the static converter', async () => {
    const spec = (n: number): OrtOpSpec => ({ opType: 'ScatterElements', inputs: [rng.tensor([n, 6]), rowIndices(n, 3, 6), rng.tensor([n, 3])], attributes: { axis: 1 } });
    const model = withDynamicBatch(buildSingleOpModel(spec(1)));
    const runs = BATCHES.map((n) => spec(n).inputs as Tensor[]);
    const inputs = { in0: { min: [1, 6], max: [8, 6] }, in1: { min: [1, 3], max: [8, 3] }, in2: { min: [1, 3], max: [8, 3] } };
    const { program, outputs } = await compileAndRun(loadOnnx(model), { minBlockSize: 1, inputs }, runs);
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
    const scatter = program.report.ops.filter((o) => o.target === 'aten.scatter.src');
    expect(scatter.map((o) => o.converter)).toEqual(['aten.scatter.src (dynamic)']);
    for (const [r, feeds] of runs.entries()) expectClose(outputs[r]![0]!, (await runOrtModel(model, feeds))[0]!, FP32, `scatter batch ${feeds[0]!.shape[0]}`);

    const fixed = spec(2).inputs as Tensor[];
    const statics = { in0: { shape: [2, 6] }, in1: { shape: [2, 3] }, in2: { shape: [2, 3] } };
    const st = await compileAndRun(loadOnnx(model), { minBlockSize: 1, inputs: statics }, [fixed]);
    expect(st.program.report.ops.filter((o) => o.target === 'aten.scatter.src').map((o) => o.converter)).toEqual(['aten.scatter.src']);
    expectClose(st.outputs[0]![0]!, (await runOrtModel(model, fixed))[0]!, FP32, 'scatter static');
  }, 60_000);

  test('aten.scatter.value with a run-time batch matches a hand-computed scatter at two batches', async () => {
    const b = new DynGraph('scatter_value', { s: { min: 1, max: 8 } });
    const x = b.input('x', 'float32', ['s', 5]);
    const index = b.input('index', 'int64', ['s', 2]);
    const out = b.call('aten.scatter.value', { self: x, dim: 1, index, value: -7.5 }).output;
    const graph = b.outputs(out);
    const runs = BATCHES.map((n) => [rng.tensor([n, 5]), rowIndices(n, 2, 5)]);
    const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
    expect(program.report.ops.map((o) => o.converter)).toEqual(['aten.scatter.value (dynamic)']);
    for (const [r, [xv, iv]] of runs.entries()) {
      const expected = Float32Array.from(xv!.data as Float32Array);
      const idx = iv!.data as BigInt64Array;
      for (let k = 0; k < idx.length; k++) {
        const row = Math.floor(k / 2);
        const col = Number(idx[k]!);
        expected[row * 5 + (col < 0 ? col + 5 : col)] = -7.5;
      }
      expectClose(outputs[r]![0]!, Tensor.from('float32', xv!.shape, expected), FP32, `scatter.value run ${r}`);
    }
  }, 60_000);
});

test('adaptive avg/max pooling 7x7 -> 3x3 (uneven windows) and max_pool2d_with_indices, run-time batch: match onnxruntime pools with the same windows', async () => {
  // Adaptive windows of 7 -> 3 are [0, 3), [2, 5), [4, 7): a 3x3 window with stride 2.
  const b = new DynGraph('adaptive', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3, 7, 7]);
  const avg = b.call('aten.adaptive_avg_pool2d.default', { self: x, output_size: [3, 3] }).output;
  const [amax, aidx] = b.call('aten.adaptive_max_pool2d.default', { self: x, output_size: [3, 3] }).outputs;
  const [mmax, midx] = b.call('aten.max_pool2d_with_indices.default', { self: x, kernel_size: [3, 3], stride: [2, 2], padding: [0, 0], dilation: [1, 1], ceil_mode: false }).outputs;
  const graph = b.outputs(avg, amax!, aidx!, mmax!, midx!);
  const runs = BATCHES.map((n) => [rng.tensor([n, 3, 7, 7])]);
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(program.report.ops.map((o) => o.converter)).toEqual([
    'aten.adaptive_avg_pool2d.default (dynamic)',
    'aten.adaptive_max_pool2d.default (dynamic)',
    'aten.max_pool2d_with_indices.default (dynamic)',
  ]);
  for (const [r, [xv]] of runs.entries()) {
    const [ortAvg, ortMax, ortIdx] = await runOrtGraph({
      nodes: [
        { opType: 'AveragePool', inputs: ['x'], outputs: ['avg'], attributes: { kernel_shape: [3, 3], strides: [2, 2] } },
        { opType: 'MaxPool', inputs: ['x'], outputs: ['max', 'idx'], attributes: { kernel_shape: [3, 3], strides: [2, 2] } },
      ],
      inputs: { x: xv! },
      outputs: ['avg', 'max', 'idx'],
    });
    // ONNX counts indices over the whole [N, C, H, W] tensor, PyTorch within each 7x7 plane.
    const perPlane = Tensor.from('int64', ortIdx!.shape, Array.from(ortIdx!.data as BigInt64Array, (v) => Number(v) % 49));
    const n = xv!.shape[0];
    const expected = [ortAvg!, ortMax!, perPlane, ortMax!, perPlane];
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `adaptive batch ${n} output ${i}`));
  }
}, 60_000);

test('pooling with run-time spatial dims is refused by the dynamic converter, naming the dims (it falls back)', async () => {
  const b = new DynGraph('spatial', { s: { min: 4, max: 8 } });
  const x = b.input('x', 'float32', [2, 3, 's', 6]);
  const y = b.call('aten.max_pool2d.default', { self: x, kernel_size: [2, 2], stride: [2, 2], padding: [0, 0], dilation: [1, 1], ceil_mode: false }).output;
  const graph = b.outputs(y);
  const x0 = Tensor.from('float32', [2, 3, 4, 6], Array.from({ length: 144 }, (_, i) => (i * 37) % 101));
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, [[x0]]);
  const op = program.report.ops[0]!;
  expect(op.converted).toBe(false);
  expect(op.reasons).toEqual(['aten.max_pool2d.default (dynamic): the spatial dims of %x (dim 2) must be static: [2, 3, s, 6]']);
  // The fallback still computes it: each output is the max of its 2x2 window.
  const expected = Array.from({ length: 2 * 3 * 2 * 3 }, (_, k) => {
    const [p, i, j] = [Math.floor(k / 6), Math.floor(k / 3) % 2, k % 3];
    const v = (h: number, w: number): number => ((p * 24 + h * 6 + w) * 37) % 101;
    return Math.max(v(2 * i, 2 * j), v(2 * i, 2 * j + 1), v(2 * i + 1, 2 * j), v(2 * i + 1, 2 * j + 1));
  });
  expectClose(outputs[0]![0]!, Tensor.from('float32', [2, 3, 2, 3], expected), FP32, 'fallback max pool');
});
