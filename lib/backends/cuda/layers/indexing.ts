/**
 * IGatherLayer (default, element, nd), IScatterLayer (element, nd), ITopKLayer and
 * IResizeLayer (nearest, linear).
 *
 * Every gather and scatter mode is one index walk: over a box of coordinates c, the data
 * offset is Σ c·dataStride + Σ_j index[c·indexStride + j]·axisStride_j. A gather reads data
 * there into the dense output; a scatter writes the dense updates there. An index outside
 * [0, d), which TensorRT leaves undefined, reads 0 or writes nothing (never memory outside), and
 * the kernel reports it through the layer's run-time check (../plan/run-checks.ts), which fails
 * the run with E_BAD_INPUT as the reference backend does. Indices known when the plan is made
 * (host values, constants of the network) are checked then, and need no run-time check.
 */
import type { KernelArg } from '../../../gpu/plan';
import type { ResizeRoundMode, TrtDType } from '../../../network';
import { readNumbers } from '../../../kernels/access';
import { axisOf, checkRank, copyAll, denseStrides, dims8, i32, i64, input, kernelSource, launch, output, paramsOf, ptr, u32, u64, UNCHECKED, unsupported, volume } from './kernel';
import { divisionMagic, magicQuotient } from './map';
import { BYTES, DTYPES, storeDouble } from './prelude';
import type { BoundTensor, LayerLowering, LoweredStep, LoweringContext } from './types';

function indexWalkKernel(direction: 'gather' | 'scatter', dtype: TrtDType, indexType: TrtDType) {
  const t = DTYPES[dtype].storage;
  const ix = DTYPES[indexType].storage;
  const body =
    direction === 'gather' ? `y[i] = ok ? x[off] : (${t})0;` : 'if (ok) y[off] = x[i];';
  return kernelSource(`${direction}.${t}.${ix}`, (entry) => `
extern "C" __global__ void ${entry}(${t}* y, const ${t}* x, const ${ix}* idx, i64 n, i32 rank, Dims8 dims, Dims8 dataStrides, Dims8 indexStrides, i32 nIndex, Dims8 axisStrides, Dims8 axisDims, u32* status, u32 code) {
  GRID_STRIDE(i, n) {
    i64 c[8];
    unflatten(i, rank, dims, c);
    i64 off = dot8(c, rank, dataStrides), io = dot8(c, rank, indexStrides);
    bool ok = true;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (j < nIndex) {
        i64 v = (i64)idx[io + j];
        if (v < 0 || v >= axisDims.v[j]) ok = false;
        off += v * axisStrides.v[j];
      }
    }
    if (!ok && status != nullptr) *status = code;
    ${body}
  }
}`);
}

/** C types of a `bytes`-byte chunk of a row, moved as one load and one store. */
const CHUNK: Record<number, string> = { 16: 'VecN<u32, 4>', 8: 'VecN<u32, 2>', 4: 'u32', 2: 'u16', 1: 'u8' };

/**
 * A default-mode gather as whole rows: the data is [outer, D, inner] around the axis, the
 * output [outer, Q, inner], and each thread moves one `chunkBytes` chunk of an inner row
 * (an embedding lookup takes 16 bytes a thread where the general walk took one element, with
 * a run-time-rank unflatten for each). 32-bit positions; an index outside [0, D) gives zeros
 * and is reported, as in the walk.
 */
function rowGatherKernel(chunkBytes: number, indexType: TrtDType) {
  const chunk = CHUNK[chunkBytes]!;
  const ix = DTYPES[indexType].storage;
  // One name for the chunk type: a parameter list is split at its commas.
  return kernelSource(`gather.rows${chunkBytes}.${ix}`, (entry) => `
typedef ${chunk} ${entry}_chunk;
extern "C" __global__ void ${entry}(${entry}_chunk* y, const ${entry}_chunk* x, const ${ix}* idx, u32 n, u32 chunks, u64 mChunks, u32 Q, u64 mQ, i64 D, u32* status, u32 code) {
  for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
    const u32 r = ${magicQuotient('t', 'mChunks')};
    const u32 c = t - r * chunks;
    const u32 o = ${magicQuotient('r', 'mQ')};
    const i64 v = (i64)idx[r - o * Q];
    ${entry}_chunk value = {};
    if (v >= 0 && v < D) value = x[((u64)o * (u64)D + (u64)v) * chunks + c];
    else if (status != nullptr) *status = code;
    y[t] = value;
  }
}`);
}

