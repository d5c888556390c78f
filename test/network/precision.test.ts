/**
 * The reduced-precision pass (lib/network/precision.ts): weight rounding against hand-computed
 * IEEE bit patterns (what numpy's and PyTorch's `.half()` / `.bfloat16()` give), and every
 * float-carrying layer kind of the catalogue run on the reference backend before and after
 * the rewrite, within fp16 tolerance.
 */
import { InvalidArgumentError } from '../../lib/errors';
import { fromFloat16Bits } from '../../lib/ir/half';
import { Network, type NetTensor } from '../../lib/network';
import { convertWeights, describePrecision, reducedDType, reducePrecision } from '../../lib/network/precision';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../helpers/compare';
import { layerNetwork, runNetwork } from '../backends/reference/helpers';
import { f32, idx, KIND_CASES, values } from './precision-cases';

const FP16_TOL: Tolerance = { rtol: 1e-2, atol: 1e-2 };

const bits = (t: Tensor): number[] => Array.from(t.data as Uint16Array);

describe('reducedDType', () => {
  test('fp16 wins over bf16; bf16 alone gives bfloat16; fp32 and tf32 keep float32 storage', () => {
    expect(reducedDType(['fp32', 'fp16', 'bf16'])).toBe('float16');
    expect(reducedDType(['fp32', 'bf16'])).toBe('bfloat16');
    expect(reducedDType(['fp32', 'tf32'])).toBeNull();
    expect(reducedDType(['fp32'])).toBeNull();
  });
  test('an unknown precision is a typed error naming it', () => {
    expect(() => reducedDType(['fp32', 'fp8'])).toThrow(InvalidArgumentError);
    expect(() => reducePrecision(new Network(), ['int4'])).toThrow(/unknown precision "int4"/);
    try {
      reducedDType(['fp8']);
    } catch (e) {
      expect((e as InvalidArgumentError).code).toBe('E_INVALID_ARGUMENT');
    }
    expect(() => reducedDType('fp16' as unknown as string[])).toThrow(InvalidArgumentError);
  });
});

describe('weights are rounded as numpy and PyTorch round them', () => {
  test('float16: normals, ties to even, subnormals, signed zero, ±inf and NaN', () => {
    const src = [1, 0.1, 1 / 3, -2.5, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -14, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 3 * 2 ** -24, 2 ** -26, -0, Infinity, -Infinity, NaN, 65504, 65519];
    // np.array(src, np.float32).astype(np.float16).view(np.uint16)
    const expected = [0x3c00, 0x2e66, 0x3555, 0xc100, 0x3c00, 0x3c02, 0x0400, 0x0001, 0x0000, 0x0001, 0x0003, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x7bff];
    const { tensor, clamped } = convertWeights(Tensor.from('float32', [src.length], src), 'float16');
    expect(tensor.dtype).toBe('float16');
    expect(bits(tensor).map((b) => b.toString(16))).toEqual(expected.map((b) => b.toString(16)));
    expect(clamped).toBe(0);
  });
  test('float16: finite values beyond the range are clamped to ±65504 (numpy would give ±inf) and counted', () => {
    const { tensor, clamped } = convertWeights(Tensor.from('float32', [4], [65520, -1e6, 3e38, 70000]), 'float16');
    expect(bits(tensor)).toEqual([0x7bff, 0xfbff, 0x7bff, 0x7bff]);
    expect(fromFloat16Bits(bits(tensor)[0]!)).toBe(65504);
    expect(clamped).toBe(4);
  });
  test('bfloat16: rounding to nearest even, NaN quiet, overflow clamped to the largest finite', () => {
    // torch.tensor(src, dtype=torch.float32).bfloat16().view(torch.int16)
    const src = [1, 0.1, -3.140625, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 2 ** -133, 2 ** -135, Infinity, NaN, 3.4e38];
    const { tensor, clamped } = convertWeights(Tensor.from('float32', [src.length], src), 'bfloat16');
    expect(bits(tensor).map((b) => b.toString(16))).toEqual([0x3f80, 0x3dcd, 0xc049, 0x3f80, 0x3f82, 0x0001, 0x0000, 0x7f80, 0x7fc0, 0x7f7f].map((b) => b.toString(16)));
    expect(clamped).toBe(1);
  });
});

/** Runs `network` (float32) and its fp16 rewrite on the reference backend and compares every output. */
async function compareRewrite(network: Network, feeds: Record<string, Tensor>, precisions = ['fp32', 'fp16'], tol = FP16_TOL) {
  const { network: reduced, report } = reducePrecision(network, precisions);
  const want = await runNetwork(network, feeds);
  const got = await runNetwork(reduced, feeds);
  for (const o of network.outputs) {
    expect(got[o.name]!.dtype).toBe(want[o.name]!.dtype);
    expect(got[o.name]!.shape).toEqual(want[o.name]!.shape);
    expectClose(got[o.name]!, want[o.name]!, tol, o.name);
  }
  return { reduced, report };
}

