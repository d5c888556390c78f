/**
 * ONNX TensorProto → Tensor: every data field form (raw_data, typed fields, external data).
 * Raw data is used in place when its bytes happen to be aligned for the element type (the
 * tensor then views the model file's buffer; no copy) and copied otherwise.
 */
import type { onnx } from 'onnx-proto';

import { BadModelError, UnsupportedOpError } from '../../errors';
import { dtypeInfo, type DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import { checkedTensorSize } from '../tensor-size';
import { readExternalData, type ExternalDataOptions } from './external-data';
import { toBigInt, toNumber, type LongLike } from './long';

/** ONNX TensorProto.DataType codes. */
export const ONNX_DTYPES: Record<number, DType | undefined> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
  17: 'float8e4m3fn',
  18: 'float8e4m3fnuz',
  19: 'float8e5m2',
  20: 'float8e5m2fnuz',
  21: 'uint4',
  22: 'int4',
  23: 'float4e2m1',
  24: 'float8e8m0',
  25: 'uint2',
  26: 'int2',
};

const ONNX_TYPE_NAMES: Record<number, string> = {
  0: 'UNDEFINED',
  8: 'STRING',
};

/**
 * Elements per byte of the types ONNX packs (raw_data, and each int32_data entry): two
 * 4-bit elements, low nibble first; four 2-bit elements, lowest bits first. The last byte
 * is padded with zeros.
 */
const PACKED: Partial<Record<DType, 2 | 4>> = { int4: 2, uint4: 2, float4e2m1: 2, int2: 4, uint2: 4 };

/** Bytes of ONNX's packed form of `count` elements of `dtype`: count itself for unpacked types. */
function packedBytes(dtype: DType, count: number): number {
  const per = PACKED[dtype];
  return per === undefined ? count * dtypeInfo(dtype).itemBytes : Math.ceil(count / per);
}

/**
 * Unpacks `count` elements of a 4- or 2-bit type from packed bytes (`byteAt(i)`, the i-th
 * packed byte) into one element per byte, sign-extending int4 and int2.
 */
function unpack(dtype: DType, count: number, byteAt: (i: number) => number): Tensor['data'] {
  const per = PACKED[dtype]!;
  const bits = 8 / per;
  const mask = (1 << bits) - 1;
  const signed = dtype === 'int4' || dtype === 'int2';
  const out = new (dtypeInfo(dtype).storage)(count);
  for (let i = 0; i < count; i++) {
    const v = (byteAt(Math.floor(i / per)) >>> (bits * (i % per))) & mask;
    out[i] = signed && v > mask >> 1 ? v - (mask + 1) : v;
  }
  return out;
}

/** Packs one element per byte into ONNX's packed bytes of a 4- or 2-bit type (the inverse of unpack). */
export function packSubByte(dtype: DType, data: ArrayLike<number>): Uint8Array {
  const per = PACKED[dtype];
  if (per === undefined) throw new TypeError(`${dtype} is not a packed type`);
  const bits = 8 / per;
  const mask = (1 << bits) - 1;
  const out = new Uint8Array(Math.ceil(data.length / per));
  for (let i = 0; i < data.length; i++) out[Math.floor(i / per)]! |= (data[i]! & mask) << (bits * (i % per));
  return out;
}

/** The IR dtype of an ONNX element type; `what` names the tensor/input for the error. */
export function dtypeFromOnnx(code: number, what: string): DType {
  const dtype = ONNX_DTYPES[code];
  if (dtype === undefined) {
    throw new UnsupportedOpError(`${what} has ONNX element type ${ONNX_TYPE_NAMES[code] ?? code}, which tensorrt-node does not support`, {
      details: { elemType: code },
    });
  }
  return dtype;
}

