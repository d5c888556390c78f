/**
 * A dense, row-major tensor on the host: a dtype, a shape and a typed array. This is what
 * interpret() and program.run() take and return.
 *
 * Storage per dtype (see {@link DTypeInfo.storage}): float16/bfloat16 as raw 16-bit patterns
 * in a Uint16Array, bool as 0/1 in a Uint8Array, int64 as BigInt64Array and uint64 as
 * BigUint64Array (exact bigints), complex64/complex128 interleaved (real, imaginary) in a Float32Array/Float64Array of twice the element count.
 * The 8- and 4-bit floats as bit patterns in a Uint8Array, int4/int2 and uint4/uint2 one value
 * per byte (./low-precision.ts).
 */
import { inspect } from 'node:util';

import { InvalidArgumentError, ResourceLimitError } from '../errors';
import { dtypeInfo, isDType, type DType, type TypedArray } from './dtype';
import { fromBFloat16Bits, fromFloat16Bits, toBFloat16Bits, toFloat16Bits } from './half';
import { fromE8M0Bits, fromMiniFloatBits, isMiniFloat, toE8M0Bits, toMiniFloatBits } from './low-precision';

export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar, []). */
export function shapeSize(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function checkShape(shape: Shape): void {
  if (!Array.isArray(shape)) throw new InvalidArgumentError(`a tensor shape must be a list of dims, got ${describeValue(shape)}`);
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new InvalidArgumentError(`tensor shape [${shape.join(', ')}] has a dimension that is not a non-negative safe integer`);
    }
  }
  if (!Number.isSafeInteger(shapeSize(shape))) throw new InvalidArgumentError(`tensor shape [${shape.join(', ')}] has more elements than a tensor can hold`);
}

const typedArrayTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype) as object, Symbol.toStringTag)!.get!;

/**
 * The kind of typed array `x` is (`Float32Array`...), or undefined for anything else. Read
 * from the array's internal slot, not instanceof or its own tag: typed arrays from another
 * realm (worker messages, vm contexts such as jest's) count, objects posing as one do not.
 */
export function typedArrayName(x: unknown): string | undefined {
  return ArrayBuffer.isView(x) ? (typedArrayTag.call(x) as string | undefined) : undefined;
}

function checkDType(dtype: DType): void {
  if (!isDType(dtype)) throw new InvalidArgumentError(`unknown dtype ${describeValue(dtype)}`);
}

/** `x` for an error message: short, and never throwing (symbols, objects without toString). */
function describeValue(x: unknown): string {
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'number' || typeof x === 'boolean' || x === null || x === undefined) return String(x);
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x);
  if (typeof x === 'object') return Array.isArray(x) ? 'an array' : `an object (${Object.prototype.toString.call(x).slice(8, -1)})`;
  return typeof x;
}

/** Typed-array storage of `length` slots; a size this process cannot allocate is a typed error, not a RangeError. */
function allocate(dtype: DType, shape: Shape, length: number): TypedArray {
  const info = dtypeInfo(dtype);
  try {
    return new info.storage(length);
  } catch (cause) {
    if (!(cause instanceof RangeError)) throw cause;
    const bytes = length * (info.itemBytes / info.lanes);
    throw new ResourceLimitError(`a ${dtype} tensor of shape [${shape.join(', ')}] needs ${bytes} bytes, which cannot be allocated: ${cause.message}`, {
      cause,
      details: { dtype, shape: [...shape], bytes },
    });
  }
}

/** The inclusive range of an integer dtype held as numbers (int64 and uint64 are bigints: BIGINT_RANGES). */
const INTEGER_RANGES: Partial<Record<DType, readonly [number, number]>> = {
  int8: [-128, 127],
  uint8: [0, 255],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  uint16: [0, 2 ** 16 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int4: [-8, 7],
  uint4: [0, 15],
  int2: [-2, 1],
  uint2: [0, 3],
};
const BIGINT_RANGES: Partial<Record<DType, readonly [bigint, bigint, string]>> = {
  int64: [-(2n ** 63n), 2n ** 63n - 1n, '[-2^63, 2^63-1]'],
  uint64: [0n, 2n ** 64n - 1n, '[0, 2^64-1]'],
};

/**
 * `v` as an int64 or uint64 (numbers truncated toward zero); a bigint is taken exactly.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: not a number or bigint, not finite, or outside the dtype's range.
 */
function toBigIntElement(dtype: DType, [min, max, range]: readonly [bigint, bigint, string], v: unknown, where: string): bigint {
  let b: bigint;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isFinite(v)) b = BigInt(Math.trunc(v));
  else if (typeof v === 'boolean') b = v ? 1n : 0n;
  else throw new InvalidArgumentError(`${where} is ${describeValue(v)}, which is not an ${dtype} value (a finite number or a bigint)`);
  if (b < min || b > max) throw new InvalidArgumentError(`${where} is ${describeValue(v)}, outside the ${dtype} range ${range}`);
  return b;
}