/** The dtype the rewritten network gives the output of the layer named `name`. */
const dtypeOf = (net: Network, name: string, k = 0): string => net.tensor(net.layers.find((l) => l.name === name)!.outputs[k]!).dtype;

describe('every float layer kind, rewritten to fp16, matches float32 on the reference backend', () => {
  test.each(KIND_CASES)('%s', async (_label, params, inputs, reduced) => {
    const { network, feeds } = layerNetwork(params, inputs);
    const { reduced: net } = await compareRewrite(network, feeds);
    // Inputs and outputs keep their declared dtypes.
    expect(net.inputs.map((i) => net.tensor(i.tensor).dtype)).toEqual(network.inputs.map((i) => network.tensor(i.tensor).dtype));
    expect(net.outputs.map((o) => net.tensor(o.tensor).dtype)).toEqual(network.outputs.map((o) => network.tensor(o.tensor).dtype));
    const floatOut = network.tensor(network.layers.find((l) => l.name === 'layer')!.outputs[0]!).dtype === 'float32';
    if (floatOut && network !== net) expect(dtypeOf(net, 'layer')).toBe(reduced ? 'float16' : 'float32');
    if (reduced) {
      // The layer's float weights and inputs are fp16 too.
      const layer = net.layers.find((l) => l.name === 'layer')!;
      const floatIns = layer.inputs.filter((id): id is number => id !== null).map((id) => net.tensor(id).dtype).filter((d) => d.startsWith('float') || d === 'bfloat16');
      expect(floatIns.every((d) => d === 'float16')).toBe(true);
      const p = layer.params;
      if (p.kind === 'convolution' || p.kind === 'deconvolution') expect(p.kernel.dtype).toBe('float16');
    }
  });

  test('bf16 alone rewrites to bfloat16 (looser tolerance: 8 mantissa bits)', async () => {
    const { network, feeds } = layerNetwork({ kind: 'matmul', opA: 'none', opB: 'none' }, [f32([3, 8], 70), { constant: f32([8, 4], 71) }]);
    const { reduced, report } = await compareRewrite(network, feeds, ['fp32', 'bf16'], { rtol: 5e-2, atol: 5e-2 });
    expect(report.dtype).toBe('bfloat16');
    expect(dtypeOf(reduced, 'layer')).toBe('bfloat16');
  });
});

/** x [2, d] → RMSNorm as the converters decompose it (pow 2, mean, + eps, sqrt, recip, · x, · weight) → "y". */
function rmsNorm(d: number): Network {
  const net = new Network('rms');
  const x = net.addInput('x', 'float32', [2, d]);
  const c = (v: number | Tensor, name: string): NetTensor => net.add1({ kind: 'constant', weights: v instanceof Tensor ? v : Tensor.from('float32', [1, 1], [v]) }, [], name);
  const sq = net.add1({ kind: 'elementwise', op: 'pow' }, [x, c(2, 'two')], 'pow');
  const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [sq], 'mean');
  const eps = net.add1({ kind: 'elementwise', op: 'sum' }, [mean, c(1e-6, 'eps')], 'add_eps');
  const root = net.add1({ kind: 'unary', op: 'sqrt' }, [eps], 'sqrt');
  const r = net.add1({ kind: 'unary', op: 'recip' }, [root], 'rsqrt');
  const n = net.add1({ kind: 'elementwise', op: 'prod' }, [x, r], 'normed');
  const y = net.add1({ kind: 'elementwise', op: 'prod' }, [n, c(f32([1, d], 80, 0.5, 1.5), 'weight')], 'scaled');
  const out = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [y, c(f32([d, 4], 81, -0.2, 0.2), 'proj_w')], 'proj');
  net.markOutput(out, 'y');
  return net;
}

