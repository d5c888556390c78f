/**
 * The shared plumbing of the CPU kernels: reading any dtype as float64 numbers, writing
 * numbers back with the target dtype's rounding, strides and broadcasting.
 *
 * Float kernels compute in float64 and round once on output. For float32 that is at least
 * as accurate as PyTorch's float32 arithmetic; for float16/bfloat16 it matches PyTorch's CPU
 * practice of computing in a wider type. float64 holds integers exactly only up to 2^53, so
 * int64 and uint64 arithmetic has its own exact path (./int64.ts); readNumbers is for float
 * kernels and for integer values known to be small (indices, shapes).
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, type DType, type TypedArray } from '../ir/dtype';
import { fromBFloat16Bits, fromFloat16Bits, toBFloat16Bits, toFloat16Bits } from '../ir/half';
import { fromE8M0Bits, fromMiniFloatBits, isMiniFloat, isSubByteInt, toE8M0Bits, toMiniFloatBits, wrapSubByte } from '../ir/low-precision';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';

/**
 * The elements as float64 (complex: interleaved, twice the length). Returns the tensor's own
 * array when it already is a Float64Array: treat the result as read-only.
 */
export function readNumbers(t: Tensor): Float64Array {
  const d = t.data;
  if (d instanceof Float64Array) return d;
  const out = new Float64Array(d.length);
  if (t.dtype === 'float16') for (let i = 0; i < d.length; i++) out[i] = fromFloat16Bits(d[i] as number);
  else if (t.dtype === 'bfloat16') for (let i = 0; i < d.length; i++) out[i] = fromBFloat16Bits(d[i] as number);
  else if (isMiniFloat(t.dtype)) for (let i = 0; i < d.length; i++) out[i] = fromMiniFloatBits(d[i] as number, t.dtype);
  else if (t.dtype === 'float8e8m0') for (let i = 0; i < d.length; i++) out[i] = fromE8M0Bits(d[i] as number);
  else if (d instanceof BigInt64Array || d instanceof BigUint64Array) for (let i = 0; i < d.length; i++) out[i] = Number(d[i]);
  else for (let i = 0; i < d.length; i++) out[i] = d[i] as number;
  return out;
}

/** A read-only array of element values as numbers: a tensor's own storage where it holds them as such. */
export type NumberView = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/**
 * The elements as numbers without a copy where the storage already holds them as numbers
 * (float32, float64, the integers up to 32 bits, bool and complex64/128 interleaved); a
 * float64 copy otherwise (float16, bfloat16 and the 8- and 4-bit floats' bits, int64, uint64). Read-only. Kernels that only read their
 * inputs take this rather than readNumbers: a float64 copy of a large input is twice its size.
 */
export function readNumberView(t: Tensor): NumberView {
  const d = t.data;
  if (t.dtype === 'float16' || t.dtype === 'bfloat16' || isMiniFloat(t.dtype) || t.dtype === 'float8e8m0') return readNumbers(t);
  if (d instanceof BigInt64Array || d instanceof BigUint64Array) return readNumbers(t);
  return d as NumberView;
}

/** Elements per chunk of the kernels that compute in float64 a chunk at a time (128 KiB of float64). */
export const CHUNK_ELEMENTS = 1 << 14;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * A float as int64, truncated toward zero. Values outside int64 saturate (±infinity included)
 * and NaN gives 0: PyTorch leaves these undefined (x86 gives INT64_MIN, ARM saturates), and
 * saturation is the choice that keeps the sign and order of the input.
 */
export function floatToInt64(v: number): bigint {
  if (Number.isNaN(v)) return 0n;
  if (v >= 2 ** 63) return INT64_MAX;
  if (v < -(2 ** 63)) return INT64_MIN;
  return BigInt(Math.trunc(v));
}

const TWO_64 = 2n ** 64n;

/**
 * A float as uint64, truncated toward zero. Negative values wrap modulo 2^64 from their int64
 * value, as the narrower unsigned types wrap (−1 gives 2^64−1, as NumPy's astype on x86);
 * values of 2^64 and above saturate, below −2^63 give 0 (C leaves both undefined), NaN 0.
 */
export function floatToUint64(v: number): bigint {
  if (Number.isNaN(v) || v < -(2 ** 63)) return 0n;
  if (v >= 2 ** 64) return TWO_64 - 1n;
  return BigInt.asUintN(64, BigInt(Math.trunc(v)));
}

