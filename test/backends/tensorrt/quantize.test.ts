/**
 * Which quantize and dequantize layers the tensorrt backend gives TensorRT whole, which it
 * spells out (through lib/conversion/expand-layers.ts) and which neither path expresses
 * (E_UNSUPPORTED_OP naming the layer): lib/backends/tensorrt/quantize.ts and replayedNetwork.
 */
import { encodeProgram, replayedNetwork } from '../../../lib/backends/tensorrt/program';
import { quantizeForm, quantizeForms } from '../../../lib/backends/tensorrt/quantize';
import { isBigLayer } from '../../../lib/conversion/expand-layers';
import { UnsupportedOpError } from '../../../lib/errors';
import { Tensor } from '../../../lib/ir/tensor';
import { Network, type Layer, type LayerParams, type NetTensor, type TrtDType } from '../../../lib/network';

const OPTIONS = { precisions: ['fp32'] as const, workspaceBytes: undefined, hardwareCompatibility: 'none' as const, optimizationLevel: 3 };

const constant = (net: Network, name: string, dtype: TrtDType, shape: number[], values: number[]): NetTensor =>
  net.add1({ kind: 'constant', weights: Tensor.from(dtype, shape, values) }, [], name);
const filled = (n: number, v: number): number[] => new Array<number>(n).fill(v);
const volume = (shape: number[]): number => shape.reduce((a, b) => a * b, 1);

interface Case {
  /** The data: a network input (an activation) or a constant layer (weights). */
  data: { dtype: TrtDType; shape: number[]; weights?: boolean };
  params: LayerParams & { kind: 'quantize' | 'dequantize' };
  /** The scale: a constant (default) or a network input; its dtype defaults to float32. */
  scale: { shape: number[]; dtype?: TrtDType; values?: number[]; input?: boolean };
  /** A zero point constant (scale's shape) of these values, in the quantized type. */
  zeroPoint?: number;
}

/**
 * A network of one quantize or dequantize layer "L" whose output is "y" (an INT4 one through a
 * dequantize "DQ" of the same scale: INT4 is no network output); returns it and "L".
 */
function single(c: Case): { net: Network; layer: Layer } {
  const net = new Network('quantize_form');
  const n = volume(c.data.shape);
  const data = c.data.weights === true ? constant(net, 'w', c.data.dtype, c.data.shape, Array.from({ length: n }, (_, i) => (i % 7) - 3)) : net.addInput('x', c.data.dtype, c.data.shape);
  const scaleDtype = c.scale.dtype ?? 'float32';
  const scale =
    c.scale.input === true ? net.addInput('s', scaleDtype, c.scale.shape) : constant(net, 's', scaleDtype, c.scale.shape, c.scale.values ?? filled(volume(c.scale.shape), 0.5));
  const qType = c.params.kind === 'quantize' ? c.params.to : c.data.dtype;
  const inputs = c.zeroPoint === undefined ? [data, scale] : [data, scale, constant(net, 'zp', qType, c.scale.shape, filled(volume(c.scale.shape), c.zeroPoint))];
  const l = net.add1(c.params, inputs, 'L');
  const y = l.dtype === 'int4' ? net.add1({ kind: 'dequantize', to: 'float32', axis: c.params.axis, blockSize: c.params.blockSize }, [l, scale], 'DQ') : l;
  net.markOutput(y, 'y');
  return { net, layer: net.layers.find((l) => l.name === 'L')! };
}

const f32 = { dtype: 'float32' as const, shape: [4, 128] };
const weights = { ...f32, weights: true };

