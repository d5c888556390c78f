/**
 * Convolution and transposed convolution over 1, 2 or 3 spatial dims (PyTorch conv1d/2d/3d,
 * conv_transpose*, ONNX Conv and ConvTranspose).
 *
 * Both run as direct loops in float64 over a 3-D view (lower ranks get unit leading spatial
 * dims). For each (output channel, input channel, kernel tap) the innermost loop sweeps a
 * row of outputs whose valid range is computed up front, so it has no bounds checks.
 */
import { InvalidArgumentError } from '../errors';
import { isComplex, promoteTypes, type DType } from '../ir/dtype';
import type { Shape, Tensor } from '../ir/tensor';
import { fromNumbers, readNumbers } from './access';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** ONNX auto_pad: NOTSET uses explicit pads; SAME_* pad so that out = ceil(in / stride), the odd pixel at the end (UPPER) or the start (LOWER). */
export type AutoPad = 'NOTSET' | 'VALID' | 'SAME_UPPER' | 'SAME_LOWER';

/** Options of {@link conv}. Scalars apply to every spatial dim. */
export interface ConvOptions {
  stride?: number | readonly number[];
  /** PyTorch padding: symmetric per spatial dim, or 'valid' (none) / 'same' (stride 1, extra pixel at the end). */
  padding?: number | readonly number[] | 'valid' | 'same';
  /** ONNX pads [begin_0.., end_0..]; overrides `padding`. */
  pads?: readonly number[];
  /** ONNX auto_pad; anything but NOTSET overrides `pads` and `padding`. */
  autoPad?: AutoPad;
  dilation?: number | readonly number[];
  groups?: number;
}

/** Options of {@link convTranspose}. */
export interface ConvTransposeOptions {
  stride?: number | readonly number[];
  /** PyTorch padding: symmetric, removed from both ends of the full output. */
  padding?: number | readonly number[];
  /** ONNX pads [begin_0.., end_0..]; overrides `padding`. */
  pads?: readonly number[];
  /** Extra size added at the end of each output dim (PyTorch output_padding / ONNX output_padding). */
  outputPadding?: number | readonly number[];
  /** ONNX output_shape (spatial dims): the pads are derived from it (split by autoPad, default as NOTSET). */
  outputShape?: readonly number[];
  /** ONNX auto_pad: SAME_* makes the output in * stride, splitting the padding as named. */
  autoPad?: AutoPad;
  dilation?: number | readonly number[];
  groups?: number;
}

/** A per-dim option as a list of `n` integers (a scalar or a 1-element list applies to all), validated. */
export function perDim(value: number | readonly number[] | undefined, n: number, fallback: number, name: string, op: string, min: number): number[] {
  let list: number[];
  if (value === undefined) list = new Array<number>(n).fill(fallback);
  else if (typeof value === 'number') list = new Array<number>(n).fill(value);
  else if (value.length === 1) list = new Array<number>(n).fill(value[0]!);
  else list = [...value];
  if (list.length !== n || list.some((v) => !Number.isInteger(v) || v < min)) {
    throw new InvalidArgumentError(`${op}: ${name} ${JSON.stringify(value)} must be ${n} integer(s) >= ${min}`);
  }
  return list;
}

/** Begin and end pads from ONNX-layout `pads` or symmetric `padding`. */
function explicitPads(padding: number | readonly number[] | undefined, pads: readonly number[] | undefined, n: number, op: string): [number[], number[]] {
  if (pads !== undefined) {
    if (pads.length !== 2 * n || pads.some((p) => !Number.isInteger(p))) {
      throw new InvalidArgumentError(`${op}: pads [${pads.join(', ')}] must be ${2 * n} integers`);
    }
    return [pads.slice(0, n), pads.slice(n)];
  }
  const sym = perDim(padding, n, 0, 'padding', op, 0);
  return [sym, [...sym]];
}

/** Splits a total padding between begin and end; the odd pixel goes to the end unless `lowerFirst`. */
function splitPad(total: number, lowerFirst: boolean): [number, number] {
  const small = Math.floor(total / 2);
  return lowerFirst ? [total - small, small] : [small, total - small];
}

/**
 * ONNX SAME_UPPER / SAME_LOWER begin and end pads (also PyTorch padding 'same'): the total
 * padding that makes out = ceil(in / stride), split by splitPad.
 */
