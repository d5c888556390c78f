/**
 * The one codec for "JSON description + binary blobs", shared by the graph serializer
 * (lib/ir/serialize.ts), the serialized Network (lib/network/serialize.ts, what every backend
 * receives) and the program file (lib/runtime/program-file/). It owns what the three formats
 * must agree on, so that they cannot drift apart again:
 *
 * - the container: 8-byte ASCII magic, uint32 LE version, uint32 LE JSON length J, uint64 LE
 *   blob length B, J bytes of UTF-8 JSON, zero padding to a multiple of 8, then B bytes of
 *   blob, every record in it at an 8-byte aligned offset ({@link packContainer},
 *   {@link unpackContainer}); every length is checked against the bytes before anything is
 *   allocated or parsed;
 * - JSON text parsing ({@link parseJsonText}) and own-key object building
 *   ({@link defineEntry}): a `"__proto__"` key stays an own data property, never a prototype;
 * - the encoding of numbers JSON cannot write: `{"$number": "NaN" | "Infinity" | "-Infinity"
 *   | "-0"}` ({@link encodeNumber}, {@link decodeNumber}); symbol range bounds, which are
 *   finite or ±Infinity, are the strings `"Infinity"` / `"-Infinity"` ({@link encodeBound});
 * - one blob table: records placed at aligned offsets, shared tensors written once
 *   ({@link BlobTable}), and checked ranges on the way back ({@link blobRange}).
 *
 * Failures are {@link CodecError}s (not TensorRTNodeErrors): each caller wraps them in its
 * own error (E_BAD_MODEL for graphs and engines, E_BAD_PROGRAM for program files), with the
 * caller's label in front of the message.
 */

/** Every blob record starts at a multiple of this many bytes. */
export const BLOB_ALIGN = 8;
/** Magic (8), version (4), JSON length (4), blob length (8). */
export const CONTAINER_HEADER_BYTES = 24;
const MAGIC_BYTES = 8;

/** A malformed container, JSON text or encoded value; callers wrap it in their typed error. */
export class CodecError extends Error {
  override name = 'CodecError';
}

export const alignBlob = (n: number): number => Math.ceil(n / BLOB_ALIGN) * BLOB_ALIGN;

/** Sets `obj[key]` as an own data property, also for `"__proto__"` (plain assignment would set the prototype). */
export function defineEntry<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------------------------------
// Numbers

/** How a number JSON cannot write as a literal is written. */
export type SpecialNumber = 'NaN' | 'Infinity' | '-Infinity' | '-0';
/** A number as JSON data: the number itself, or its {@link SpecialNumber} tag. */
export type EncodedNumber = number | { $number: SpecialNumber };

const SPECIAL: Record<SpecialNumber, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0 };

/** The tag of a number JSON would not give back exactly (NaN, ±Infinity, -0), else undefined. */
export function specialNumber(x: number): SpecialNumber | undefined {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (Object.is(x, -0)) return '-0';
  return undefined;
}

export function encodeNumber(x: number): EncodedNumber {
  const special = specialNumber(x);
  return special === undefined ? x : { $number: special };
}

/** Whether `o` (an object's own keys) is a `{"$number": ...}` tag, whatever its value. */
export const isNumberTag = (o: object): o is { $number: unknown } => Object.hasOwn(o, '$number') && Object.keys(o).length === 1;

/** The number a `{"$number": tag}`'s tag stands for; CodecError for an unknown tag. */
export function decodeNumber(tag: unknown): number {
  if (typeof tag !== 'string' || !Object.hasOwn(SPECIAL, tag)) {
    throw new CodecError(`the unknown number ${typeof tag === 'string' ? JSON.stringify(tag.slice(0, 40)) : String(tag)}`);
  }
  return SPECIAL[tag as SpecialNumber];
}

/** A symbol range bound as JSON data. */
export type EncodedBound = number | 'Infinity' | '-Infinity';

/** A range bound (finite or ±Infinity) as written; undefined for NaN, which no range holds. */
export function encodeBound(x: number): EncodedBound | undefined {
  if (Number.isFinite(x)) return x;
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return undefined;
}

// ---------------------------------------------------------------------------------------
// JSON text

/** Parses UTF-8 JSON text; CodecError when it is not UTF-8 or not JSON. (JSON.parse keeps `"__proto__"` as an own key.) */
export function parseJsonText(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (cause) {
    throw new CodecError((cause as Error).message, { cause });
  }
}

// ---------------------------------------------------------------------------------------
// The blob table

/** Places byte ranges at aligned offsets of one blob; a source added twice is stored once. */
export class BlobTable<K = unknown> {
  private readonly placed = new Map<K, number>();
  private readonly parts: { bytes: Uint8Array; offset: number }[] = [];
  private cursor = 0;

  /** The blob's length so far. */
  get byteLength(): number {
    return this.cursor;
  }