describe('quantize and dequantize forms the tensorrt backend takes', () => {
  it.each<[string, Case]>([
    ['INT8 per tensor of an activation', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 1 }, scale: { shape: [] } }],
    ['INT8 per tensor with a zero point of zeros', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 1 }, scale: { shape: [] }, zeroPoint: 0 }],
    ['INT8 per axis of weights', { data: weights, params: { kind: 'quantize', to: 'int8', axis: 0 }, scale: { shape: [4] } }],
    ['FP8 per tensor of an activation, a float16 scale of float16 data', { data: { dtype: 'float16', shape: [2, 8] }, params: { kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, scale: { shape: [], dtype: 'float16' } }],
    ['FP8 per axis of weights', { data: weights, params: { kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, scale: { shape: [4] } }],
    ['INT4 weights in blocks of 64 along the last axis', { data: weights, params: { kind: 'quantize', to: 'int4', axis: 1, blockSize: 64 }, scale: { shape: [4, 2] } }],
    ['INT4 weights in blocks of 128 along the first axis', { data: { dtype: 'float32', shape: [256, 2], weights: true }, params: { kind: 'quantize', to: 'int4', axis: 0, blockSize: 128 }, scale: { shape: [2, 2] } }],
    ['dequantize of an INT8 activation per tensor', { data: { dtype: 'int8', shape: [2, 8] }, params: { kind: 'dequantize', to: 'float32', axis: 1 }, scale: { shape: [] }, zeroPoint: 0 }],
    ['dequantize of an FP8 activation per tensor to bfloat16', { data: { dtype: 'float8e4m3fn', shape: [2, 8] }, params: { kind: 'dequantize', to: 'bfloat16', axis: 1 }, scale: { shape: [] } }],
    ['dequantize of INT8 weights per axis', { data: { dtype: 'int8', shape: [4, 3], weights: true }, params: { kind: 'dequantize', to: 'float16', axis: 0 }, scale: { shape: [4] } }],
    ['dequantize of INT4 weights in blocks, an INT4 zero point', { data: { dtype: 'int4', shape: [4, 128], weights: true }, params: { kind: 'dequantize', to: 'float16', axis: 1, blockSize: 128 }, scale: { shape: [4, 1], dtype: 'float16' }, zeroPoint: 0 }],
  ])('whole: %s', (_, c) => {
    const { net, layer } = single(c);
    expect(quantizeForm(net, layer)).toEqual({ take: 'whole' });
    // Kept as it is, and encoded.
    expect(replayedNetwork(net).layers.map((l) => l.params.kind)).toEqual(net.layers.map((l) => l.params.kind));
    expect(() => encodeProgram(net, OPTIONS)).not.toThrow();
  });

  it('whole: a dequantize per axis of weights quantized whole just before it', () => {
    const net = new Network('qdq');
    const s = constant(net, 's', 'float32', [4], [1, 2, 3, 4]);
    const q = net.add1({ kind: 'quantize', to: 'int8', axis: 0 }, [constant(net, 'w', 'float32', [4, 3], filled(12, 1)), s], 'Q');
    net.markOutput(net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [q, s], 'DQ'), 'y');
    expect([...quantizeForms(net).values()]).toEqual([{ take: 'whole' }, { take: 'whole' }]);
  });

  it.each<[string, Case, string]>([
    ['a UINT8 quantize', { data: f32, params: { kind: 'quantize', to: 'uint8', axis: 1 }, scale: { shape: [] } }, 'INT8, FP8 and INT4 only, not uint8'],
    ['a UINT8 dequantize', { data: { dtype: 'uint8', shape: [2, 8] }, params: { kind: 'dequantize', to: 'float32', axis: 1 }, scale: { shape: [] } }, 'not uint8'],
    ['a run-time scale', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 1 }, scale: { shape: [], input: true } }, 'build-time constant scale only'],
    ['a nonzero zero point', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 1 }, scale: { shape: [] }, zeroPoint: 3 }, 'symmetrically only'],
    ['a scale of zero', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 1 }, scale: { shape: [], values: [0] } }, 'not positive'],
    ['a float16 scale dequantizing to float32', { data: { dtype: 'int8', shape: [2, 8] }, params: { kind: 'dequantize', to: 'float32', axis: 1 }, scale: { shape: [], dtype: 'float16' } }, 'float32 scale or one of the data'],
    ['per axis of an activation', { data: f32, params: { kind: 'quantize', to: 'int8', axis: 0 }, scale: { shape: [4] } }, 'activations per tensor only'],
    ['blocked INT8', { data: weights, params: { kind: 'quantize', to: 'int8', axis: 1, blockSize: 64 }, scale: { shape: [4, 2] } }, 'blocked int8'],
    ['a scalar', { data: { dtype: 'float32', shape: [] }, params: { kind: 'quantize', to: 'int8', axis: 0 }, scale: { shape: [] } }, 'no scalar data'],
  ])('spelled out (INT8/UINT8): %s', (_, c, why) => {
    const { net, layer } = single(c);
    const form = quantizeForm(net, layer);
    expect(form).toEqual({ take: 'spell', why: expect.stringContaining(why) });
    // Handed to the expansion by its kind: spelled out where lib/conversion/expand-layers.ts
    // spells quantize layers out, else refused by name, never given to TensorRT as it is.
    if (isBigLayer(layer)) {
      const replayed = replayedNetwork(net);
      expect([...quantizeForms(replayed).values()].every((f) => f.take === 'whole')).toBe(true);
      expect(() => encodeProgram(net, OPTIONS)).not.toThrow();
    } else {
      expect(() => replayedNetwork(net)).toThrow(UnsupportedOpError);
      expect(() => replayedNetwork(net)).toThrow(/cannot build layer "L" \((de)?quantize\) of network "quantize_form": .*does not spell this form out/);
    }
  });

  it.each<[string, Case, string]>([
    ['FP8 with a run-time scale', { data: f32, params: { kind: 'quantize', to: 'float8e4m3fn', axis: 1 }, scale: { shape: [], input: true } }, 'build-time constant scale only'],
    ['FP8 in blocks', { data: weights, params: { kind: 'quantize', to: 'float8e4m3fn', axis: 1, blockSize: 32 }, scale: { shape: [4, 4] } }, "FP8 blocks are MXFP8's"],
    ['FP8 dequantized per axis of an activation', { data: { dtype: 'float8e4m3fn', shape: [4, 8] }, params: { kind: 'dequantize', to: 'float32', axis: 0 }, scale: { shape: [4] } }, 'activations per tensor only'],
    ['INT4 of an activation', { data: f32, params: { kind: 'quantize', to: 'int4', axis: 1, blockSize: 64 }, scale: { shape: [4, 2] } }, 'INT4 for weights only'],
    ['INT4 per axis', { data: weights, params: { kind: 'quantize', to: 'int4', axis: 0 }, scale: { shape: [4] } }, 'per-block scales only'],
    ['INT4 per tensor', { data: { dtype: 'int4', shape: [4, 8], weights: true }, params: { kind: 'dequantize', to: 'float32', axis: 0 }, scale: { shape: [] } }, 'per-block scales only'],
    ['INT4 in blocks of 32', { data: weights, params: { kind: 'quantize', to: 'int4', axis: 1, blockSize: 32 }, scale: { shape: [4, 4] } }, 'blocks of 64 or 128'],
    ['INT4 of rank 3', { data: { dtype: 'float32', shape: [2, 4, 128], weights: true }, params: { kind: 'quantize', to: 'int4', axis: 2, blockSize: 64 }, scale: { shape: [2, 4, 2] } }, 'rank-3 data'],
    ['INT4 with an odd last dimension', { data: { dtype: 'float32', shape: [128, 3], weights: true }, params: { kind: 'quantize', to: 'int4', axis: 0, blockSize: 64 }, scale: { shape: [2, 3] } }, 'even last dimension'],
  ])('neither (FP8/INT4): %s is E_UNSUPPORTED_OP naming the layer', (_, c, why) => {
    const { net, layer } = single(c);
    expect(quantizeForm(net, layer)).toEqual({ take: 'neither', why: expect.stringContaining(why) });
    for (const make of [() => replayedNetwork(net), () => encodeProgram(net, OPTIONS)]) {
      let error: unknown;
      try {
        make();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UnsupportedOpError);
      expect(error).toMatchObject({ code: 'E_UNSUPPORTED_OP', details: { layer: 'L', kind: c.params.kind } });
      expect((error as Error).message).toContain(why);
      expect((error as Error).message).toContain("TensorRT's cast layer does not have");
    }
  });

  it('a dequantize per axis of weights whose quantize is not taken whole is not taken either', () => {
    const net = new Network('qdq');
    const s = constant(net, 's', 'float32', [4], [1, 2, 3, 4]);
    // The quantize's scale is a run-time input: spelled out, so its output is no longer weights TensorRT sees.
    const q = net.add1({ kind: 'quantize', to: 'int8', axis: 0 }, [constant(net, 'w', 'float32', [4, 3], filled(12, 1)), net.addInput('s_rt', 'float32', [4])], 'Q');
    net.markOutput(net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [q, s], 'DQ'), 'y');
    expect([...quantizeForms(net).values()].map((f) => f.take)).toEqual(['spell', 'spell']);
  });

  it('refuses an INT4 network output (TensorRT packs INT4 I/O two values a byte)', () => {
    const net = new Network('int4_out');
    const q = net.add1({ kind: 'quantize', to: 'int4', axis: 1, blockSize: 64 }, [constant(net, 'w', 'float32', [2, 64], filled(128, 1)), constant(net, 's', 'float32', [2, 1], [1, 1])], 'Q');
    net.markOutput(q, 'packed');
    expect(quantizeForms(net).get(net.layers[2]!)).toEqual({ take: 'whole' });
    expect(() => encodeProgram(net, OPTIONS)).toThrow(UnsupportedOpError);
    expect(() => encodeProgram(net, OPTIONS)).toThrow('its output "packed" is int4');
  });
});
