/**
 * Compute layers as ONNX ops: IMatrixMultiplyLayer, IConvolutionLayer,
 * IDeconvolutionLayer, IPoolingLayer, INormalizationLayer, IReduceLayer, ISoftMaxLayer and
 * ICumulativeLayer.
 */
import type { DType } from '../../../ir/dtype';
import type { MatrixOp, ReduceOp } from '../../../network';
import { computeIn, type LowerContext, type Lowering } from './context';

/**
 * op(A) × op(B): transpose swaps the last two dims; vector makes A's last dim a row
 * [..., 1, K] and B's a column [..., K, 1], whose unit dims leave the result. Equal batch
 * ranks with a 1 broadcasting is a case of MatMul's broadcasting.
 */
export const matmul: Lowering<'matmul'> = (p, c) => {
  const g = c.g;
  const prepare = (x: string, rank: number, op: MatrixOp, isA: boolean): string => {
    if (op === 'transpose') {
      const perm = Array.from({ length: rank }, (_, i) => i);
      [perm[rank - 2], perm[rank - 1]] = [perm[rank - 1]!, perm[rank - 2]!];
      return g.op('Transpose', [x], { perm });
    }
    if (op === 'vector') return g.op('Unsqueeze', [x, g.int64([isA ? -2 : -1])]);
    return x;
  };
  const [ra, rb] = [c.inputShape(0).length, c.inputShape(1).length];
  return [
    computeIn(c, [c.input(0), c.input(1)], c.inputDType(0), 'numeric', (ins) => {
      const a = prepare(ins[0]!, ra, p.opA, true);
      const b = prepare(ins[1]!, rb, p.opB, false);
      const product = g.op('MatMul', [a, b]);
      const rank = Math.max(ra + (p.opA === 'vector' ? 1 : 0), rb + (p.opB === 'vector' ? 1 : 0));
      const drop = [...(p.opA === 'vector' ? [rank - 2] : []), ...(p.opB === 'vector' ? [rank - 1] : [])];
      return drop.length === 0 ? product : g.op('Squeeze', [product, g.int64(drop)]);
    }),
  ];
};

/** The kernel (input 1 or the static weights) reshaped to its layout and cast to the input's type, and the bias. */
function convWeights(p: Parameters<Lowering<'convolution'>>[0] | Parameters<Lowering<'deconvolution'>>[0], c: LowerContext, as: DType): string[] {
  const g = c.g;
  const channels = c.inputShape(0)[1]!;
  if (channels < 0) c.unsupported('the channel dim must be known when the network is built');
  const layout =
    p.kind === 'convolution' ? [p.nbOutputMaps, channels / p.groups, ...p.kernelSize] : [channels, p.nbOutputMaps / p.groups, ...p.kernelSize];
  const [kernel, kernelDType] = c.has(1) ? [c.input(1), c.inputDType(1)] : [g.initializer(p.kernel), p.kernel.dtype];
  const shaped = c.has(1) || p.kernel.shape.length !== layout.length || p.kernel.shape.some((d, i) => d !== layout[i]) ? g.op('Reshape', [kernel, g.int64(layout)]) : kernel;
  const weight = g.cast(shaped, kernelDType, as);
  const bias = c.has(2) ? [c.input(2), c.inputDType(2)] : p.bias !== null && p.bias.size > 0 ? [g.initializer(p.bias), p.bias.dtype] : null;
  if (bias === null) return [weight];
  const flat = g.op('Reshape', [bias[0]!, g.int64([p.nbOutputMaps])]);
  return [weight, g.cast(flat, bias[1] as DType, as)];
}

const convAttrs = (p: Parameters<Lowering<'convolution'>>[0] | Parameters<Lowering<'deconvolution'>>[0]) => ({
  kernel_shape: p.kernelSize,
  strides: p.stride,
  pads: [...p.prePadding, ...p.postPadding],
  dilations: p.dilation,
  group: p.groups,
});

/** Refuses the cuda backend's own rewrites (channels-last layers, fused epilogues), which no frontend makes. */
function cudaOnly(p: { channelsLast?: boolean; activation?: string }, c: LowerContext): void {
  if (p.channelsLast === true || p.activation !== undefined) c.unsupported("channels-last and fused layers are the cuda backend's own rewrites");
}

/** IConvolutionLayer: ONNX Conv (KCRS weights, pre/post pads). */
export const convolution: Lowering<'convolution'> = (p, c) => {
  cudaOnly(p, c);
  return [computeIn(c, [c.input(0)], c.inputDType(0), 'float', (ins, as) => c.g.op('Conv', [ins[0]!, ...convWeights(p, c, as)], convAttrs(p)))];
};

/** IDeconvolutionLayer: ONNX ConvTranspose (CKRS weights); out = (in − 1)·stride − pre − post + dilation·(k − 1) + 1 in both. */
export const deconvolution: Lowering<'deconvolution'> = (p, c) => [
  computeIn(c, [c.input(0)], c.inputDType(0), 'float', (ins, as) => c.g.op('ConvTranspose', [ins[0]!, ...convWeights(p, c, as)], convAttrs(p))),
];