/** The row gather's launch, or null where its 32-bit positions do not reach. */
function rowGather(data: BoundTensor, indices: BoundTensor, out: BoundTensor, axis: number, check: readonly KernelArg[]): LoweredStep[] | null {
  const bytes = BYTES[data.dtype];
  const outer = volume(data.shape.slice(0, axis));
  const D = data.shape[axis]!;
  const rowBytes = volume(data.shape.slice(axis + 1)) * bytes;
  const q = volume(indices.shape);
  const fits = (b: number): boolean => rowBytes % b === 0 && (data.at.offset ?? 0) % b === 0 && (out.at.offset ?? 0) % b === 0;
  const chunkBytes = [16, 8, 4, 2, 1].find(fits)!;
  const chunks = rowBytes / chunkBytes;
  const n = outer * q * chunks;
  if (n >= 2 ** 31) return null;
  return launch(rowGatherKernel(chunkBytes, indices.dtype), n, [
    ptr(out.at), ptr(data.at), ptr(indices.at), u32(n), u32(chunks), u64(divisionMagic(chunks)), u32(q), u64(divisionMagic(q)), i64(D), ...check,
  ]);
}

interface Walk {
  dims: number[];
  dataStrides: number[];
  indexStrides: number[];
  axisStrides: number[];
  axisDims: number[];
}

const walkArgs = (w: Walk): KernelArg[] => [
  i64(volume(w.dims)),
  i32(w.dims.length),
  dims8(w.dims),
  dims8(w.dataStrides),
  dims8(w.indexStrides),
  i32(w.axisStrides.length),
  dims8(w.axisStrides),
  dims8(w.axisDims),
];

/** The walk over the output of an nd gather / the updates of an nd scatter (b leading batch dims shared by data and indices). */
function ndWalk(data: readonly number[], indices: readonly number[], b: number): Walk | string {
  const q = indices.length;
  const last = indices[q - 1]!;
  if (q < 1 || last > 8 || b + last > data.length) return `indices [${indices.join(', ')}] do not fit data [${data.join(', ')}]`;
  const ds = denseStrides(data);
  const is = denseStrides(indices);
  const trailing = data.slice(b + last);
  const dims = [...indices.slice(0, -1), ...trailing];
  return {
    dims,
    dataStrides: [...indices.slice(0, -1).map((_, d) => (d < b ? ds[d]! : 0)), ...trailing.map((_, t) => ds[b + last + t]!)],
    indexStrides: [...indices.slice(0, -1).map((_, d) => is[d]!), ...trailing.map(() => 0)],
    axisStrides: Array.from({ length: last }, (_, j) => ds[b + j]!),
    axisDims: Array.from({ length: last }, (_, j) => data[b + j]!),
  };
}

/** The walk of an element gather / scatter along `axis` over the indices' box. */
function elementWalk(data: readonly number[], indices: readonly number[], axis: number): Walk {
  const ds = denseStrides(data);
  return {
    dims: [...indices],
    dataStrides: indices.map((_, d) => (d === axis ? 0 : ds[d]!)),
    indexStrides: denseStrides(indices),
    axisStrides: [ds[axis]!],
    axisDims: [data[axis]!],
  };
}

/**
 * The `status, code` arguments of an index kernel over input 1: none where the indices are known
 * now (host values or a constant of the network) and all inside their axes (`axisOf(k)`: the axis
 * the k-th index value addresses), else a run-time check. Known indices outside an axis get the
 * run-time check too, so that the run fails as on the reference backend, not the plan.
 */