/**
 * `v` as a number for an int8/uint8/int16/uint16/int32/uint32 tensor (truncated toward zero).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: not finite, or outside the dtype's range.
 */
function toSmallInteger(dtype: DType, [min, max]: readonly [number, number], v: unknown, where: string): number {
  const n = typeof v === 'bigint' || typeof v === 'boolean' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new InvalidArgumentError(`${where} is ${describeValue(v)}, which is not a finite ${dtype} value`);
  const t = Math.trunc(n);
  if (t < min || t > max) throw new InvalidArgumentError(`${where} is ${describeValue(v)}, outside the ${dtype} range [${min}, ${max}]`);
  return t;
}

/** `v` as a number (a float or bool tensor's element). */
function toNumber(v: unknown, where: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return Number(v);
  throw new InvalidArgumentError(`${where} is ${describeValue(v)}, which is not a number`);
}

/** `data`, or zeros, after checking that it fits `dtype` and `shape` (see the Tensor constructor). */
function checkedData(dtype: DType, shape: Shape, data: TypedArray | undefined): TypedArray {
  checkDType(dtype);
  checkShape(shape);
  const info = dtypeInfo(dtype);
  const length = shapeSize(shape) * info.lanes;
  if (data === undefined) return allocate(dtype, shape, length);
  if (typedArrayName(data) !== info.storage.name) {
    throw new InvalidArgumentError(
      `a ${dtype} tensor needs its data in a ${info.storage.name}${info.lanes === 2 ? ' (interleaved real, imaginary)' : ''}, got ${typedArrayName(data) ?? describeValue(data)}`,
    );
  }
  if (data.length !== length) {
    throw new InvalidArgumentError(`a ${dtype} tensor of shape [${shape.join(', ')}] needs ${length} ${info.storage.name} elements, got ${data.length}`);
  }
  return data;
}

/** Set while trustedTensor() constructs one: the constructor then skips its checks. */
let trusted = false;

/**
 * @internal A Tensor over `data` without the constructor's checks, for a caller that made
 * them itself (a prepared run's outputs, lib/backends/onnxruntime/run/prepared-run.ts: a model
 * that computes in microseconds pays for every one). Unchecked arguments make a wrong
 * tensor, not an error. `shape` is not copied: the tensor freezes it and keeps it, so it
 * must be an array the caller hands over (onnxruntime's dims of an output it drops).
 */
export function trustedTensor(dtype: DType, shape: Shape, data: TypedArray): Tensor {
  trusted = true;
  try {
    return new Tensor(dtype, shape, data);
  } finally {
    trusted = false;
  }
}

/**
 * @internal Whether `t` still has the dtype, shape and data its constructor checked: its
 * fields are plain properties a caller can reassign, so a check of the fields alone proves
 * nothing. Its buffer may still have been detached or resized since: compare `data.length`
 * with the shape too. Lets program.run() skip checking a tensor again. Set by
 * Tensor's static block (only code in the class reads its private fields), as the function
 * itself rather than a wrapper: one call less on every run's path.
 */
export let isIntactTensor: (t: Tensor) => boolean;

export class Tensor {
  // Declared only: the constructor makes them, in this order. (Declared fields are defined
  // as undefined by an initializer first, then assigned: twice the stores for each of the
  // tensors a run makes, which a model that runs in microseconds feels before V8 optimizes.)
  declare readonly dtype: DType;
  declare readonly shape: Shape;
  declare readonly data: TypedArray;
  // What the constructor checked (private: invisible to equality checks, JSON and cloning).
  readonly #dtype: DType;
  readonly #shape: Shape;
  readonly #data: TypedArray;

  static {
    isIntactTensor = (t) => #data in t && t.#data === t.data && t.#shape === t.shape && t.#dtype === t.dtype;
  }

  /**
   * Wraps `data` (not copied). Its type and length must match the dtype's storage and the
   * shape; a mismatch is an `E_INVALID_ARGUMENT` error. Without `data`, zeros.
   */
  constructor(dtype: DType, shape: Shape, data?: TypedArray) {
    // trustedTensor() hands its shape array over: frozen as it is, not copied.
    const handedOver = trusted && data !== undefined;
    const checked = handedOver ? data! : checkedData(dtype, shape, data);
    this.dtype = this.#dtype = dtype;
    this.shape = this.#shape = Object.freeze(handedOver ? (shape as number[]) : [...shape]);
    this.data = this.#data = checked;
  }

