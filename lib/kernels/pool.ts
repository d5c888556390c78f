/**
 * Pooling over 1, 2 or 3 spatial dims: max and average (PyTorch max_poolNd and avg_poolNd, ONNX
 * MaxPool/AveragePool), adaptive pooling (PyTorch adaptive_*_pool*) and global pooling.
 *
 * Each output position owns a window of input positions per dim; windows are precomputed per
 * dim (taps already clipped to the input), so the loops only combine them.
 */
import { InvalidArgumentError } from '../errors';
import { isBigIntDType, isComplex } from '../ir/dtype';
import { Tensor, type Shape } from '../ir/tensor';
import { fromNumbers, readNumbers } from './access';
import { bigintTensor, type BigIntArray } from './int64';
import { perDim, samePads, type AutoPad } from './conv';
import { pooledSize } from '../ir/ops/nn-geometry';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** Options shared by {@link maxPool} and {@link avgPool}; scalars apply to every spatial dim. */
export interface PoolOptions {
  /** Window size; its length (when a list) sets the number of spatial dims, else input rank - 2. */
  kernel: number | readonly number[];
  /** Default: the kernel size, as in PyTorch (ONNX callers pass its default of 1 explicitly). */
  stride?: number | readonly number[];
  /** PyTorch padding, symmetric per dim. */
  padding?: number | readonly number[];
  /** ONNX pads [begin_0.., end_0..]; overrides `padding`. */
  pads?: readonly number[];
  /** ONNX auto_pad; SAME_* overrides the pads. */
  autoPad?: AutoPad;
  /**
   * Round the output size up instead of down; as in PyTorch, a last window that would start
   * beyond the input and the left padding is dropped.
   */
  ceilMode?: boolean;
}

/** Options of {@link maxPool}. */
export interface MaxPoolOptions extends PoolOptions {
  dilation?: number | readonly number[];
}

/** Options of {@link avgPool}. */
export interface AvgPoolOptions extends PoolOptions {
  /** Count padding positions in the divisor (PyTorch's default true; ONNX's default is false). */
  countIncludePad?: boolean;
  /** PyTorch divisor_override: divide every window by this instead. */
  divisorOverride?: number;
}

/** Per output index along one dim: the input indices the window reads, and its size counting padding. */
interface DimWindows {
  inSize: number;
  taps: Int32Array[];
  paddedSize: number[];
}

/** The spatial layout of a pooling input: planes (N*C) and the spatial dims. */
interface Planes {
  planes: number;
  lead: number[];
  spatial: number[];
}

