/**
 * ONNX's values besides numeric tensors, as files and models write them: STRING tensors
 * (TensorProto.string_data), SequenceProto and OptionalProto (onnx-data.proto: how ONNX's test
 * data stores sequence and optional inputs and outputs), and the TypeProto a graph declares for a
 * sequence or optional input.
 *
 * onnx-proto carries no SequenceProto or OptionalProto, so their few fields are read off the
 * protobuf wire format here; the tensors inside are TensorProtos, decoded by onnx-proto.
 */
import { onnx } from 'onnx-proto';
import { BadModelError, UnsupportedOpError } from '../../errors';
import { OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../../ir/values';
import { Tensor } from '../../ir/tensor';
import { toNumber, type LongLike } from './long';
import { dtypeFromOnnx, tensorFromProto } from './tensor-proto';
import type { DType } from '../../ir/dtype';

/** ONNX's STRING element type (TensorProto.DataType). */
export const ONNX_STRING = 8;

/** The element type an ONNX element-type code names: a dtype, or 'string' for STRING. */
export function elementFromOnnx(code: number, what: string): DType | 'string' {
  return code === ONNX_STRING ? 'string' : dtypeFromOnnx(code, what);
}

/** The most bytes of strings one tensor may hold (Node's largest string is about 2^29 characters). */
const MAX_STRING_BYTES = 2 ** 30;

/** A STRING TensorProto (each string_data entry is UTF-8). */
export function stringTensorFromProto(proto: onnx.ITensorProto, what: string): StringTensor {
  if (proto.dataType !== ONNX_STRING) throw new BadModelError(`${what} is not a STRING tensor`, { details: { tensor: what } });
  if (proto.dataLocation === 1) throw new UnsupportedOpError(`${what}: STRING tensors stored as external data are not supported`, { details: { tensor: what } });
  const shape = (proto.dims ?? []).map((d) => toNumber(d as number | LongLike));
  if (shape.some((d) => !Number.isSafeInteger(d) || d < 0)) throw new BadModelError(`${what} has the shape [${shape.join(', ')}]`, { details: { tensor: what } });
  const count = shape.reduce((a, b) => a * b, 1);
  const data = proto.stringData ?? [];
  if (data.length !== count) {
    throw new BadModelError(`${what}: string_data holds ${data.length} strings, its shape [${shape.join(', ')}] needs ${count}`, { details: { tensor: what } });
  }
  let bytes = 0;
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const strings = data.map((b) => {
    bytes += b.length;
    if (bytes > MAX_STRING_BYTES) throw new BadModelError(`${what} holds more than ${MAX_STRING_BYTES} bytes of strings`, { details: { tensor: what } });
    return decoder.decode(b);
  });
  return new StringTensor(shape, strings);
}

/** A TensorProto as a tensor or, for STRING, a string tensor. */
export function anyTensorFromProto(proto: onnx.ITensorProto, what: string): Tensor | StringTensor {
  return proto.dataType === ONNX_STRING ? stringTensorFromProto(proto, what) : tensorFromProto(proto, what);
}

/** TensorProto bytes decoded, protobuf's own errors (truncated or malformed data) as E_BAD_MODEL naming `what`. */
function decodeTensor(bytes: Uint8Array, what: string): Tensor | StringTensor {
  let proto: onnx.TensorProto;
  try {
    proto = onnx.TensorProto.decode(bytes);
  } catch (e) {
    throw new BadModelError(`${what}: not a TensorProto (${(e as Error).message})`, { details: { tensor: what } });
  }
  return anyTensorFromProto(proto, what);
}

// --- SequenceProto and OptionalProto on the wire -----------------------------------------

/** elem_type of SequenceProto and OptionalProto (their DataType enums share these numbers). */
const ELEM = { UNDEFINED: 0, TENSOR: 1, SPARSE_TENSOR: 2, SEQUENCE: 3, MAP: 4, OPTIONAL: 5 } as const;

/** A message's fields: for each field number, its varints (wire type 0) or byte strings (wire type 2). */
function readFields(bytes: Uint8Array, what: string): Map<number, Array<number | Uint8Array>> {
  const fields = new Map<number, Array<number | Uint8Array>>();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (i >= bytes.length || shift > 49) throw new BadModelError(`${what}: truncated or malformed protobuf`);
      const b = bytes[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (i < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: number | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const n = varint();
      if (i + n > bytes.length) throw new BadModelError(`${what}: field ${field} runs past the end of the data`);
      value = bytes.subarray(i, i + n);
      i += n;
    } else if (wire === 1 || wire === 5) {
      i += wire === 1 ? 8 : 4; // fixed64 / fixed32: no field of these messages, skipped
      continue;
    } else throw new BadModelError(`${what}: protobuf wire type ${wire} is not one SequenceProto or OptionalProto uses`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

function bytesField(fields: Map<number, Array<number | Uint8Array>>, n: number): Uint8Array[] {
  return (fields.get(n) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array);
}

function elemTypeOf(fields: Map<number, Array<number | Uint8Array>>): number {
  const v = (fields.get(2) ?? []).find((x): x is number => typeof x === 'number');
  return v ?? ELEM.UNDEFINED;
}

const ELEM_NAMES: Record<number, string> = { 2: 'sparse tensors', 3: 'sequences', 4: 'maps', 5: 'optionals' };

/**
 * A SequenceProto of tensors. `elem` is the element type the model declares (an empty sequence
 * tells none); without it, the first element's.
 */
export function sequenceFromProto(bytes: Uint8Array, what: string, elem?: TensorSequence['elem']): TensorSequence {
  const fields = readFields(bytes, what);
  const kind = elemTypeOf(fields);
  if (kind !== ELEM.TENSOR && kind !== ELEM.UNDEFINED) throw new UnsupportedOpError(`${what}: sequences of ${ELEM_NAMES[kind] ?? `element type ${kind}`} are not supported`);
  const items = bytesField(fields, 3).map((b, i) => decodeTensor(b, `${what} element ${i}`));
  const found = items[0] === undefined ? undefined : items[0] instanceof StringTensor ? 'string' : items[0].dtype;
  const type = elem ?? found;
  if (type === undefined) throw new BadModelError(`${what}: an empty sequence whose element type nothing declares`);
  try {
    return new TensorSequence(type, items);
  } catch (e) {
    throw new BadModelError(`${what}: ${(e as Error).message}`);
  }
}

/** An OptionalProto holding a tensor, a sequence of tensors, or nothing. */
export function optionalFromProto(bytes: Uint8Array, what: string, elem?: TensorSequence['elem']): OptionalValue {
  const fields = readFields(bytes, what);
  const kind = elemTypeOf(fields);
  const tensor = bytesField(fields, 3)[0];
  const sequence = bytesField(fields, 5)[0];
  if (kind === ELEM.TENSOR && tensor !== undefined) return new OptionalValue(decodeTensor(tensor, `${what}'s value`));
  if (kind === ELEM.SEQUENCE && sequence !== undefined) return new OptionalValue(sequenceFromProto(sequence, `${what}'s value`, elem));
  if (tensor === undefined && sequence === undefined && bytesField(fields, 4).length + bytesField(fields, 6).length + bytesField(fields, 7).length === 0) return new OptionalValue(null);
  throw new UnsupportedOpError(`${what}: optionals of ${ELEM_NAMES[kind] ?? `element type ${kind}`} are not supported`);
}

/** How a value of an ONNX TypeProto is stored: which decoder reads its file. */
export type OnnxValueKind = 'tensor' | 'sequence' | 'optional';

/**
 * Decodes a value file as ONNX writes them (TensorProto, SequenceProto or OptionalProto bytes,
 * as in ONNX's test data sets): `kind` says which, `elem` the element type a sequence holds.
 */
export function valueFromProtoBytes(bytes: Uint8Array, kind: OnnxValueKind, what: string, elem?: TensorSequence['elem']): GraphValue {
  if (kind === 'sequence') return sequenceFromProto(bytes, what, elem);
  if (kind === 'optional') return optionalFromProto(bytes, what, elem);
  return decodeTensor(bytes, what);
}