  /** Number of elements (complex pairs count once). */
  get size(): number {
    return shapeSize(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  /**
   * Builds a tensor from plain numbers (or bigints), converting to the dtype's storage:
   * float16/bfloat16 and the 8- and 4-bit floats are rounded to nearest even (overflow as
   * the type has it: see toMiniFloatBits; float8e8m0 as ONNX's Cast by default: up to a power of
   * two, saturating); complex takes interleaved pairs; integer
   * dtypes truncate toward zero. A value an integer dtype cannot hold (NaN, ±Infinity, out
   * of range, such as 2^63 for int64 or -1 for uint16) is an `E_INVALID_ARGUMENT` error
   * naming its index, never a wrapped value. int64 and uint64 take bigints exactly: a
   * number past 2^53 has already lost its low bits.
   */
  static from(dtype: DType, shape: Shape, values: ArrayLike<number | bigint>): Tensor {
    checkDType(dtype);
    checkShape(shape);
    if (values === null || typeof values !== 'object' || !Number.isSafeInteger(values.length)) {
      throw new InvalidArgumentError(`Tensor.from(${dtype}) takes a list of values, got ${describeValue(values)}`);
    }
    const info = dtypeInfo(dtype);
    const length = shapeSize(shape) * info.lanes;
    if (values.length !== length) {
      throw new InvalidArgumentError(`a ${dtype} tensor of shape [${shape.join(', ')}] needs ${length} values, got ${values.length}`);
    }
    const data = allocate(dtype, shape, length);
    const range = INTEGER_RANGES[dtype];
    const bigRange = BIGINT_RANGES[dtype];
    for (let i = 0; i < length; i++) {
      const v: unknown = values[i];
      const where = `Tensor.from(${dtype}) value ${i}`;
      if (bigRange !== undefined) (data as BigInt64Array | BigUint64Array)[i] = toBigIntElement(dtype, bigRange, v, where);
      else if (range !== undefined) data[i] = toSmallInteger(dtype, range, v, where);
      else if (dtype === 'float16') data[i] = toFloat16Bits(toNumber(v, where));
      else if (dtype === 'bfloat16') data[i] = toBFloat16Bits(toNumber(v, where));
      else if (isMiniFloat(dtype)) data[i] = toMiniFloatBits(toNumber(v, where), dtype, false);
      else if (dtype === 'float8e8m0') data[i] = toE8M0Bits(toNumber(v, where));
      else if (dtype === 'bool') data[i] = v ? 1 : 0;
      else (data as Float64Array)[i] = toNumber(v, where);
    }
    return new Tensor(dtype, shape, data);
  }

  /** A scalar (shape []); values convert as in {@link Tensor.from}. */
  static scalar(dtype: DType, value: number | bigint): Tensor {
    return Tensor.from(dtype, [], [value]);
  }

  /**
   * The elements as numbers (float16/bfloat16 and the 8- and 4-bit floats decoded, bool as 0/1, int64 and uint64 via
   * Number, so rounded past 2^53: read `data` for their exact bigints; complex interleaved).
   * For display and tests; kernels read `data` directly.
   */
  toArray(): number[] {
    const out = new Array<number>(this.data.length);
    for (let i = 0; i < this.data.length; i++) {
      const v = this.data[i]!;
      if (this.dtype === 'float16') out[i] = fromFloat16Bits(v as number);
      else if (this.dtype === 'bfloat16') out[i] = fromBFloat16Bits(v as number);
      else if (isMiniFloat(this.dtype)) out[i] = fromMiniFloatBits(v as number, this.dtype);
      else if (this.dtype === 'float8e8m0') out[i] = fromE8M0Bits(v as number);
      else out[i] = Number(v);
    }
    return out;
  }

  /** Same data, another shape of the same size. */
  reshape(shape: Shape): Tensor {
    if (shapeSize(shape) !== this.size) {
      throw new InvalidArgumentError(`cannot reshape a tensor of shape [${this.shape.join(', ')}] to [${shape.join(', ')}]`);
    }
    return new Tensor(this.dtype, shape, this.data);
  }

  toString(): string {
    return `Tensor<${this.dtype}>[${this.shape.join(', ')}]`;
  }

  [inspect.custom](): string {
    // int64/uint64 print their exact bigints: toArray's numbers round past 2^53.
    const exact = this.data instanceof BigInt64Array || this.data instanceof BigUint64Array;
    const values = this.toArray();
    const shown = values.slice(0, 8).map((v, i) => (exact ? String(this.data[i]) : Number.isInteger(v) ? String(v) : v.toPrecision(5)));
    return `${this.toString()} [${shown.join(', ')}${values.length > 8 ? `, … ${values.length - 8} more` : ''}]`;
  }
}
