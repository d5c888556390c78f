/**
 * Q/DQ networks compiled on the onnxruntime backend, against onnxruntime-node running the
 * same model file with its graph optimizations off. The backend's session keeps them on but
 * for onnxruntime's Q/DQ rewrites (lib/backends/onnxruntime/run/engine.ts: SESSION_CONFIG,
 * DISABLED_OPTIMIZERS). With those rewrites on, each model here came out wrong or was refused
 * (onnxruntime-node 1.30, CPU):
 * - the FP8 calibrations of test/quantization/models.ts: the MLP 1.2 off (a Relu in front of
 *   an FP8 QuantizeLinear removed), the conv net refused ("Failed to find kernel for
 *   Reshape(19)": QDQ propagation moved the FP8 quantization of the Flatten's output in front
 *   of its Reshape); the INT8 calibration of the MLP 0.005 off;
 * - an FP8 Conv block and an FP8 Gemm block: a Relu removed in front of their output
 *   quantizations (onnxruntime running the original file itself at 'all' refuses both: it
 *   fuses them into QLinearConv and QGemm, which take no float8);
 * - a Relu in front of an INT4 quantization, removed the same way;
 * - a requantization (a Q/DQ pair, then another of other parameters) in int8 and in uint8,
 *   merged into one pair of a scale of onnxruntime's making;
 * - blocked int8, uint8 and int4 weights into MatMul, fused into MatMulNBits, which quantizes
 *   the activations to int8.
 * The calibrated models have arbitrary scales; their outputs are compared to float32 rounding.
 * The hand-built ones are exact by construction (power-of-two scales, inputs and weights on
 * coarse grids, so every product and sum is exact in float32 in any order) and compare
 * exactly.
 */
import { onnxDType } from '../../../lib/backends/onnxruntime/layers/onnx-graph';
import { compile } from '../../../lib/compile';
import type { DType } from '../../../lib/ir/dtype';
import { Tensor } from '../../../lib/ir/tensor';
import { calibrate, type CalibrationPrecision } from '../../../lib/quantization';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { closeOrt, runOrtModel } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { batchesFor, convNet, mlp, type TestModel } from '../../quantization/models';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

// Calibration and onnxruntime sessions take seconds in jest's sandbox.
jest.setTimeout(60_000);

afterAll(async () => closeOrt());

const EXACT: Tolerance = { rtol: 0, atol: 0 };
/** float32 rounding in a different order: the wrong answers were 0.005 to 1.2 off. */
const ROUNDING: Tolerance = { rtol: 1e-6, atol: 1e-6 };

