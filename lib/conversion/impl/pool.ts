/**
 * Pooling in TensorRT terms. The pooling layer takes float [N, C, ...] inputs with 2 or 3
 * spatial dims, no dilation, and PyTorch's ceil_mode as explicit_round_up (its average
 * denominator is the window's overlap with the padded input, or with the input alone when
 * averageCountExcludesPadding: count_include_pad exactly). What it lacks is composed:
 *
 * - 1-D pools run as 2-D with a trailing unit dim; unbatched inputs get a batch dim of 1.
 * - PyTorch drops a ceil-mode window that would start past the input and its begin
 *   padding, which TensorRT's round-up formula keeps: the end padding is shrunk (or the
 *   input explicitly zero-padded when count_include_pad must keep counting the real padding).
 * - divisor_override: the input is zero-padded so that every window is whole, averaged and
 *   rescaled by window volume / divisor.
 * - Dilated or integer max pools, and the int64 indices of max_pool_with_indices, come from
 *   "taps": one strided slice of the input per window position (reads outside the input
 *   give the dtype's lowest value), their elementwise maximum, and the flat input index of
 *   the first tap equal to the maximum (a select chain, so the first maximum wins as in
 *   PyTorch). TensorRT drops the taps when nothing reads the indices.
 * - Adaptive pools: one reduce when the output is 1, the pooling layer when each input dim is
 *   a multiple of its output, else per dim a reshape+reduce (divisible dims) or a concat of
 *   per-window reduces; their indices come from taps gathered with clamped window indices.
 */
import { InternalError } from '../../errors';
import type { PoolGeometry } from '../../ir/ops/nn-geometry';
import type { NetTensor, TrtDType } from '../../network';
import type { ConversionContext } from '../context';
import { axesOf, reshapeFromDims, type DimRef } from './dynamic';
import { concat, constantOf, gatherAxis, lowestOf, product, reduce, sliceAxis, sliceSized } from './nn-util';

/** Most window positions whose taps we build (each costs a slice, a comparison and a select). */
export const TAP_LIMIT = 256;

/** Most windows along one dim of an adaptive pool composed from per-window reduces. */
export const ADAPTIVE_WINDOW_LIMIT = 64;

export interface SlidingSpec extends PoolGeometry {
  /** The IR's output spatial sizes (PyTorch's rule, the ground truth). */
  out: number[];
}

export interface AvgSpec extends SlidingSpec {
  countIncludePad: boolean;
  divisorOverride: number | null;
}

const isFloatType = (d: TrtDType): boolean => d === 'float32' || d === 'float16' || d === 'bfloat16';

// ---------------------------------------------------------------------------------------------
// Layout: [N, C, s0, s1(, s2)] with 2 or 3 spatial dims

interface Layout {
  t: NetTensor;
  spec: SlidingSpec;
  /** Back to the caller's layout. */
  restore(ctx: ConversionContext, t: NetTensor, role: string): NetTensor;
}

/** Brings an [N, C, ...n] or unbatched [C, ...n] input to the pooling layer's rank 4 or 5. */
function toLayout(ctx: ConversionContext, x: NetTensor, n: number, spec: SlidingSpec): Layout {
  const batched = x.shape.length === n + 2;
  const lead = x.shape.slice(0, x.shape.length - n);
  const spatial = x.shape.slice(x.shape.length - n);
  const pad1 = n === 1;
  // Leading dims (the batch) may be run-time dims: they are copied from the input.
  const shape: DimRef[] = [...(batched ? [] : [1]), ...axesOf(x, 0, lead.length), ...spatial, ...(pad1 ? [1] : [])];
  const ext = <T>(a: T[], v: T): T[] => (pad1 ? [...a, v] : a);
  const s: SlidingSpec = {
    kernel: ext(spec.kernel, 1),
    stride: ext(spec.stride, 1),
    padBegin: ext(spec.padBegin, 0),
    padEnd: ext(spec.padEnd, 0),
    dilation: ext(spec.dilation, 1),
    ceilMode: spec.ceilMode,
    out: ext(spec.out, 1),
  };
  return {
    t: reshapeFromDims(ctx, x, shape, 'pool_layout'),
    spec: s,
    restore: (c, t, role) => reshapeFromDims(c, t, [...axesOf(t, batched ? 0 : 1, lead.length + (batched ? 0 : 1)), ...spec.out], role),
  };
}

/** TensorRT's pooled size along one dim. */
function trtPooled(input: number, window: number, stride: number, pre: number, post: number, roundUp: boolean): number {
  const span = input + pre + post - window;
  return (roundUp ? Math.ceil(span / stride) : Math.floor(span / stride)) + 1;
}

