/**
 * Data-movement and generator layers: IConstantLayer, IIdentityLayer, IShuffleLayer,
 * ISliceLayer, IConcatenationLayer, IShapeLayer and IFillLayer. Elements move as raw bits
 * (exact in every dtype) through device copies or the strided map.
 */
import type { TrtDType } from '../../../network';
import { advance, checkRank, copyAll, denseStrides, dims8, f64, f64x8, i32, i64, input, kernelSource, launch, output, paramsOf, ptr, unsupported, volume } from './kernel';
import { copyLaunch } from './map';
import { BYTES, DTYPES, storeDouble } from './prelude';
import type { BoundTensor, LayerLowering, LoweredStep, LoweringContext } from './types';

export const constant: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'constant');
  const out = output(ctx);
  if (p.weights.dtype !== out.dtype) unsupported(ctx, `the weights are ${p.weights.dtype}, the output ${out.dtype}`);
  return copyAll({ dtype: out.dtype, shape: out.shape, at: ctx.weight(p.weights) }, out);
};

export const identity: LayerLowering = (ctx) => {
  const x = input(ctx, 0);
  const out = output(ctx);
  if (x.dtype !== out.dtype) unsupported(ctx, `identity from ${x.dtype} to ${out.dtype} is a cast`);
  return copyAll(x, out);
};

const isIdentityPerm = (perm: readonly number[] | undefined): boolean => !perm || perm.every((p, i) => p === i);

/** Writes permute(x viewed as `shape`, perm) densely to `dst`. */
function transposeInto(ctx: LoweringContext, dtype: TrtDType, src: BoundTensor['at'], shape: readonly number[], perm: readonly number[], dst: BoundTensor['at']): LoweredStep[] {
  checkRank(ctx, shape.length);
  const inStrides = denseStrides(shape);
  const dims = perm.map((p) => shape[p]!);
  return copyLaunch(dtype, dims, { at: dst, strides: denseStrides(dims) }, { at: src, strides: perm.map((p) => inStrides[p]!) });
}

export const shuffle: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'shuffle');
  const x = input(ctx, 0);
  const out = output(ctx);
  if (volume(x.shape) !== volume(out.shape)) unsupported(ctx, `input [${x.shape.join(', ')}] and output [${out.shape.join(', ')}] differ in size`);
  const first = isIdentityPerm(p.firstTranspose) ? null : p.firstTranspose!;
  const second = isIdentityPerm(p.secondTranspose) ? null : p.secondTranspose!;
  if (!first && !second) return copyAll(x, out);
  // The reshaped (pre-second-transpose) dims: out[i] = reshaped[second[i]].
  const reshaped = new Array<number>(out.shape.length);
  (second ?? out.shape.map((_, i) => i)).forEach((s, i) => (reshaped[s] = out.shape[i]!));
  if (first && !second) return transposeInto(ctx, x.dtype, x.at, x.shape, first, out.at);
  if (!first && second) return transposeInto(ctx, x.dtype, x.at, reshaped, second, out.at);
  const tmp = ctx.scratch(Math.max(1, volume(x.shape) * BYTES[x.dtype]));
  return [...transposeInto(ctx, x.dtype, x.at, x.shape, first!, tmp), ...transposeInto(ctx, x.dtype, tmp, reshaped, second!, out.at)];
};

const SLICE_MODE = {
  strict_bounds: 'oob = true;',
  fill: 'oob = true;',
  wrap: 'p = ((p % D) + D) % D;',
  clamp: 'p = p < 0 ? 0 : D - 1;',
  reflect: 'if (D == 1) p = 0; else { i64 per = 2 * (D - 1), m = ((p % per) + per) % per; p = m < D ? m : per - m; }',
} as const;

/**
 * Slice kernel per mode and storage type: each output element reads start + j·stride per
 * axis; a coordinate outside the input is mapped by the mode, or reads the fill value (fill,
 * and strict_bounds, whose out-of-bounds reads TensorRT leaves undefined: never memory outside).
 */
