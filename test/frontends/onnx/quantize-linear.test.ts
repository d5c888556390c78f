/**
 * ONNX QuantizeLinear/DequantizeLinear as whole quantize/dequantize layers: small QDQ models
 * (an MLP, a convolution block, and single Q/DQ pairs per tensor, per axis and in blocks, for
 * INT8, UINT8, FP8 (float8e4m3fn) and INT4) built in memory, compiled on the reference and
 * onnxruntime backends, and compared with onnxruntime-node running the same model file (its
 * graph optimizations off). Quantized values compare exactly: every scale divides in float32
 * and every result rounds half to even, in both. The converted Network holds quantize and
 * dequantize layers, not the division, rounding and clipping they used to be composed of.
 * Hostile forms are typed errors naming the node.
 */
import { compile, dryRun } from '../../../lib/compile';
import { convertWhole } from '../../helpers/convert-compare';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { printNetwork } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { thrownError } from '../../helpers/errors';
import { closeOrt, runOrtModel } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

afterAll(async () => closeOrt());

const rng = new Random(20261207);
const EXACT: Tolerance = { rtol: 0, atol: 0 };

// TensorProto.DataType codes.
const FLOAT = 1;
const UINT8 = 2;
const INT8 = 3;
const FLOAT8E4M3FN = 17;
const INT4 = 22;

interface Init {
  name: string;
  dataType: number;
  dims: number[];
  rawData: Uint8Array;
}

const f32Init = (name: string, dims: number[], values: number[]): Init => ({ name, dataType: FLOAT, dims, rawData: new Uint8Array(new Float32Array(values).buffer) });
const i8Init = (name: string, dims: number[], values: number[]): Init => ({ name, dataType: INT8, dims, rawData: new Uint8Array(new Int8Array(values).buffer) });
const u8Init = (name: string, dims: number[], values: number[]): Init => ({ name, dataType: UINT8, dims, rawData: new Uint8Array(values) });
/** int4 as ONNX stores it: two values a byte, the first in the low nibble. */
function i4Init(name: string, dims: number[], values: number[]): Init {
  const bytes = new Uint8Array(Math.ceil(values.length / 2));
  values.forEach((v, i) => (bytes[i >> 1]! |= (v & 0x0f) << (4 * (i & 1))));
  return { name, dataType: INT4, dims, rawData: bytes };
}
/** A float8e4m3fn zero (the type's zero point, which gives QuantizeLinear its output type). */
const f8Zero = (name: string, dims: number[]): Init => ({ name, dataType: FLOAT8E4M3FN, dims, rawData: new Uint8Array(dims.reduce((a, d) => a * d, 1)) });

interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Record<string, number>;
}

interface ModelSpec {
  nodes: NodeSpec[];
  inputs: Array<{ name: string; dataType: number; dims: number[] }>;
  outputs: string[];
  initializers: Init[];
  opset: number;
}

function model(spec: ModelSpec): Uint8Array {
  const INT = onnx.AttributeProto.AttributeType.INT;
  const proto = onnx.ModelProto.create({
    irVersion: spec.opset >= 21 ? 10 : 9,
    producerName: 'tensorrt-node-tests',
    opsetImport: [{ domain: '', version: spec.opset }],
    graph: onnx.GraphProto.create({
      name: 'qdq',
      node: spec.nodes.map((n, i) =>
        onnx.NodeProto.create({
          name: `${n.op}_${i}`,
          opType: n.op,
          input: n.inputs,
          output: n.outputs,
          attribute: Object.entries(n.attrs ?? {}).map(([name, i]) => ({ name, type: INT, i })),
        }),
      ),
      input: spec.inputs.map((x) => ({ name: x.name, type: { tensorType: { elemType: x.dataType, shape: { dim: x.dims.map((d) => ({ dimValue: d })) } } } })),
      initializer: spec.initializers.map((t) => onnx.TensorProto.create(t)),
      output: spec.outputs.map((name) => onnx.ValueInfoProto.create({ name })),
    }),
  });
  return onnx.ModelProto.encode(proto).finish();
}