/**
 * Padding and rounding mode that give the IR's output sizes: the spec's own pads with
 * round-up or round-down, or (null) none of them.
 */
function pickMode(inSizes: number[], s: SlidingSpec): 'explicit_round_down' | 'explicit_round_up' | null {
  const fits = (up: boolean): boolean => inSizes.every((d, i) => trtPooled(d, s.kernel[i]!, s.stride[i]!, s.padBegin[i]!, s.padEnd[i]!, up) === s.out[i]);
  if (s.ceilMode && fits(true)) return 'explicit_round_up';
  if (fits(false)) return 'explicit_round_down';
  if (fits(true)) return 'explicit_round_up';
  return null;
}

/** End padding that makes round-down give `out` (the dropped ceil-mode window). */
function fittedEndPadding(inSizes: number[], pre: number[], s: SlidingSpec): number[] {
  return inSizes.map((d, i) => {
    const k = s.kernel[i]!;
    const st = s.stride[i]!;
    const lo = (s.out[i]! - 1) * st + k - d - pre[i]!;
    const current = s.padEnd[i]!;
    const post = current >= lo && current <= lo + st - 1 ? current : Math.max(lo, 0);
    if (trtPooled(d, k, st, pre[i]!, post, false) !== s.out[i]) throw new InternalError(`pooling: cannot fit output size ${s.out[i]} along dim ${i}`);
    return post;
  });
}

/** Zero (or `fill`) padding of the spatial dims of a layout tensor: begin pads, and up to `total` per dim. */
function padSpatial(ctx: ConversionContext, t: NetTensor, begin: number[], total: number[], fill: number, role: string): NetTensor {
  const start = [0, 0, ...begin.map((p) => -p)];
  const size = [...axesOf(t, 0, 2), ...total];
  return sliceSized(ctx, t, start, size, size.map(() => 1), role, fill);
}

function poolingLayer(
  ctx: ConversionContext,
  t: NetTensor,
  type: 'max' | 'average',
  s: SlidingSpec,
  pre: number[],
  post: number[],
  mode: 'explicit_round_down' | 'explicit_round_up',
  excludePadding: boolean,
  role?: string,
): NetTensor {
  return ctx.add(
    { kind: 'pooling', type, window: s.kernel, stride: s.stride, prePadding: pre, postPadding: post, paddingMode: mode, averageCountExcludesPadding: excludePadding },
    [t],
    role,
  );
}

// ---------------------------------------------------------------------------------------------
// Taps

/** Window positions in row-major order (the order PyTorch scans a window in). */
function windowPositions(kernel: readonly number[]): number[][] {
  const out: number[][] = [];
  const total = product(kernel);
  for (let k = 0; k < total; k++) {
    const pos: number[] = [];
    let r = k;
    for (let i = kernel.length - 1; i >= 0; i--) {
      pos.unshift(r % kernel[i]!);
      r = Math.floor(r / kernel[i]!);
    }
    out.push(pos);
  }
  return out;
}

/** Row-major strides of `shape`. */
function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

/** Flat spatial indices, shaped like the output grid, of sources `src[dim][o]`. */
function flatIndices(src: number[][], inSpatial: readonly number[]): number[] {
  const strides = stridesOf(inSpatial);
  const outSizes = src.map((s) => s.length);
  const count = product(outSizes);
  const values = new Array<number>(count);
  const ostr = stridesOf(outSizes);
  for (let k = 0; k < count; k++) {
    let flat = 0;
    for (let i = 0; i < src.length; i++) flat += src[i]![Math.floor(k / ostr[i]!) % outSizes[i]!]! * strides[i]!;
    values[k] = flat;
  }
  return values;
}

interface Taps {
  taps: NetTensor[];
  /** Per tap: the flat spatial input index each output position reads. */
  index: number[][];
}

/** Sliding-window taps of a layout tensor: one strided slice per window position. */
function slidingTaps(ctx: ConversionContext, t: NetTensor, s: SlidingSpec, fill: number): Taps {
  const inSpatial = t.shape.slice(2);
  const taps: NetTensor[] = [];
  const index: number[][] = [];
  let padding: NetTensor | null = null;
  windowPositions(s.kernel).forEach((pos, j) => {
    const first = pos.map((p, i) => p * s.dilation[i]! - s.padBegin[i]!);
    const inside = first.every((f, i) => f >= 0 && f + (s.out[i]! - 1) * s.stride[i]! < inSpatial[i]!);
    taps.push(sliceSized(ctx, t, [0, 0, ...first], [...axesOf(t, 0, 2), ...s.out], [1, 1, ...s.stride], `tap${j}`, inside ? undefined : (padding ??= constantOf(ctx, t.dtype, [], [fill], 'tap_fill'))));
    index.push(flatIndices(first.map((f, i) => Array.from({ length: s.out[i]! }, (_, o) => f + o * s.stride[i]!)), inSpatial));
  });
  return { taps, index };
}

