/**
 * Element types of the Graph IR and of {@link Tensor} data. TensorRT itself has no complex,
 * float64, int16, uint16, uint32 or uint64: the compiler lowers complex before conversion
 * (a trailing dim of 2), float64 with truncateDouble, and ops on the others run in fallback
 * segments (the converter registry refuses them). The 8-, 4- and 2-bit types of ONNX
 * (float8*, float4e2m1, int4, uint4, int2, uint2; see ./low-precision.ts) run in fallback
 * segments too until quantization maps them to TensorRT's FP8/FP4/INT4.
 */

export type DType =
  | 'float32'
  | 'float16'
  | 'bfloat16'
  | 'float64'
  | 'int8'
  | 'uint8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'uint64'
  | 'bool'
  | 'complex64'
  | 'complex128'
  | 'float8e4m3fn'
  | 'float8e4m3fnuz'
  | 'float8e5m2'
  | 'float8e5m2fnuz'
  | 'float8e8m0'
  | 'float4e2m1'
  | 'int4'
  | 'uint4'
  | 'int2'
  | 'uint2';

/** The typed array that holds a tensor's elements. */
export type TypedArray =
  | Float32Array
  | Float64Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

export type DTypeKind = 'float' | 'int' | 'bool' | 'complex';

export interface DTypeInfo {
  readonly name: DType;
  readonly kind: DTypeKind;
  /** Bytes per element (complex64: 8, a float32 pair). */
  readonly itemBytes: number;
  /** Typed-array slots per element: 2 for complex (interleaved real, imaginary), else 1. */
  readonly lanes: 1 | 2;
  /**
   * How elements are stored: float16 and bfloat16 as their 16 raw bits in a Uint16Array
   * (computed in float32), bool as 0/1 bytes, int64 and uint64 as BigInt64Array and
   * BigUint64Array (exact bigints), complex interleaved; the 8- and 4-bit floats as their bit
   * patterns in a Uint8Array, int4/int2 and uint4/uint2 one value per byte (Int8Array,
   * Uint8Array): itemBytes is 1 for all of them, what they take in memory here.
   */
  readonly storage:
    | Float32ArrayConstructor
    | Float64ArrayConstructor
    | Uint16ArrayConstructor
    | Int8ArrayConstructor
    | Uint8ArrayConstructor
    | Int16ArrayConstructor
    | Int32ArrayConstructor
    | Uint32ArrayConstructor
    | BigInt64ArrayConstructor
    | BigUint64ArrayConstructor;
  /** The real type of a complex type's parts (complex64 → float32); itself otherwise. */
  readonly component: DType;
}