/**
 * IPoolingLayer. TensorRT's output count per dim, (I + pre + post − K)/S + 1 rounded down or
 * up, is reached with ceil_mode off by extending the post padding to the last window's end
 * (the reference does the same). Padding never wins a max. An average that counts padding
 * divides by the window within the padded input, TensorRT's count: the input is padded
 * with zeros explicitly first, and the pool then excludes only the extension.
 */
export const pooling: Lowering<'pooling'> = (p, c) => {
  cudaOnly(p, c);
  const g = c.g;
  const spatial = c.inputShape(0).slice(2);
  if (spatial.some((d) => d < 0)) c.unsupported('pooling needs its spatial dims when the network is built');
  const roundUp = p.paddingMode === 'explicit_round_up';
  const reach = spatial.map((size, i) => {
    const span = size + p.prePadding[i]! + p.postPadding[i]! - p.window[i]!;
    const out = (roundUp ? Math.ceil(span / p.stride[i]!) : Math.floor(span / p.stride[i]!)) + 1;
    return Math.max(p.postPadding[i]!, (out - 1) * p.stride[i]! + p.window[i]! - size - p.prePadding[i]!);
  });
  const base = { kernel_shape: p.window, strides: p.stride };
  return [
    computeIn(c, [c.input(0)], c.inputDType(0), 'float', (ins, as) => {
      const x = ins[0]!;
      if (p.type === 'max') return g.op('MaxPool', [x], { ...base, pads: [...p.prePadding, ...reach] });
      const extended = reach.some((r, i) => r !== p.postPadding[i]);
      if (p.averageCountExcludesPadding || !extended) {
        return g.op('AveragePool', [x], { ...base, pads: [...p.prePadding, ...reach], count_include_pad: p.averageCountExcludesPadding ? 0 : 1 });
      }
      const padded = g.op('Pad', [x, g.int64([0, 0, ...p.prePadding, 0, 0, ...p.postPadding]), g.scalar(as, 0)]);
      const extra = reach.map((r, i) => r - p.postPadding[i]!);
      return g.op('AveragePool', [padded], { ...base, pads: [...spatial.map(() => 0), ...extra], count_include_pad: 0 });
    }),
  ];
};

/** (x − mean)/√(var + eps) over `axes` (biased variance), as ONNX ops. */
function standardize(c: LowerContext, x: string, axes: readonly number[], eps: number, as: DType): string {
  const g = c.g;
  const ax = g.int64(axes);
  const centered = g.op('Sub', [x, g.op('ReduceMean', [x, ax], { keepdims: 1 })]);
  const variance = g.op('ReduceMean', [g.op('Mul', [centered, centered]), ax], { keepdims: 1 });
  return g.op('Div', [centered, g.op('Sqrt', [g.op('Add', [variance, g.scalar(as, eps)])])]);
}

/**
 * INormalizationLayer: (x − mean)/√(var + eps)·scale + bias. Over trailing axes with
 * scale and bias that vary only there, it is ONNX LayerNormalization (onnxruntime's fused
 * kernel); otherwise it is spelled out. nbGroups G > 1 splits the channels into G groups
 * whose statistics also cover their channels; scale and bias are per group or per channel.
 */
/** Attention layers are spelled out before lowering (lib/conversion/expand-layers.ts): ONNX opset 18 has no attention op. */
export const attention: Lowering<'attention'> = (_p, c) => c.unsupported('an attention layer is spelled out before lowering (lib/conversion/expand-layers.ts)');