describe('what stays fp32', () => {
  test('RMSNorm: the sum of squares and the scale stay fp32, so activations of 1000 (x² = 1e6) do not overflow fp16', async () => {
    const network = rmsNorm(16);
    const x = f32([2, 16], 82, -1000, 1000);
    const { reduced, report } = await compareRewrite(network, { x });
    expect(report.fp32Layers).toEqual(['pow', 'mean', 'add_eps', 'sqrt', 'rsqrt', 'normed']);
    expect(dtypeOf(reduced, 'pow')).toBe('float32');
    expect(dtypeOf(reduced, 'scaled')).toBe('float16');
    expect(dtypeOf(reduced, 'proj')).toBe('float16');
    // The eps constant feeds an fp32 layer only: never converted (1e-6 is an fp16 subnormal).
    const epsLayer = reduced.layers.find((l) => l.name === 'eps')!;
    expect(epsLayer.params.kind === 'constant' && epsLayer.params.weights.dtype).toBe('float32');
    expect(describePrecision(report)).toMatch(/^fp16: 2 layers in fp16, 6 kept fp32 \(pow, mean, add_eps, sqrt, …\), \d+ casts, 2 weights converted$/);
  });

  test('a layer norm decomposed with x·x and eps 1e-12 over a constant row divides in fp32 (no fp16 overflow of 1/√eps)', async () => {
    const net = new Network('ln');
    const x = net.addInput('x', 'float32', [2, 8]);
    const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [x], 'mean');
    const d = net.add1({ kind: 'elementwise', op: 'sub' }, [x, mean], 'centered');
    const sq = net.add1({ kind: 'elementwise', op: 'prod' }, [d, d], 'square');
    const v = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [sq], 'var');
    const e = net.add1({ kind: 'elementwise', op: 'sum' }, [v, net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 1], [1e-12]) }, [], 'eps')], 'add_eps');
    const s = net.add1({ kind: 'unary', op: 'sqrt' }, [e], 'std');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'div' }, [d, s], 'normed'), 'y');
    const row = [3, 3, 3, 3, 3, 3, 3, 3]; // variance 0: eps 1e-12 (0 in fp16) is all that keeps 0/√var from NaN
    const x2 = Tensor.from('float32', [2, 8], [...values(8, 90), ...row]);
    const { report } = await compareRewrite(net, { x: x2 });
    expect(report.fp32Layers).toEqual(['square', 'var', 'add_eps', 'std', 'normed']);
  });

  test('float values made from integers (positions) stay fp32: 2049 is not an fp16 value', async () => {
    const net = new Network('positions');
    const ids = net.addInput('ids', 'int32', [4]);
    const x = net.addInput('x', 'float32', [4]);
    const pos = net.add1({ kind: 'cast', to: 'float32' }, [ids], 'pos');
    const scaled = net.add1({ kind: 'elementwise', op: 'prod' }, [pos, net.add1({ kind: 'constant', weights: Tensor.from('float32', [1], [0.5]) }, [], 'half')], 'scaled_pos');
    net.markOutput(scaled, 'p');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [x, scaled], 'x_plus_p'), 'y');
    const feeds = { ids: idx([4], [1, 2049, 4097, 3]), x: f32([4], 91) };
    const { network: reduced, report } = reducePrecision(net, ['fp32', 'fp16']);
    const want = await runNetwork(net, feeds);
    const got = await runNetwork(reduced, feeds);
    expect(Array.from(got.p!.data as Float32Array)).toEqual(Array.from(want.p!.data as Float32Array)); // exact: computed in fp32
    expectClose(got.y!, want.y!, { rtol: 1e-3, atol: 1e-2 });
    expect(report.fp32Layers).toEqual(['pos', 'scaled_pos']);
    expect(dtypeOf(reduced, 'x_plus_p')).toBe('float16');
  });

  test('a nonzero reads its input as declared: 1e-8 (0 in fp16) still counts, and bf16 (which it does not take) never reaches it', async () => {
    const net = new Network('nonzero');
    const x = net.addInput('x', 'float32', [4]);
    net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu'), 'r');
    net.markOutput(net.add1({ kind: 'nonzero' }, [x], 'positions'), 'y');
    const feeds = { x: Tensor.from('float32', [4], [0, 1e-8, 0, 2]) };
    for (const precision of ['fp16', 'bf16']) {
      const { network: reduced, report } = reducePrecision(net, ['fp32', precision]);
      expect(report.fp32Layers).toEqual(['positions']);
      expect(dtypeOf(reduced, 'relu')).toBe(precision === 'fp16' ? 'float16' : 'bfloat16');
      const nonzero = reduced.layers.find((l) => l.params.kind === 'nonzero')!;
      expect(reduced.tensor(nonzero.inputs[0]!).dtype).toBe('float32');
      const got = await runNetwork(reduced, feeds);
      expect(Array.from(got.y!.data as BigInt64Array, Number)).toEqual([1, 3]);
    }
  });

  test('constants beyond the fp16 range are clamped (an attention mask of -1e9 becomes -65504) and counted', async () => {
    const net = new Network('mask');
    const x = net.addInput('x', 'float32', [2, 4]);
    const mask = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 4], [0, 0, -1e9, 0]) }, [], 'mask');
    net.markOutput(net.add1({ kind: 'softmax', axis: 1 }, [net.add1({ kind: 'elementwise', op: 'sum' }, [x, mask], 'masked')], 'softmax'), 'y');
    const { reduced, report } = await compareRewrite(net, { x: f32([2, 4], 92) });
    expect(report.clampedValues).toBe(1);
    const c = reduced.layers.find((l) => l.params.kind === 'constant')!;
    expect(c.params.kind === 'constant' && bits(c.params.weights)).toEqual([0, 0, 0xfbff, 0]);
  });
});