const table: Record<DType, DTypeInfo> = {
  float32: { name: 'float32', kind: 'float', itemBytes: 4, lanes: 1, storage: Float32Array, component: 'float32' },
  float16: { name: 'float16', kind: 'float', itemBytes: 2, lanes: 1, storage: Uint16Array, component: 'float16' },
  bfloat16: { name: 'bfloat16', kind: 'float', itemBytes: 2, lanes: 1, storage: Uint16Array, component: 'bfloat16' },
  float64: { name: 'float64', kind: 'float', itemBytes: 8, lanes: 1, storage: Float64Array, component: 'float64' },
  int8: { name: 'int8', kind: 'int', itemBytes: 1, lanes: 1, storage: Int8Array, component: 'int8' },
  uint8: { name: 'uint8', kind: 'int', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'uint8' },
  int16: { name: 'int16', kind: 'int', itemBytes: 2, lanes: 1, storage: Int16Array, component: 'int16' },
  uint16: { name: 'uint16', kind: 'int', itemBytes: 2, lanes: 1, storage: Uint16Array, component: 'uint16' },
  int32: { name: 'int32', kind: 'int', itemBytes: 4, lanes: 1, storage: Int32Array, component: 'int32' },
  uint32: { name: 'uint32', kind: 'int', itemBytes: 4, lanes: 1, storage: Uint32Array, component: 'uint32' },
  int64: { name: 'int64', kind: 'int', itemBytes: 8, lanes: 1, storage: BigInt64Array, component: 'int64' },
  uint64: { name: 'uint64', kind: 'int', itemBytes: 8, lanes: 1, storage: BigUint64Array, component: 'uint64' },
  bool: { name: 'bool', kind: 'bool', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'bool' },
  complex64: { name: 'complex64', kind: 'complex', itemBytes: 8, lanes: 2, storage: Float32Array, component: 'float32' },
  complex128: { name: 'complex128', kind: 'complex', itemBytes: 16, lanes: 2, storage: Float64Array, component: 'float64' },
  float8e4m3fn: { name: 'float8e4m3fn', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float8e4m3fn' },
  float8e4m3fnuz: { name: 'float8e4m3fnuz', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float8e4m3fnuz' },
  float8e5m2: { name: 'float8e5m2', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float8e5m2' },
  float8e5m2fnuz: { name: 'float8e5m2fnuz', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float8e5m2fnuz' },
  float8e8m0: { name: 'float8e8m0', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float8e8m0' },
  float4e2m1: { name: 'float4e2m1', kind: 'float', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'float4e2m1' },
  int4: { name: 'int4', kind: 'int', itemBytes: 1, lanes: 1, storage: Int8Array, component: 'int4' },
  uint4: { name: 'uint4', kind: 'int', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'uint4' },
  int2: { name: 'int2', kind: 'int', itemBytes: 1, lanes: 1, storage: Int8Array, component: 'int2' },
  uint2: { name: 'uint2', kind: 'int', itemBytes: 1, lanes: 1, storage: Uint8Array, component: 'uint2' },
};

export const DTYPES: readonly DType[] = Object.freeze(Object.keys(table) as DType[]);

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(table, value);
}

export function dtypeInfo(dtype: DType): DTypeInfo {
  const info = table[dtype];
  if (info === undefined) throw new TypeError(`unknown dtype ${JSON.stringify(dtype)}`);
  return info;
}

export const isFloating = (d: DType): boolean => table[d].kind === 'float';
export const isComplex = (d: DType): boolean => table[d].kind === 'complex';
export const isInteger = (d: DType): boolean => table[d].kind === 'int';

/**
 * Whether elements are held as bigints (int64, uint64): float64 holds their values exactly
 * only up to 2^53, so kernels compute these through bigints.
 */
export const isBigIntDType = (d: DType): d is 'int64' | 'uint64' => d === 'int64' || d === 'uint64';

/** Whether an integer type has no negative values (uint2/4/8/16/32/64); false for bool and non-integers. */
export const isUnsigned = (d: DType): boolean =>
  d === 'uint8' || d === 'uint16' || d === 'uint32' || d === 'uint64' || d === 'uint4' || d === 'uint2';

/**
 * Whether a type's elements are stored wider than their values: the 8- and 4-bit floats (bit
 * patterns) and the 4- and 2-bit integers (one per byte). Typed-array stores do not round or
 * wrap to these types: write them through writeNumbers/fromNumbers.
 */
export const isLowPrecision = (d: DType): boolean => LOW_PRECISION.has(d);
const LOW_PRECISION: ReadonlySet<DType> = new Set<DType>([
  'float8e4m3fn',
  'float8e4m3fnuz',
  'float8e5m2',
  'float8e5m2fnuz',
  'float8e8m0',
  'float4e2m1',
  'int4',
  'uint4',
  'int2',
  'uint2',
]);

const SUB_BYTE_BITS: Partial<Record<DType, 2 | 4>> = { int4: 4, uint4: 4, int2: 2, uint2: 2 };

/** Bits of an integer type's values (int4: 4, int8: 8, uint64: 64); undefined for other kinds. */
export function integerBits(d: DType): 2 | 4 | 8 | 16 | 32 | 64 | undefined {
  if (table[d].kind !== 'int') return undefined;
  return SUB_BYTE_BITS[d] ?? ((table[d].itemBytes * 8) as 8 | 16 | 32 | 64);
}

/**
 * The inclusive range of an integer type's values as bigints (int16: [-32768, 32767], uint64:
 * [0, 2^64-1]); undefined for other kinds.
 */
export function integerRange(d: DType): readonly [bigint, bigint] | undefined {
  const bits = integerBits(d);
  if (bits === undefined) return undefined;
  const b = BigInt(bits);
  return isUnsigned(d) ? [0n, (1n << b) - 1n] : [-(1n << (b - 1n)), (1n << (b - 1n)) - 1n];
}

/** The complex type whose parts are `d` (float32 → complex64, float64 → complex128). */
export function complexOf(d: DType): DType {
  if (d === 'float64') return 'complex128';
  if (d === 'float32' || d === 'float16' || d === 'bfloat16') return 'complex64';
  throw new TypeError(`no complex type has ${d} parts`);
}

// PyTorch's promotion lattice: bool < integers < floats < complex; within a kind, the wider
// type wins. Integers of mixed signedness: see promoteIntegers.
const rank: Record<DType, number> = {
  bool: 0,
  uint8: 1,
  int8: 1,
  int16: 2,
  uint16: 2,
  int32: 3,
  uint32: 3,
  int64: 4,
  uint64: 4,
  float16: 5,
  bfloat16: 5,
  float32: 6,
  float64: 7,
  complex64: 8,
  complex128: 9,
  int2: 1,
  uint2: 1,
  int4: 1,
  uint4: 1,
  // Below float16: a wider float holds their values (see promoteTypes for two of them).
  float8e4m3fn: 4.5,
  float8e4m3fnuz: 4.5,
  float8e5m2: 4.5,
  float8e5m2fnuz: 4.5,
  float8e8m0: 4.5,
  float4e2m1: 4.5,
};

const SIGNED_OF_BITS: Record<2 | 4 | 8 | 16 | 32 | 64, DType> = { 2: 'int2', 4: 'int4', 8: 'int8', 16: 'int16', 32: 'int32', 64: 'int64' };

/**
 * Two different integer types: the wider when both are signed or both unsigned; otherwise the
 * narrowest signed type holding both (uint8 with int8 gives int16, as in PyTorch; uint32 with
 * int32 gives int64, as in NumPy). uint64 with a signed type has no such integer type: float64,
 * as NumPy (PyTorch refuses to promote uint16/32/64 with another integer type at all).
 */
function promoteIntegers(a: DType, b: DType): DType {
  const ba = integerBits(a)!;
  const bb = integerBits(b)!;
  if (isUnsigned(a) === isUnsigned(b)) return ba >= bb ? a : b;
  const [u, s] = isUnsigned(a) ? [ba, bb] : [bb, ba];
  if (s > u) return SIGNED_OF_BITS[s];
  return u === 64 ? 'float64' : SIGNED_OF_BITS[(u * 2) as 4 | 8 | 16 | 32 | 64];
}

/**
 * The result type of a binary op on tensors of types `a` and `b` (torch.result_type for two
 * tensors of the same category rules). float16 with bfloat16 gives float32, as in PyTorch;
 * complex64 with float64 gives complex128.
 */
export function promoteTypes(a: DType, b: DType): DType {
  if (a === b) return a;
  if ((a === 'float16' && b === 'bfloat16') || (a === 'bfloat16' && b === 'float16')) return 'float32';
  // Two different floats of 16 bits or fewer, one of them 8 or 4 bits: float32 holds both
  // exactly (float16 cannot hold float8e8m0's range; PyTorch refuses to promote float8 at all).
  if (isFloating(a) && isFloating(b) && rank[a] <= 5 && rank[b] <= 5 && (rank[a] === 4.5 || rank[b] === 4.5)) return 'float32';
  if (isInteger(a) && isInteger(b)) return promoteIntegers(a, b);
  if (isComplex(a) || isComplex(b)) {
    const wide = a === 'complex128' || b === 'complex128' || a === 'float64' || b === 'float64';
    return wide ? 'complex128' : 'complex64';
  }
  return rank[a] >= rank[b] ? a : b;
}

/**
 * How an operand takes part in type promotion (at::native::ResultTypeState): a tensor of
 * rank ≥ 1, a 0-d tensor, or a wrapped number (a Python scalar passed as an op argument).
 */
export type PromotionRole = 'tensor' | 'zerodim' | 'scalar';

/** An operand as type promotion sees it: only its dtype and its role. */
export interface PromotionOperand {
  readonly dtype: DType;
  readonly role: PromotionRole;
}

/**
 * The dtype a wrapped number of this category promotes as: Python int is int64 and Python
 * float takes the default dtype (float32), as at::native::update_result_type_state.
 */
export function scalarDType(kind: 'bool' | 'int' | 'float'): DType {
  return kind === 'bool' ? 'bool' : kind === 'int' ? 'int64' : 'float32';
}

const promoteSkip = (a: DType | undefined, b: DType): DType => (a === undefined ? b : promoteTypes(a, b));

/** at::native::combine_categories: a lower-priority group only matters when it is of a higher kind. */
function combineCategories(higher: DType | undefined, lower: DType | undefined): DType | undefined {
  if (higher === undefined) return lower;
  if (lower === undefined) return higher;
  if (isComplex(higher)) return higher;
  if (isComplex(lower)) {
    if (isFloating(higher)) return higher === 'float64' ? 'complex128' : 'complex64';
    return lower;
  }
  if (isFloating(higher)) return higher;
  if (higher === 'bool' || isFloating(lower)) return promoteTypes(higher, lower);
  return higher;
}

/**
 * torch.result_type over operands known only by dtype and role: tensors of rank ≥ 1 outrank
 * 0-d tensors, which outrank wrapped numbers; a lower group only promotes when it is of a
 * higher category (bool < int < float < complex). Shared by the CPU kernels (which see
 * tensors) and type inference (which sees only types). Undefined for no operands.
 */
export function resultTypeOfOperands(operands: readonly PromotionOperand[]): DType | undefined {
  let dim: DType | undefined;
  let zero: DType | undefined;
  let wrapped: DType | undefined;
  for (const x of operands) {
    if (x.role === 'tensor') dim = promoteSkip(dim, x.dtype);
    else if (x.role === 'zerodim') zero = promoteSkip(zero, x.dtype);
    else wrapped = promoteSkip(wrapped, x.dtype);
  }
  return combineCategories(dim, combineCategories(zero, wrapped));
}