/**
 * Builds a tensor of `dtype` from float64 numbers with the conversion PyTorch's `.to(dtype)`
 * applies: floats round to nearest even; integers truncate toward zero; the integer types up
 * to 32 bits wrap to the type's width, int64 saturates (see floatToInt64) and uint64 wraps
 * negatives and saturates past 2^64 (floatToUint64); bool is `value != 0`; NaN to an integer
 * type gives 0 (PyTorch leaves it undefined); complex takes interleaved pairs. The 8- and 4-bit
 * types convert as ONNX's Cast without saturation (toMiniFloatBits; float8e8m0 by its default,
 * toE8M0Bits) and int4/uint4/int2/uint2 wrap (wrapSubByte).
 */
export function fromNumbers(dtype: DType, shape: Shape, values: ArrayLike<number>): Tensor {
  const info = dtypeInfo(dtype);
  const n = shapeSize(shape) * info.lanes;
  if (values.length !== n) {
    throw new InvalidArgumentError(`internal: ${n} values expected for ${dtype}[${shape.join(', ')}], got ${values.length}`);
  }
  const data = new info.storage(n);
  writeNumbers(dtype, data, 0, values, n);
  return new Tensor(dtype, shape, data);
}

/**
 * Writes `count` float64 numbers into storage slots `at`… of a `dtype` tensor's data, with
 * fromNumbers's conversion (a chunked kernel writes its output a chunk at a time with it).
 */
export function writeNumbers(dtype: DType, data: TypedArray, at: number, values: ArrayLike<number>, count: number): void {
  switch (dtype) {
    case 'float16':
      for (let i = 0; i < count; i++) data[at + i] = toFloat16Bits(values[i]!);
      break;
    case 'bfloat16':
      for (let i = 0; i < count; i++) data[at + i] = toBFloat16Bits(values[i]!);
      break;
    case 'bool':
      for (let i = 0; i < count; i++) data[at + i] = values[i] !== 0 && !Number.isNaN(values[i]) ? 1 : 0;
      break;
    case 'int64':
      for (let i = 0; i < count; i++) (data as BigInt64Array)[at + i] = floatToInt64(values[i]!);
      break;
    case 'uint64':
      for (let i = 0; i < count; i++) (data as BigUint64Array)[at + i] = floatToUint64(values[i]!);
      break;
    case 'int8':
    case 'uint8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
      // Typed-array stores already wrap modulo 2^bits after truncation toward zero.
      for (let i = 0; i < count; i++) {
        const v = values[i]!;
        data[at + i] = Number.isFinite(v) ? Math.trunc(v) : 0;
      }
      break;
    case 'float8e8m0':
      for (let i = 0; i < count; i++) data[at + i] = toE8M0Bits(values[i]!);
      break;
    default:
      if (isMiniFloat(dtype)) for (let i = 0; i < count; i++) data[at + i] = toMiniFloatBits(values[i]!, dtype, false);
      else if (isSubByteInt(dtype)) for (let i = 0; i < count; i++) data[at + i] = wrapSubByte(values[i]!, dtype);
      else for (let i = 0; i < count; i++) data[at + i] = values[i]!;
  }
}

/**
 * The element of a tensor of `shape` that broadcasting into `outShape` reads, for output
 * elements in row-major order, a chunk at a time (broadcastIndex() without an index array the
 * size of the output).
 */
export class BroadcastCursor {
  private readonly strides: number[];
  private readonly counter: number[];
  private offset = 0;

  constructor(
    shape: Shape,
    private readonly outShape: Shape,
  ) {
    const rank = outShape.length;
    const inStrides = stridesOf(shape);
    this.strides = new Array<number>(rank).fill(0);
    for (let i = 0; i < shape.length; i++) this.strides[rank - shape.length + i] = shape[i] === 1 ? 0 : inStrides[i]!;
    this.counter = new Array<number>(rank).fill(0);
  }