describe('constant subgraphs', () => {
  test('a weight the converter reshapes is converted at build (no per-run cast, no float32 copy left); constant arithmetic folds in fp32 and is cast', async () => {
    const net = new Network('linear');
    const x = net.addInput('x', 'float32', [3, 8]);
    const w = net.add1({ kind: 'constant', weights: f32([4, 8], 100) }, [], 'w');
    const wt = net.add1({ kind: 'shuffle', firstTranspose: [1, 0], zeroIsPlaceholder: false }, [w], 'w_t');
    const y = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [x, wt], 'mm');
    const scale = net.add1({ kind: 'unary', op: 'exp' }, [net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 1], [0.5]) }, [], 'log_scale')], 'scale');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [y, scale], 'scaled'), 'y');
    const { reduced, report } = await compareRewrite(net, { x: f32([3, 8], 101) });
    const kinds = reduced.layers.map((l) => `${l.name}:${l.params.kind}:${reduced.tensor(l.outputs[0]!).dtype}`);
    expect(kinds).toEqual([
      'x/to_float16:cast:float16',
      'w/float16:constant:float16',
      'w_t/float16:shuffle:float16',
      'mm:matmul:float16',
      'log_scale:constant:float32',
      'scale:unary:float32',
      'scale:out/to_float16:cast:float16',
      'scaled:elementwise:float16',
      'scaled:out/to_float32:cast:float32',
    ]);
    expect(report).toMatchObject({ casts: 3, convertedWeights: 1, reducedLayers: 2, fp32Layers: [] });
  });
});

describe('what the pass leaves alone', () => {
  test('an int/bool/shape network is returned unchanged', () => {
    const net = new Network('ints');
    const a = net.addInput('a', 'int32', [3]);
    const s = net.add1({ kind: 'shape' }, [a], 'shape');
    const sum = net.add1({ kind: 'elementwise', op: 'sum' }, [a, a], 'sum');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'greater' }, [sum, a], 'gt'), 'b');
    net.markOutput(s, 's');
    const { network, report } = reducePrecision(net, ['fp32', 'fp16']);
    expect(network).toBe(net);
    expect(report).toMatchObject({ dtype: null, unchanged: 'no float32 activations' });
  });
  test('a shape layer reads its input as it is made: no cast only to take dims', async () => {
    const net = new Network('dims');
    const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
    const s = net.add1({ kind: 'shape' }, [x], 'shape');
    const r = net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu');
    net.markOutput(net.add1({ kind: 'shape' }, [r], 'shape_r'), 'sr');
    net.markOutput(s, 's');
    net.markOutput(r, 'y');
    const { reduced } = await compareRewrite(net, { x: f32([3, 4], 110) });
    expect(reduced.inputs[0]!.profiles).toEqual(net.inputs[0]!.profiles);
    const shapeIn = (name: string): string => reduced.tensor(reduced.layers.find((l) => l.name === name)!.inputs[0]!).name;
    expect(shapeIn('shape')).toBe('x');
    expect(shapeIn('shape_r')).toBe('relu:out'); // the fp16 relu output itself
    expect(reduced.layers.filter((l) => l.params.kind === 'cast').map((l) => l.name)).toEqual(['x/to_float16', 'relu:out/to_float32']);
  });

  test('fp32 and tf32 change nothing', () => {
    const net = rmsNorm(4);
    expect(reducePrecision(net, ['fp32', 'tf32']).network).toBe(net);
    expect(describePrecision(reducePrecision(net, ['fp32']).report)).toBe('fp32 (fp32 only)');
  });
  test('a strongly typed network keeps its dtypes: asked for, or already holding float16', () => {
    const net = rmsNorm(4);
    expect(reducePrecision(net, ['fp32', 'fp16'], { stronglyTyped: true }).network).toBe(net);
    const half = new Network('half');
    const x = half.addInput('x', 'float16', [2]);
    const up = half.add1({ kind: 'cast', to: 'float32' }, [x], 'up');
    half.markOutput(half.add1({ kind: 'unary', op: 'exp' }, [up], 'exp'), 'y');
    const r = reducePrecision(half, ['fp32', 'fp16']);
    expect(r.network).toBe(half);
    expect(r.report.unchanged).toBe('strongly typed');
  });
  test('the source network is not modified', () => {
    const net = rmsNorm(4);
    const before = net.layers.map((l) => [l.name, l.params.kind, ...l.outputs.map((id) => net.tensor(id).dtype)].join());
    const { network } = reducePrecision(net, ['fp32', 'fp16']);
    expect(network).not.toBe(net);
    expect(net.layers.map((l) => [l.name, l.params.kind, ...l.outputs.map((id) => net.tensor(id).dtype)].join())).toEqual(before);
  });
});
