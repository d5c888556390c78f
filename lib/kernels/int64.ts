/**
 * Exact int64 and uint64 for the CPU kernels. float64 holds integers exactly only up to 2^53,
 * so their values are read and computed as bigints. Results are stored into a BigInt64Array
 * or BigUint64Array, whose stores reduce modulo 2^64: the arithmetic wraps in two's
 * complement, as PyTorch's (and C's unsigned arithmetic) does. Float kernels never come here.
 */
import type { DType } from '../ir/dtype';
import { Tensor } from '../ir/tensor';
import { fromNumbers, readNumbers } from './access';

/** The element types held as bigints. */
export type BigIntDType = 'int64' | 'uint64';

/** The storage of a BigIntDType. */
export type BigIntArray = BigInt64Array | BigUint64Array;

/**
 * The elements of a real tensor as `dtype` (int64 or uint64), converted as a cast: floats
 * truncate toward zero; int64 ↔ uint64 reinterpret the 64 bits (wrap), exactly. Returns the
 * tensor's own array when it already is `dtype`: treat it as read-only.
 */
export function bigintValues(t: Tensor, dtype: BigIntDType): BigIntArray {
  if (t.dtype === dtype) return t.data as BigIntArray;
  if (t.dtype === 'int64' || t.dtype === 'uint64') {
    const src = t.data as BigIntArray;
    return dtype === 'int64' ? BigInt64Array.from(src, (v) => BigInt.asIntN(64, v)) : BigUint64Array.from(src, (v) => BigInt.asUintN(64, v));
  }
  return fromNumbers(dtype, t.shape, readNumbers(t)).data as BigIntArray;
}

/**
 * The elements of a real tensor as int64, converted as `.to(torch.int64)` (floats truncate
 * toward zero, uint64 wraps). Returns the tensor's own array when it is int64: treat it as read-only.
 */
export function int64Values(t: Tensor): BigInt64Array {
  return bigintValues(t, 'int64') as BigInt64Array;
}

/** A tensor of `dtype` (int64 or uint64) over bigint values: their stores wrap modulo 2^64. */
export function bigintTensor(dtype: BigIntDType, shape: readonly number[], values: BigIntArray): Tensor {
  if (dtype === 'int64' ? values instanceof BigInt64Array : values instanceof BigUint64Array) return new Tensor(dtype, shape, values);
  return new Tensor(dtype, shape, dtype === 'int64' ? BigInt64Array.from(values, (v) => BigInt.asIntN(64, v)) : BigUint64Array.from(values, (v) => BigInt.asUintN(64, v)));
}

/** One number as int64, converted as `.to(torch.int64)`. */
export function int64Of(value: number): bigint {
  return (fromNumbers('int64', [], [value]).data as BigInt64Array)[0]!;
}

/** One number as `dtype` (int64 or uint64), converted as a cast. */
export function bigintOf(value: number, dtype: BigIntDType): bigint {
  return (fromNumbers(dtype, [], [value]).data as BigIntArray)[0]!;
}

const TWO_53 = 2n ** 53n;

/**
 * An int64 as a float64 that rounds once more correctly: |v| ≤ 2^53 exactly, else v rounded
 * to 53 significant bits "to odd" (truncated, with the last bit set when anything was
 * dropped). Rounding that to float32 (or narrower) gives what rounding v directly would,
 * where Number(v) followed by Math.fround can round twice the wrong way.
 */
function roundToOdd(v: bigint): number {
  const m = v < 0n ? -v : v;
  if (m <= TWO_53) return Number(v);
  const shift = BigInt(m.toString(2).length - 53);
  let kept = m >> shift;
  if (kept << shift !== m) kept |= 1n;
  const r = Number(kept) * 2 ** Number(shift);
  return v < 0n ? -r : r;
}

/**
 * The values of an int64 or uint64 tensor after conversion to the float type `dtype`, as
 * float64 numbers ready for fromNumbers: exactly rounded for float64, and prepared so that
 * the narrower types round once (see roundToOdd).
 */
export function int64AsFloat(t: Tensor, dtype: DType): Float64Array {
  const src = t.data as BigIntArray;
  const out = new Float64Array(src.length);
  if (dtype === 'float64') for (let i = 0; i < src.length; i++) out[i] = Number(src[i]!);
  else for (let i = 0; i < src.length; i++) out[i] = roundToOdd(src[i]!);
  return out;
}

const ONE = 1n;

/**
 * Integer power with int64 wrap-around, by squaring (a bigint `**` would build numbers of
 * billions of bits for large exponents). A negative exponent follows PyTorch's integer rule:
 * 1/x truncated, so 0 unless |x| = 1.
 */
export function powInt64(x: bigint, y: bigint): bigint {
  if (y < 0n) {
    if (x === ONE) return ONE;
    if (x === -ONE) return (y & ONE) === 0n ? ONE : -ONE;
    return 0n;
  }
  let result = ONE;
  let base = BigInt.asIntN(64, x);
  let e = y;
  while (e > 0n) {
    if (e & ONE) result = BigInt.asIntN(64, result * base);
    e >>= ONE;
    if (e > 0n) base = BigInt.asIntN(64, base * base);
  }
  return result;
}

/** Python floor division of int64 values (the divisor is non-zero). */
export function floorDivInt64(x: bigint, y: bigint): bigint {
  const q = x / y;
  return x % y !== 0n && x < 0n !== y < 0n ? q - ONE : q;
}

/** Python modulo of int64 values: the sign of the divisor (the divisor is non-zero). */
export function remainderInt64(x: bigint, y: bigint): bigint {
  const r = x % y;
  return r !== 0n && r < 0n !== y < 0n ? r + y : r;
}

/** Integer power in 32-bit two's complement (int32 and narrower), by squaring with Math.imul. */
export function powInt32(x: number, y: number): number {
  if (y < 0) {
    if (x === 1) return 1;
    if (x === -1) return y % 2 === 0 ? 1 : -1;
    return 0;
  }
  let result = 1;
  let base = x | 0;
  for (let e = y; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) result = Math.imul(result, base);
    base = Math.imul(base, base);
  }
  return result;
}
