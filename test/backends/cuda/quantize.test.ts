/**
 * Quantize and dequantize layers on the cuda backend, which has no kernel for them: the
 * build's spell-out-quantization pass rewrites int8/uint8 ones into float arithmetic and casts,
 * and computes those over constants (quantized weights, float8 and int4 included) at build.
 * The rewritten networks run through the real lowerings on the CPU kernel emulator, against
 * onnxruntime's QuantizeLinear/DequantizeLinear on the same inputs (exact), or against the
 * reference backend for a whole Q/DQ convolution block. float8e4m3fn and int4 tensors the
 * backend would have to hold are an UnsupportedOpError naming the layer or input.
 */
import { CUDA_PASSES, countsOf, runPasses } from '../../../lib/backends/cuda/passes';
import { refuseUnheldTypes } from '../../../lib/backends/cuda/build';
import { UnsupportedOpError } from '../../../lib/errors';
import { Tensor } from '../../../lib/ir/tensor';
import { Network, type LayerParams } from '../../../lib/network';
import { expectClose } from '../../helpers/compare';
import { thrown } from '../../helpers/errors';
import { runOrtOp } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { layerNetwork, runNetwork } from '../reference/helpers';
import { runOnEmulator } from './emulated-network';

const rng = new Random(20261209);
const EXACT = { rtol: 0, atol: 0 };

/** The cuda build's passes at fp32 (or fp16), checked to leave no quantize or dequantize layer. */
function built(network: Network, precisions: Array<'fp32' | 'fp16'> = ['fp32']): Network {
  const result = runPasses(network, { precisions });
  expect(result.network.layers.filter((l) => l.params.kind === 'quantize' || l.params.kind === 'dequantize')).toEqual([]);
  refuseUnheldTypes(result.network);
  return result.network;
}

const CASES: Array<[string, 'QuantizeLinear' | 'DequantizeLinear', LayerParams, Tensor, Tensor, Tensor | null, Record<string, number>, number]> = [
  ['quantize int8 per tensor', 'QuantizeLinear', { kind: 'quantize', to: 'int8', axis: 0 }, rng.tensor([4, 5], 'float32', -5, 5), Tensor.from('float32', [], [0.0217]), Tensor.from('int8', [], [6]), {}, 13],
  [
    'quantize uint8 per axis',
    'QuantizeLinear',
    { kind: 'quantize', to: 'uint8', axis: 1 },
    rng.tensor([2, 3, 4], 'float32', -3, 3),
    Tensor.from('float32', [3], [0.011, 0.03, 0.007]),
    Tensor.from('uint8', [3], [0, 128, 255]),
    { axis: 1 },
    13,
  ],
  [
    'quantize int8 in blocks of 2',
    'QuantizeLinear',
    { kind: 'quantize', to: 'int8', axis: 1, blockSize: 2 },
    rng.tensor([3, 4], 'float32', -4, 4),
    Tensor.from('float32', [3, 2], [0.02, 0.05, 0.013, 0.031, 0.009, 0.04]),
    Tensor.from('int8', [3, 2], [0, -3, 5, 1, -128, 127]),
    { axis: 1, block_size: 2 },
    21,
  ],
  ['dequantize int8 per axis', 'DequantizeLinear', { kind: 'dequantize', to: 'float32', axis: 0 }, rng.intTensor([3, 4], -128, 127, 'int8'), Tensor.from('float32', [3], [0.5, 0.013, 0.07]), Tensor.from('int8', [3], [1, -2, 3]), { axis: 0 }, 13],
  ['dequantize uint8 per tensor', 'DequantizeLinear', { kind: 'dequantize', to: 'float32', axis: 0 }, rng.intTensor([6], 0, 255, 'uint8'), Tensor.from('float32', [], [0.0391]), Tensor.from('uint8', [], [128]), {}, 13],
];

describe('int8 and uint8, spelled out and lowered, against onnxruntime', () => {
  test.each(CASES)('%s', async (_label, opType, params, x, scale, zp, attributes, opset) => {
    const [expected] = await runOrtOp({ opType, inputs: [x, { constant: scale }, zp === null ? null : { constant: zp }], attributes, opset });
    const { network, feeds } = layerNetwork(params, [x, { constant: scale }, zp]);
    expectClose(runOnEmulator(built(network), feeds).out0!, expected!, EXACT);
  }, 120_000);
});

/**
 * x → quantize (uint8) → dequantize → convolution whose kernel is a dequantized int8 weight
 * (per output channel) → ReLU → quantize (int8) → dequantize. Power-of-two scales keep every
 * product and sum exact, so the emulator's float32 sums equal the reference's.
 */
