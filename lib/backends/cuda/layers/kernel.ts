/**
 * What every lowering shares: kernel sources behind the prelude, launch geometry (1-D
 * grid-stride loops), kernel arguments, strides and errors.
 */
import { UnsupportedOpError } from '../../../errors';
import type { BufferSlice, KernelArg } from '../../../gpu/plan';
import { stridesOf } from '../../../kernels/access';
import { MAX_RANK, type LayerKind, type LayerParams, type TrtDType } from '../../../network';
import { BYTES, PRELUDE } from './prelude';
import type { BoundTensor, KernelLaunch, KernelSource, LoweredStep, LoweringContext } from './types';

/** Threads per block of every generated kernel. */
export const BLOCK = 256;
/** The most blocks a launch asks for; grid-stride loops cover the rest. */
const MAX_BLOCKS = 1 << 16;

/** A C identifier for a kernel key (`unary.exp.float32` → `k_unary_exp_float32`). */
export const entryOf = (key: string): string => `k_${key.replace(/[^A-Za-z0-9]/g, '_')}`;

/**
 * A kernel source: the prelude (include-guarded, so sources can share one module) and `body`,
 * which defines `extern "C" __global__ void <entry>(...)` and helpers named after the entry.
 */
export function kernelSource(key: string, body: (entry: string) => string): KernelSource {
  const entry = entryOf(key);
  return { key, entry, source: `#ifndef TRN_PRELUDE\n#define TRN_PRELUDE\n${PRELUDE}\n#endif\n${body(entry)}\n` };
}

/** Whether two slices start at the same byte of the same buffer. */
export const sameSlice = (a: BufferSlice, b: BufferSlice): boolean => a.buffer === b.buffer && (a.offset ?? 0) === (b.offset ?? 0);

/** Whether two lists of numbers (dims, strides) are equal. */
export const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** A 1-D launch that covers `count` items with a grid-stride loop; none when there is nothing to do. */
export function launch(kernel: KernelSource, count: number, args: readonly KernelArg[]): KernelLaunch[] {
  if (count <= 0) return [];
  const blocks = Math.max(1, Math.min(Math.ceil(count / BLOCK), MAX_BLOCKS));
  return [{ kind: 'launch', kernel, grid: [blocks], block: [Math.min(BLOCK, Math.max(count, 1))], args }];
}

export const ptr = (slice: BufferSlice, byteOffset = 0): KernelArg => ({
  pointer: byteOffset === 0 ? slice : { buffer: slice.buffer, offset: (slice.offset ?? 0) + byteOffset },
});
export const i64 = (value: number | bigint): KernelArg => ({ scalar: 'i64', value });
export const i32 = (value: number): KernelArg => ({ scalar: 'i32', value });
export const u32 = (value: number): KernelArg => ({ scalar: 'u32', value });
export const u64 = (value: number | bigint): KernelArg => ({ scalar: 'u64', value });
/**
 * The `u32* status, u32 code` arguments of a kernel that reports bad data (LoweringContext.check)
 * where no run-time check is needed: a null status pointer, which the kernel never stores through.
 */
export const UNCHECKED: readonly KernelArg[] = [u64(0), u32(0)];
export const f32 = (value: number): KernelArg => ({ scalar: 'f32', value });
export const f64 = (value: number): KernelArg => ({ scalar: 'f64', value });
/** A `Dims8` argument (unused entries are 1, so a stray division never divides by zero). */
export const dims8 = (values: ReadonlyArray<number | bigint>): KernelArg => ({
  array: 'i64',
  values: [...values, ...new Array<number>(MAX_RANK - values.length).fill(1)],
});
/** An `F64x8` argument. */
export const f64x8 = (values: readonly number[]): KernelArg => ({ array: 'f64', values: [...values, ...new Array<number>(MAX_RANK - values.length).fill(0)] });

/** The slice `elements` elements of `dtype` past `slice`. */
export function advance(slice: BufferSlice, dtype: TrtDType, elements: number): BufferSlice {
  return { buffer: slice.buffer, offset: (slice.offset ?? 0) + elements * BYTES[dtype] };
}

export const volume = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

/** Row-major strides in elements. */
export const denseStrides = (shape: readonly number[]): number[] => stridesOf(shape);

/** Strides that read `shape` (of the same rank) as broadcast to `to`: a 1 against a larger dim reads stride 0. */
export function broadcastStrides(shape: readonly number[], to: readonly number[]): number[] {
  const dense = denseStrides(shape);
  return to.map((d, i) => (shape[i] === d ? dense[i]! : 0));
}

/** The rank limit of Dims8 arguments, checked where a lowering builds one. */
export function checkRank(ctx: LoweringContext, rank: number, what = 'tensor'): void {
  if (rank > MAX_RANK) unsupported(ctx, `a ${what} of rank ${rank} exceeds ${MAX_RANK} dims`);
}

/** The layer cannot run on the cuda backend in this form. */
export function unsupported(ctx: LoweringContext, why: string): never {
  throw new UnsupportedOpError(`the cuda backend cannot run layer "${ctx.layer.name}" (${ctx.layer.params.kind}): ${why}`, {
    details: { layer: ctx.layer.name, kind: ctx.layer.params.kind },
  });
}

/** Input `i`, which the layer needs. */
export function input(ctx: LoweringContext, i: number): BoundTensor {
  const t = ctx.inputs[i];
  if (!t) unsupported(ctx, `input ${i} is missing`);
  return t;
}

export function output(ctx: LoweringContext, i = 0): BoundTensor {
  const t = ctx.outputs[i];
  if (!t) unsupported(ctx, `output ${i} is missing`);
  return t;
}

/** A normalized axis in [0, rank) (negative counts from the end). */
export function axisOf(ctx: LoweringContext, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= Math.max(rank, 1)) unsupported(ctx, `axis ${axis} is out of range for rank ${rank}`);
  return a;
}

/** The layer's parameters, as the kind its lowering was looked up by. */
export const paramsOf = <K extends LayerKind>(ctx: LoweringContext, _kind: K): Extract<LayerParams, { kind: K }> => ctx.layer.params as Extract<LayerParams, { kind: K }>;

/** A device copy of all of `src` into `dst` (none when empty or when they are the same bytes). */
export function copyAll(src: BoundTensor, dst: BoundTensor): LoweredStep[] {
  const bytes = volume(dst.shape) * BYTES[dst.dtype];
  if (bytes === 0 || (src.at.buffer === dst.at.buffer && (src.at.offset ?? 0) === (dst.at.offset ?? 0))) return [];
  return [{ kind: 'copy', dst: dst.at, src: src.at, bytes }];
}