function indexCheck(ctx: LoweringContext, data: BoundTensor, axisOf: (k: number) => number): readonly KernelArg[] {
  const constant = ctx.constants?.[1];
  const known = ctx.values[1] ?? (constant === undefined ? undefined : readNumbers(constant));
  if (known !== undefined) {
    let inside = true;
    for (let k = 0; k < known.length && inside; k++) inside = known[k]! >= 0 && known[k]! < data.shape[axisOf(k)]!;
    if (inside) return UNCHECKED;
  }
  const axes = [...new Set(Array.from({ length: Math.max(known?.length ?? 0, 1) }, (_, k) => axisOf(k)))];
  const where = axes.map((a) => `axis ${a} of size ${data.shape[a]}`).join(', ');
  return ctx.check(`an index is out of range for ${where} (a model's index must lie in [-d, d))`);
}

export const gather: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'gather');
  const data = input(ctx, 0);
  const indices = input(ctx, 1);
  const out = output(ctx);
  if (indices.dtype !== 'int32' && indices.dtype !== 'int64') unsupported(ctx, `indices must be int32 or int64, got ${indices.dtype}`);
  const rank = data.shape.length;
  let walk: Walk;
  let check: readonly KernelArg[];
  if (p.mode === 'default') {
    if ((p.nbElementWiseDims ?? 0) !== 0) unsupported(ctx, 'default-mode gather with nbElementWiseDims is not implemented');
    const axis = axisOf(ctx, p.axis, rank);
    if (volume(out.shape) === 0) return [];
    check = indexCheck(ctx, data, () => axis);
    const rows = rowGather(data, indices, out, axis, check);
    if (rows !== null) return rows;
    const ds = denseStrides(data.shape);
    const is = denseStrides(indices.shape);
    const q = indices.shape.length;
    walk = {
      dims: [...out.shape],
      dataStrides: [...ds.slice(0, axis), ...new Array<number>(q).fill(0), ...ds.slice(axis + 1)],
      indexStrides: [...new Array<number>(axis).fill(0), ...is, ...new Array<number>(rank - axis - 1).fill(0)],
      axisStrides: [ds[axis]!],
      axisDims: [data.shape[axis]!],
    };
  } else if (p.mode === 'element') {
    const axis = axisOf(ctx, p.axis, rank);
    walk = elementWalk(data.shape, indices.shape, axis);
    check = indexCheck(ctx, data, () => axis);
  } else {
    const b = p.nbElementWiseDims ?? 0;
    const w = ndWalk(data.shape, indices.shape, b);
    if (typeof w === 'string') unsupported(ctx, w);
    walk = w;
    const last = w.axisDims.length;
    check = indexCheck(ctx, data, (k) => b + (k % last));
  }
  checkRank(ctx, walk.dims.length);
  return launch(indexWalkKernel('gather', data.dtype, indices.dtype), volume(walk.dims), [ptr(out.at), ptr(data.at), ptr(indices.at), ...walkArgs(walk), ...check]);
};

/** Scatter: the output is a copy of the data, then each update is written where its index says. Duplicate indices race (TensorRT leaves them undefined). */
export const scatter: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'scatter');
  const data = input(ctx, 0);
  const indices = input(ctx, 1);
  const updates = input(ctx, 2);
  const out = output(ctx);
  if (indices.dtype !== 'int32' && indices.dtype !== 'int64') unsupported(ctx, `indices must be int32 or int64, got ${indices.dtype}`);
  let walk: Walk;
  let check: readonly KernelArg[];
  if (p.mode === 'element') {
    const axis = axisOf(ctx, p.axis, data.shape.length);
    walk = elementWalk(data.shape, indices.shape, axis);
    check = indexCheck(ctx, data, () => axis);
  } else {
    const w = ndWalk(data.shape, indices.shape, 0);
    if (typeof w === 'string') unsupported(ctx, w);
    walk = w;
    const last = w.axisDims.length;
    check = indexCheck(ctx, data, (k) => k % last);
  }
  if (volume(updates.shape) !== volume(walk.dims)) unsupported(ctx, `updates [${updates.shape.join(', ')}] do not match indices [${indices.shape.join(', ')}]`);
  checkRank(ctx, walk.dims.length);
  const steps: LoweredStep[] = copyAll(data, out);
  steps.push(...launch(indexWalkKernel('scatter', data.dtype, indices.dtype), volume(walk.dims), [ptr(out.at), ptr(updates.at), ptr(indices.at), ...walkArgs(walk), ...check]));
  return steps;
};

