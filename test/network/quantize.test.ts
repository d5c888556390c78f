/**
 * The quantize and dequantize layers as Network data: the reference executor against
 * onnxruntime's QuantizeLinear/DequantizeLinear on the same inputs (int8 and uint8, per
 * tensor, per axis and in blocks), float8e4m3fn and int4 against values worked out by hand,
 * serialization of the layers and of float8/int4 constants, the precision pass leaving them
 * fp32, their spelled-out form (lib/conversion/expand-layers.ts), and the shapes and types
 * inferLayer refuses (a converter bug: InternalError naming the layer).
 */
import { expandLayers } from '../../lib/conversion/expand-layers';
import { BadModelError, InternalError, UnsupportedOpError } from '../../lib/errors';
import { Tensor } from '../../lib/ir/tensor';
import { Network, printNetwork, type LayerParams } from '../../lib/network';
import { reducePrecision } from '../../lib/network/precision';
import { deserializeNetwork, deserializeNetworkFromBuffer, serializeNetwork, serializeNetworkToBuffer, type SerializedNetwork } from '../../lib/network/serialize';
import { checkNetwork } from '../../lib/network/check';
import { layerNetwork, runNetwork } from '../backends/reference/helpers';
import { expectClose, expectTensor } from '../helpers/compare';
import { thrown } from '../helpers/errors';
import { runOrtOp } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const rng = new Random(20261208);
const EXACT = { rtol: 0, atol: 0 };

const scales = (n: number): number[] => Array.from({ length: n }, () => rng.uniform(0.004, 0.06));

/** [label, layer, x, scale, zero point, ONNX attributes] with onnxruntime's answer as the reference. */
const QUANTIZE_CASES: Array<[string, LayerParams, Tensor, Tensor, Tensor | null, Record<string, number>, number]> = [
  ['int8 per tensor', { kind: 'quantize', to: 'int8', axis: 0 }, rng.tensor([3, 7], 'float32', -6, 6), Tensor.from('float32', [], [0.031]), Tensor.from('int8', [], [-4]), {}, 13],
  ['uint8 per tensor, no zero point', { kind: 'quantize', to: 'uint8', axis: 0 }, rng.tensor([10], 'float32', -1, 9), Tensor.from('float32', [], [0.027]), null, {}, 13],
  ['uint8 per axis 1', { kind: 'quantize', to: 'uint8', axis: 1 }, rng.tensor([2, 3, 4], 'float32', -3, 3), Tensor.from('float32', [3], scales(3)), Tensor.from('uint8', [3], [0, 128, 250]), { axis: 1 }, 13],
  ['int8 per axis 2', { kind: 'quantize', to: 'int8', axis: 2 }, rng.tensor([2, 3, 4], 'float32', -3, 3), Tensor.from('float32', [4], scales(4)), Tensor.from('int8', [4], [0, 1, -7, 20]), { axis: 2 }, 13],
  [
    'int8 in blocks of 3 along axis 1',
    { kind: 'quantize', to: 'int8', axis: 1, blockSize: 3 },
    rng.tensor([2, 6, 2], 'float32', -4, 4),
    Tensor.from('float32', [2, 2, 2], scales(8)),
    Tensor.from('int8', [2, 2, 2], [0, 5, -5, 1, 2, -128, 127, 0]),
    { axis: 1, block_size: 3 },
    21,
  ],
];

const DEQUANTIZE_CASES: Array<[string, LayerParams, Tensor, Tensor, Tensor | null, Record<string, number>, number]> = [
  ['int8 per tensor', { kind: 'dequantize', to: 'float32', axis: 0 }, rng.intTensor([3, 4], -128, 127, 'int8'), Tensor.from('float32', [], [0.0173]), Tensor.from('int8', [], [9]), {}, 13],
  ['uint8 per axis 0', { kind: 'dequantize', to: 'float32', axis: 0 }, rng.intTensor([3, 4], 0, 255, 'uint8'), Tensor.from('float32', [3], scales(3)), Tensor.from('uint8', [3], [128, 0, 255]), { axis: 0 }, 13],
  [
    'uint8 in blocks of 2 along axis 0',
    { kind: 'dequantize', to: 'float32', axis: 0, blockSize: 2 },
    rng.intTensor([4, 3], 0, 255, 'uint8'),
    Tensor.from('float32', [2, 3], scales(6)),
    Tensor.from('uint8', [2, 3], [1, 2, 3, 200, 100, 0]),
    { axis: 0, block_size: 2 },
    21,
  ],
];