const floatInput = (name: string, dims: number[]): ModelSpec['inputs'][number] => ({ name, dataType: FLOAT, dims });

/** Our outputs on `backend` (every node converted into the engine) against onnxruntime running the model itself. */
async function expectBackendMatchesOrt(bytes: Uint8Array, inputs: Tensor[], backend: 'reference' | 'onnxruntime', tol: Tolerance = EXACT): Promise<void> {
  const expected = await runOrtModel(bytes, inputs);
  const program = await compile(bytes, { backend, minBlockSize: 1 });
  try {
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.target}: ${o.reasons.join('; ')}`)).toEqual([]);
    const actual = await program.run(inputs);
    expect(actual).toHaveLength(expected.length);
    actual.forEach((t, i) => expectClose(t, expected[i]!, tol, `${backend} output ${i}`));
  } finally {
    await program.dispose();
  }
}

/** The layer kinds of the model's Network, every node converted. */
function layerKinds(bytes: Uint8Array): string[] {
  return convertWhole(loadOnnx(bytes)).layers.map((l) => (l.params.kind === 'elementwise' || l.params.kind === 'unary' ? `${l.params.kind}.${l.params.op}` : l.params.kind === 'activation' ? `activation.${l.params.type}` : l.params.kind));
}

/** Multiples of powers of two: every product and sum below is exact in float32, in any order. */
const pow2 = (e: number): number => 2 ** e;

// A Q/DQ MLP: x → Q/DQ (int8) → MatMul with int8 weights dequantized per output column → + bias
// → Relu → Q/DQ (uint8) → MatMul with int8 weights per tensor.
function mlp(): Uint8Array {
  const w1 = Array.from({ length: 8 * 6 }, () => rng.int(-127, 127));
  const w2 = Array.from({ length: 6 * 3 }, () => rng.int(-127, 127));
  return model({
    opset: 13,
    inputs: [floatInput('x', [4, 8])],
    outputs: ['y'],
    initializers: [
      f32Init('sx', [], [pow2(-4)]),
      i8Init('zx', [], [3]),
      i8Init('w1', [8, 6], w1),
      f32Init('sw1', [6], [pow2(-6), pow2(-5), pow2(-7), pow2(-6), pow2(-8), pow2(-5)]),
      f32Init('b1', [6], [0.25, -0.5, 0, 1, -0.125, 0.0625]),
      f32Init('sh', [], [pow2(-3)]),
      u8Init('zh', [], [10]),
      i8Init('w2', [6, 3], w2),
      f32Init('sw2', [], [pow2(-7)]),
    ],
    nodes: [
      { op: 'QuantizeLinear', inputs: ['x', 'sx', 'zx'], outputs: ['xq'] },
      { op: 'DequantizeLinear', inputs: ['xq', 'sx', 'zx'], outputs: ['xd'] },
      { op: 'DequantizeLinear', inputs: ['w1', 'sw1'], outputs: ['w1d'], attrs: { axis: 1 } },
      { op: 'MatMul', inputs: ['xd', 'w1d'], outputs: ['m1'] },
      { op: 'Add', inputs: ['m1', 'b1'], outputs: ['a1'] },
      { op: 'Relu', inputs: ['a1'], outputs: ['r1'] },
      { op: 'QuantizeLinear', inputs: ['r1', 'sh', 'zh'], outputs: ['hq'] },
      { op: 'DequantizeLinear', inputs: ['hq', 'sh', 'zh'], outputs: ['hd'] },
      { op: 'DequantizeLinear', inputs: ['w2', 'sw2'], outputs: ['w2d'] },
      { op: 'MatMul', inputs: ['hd', 'w2d'], outputs: ['y'] },
    ],
  });
}

// A convolution block: x → Q/DQ (uint8, zero point 128) → Conv with int8 weights per output
// channel (axis 0) and a bias → Relu → Q/DQ (int8).
function convBlock(): Uint8Array {
  const w = Array.from({ length: 4 * 3 * 3 * 3 }, () => rng.int(-100, 100));
  return model({
    opset: 13,
    inputs: [floatInput('x', [1, 3, 6, 6])],
    outputs: ['y'],
    initializers: [
      f32Init('sx', [], [pow2(-5)]),
      u8Init('zx', [], [128]),
      i8Init('w', [4, 3, 3, 3], w),
      f32Init('sw', [4], [pow2(-7), pow2(-6), pow2(-8), pow2(-7)]),
      f32Init('b', [4], [0.5, -0.25, 0.125, 0]),
      f32Init('sy', [], [pow2(-4)]),
      i8Init('zy', [], [-5]),
    ],
    nodes: [
      { op: 'QuantizeLinear', inputs: ['x', 'sx', 'zx'], outputs: ['xq'] },
      { op: 'DequantizeLinear', inputs: ['xq', 'sx', 'zx'], outputs: ['xd'] },
      { op: 'DequantizeLinear', inputs: ['w', 'sw'], outputs: ['wd'], attrs: { axis: 0 } },
      { op: 'Conv', inputs: ['xd', 'wd', 'b'], outputs: ['c'], attrs: { group: 1 } },
      { op: 'Relu', inputs: ['c'], outputs: ['r'] },
      { op: 'QuantizeLinear', inputs: ['r', 'sy', 'zy'], outputs: ['rq'] },
      { op: 'DequantizeLinear', inputs: ['rq', 'sy', 'zy'], outputs: ['y'] },
    ],
  });
}

/** One QuantizeLinear → DequantizeLinear pair over x, with the given parameters (initializers 's', 'z'); `saturate` is QuantizeLinear's only. */
function pair(dims: number[], params: Init[], attrs: Record<string, number>, opset: number, quantizeOnly: Record<string, number> = {}): Uint8Array {
  const names = params.map((p) => p.name);
  return model({
    opset,
    inputs: [floatInput('x', dims)],
    outputs: ['q', 'y'].filter((o) => o === 'y' || params.every((p) => p.dataType !== INT4 && p.dataType !== FLOAT8E4M3FN)),
    initializers: params,
    nodes: [
      { op: 'QuantizeLinear', inputs: ['x', ...names], outputs: ['q'], attrs: { ...attrs, ...quantizeOnly } },
      { op: 'DequantizeLinear', inputs: ['q', ...names], outputs: ['y'], attrs },
    ],
  });
}

const randomScales = (n: number): number[] => Array.from({ length: n }, () => rng.uniform(0.005, 0.05));

const FORMS: Array<[string, () => Uint8Array, number[]]> = [
  ['INT8 per tensor', () => pair([3, 5], [f32Init('s', [], [0.0173]), i8Init('z', [], [-7])], {}, 13), [3, 5]],
  ['UINT8 per axis (axis 1)', () => pair([2, 4, 3], [f32Init('s', [4], randomScales(4)), u8Init('z', [4], [0, 60, 128, 255])], { axis: 1 }, 13), [2, 4, 3]],
  ['INT8 per axis (axis -1)', () => pair([4, 6], [f32Init('s', [6], randomScales(6)), i8Init('z', [6], [0, 1, -1, 5, -9, 127])], { axis: -1 }, 13), [4, 6]],
  ['INT8 in blocks of 4 along axis 1', () => pair([3, 8], [f32Init('s', [3, 2], randomScales(6)), i8Init('z', [3, 2], [0, -3, 4, 1, 0, 2])], { axis: 1, block_size: 4 }, 21), [3, 8]],
  ['UINT8 in blocks of 2 along axis 0', () => pair([4, 3], [f32Init('s', [2, 3], randomScales(6)), u8Init('z', [2, 3], [128, 0, 17, 255, 3, 90])], { axis: 0, block_size: 2 }, 21), [4, 3]],
  ['FP8 (float8e4m3fn) per tensor, saturating', () => pair([2, 6], [f32Init('s', [], [0.01]), f8Zero('z', [])], {}, 19), [2, 6]],
  ['FP8 per axis', () => pair([3, 4], [f32Init('s', [3], [0.002, 0.05, 1]), f8Zero('z', [3])], { axis: 0 }, 19), [3, 4]],
  ['INT4 per axis', () => pair([2, 5], [f32Init('s', [5], randomScales(5)), i4Init('z', [5], [0, 1, -2, 7, -8])], { axis: 1 }, 21), [2, 5]],
  ['INT4 in blocks of 3 along axis 1', () => pair([2, 6], [f32Init('s', [2, 2], randomScales(4)), i4Init('z', [2, 2], [0, -1, 3, 0])], { axis: 1, block_size: 3 }, 21), [2, 6]],
];

describe('QuantizeLinear/DequantizeLinear compiled, against onnxruntime on the same model', () => {
  describe.each(['reference', 'onnxruntime'] as const)('on the %s backend', (backend) => {
    test('a Q/DQ MLP (int8 activations and weights per column, uint8 hidden activations)', async () => {
      await expectBackendMatchesOrt(mlp(), [rng.tensor([4, 8], 'float32', -6, 6)], backend);
    });

    test('a Q/DQ convolution block (uint8 in, int8 weights per channel, int8 out)', async () => {
      await expectBackendMatchesOrt(convBlock(), [rng.tensor([1, 3, 6, 6], 'float32', -4, 4)], backend);
    });

    // Inputs reach past the types' ranges, so saturation is compared too.
    test.each(FORMS)('%s', async (_label, build, dims) => {
      await expectBackendMatchesOrt(build(), [rng.tensor(dims, 'float32', -8, 8)], backend);
    });
  });

  test('the MLP and the convolution block convert into quantize and dequantize layers, not arithmetic', () => {
    for (const bytes of [mlp(), convBlock()]) {
      const kinds = layerKinds(bytes);
      expect(kinds.filter((k) => k === 'quantize')).toHaveLength(2);
      expect(kinds.filter((k) => k === 'dequantize').length).toBeGreaterThanOrEqual(3);
      expect(kinds.filter((k) => ['elementwise.div', 'unary.round', 'activation.clip'].includes(k))).toEqual([]);
      const printed = printNetwork(convertWhole(loadOnnx(bytes)));
      expect(printed).toMatch(/= quantize\(.*to="int8"/);
      expect(printed).toMatch(/= dequantize\(.*to="float32"/);
    }
  });

  test('quantized weights stay quantized constants with a dequantize layer (not folded into float weights)', () => {
    const network = convertWhole(loadOnnx(convBlock()));
    const weights = network.layers.filter((l) => l.params.kind === 'constant' && l.params.weights.dtype === 'int8' && l.params.weights.rank === 4);
    expect(weights).toHaveLength(1);
    const reader = network.layers.find((l) => l.inputs.includes(weights[0]!.outputs[0]!))!;
    expect(reader.params).toEqual({ kind: 'dequantize', to: 'float32', axis: 0 });
  });

  test.each([
    ['FP8', 5, { to: 'float8e4m3fn', axis: 0 }],
    ['INT4 blocks', 8, { to: 'int4', axis: 1, blockSize: 3 }],
  ] as const)('the %s pair converts into one quantize layer of that type', (label, form, params) => {
    const kinds = convertWhole(loadOnnx(FORMS[form]![1]())).layers.filter((l) => l.params.kind === 'quantize');
    expect(kinds.map((l) => l.params)).toEqual([{ kind: 'quantize', ...params }]);
    void label;
  });
});

/** Each Q/DQ op of `bytes` on `backend`: its target, whether it converts, and why not. */
const verdictsOn = async (backend: 'cuda' | 'tensorrt', bytes: Uint8Array): Promise<Array<[string, boolean, string]>> =>
  (await dryRun(bytes, { backend, minBlockSize: 1 })).ops.filter((o) => o.target.includes('quantize')).map((o) => [o.target, o.converted, o.reasons.join('; ')]);

describe('the cuda backend holds int8 and uint8 quantized values only (the others run in fallback segments)', () => {
  const verdicts = (bytes: Uint8Array) => verdictsOn('cuda', bytes);

  test('an FP8 and an INT4 Q/DQ pair over an input run in fallback, with the reason', async () => {
    for (const form of [5, 7]) {
      const ops = await verdicts(FORMS[form]![1]());
      expect(ops.map(([target, converted]) => [target, converted])).toEqual([
        ['trt.quantize_linear', false],
        ['trt.dequantize_linear', false],
      ]);
      expect(ops[0]![2]).toMatch(/hold int8 and uint8 quantized values over run-time tensors, not (float8e4m3fn|int4)/);
    }
  });

  test('an INT8 pair converts on cuda, and every pair converts on onnxruntime', async () => {
    expect((await verdicts(FORMS[0]![1]())).map(([, converted]) => converted)).toEqual([true, true]);
    const onnxruntime = await dryRun(FORMS[5]![1](), { backend: 'onnxruntime', minBlockSize: 1 });
    expect(onnxruntime.ops.filter((o) => o.target.includes('quantize')).every((o) => o.converted)).toBe(true);
  });

  test('FP8 weights (a constant) dequantized before a MatMul convert on cuda: the build computes them', async () => {
    const bytes = model({
      opset: 19,
      inputs: [floatInput('x', [2, 4])],
      outputs: ['y'],
      initializers: [f8Zero('w', [4, 3]), f32Init('s', [], [0.5]), f8Zero('z', [])],
      nodes: [
        { op: 'DequantizeLinear', inputs: ['w', 's', 'z'], outputs: ['wf'], attrs: {} },
        { op: 'MatMul', inputs: ['x', 'wf'], outputs: ['y'], attrs: {} },
      ],
    });
    expect((await verdicts(bytes)).map(([target, converted]) => [target, converted])).toEqual([['trt.dequantize_linear', true]]);
  });
});

describe('the tensorrt backend: FP8 and INT4 forms TensorRT takes neither whole nor spelled out run in fallback segments', () => {
  // Selection asks the same rules the TensorRT replay applies to the layers (lib/backends/tensorrt/quantize.ts).
  const verdicts = (bytes: Uint8Array) => verdictsOn('tensorrt', bytes);

  test('FP8 per axis and INT4 over an input: fallback, with TensorRT\'s rule as the reason', async () => {
    const fp8 = await verdicts(FORMS[6]![1]());
    expect(fp8.map(([, converted]) => converted)).toEqual([false, false]);
    expect(fp8[0]![2]).toContain('per-axis scales on a run-time tensor: TensorRT quantizes activations per tensor only');
    const int4 = await verdicts(FORMS[7]![1]());
    expect(int4.map(([, converted]) => converted)).toEqual([false, false]);
    // Its zero points are not zeros, the first rule it breaks (INT4 over activations is the next).
    expect(int4[0]![2]).toContain('the zero point is not a constant of zeros; TensorRT quantizes symmetrically only');
  });

  test('FP8 per tensor over an input converts (TensorRT takes it whole), and so do INT8 forms it spells out', async () => {
    expect((await verdicts(FORMS[5]![1]())).map(([, converted]) => converted)).toEqual([true, true]);
    expect((await verdicts(FORMS[2]![1]())).map(([, converted]) => converted)).toEqual([true, true]);
  });
});

describe('opset 23 attributes, by hand', () => {
  test('precision: x / scale rounded to float16 first (3.4999 → 3.5 → 4), else to float32 (→ 3)', () => {
    const quantize = (attrs: Record<string, number>): number[] => {
      const bytes = model({
        opset: 23,
        inputs: [floatInput('x', [2])],
        outputs: ['y'],
        initializers: [f32Init('s', [], [1]), i8Init('z', [], [0])],
        nodes: [{ op: 'QuantizeLinear', inputs: ['x', 's', 'z'], outputs: ['y'], attrs }],
      });
      return Array.from(interpret(loadOnnx(bytes), [Tensor.from('float32', [2], [3.4999, -2.5001])])[0]!.toArray() as ArrayLike<number>);
    };
    // float16 holds 3.4999 as 3.5 and -2.5001 as -2.5: both ties, to even.
    expect(quantize({ precision: 10 })).toEqual([4, -2]);
    expect(quantize({})).toEqual([3, -3]);
  });

  test('DequantizeLinear output_dtype: (q − z) · s computed in float32, then rounded to float16', () => {
    const bytes = model({
      opset: 23,
      inputs: [{ name: 'q', dataType: INT8, dims: [3] }],
      outputs: ['y'],
      initializers: [f32Init('s', [], [0.1]), i8Init('z', [], [1])],
      nodes: [{ op: 'DequantizeLinear', inputs: ['q', 's', 'z'], outputs: ['y'], attrs: { output_dtype: 10 } }],
    });
    const [y] = interpret(loadOnnx(bytes), [Tensor.from('int8', [3], [11, 1, -127])]);
    // 10 · fl32(0.1) = 1.0000000149 → float16 1; 0; -128 · fl32(0.1) = -12.80000019 → float16 -12.796875 (step 2^-7 there).
    expect([y!.dtype, ...Array.from(y!.toArray() as ArrayLike<number>)]).toEqual(['float16', 1, 0, -12.796875]);
  });
});

describe('forms the layers do not take', () => {
  test('a block size that does not divide the axis (ONNX\'s shorter last block) runs in a fallback segment, matching onnxruntime', async () => {
    const bytes = pair([2, 5], [f32Init('s', [2, 2], randomScales(4)), i8Init('z', [2, 2], [0, 1, -1, 2])], { axis: 1, block_size: 3 }, 21);
    const x = rng.tensor([2, 5], 'float32', -3, 3);
    const expected = await runOrtModel(bytes, [x]);
    interpret(loadOnnx(bytes), [x]).forEach((t, i) => expectClose(t, expected[i]!, EXACT, `interpreter output ${i}`));
    const program = await compile(bytes, { backend: 'reference', minBlockSize: 1 });
    try {
      const refused = program.report.ops.filter((o) => !o.converted);
      expect(refused.map((o) => o.target)).toEqual(['trt.quantize_linear', 'trt.dequantize_linear']);
      expect(refused[0]!.reasons.join('; ')).toMatch(/block size 3 does not divide dim 5 along axis 1/);
      (await program.run([x])).forEach((t, i) => expectClose(t, expected[i]!, EXACT, `fallback output ${i}`));
    } finally {
      await program.dispose();
    }
  });

  test('FP8 without saturation (saturate=0) runs in a fallback segment, out-of-range values becoming NaN', async () => {
    const bytes = pair([4], [f32Init('s', [], [1]), f8Zero('z', [])], {}, 19, { saturate: 0 });
    const program = await compile(bytes, { backend: 'reference', minBlockSize: 1 });
    try {
      expect(program.report.ops.filter((o) => !o.converted).map((o) => o.target)).toEqual(['trt.quantize_linear']);
      const [y] = await program.run([Tensor.from('float32', [4], [1000, -2, 0.3, 448])]);
      // 0.3 rounds to the nearest float8e4m3fn, 0.3125 (1.25 · 2^-2).
      expect(Array.from(y!.toArray())).toEqual([NaN, -2, 0.3125, 448]);
    } finally {
      await program.dispose();
    }
  });
});

describe('hostile forms are typed errors naming the node', () => {
  const load = (spec: ModelSpec): Error => thrownError(() => loadOnnx(model(spec)));

  test('a per-axis scale of the wrong length', () => {
    const e = load({
      opset: 13,
      inputs: [floatInput('x', [2, 3])],
      outputs: ['y'],
      initializers: [f32Init('s', [4], [1, 1, 1, 1])],
      nodes: [{ op: 'QuantizeLinear', inputs: ['x', 's'], outputs: ['y'], attrs: { axis: 1 } }],
    });
    expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
    expect(e.message).toMatch(/QuantizeLinear_0.*axis 1 must have 3 elements/);
  });

  test('a blocked scale whose length along the axis is not ceil(dim / block_size)', () => {
    const e = load({
      opset: 21,
      inputs: [{ name: 'x', dataType: INT8, dims: [2, 8] }],
      outputs: ['y'],
      initializers: [f32Init('s', [2, 3], [1, 1, 1, 1, 1, 1])],
      nodes: [{ op: 'DequantizeLinear', inputs: ['x', 's'], outputs: ['y'], attrs: { axis: 1, block_size: 4 } }],
    });
    expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
    expect(e.message).toMatch(/DequantizeLinear_0.*ceil\(8 \/ 4\) = 2 elements/);
  });

  test('a 2-D scale without a block size', () => {
    const e = load({
      opset: 21,
      inputs: [floatInput('x', [2, 4])],
      outputs: ['y'],
      initializers: [f32Init('s', [2, 2], [1, 1, 1, 1]), i8Init('z', [2, 2], [0, 0, 0, 0])],
      nodes: [{ op: 'QuantizeLinear', inputs: ['x', 's', 'z'], outputs: ['y'], attrs: { axis: 1 } }],
    });
    expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
    expect(e.message).toMatch(/QuantizeLinear_0.*per-axis scale must be 1-D/);
  });

  test('a zero point whose type is not the output_dtype', () => {
    const e = load({
      opset: 21,
      inputs: [floatInput('x', [3])],
      outputs: ['y'],
      initializers: [f32Init('s', [], [1]), i8Init('z', [], [0])],
      nodes: [{ op: 'QuantizeLinear', inputs: ['x', 's', 'z'], outputs: ['y'], attrs: { output_dtype: UINT8 } }],
    });
    expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
    expect(e.message).toMatch(/QuantizeLinear_0.*output_dtype uint8 differs from the zero point's type int8/);
  });

  test("a DequantizeLinear zero point of another type than x's", () => {
    const e = load({
      opset: 21,
      inputs: [{ name: 'x', dataType: INT8, dims: [3] }],
      outputs: ['y'],
      initializers: [f32Init('s', [], [1]), u8Init('z', [], [0])],
      nodes: [{ op: 'DequantizeLinear', inputs: ['x', 's', 'z'], outputs: ['y'] }],
    });
    expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
    expect(e.message).toMatch(/DequantizeLinear_0.*zero_point must be int8 \(the quantized type\), got uint8/);
  });

  test('an attribute of a later opset than the model imports is refused by name', () => {
    const e = load({
      opset: 19,
      inputs: [floatInput('x', [2, 4])],
      outputs: ['y'],
      initializers: [f32Init('s', [4], [1, 1, 1, 1]), i8Init('z', [4], [0, 0, 0, 0])],
      nodes: [{ op: 'QuantizeLinear', inputs: ['x', 's', 'z'], outputs: ['y'], attrs: { axis: 1, block_size: 2 } }],
    });
    expect(e).toMatchObject({ code: 'E_UNSUPPORTED_OP' });
    expect(e.message).toMatch(/attribute "block_size" of QuantizeLinear \(opset 19\)/);
  });
});