/** Adaptive-window taps: gathers of clamped window indices (repeats of a window's last element never win first). */
function adaptiveTaps(ctx: ConversionContext, t: NetTensor, out: number[]): Taps {
  const inSpatial = t.shape.slice(2);
  const windows = inSpatial.map((d, i) => adaptiveWindows(d, out[i]!));
  const widest = windows.map((w) => Math.max(...w.map(([a, b]) => b - a)));
  const taps: NetTensor[] = [];
  const index: number[][] = [];
  windowPositions(widest).forEach((pos, j) => {
    const src = pos.map((p, i) => windows[i]!.map(([a, b]) => Math.min(a + p, b - 1)));
    let tap = t;
    src.forEach((idx, i) => (tap = gatherAxis(ctx, tap, 2 + i, idx, `tap${j}_${i}`)));
    taps.push(tap);
    index.push(flatIndices(src, inSpatial));
  });
  return { taps, index };
}

/** Elementwise maximum of the taps. */
function tapMax(ctx: ConversionContext, taps: readonly NetTensor[]): NetTensor {
  return taps.reduce((acc, t, j) => (j === 0 ? t : ctx.add({ kind: 'elementwise', op: 'max' }, [acc, t], `tap_max${j}`)));
}

/** The int64 flat index of the first tap equal to `values`. */
function tapArgmax(ctx: ConversionContext, { taps, index }: Taps, values: NetTensor): NetTensor {
  const shape = [1, 1, ...values.shape.slice(2)];
  const constant = (j: number): NetTensor => constantOf(ctx, 'int64', shape, index[j]!, `index${j}`);
  let idx = constant(taps.length - 1);
  // A single tap still goes through one select, so the indices take the values' full shape.
  for (let j = Math.max(taps.length - 2, 0); j >= 0; j--) {
    const hit = ctx.add({ kind: 'elementwise', op: 'equal' }, [taps[j]!, values], `is_max${j}`);
    idx = ctx.add({ kind: 'select' }, [hit, constant(j), idx], `argmax${j}`);
  }
  return idx;
}

/** Number of window positions of a sliding pool. */
export const windowVolume = (kernel: readonly number[]): number => product(kernel);

// ---------------------------------------------------------------------------------------------
// Public builders

/** Max pooling of an [N, C, ...n] or [C, ...n] input; with `withIndices` also the flat spatial int64 argmax. */
export function maxPool(ctx: ConversionContext, x: NetTensor, n: number, spec: SlidingSpec, withIndices: boolean): [NetTensor, NetTensor | null] {
  const L = toLayout(ctx, x, n, spec);
  const s = L.spec;
  const inSizes = L.t.shape.slice(2);
  const fill = lowestOf(L.t.dtype);
  let values: NetTensor;
  let taps: Taps | null = null;
  const direct = isFloatType(L.t.dtype) && s.dilation.every((d) => d === 1);
  if (direct) {
    const mode = pickMode(inSizes, s);
    values =
      mode !== null
        ? poolingLayer(ctx, L.t, 'max', s, s.padBegin, s.padEnd, mode, false)
        : poolingLayer(ctx, L.t, 'max', s, s.padBegin, fittedEndPadding(inSizes, s.padBegin, s), 'explicit_round_down', false);
  } else {
    taps = slidingTaps(ctx, L.t, s, fill);
    values = tapMax(ctx, taps.taps);
  }
  if (!withIndices) return [L.restore(ctx, values, 'values'), null];
  taps ??= slidingTaps(ctx, L.t, s, fill);
  const indices = tapArgmax(ctx, taps, values);
  return [L.restore(ctx, values, 'values'), L.restore(ctx, indices, 'indices')];
}

