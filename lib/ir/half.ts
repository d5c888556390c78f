/**
 * float16 and bfloat16 as 16-bit patterns. Tensors store them raw (Uint16Array) and kernels
 * compute in float32, as PyTorch's CPU kernels do for these types.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 value → IEEE binary16 bits, rounding to nearest even; overflow gives ±Infinity. */
export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // Inf or NaN (quiet)
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow
  if (e <= 0) {
    if (e < -10) return sign; // underflow to zero
    mant |= 0x800000; // implicit bit
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let m = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > half || (rest === half && (m & 1) === 1)) m += 1;
    return sign | m;
  }
  let m = mant >>> 13;
  const rest = mant & 0x1fff;
  let out = sign | (e << 10) | m;
  if (rest > 0x1000 || (rest === 0x1000 && (m & 1) === 1)) out += 1; // may carry into the exponent: still correct
  return out;
}

/** IEEE binary16 bits → number. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** float32 value → bfloat16 bits (the top half of float32), rounding to nearest even. */
export function toBFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return ((x >>> 16) | 0x40) & 0xffff; // quiet NaN
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** bfloat16 bits → number. */
export function fromBFloat16Bits(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}