function sliceKernel(dtype: TrtDType, mode: keyof typeof SLICE_MODE) {
  const t = DTYPES[dtype].storage;
  return kernelSource(`slice.${mode}.${t}`, (entry) => `
extern "C" __global__ void ${entry}(${t}* y, const ${t}* x, const ${t}* fill, i32 hasFill, i64 n, i32 rank, Dims8 dims, Dims8 start, Dims8 stride, Dims8 inDims, Dims8 inStrides) {
  GRID_STRIDE(i, n) {
    i64 c[8];
    unflatten(i, rank, dims, c);
    i64 off = 0;
    bool oob = false;
    // Unrolled over the 8 slots (see the prelude's index helpers: no local copies).
#pragma unroll
    for (int d = 0; d < 8; ++d) {
      if (d < rank) {
        i64 D = inDims.v[d], p = start.v[d] + c[d] * stride.v[d];
        if (p < 0 || p >= D) {
          if (D == 0) oob = true;
          else { ${SLICE_MODE[mode]} }
        }
        off += p * inStrides.v[d];
      }
    }
    y[i] = oob ? (hasFill ? fill[0] : (${t})0) : x[off];
  }
}`);
}

export const slice: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'slice');
  const x = input(ctx, 0);
  const out = output(ctx);
  const rank = x.shape.length;
  checkRank(ctx, rank);
  const vector = (i: number, fallback: readonly number[], what: string): number[] => {
    if (ctx.inputs[i] && !ctx.values[i]) unsupported(ctx, `the ${what} input's values are not known on the host`);
    const v = ctx.inputs[i] ? [...ctx.values[i]!] : [...fallback];
    if (v.length !== rank) unsupported(ctx, `${what} has ${v.length} entries for an input of rank ${rank}`);
    return v;
  };
  const start = vector(1, p.start, 'start');
  vector(2, p.size, 'size');
  const stride = vector(3, p.stride, 'stride');
  const fill = ctx.inputs[4] ?? null;
  const n = volume(out.shape);
  // Every coordinate inside the input (every mode reads the same then): a strided copy, whose
  // readers can read through it (../plan/lower-instance.ts) instead of waiting for the copy.
  const inside = out.shape.every((size, d) => size === 0 || (start[d]! >= 0 && start[d]! < x.shape[d]! && start[d]! + (size - 1) * stride[d]! >= 0 && start[d]! + (size - 1) * stride[d]! < x.shape[d]!));
  if (inside && n > 0) {
    const xs = denseStrides(x.shape);
    const base = start.reduce((a, s, d) => a + s * xs[d]!, 0);
    return copyLaunch(x.dtype, out.shape, { at: out.at, strides: denseStrides(out.shape) }, { at: advance(x.at, x.dtype, base), strides: stride.map((s, d) => s * xs[d]!) });
  }
  return launch(sliceKernel(x.dtype, p.mode), n, [
    ptr(out.at),
    ptr(x.at),
    ptr(fill ? fill.at : x.at),
    i32(fill ? 1 : 0),
    i64(n),
    i32(rank),
    dims8(out.shape),
    dims8(start),
    dims8(stride),
    dims8(x.shape),
    dims8(denseStrides(x.shape)),
  ]);
};

export const concat: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'concat');
  const out = output(ctx);
  const rank = out.shape.length;
  checkRank(ctx, rank);
  const axis = p.axis < 0 ? p.axis + rank : p.axis;
  const outStrides = denseStrides(out.shape);
  const steps: LoweredStep[] = [];
  let at = 0;
  ctx.inputs.forEach((_, k) => {
    const x = input(ctx, k);
    // Remembered as map launches: a pointwise producer of a block computes in its copy's place.
    steps.push(...copyLaunch(out.dtype, x.shape, { at: advance(out.at, out.dtype, at * (outStrides[axis] ?? 1)), strides: outStrides }, { at: x.at, strides: denseStrides(x.shape) }));
    at += x.shape[axis] ?? 1;
  });
  return steps;
};

/** Writes up to 8 int64 values given by value (host-known shape values) to the device. */
const WRITE_I64 = kernelSource('write.int64', (entry) => `
extern "C" __global__ void ${entry}(i64* y, i64 n, Dims8 values) {
  GRID_STRIDE(i, n) y[i] = values.v[i];
}`);