/**
 * Top-k by repeated selection: pick t is the first element, in output order, that comes after
 * pick t−1 (larger values first for max, smaller for min; NaN first for max, last for min;
 * ties to the lower index). O(k·d) per row, no scratch.
 */
function topkKernel(op: 'max' | 'min', dtype: TrtDType, indexType: TrtDType) {
  const c = DTYPES[dtype];
  const ix = DTYPES[indexType].storage;
  const nan = (v: string): string => (c.compute === 'float' ? `f_isnan(${v})` : 'false');
  const better = op === 'max' ? '>' : '<';
  const nanFirst = op === 'max';
  return kernelSource(`topk.${op}.${dtype}.${ix}`, (entry) => `
__device__ __forceinline__ bool ${entry}_before(${c.compute} a, i64 ia, ${c.compute} b, i64 ib) {
  bool na = ${nan('a')}, nb = ${nan('b')};
  if (na || nb) {
    if (na && nb) return ia < ib;
    return ${nanFirst ? 'na' : 'nb'};
  }
  if (a ${better} b) return true;
  if (a == b) return ia < ib;
  return false;
}
extern "C" __global__ void ${entry}(${c.storage}* values, ${ix}* indices, const ${c.storage}* x, i64 outer, i32 orank, Dims8 odims, Dims8 xs, Dims8 ys, i64 d, i64 xAxis, i64 yAxis, i64 k) {
  GRID_STRIDE(o, outer) {
    i64 xb = strided(o, orank, odims, xs), yb = strided(o, orank, odims, ys);
    ${c.compute} pv = 0;
    i64 pi = -1;
    for (i64 t = 0; t < k; ++t) {
      i64 best = -1;
      ${c.compute} bv = 0;
      for (i64 j = 0; j < d; ++j) {
        ${c.compute} v = ${c.load('x[xb + j * xAxis]')};
        if (pi >= 0 && !${entry}_before(pv, pi, v, j)) continue;
        if (best < 0 || ${entry}_before(v, j, bv, best)) { best = j; bv = v; }
      }
      values[yb + t * yAxis] = x[xb + best * xAxis];
      indices[yb + t * yAxis] = (${ix})best;
      pv = bv;
      pi = best;
    }
  }
}`);
}

export const topk: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'topk');
  const x = input(ctx, 0);
  const values = output(ctx, 0);
  const indices = output(ctx, 1);
  if (x.dtype === 'bool') unsupported(ctx, 'top-k does not take bool');
  const rank = x.shape.length;
  checkRank(ctx, rank);
  const shape = rank === 0 ? [1] : x.shape;
  const axis = rank === 0 ? 0 : axisOf(ctx, p.axis, rank);
  const d = shape[axis]!;
  if (p.k > d) unsupported(ctx, `k ${p.k} exceeds dim ${axis} of input [${x.shape.join(', ')}]`);
  const outShape = shape.map((s, i) => (i === axis ? p.k : s));
  const keep = shape.map((_, i) => i).filter((i) => i !== axis);
  const xs = denseStrides(shape);
  const ys = denseStrides(outShape);
  const outerDims = keep.map((i) => shape[i]!);
  return launch(topkKernel(p.op, x.dtype, p.indicesType), volume(outerDims) * (p.k > 0 ? 1 : 0), [
    ptr(values.at),
    ptr(indices.at),
    ptr(x.at),
    i64(volume(outerDims)),
    i32(outerDims.length),
    dims8(outerDims),
    dims8(keep.map((i) => xs[i]!)),
    dims8(keep.map((i) => ys[i]!)),
    i64(d),
    i64(xs[axis]!),
    i64(ys[axis]!),
    i64(p.k),
  ]);
};

const ROUND: Record<ResizeRoundMode, string> = {
  half_up: 'floor(v + 0.5)',
  half_down: 'ceil(v - 0.5)',
  floor: 'floor(v)',
  ceil: 'ceil(v)',
};

