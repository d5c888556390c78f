/**
 * The 8-, 4- and 2-bit element types of ONNX (and of TensorRT's FP8/FP4/INT4): their values
 * as float64 and back. Tensors hold them one element per byte: the 8-bit and 4-bit floats as
 * their bit patterns in a Uint8Array, int4/int2 as values in an Int8Array, uint4/uint2 in a
 * Uint8Array. ONNX's packing of the 4-bit and 2-bit types (several elements per byte) is a
 * file format matter (./../frontends/onnx/tensor-proto.ts), not how memory holds them.
 *
 * Conversions follow ONNX's reference (ml_dtypes' `astype` for float8 and float4, ONNX's
 * saturating cast as a clip to the finite range before it, numpy_helper.to_float8e8m0 for
 * float8e8m0): one rounding to nearest even from the exact input value.
 */

/** The 8-bit and 4-bit float element types. */
export type MiniFloatDType = 'float8e4m3fn' | 'float8e4m3fnuz' | 'float8e5m2' | 'float8e5m2fnuz' | 'float4e2m1';

/** The 4-bit and 2-bit integer element types. */
export type SubByteIntDType = 'int4' | 'uint4' | 'int2' | 'uint2';

interface MiniFloatFormat {
  readonly mantissaBits: number;
  readonly exponentBits: number;
  readonly bias: number;
  /** The largest finite value. */
  readonly max: number;
  /** Overflow without saturation: to ±Infinity (e5m2), to NaN (the others with a NaN), or to ±max (float4e2m1: neither). */
  readonly overflow: 'inf' | 'nan' | 'max';
  /** fnuz: no negative zero, and the one NaN is 0x80 (the would-be -0). */
  readonly unsignedZero: boolean;
  /** The code a NaN input gives. */
  readonly nanCode: number;
}

const FORMATS: Record<MiniFloatDType, MiniFloatFormat> = {
  float8e4m3fn: { exponentBits: 4, mantissaBits: 3, bias: 7, max: 448, overflow: 'nan', unsignedZero: false, nanCode: 0x7f },
  float8e4m3fnuz: { exponentBits: 4, mantissaBits: 3, bias: 8, max: 240, overflow: 'nan', unsignedZero: true, nanCode: 0x80 },
  float8e5m2: { exponentBits: 5, mantissaBits: 2, bias: 15, max: 57344, overflow: 'inf', unsignedZero: false, nanCode: 0x7e },
  float8e5m2fnuz: { exponentBits: 5, mantissaBits: 2, bias: 16, max: 57344, overflow: 'nan', unsignedZero: true, nanCode: 0x80 },
  // float4e2m1 has neither Infinity nor NaN: ml_dtypes saturates overflow and writes NaN as -0 (0x8).
  float4e2m1: { exponentBits: 2, mantissaBits: 1, bias: 1, max: 6, overflow: 'max', unsignedZero: false, nanCode: 0x8 },
};

export const isMiniFloat = (d: string): d is MiniFloatDType => Object.prototype.hasOwnProperty.call(FORMATS, d);

/** The largest finite value of an 8- or 4-bit float type (float8e4m3fn: 448). */
export const miniFloatMax = (d: MiniFloatDType): number => FORMATS[d].max;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
// Index of the high word of a float64 in u32 (little-endian hosts: 1).
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** floor(log2(|x|)) of a finite nonzero x, exactly (read from the float64 exponent; subnormals give -1023). */
function exponentOf(x: number): number {
  f64[0] = x;
  return ((u32[HI]! >>> 20) & 0x7ff) - 1023;
}