  /** Fills `into[0..count)` with the source indices of the next `count` output elements. */
  next(count: number, into: Int32Array): void {
    const last = this.outShape.length - 1;
    if (last < 0) {
      into.fill(0, 0, count); // a 0-d output has the one element 0
      return;
    }
    // Along the last axis inline; stepIndex only where a row ends (as boxOffsets does).
    const counter = this.counter;
    const rowEnd = this.outShape[last]! - 1;
    const step = this.strides[last]!;
    for (let j = 0; j < count; j++) {
      into[j] = this.offset;
      if (counter[last]! < rowEnd) {
        counter[last]!++;
        this.offset += step;
      } else {
        this.offset += stepIndex(counter, this.outShape, this.strides);
      }
    }
  }
}

/** Row-major strides of a shape, in elements. */
export function stridesOf(shape: Shape): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i]!;
  }
  return strides;
}

/**
 * Steps the row-major multi-index `counter` over the box `dims` by one (axes at or after
 * `end` held fixed; a full turn wraps it to zeros) and returns the change of
 * Σ counter[i]·strides[i].
 */
export function stepIndex(counter: number[], dims: Shape, strides: readonly number[], end = dims.length): number {
  let delta = 0;
  for (let ax = end - 1; ax >= 0; ax--) {
    counter[ax]!++;
    delta += strides[ax]!;
    if (counter[ax]! < dims[ax]!) break;
    delta -= strides[ax]! * dims[ax]!;
    counter[ax] = 0;
  }
  return delta;
}

/** All offsets Σ index[i]·strides[i] over the box `dims`, in row-major order. */
export function boxOffsets(dims: Shape, strides: readonly number[]): Int32Array {
  const out = new Int32Array(shapeSize(dims));
  const rank = dims.length;
  if (rank === 0 || out.length === 0) return out; // a 0-d box has the one offset 0
  // Row by row: the last axis is swept inline, stepIndex advances the others.
  const inner = dims[rank - 1]!;
  const innerStride = strides[rank - 1]!;
  const counter = new Array<number>(rank).fill(0);
  for (let k = 0, base = 0; k < out.length; base += stepIndex(counter, dims, strides, rank - 1)) {
    for (let j = 0, offset = base; j < inner; j++, offset += innerStride) out[k++] = offset;
  }
  return out;
}

/** NumPy broadcasting of shapes (right-aligned); throws naming both shapes when they clash. */
export function broadcastShapes(...shapes: Shape[]): number[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const o = rank - s.length + i;
      const d = s[i]!;
      if (d === out[o]) continue;
      if (out[o] === 1) out[o] = d;
      else if (d !== 1) {
        throw new InvalidArgumentError(`shapes ${shapes.map((x) => `[${x.join(', ')}]`).join(' and ')} cannot be broadcast together`);
      }
    }
  }
  return out;
}

/**
 * For each element of `outShape` (row-major), the index of the element of a tensor of
 * `shape` that broadcasting reads. Broadcast axes get stride 0.
 */
export function broadcastIndex(shape: Shape, outShape: Shape): Int32Array {
  const rank = outShape.length;
  const inStrides = stridesOf(shape);
  const strides = new Array<number>(rank).fill(0);
  for (let i = 0; i < shape.length; i++) {
    const o = rank - shape.length + i;
    strides[o] = shape[i] === 1 ? 0 : inStrides[i]!;
  }
  return boxOffsets(outShape, strides);
}

/**
 * The broadcast shape of two operands of `op` and, per output element, the element of each
 * that it reads; shapes that clash throw InvalidArgumentError naming `op`.
 */
export function broadcastPair(op: string, a: Shape, b: Shape): { shape: number[]; ia: Int32Array; ib: Int32Array } {
  let shape: number[];
  try {
    shape = broadcastShapes(a, b);
  } catch (e) {
    throw new InvalidArgumentError(`${op}: ${(e as Error).message}`);
  }
  return { shape, ia: broadcastIndex(a, shape), ib: broadcastIndex(b, shape) };
}

/** Normalizes a possibly negative axis against `rank`; throws naming the op otherwise. */
export function normalizeAxis(axis: number, rank: number, op: string): number {
  // A 0-d tensor accepts axis 0 and -1, as in PyTorch.
  const a = axis < 0 ? axis + Math.max(rank, 1) : axis;
  if (!Number.isInteger(a) || a < 0 || a >= Math.max(rank, 1)) {
    throw new InvalidArgumentError(`${op}: axis ${axis} is out of range for a tensor of rank ${rank}`);
  }
  return a;
}