/**
 * Resize: each output element maps every resized dim back to the input (in double, as the
 * reference does) and copies the nearest element or blends the 2^r neighbours of the r
 * resized dims (clamped to the input, interpolated in double, stored once).
 */
function resizeKernel(mode: 'nearest' | 'linear', transform: string, rounding: ResizeRoundMode, dtype: TrtDType) {
  const c = DTYPES[dtype];
  const coordinate: Record<string, string> = {
    asymmetric: '((double)o * in) / out',
    half_pixel: '(((double)o + 0.5) * in) / out - 0.5',
    pytorch_half_pixel: 'out > 1 ? (((double)o + 0.5) * in) / out - 0.5 : 0.0',
    align_corners: 'out == 1 ? 0.0 : ((double)o * (in - 1)) / (out - 1)',
  };
  const nearest = `
      i64 p = (i64)${ROUND[rounding]};
      p = p < 0 ? 0 : p > in - 1 ? in - 1 : p;
      off += p * inStrides.v[d];`;
  const linear = `
      double cl = v < 0.0 ? 0.0 : v > (double)(in - 1) ? (double)(in - 1) : v;
      i64 i0 = (i64)floor(cl);
      i64 i1 = i0 + 1 < in ? i0 + 1 : in - 1;
      lo[r] = i0 * inStrides.v[d];
      hi[r] = i1 * inStrides.v[d];
      w1[r] = cl - (double)i0;
      ++r;`;
  const finish =
    mode === 'nearest'
      ? 'y[i] = x[off];'
      : `double acc = 0.0;
    for (int corner = 0; corner < (1 << r); ++corner) {
      double w = 1.0;
      i64 at = off;
      for (int q = 0; q < r; ++q) {
        bool up = (corner >> q) & 1;
        w *= up ? w1[q] : 1.0 - w1[q];
        at += up ? hi[q] : lo[q];
      }
      acc += w * (double)(${c.load('x[at]')});
    }
    y[i] = ${storeDouble(dtype, 'acc')};`;
  return kernelSource(`resize.${mode}.${transform}.${rounding}.${mode === 'nearest' ? c.storage : dtype}`, (entry) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, i64 n, i32 rank, Dims8 outDims, Dims8 inDims, Dims8 inStrides) {
  GRID_STRIDE(i, n) {
    i64 c[8];
    unflatten(i, rank, outDims, c);
    i64 off = 0;
    int r = 0;
    i64 lo[8], hi[8];
    double w1[8];
    for (int d = 0; d < rank; ++d) {
      i64 in = inDims.v[d], out = outDims.v[d], o = c[d];
      if (in == out) { off += o * inStrides.v[d]; continue; }
      double v = ${coordinate[transform]};
      ${mode === 'nearest' ? nearest : linear}
    }
    ${finish}
  }
}`);
}

export const resize: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'resize');
  const x = input(ctx, 0);
  const out = output(ctx);
  if (p.mode === 'cubic') unsupported(ctx, 'cubic resize is not implemented');
  const rank = x.shape.length;
  checkRank(ctx, rank);
  if (out.shape.length !== rank) unsupported(ctx, 'the output dims must have the input rank');
  if (out.shape.some((d, i) => d > 0 && d !== x.shape[i] && x.shape[i] === 0)) unsupported(ctx, `cannot resize an empty dim of [${x.shape.join(', ')}]`);
  if (p.mode === 'linear' && x.dtype === 'bool') unsupported(ctx, 'linear resize does not take bool');
  const transform = p.coordinateTransformation === 'half_pixel' && p.selector === 'upper' ? 'pytorch_half_pixel' : p.coordinateTransformation;
  const n = volume(out.shape);
  return launch(resizeKernel(p.mode, transform, p.nearestRounding, x.dtype), n, [
    ptr(out.at),
    ptr(x.at),
    i64(n),
    i32(rank),
    dims8(out.shape),
    dims8(x.shape),
    dims8(denseStrides(x.shape)),
  ]);
};