export interface TensorProtoOptions extends ExternalDataOptions {
  /**
   * The model bytes belong to the loader (read from a file), so raw data may be moved within
   * them to align it. Never set for a caller's buffer.
   */
  ownsBuffer?: boolean;
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

function readRaw(bytes: Uint8Array, dtype: DType, count: number, what: string, reuse = false): Tensor['data'] {
  const info = dtypeInfo(dtype);
  const expected = packedBytes(dtype, count);
  if (bytes.byteLength !== expected) {
    throw new BadModelError(`${what}: raw data holds ${bytes.byteLength} bytes, but ${dtype} with ${count} elements needs ${expected}`);
  }
  if (PACKED[dtype] !== undefined) return unpack(dtype, count, (i) => bytes[i]!);
  const slots = count * info.lanes;
  const slotBytes = info.itemBytes / info.lanes;
  const misalignment = bytes.byteOffset % slotBytes;
  if (misalignment === 0) {
    return new info.storage(bytes.buffer as ArrayBuffer, bytes.byteOffset, slots);
  }
  // The bytes just before raw_data are its field header (tag + length varint), which the
  // decoder has consumed. When the buffer is ours (read from the file), sliding the data
  // left over them aligns it without a copy, so a big model costs its file size once.
  if (reuse && misalignment <= 1 + varintSize(expected)) {
    const whole = new Uint8Array(bytes.buffer as ArrayBuffer);
    const start = bytes.byteOffset - misalignment;
    whole.copyWithin(start, bytes.byteOffset, bytes.byteOffset + expected);
    return new info.storage(bytes.buffer as ArrayBuffer, start, slots);
  }
  const copy = new Uint8Array(expected);
  copy.set(bytes);
  return new info.storage(copy.buffer, 0, slots);
}

/** The typed field that holds a `dtype` tensor's values when it has no raw data, and its name. */
function typedField(proto: onnx.ITensorProto, dtype: DType): [ArrayLike<number | LongLike> | null | undefined, string] {
  switch (dtype) {
    case 'float32':
    case 'complex64':
      return [proto.floatData, 'float_data'];
    case 'float64':
    case 'complex128':
      return [proto.doubleData, 'double_data'];
    case 'int64':
      return [proto.int64Data as ArrayLike<number | LongLike> | undefined, 'int64_data'];
    case 'uint32':
    case 'uint64':
      return [proto.uint64Data as ArrayLike<number | LongLike> | undefined, 'uint64_data'];
    default:
      // int32, int16, uint16, int8, uint8, bool (widened, one per entry); float16 and
      // bfloat16 as 16-bit patterns, one per entry; the float8 types as 8-bit patterns, one
      // per entry; the 4- and 2-bit types packed, one byte per entry.
      return [proto.int32Data, 'int32_data'];
  }
}

/**
 * Converts a TensorProto; `what` names it in errors (e.g. `initializer "fc.weight"`). The
 * declared size is checked against the data present before any buffer is allocated.
 */
export function tensorFromProto(proto: onnx.ITensorProto, what: string, options: TensorProtoOptions = {}): Tensor {
  const dtype = dtypeFromOnnx(proto.dataType ?? 0, what);
  const shape = (proto.dims ?? []).map((d) => toNumber(d as number | LongLike));
  const { count, bytes } = checkedTensorSize(shape, dtype, (reason) => {
    throw new BadModelError(`${what} ${reason}`, { details: { tensor: what } });
  });
  const info = dtypeInfo(dtype);
  if (proto.dataLocation === 1) {
    const fileBytes = PACKED[dtype] === undefined ? bytes : packedBytes(dtype, count);
    return new Tensor(dtype, shape, readRaw(readExternalData(proto, what, fileBytes, options), dtype, count, what));
  }
  if (proto.rawData && proto.rawData.length > 0) {
    return new Tensor(dtype, shape, readRaw(proto.rawData, dtype, count, what, options.ownsBuffer === true));
  }
  const slots = count * info.lanes;
  const [field, fieldName] = typedField(proto, dtype);
  const values = field ?? [];
  const entries = PACKED[dtype] === undefined ? slots : packedBytes(dtype, count);
  if (values.length !== entries) {
    throw new BadModelError(`${what}: ${fieldName} holds ${values.length} values, its shape [${shape.join(', ')}] needs ${entries}`, {
      details: { tensor: what },
    });
  }
  // Entries may be sign-extended (a packed byte 0x88 written as -120): their low byte counts.
  if (PACKED[dtype] !== undefined) return new Tensor(dtype, shape, unpack(dtype, count, (i) => (values[i] as number) & 0xff));
  const data = new info.storage(slots);
  if (dtype === 'int64') {
    for (let i = 0; i < slots; i++) (data as BigInt64Array)[i] = toBigInt(values[i] as never);
  } else if (dtype === 'uint64' || dtype === 'uint32') {
    // uint64_data is unsigned: a Long without the unsigned flag still holds the value's 64 bits.
    for (let i = 0; i < slots; i++) {
      const v = BigInt.asUintN(64, toBigInt(values[i] as never));
      if (dtype === 'uint64') (data as BigUint64Array)[i] = v;
      else if (v > 0xffffffffn) throw new BadModelError(`${what}: uint64_data value ${i} is ${v}, outside uint32`, { details: { tensor: what } });
      else data[i] = Number(v);
    }
  } else if (dtype === 'float16' || dtype === 'bfloat16') {
    for (let i = 0; i < slots; i++) data[i] = (values[i] as number) & 0xffff;
  } else if (info.storage === Uint8Array && dtype !== 'uint8' && dtype !== 'bool') {
    // The float8 types: each entry holds one bit pattern.
    for (let i = 0; i < slots; i++) data[i] = (values[i] as number) & 0xff;
  } else {
    for (let i = 0; i < slots; i++) data[i] = values[i] as number;
  }
  return new Tensor(dtype, shape, data);
}
