/**
 * Tensor assertions for kernel tests: approximate (float) and exact (raw storage) equality.
 */
import { readNumbers } from '../../lib/kernels/access';
import type { Tensor } from '../../lib/tensor';

/** Relative and absolute tolerance: |actual - expected| <= atol + rtol * |expected|. */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

/** The float32 test tolerance (rtol 1e-4, atol 1e-5). */
export const FP32: Tolerance = Object.freeze({ rtol: 1e-4, atol: 1e-5 });

/**
 * Fails unless dtype and shape match and every element is within `tol` (NaN matches NaN,
 * equal infinities match); `label` prefixes the failure message.
 */
export function expectClose(actual: Tensor, expected: Tensor, tol: Tolerance = FP32, label = ''): void {
  const where = label ? `${label}: ` : '';
  if (actual.dtype !== expected.dtype) throw new Error(`${where}dtype ${actual.dtype}, expected ${expected.dtype}`);
  if (actual.shape.length !== expected.shape.length || actual.shape.some((d, i) => d !== expected.shape[i])) {
    throw new Error(`${where}shape [${actual.shape.join(', ')}], expected [${expected.shape.join(', ')}]`);
  }
  const a = readNumbers(actual);
  const e = readNumbers(expected);
  for (let i = 0; i < e.length; i++) {
    const x = a[i]!;
    const y = e[i]!;
    if (x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    if (!(Math.abs(x - y) <= tol.atol + tol.rtol * Math.abs(y))) {
      throw new Error(`${where}slot ${i} of ${actual.toString()}: got ${x}, expected ${y} (rtol ${tol.rtol}, atol ${tol.atol})`);
    }
  }
}

/** Fails unless dtype, shape and the raw storage (bits, bigints, pairs) are identical. */
export function expectExact(actual: Tensor, expected: Tensor, label = ''): void {
  const where = label ? `${label}: ` : '';
  if (actual.dtype !== expected.dtype) throw new Error(`${where}dtype ${actual.dtype}, expected ${expected.dtype}`);
  if (actual.shape.length !== expected.shape.length || actual.shape.some((d, i) => d !== expected.shape[i])) {
    throw new Error(`${where}shape [${actual.shape.join(', ')}], expected [${expected.shape.join(', ')}]`);
  }
  for (let i = 0; i < expected.data.length; i++) {
    const x = actual.data[i]!;
    const y = expected.data[i]!;
    if (x !== y && !(Number.isNaN(x) && Number.isNaN(y))) {
      throw new Error(`${where}slot ${i} of ${actual.toString()}: got ${String(x)}, expected ${String(y)}`);
    }
  }
}
