/**
 * ONNX TensorProto → Tensor: every data field form (raw_data, typed fields, external data).
 * Raw data is used in place when its bytes happen to be aligned for the element type (the
 * tensor then views the model file's buffer; no copy) and copied otherwise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { onnx } from 'onnx-proto';

import { BadModelError, UnsupportedOpError } from '../../errors';
import { dtypeInfo, type DType } from '../../ir/dtype';
import { shapeSize, Tensor } from '../../tensor';
import { toBigInt, toNumber, type LongLike } from './long';

/** ONNX TensorProto.DataType codes. */
export const ONNX_DTYPES: Record<number, DType | undefined> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  6: 'int32',
  7: 'int64',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
};

const ONNX_TYPE_NAMES: Record<number, string> = {
  0: 'UNDEFINED',
  4: 'UINT16',
  5: 'INT16',
  8: 'STRING',
  12: 'UINT32',
  13: 'UINT64',
  17: 'FLOAT8E4M3FN',
  18: 'FLOAT8E4M3FNUZ',
  19: 'FLOAT8E5M2',
  20: 'FLOAT8E5M2FNUZ',
  21: 'UINT4',
  22: 'INT4',
  23: 'FLOAT4E2M1',
};

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

export function onnxTypeOf(dtype: DType): number {
  for (const [code, d] of Object.entries(ONNX_DTYPES)) if (d === dtype) return Number(code);
  throw new TypeError(`no ONNX type for ${dtype}`);
}

export interface TensorProtoOptions {
  /** Directory that external-data locations are relative to (the model file's). */
  baseDir?: string;
  /** Cache of opened external-data files, shared across one model's tensors. */
  externalFiles?: Map<string, number>;
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
  const expected = count * info.itemBytes;
  if (bytes.byteLength !== expected) {
    throw new BadModelError(`${what}: raw data holds ${bytes.byteLength} bytes, but ${dtype} with ${count} elements needs ${expected}`);
  }
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

function readExternal(proto: onnx.ITensorProto, what: string, options: TensorProtoOptions): Uint8Array {
  const entries = new Map((proto.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']));
  const location = entries.get('location');
  if (!location) throw new BadModelError(`${what}: external data without a location`);
  if (options.baseDir === undefined) {
    throw new BadModelError(`${what} keeps its data in the external file "${location}", but the model was loaded from a buffer: load it from its path instead`);
  }
  const file = path.resolve(options.baseDir, location);
  const rel = path.relative(options.baseDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new BadModelError(`${what}: external data location "${location}" points outside the model's directory`);
  }
  const offset = Number(entries.get('offset') ?? '0');
  let fd = options.externalFiles?.get(file);
  if (fd === undefined) {
    try {
      fd = fs.openSync(file, 'r');
    } catch (cause) {
      throw new BadModelError(`${what}: its external data file ${file} cannot be opened (${(cause as Error).message})`, {
        cause,
        details: { file },
      });
    }
    options.externalFiles?.set(file, fd);
  }
  const size = fs.fstatSync(fd).size;
  const length = entries.has('length') ? Number(entries.get('length')) : size - offset;
  if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0 || offset + length > size) {
    throw new BadModelError(`${what}: external data range offset ${offset}, length ${length} lies outside ${file} (${size} bytes)`, {
      details: { file },
    });
  }
  // Read into a fresh, aligned buffer: no copy beyond the read itself.
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, bytes, done, length - done, offset + done);
    if (n === 0) throw new BadModelError(`${what}: ${file} ended early`);
    done += n;
  }
  return bytes;
}

/** Converts a TensorProto; `what` names it in errors (e.g. `initializer "fc.weight"`). */
export function tensorFromProto(proto: onnx.ITensorProto, what: string, options: TensorProtoOptions = {}): Tensor {
  const dtype = dtypeFromOnnx(proto.dataType ?? 0, what);
  const shape = (proto.dims ?? []).map((d) => toNumber(d as number | LongLike));
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new BadModelError(`${what} has invalid dims [${shape.join(', ')}]`);
  const count = shapeSize(shape);
  if (count > 2 ** 31) throw new BadModelError(`${what} has ${count} elements, more than tensorrt-node can hold in memory`);
  const info = dtypeInfo(dtype);
  if (proto.dataLocation === 1) {
    return new Tensor(dtype, shape, readRaw(readExternal(proto, what, options), dtype, count, what));
  }
  if (proto.rawData && proto.rawData.length > 0) {
    return new Tensor(dtype, shape, readRaw(proto.rawData, dtype, count, what, options.ownsBuffer === true));
  }
  const slots = count * info.lanes;
  const data = new info.storage(slots);
  const take = <T>(field: ArrayLike<T> | null | undefined, name: string): ArrayLike<T> => {
    const values = field ?? [];
    if (values.length !== slots) throw new BadModelError(`${what}: ${name} holds ${values.length} values, its shape needs ${slots}`);
    return values;
  };
  switch (dtype) {
    case 'float32':
    case 'complex64': {
      const v = take(proto.floatData, 'float_data');
      for (let i = 0; i < slots; i++) data[i] = v[i]!;
      break;
    }
    case 'float64':
    case 'complex128': {
      const v = take(proto.doubleData, 'double_data');
      for (let i = 0; i < slots; i++) data[i] = v[i]!;
      break;
    }
    case 'int64': {
      const v = take(proto.int64Data as ArrayLike<number | LongLike> | undefined, 'int64_data');
      for (let i = 0; i < slots; i++) (data as BigInt64Array)[i] = toBigInt(v[i] as never);
      break;
    }
    case 'float16':
    case 'bfloat16': {
      // int32_data holds the 16-bit patterns, one per entry.
      const v = take(proto.int32Data, 'int32_data');
      for (let i = 0; i < slots; i++) data[i] = v[i]! & 0xffff;
      break;
    }
    default: {
      const v = take(proto.int32Data, 'int32_data');
      for (let i = 0; i < slots; i++) data[i] = v[i]!;
    }
  }
  return new Tensor(dtype, shape, data);
}

/** A TensorProto (raw data) from a Tensor: for tests and for writing models. */
export function tensorToProto(t: Tensor, name: string): onnx.ITensorProto {
  const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return { name, dims: [...t.shape], dataType: onnxTypeOf(t.dtype), rawData: Uint8Array.from(bytes) };
}