  /**
   * The offset of `view`'s bytes (added now unless `key` was added before). With
   * `reserveEmpty`, an empty range still takes a slot, so distinct keys never share an offset.
   */
  add(key: K, view: ArrayBufferView, reserveEmpty = false): number {
    const known = this.placed.get(key);
    if (known !== undefined) return known;
    const offset = alignBlob(this.cursor);
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    this.parts.push({ bytes, offset });
    this.cursor = offset + (reserveEmpty ? Math.max(bytes.byteLength, 1) : bytes.byteLength);
    this.placed.set(key, offset);
    return offset;
  }

  /** Copies every range into `into` at `base`. */
  writeInto(into: Uint8Array, base: number): void {
    for (const { bytes, offset } of this.parts) into.set(bytes, base + offset);
  }

  toBytes(): Uint8Array {
    const out = new Uint8Array(this.cursor);
    this.writeInto(out, 0);
    return out;
  }
}

/**
 * Checks that `byteLength` bytes at `offset` lie inside a blob of `blobLength` bytes, with
 * `offset` aligned; CodecError naming `what` otherwise.
 */
export function blobRange(offset: unknown, byteLength: number, blobLength: number, what: string): number {
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || offset % BLOB_ALIGN !== 0) {
    throw new CodecError(`${what} has an invalid offset ${JSON.stringify(offset)} (a non-negative multiple of ${BLOB_ALIGN})`);
  }
  if (offset + byteLength > blobLength) {
    throw new CodecError(`${what} (bytes ${offset}..${offset + byteLength}) lie outside the ${blobLength}-byte blob`);
  }
  return offset;
}

// ---------------------------------------------------------------------------------------
// The container

/** Packs `json` and the blob into one buffer (whose ArrayBuffer it owns entirely, ready to transfer). */
export function packContainer(magic: string, version: number, json: unknown, blobs: BlobTable): Uint8Array<ArrayBuffer> {
  if (magic.length !== MAGIC_BYTES || !/^[\x20-\x7e]+$/.test(magic)) throw new CodecError(`container magic must be ${MAGIC_BYTES} ASCII characters`);
  const text = new TextEncoder().encode(JSON.stringify(json));
  const blobStart = alignBlob(CONTAINER_HEADER_BYTES + text.length);
  const bytes = new Uint8Array(blobStart + blobs.byteLength);
  for (let i = 0; i < MAGIC_BYTES; i++) bytes[i] = magic.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, version, true);
  view.setUint32(12, text.length, true);
  view.setBigUint64(16, BigInt(blobs.byteLength), true);
  bytes.set(text, CONTAINER_HEADER_BYTES);
  blobs.writeInto(bytes, blobStart);
  return bytes;
}

/** What {@link unpackContainer} found. */
export interface Container {
  version: number;
  /** The parsed JSON. */
  json: unknown;
  /** The blob, viewing the input bytes (no copy). */
  blob: Uint8Array;
}

/** What the magic check found, for a caller-specific message. */
export class MagicError extends CodecError {
  constructor(readonly found: string, expected: string) {
    super(`bad magic ${JSON.stringify(found)} (expected ${JSON.stringify(expected)})`);
  }
}

/**
 * Reads a container: magic, version (one of `versions`), lengths (checked against the bytes
 * before anything is parsed), JSON, and the blob.
 *
 * @throws {MagicError} the bytes do not start with `magic`.
 * @throws {CodecError} truncated, trailing bytes, an unsupported version, unreadable JSON.
 */
export function unpackContainer(bytes: Uint8Array, magic: string, versions: readonly number[]): Container {
  if (bytes.length < CONTAINER_HEADER_BYTES) throw new CodecError(`truncated: ${bytes.length} bytes, its header alone needs ${CONTAINER_HEADER_BYTES}`);
  const found = String.fromCharCode(...bytes.subarray(0, MAGIC_BYTES));
  if (found !== magic) throw new MagicError(found, magic);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (!versions.includes(version)) {
    throw new CodecError(`format version ${version} is not supported (this tensorrt-node reads version ${versions.join(' or ')})`);
  }
  const jsonLength = view.getUint32(12, true);
  const blobLength64 = view.getBigUint64(16, true);
  if (blobLength64 > BigInt(Number.MAX_SAFE_INTEGER)) throw new CodecError(`its header gives an impossible blob length ${blobLength64}`);
  const blobLength = Number(blobLength64);
  const jsonEnd = CONTAINER_HEADER_BYTES + jsonLength;
  const blobStart = alignBlob(jsonEnd);
  const total = blobStart + blobLength;
  if (bytes.length < total) {
    throw new CodecError(`truncated: ${bytes.length} bytes, its header announces ${total} (${jsonLength} bytes of JSON and ${blobLength} bytes of weights)`);
  }
  if (bytes.length > total) throw new CodecError(`${bytes.length - total} unexpected bytes after the weights (its header announces ${total} bytes in all)`);
  let json: unknown;
  try {
    json = parseJsonText(bytes.subarray(CONTAINER_HEADER_BYTES, jsonEnd));
  } catch (e) {
    throw new CodecError(`its JSON part is unreadable (not valid JSON: ${(e as Error).message})`, { cause: e });
  }
  return { version, json, blob: bytes.subarray(blobStart, total) };
}