/** Splits the input shape into planes and `n` spatial dims (rank n+2, or n+1 unbatched). */
function planesOf(x: Tensor, n: number, op: string): Planes {
  if (isComplex(x.dtype)) throw new InvalidArgumentError(`${op}: complex tensors are not supported`);
  if (n < 1 || n > 3 || (x.rank !== n + 2 && x.rank !== n + 1)) {
    throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} does not fit ${n} spatial dim(s)`);
  }
  const lead = x.shape.slice(0, x.rank - n);
  return { planes: lead.reduce((p, d) => p * d, 1), lead, spatial: x.shape.slice(x.rank - n) };
}

/** Number of spatial dims: the kernel list's length, or the input rank minus 2. */
function spatialCount(x: Tensor, kernel: number | readonly (number | null | undefined)[]): number {
  return typeof kernel === 'number' ? x.rank - 2 : kernel.length;
}

/** Sliding windows along one dim (taps clipped to the input; paddedSize clipped to the padded input). */
function slidingWindows(inSize: number, outSize: number, kernel: number, stride: number, dilation: number, padBegin: number, padEnd: number): DimWindows {
  const taps: Int32Array[] = [];
  const paddedSize: number[] = [];
  for (let o = 0; o < outSize; o++) {
    const start = o * stride - padBegin;
    const list: number[] = [];
    for (let k = 0; k < kernel; k++) {
      const i = start + k * dilation;
      if (i >= 0 && i < inSize) list.push(i);
    }
    taps.push(Int32Array.from(list));
    paddedSize.push(Math.min(start + dilation * (kernel - 1) + 1, inSize + padEnd) - start);
  }
  return { inSize, taps, paddedSize };
}

/** PyTorch adaptive windows: output i covers [floor(i*In/Out), ceil((i+1)*In/Out)). */
function adaptiveWindows(inSize: number, outSize: number): DimWindows {
  const taps: Int32Array[] = [];
  const paddedSize: number[] = [];
  for (let o = 0; o < outSize; o++) {
    const start = Math.floor((o * inSize) / outSize);
    const end = Math.ceil(((o + 1) * inSize) / outSize);
    taps.push(Int32Array.from({ length: end - start }, (_, k) => start + k));
    paddedSize.push(end - start);
  }
  return { inSize, taps, paddedSize };
}

/** Unit windows for the dims a lower-rank pool does not have, so the loops are always 3-D. */
const unitWindows: DimWindows = { inSize: 1, taps: [Int32Array.of(0)], paddedSize: [1] };

/** Lists of windows padded at the front to 3 dims. */
const to3 = (w: DimWindows[]): [DimWindows, DimWindows, DimWindows] =>
  [...new Array<DimWindows>(3 - w.length).fill(unitWindows), ...w] as [DimWindows, DimWindows, DimWindows];

interface Resolved {
  layout: Planes;
  windows: DimWindows[];
}

/** Pads, output sizes and windows of a max or average pool. */
function resolveSliding(x: Tensor, options: PoolOptions, dilationOption: number | readonly number[] | undefined, op: string): Resolved {
  const n = spatialCount(x, options.kernel);
  const layout = planesOf(x, n, op);
  const kernel = perDim(options.kernel, n, 1, 'kernel', op, 1);
  const stride = options.stride === undefined ? kernel : perDim(options.stride, n, 1, 'stride', op, 1);
  const dilation = perDim(dilationOption, n, 1, 'dilation', op, 1);
  let padBegin: number[];
  let padEnd: number[];
  const auto = options.autoPad ?? 'NOTSET';
  if (auto === 'SAME_UPPER' || auto === 'SAME_LOWER') {
    [padBegin, padEnd] = samePads(layout.spatial, kernel, stride, dilation, auto === 'SAME_LOWER');
  } else if (auto === 'VALID') {
    padBegin = new Array<number>(n).fill(0);
    padEnd = new Array<number>(n).fill(0);
  } else if (options.pads !== undefined) {
    if (options.pads.length !== 2 * n || options.pads.some((p) => !Number.isInteger(p) || p < 0)) {
      throw new InvalidArgumentError(`${op}: pads [${options.pads.join(', ')}] must be ${2 * n} non-negative integers`);
    }
    padBegin = options.pads.slice(0, n);
    padEnd = options.pads.slice(n);
  } else {
    padBegin = perDim(options.padding, n, 0, 'padding', op, 0);
    padEnd = [...padBegin];
  }
  const windows = layout.spatial.map((d, i) => {
    const out = pooledSize(d, kernel[i]!, stride[i]!, padBegin[i]!, padEnd[i]!, dilation[i]!, options.ceilMode ?? false);
    if (out < 1 && d > 0) {
      throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} is too small for kernel [${kernel.join(', ')}] (dim ${i})`);
    }
    return slidingWindows(d, out, kernel[i]!, stride[i]!, dilation[i]!, padBegin[i]!, padEnd[i]!);
  });
  return { layout, windows };
}

/** Output shape: the input's leading (batch, channel) dims, then one size per window list. */
const pooledShape = (r: Resolved): number[] => [...r.layout.lead, ...r.windows.map((w) => w.taps.length)];

/** The window lists of a pool padded to 3 dims, with the input plane's row sizes and the output count. */
interface WindowGrid {
  windows: [DimWindows, DimWindows, DimWindows];
  /** Input sizes of the last two dims (a spatial index is (d * IH + h) * IW + w). */
  IH: number;
  IW: number;
  /** Number of output values: planes times windows. */
  outputs: number;
}

function windowGrid(r: Resolved): WindowGrid {
  const windows = to3(r.windows);
  const [wd, wh, ww] = windows;
  return { windows, IH: wh.inSize, IW: ww.inSize, outputs: r.layout.planes * wd.taps.length * wh.taps.length * ww.taps.length };
}

/**
 * Calls `visit` once per output value, in output order: with the offset of its plane in the
 * input, its window's input indices per dim and its output position per dim.
 */
function forEachWindow(
  r: Resolved,
  grid: WindowGrid,
  visit: (base: number, td: Int32Array, th: Int32Array, tw: Int32Array, od: number, oh: number, ow: number) => void,
): void {
  const [wd, wh, ww] = grid.windows;
  const inPlane = wd.inSize * grid.IH * grid.IW;
  for (let p = 0; p < r.layout.planes; p++) {
    const base = p * inPlane;
    for (let od = 0; od < wd.taps.length; od++) {
      const td = wd.taps[od]!;
      for (let oh = 0; oh < wh.taps.length; oh++) {
        const th = wh.taps[oh]!;
        for (let ow = 0; ow < ww.taps.length; ow++) visit(base, td, th, ww.taps[ow]!, od, oh, ow);
      }
    }
  }
}