export const normalization: Lowering<'normalization'> = (p, c) => {
  const g = c.g;
  const shape = c.inputShape(0);
  const rank = shape.length;
  const eps = Math.fround(p.epsilon);
  const axes = [...new Set(p.axes)].sort((a, b) => a - b);
  if (p.rms === true) c.unsupported('an RMS normalization is spelled out before lowering (lib/conversion/expand-layers.ts)');
  if (axes.length === 0) c.unsupported('normalization over no axes');
  return [
    computeIn(c, [c.input(0)], c.inputDType(0), 'float', (ins, as) => {
      const x = ins[0]!;
      const scale = g.cast(c.input(1), c.inputDType(1), as);
      const bias = g.cast(c.input(2), c.inputDType(2), as);
      const affine = (t: string, s: string, b: string): string => g.op('Add', [g.op('Mul', [t, s]), b]);
      if (p.nbGroups <= 1) {
        const first = axes[0]!;
        const trailing = axes.every((a, i) => a === first + i) && axes[axes.length - 1] === rank - 1;
        const normalized = shape.slice(first);
        const fits = (i: number): boolean => {
          const s = c.inputShape(i);
          return s.length === rank && s.slice(0, first).every((d) => d === 1) && s.slice(first).every((d, k) => d === normalized[k] && d >= 0);
        };
        if (trailing && fits(1) && fits(2)) {
          const toNormalized = (t: string): string => g.op('Reshape', [t, g.int64(normalized)]);
          return g.op('LayerNormalization', [x, toNormalized(scale), toNormalized(bias)], { axis: first, epsilon: { float: eps } });
        }
        return affine(standardize(c, x, axes, eps, as), scale, bias);
      }
      const groups = p.nbGroups;
      const channels = shape[1]!;
      if (channels < 0) c.unsupported('group normalization needs the channel count when the network is built');
      const spatial = shape.slice(2);
      const groupedShape = spatial.every((d) => d >= 0)
        ? g.int64([0, groups, channels / groups, ...spatial])
        : g.op('Concat', [g.op('Slice', [g.op('Shape', [x]), g.int64([0]), g.int64([1])]), g.int64([groups, channels / groups]), g.op('Slice', [g.op('Shape', [x]), g.int64([2]), g.int64([rank])])], { axis: 0 });
      const grouped = g.op('Reshape', [x, groupedShape]);
      const normalized = standardize(c, grouped, [2, ...axes.map((a) => a + 1)], eps, as);
      const perGroup = (i: number): boolean => groups !== channels && c.inputShape(i).length === rank && c.inputShape(i)[1] === groups;
      if (perGroup(1) || perGroup(2)) {
        const toGroups = (t: string, i: number): string => {
          const s = c.inputShape(i);
          const dims = perGroup(i) ? [s[0]!, groups, 1, ...s.slice(2)] : [s[0]!, groups, channels / groups, ...s.slice(2)];
          return g.op('Reshape', [t, g.int64(dims)]);
        };
        return g.op('Reshape', [affine(normalized, toGroups(scale, 1), toGroups(bias, 2)), g.op('Shape', [x])]);
      }
      return affine(g.op('Reshape', [normalized, g.op('Shape', [x])]), scale, bias);
    }),
  ];
};

const REDUCE: Record<ReduceOp, string> = { sum: 'ReduceSum', prod: 'ReduceProd', max: 'ReduceMax', min: 'ReduceMin', avg: 'ReduceMean' };

/** IReduceLayer over `axes` (none: the input unchanged); an integer avg is the exact int64 sum divided toward zero. */
export const reduce: Lowering<'reduce'> = (p, c) => {
  const g = c.g;
  const axes = [...new Set(p.axes)];
  const x = c.input(0);
  if (axes.length === 0) return [g.op('Identity', [x])];
  const dtype = c.inputDType(0);
  const attrs = { keepdims: p.keepDims ? 1 : 0 };
  if (p.op === 'avg' && dtype !== 'float32' && dtype !== 'float16' && dtype !== 'bfloat16') {
    const sum = g.op('ReduceSum', [g.cast(x, dtype, 'int64'), g.int64(axes)], attrs);
    const count = g.op('ReduceProd', [g.op('Gather', [g.op('Shape', [x]), g.int64(axes)], { axis: 0 }), g.int64([0])], { keepdims: 0 });
    const zero = g.op('Equal', [count, g.int64([0], [])]);
    const quotient = g.op('Div', [sum, g.op('Where', [zero, g.int64([1], []), count])]);
    return [g.cast(quotient, 'int64', dtype)];
  }
  const shape = c.inputShape(0);
  const extent = axes.reduce((n, a) => n * (shape[a < 0 ? a + shape.length : a] ?? -1), 1);
  if ((p.op === 'sum' || p.op === 'avg') && (dtype === 'float32' || dtype === 'float16') && extent > LONG_SUM) {
    // onnxruntime sums float32 in float32: past 2^24 terms a partial sum stops growing (2^28
    // fours sum to 2^29, not 2^30). A long sum is taken in float64, as the reference backend
    // takes every one; short ones (and run-time sized ones) keep the fast float32 kernel.
    return [g.cast(g.op(REDUCE[p.op], [g.cast(x, dtype, 'float64'), g.int64(axes)], attrs), 'float64', dtype)];
  }
  return [computeIn(c, [x], dtype, 'numeric', (ins) => g.op(REDUCE[p.op], [ins[0]!, g.int64(axes)], attrs))];
};

/** Terms of a float sum past which onnxruntime's float32 accumulation can lose whole terms (2^24: float32's exact integers). */
const LONG_SUM = 2 ** 24;

/** ISoftMaxLayer along one axis (ONNX Softmax from opset 13 takes one axis too). */
export const softmax: Lowering<'softmax'> = (p, c) => [computeIn(c, [c.input(0)], c.inputDType(0), 'float', (ins) => c.g.op('Softmax', ins, { axis: p.axis }))];

/** ICumulativeLayer (sum) along `axis`, optionally exclusive and/or reversed. */
export const cumulative: Lowering<'cumulative'> = (p, c) => [
  computeIn(c, [c.input(0)], c.inputDType(0), 'numeric', (ins) =>
    c.g.op('CumSum', [ins[0]!, c.g.int64([p.axis], [])], { exclusive: p.exclusive ? 1 : 0, reverse: p.reverse ? 1 : 0 }),
  ),
];