export function samePads(
  inSize: readonly number[],
  kernel: readonly number[],
  stride: readonly number[],
  dilation: readonly number[],
  lowerFirst: boolean,
): [number[], number[]] {
  const begin: number[] = [];
  const end: number[] = [];
  inSize.forEach((d, i) => {
    const out = Math.ceil(d / stride[i]!);
    const total = Math.max(0, (out - 1) * stride[i]! + dilation[i]! * (kernel[i]! - 1) + 1 - d);
    const [b, e] = splitPad(total, lowerFirst);
    begin.push(b);
    end.push(e);
  });
  return [begin, end];
}

/** The 3-D geometry the loops run on: sizes and per-dim parameters, unit dims prepended. */
interface Geometry {
  n: number;
  groups: number;
  cin: number;
  cout: number;
  inSize: number[];
  outSize: number[];
  kernel: number[];
  stride: number[];
  dilation: number[];
  padBegin: number[];
}

/** Pads a per-dim list to 3 entries by prepending `fill`. */
const to3 = (v: readonly number[], fill: number): number[] => [...new Array<number>(3 - v.length).fill(fill), ...v];

/** The per-dim lists of a convolution before they are padded to 3-D. */
type SpatialDims = Pick<Geometry, 'inSize' | 'outSize' | 'kernel' | 'stride' | 'dilation' | 'padBegin'>;

/** A Geometry with every per-dim list padded to 3 dims (unit sizes, no padding in front). */
function geometryOf(n: number, groups: number, cin: number, cout: number, dims: SpatialDims): Geometry {
  return {
    n,
    groups,
    cin,
    cout,
    inSize: to3(dims.inSize, 1),
    outSize: to3(dims.outSize, 1),
    kernel: to3(dims.kernel, 1),
    stride: to3(dims.stride, 1),
    dilation: to3(dims.dilation, 1),
    padBegin: to3(dims.padBegin, 0),
  };
}

/**
 * The scalars the loops of convForward and convTransposeForward read off a Geometry: sizes
 * (I in, O out, K kernel), stride s, dilation d and begin pad p per dim (D, H, W), channels
 * per group, and the input, output and kernel plane sizes.
 */
type LoopSizes = Record<
  'IH' | 'IW' | 'OH' | 'OW' | 'KD' | 'KH' | 'KW' | 'sd' | 'sh' | 'sw' | 'dd' | 'dh' | 'dw' | 'pd' | 'ph' | 'pw' | 'cinG' | 'coutG' | 'inPlane' | 'outPlane' | 'kSize',
  number
>;

function loopSizes(g: Geometry): LoopSizes {
  const [ID, IH, IW] = g.inSize as [number, number, number];
  const [OD, OH, OW] = g.outSize as [number, number, number];
  const [KD, KH, KW] = g.kernel as [number, number, number];
  const [sd, sh, sw] = g.stride as [number, number, number];
  const [dd, dh, dw] = g.dilation as [number, number, number];
  const [pd, ph, pw] = g.padBegin as [number, number, number];
  const cinG = g.cin / g.groups;
  const coutG = g.cout / g.groups;
  return { IH, IW, OH, OW, KD, KH, KW, sd, sh, sw, dd, dh, dw, pd, ph, pw, cinG, coutG, inPlane: ID * IH * IW, outPlane: OD * OH * OW, kSize: KD * KH * KW };
}

/** Positions p in [0, count) whose partner p*stride + offset lies in [0, limit), as [lo, hi). */
function validRange(offset: number, stride: number, limit: number, count: number): [number, number] {
  const lo = Math.max(0, Math.ceil(-offset / stride));
  const hi = Math.min(count, Math.floor((limit - 1 - offset) / stride) + 1);
  return [lo, Math.max(lo, hi)];
}

/** One [lo, hi) range per kernel tap along a dim. */
type TapRanges = [number, number][];

/**
 * For each of the 3 dims and each kernel tap k: the validRange of the positions p in
 * [0, count) whose partner p*stride + k*dilation - padBegin lies in [0, limit).
 */
function tapRanges(g: Geometry, limit: readonly number[], count: readonly number[]): [TapRanges, TapRanges, TapRanges] {
  const dim = (i: number): TapRanges =>
    Array.from({ length: g.kernel[i]! }, (_, k) => validRange(k * g.dilation[i]! - g.padBegin[i]!, g.stride[i]!, limit[i]!, count[i]!));
  return [dim(0), dim(1), dim(2)];
}