describe('the reference executor against onnxruntime', () => {
  test.each(QUANTIZE_CASES)('quantize %s', async (_label, params, x, scale, zp, attributes, opset) => {
    const [expected] = await runOrtOp({ opType: 'QuantizeLinear', inputs: [x, { constant: scale }, zp === null ? null : { constant: zp }], attributes, opset });
    // The zero point goes in as a network input: TensorRT has no uint8 constants.
    const { network, feeds } = layerNetwork(params, [x, { constant: scale }, zp]);
    const out = await runNetwork(network, feeds);
    expectClose(out.out0!, expected!, EXACT);
  });

  test.each(DEQUANTIZE_CASES)('dequantize %s', async (_label, params, q, scale, zp, attributes, opset) => {
    const [expected] = await runOrtOp({ opType: 'DequantizeLinear', inputs: [q, { constant: scale }, zp === null ? null : { constant: zp }], attributes, opset });
    const { network, feeds } = layerNetwork(params, [q, { constant: scale }, zp]);
    const out = await runNetwork(network, feeds);
    expectClose(out.out0!, expected!, EXACT);
  });
});

describe('float8e4m3fn and int4, by hand', () => {
  test('float8e4m3fn quantize saturates to ±448 and rounds to nearest even', async () => {
    // 1000 saturates; 0.3 lies between 0.28125 and 0.3125 (1.001b and 1.010b · 2^-2), nearer the
    // second; 5.5 is 1.011b · 2^2; 2^-10 is half the smallest subnormal 2^-9, a tie, to 0.
    const x = Tensor.from('float32', [5], [1000, -0.3, 5.5, 2 ** -10, -1e9]);
    const { network, feeds } = layerNetwork({ kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, [x, { constant: Tensor.from('float32', [], [1]) }]);
    expectTensor((await runNetwork(network, feeds)).out0!, 'float8e4m3fn', [5], [448, -0.3125, 5.5, 0, -448]);
  });

  test('int4 in blocks of 2, clamped to [-8, 7], and back', async () => {
    // Block 0 (scale 0.5, zero point 1): 0.9/0.5 = 1.8 → 2 + 1 = 3; -2.6/0.5 = -5.2 → -5 + 1 = -4.
    // Block 1 (scale 2, zero point -1): 7.4/2 = 3.7 → 4 - 1 = 3; -100/2 = -50 - 1 → -8.
    const x = Tensor.from('float32', [1, 4], [0.9, -2.6, 7.4, -100]);
    const scale = { constant: Tensor.from('float32', [1, 2], [0.5, 2]) };
    const zp = { constant: Tensor.from('int4', [1, 2], [1, -1]) };
    const q = layerNetwork({ kind: 'quantize', to: 'int4', axis: 1, blockSize: 2 }, [x, scale, zp]);
    const quantized = (await runNetwork(q.network, q.feeds)).out0!;
    expectTensor(quantized, 'int4', [1, 4], [3, -4, 3, -8]);
    // (3 - 1)·0.5 = 1, (-4 - 1)·0.5 = -2.5, (3 + 1)·2 = 8, (-8 + 1)·2 = -14.
    const d = layerNetwork({ kind: 'dequantize', to: 'float16', axis: 1, blockSize: 2 }, [{ constant: quantized }, scale, zp]);
    expectTensor((await runNetwork(d.network, d.feeds)).out0!, 'float16', [1, 4], [1, -2.5, 8, -14]);
  });
});

/** x → quantize → dequantize → matmul with dequantized int4 weights: every kind of parameter the layers have. */
function qdqNetwork(): Network {
  const net = new Network('qdq');
  const x = net.addInput('x', 'float32', [2, 4]);
  const s = net.add1({ kind: 'constant', weights: Tensor.from('float32', [], [0.125]) }, [], 's');
  const q = net.add1({ kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, [x, s], 'q');
  const d = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [q, s], 'd');
  const w = net.add1({ kind: 'constant', weights: Tensor.from('int4', [4, 3], [1, -2, 3, -4, 5, -6, 7, -8, 0, 1, 2, 3]) }, [], 'w');
  const ws = net.add1({ kind: 'constant', weights: Tensor.from('float32', [2, 3], [0.5, 0.25, 1, 2, 0.125, 4]) }, [], 'ws');
  const wz = net.add1({ kind: 'constant', weights: Tensor.from('int4', [2, 3], [0, 1, -1, 2, 0, 0]) }, [], 'wz');
  const wd = net.add1({ kind: 'dequantize', to: 'float32', axis: 0, blockSize: 2 }, [w, ws, wz], 'wd');
  net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [d, wd], 'mm'), 'y');
  return net;
}

