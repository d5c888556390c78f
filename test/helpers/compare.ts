/**
 * Tensor assertions for kernel tests: approximate (float), exact (raw storage) and exact
 * values given as numbers.
 */
import type { DType } from '../../lib/ir/dtype';
import { readNumbers } from '../../lib/kernels/access';
import type { Tensor } from '../../lib/ir/tensor';

/** Relative and absolute tolerance: |actual - expected| <= atol + rtol * |expected|. */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

/** The float32 test tolerance (rtol 1e-4, atol 1e-5). */
export const FP32: Tolerance = Object.freeze({ rtol: 1e-4, atol: 1e-5 });

/** Fails unless `actual` has `dtype` and `shape`; `where` prefixes the failure message. */
function expectLayout(actual: Tensor, dtype: DType, shape: readonly number[], where: string): void {
  if (actual.dtype !== dtype) throw new Error(`${where}dtype ${actual.dtype}, expected ${dtype}`);
  if (actual.shape.length !== shape.length || actual.shape.some((d, i) => d !== shape[i])) {
    throw new Error(`${where}shape [${actual.shape.join(', ')}], expected [${shape.join(', ')}]`);
  }
}

const prefix = (label: string): string => (label ? `${label}: ` : '');

/**
 * Fails unless dtype and shape match and every element is within `tol` (NaN matches NaN,
 * an infinity matches only the same infinity); `label` prefixes the failure message.
 */
export function expectClose(actual: Tensor, expected: Tensor, tol: Tolerance = FP32, label = ''): void {
  const where = prefix(label);
  expectLayout(actual, expected.dtype, expected.shape, where);
  const a = readNumbers(actual);
  const e = readNumbers(expected);
  for (let i = 0; i < e.length; i++) {
    const x = a[i]!;
    const y = e[i]!;
    if (x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    // An infinite (or NaN) expectation was met above or not at all: |x - ∞| <= rtol·∞ would pass any x.
    if (!Number.isFinite(y) || !(Math.abs(x - y) <= tol.atol + tol.rtol * Math.abs(y))) {
      throw new Error(`${where}slot ${i} of ${actual.toString()}: got ${x}, expected ${y} (rtol ${tol.rtol}, atol ${tol.atol})`);
    }
  }
}

/** Fails unless dtype, shape and the raw storage (bits, bigints, pairs) are identical. */
export function expectExact(actual: Tensor, expected: Tensor, label = ''): void {
  const where = prefix(label);
  expectLayout(actual, expected.dtype, expected.shape, where);
  for (let i = 0; i < expected.data.length; i++) {
    const x = actual.data[i]!;
    const y = expected.data[i]!;
    if (x !== y && !(Number.isNaN(x) && Number.isNaN(y))) {
      throw new Error(`${where}slot ${i} of ${actual.toString()}: got ${String(x)}, expected ${String(y)}`);
    }
  }
}

/**
 * Fails unless `actual` has `dtype`, `shape` and exactly `values`, read as numbers (float16
 * decoded, int64 as numbers, complex as interleaved pairs); NaN matches NaN, -0 does not match 0.
 */
export function expectTensor(actual: Tensor, dtype: DType, shape: readonly number[], values: readonly number[], label = ''): void {
  const where = prefix(label);
  expectLayout(actual, dtype, shape, where);
  const a = readNumbers(actual);
  if (a.length !== values.length) throw new Error(`${where}${actual.toString()} holds ${a.length} numbers, expected ${values.length}`);
  for (let i = 0; i < values.length; i++) {
    if (!Object.is(a[i], values[i])) throw new Error(`${where}slot ${i} of ${actual.toString()}: got ${a[i]}, expected ${values[i]}`);
  }
}