/** Max over each window and the flat spatial index of the first maximum (NaN wins, as in PyTorch). */
function maxPlanes(X: Float64Array, r: Resolved): { values: Float64Array; indices: Float64Array } {
  const grid = windowGrid(r);
  const { IH, IW } = grid;
  const values = new Float64Array(grid.outputs);
  const indices = new Float64Array(grid.outputs);
  let o = 0;
  forEachWindow(r, grid, (base, td, th, tw) => {
    let best = -Infinity;
    let bestIndex = -1;
    for (let a = 0; a < td.length; a++) {
      for (let b = 0; b < th.length; b++) {
        const row = (td[a]! * IH + th[b]!) * IW;
        for (let c = 0; c < tw.length; c++) {
          const idx = row + tw[c]!;
          const v = X[base + idx]!;
          if (v > best || Number.isNaN(v) || bestIndex < 0) {
            best = v;
            bestIndex = idx;
          }
        }
      }
    }
    values[o] = best;
    indices[o++] = bestIndex;
  });
  return { values, indices };
}

/** Sum over each window divided by `divisor(count, paddedCount)`. */
function avgPlanes(X: Float64Array, r: Resolved, divisor: (count: number, padded: number) => number): Float64Array {
  const grid = windowGrid(r);
  const { IH, IW } = grid;
  const [wd, wh, ww] = grid.windows;
  const values = new Float64Array(grid.outputs);
  let o = 0;
  forEachWindow(r, grid, (base, td, th, tw, od, oh, ow) => {
    let sum = 0;
    for (let a = 0; a < td.length; a++) {
      for (let b = 0; b < th.length; b++) {
        const row = base + (td[a]! * IH + th[b]!) * IW;
        for (let c = 0; c < tw.length; c++) sum += X[row + tw[c]!]!;
      }
    }
    const count = td.length * th.length * tw.length;
    const padded = wd.paddedSize[od]! * wh.paddedSize[oh]! * ww.paddedSize[ow]!;
    values[o++] = sum / divisor(count, padded);
  });
  return values;
}

/** Flat indices over the whole tensor (ONNX MaxPool's Indices) from per-plane spatial indices. */
function globalIndices(indices: Float64Array, r: Resolved): Float64Array {
  const inPlane = r.windows.reduce((p, w) => p * w.inSize, 1);
  const outPlane = r.windows.reduce((p, w) => p * w.taps.length, 1);
  const out = new Float64Array(indices.length);
  for (let k = 0; k < indices.length; k++) out[k] = Math.floor(k / outPlane) * inPlane + indices[k]!;
  return out;
}

/** What max pooling compares, and how the pooled keys become the output tensor. */
interface MaxKeys {
  readonly keys: Float64Array;
  readonly restore: (shape: number[], pooled: Float64Array) => Tensor;
}

/**
 * The keys max pooling compares: the values as float64, or for int64 and uint64 (which
 * float64 rounds past 2^53) each element's rank among the distinct values, since order and ties are all a
 * maximum needs; `restore` maps pooled ranks back to the exact values.
 */