function convBlock(): { network: Network; x: Tensor } {
  const net = new Network('qdq-conv');
  const x = net.addInput('x', 'float32', [1, 2, 5, 5]);
  const c = (t: Tensor, name: string) => net.add1({ kind: 'constant', weights: t }, [], name);
  const sx = c(Tensor.from('float32', [], [2 ** -4]), 'sx');
  // A uint8 zero point: TensorRT has no uint8 constants, so int32 and a cast.
  const zx = net.add1({ kind: 'cast', to: 'uint8' }, [c(Tensor.from('int32', [], [100]), 'zx32')], 'zx');
  const xq = net.add1({ kind: 'quantize', to: 'uint8', axis: 0 }, [x, sx, zx], 'xq');
  const xd = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [xq, sx, zx], 'xd');
  const w = c(Tensor.from('int8', [3, 2, 3, 3], Array.from({ length: 54 }, () => rng.int(-90, 90))), 'w');
  const wd = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [w, c(Tensor.from('float32', [3], [2 ** -6, 2 ** -7, 2 ** -5]), 'sw')], 'wd');
  const conv = net.add1(
    {
      kind: 'convolution',
      nbOutputMaps: 3,
      kernelSize: [3, 3],
      stride: [1, 1],
      prePadding: [1, 1],
      postPadding: [1, 1],
      dilation: [1, 1],
      groups: 1,
      kernel: new Tensor('float32', [0]),
      bias: Tensor.from('float32', [3], [0.25, -0.5, 0]),
    },
    [xd, wd],
    'conv',
  );
  const relu = net.add1({ kind: 'activation', type: 'relu' }, [conv], 'relu');
  const sy = c(Tensor.from('float32', [], [2 ** -3]), 'sy');
  const zy = c(Tensor.from('int8', [], [-20]), 'zy');
  const yq = net.add1({ kind: 'quantize', to: 'int8', axis: 0 }, [relu, sy, zy], 'yq');
  net.markOutput(net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [yq, sy, zy], 'y'), 'y');
  return { network: net, x: rng.tensor([1, 2, 5, 5], 'float32', -6, 10) };
}

describe('a Q/DQ convolution block', () => {
  test('the dequantized weight is computed at build and the block matches the reference backend', async () => {
    const { network, x } = convBlock();
    const result = runPasses(network, { precisions: ['fp32'] });
    expect(countsOf(result, 'spell-out-quantization')).toMatchObject({ quantizations: 4, foldedQuantizations: 1 });
    const expected = (await runNetwork(network, { x })).y!;
    expectClose(runOnEmulator(built(network), { x }).y!, expected, EXACT);
  }, 120_000);

  test('with fp16 allowed, quantization stays fp32 around the fp16 convolution', async () => {
    const { network, x } = convBlock();
    const rewritten = built(network, ['fp32', 'fp16']);
    expect(rewritten.tensors.some((t) => t.dtype === 'float16')).toBe(true);
    const expected = (await runNetwork(network, { x })).y!;
    // One quantization step (1/8) where fp16 sums land on the other side of a half step.
    expectClose(runOnEmulator(rewritten, { x }).y!, expected, { rtol: 0, atol: 0.125 });
  }, 120_000);
});

describe('float8e4m3fn and int4', () => {
  test('a dequantize of float8 or int4 weights is computed at build; the backend then holds no such tensor', async () => {
    const net = new Network('weights');
    const x = net.addInput('x', 'float32', [2, 4]);
    const w8 = net.add1({ kind: 'constant', weights: Tensor.from('float8e4m3fn', [4, 3], [0.5, -1, 448, 0.015625, 2, -3.5, 7, 0, -0.25, 1.5, 96, -2]) }, [], 'w8');
    const w4 = net.add1({ kind: 'constant', weights: Tensor.from('int4', [4, 3], [1, -8, 7, 0, 3, -2, 5, 5, -1, 2, -4, 6]) }, [], 'w4');
    const s = net.add1({ kind: 'constant', weights: Tensor.from('float32', [], [0.25]) }, [], 's');
    const d8 = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [w8, s], 'd8');
    const d4 = net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [w4, s], 'd4');
    const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [d8, d4], 'sum');
    net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [x, sum], 'mm'), 'y');
    const feeds = { x: Tensor.from('float32', [2, 4], [1, 2, 3, 4, -1, 0.5, 0.25, -2]) };
    const rewritten = built(net);
    expect(CUDA_PASSES.map((p) => p.name)).toContain('spell-out-quantization');
    expectClose(runOnEmulator(rewritten, feeds).y!, (await runNetwork(net, feeds)).y!, EXACT);
  }, 120_000);

  test('a float8e4m3fn quantize of activations is refused at build, naming the layer', () => {
    const { network } = layerNetwork({ kind: 'quantize', to: 'float8e4m3fn', axis: 0 }, [Tensor.from('float32', [3], [1, 2, 3]), { constant: Tensor.from('float32', [], [1]) }]);
    const e = thrown(() => runPasses(network, { precisions: ['fp32'] }), UnsupportedOpError, 'E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/layer "layer" \(quantize to float8e4m3fn\) cannot be spelled out as primitive layers/);
    expect(e.details).toMatchObject({ layer: 'layer', dtype: 'float8e4m3fn' });
  });

  test('an int4 network input is refused at build, naming the input', () => {
    const { network } = layerNetwork({ kind: 'identity' }, [Tensor.from('int4', [2], [1, -1])]);
    const e = thrown(() => refuseUnheldTypes(network), UnsupportedOpError, 'E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/the cuda backend cannot hold int4 tensors: input "in0"/);
  });
});