describe('serialization', () => {
  const check = (net: Network, fail: (m: string, cause?: unknown) => never): unknown => checkNetwork(net, fail);

  test('quantize/dequantize layers and float8e4m3fn/int4 constants round-trip', async () => {
    const source = qdqNetwork();
    const back = deserializeNetworkFromBuffer(serializeNetworkToBuffer(source), 'test', check);
    expect(printNetwork(back)).toBe(printNetwork(source));
    expect(serializeNetwork(source).json.weights.map((w) => w.dtype)).toEqual(['float32', 'int4', 'float32', 'int4']);
    const w = back.layers.find((l) => l.name === 'w')!.params as Extract<LayerParams, { kind: 'constant' }>;
    expect([w.weights.dtype, ...Array.from(w.weights.data as Int8Array)]).toEqual(['int4', 1, -2, 3, -4, 5, -6, 7, -8, 0, 1, 2, 3]);
    const x = Tensor.from('float32', [2, 4], [0.1, -0.2, 0.3, 9, 100, -0.01, 2, 1]);
    expectClose((await runNetwork(back, { x })).y!, (await runNetwork(source, { x })).y!, EXACT);
  });

  test('hostile descriptions: an unknown quantized type, a bad block size, an int4 byte outside [-8, 7]', () => {
    const { json, blobs } = serializeNetwork(qdqNetwork());
    const blob = blobs.toBytes();
    const bad = (edit: (j: SerializedNetwork, b: Uint8Array) => void, pattern: RegExp): void => {
      const copy = JSON.parse(JSON.stringify(json)) as SerializedNetwork;
      const bytes = blob.slice();
      edit(copy, bytes);
      const e = thrown(() => deserializeNetwork(copy, bytes, 'my engine', check), BadModelError, 'E_BAD_MODEL');
      expect(e.message).toMatch(pattern);
    };
    const layer = (j: SerializedNetwork, name: string): Record<string, unknown> => j.layers.find((l) => l.name === name)!.params as Record<string, unknown>;
    bad((j) => (layer(j, 'q').to = 'uint4'), /layer 1 "q" \(quantize\): parameter to must be one of int8\/uint8\/float8e4m3fn\/int4, got "uint4"/);
    bad((j) => (layer(j, 'wd').blockSize = 3), /layer "wd" \(dequantize\).*the block size 3 does not divide the input's dim 4 along axis 0/);
    bad((j, b) => (b[j.weights[1]!.offset] = 9), /weights 1 \(int4\) hold a value outside \[-8, 7\]/);
  });
});

describe('the precision pass', () => {
  test('keeps quantize and dequantize in float32 under fp16: the scale and x / scale stay exact', () => {
    const net = new Network('p');
    const x = net.addInput('x', 'float32', [2, 8]);
    const relu = net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu');
    const s = net.add1({ kind: 'constant', weights: Tensor.from('float32', [], [0.0123]) }, [], 's');
    const q = net.add1({ kind: 'quantize', to: 'int8', axis: 0 }, [relu, s], 'q');
    const d = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [q, s], 'd');
    net.markOutput(net.add1({ kind: 'activation', type: 'sigmoid' }, [d], 'sig'), 'y');
    const { network, report } = reducePrecision(net, ['fp32', 'fp16']);
    expect(report.fp32Layers).toEqual(['q', 'd']);
    const quantize = network.layers.find((l) => l.params.kind === 'quantize')!;
    expect(quantize.inputs.map((id) => network.tensor(id!).dtype)).toEqual(['float32', 'float32']);
    const scale = network.layers[network.tensor(quantize.inputs[1]!).producer]!.params as Extract<LayerParams, { kind: 'constant' }>;
    expect(scale.weights.dtype).toBe('float32');
    expect(network.tensor(network.layers.find((l) => l.params.kind === 'dequantize')!.outputs[0]!).dtype).toBe('float32');
  });
});

