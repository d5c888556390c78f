/**
 * A dense, row-major tensor on the host: a dtype, a shape and a typed array. This is what
 * interpret() and program.run() take and return.
 *
 * Storage per dtype (see {@link DTypeInfo.storage}): float16/bfloat16 as raw 16-bit patterns
 * in a Uint16Array, bool as 0/1 in a Uint8Array, int64 as BigInt64Array, complex64/complex128
 * interleaved (real, imaginary) in a Float32Array/Float64Array of twice the element count.
 */
import { inspect } from 'node:util';

import { InvalidArgumentError } from './errors';
import { dtypeInfo, isDType, type DType, type TypedArray } from './ir/dtype';
import { fromBFloat16Bits, fromFloat16Bits, toBFloat16Bits, toFloat16Bits } from './ir/half';

export type Shape = readonly number[];

/** Number of elements of a shape (1 for a scalar, []). */
export function shapeSize(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function checkShape(shape: Shape): void {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new InvalidArgumentError(`tensor shape [${shape.join(', ')}] has a dimension that is not a non-negative integer`);
    }
  }
}

export class Tensor {
  readonly dtype: DType;
  readonly shape: Shape;
  readonly data: TypedArray;

  /**
   * Wraps `data` (not copied). Its type and length must match the dtype's storage and the
   * shape; a mismatch is an `E_INVALID_ARGUMENT` error. Without `data`, zeros.
   */
  constructor(dtype: DType, shape: Shape, data?: TypedArray) {
    if (!isDType(dtype)) throw new InvalidArgumentError(`unknown dtype ${JSON.stringify(dtype)}`);
    checkShape(shape);
    const info = dtypeInfo(dtype);
    const length = shapeSize(shape) * info.lanes;
    if (data === undefined) {
      data = new info.storage(length);
    } else {
      // Compared by tag, not instanceof: typed arrays from another realm (worker messages,
      // vm contexts such as jest's) are valid data too.
      if (Object.prototype.toString.call(data) !== `[object ${info.storage.name}]`) {
        throw new InvalidArgumentError(
          `a ${dtype} tensor needs its data in a ${info.storage.name}${info.lanes === 2 ? ' (interleaved real, imaginary)' : ''}, got ${
            (data as object).constructor?.name ?? typeof data
          }`,
        );
      }
      if (data.length !== length) {
        throw new InvalidArgumentError(
          `a ${dtype} tensor of shape [${shape.join(', ')}] needs ${length} ${info.storage.name} elements, got ${data.length}`,
        );
      }
    }
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.data = data;
  }

  /** Number of elements (complex pairs count once). */
  get size(): number {
    return shapeSize(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  /**
   * Builds a tensor from plain numbers (or bigints for int64), converting to the dtype's
   * storage: float16/bfloat16 are rounded to nearest even; complex takes interleaved pairs.
   */
  static from(dtype: DType, shape: Shape, values: ArrayLike<number> | ArrayLike<bigint>): Tensor {
    checkShape(shape);
    const info = dtypeInfo(dtype);
    const length = shapeSize(shape) * info.lanes;
    if (values.length !== length) {
      throw new InvalidArgumentError(`a ${dtype} tensor of shape [${shape.join(', ')}] needs ${length} values, got ${values.length}`);
    }
    const data = new info.storage(length);
    for (let i = 0; i < length; i++) {
      const v = values[i]!;
      if (dtype === 'int64') (data as BigInt64Array)[i] = typeof v === 'bigint' ? v : BigInt(Math.trunc(v));
      else if (dtype === 'float16') data[i] = toFloat16Bits(Number(v));
      else if (dtype === 'bfloat16') data[i] = toBFloat16Bits(Number(v));
      else if (dtype === 'bool') data[i] = v ? 1 : 0;
      else (data as Float64Array)[i] = Number(v);
    }
    return new Tensor(dtype, shape, data);
  }

  /** A scalar (shape []). */
  static scalar(dtype: DType, value: number | bigint): Tensor {
    return Tensor.from(dtype, [], dtype === 'int64' ? [BigInt(value)] : [Number(value)]);
  }

  /**
   * The elements as numbers (float16/bfloat16 decoded, bool as 0/1, int64 via Number, complex
   * interleaved). For display and tests; kernels read `data` directly.
   */
  toArray(): number[] {
    const out = new Array<number>(this.data.length);
    for (let i = 0; i < this.data.length; i++) {
      const v = this.data[i]!;
      if (this.dtype === 'float16') out[i] = fromFloat16Bits(v as number);
      else if (this.dtype === 'bfloat16') out[i] = fromBFloat16Bits(v as number);
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
    const values = this.toArray();
    const shown = values.slice(0, 8).map((v) => (Number.isInteger(v) ? String(v) : v.toPrecision(5)));
    return `${this.toString()} [${shown.join(', ')}${values.length > 8 ? `, … ${values.length - 8} more` : ''}]`;
  }
}
