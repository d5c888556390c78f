/**
 * Generic values: what ProgramData fields without a dedicated manifest form become (and the
 * partition report). Numbers JSON cannot hold use the one encoding of lib/io/json-blobs.ts.
 */
import { InternalError } from '../../errors';
import { dtypeInfo, type DType } from '../../ir/dtype';
import { decodeNumber, defineEntry, encodeNumber, isNumberTag } from '../../io/json-blobs';
import { Tensor } from '../../ir/tensor';
import { MAX_DEPTH, type EncodedValue } from './manifest';
import { describe, type Reader } from './reader';

/**
 * Encodes `value` as JSON data. Typed arrays and Tensors become blobs (`{"$bytes": name,
 * "$type": ctor}`, `{"$tensor": {dtype, shape, blob}}`); numbers JSON cannot hold become
 * `{"$number": "NaN"|"Infinity"|"-Infinity"|"-0"}`; bigints `{"$bigint": "123"}`; Maps and
 * Sets `{"$map": [[k, v]...]}`, `{"$set": [...]}`; `undefined` object entries are left out;
 * object keys starting with `$` get a second `$`. Anything else (functions, class
 * instances) is a library bug: InternalError naming `where`.
 */
export function encodeValue(value: unknown, where: string, addBlob: (bytes: Uint8Array) => string, depth = 0): EncodedValue {
  if (depth > MAX_DEPTH) throw new InternalError(`cannot save ${where}: it nests more than ${MAX_DEPTH} levels deep`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return encodeNumber(value);
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Tensor) {
    const d = value.data;
    return { $tensor: { dtype: value.dtype, shape: [...value.shape], blob: addBlob(new Uint8Array(d.buffer, d.byteOffset, d.byteLength).slice()) } };
  }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const type = Object.prototype.toString.call(value).slice(8, -1);
    if (!TYPED_ARRAYS.has(type)) throw new InternalError(`cannot save ${where}: a ${type} is not data`);
    return { $bytes: addBlob(new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice()), $type: type };
  }
  if (Array.isArray(value)) return value.map((v, i) => encodeValue(v, `${where}[${i}]`, addBlob, depth + 1));
  if (value instanceof Map) return { $map: [...value].map(([k, v], i) => [encodeValue(k, `${where} key ${i}`, addBlob, depth + 1), encodeValue(v, `${where} entry ${i}`, addBlob, depth + 1)]) };
  if (value instanceof Set) return { $set: [...value].map((v, i) => encodeValue(v, `${where} item ${i}`, addBlob, depth + 1)) };
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new InternalError(`cannot save ${where}: a ${(value as object).constructor?.name ?? 'object'} is not data`);
    }
    const out: Record<string, EncodedValue> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      defineEntry(out, k.startsWith('$') ? `$${k}` : k, encodeValue(v, `${where}.${k}`, addBlob, depth + 1));
    }
    return out;
  }
  throw new InternalError(`cannot save ${where}: a ${typeof value} is not data`);
}

export const TYPED_ARRAYS = new Map<string, { BYTES_PER_ELEMENT: number; new (buffer: ArrayBuffer, offset: number, length: number): ArrayBufferView }>([
  ['Uint8Array', Uint8Array],
  ['Int8Array', Int8Array],
  ['Uint8ClampedArray', Uint8ClampedArray],
  ['Uint16Array', Uint16Array],
  ['Int16Array', Int16Array],
  ['Uint32Array', Uint32Array],
  ['Int32Array', Int32Array],
  ['Float32Array', Float32Array],
  ['Float64Array', Float64Array],
  ['BigInt64Array', BigInt64Array],
  ['BigUint64Array', BigUint64Array],
]);

