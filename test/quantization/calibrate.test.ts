/**
 * calibrate() on two float models built in memory (test/quantization/models.ts: an MLP and a
 * small conv net, seeded weights and data), checked against onnxruntime-node running the ONNX
 * files:
 * - the Q/DQ model runs in onnxruntime, and its outputs are within rounding error of the float
 *   model whose activations are clipped to the calibrated ranges (its float twin), for every
 *   method and both precisions; minmax and percentile are also within that bound of the float
 *   model itself (see BOUND for where the bounds come from);
 * - per-channel weight scales are max |w| per output channel / 127 (or / 448), along each op's
 *   output-channel axis, and the stored values are the weights rounded to those steps;
 * - the Q/DQ model imports with loadOnnx, compiles on the reference backend and gives what
 *   onnxruntime gives on it;
 * - the report, per-tensor weights, exclude, and a model given as a path with `output`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { Tensor } from '../../lib/ir/tensor';
import { calibrate, type CalibrationMethod, type CalibrationPrecision } from '../../lib/quantization';
import { expectClose, FP32 } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { externalDataModel } from '../helpers/external-data-model';
import { buildSymbolicModel, constantNode } from '../helpers/onnx-symbolic-model';
import { Random } from '../helpers/random';
import { runOrtModel } from '../helpers/ort-single-op';
import { batchesFor, convNet, mlp, type TestModel } from './models';
import { clippedModel, decode, dequantizeOf, dimsOf, floatsOf, int8sOf, opsetOf, relativeError } from './onnx-inspect';

// Calibrations with the entropy search, and onnxruntime sessions, take seconds in jest's sandbox (its loops run far slower than in plain Node).
jest.setTimeout(60_000);

/**
 * Relative L2 error allowed between the Q/DQ model and its float twin. int8: rounding to a
 * step of amax/127 adds noise of rms step/√12, 0.2-1% of these tensors' rms (inputs uniform in
 * ±1, ReLU activations whose max is 4-6× their rms), on 2-4 quantized inputs a path; 3% leaves
 * room over the measured 0.2-0.9%. fp8: e4m3 keeps 3 mantissa bits, a relative rounding error
 * of up to 2^-4 (rms about 3.6%) a value, partly averaged out by the dot products; 6% over the
 * measured 1.3-4.2%.
 */
const BOUND: Record<CalibrationPrecision, number> = { int8: 0.03, fp8: 0.06 };

const MODELS: Record<string, () => TestModel> = { mlp, 'conv net': convNet };
const METHODS: CalibrationMethod[] = ['minmax', 'percentile', 'entropy'];
const PRECISIONS: CalibrationPrecision[] = ['int8', 'fp8'];

async function ort(model: Uint8Array, x: Tensor): Promise<Float32Array> {
  return (await runOrtModel(model, [x]))[0]!.data as Float32Array;
}

describe.each(Object.keys(MODELS))('the %s', (name) => {
  const m = MODELS[name]!();
  const calibration = batchesFor(m, 8, 16, 5);
  const held = batchesFor(m, 1, 64, 99)[0]![m.input]!;
  let float: Float32Array;
  beforeAll(async () => {
    float = await ort(m.model, held);
  });

  describe.each(PRECISIONS)('%s', (precision) => {
    test.each(METHODS)('%s: the Q/DQ model runs in onnxruntime within rounding error of its float twin', async (method) => {
      const { model, report } = await calibrate(m.model, calibration, { method, precision });
      expect(report.runner).toBe('onnxruntime');
      const quantized = await ort(model, held);
      const twin = await ort(clippedModel(m.model, report.activations), held);
      expect(relativeError(quantized, twin)).toBeLessThan(BOUND[precision]);
      if (method !== 'entropy') expect(relativeError(quantized, float)).toBeLessThan(BOUND[precision]);
      // fp8 needs opset 19; int8's per-axis scales need 13, which the model (17) has.
      expect(report.opset).toEqual({ from: 17, to: precision === 'fp8' ? 19 : 17 });
      expect(opsetOf(decode(model))).toBe(report.opset.to);
    });
  });
});

