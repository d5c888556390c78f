/**
 * Kernels of ONNX's CumProd, the determinant and BitCast.
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, integerBits, isInteger, isUnsigned, type DType, type TypedArray } from '../ir/dtype';
import { Tensor } from '../ir/tensor';
import { fromNumbers, normalizeAxis, readNumbers } from './access';
import { allocateData } from './shape';

/** The element count before, along and after `axis`. */
function around(shape: readonly number[], axis: number): { outer: number; n: number; inner: number } {
  let outer = 1;
  let inner = 1;
  for (let i = 0; i < axis; i++) outer *= shape[i]!;
  for (let i = axis + 1; i < shape.length; i++) inner *= shape[i]!;
  return { outer, n: shape[axis] ?? 1, inner };
}

export interface CumprodOptions {
  /** Each element is the product of those before it (the first is 1). */
  exclusive?: boolean;
  /** Products run from the end of the axis. */
  reverse?: boolean;
}

/**
 * Cumulative product along `axis` in the input's type. Floats multiply in float64 and round
 * once per element; integers multiply exactly as bigints and wrap at their width, as C does.
 */
export function cumprod(t: Tensor, axis: number, options: CumprodOptions = {}): Tensor {
  const a = t.rank === 0 ? 0 : normalizeAxis(axis, t.rank, 'cumprod');
  const { outer, n, inner } = around(t.shape, a);
  const order = (step: number): number => (options.reverse ? n - 1 - step : step);
  if (isInteger(t.dtype)) {
    const bits = integerBits(t.dtype)!;
    const wrap = isUnsigned(t.dtype) ? (v: bigint) => BigInt.asUintN(bits, v) : (v: bigint) => BigInt.asIntN(bits, v);
    const out = allocateData(t.dtype, t.size);
    const big = bits === 64;
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        let p = 1n;
        for (let step = 0; step < n; step++) {
          const k = (o * n + order(step)) * inner + i;
          const v = BigInt(t.data[k]!);
          if (options.exclusive) {
            out[k] = big ? p : Number(p);
            p = wrap(p * v);
          } else {
            p = wrap(p * v);
            out[k] = big ? p : Number(p);
          }
        }
      }
    }
    return new Tensor(t.dtype, t.shape, out);
  }
  const values = readNumbers(t);
  const out = new Float64Array(values.length);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let p = 1;
      for (let step = 0; step < n; step++) {
        const k = (o * n + order(step)) * inner + i;
        if (options.exclusive) {
          out[k] = p;
          p *= values[k]!;
        } else {
          p *= values[k]!;
          out[k] = p;
        }
      }
    }
  }
  return fromNumbers(t.dtype, t.shape, out);
}

/**
 * Determinants of a batch of square matrices [..., n, n], by LU decomposition with partial
 * pivoting in float64 (a singular matrix gives 0; the 0x0 matrix gives 1).
 */
export function det(t: Tensor): Tensor {
  if (t.rank < 2 || t.shape[t.rank - 1] !== t.shape[t.rank - 2]) {
    throw new InvalidArgumentError(`det: expected square matrices [..., n, n], got [${t.shape.join(', ')}]`);
  }
  const n = t.shape[t.rank - 1]!;
  const batch = t.shape.slice(0, -2);
  const count = batch.reduce((p, d) => p * d, 1);
  const values = readNumbers(t);
  const out = new Float64Array(count);
  const m = new Float64Array(n * n);
  for (let b = 0; b < count; b++) {
    m.set(values.subarray(b * n * n, (b + 1) * n * n));
    let d = 1;
    for (let c = 0; c < n && d !== 0; c++) {
      let pivot = c;
      for (let r = c + 1; r < n; r++) if (Math.abs(m[r * n + c]!) > Math.abs(m[pivot * n + c]!)) pivot = r;
      const p = m[pivot * n + c]!;
      if (p === 0) {
        d = 0;
        break;
      }
      if (pivot !== c) {
        for (let k = 0; k < n; k++) {
          const x = m[c * n + k]!;
          m[c * n + k] = m[pivot * n + k]!;
          m[pivot * n + k] = x;
        }
        d = -d;
      }
      d *= p;
      for (let r = c + 1; r < n; r++) {
        const f = m[r * n + c]! / p;
        if (f === 0) continue;
        for (let k = c + 1; k < n; k++) m[r * n + k] = m[r * n + k]! - f * m[c * n + k]!;
      }
    }
    out[b] = d;
  }
  return fromNumbers(t.dtype, batch, out);
}

/**
 * The bytes of each element read as `to` (same width; the host is little-endian, as ONNX's
 * raw tensor data is). float16 and bfloat16 are stored as their bits, so their bytes are the
 * elements' own.
 */
export function bitcast(t: Tensor, to: DType): Tensor {
  const [from, into] = [dtypeInfo(t.dtype), dtypeInfo(to)];
  if (from.itemBytes !== into.itemBytes || from.lanes !== 1 || into.lanes !== 1 || to === 'bool') {
    throw new InvalidArgumentError(`bitcast: cannot reinterpret ${t.dtype} as ${to}`);
  }
  const out: TypedArray = allocateData(to, t.size);
  const src = t.data;
  new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, t.size * from.itemBytes));
  return new Tensor(to, t.shape, out);
}