/** Checks a generic value's shape while reading (decoding waits until checksums are verified). */
export function checkEncoded(r: Reader, x: unknown, what: string, referenced: Set<string>, depth = 0): void {
  if (depth > MAX_DEPTH) r.fail(`${what} nests too deeply`);
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return;
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) r.fail(`${what} is ${x}, which JSON cannot hold`);
    return;
  }
  if (Array.isArray(x)) {
    x.forEach((v, i) => checkEncoded(r, v, `${what}[${i}]`, referenced, depth + 1));
    return;
  }
  const o = r.object(x, what);
  const keys = Object.keys(o);
  const tag = keys.find((k) => k.startsWith('$') && !k.startsWith('$$'));
  if (tag === undefined) {
    for (const k of keys) checkEncoded(r, o[k], `${what}.${k}`, referenced, depth + 1);
    return;
  }
  switch (tag) {
    case '$number':
      if (!isNumberTag(o)) r.object(x, what, { required: ['$number'] });
      try {
        decodeNumber(o.$number);
      } catch {
        r.fail(`${what} is the unknown number ${describe(o.$number)}`);
      }
      return;
    case '$bigint':
      r.object(x, what, { required: ['$bigint'] });
      if (typeof o.$bigint !== 'string' || !/^-?\d{1,400}$/.test(o.$bigint)) r.fail(`${what} is not a bigint (got ${describe(o.$bigint)})`);
      return;
    case '$bytes':
    case '$type':
      r.object(x, what, { required: ['$bytes', '$type'] });
      if (!TYPED_ARRAYS.has(o.$type as string)) r.fail(`${what} has the unknown array type ${describe(o.$type)}`);
      r.blobRef(o.$bytes, `${what}`, referenced);
      return;
    case '$tensor': {
      r.object(x, what, { required: ['$tensor'] });
      const t = r.object(o.$tensor, what, { required: ['dtype', 'shape', 'blob'] });
      r.dtype(t.dtype, `${what}'s dtype`);
      r.array(t.shape, `${what}'s shape`).forEach((d, i) => r.index(d, `${what}'s shape[${i}]`));
      r.blobRef(t.blob, what, referenced);
      return;
    }
    case '$map':
      r.object(x, what, { required: ['$map'] });
      r.array(o.$map, what).forEach((pair, i) => {
        const p = r.array(pair, `${what} entry ${i}`);
        if (p.length !== 2) r.fail(`${what} entry ${i} is not a [key, value] pair`);
        checkEncoded(r, p[0], `${what} key ${i}`, referenced, depth + 1);
        checkEncoded(r, p[1], `${what} entry ${i}`, referenced, depth + 1);
      });
      return;
    case '$set':
      r.object(x, what, { required: ['$set'] });
      r.array(o.$set, what).forEach((v, i) => checkEncoded(r, v, `${what} item ${i}`, referenced, depth + 1));
      return;
    default:
      r.fail(`${what} has the unknown tag "${tag}"`);
  }
}

/** Decodes a value {@link checkEncoded} accepted (blobs already verified). */
export function decodeValue(r: Reader, x: EncodedValue, what: string, blobs: ReadonlyMap<string, Uint8Array>): unknown {
  if (x === null || typeof x !== 'object') return x;
  if (Array.isArray(x)) return x.map((v, i) => decodeValue(r, v, `${what}[${i}]`, blobs));
  const keys = Object.keys(x);
  const tag = keys.find((k) => k.startsWith('$') && !k.startsWith('$$'));
  const copy = (name: string): Uint8Array => blobs.get(name)!.slice();
  switch (tag) {
    case undefined: {
      const out: Record<string, unknown> = {};
      for (const k of keys) defineEntry(out, k.startsWith('$$') ? k.slice(1) : k, decodeValue(r, x[k]!, `${what}.${k}`, blobs));
      return out;
    }
    case '$number':
      return decodeNumber(x.$number);
    case '$bigint':
      return BigInt(x.$bigint as string);
    case '$bytes':
    case '$type': {
      const ctor = TYPED_ARRAYS.get(x.$type as string)!;
      const bytes = copy(x.$bytes as string);
      if (bytes.byteLength % ctor.BYTES_PER_ELEMENT !== 0) r.fail(`${what}: ${bytes.byteLength} bytes do not make a ${x.$type as string}`);
      return new ctor(bytes.buffer as ArrayBuffer, 0, bytes.byteLength / ctor.BYTES_PER_ELEMENT);
    }
    case '$tensor': {
      const t = x.$tensor as { dtype: DType; shape: number[]; blob: string };
      return tensorFromBytes(r, t.dtype, t.shape, copy(t.blob), what);
    }
    case '$map':
      return new Map((x.$map as EncodedValue[][]).map((p, i) => [decodeValue(r, p[0]!, `${what} key ${i}`, blobs), decodeValue(r, p[1]!, `${what} entry ${i}`, blobs)]));
    default:
      return new Set((x.$set as EncodedValue[]).map((v, i) => decodeValue(r, v, `${what} item ${i}`, blobs)));
  }
}

export function tensorFromBytes(r: Reader, dtype: DType, shape: number[], bytes: Uint8Array, what: string): Tensor {
  const info = dtypeInfo(dtype);
  let size = 1;
  for (const d of shape) size *= d;
  if (!Number.isSafeInteger(size) || size * info.itemBytes !== bytes.byteLength) {
    r.fail(`${what}: a ${dtype}[${shape.join(', ')}] tensor needs ${size * info.itemBytes} bytes, its blob has ${bytes.byteLength}`);
  }
  return new Tensor(dtype, shape, new info.storage(bytes.buffer as ArrayBuffer, 0, size * info.lanes));
}