describe('spelled out (lib/conversion/expand-layers.ts)', () => {
  test.each([...QUANTIZE_CASES, ...DEQUANTIZE_CASES])('%s gives the layer\'s values with primitive layers', async (_label, params, x, scale, zp) => {
    const { network, feeds } = layerNetwork(params, [x, { constant: scale }, zp]);
    const spelled = expandLayers(network, () => true);
    expect(spelled.quantizations).toBe(1);
    expect(spelled.network.layers.some((l) => l.params.kind === 'quantize' || l.params.kind === 'dequantize')).toBe(false);
    expectClose((await runNetwork(spelled.network, feeds)).out0!, (await runNetwork(network, feeds)).out0!, EXACT);
  });

  test('a dequantize of constant int4 weights becomes the float32 constant it computes', async () => {
    const spelled = expandLayers(qdqNetwork(), (l) => l.name === 'wd');
    expect(spelled.foldedQuantizations).toBe(1);
    const folded = spelled.network.layers.find((l) => l.name === 'wd')!.params as Extract<LayerParams, { kind: 'constant' }>;
    // Blocks of 2 along axis 0: rows 0-1 use scales [0.5, 0.25, 1] and zero points [0, 1, -1]
    // ((1 - 0)·0.5, (-2 - 1)·0.25, (3 + 1)·1; (-4)·0.5, (5 - 1)·0.25, (-6 + 1)·1), rows 2-3
    // scales [2, 0.125, 4] and zero points [2, 0, 0] ((7 - 2)·2, -8·0.125, 0·4; (1 - 2)·2, 2·0.125, 3·4).
    expect(Array.from(folded.weights.toArray())).toEqual([0.5, -0.75, 4, -2, 1, -5, 10, -1, 0, -2, 0.25, 12]);
  });

  test('a float8e4m3fn quantize of a network input cannot be spelled out: UnsupportedOpError naming the layer', () => {
    const e = thrown(() => expandLayers(qdqNetwork(), (l) => l.name === 'q'), UnsupportedOpError, 'E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/layer "q" \(quantize to float8e4m3fn\) cannot be spelled out/);
  });
});

describe('inferLayer refuses malformed layers (a converter bug), naming the layer', () => {
  const infer = (params: LayerParams, inputs: Array<Tensor | { constant: Tensor } | null>): InternalError =>
    thrown(() => layerNetwork(params, inputs), InternalError, 'E_INTERNAL');
  const x = Tensor.from('float32', [2, 6], new Array<number>(12).fill(1));
  const s = (shape: number[]): { constant: Tensor } => ({ constant: new Tensor('float32', shape) });

  test('a per-axis scale of the wrong length', () => {
    expect(infer({ kind: 'quantize', to: 'int8', axis: 1 }, [x, s([4])]).message).toMatch(/layer "layer" \(quantize\): scale \[4\]: a per-axis scale along axis 1 must have 6 elements/);
  });

  test('a block size that does not divide the axis', () => {
    expect(infer({ kind: 'quantize', to: 'int8', axis: 1, blockSize: 4 }, [x, s([2, 2])]).message).toMatch(/the block size 4 does not divide the input's dim 6 along axis 1/);
  });

  test('a blocked scale of the wrong rank, and a block size of 0', () => {
    expect(infer({ kind: 'dequantize', to: 'float32', axis: 1, blockSize: 3 }, [Tensor.from('int8', [2, 6], new Array<number>(12).fill(0)), s([2])]).message).toMatch(/blocked scale must have the input's rank 2/);
    expect(infer({ kind: 'quantize', to: 'int8', axis: 1, blockSize: 0 }, [x, s([6])]).message).toMatch(/blockSize must be a positive integer, got 0/);
  });

  test('a zero point of another type than the quantized one', () => {
    const zp = { constant: Tensor.from('int8', [6], new Array<number>(6).fill(0)) };
    expect(infer({ kind: 'quantize', to: 'int4', axis: 1 }, [x, s([6]), zp]).message).toMatch(/the zero point is int8, not the quantized type int4/);
  });

  test('a scale of another type than x, a float8 zero point, a non-quantized input', () => {
    expect(infer({ kind: 'quantize', to: 'int8', axis: 0 }, [x, { constant: Tensor.from('float16', [], [1]) }]).message).toMatch(/the scale is float16 and the input float32/);
    const f8 = Tensor.from('float8e4m3fn', [], [0]);
    expect(infer({ kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, [x, s([]), { constant: f8 }]).message).toMatch(/takes no zero point/);
    expect(infer({ kind: 'dequantize', to: 'float32', axis: 0 }, [Tensor.from('int32', [2], [1, 2]), s([])]).message).toMatch(/dequantize takes int8, uint8, float8e4m3fn, int4, got int32/);
  });
});