/** Average pooling (count_include_pad, ceil_mode and divisor_override as PyTorch). */
export function avgPool(ctx: ConversionContext, x: NetTensor, n: number, spec: AvgSpec): NetTensor {
  const L = toLayout(ctx, x, n, spec);
  const s = L.spec;
  const inSizes = L.t.shape.slice(2);
  const zeros = s.kernel.map(() => 0);
  let out: NetTensor;
  if (spec.divisorOverride !== null) {
    // Every window whole inside a zero-padded input: the layer's mean times volume / divisor.
    const total = s.out.map((o, i) => (o - 1) * s.stride[i]! + s.kernel[i]!);
    const padded = padSpatial(ctx, L.t, s.padBegin, total, 0, 'zero_pad');
    const mean = poolingLayer(ctx, padded, 'average', s, zeros, zeros, 'explicit_round_down', false);
    const factor = constantOf(ctx, mean.dtype, mean.shape.map(() => 1), [product(s.kernel) / spec.divisorOverride], 'divisor');
    out = ctx.add({ kind: 'elementwise', op: 'prod' }, [mean, factor], 'divisor_override');
  } else {
    const mode = pickMode(inSizes, s);
    if (mode !== null) {
      out = poolingLayer(ctx, L.t, 'average', s, s.padBegin, s.padEnd, mode, !spec.countIncludePad);
    } else if (!spec.countIncludePad) {
      out = poolingLayer(ctx, L.t, 'average', s, s.padBegin, fittedEndPadding(inSizes, s.padBegin, s), 'explicit_round_down', true);
    } else {
      // The real padding counts, what lies past it does not: pad with zeros, exclude the rest.
      const total = inSizes.map((d, i) => d + s.padBegin[i]! + s.padEnd[i]!);
      const padded = padSpatial(ctx, L.t, s.padBegin, total, 0, 'zero_pad');
      const fitted = fittedEndPadding(total, zeros, { ...s, padBegin: zeros, padEnd: zeros });
      out = poolingLayer(ctx, padded, 'average', s, zeros, fitted, 'explicit_round_down', true);
    }
  }
  return L.restore(ctx, out, 'values');
}

/** PyTorch's adaptive windows: output i covers [floor(i*In/Out), ceil((i+1)*In/Out)). */
export function adaptiveWindows(inSize: number, outSize: number): Array<[number, number]> {
  return Array.from({ length: outSize }, (_, o) => [Math.floor((o * inSize) / outSize), Math.ceil(((o + 1) * inSize) / outSize)]);
}

/** Whether an adaptive pool along a dim needs per-window reduces (and how many). */
export function adaptiveWindowCount(inSize: number, outSize: number): number {
  return inSize % outSize === 0 ? 0 : outSize;
}

/**
 * Adaptive average or max pooling of the last `n` dims to `out`; with `withIndices` (max)
 * also the flat spatial int64 argmax.
 */
export function adaptivePool(ctx: ConversionContext, x: NetTensor, n: number, out: number[], op: 'avg' | 'max', withIndices: boolean): [NetTensor, NetTensor | null] {
  const rank = x.shape.length;
  const spatialAxes = Array.from({ length: n }, (_, i) => rank - n + i);
  const inSizes = spatialAxes.map((a) => x.shape[a]!);
  let values: NetTensor;
  if (out.every((o) => o === 1)) {
    values = reduce(ctx, x, op, spatialAxes, true, 'global_pool');
  } else if (inSizes.every((d, i) => d % out[i]! === 0) && isFloatType(x.dtype)) {
    const kernel = inSizes.map((d, i) => d / out[i]!);
    const spec = { kernel, stride: kernel, padBegin: kernel.map(() => 0), padEnd: kernel.map(() => 0), dilation: kernel.map(() => 1), ceilMode: false, out };
    values =
      op === 'avg' ? avgPool(ctx, x, n, { ...spec, countIncludePad: true, divisorOverride: null }) : maxPool(ctx, x, n, spec, false)[0];
  } else {
    values = x;
    spatialAxes.forEach((a, i) => {
      const d = inSizes[i]!;
      const o = out[i]!;
      if (d === o) return;
      if (d % o === 0) {
        const split = [...axesOf(values, 0, a), o, d / o, ...axesOf(values, a + 1)];
        values = reduce(ctx, reshapeFromDims(ctx, values, split, `split${i}`), op, [a + 1], false, `pool${i}`);
      } else {
        const parts = adaptiveWindows(d, o).map(([from, to], w) => reduce(ctx, sliceAxis(ctx, values, a, from, to - from, `window${i}_${w}`), op, [a], true, `pool${i}_${w}`));
        values = concat(ctx, parts, a, `concat${i}`);
      }
    });
  }
  if (!withIndices) return [values, null];
  const lead = rank - n;
  const off = lead === 1 ? 1 : 0;
  const t = reshapeFromDims(ctx, x, [...(off ? [1] : []), ...axesOf(x, 0, lead), ...inSizes], 'taps_layout');
  const v = reshapeFromDims(ctx, values, [...(off ? [1] : []), ...axesOf(values, 0, lead), ...out], 'values_layout');
  const indices = tapArgmax(ctx, adaptiveTaps(ctx, t, out), v);
  return [values, reshapeFromDims(ctx, indices, [...axesOf(indices, off, off + lead), ...out], 'indices')];
}

/** Number of taps the indices of an adaptive max pool need. */
export function adaptiveTapCount(inSizes: readonly number[], out: readonly number[]): number {
  return product(inSizes.map((d, i) => Math.max(...adaptiveWindows(d, out[i]!).map(([a, b]) => b - a))));
}
