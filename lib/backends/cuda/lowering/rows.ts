/**
 * Row kernels: one thread per "outer" index (the kept axes) walks the "inner" axes (reduced,
 * normalized, scanned or ranked) in order. IReduceLayer, ISoftMaxLayer, INormalizationLayer,
 * ICumulativeLayer and ITopKLayer are this shape. Simple and deterministic; block-wide
 * reductions for long rows are a performance change that keeps these signatures.
 */
import type { KernelArg } from '../../../gpu/plan';
import { dims8, i32, i64 } from './kernel';

/** A box split into outer and inner axes, and each tensor's strides over both. */
export interface RowSplit {
  outerDims: number[];
  innerDims: number[];
  /** Per tensor: [outer strides, inner strides]. */
  strides: Array<[number[], number[]]>;
}

/** Splits `dims` by `inner` axes; `tensorStrides[t]` are tensor t's strides over `dims`. */
export function splitRows(dims: readonly number[], inner: readonly number[], tensorStrides: ReadonlyArray<readonly number[]>): RowSplit {
  const isInner = (d: number): boolean => inner.includes(d);
  const outerAxes = dims.map((_, d) => d).filter((d) => !isInner(d));
  const innerAxes = [...inner].sort((a, b) => a - b);
  return {
    outerDims: outerAxes.map((d) => dims[d]!),
    innerDims: innerAxes.map((d) => dims[d]!),
    strides: tensorStrides.map((s) => [outerAxes.map((d) => s[d]!), innerAxes.map((d) => s[d]!)]),
  };
}

/** The kernel parameters of a split over `tensors` tensors (named by `names`). */
export const rowParams = (names: readonly string[]): string =>
  ['i64 outer', 'i32 orank', 'Dims8 odims', ...names.map((n) => `Dims8 o_${n}`), 'i64 inner', 'i32 irank', 'Dims8 idims', ...names.map((n) => `Dims8 i_${n}`)].join(', ');

/** The arguments matching {@link rowParams}. */
export function rowArgs(split: RowSplit): KernelArg[] {
  const volume = (s: number[]): number => s.reduce((a, d) => a * d, 1);
  return [
    i64(volume(split.outerDims)),
    i32(split.outerDims.length),
    dims8(split.outerDims),
    ...split.strides.map(([o]) => dims8(o)),
    i64(volume(split.innerDims)),
    i32(split.innerDims.length),
    dims8(split.innerDims),
    ...split.strides.map(([, i]) => dims8(i)),
  ];
}

/** C: base offset of tensor `name` for outer index `o`. */
export const outerAt = (name: string): string => `strided(o, orank, odims, o_${name})`;
/** C: offset of tensor `name` for inner index `j`. */
export const innerAt = (name: string, j = 'j'): string => `strided(${j}, irank, idims, i_${name})`;