function roundHalfEven(q: number): number {
  const f = Math.floor(q);
  const d = q - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * `x` as the bits of an 8- or 4-bit float, rounded to nearest even. Out of range (±Infinity
 * included): with `saturate`, ±max; without, what the type has for it (Infinity for
 * float8e5m2, NaN for the others but float4e2m1, which saturates either way). NaN stays NaN.
 */
export function toMiniFloatBits(x: number, dtype: MiniFloatDType, saturate: boolean): number {
  const fmt = FORMATS[dtype];
  const m = fmt.mantissaBits;
  const signBit = 1 << (fmt.exponentBits + m);
  if (Number.isNaN(x)) return fmt.nanCode;
  const negative = x < 0 || Object.is(x, -0);
  const sign = negative && !fmt.unsignedZero ? signBit : 0;
  const a = Math.abs(x);
  const overflow = (): number => {
    if (saturate || fmt.overflow === 'max') return (negative ? signBit : 0) | maxBits(fmt);
    if (fmt.overflow === 'inf') return (negative ? signBit : 0) | (((1 << fmt.exponentBits) - 1) << m);
    return fmt.nanCode;
  };
  if (a === Infinity) return overflow();
  if (a === 0) return sign;
  const minNormalExponent = 1 - fmt.bias;
  const e = Math.max(exponentOf(a), minNormalExponent);
  // Scaling by a power of two is exact: the quotient holds the value in units of the last place.
  const quantum = 2 ** (e - m);
  const r = roundHalfEven(a / quantum) * quantum;
  if (r === 0) return sign; // fnuz: a negative value rounding to zero is +0 (0x80 is NaN)
  if (r > fmt.max) return overflow();
  const re = exponentOf(r);
  if (re < minNormalExponent) return (negative ? signBit : 0) | (r / 2 ** (minNormalExponent - m));
  const mantissa = r / 2 ** (re - m) - (1 << m);
  return (negative ? signBit : 0) | ((re + fmt.bias) << m) | mantissa;
}

function maxBits(fmt: MiniFloatFormat): number {
  const m = fmt.mantissaBits;
  const e = Math.floor(Math.log2(fmt.max));
  return ((e + fmt.bias) << m) | (fmt.max / 2 ** (e - m) - (1 << m));
}

/** The value of an 8- or 4-bit float's bits (NaN codes give NaN; e5m2's 0x7c/0xfc give ±Infinity). */
export function fromMiniFloatBits(bits: number, dtype: MiniFloatDType): number {
  const fmt = FORMATS[dtype];
  const m = fmt.mantissaBits;
  const signBit = 1 << (fmt.exponentBits + m);
  const b = bits & (signBit * 2 - 1);
  if (fmt.unsignedZero && b === signBit) return NaN;
  const negative = (b & signBit) !== 0;
  const expField = (b >>> m) & ((1 << fmt.exponentBits) - 1);
  const mantissa = b & ((1 << m) - 1);
  if (dtype === 'float8e4m3fn' && (b & 0x7f) === 0x7f) return NaN;
  if (dtype === 'float8e5m2' && expField === 0x1f) return mantissa === 0 ? (negative ? -Infinity : Infinity) : NaN;
  const v = expField === 0 ? mantissa * 2 ** (1 - fmt.bias - m) : (1 + mantissa / (1 << m)) * 2 ** (expField - fmt.bias);
  return negative ? -v : v;
}

/** How float8e8m0 rounds a value that is not a power of two (ONNX Cast's `round_mode`). */
export type E8M0RoundMode = 'up' | 'down' | 'nearest';

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/**
 * `x` as float8e8m0 bits (2^(bits-127); 0xff is NaN), as ONNX's numpy_helper.to_float8e8m0:
 * from the float32 value's exponent field, the sign ignored; NaN and ±Infinity give 0xff;
 * `up` takes the next power of two where any mantissa bit is set (float32 subnormals and 0
 * included: 0 gives 2^-127); `nearest` rounds on the guard, round and sticky bits; with
 * `saturate` a rounding past 2^127 stays 2^127.
 */
export function toE8M0Bits(x: number, saturate = true, roundMode: E8M0RoundMode = 'up'): number {
  f32[0] = x;
  const bits = f32Bits[0]!;
  const exponent = (bits >>> 23) & 0xff;
  if (exponent === 0xff) return 0xff;
  let up = false;
  if (roundMode === 'up') up = (bits & 0x7fffff) !== 0;
  else if (roundMode === 'nearest') {
    const g = (bits & 0x400000) !== 0;
    const r = (bits & 0x200000) !== 0;
    const s = (bits & 0x1fffff) !== 0;
    up = g && (r || s || exponent > 0);
  }
  if (up && saturate && exponent === 0xfe) up = false;
  return exponent + (up ? 1 : 0);
}

/** The value of float8e8m0 bits: 2^(bits-127), NaN for 0xff. */
export function fromE8M0Bits(bits: number): number {
  const b = bits & 0xff;
  return b === 0xff ? NaN : 2 ** (b - 127);
}

const SUB_BYTE: Record<SubByteIntDType, { bits: 2 | 4; signed: boolean }> = {
  int4: { bits: 4, signed: true },
  uint4: { bits: 4, signed: false },
  int2: { bits: 2, signed: true },
  uint2: { bits: 2, signed: false },
};

export const isSubByteInt = (d: string): d is SubByteIntDType => Object.prototype.hasOwnProperty.call(SUB_BYTE, d);

/** Bits and signedness of int4/uint4/int2/uint2. */
export const subByteInt = (d: SubByteIntDType): { bits: 2 | 4; signed: boolean } => SUB_BYTE[d];

/**
 * A number as a 4- or 2-bit integer the way ONNX casts to these types (its int4 notes): rounded
 * to the nearest integer, ties to even, then truncated to the low bits, i.e. wrapped modulo
 * 2^bits (int4: 9 gives -7, 2.5 gives 2). NaN and ±Infinity give 0.
 */
export function wrapSubByte(v: number, dtype: SubByteIntDType): number {
  const { bits, signed } = SUB_BYTE[dtype];
  if (!Number.isFinite(v)) return 0;
  const t = v < 0 ? -roundHalfEven(-v) : roundHalfEven(v);
  const span = 2 ** bits;
  // Reduce in float64 first: a large float's low bits are zeros, and % is exact.
  let u = t % span;
  if (u < 0) u += span;
  return signed && u >= span / 2 ? u - span : u;
}