function maxKeys(x: Tensor): MaxKeys {
  const dtype = x.dtype;
  if (!isBigIntDType(dtype)) return { keys: readNumbers(x), restore: (shape, pooled) => fromNumbers(x.dtype, shape, pooled) };
  const values = x.data as BigIntArray;
  const distinct = [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = new Map<bigint, number>();
  distinct.forEach((v, i) => rank.set(v, i));
  const keys = Float64Array.from(values, (v) => rank.get(v)!);
  return { keys, restore: (shape, pooled) => bigintTensor(dtype, shape, BigInt64Array.from(pooled, (k) => distinct[k]!)) };
}

/** Max pooling (PyTorch max_pool1d/2d/3d, ONNX MaxPool); padding never wins; int64 is exact. */
export function maxPool(x: Tensor, options: MaxPoolOptions): Tensor {
  const r = resolveSliding(x, options, options.dilation, 'maxPool');
  const { keys, restore } = maxKeys(x);
  return restore(pooledShape(r), maxPlanes(keys, r).values);
}

/**
 * Max pooling with the int64 index of each maximum (PyTorch max_pool2d_with_indices): a
 * flat index into the input's spatial dims, or with `globalIndices` into the whole tensor
 * (ONNX MaxPool's Indices output, storage_order 0).
 */
export function maxPoolWithIndices(x: Tensor, options: MaxPoolOptions & { globalIndices?: boolean }): [Tensor, Tensor] {
  const r = resolveSliding(x, options, options.dilation, 'maxPoolWithIndices');
  const { keys, restore } = maxKeys(x);
  const { values, indices } = maxPlanes(keys, r);
  const shape = pooledShape(r);
  return [restore(shape, values), fromNumbers('int64', shape, options.globalIndices ? globalIndices(indices, r) : indices)];
}

/**
 * Average pooling (PyTorch avg_pool1d/2d/3d, ONNX AveragePool). The divisor is the window's
 * size within the padded input (countIncludePad, default true) or the number of real
 * input positions, unless `divisorOverride` is given.
 */
export function avgPool(x: Tensor, options: AvgPoolOptions): Tensor {
  const r = resolveSliding(x, options, undefined, 'avgPool');
  const override = options.divisorOverride;
  if (override !== undefined && (!Number.isFinite(override) || override === 0)) {
    throw new InvalidArgumentError(`avgPool: divisorOverride ${override} must be a non-zero number`);
  }
  const include = options.countIncludePad ?? true;
  const divisor = override !== undefined ? () => override : include ? (_: number, padded: number) => padded : (count: number) => count;
  return fromNumbers(x.dtype, pooledShape(r), avgPlanes(readNumbers(x), r, divisor));
}

/** Adaptive windows for each spatial dim; null/undefined output sizes keep the input size. */
function resolveAdaptive(x: Tensor, outputSize: number | readonly (number | null | undefined)[], op: string): Resolved {
  const n = spatialCount(x, outputSize);
  const layout = planesOf(x, n, op);
  const sizes = typeof outputSize === 'number' ? new Array<number>(n).fill(outputSize) : outputSize.map((s, i) => s ?? layout.spatial[i]!);
  if (sizes.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new InvalidArgumentError(`${op}: output size ${JSON.stringify(outputSize)} must be non-negative integers`);
  }
  layout.spatial.forEach((d, i) => {
    if (d === 0 && sizes[i]! > 0) throw new InvalidArgumentError(`${op}: cannot pool an empty dim of input ${fmt(x.shape)}`);
  });
  return { layout, windows: layout.spatial.map((d, i) => adaptiveWindows(d, sizes[i]!)) };
}

/** PyTorch adaptive_avg_pool1d/2d/3d: output i averages input [floor(i*In/Out), ceil((i+1)*In/Out)). */
export function adaptiveAvgPool(x: Tensor, outputSize: number | readonly (number | null | undefined)[]): Tensor {
  const r = resolveAdaptive(x, outputSize, 'adaptiveAvgPool');
  return fromNumbers(x.dtype, pooledShape(r), avgPlanes(readNumbers(x), r, (count) => count));
}

/** PyTorch adaptive_max_pool1d/2d/3d (values only). */
export function adaptiveMaxPool(x: Tensor, outputSize: number | readonly (number | null | undefined)[]): Tensor {
  return adaptiveMaxPoolWithIndices(x, outputSize)[0];
}

/** PyTorch adaptive_max_pool1d/2d/3d with the int64 flat spatial index of each maximum. */
export function adaptiveMaxPoolWithIndices(x: Tensor, outputSize: number | readonly (number | null | undefined)[]): [Tensor, Tensor] {
  const r = resolveAdaptive(x, outputSize, 'adaptiveMaxPool');
  const { keys, restore } = maxKeys(x);
  const { values, indices } = maxPlanes(keys, r);
  const shape = pooledShape(r);
  return [restore(shape, values), fromNumbers('int64', shape, indices)];
}

/** Reduces every plane (all dims after the first two) to one value of `values`, keeping the dims as 1s. */
function globalPool(
  x: Tensor,
  op: string,
  reduce: (X: Float64Array, start: number, end: number) => number,
  { keys, restore }: MaxKeys = { keys: readNumbers(x), restore: (shape, pooled) => fromNumbers(x.dtype, shape, pooled) },
): Tensor {
  if (x.rank < 2) throw new InvalidArgumentError(`${op}: input ${fmt(x.shape)} needs at least 2 dims [N, C, ...]`);
  if (isComplex(x.dtype)) throw new InvalidArgumentError(`${op}: complex tensors are not supported`);
  const plane = x.shape.slice(2).reduce((p, d) => p * d, 1);
  const planes = x.shape[0]! * x.shape[1]!;
  const out = new Float64Array(planes);
  for (let p = 0; p < planes; p++) out[p] = reduce(keys, p * plane, (p + 1) * plane);
  return restore([x.shape[0]!, x.shape[1]!, ...x.shape.slice(2).map(() => 1)], out);
}

/** ONNX GlobalAveragePool: mean over all spatial dims, kept as size 1. */
export function globalAvgPool(x: Tensor): Tensor {
  return globalPool(x, 'globalAvgPool', (X, start, end) => {
    let sum = 0;
    for (let i = start; i < end; i++) sum += X[i]!;
    return sum / (end - start);
  });
}

/** ONNX GlobalMaxPool: max over all spatial dims (NaN propagates), kept as size 1. */
export function globalMaxPool(x: Tensor): Tensor {
  const keys = maxKeys(x);
  return globalPool(
    x,
    'globalMaxPool',
    (X, start, end) => {
      let best = -Infinity;
      for (let i = start; i < end; i++) {
        const v = X[i]!;
        if (v > best || Number.isNaN(v)) best = v;
        if (Number.isNaN(best)) break;
      }
      return best;
    },
    keys,
  );
}