describe('per-channel weights', () => {
  /** max |w| over each index along `axis`. */
  function channelMax(w: Tensor, axis: number): number[] {
    const inner = w.shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    const n = w.shape[axis]!;
    const out = new Array<number>(n).fill(0);
    (w.data as Float32Array).forEach((v, i) => {
      const c = Math.floor(i / inner) % n;
      out[c] = Math.max(out[c]!, Math.abs(v));
    });
    return out;
  }

  // Each op's output-channel axis in its weight's layout.
  const cases: [string, () => TestModel, string, string, number][] = [
    ['Conv [M, C, kH, kW]', convNet, 'conv1', 'conv1_w', 0],
    ['Conv (stride 2)', convNet, 'conv2', 'conv2_w', 0],
    ['ConvTranspose [C, M, kH, kW]', convNet, 'up', 'up_w', 1],
    ['Gemm B [K, N]', convNet, 'fc', 'fc_w', 1],
    ['Gemm B [N, K] (transB)', mlp, 'fc1', 'fc1_w', 0],
    ['MatMul B [K, N]', mlp, 'fc2', 'fc2_w', 1],
  ];

  test.each(PRECISIONS)('%s: scale = max |w| per output channel / qmax, stored values the weights rounded to it', async (precision) => {
    const qmax = precision === 'int8' ? 127 : 448;
    const built = { mlp: mlp(), conv: convNet() };
    const results = {
      mlp: await calibrate(built.mlp.model, batchesFor(built.mlp, 2, 4, 1), { precision }),
      conv: await calibrate(built.conv.model, batchesFor(built.conv, 2, 4, 1), { precision }),
    };
    for (const [label, make, node, weight, axis] of cases) {
      const which = make === mlp ? 'mlp' : 'conv';
      const w = built[which].weights[weight]!;
      const m = decode(results[which].model);
      const dq = dequantizeOf(m, node, 1);
      expect({ label, axis: dq.axis }).toEqual({ label, axis });
      const expected = channelMax(w, axis).map((a) => Math.fround(a / qmax));
      expect(floatsOf(dq.scale)).toEqual(expected);
      expect(dimsOf(dq.scale)).toEqual([w.shape[axis]]);
      expect(dimsOf(dq.stored!)).toEqual([...w.shape]);
      expect(dq.stored!.dataType).toBe(precision === 'int8' ? 3 : 17);
      // The float weight is gone: nothing else reads it.
      expect(m.graph!.initializer!.some((t) => t.name === weight)).toBe(false);
      const report = results[which].report.weights.find((r) => r.tensor === weight)!;
      expect(report.scale).toEqual(expected);
      expect(report.amax).toEqual(channelMax(w, axis));
      if (precision === 'int8') {
        // Each stored value is w / scale rounded: within half a step of the weight, and |q| <= 127.
        const q = int8sOf(dq.stored!);
        const inner = w.shape.slice(axis + 1).reduce((a, b) => a * b, 1);
        (w.data as Float32Array).forEach((v, i) => {
          const s = expected[Math.floor(i / inner) % w.shape[axis]!]!;
          expect(Math.abs(q[i]!)).toBeLessThanOrEqual(127);
          expect(Math.abs(q[i]! * s - v)).toBeLessThanOrEqual(s / 2 + 1e-7);
        });
      }
    }
  });

  test('perChannelWeights false: one scale a weight, max |w| / 127, no axis', async () => {
    const m = convNet();
    const { model, report } = await calibrate(m.model, batchesFor(m, 2, 4, 1), { perChannelWeights: false });
    const dq = dequantizeOf(decode(model), 'conv2', 1);
    expect(dq.axis).toBeUndefined();
    expect(dimsOf(dq.scale)).toEqual([]);
    const max = Math.max(...(m.weights.conv2_w!.data as Float32Array).map(Math.abs));
    expect(floatsOf(dq.scale)).toEqual([Math.fround(max / 127)]);
    expect(report.perChannelWeights).toBe(false);
    expect(report.weights.every((w) => w.axis === null && w.scale.length === 1)).toBe(true);
  });
});