/** What conv and convTranspose read off their operands before checking channels. */
interface ConvOperands {
  /** Number of spatial dims (1 to 3). */
  spatial: number;
  batched: boolean;
  dtype: DType;
  /** The input shape with its batch dim (1 when unbatched). */
  xs: Shape;
  groups: number;
  /** Input channels. */
  cin: number;
}

/** Input and weight checked, batch dim added when missing; the number of spatial dims, groups and input channels. */
function convOperands(x: Tensor, weight: Tensor, groupsOption: number | undefined, op: string): ConvOperands {
  const spatial = weight.rank - 2;
  if (spatial < 1 || spatial > 3) throw new InvalidArgumentError(`${op}: weight ${fmt(weight.shape)} must have 3 to 5 dims`);
  const batched = x.rank === spatial + 2;
  if (!batched && x.rank !== spatial + 1) {
    throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} does not match weight ${fmt(weight.shape)} (${spatial} spatial dims)`);
  }
  const dtype = promoteTypes(x.dtype, weight.dtype);
  if (isComplex(dtype)) throw new InvalidArgumentError(`${op}: complex tensors are not supported`);
  const xs = batched ? x.shape : [1, ...x.shape];
  return { spatial, batched, dtype, xs, groups: groupsOption ?? 1, cin: xs[1]! };
}

/** The bias values (zeros when absent), checked to have `channels` elements. */
function biasValues(bias: Tensor | null | undefined, channels: number, op: string): Float64Array {
  if (bias === undefined || bias === null) return new Float64Array(channels);
  if (bias.size !== channels || bias.rank > 1) {
    throw new InvalidArgumentError(`${op}: bias ${fmt(bias.shape)} must have ${channels} elements (one per output channel)`);
  }
  return readNumbers(bias);
}

/**
 * N-d convolution (PyTorch conv1d/2d/3d, ONNX Conv): input [N, C, *spatial] (or unbatched
 * [C, *spatial]), weight [Cout, C/groups, *kernel], bias [Cout].
 */
export function conv(x: Tensor, weight: Tensor, bias?: Tensor | null, options: ConvOptions = {}): Tensor {
  const op = 'conv';
  const { spatial, batched, dtype, xs, groups, cin } = convOperands(x, weight, options.groups, op);
  const cout = weight.shape[0]!;
  if (!Number.isInteger(groups) || groups < 1 || cin % groups !== 0 || cout % groups !== 0 || weight.shape[1]! * groups !== cin) {
    throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)}, weight ${fmt(weight.shape)} and groups ${groups} do not agree on channels`);
  }
  const inSize = xs.slice(2);
  const kernel = weight.shape.slice(2);
  const stride = perDim(options.stride, spatial, 1, 'stride', op, 1);
  const dilation = perDim(options.dilation, spatial, 1, 'dilation', op, 1);
  const [padBegin, padEnd] = convPads(options, inSize, kernel, stride, dilation, op);
  const outSize = inSize.map((d, i) => {
    const span = dilation[i]! * (kernel[i]! - 1) + 1;
    return Math.floor((d + padBegin[i]! + padEnd[i]! - span) / stride[i]!) + 1;
  });
  if (outSize.some((d) => d < 1)) {
    throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} is too small for kernel ${fmt(kernel)} with the given padding and dilation`);
  }
  const geometry = geometryOf(xs[0]!, groups, cin, cout, { inSize, outSize, kernel, stride, dilation, padBegin });
  const out = convForward(readNumbers(x), readNumbers(weight), biasValues(bias, cout, op), geometry);
  const outShape = [...(batched ? [xs[0]!] : []), cout, ...outSize];
  return fromNumbers(dtype, outShape, out);
}

/** Begin/end pads of a convolution from autoPad, pads or padding. */
function convPads(
  options: ConvOptions,
  inSize: readonly number[],
  kernel: readonly number[],
  stride: readonly number[],
  dilation: readonly number[],
  op: string,
): [number[], number[]] {
  const n = inSize.length;
  const auto = options.autoPad ?? 'NOTSET';
  if (auto === 'VALID' || options.padding === 'valid') return [new Array<number>(n).fill(0), new Array<number>(n).fill(0)];
  if (auto === 'SAME_UPPER' || auto === 'SAME_LOWER' || options.padding === 'same') {
    if (options.padding === 'same' && auto === 'NOTSET' && stride.some((s) => s !== 1)) {
      throw new InvalidArgumentError(`${op}: padding 'same' needs stride 1, got [${stride.join(', ')}]`);
    }
    return samePads(inSize, kernel, stride, dilation, auto === 'SAME_LOWER');
  }
  return explicitPads(options.padding as number | readonly number[] | undefined, options.pads, n, op);
}

/** The direct convolution loops (see the file comment); returns [N, Cout, *out] values. */
function convForward(X: Float64Array, W: Float64Array, bias: Float64Array, g: Geometry): Float64Array {
  const { IH, IW, OH, OW, KD, KH, KW, sd, sh, sw, dd, dh, dw, pd, ph, pw, cinG, coutG, inPlane, outPlane, kSize } = loopSizes(g);
  const out = new Float64Array(g.n * g.cout * outPlane);
  const [rangeD, rangeH, rangeW] = tapRanges(g, g.inSize, g.outSize);
  // Four output channels at a time share each input load, which roughly halves the memory
  // traffic of the innermost loop; the remainder of a group goes one channel at a time.
  for (let n = 0; n < g.n; n++) {
    for (let oc = 0; oc < g.cout; ) {
      const group = Math.floor(oc / coutG);
      const block = (group + 1) * coutG - oc >= 4 ? 4 : 1;
      const outBase = (n * g.cout + oc) * outPlane;
      for (let b = 0; b < block; b++) out.fill(bias[oc + b]!, outBase + b * outPlane, outBase + (b + 1) * outPlane);
      for (let icg = 0; icg < cinG; icg++) {
        const inBase = (n * g.cin + group * cinG + icg) * inPlane;
        const wBase = (oc * cinG + icg) * kSize;
        const wStride = cinG * kSize;
        for (let kd = 0; kd < KD; kd++) {
          const [od0, od1] = rangeD[kd]!;
          for (let kh = 0; kh < KH; kh++) {
            const [oh0, oh1] = rangeH[kh]!;
            for (let kw = 0; kw < KW; kw++) {
              const [ow0, ow1] = rangeW[kw]!;
              const tap = wBase + (kd * KH + kh) * KW + kw;
              const colShift = kw * dw - pw;
              for (let od = od0; od < od1; od++) {
                const id = od * sd - pd + kd * dd;
                for (let oh = oh0; oh < oh1; oh++) {
                  const ih = oh * sh - ph + kh * dh;
                  const inRow = inBase + (id * IH + ih) * IW + colShift;
                  const r0 = outBase + (od * OH + oh) * OW;
                  if (block === 4) {
                    const w0 = W[tap]!;
                    const w1 = W[tap + wStride]!;
                    const w2 = W[tap + 2 * wStride]!;
                    const w3 = W[tap + 3 * wStride]!;
                    const r1 = r0 + outPlane;
                    const r2 = r1 + outPlane;
                    const r3 = r2 + outPlane;
                    for (let ow = ow0; ow < ow1; ow++) {
                      const xv = X[inRow + ow * sw]!;
                      out[r0 + ow]! += w0 * xv;
                      out[r1 + ow]! += w1 * xv;
                      out[r2 + ow]! += w2 * xv;
                      out[r3 + ow]! += w3 * xv;
                    }
                  } else if (sw === 1) {
                    const wv = W[tap]!;
                    for (let ow = ow0; ow < ow1; ow++) out[r0 + ow]! += wv * X[inRow + ow]!;
                  } else {
                    const wv = W[tap]!;
                    for (let ow = ow0; ow < ow1; ow++) out[r0 + ow]! += wv * X[inRow + ow * sw]!;
                  }
                }
              }
            }
          }
        }
      }
      oc += block;
    }
  }
  return out;
}

/**
 * N-d transposed convolution (PyTorch conv_transpose1d/2d/3d, ONNX ConvTranspose): input
 * [N, Cin, *spatial] (or unbatched), weight [Cin, Cout/groups, *kernel], bias [Cout]. Output
 * size per dim: (in-1)*stride - padBegin - padEnd + dilation*(k-1) + outputPadding + 1.
 */
export function convTranspose(x: Tensor, weight: Tensor, bias?: Tensor | null, options: ConvTransposeOptions = {}): Tensor {
  const op = 'convTranspose';
  const { spatial, batched, dtype, xs, groups, cin } = convOperands(x, weight, options.groups, op);
  if (!Number.isInteger(groups) || groups < 1 || weight.shape[0] !== cin || cin % groups !== 0) {
    throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)}, weight ${fmt(weight.shape)} and groups ${groups} do not agree on channels`);
  }
  const cout = weight.shape[1]! * groups;
  const inSize = xs.slice(2);
  const kernel = weight.shape.slice(2);
  const stride = perDim(options.stride, spatial, 1, 'stride', op, 1);
  const dilation = perDim(options.dilation, spatial, 1, 'dilation', op, 1);
  const outputPadding = perDim(options.outputPadding, spatial, 0, 'outputPadding', op, 0);
  const span = kernel.map((k, i) => dilation[i]! * (k - 1) + 1);
  const fullSize = inSize.map((d, i) => (d - 1) * stride[i]! + span[i]! + outputPadding[i]!);
  let padBegin: number[];
  let padEnd: number[];
  const auto = options.autoPad ?? 'NOTSET';
  const target = options.outputShape ?? (auto === 'SAME_UPPER' || auto === 'SAME_LOWER' ? inSize.map((d, i) => d * stride[i]!) : undefined);
  if (target !== undefined) {
    if (target.length !== spatial) throw new InvalidArgumentError(`${op}: outputShape [${target.join(', ')}] must have ${spatial} dims`);
    padBegin = [];
    padEnd = [];
    fullSize.forEach((f, i) => {
      // ONNX: the odd pixel of padding goes to the end for SAME_UPPER, to the start otherwise.
      const [b, e] = splitPad(f - target[i]!, auto !== 'SAME_UPPER');
      padBegin.push(b);
      padEnd.push(e);
    });
  } else if (auto === 'VALID') {
    padBegin = new Array<number>(spatial).fill(0);
    padEnd = new Array<number>(spatial).fill(0);
  } else {
    [padBegin, padEnd] = explicitPads(options.padding, options.pads, spatial, op);
  }
  const outSize = fullSize.map((f, i) => f - padBegin[i]! - padEnd[i]!);
  if (outSize.some((d) => d < 1)) {
    throw new InvalidArgumentError(`${op}: padding leaves no output for input ${fmt(x.shape)} and weight ${fmt(weight.shape)}`);
  }
  const geometry = geometryOf(xs[0]!, groups, cin, cout, { inSize, outSize, kernel, stride, dilation, padBegin });
  const out = convTransposeForward(readNumbers(x), readNumbers(weight), biasValues(bias, cout, op), geometry);
  return fromNumbers(dtype, [...(batched ? [xs[0]!] : []), cout, ...outSize], out);
}