/** Our outputs on the onnxruntime backend (every node converted into the engine) against onnxruntime running the model itself. */
async function expectMatchesOrt(bytes: Uint8Array, inputs: Record<string, Tensor>, tol: Tolerance): Promise<void> {
  const feeds = Object.values(inputs);
  const expected = await runOrtModel(bytes, feeds);
  const shapes = Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, { shape: [...t.shape] }]));
  const program = await compile(bytes, { backend: 'onnxruntime', minBlockSize: 1, inputs: shapes });
  try {
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.target}: ${o.reasons.join('; ')}`)).toEqual([]);
    const actual = await program.run(feeds);
    expect(actual).toHaveLength(expected.length);
    actual.forEach((t, i) => expectClose(t, expected[i]!, tol, `output ${i}`));
  } finally {
    await program.dispose();
  }
}

describe('calibrated models (test/quantization/models.ts)', () => {
  const MODELS: Record<string, () => TestModel> = { mlp, 'conv net': convNet };
  const cases = Object.keys(MODELS).flatMap((name) => (['fp8', 'int8'] as CalibrationPrecision[]).map((precision) => [name, precision] as const));

  test.each(cases)('the %s, %s', async (name, precision) => {
    const m = MODELS[name]!();
    const { model } = await calibrate(m.model, batchesFor(m, 4, 8, 5), { precision });
    const x = batchesFor(m, 1, 16, 2)[0]![m.input]!;
    await expectMatchesOrt(model, { [m.input]: x }, ROUNDING);
  });
});

// Hand-built models: initializers are our Tensors (int4 packed two a byte, as ONNX stores it).

type NodeSpec = [op: string, inputs: string[], outputs: string[], attrs?: Record<string, number | number[]>];

function tensorProto(name: string, t: Tensor): unknown {
  let raw = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();
  if (t.dtype === 'int4') {
    const values = t.data as Int8Array;
    raw = new Uint8Array(Math.ceil(values.length / 2));
    values.forEach((v, i) => (raw[i >> 1]! |= (v & 0x0f) << (4 * (i & 1))));
  }
  return onnx.TensorProto.create({ name, dims: [...t.shape], dataType: onnxDType(t.dtype), rawData: raw });
}

function model(opset: number, inputs: Record<string, number[]>, initializers: Record<string, Tensor>, nodes: NodeSpec[], outputs: string[]): Uint8Array {
  const T = onnx.AttributeProto.AttributeType;
  const graph = onnx.GraphProto.create({
    name: 'qdq',
    node: nodes.map(([op, ins, outs, attrs], i) =>
      onnx.NodeProto.create({
        name: `${op}_${i}`,
        opType: op,
        input: ins,
        output: outs,
        attribute: Object.entries(attrs ?? {}).map(([name, v]) => (Array.isArray(v) ? { name, type: T.INTS, ints: v } : { name, type: T.INT, i: v })),
      }),
    ),
    input: Object.entries(inputs).map(([name, dims]) => ({ name, type: { tensorType: { elemType: onnxDType('float32'), shape: { dim: dims.map((d) => ({ dimValue: d })) } } } })),
    initializer: Object.entries(initializers).map(([name, t]) => tensorProto(name, t)),
    output: outputs.map((name) => ({ name })),
  });
  const proto = onnx.ModelProto.create({ irVersion: opset >= 21 ? 10 : 9, producerName: 'tensorrt-node-tests', opsetImport: [{ domain: '', version: opset }], graph });
  return onnx.ModelProto.encode(proto).finish();
}

const rng = new Random(20261208);
const pow2 = (e: number): number => 2 ** e;
const scalar = (dtype: DType, v: number): Tensor => Tensor.from(dtype, [], [v]);
const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);
/** Values k · step for integers k in [lo, hi]. */
const grid = (shape: number[], step: number, lo: number, hi: number): Tensor => f32(shape, Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.int(lo, hi) * step));
/** FP8 weights of few significant bits (every one a float8e4m3fn value, exactly). */
const fp8Weights = (shape: number[]): Tensor => Tensor.from('float8e4m3fn', shape, Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => [0.5, 1, 1.5, 2, 3][rng.int(0, 4)]! * (rng.int(0, 1) ? 1 : -1)));
const qdq = (x: string, s: string, z: string, y: string): NodeSpec[] => [
  ['QuantizeLinear', [x, s, z], [`${y}_q`]],
  ['DequantizeLinear', [`${y}_q`, s, z], [y]],
];

describe('FP8 Q/DQ blocks of Conv and Gemm (onnxruntime fuses them into QLinearConv and QGemm, which take no float8)', () => {
  test('Conv: x → Q/DQ → Conv (weights per output channel, bias) → Relu → Q/DQ', async () => {
    const bytes = model(
      19,
      { x: [1, 3, 6, 6] },
      {
        sx: scalar('float32', pow2(-2)),
        zx: scalar('float8e4m3fn', 0),
        w: fp8Weights([4, 3, 3, 3]),
        sw: f32([4], [pow2(-1), pow2(-2), pow2(-3), pow2(-1)]),
        zw: Tensor.from('float8e4m3fn', [4], [0, 0, 0, 0]),
        b: f32([4], [0.5, -0.25, 0.125, -1]),
        sy: scalar('float32', pow2(-1)),
        zy: scalar('float8e4m3fn', 0),
      },
      [...qdq('x', 'sx', 'zx', 'xd'), ['DequantizeLinear', ['w', 'sw', 'zw'], ['wd'], { axis: 0 }], ['Conv', ['xd', 'wd', 'b'], ['c'], { pads: [1, 1, 1, 1] }], ['Relu', ['c'], ['r']], ...qdq('r', 'sy', 'zy', 'y')],
      ['y'],
    );
    await expectMatchesOrt(bytes, { x: grid([1, 3, 6, 6], pow2(-2), -16, 16) }, EXACT);
  });

  test('Gemm: x → Q/DQ → Gemm (transB, weights per output row, bias) → Relu → Q/DQ', async () => {
    const bytes = model(
      19,
      { x: [4, 16] },
      {
        sx: scalar('float32', pow2(-2)),
        zx: scalar('float8e4m3fn', 0),
        w: fp8Weights([8, 16]),
        sw: f32([8], [pow2(-1), pow2(-2), pow2(-3), pow2(-1), pow2(-2), pow2(-3), pow2(-1), pow2(-2)]),
        zw: Tensor.from('float8e4m3fn', [8], new Array<number>(8).fill(0)),
        b: f32([8], [0.5, -0.25, 0.125, -1, 0, 2, -0.375, 0.75]),
        sy: scalar('float32', pow2(-1)),
        zy: scalar('float8e4m3fn', 0),
      },
      [...qdq('x', 'sx', 'zx', 'xd'), ['DequantizeLinear', ['w', 'sw', 'zw'], ['wd'], { axis: 0 }], ['Gemm', ['xd', 'wd', 'b'], ['g'], { transB: 1 }], ['Relu', ['g'], ['r']], ...qdq('r', 'sy', 'zy', 'y')],
      ['y'],
    );
    await expectMatchesOrt(bytes, { x: grid([4, 16], pow2(-2), -16, 16) }, EXACT);
  });
});

describe('integer Q/DQ forms onnxruntime rewrites with other numerics', () => {
  test('a Relu in front of an INT4 quantization (whose range goes below zero) stays', async () => {
    const bytes = model(21, { x: [2, 8] }, { s: scalar('float32', pow2(-2)), z: scalar('int4', 0) }, [['Relu', ['x'], ['r']], ...qdq('r', 's', 'z', 'y')], ['y']);
    await expectMatchesOrt(bytes, { x: grid([2, 8], pow2(-3), -24, 24) }, EXACT);
  });

  test.each([
    ['int8', 5, -3],
    ['uint8', 100, 120],
  ] as const)('a %s requantization: Q/DQ to steps of 1/16, then to steps of 1/8 with another zero point', async (dtype, z1, z2) => {
    const bytes = model(
      13,
      { x: [4, 16] },
      { s1: scalar('float32', pow2(-4)), z1: scalar(dtype, z1), s2: scalar('float32', pow2(-3)), z2: scalar(dtype, z2) },
      [...qdq('x', 's1', 'z1', 'a'), ...qdq('a', 's2', 'z2', 'y')],
      ['y'],
    );
    // Past both ranges, so saturation is compared too.
    await expectMatchesOrt(bytes, { x: rng.tensor([4, 16], 'float32', -20, 20) }, EXACT);
  });

  test.each([
    ['int8', -127, 127],
    ['uint8', 0, 255],
    ['int4', -8, 7],
  ] as const)('blocked %s weights (blocks of 16 along K) into MatMul', async (dtype, lo, hi) => {
    const w = Tensor.from(dtype, [32, 8], Array.from({ length: 32 * 8 }, () => rng.int(lo, hi)));
    const sw = f32([2, 8], Array.from({ length: 16 }, () => pow2(-rng.int(5, 7))));
    const bytes = model(21, { x: [4, 32] }, { w, sw }, [['DequantizeLinear', ['w', 'sw'], ['wd'], { axis: 0, block_size: 16 }], ['MatMul', ['x', 'wd'], ['y']]], ['y']);
    await expectMatchesOrt(bytes, { x: grid([4, 32], pow2(-3), -32, 32) }, EXACT);
  });
});