describe('the Q/DQ model in tensorrt-node', () => {
  test.each(PRECISIONS)('%s: loadOnnx imports it and the reference backend gives what onnxruntime gives on it', async (precision) => {
    for (const m of [mlp(), convNet()]) {
      const { model } = await calibrate(m.model, batchesFor(m, 4, 8, 3), { precision, method: 'percentile' });
      const x = batchesFor(m, 1, 8, 42)[0]![m.input]!;
      const expected = (await runOrtModel(model, [x]))[0]!;
      const program = await compile(model, { backend: 'reference', inputs: { [m.input]: { shape: [...x.shape] } } });
      try {
        const [actual] = await program.run([x]);
        expectClose(actual!, expected, FP32, precision);
      } finally {
        await program.dispose();
      }
    }
  });
});

describe('the report and options', () => {
  test('per activation: amax, scale, method, the nodes that read it; the count of quantized nodes', async () => {
    const m = convNet();
    const progress: number[] = [];
    const { report } = await calibrate(m.model, batchesFor(m, 3, 4, 7), { method: 'percentile', percentile: 99.9, onProgress: (p) => progress.push(p.batches) });
    expect(progress).toEqual([1, 2, 3]);
    expect(report).toMatchObject({ method: 'percentile', percentile: 99.9, precision: 'int8', perChannelWeights: true, batches: 3 });
    expect(report.quantizedNodes).toBe(4);
    expect(report.quantizedNodeNames).toEqual(['conv1', 'conv2', 'up', 'fc']);
    // Graph input x, the two ReLUs the convolutions read, and the pooled features the Gemm reads.
    expect(report.activations.map((a) => [a.tensor, a.consumers])).toEqual([
      ['x', ['conv1']],
      ['r1', ['conv2']],
      ['r2', ['up']],
      ['f', ['fc']],
    ]);
    for (const a of report.activations) {
      expect(a.method).toBe('percentile');
      expect(a.scale).toBe(Math.fround(a.amax / 127));
      expect(a.amax).toBeLessThanOrEqual(a.max);
      expect(a.count).toBeGreaterThan(0);
    }
    expect(report.weights.map((w) => [w.tensor, w.axis])).toEqual([
      ['conv1_w', 0],
      ['conv2_w', 0],
      ['up_w', 1],
      ['fc_w', 1],
    ]);
    // Biases stay float.
    expect(report.skipped).toEqual([]);
  });

  test('exclude leaves a node float; the activation pair is still shared by the nodes that read it quantized', async () => {
    const m = convNet();
    const { model, report } = await calibrate(m.model, batchesFor(m, 2, 4, 7), { exclude: ['conv2'] });
    expect(report.quantizedNodeNames).toEqual(['conv1', 'up', 'fc']);
    expect(report.skipped).toEqual([{ what: 'conv2', reason: 'excluded' }]);
    const g = decode(model).graph!;
    const conv2 = g.node!.find((n) => n.name === 'conv2')!;
    expect(conv2.input).toEqual(['r1', 'conv2_w', 'conv2_b']);
    expect(g.initializer!.some((t) => t.name === 'conv2_w')).toBe(true);
  });

  test('a model path in, the Q/DQ model written to `output` (the same bytes as returned)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-calibrate-'));
    try {
      const m = mlp();
      const file = path.join(dir, 'mlp.onnx');
      fs.writeFileSync(file, m.model);
      const output = path.join(dir, 'mlp.qdq.onnx');
      const { model } = await calibrate(file, batchesFor(m, 2, 4, 1), { output });
      expect(new Uint8Array(fs.readFileSync(output))).toEqual(model);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an async iterable of batches, and the interpreter as the runner: the same scales as onnxruntime', async () => {
    const m = convNet();
    const batches = batchesFor(m, 3, 4, 11);
    async function* source(): AsyncGenerator<Record<string, Tensor>> {
      for (const b of batches) {
        await new Promise((r) => setImmediate(r));
        yield b;
      }
    }
    const viaOrt = await calibrate(m.model, batches, { runner: 'onnxruntime' });
    const viaInterpreter = await calibrate(m.model, source(), { runner: 'interpreter' });
    expect(viaInterpreter.report.runner).toBe('interpreter');
    expect(viaInterpreter.report.activations.map((a) => a.tensor)).toEqual(viaOrt.report.activations.map((a) => a.tensor));
    viaInterpreter.report.activations.forEach((a, i) => {
      // Two float32 computations of the same model: ranges equal to float32 rounding.
      expect(a.amax).toBeCloseTo(viaOrt.report.activations[i]!.amax, 5);
    });
  });

  test('a weight from a Constant node is stored quantized and the Constant goes; a weight another node reads stays float too', async () => {
    const rng = new Random(6);
    const wc = rng.tensor([4, 3]);
    const ws = rng.tensor([4, 4]);
    const model = buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: ['N', 4] } },
      initializers: { ws },
      nodes: [
        { ...constantNode('wc', wc), name: 'const_wc' },
        { op: 'MatMul', name: 'mm_c', inputs: ['x', 'wc'], outputs: ['y1'] },
        { op: 'MatMul', name: 'mm_s', inputs: ['x', 'ws'], outputs: ['y2'] },
        { op: 'Identity', name: 'keep', inputs: ['ws'], outputs: ['y3'] },
      ],
      outputs: ['y1', 'y2', 'y3'],
    });
    const x = rng.tensor([5, 4]);
    const { model: qdq, report } = await calibrate(model, [{ x }]);
    const g = decode(qdq).graph!;
    expect(g.node!.some((n) => n.opType === 'Constant')).toBe(false);
    expect(g.initializer!.some((t) => t.name === 'ws')).toBe(true);
    expect(report.weights.map((w) => [w.tensor, w.axis])).toEqual([
      ['wc', 1],
      ['ws', 1],
    ]);
    const [y1, y2, y3] = await runOrtModel(qdq, [x]);
    const [f1, f2, f3] = await runOrtModel(model, [x]);
    expect(relativeError(y1!.data as Float32Array, f1!.data as Float32Array)).toBeLessThan(BOUND.int8);
    expect(relativeError(y2!.data as Float32Array, f2!.data as Float32Array)).toBeLessThan(BOUND.int8);
    expect(y3!.data).toEqual(f3!.data);
  });

  test('external data is read into the Q/DQ model, which is one file; from bytes without baseDir it is E_BAD_MODEL naming the tensor', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-calibrate-ext-'));
    try {
      const w = Float32Array.from([0.5, -1, 2, 0.25]);
      fs.writeFileSync(path.join(dir, 'weights.bin'), new Uint8Array(w.buffer));
      const file = path.join(dir, 'ext.onnx');
      fs.writeFileSync(file, externalDataModel('weights.bin'));
      const x = Tensor.from('float32', [4], [1, 2, 3, 4]);
      const { model } = await calibrate(file, [{ x }], { ops: ['Add'] });
      const t = decode(model).graph!.initializer!.find((i) => i.name === 'w')!;
      expect(t.dataLocation ?? 0).toBe(0);
      expect(floatsOf(t)).toEqual(Array.from(w));
      const [y] = await runOrtModel(model, [x]);
      expect(relativeError(y!.data as Float32Array, [1.5, 1, 5, 4.25])).toBeLessThan(0.01);
      const e = await rejection(calibrate(externalDataModel('weights.bin'), [{ x }], { ops: ['Add'] }));
      expect(e.code).toBe('E_BAD_MODEL');
      expect(e.message).toContain('initializer "w"');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