/** Scatters each input pixel times each kernel tap into the output (the adjoint of convForward). */
function convTransposeForward(X: Float64Array, W: Float64Array, bias: Float64Array, g: Geometry): Float64Array {
  const { IH, IW, OH, OW, KD, KH, KW, sd, sh, sw, dd, dh, dw, pd, ph, pw, cinG, coutG, inPlane, outPlane, kSize } = loopSizes(g);
  const out = new Float64Array(g.n * g.cout * outPlane);
  const [rangeD, rangeH, rangeW] = tapRanges(g, g.outSize, g.inSize);
  for (let n = 0; n < g.n; n++) {
    for (let oc = 0; oc < g.cout; oc++) {
      const outBase = (n * g.cout + oc) * outPlane;
      out.fill(bias[oc]!, outBase, outBase + outPlane);
    }
    for (let ic = 0; ic < g.cin; ic++) {
      const group = Math.floor(ic / cinG);
      const inBase = (n * g.cin + ic) * inPlane;
      for (let ocg = 0; ocg < coutG; ocg++) {
        const outBase = (n * g.cout + group * coutG + ocg) * outPlane;
        const wBase = (ic * coutG + ocg) * kSize;
        for (let kd = 0; kd < KD; kd++) {
          const [id0, id1] = rangeD[kd]!;
          for (let kh = 0; kh < KH; kh++) {
            const [ih0, ih1] = rangeH[kh]!;
            for (let kw = 0; kw < KW; kw++) {
              const [iw0, iw1] = rangeW[kw]!;
              const wv = W[wBase + (kd * KH + kh) * KW + kw]!;
              const colShift = kw * dw - pw;
              for (let id = id0; id < id1; id++) {
                const od = id * sd - pd + kd * dd;
                for (let ih = ih0; ih < ih1; ih++) {
                  const oh = ih * sh - ph + kh * dh;
                  const inRow = inBase + (id * IH + ih) * IW;
                  const outRow = outBase + (od * OH + oh) * OW + colShift;
                  for (let iw = iw0; iw < iw1; iw++) out[outRow + iw * sw]! += wv * X[inRow + iw]!;
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}