export const shape: LayerLowering = (ctx) => {
  const x = input(ctx, 0);
  const out = output(ctx);
  checkRank(ctx, x.shape.length);
  return launch(WRITE_I64, x.shape.length, [ptr(out.at), i64(x.shape.length), dims8(x.shape)]);
};

type FillSource = { kind: 'value' } | { kind: 'device'; dtype: TrtDType };

/**
 * Linspace: out = alpha + Σ beta[d]·i_d, evaluated afresh per element (no accumulated
 * rounding). Exact in int64 when the output is int64 and alpha and beta are integers;
 * otherwise in double, rounded once into the output dtype. alpha and beta come by value
 * (parameters or host-known inputs) or are read from device tensors.
 */
function fillKernel(dtype: TrtDType, exact: boolean, alpha: FillSource, beta: FillSource) {
  const acc = exact ? 'i64' : 'double';
  const src = (s: FillSource): string => (s.kind === 'value' ? 'v' : `d${DTYPES[s.dtype].storage}`);
  const read = (s: FillSource, at: string): string => {
    if (s.kind === 'value') return '';
    const c = DTYPES[s.dtype];
    return exact ? `(i64)(${at})` : `(double)(${c.load(at)})`;
  };
  const out = DTYPES[dtype];
  const store = exact ? 'v' : storeDouble(dtype, 'v');
  const alphaT = alpha.kind === 'device' ? DTYPES[alpha.dtype].storage : 'u8';
  const betaT = beta.kind === 'device' ? DTYPES[beta.dtype].storage : 'u8';
  return kernelSource(`fill.${dtype}.${acc}.${src(alpha)}.${src(beta)}`, (entry) => `
extern "C" __global__ void ${entry}(${out.storage}* y, i64 n, i32 rank, Dims8 dims, ${acc} alphaValue, ${exact ? 'Dims8' : 'F64x8'} betaValues, const ${alphaT}* alphaPtr, const ${betaT}* betaPtr) {
  GRID_STRIDE(i, n) {
    i64 c[8];
    unflatten(i, rank, dims, c);
    ${acc} v = ${alpha.kind === 'value' ? 'alphaValue' : read(alpha, 'alphaPtr[0]')};
#pragma unroll
    for (int d = 0; d < 8; ++d) {
      if (d < rank) {
        ${acc} b = ${beta.kind === 'value' ? 'betaValues.v[d]' : read(beta, 'betaPtr[d]')};
        v = ${exact ? 'i_add(v, i_mul(b, c[d]))' : 'v + b * (double)c[d]'};
      }
    }
    y[i] = ${store};
  }
}`);
}

export const fill: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'fill');
  const out = output(ctx);
  const rank = out.shape.length;
  checkRank(ctx, rank);
  const source = (i: number): { src: FillSource; values?: readonly number[]; at?: BoundTensor['at']; integral: boolean } => {
    const t = ctx.inputs[i];
    if (!t) {
      const values = i === 1 ? [p.alpha] : p.beta;
      return { src: { kind: 'value' }, values, integral: values.every(Number.isInteger) };
    }
    const known = ctx.values[i];
    if (known) return { src: { kind: 'value' }, values: known, integral: known.every(Number.isInteger) };
    return { src: { kind: 'device', dtype: t.dtype }, at: t.at, integral: DTYPES[t.dtype].compute === 'i64' };
  };
  const alpha = source(1);
  const beta = source(2);
  if (beta.values && beta.values.length !== rank) unsupported(ctx, `beta has ${beta.values.length} entries for ${rank} output dims`);
  const exact = out.dtype === 'int64' && alpha.integral && beta.integral;
  const n = volume(out.shape);
  const betaValues = beta.values ?? [];
  return launch(fillKernel(out.dtype, exact, alpha.src, beta.src), n, [
    ptr(out.at),
    i64(n),
    i32(rank),
    dims8(out.shape),
    exact ? i64(BigInt(alpha.values?.[0] ?? 0)) : f64(alpha.values?.[0] ?? 0),
    exact ? dims8(betaValues.map((v) => BigInt(v))) : f64x8(betaValues),
    ptr(alpha.at ?? out.at),
    ptr(beta.at ?? out.at),
  ]);
};
