/**
 * The shared "JSON + blobs" codec (lib/io/json-blobs.ts): every JSON value kind survives a
 * container round trip, numbers JSON cannot hold come back exactly (NaN, ±Infinity, -0),
 * `__proto__` keys stay data, and malformed containers and blob tables are CodecErrors.
 */
import {
  BLOB_ALIGN,
  BlobTable,
  blobRange,
  CodecError,
  CONTAINER_HEADER_BYTES,
  decodeNumber,
  defineEntry,
  encodeBound,
  encodeNumber,
  isNumberTag,
  MagicError,
  packContainer,
  parseJsonText,
  unpackContainer,
} from '../../lib/io/json-blobs';

const MAGIC = 'TESTMAGC';

/** Replaces numbers by the codec's encoding, recursively (what the three formats' writers do). */
function encodeDeep(x: unknown): unknown {
  if (typeof x === 'number') return encodeNumber(x);
  if (Array.isArray(x)) return x.map(encodeDeep);
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) defineEntry(out, k, encodeDeep(v));
    return out;
  }
  return x;
}

function decodeDeep(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(decodeDeep);
  if (x !== null && typeof x === 'object') {
    if (isNumberTag(x)) return decodeNumber(x.$number);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) defineEntry(out, k, decodeDeep(v));
    return out;
  }
  return x;
}

function roundTrip(value: unknown, blobs = new BlobTable()): { json: unknown; blob: Uint8Array; version: number } {
  return unpackContainer(packContainer(MAGIC, 7, encodeDeep(value), blobs), MAGIC, [7]);
}

const codecError = (fn: () => unknown): CodecError => {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(CodecError);
  return error as CodecError;
};

describe('numbers', () => {
  test('NaN, ±Infinity and -0 are tagged; other numbers stay numbers', () => {
    expect(encodeNumber(NaN)).toEqual({ $number: 'NaN' });
    expect(encodeNumber(Infinity)).toEqual({ $number: 'Infinity' });
    expect(encodeNumber(-Infinity)).toEqual({ $number: '-Infinity' });
    expect(encodeNumber(-0)).toEqual({ $number: '-0' });
    expect(encodeNumber(0)).toBe(0);
    expect(encodeNumber(2 ** 60 + 0.5)).toBe(2 ** 60);
    expect(encodeNumber(-1.5e-300)).toBe(-1.5e-300);
  });

  test('unknown tags are CodecErrors', () => {
    expect(codecError(() => decodeNumber('Huge')).message).toBe('the unknown number "Huge"');
    codecError(() => decodeNumber(1));
    codecError(() => decodeNumber('__proto__'));
    codecError(() => decodeNumber('toString'));
  });

  test('bounds: finite or ±Infinity as strings, NaN refused', () => {
    expect([encodeBound(3), encodeBound(Infinity), encodeBound(-Infinity), encodeBound(NaN)]).toEqual([3, 'Infinity', '-Infinity', undefined]);
  });
});

describe('container round trip', () => {
  test('every JSON value kind, nested, with the special numbers', () => {
    const value = {
      null: null,
      t: true,
      f: false,
      int: 42,
      neg: -7,
      big: 2 ** 53 + 2,
      tiny: 5e-324,
      nan: NaN,
      inf: Infinity,
      ninf: -Infinity,
      nzero: -0,
      zero: 0,
      s: 'héllo "quoted" \u0000 \ud83d\ude00',
      empty: '',
      list: [1, [NaN, [-0, { deep: -Infinity }]], 'x', null],
      none: [],
      obj: {},
    };
    const { json, version, blob } = roundTrip(value);
    expect(version).toBe(7);
    expect(blob.byteLength).toBe(0);
    const back = decodeDeep(json) as typeof value;
    expect(back).toEqual(value);
    // toEqual treats -0 and 0 alike; Object.is does not.
    expect(Object.is(back.nzero, -0)).toBe(true);
    expect(Object.is(back.zero, 0)).toBe(true);
    expect(Object.is((back.list[1] as unknown[][])[1]![0], -0)).toBe(true);
    expect(Number.isNaN(back.nan)).toBe(true);
  });

  test('"__proto__" keys stay own data, never a prototype', () => {
    const value: Record<string, unknown> = {};
    defineEntry(value, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    const back = decodeDeep(roundTrip(value).json) as Record<string, unknown>;
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect((back as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const parsed = parseJsonText(new TextEncoder().encode('{"__proto__": {"polluted": 1}}')) as object;
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect((parsed as { polluted?: unknown }).polluted).toBeUndefined();
  });

  test('blobs sit at aligned offsets, a source added twice is stored once, bytes come back', () => {
    const blobs = new BlobTable<object>();
    const a = new Float32Array([1, NaN, -0]);
    const b = new Uint8Array([9, 8, 7]);
    const empty = new Int32Array(0);
    const offA = blobs.add(a, a);
    const offB = blobs.add(b, b);
    expect(blobs.add(a, a)).toBe(offA);
    const offE = blobs.add(empty, empty, true);
    const offE2 = blobs.add(new Int32Array(0), new Int32Array(0), true);
    expect([offA, offB, offE, offE2]).toEqual([0, 16, 24, 32]);
    for (const o of [offA, offB, offE, offE2]) expect(o % BLOB_ALIGN).toBe(0);
    const bytes = packContainer(MAGIC, 1, { a: offA, b: offB }, blobs);
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
    const { blob } = unpackContainer(bytes, MAGIC, [1]);
    expect((blob.byteOffset) % BLOB_ALIGN).toBe(0);
    expect(new Float32Array(blob.buffer, blob.byteOffset + offA, 3)).toEqual(new Float32Array([1, NaN, -0]));
    expect([...blob.subarray(offB, offB + 3)]).toEqual([9, 8, 7]);
    expect(blobRange(offB, 3, blob.byteLength, 'b')).toBe(offB);
  });

  test('the header layout: magic, version, JSON length, blob length', () => {
    const blobs = new BlobTable();
    blobs.add('k', new Uint8Array(5));
    const bytes = packContainer(MAGIC, 3, { x: 1 }, blobs);
    const view = new DataView(bytes.buffer);
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe(MAGIC);
    expect(view.getUint32(8, true)).toBe(3);
    expect(view.getUint32(12, true)).toBe('{"x":1}'.length);
    expect(view.getBigUint64(16, true)).toBe(5n);
    expect(bytes.byteLength).toBe(32 + 5); // 24 + 7 bytes of JSON padded to 32
  });
});

describe('malformed input is a CodecError', () => {
  const good = (): Uint8Array => {
    const blobs = new BlobTable();
    blobs.add('w', new Float64Array([1, 2]));
    return packContainer(MAGIC, 1, { w: 0 }, blobs).slice();
  };

  test('truncated header, truncated body, trailing bytes', () => {
    expect(codecError(() => unpackContainer(good().subarray(0, 10), MAGIC, [1])).message).toMatch(/truncated: 10 bytes, its header alone needs 24/);
    expect(codecError(() => unpackContainer(good().subarray(0, good().length - 1), MAGIC, [1])).message).toMatch(/truncated: \d+ bytes, its header announces/);
    const longer = new Uint8Array(good().length + 3);
    longer.set(good());
    expect(codecError(() => unpackContainer(longer, MAGIC, [1])).message).toMatch(/3 unexpected bytes/);
  });

  test('oversized lengths in the header are refused before anything is allocated', () => {
    const huge = good();
    new DataView(huge.buffer).setBigUint64(16, 2n ** 63n, true);
    expect(codecError(() => unpackContainer(huge, MAGIC, [1])).message).toMatch(/impossible blob length/);
    const big = good();
    new DataView(big.buffer).setBigUint64(16, 2n ** 40n, true);
    expect(codecError(() => unpackContainer(big, MAGIC, [1])).message).toMatch(/truncated: .*announces/);
    const json = good();
    new DataView(json.buffer).setUint32(12, 0xffffffff, true);
    expect(codecError(() => unpackContainer(json, MAGIC, [1])).message).toMatch(/truncated/);
  });

  test('wrong magic (a MagicError naming what was found), unsupported version', () => {
    const e = codecError(() => unpackContainer(good(), 'OTHERMAG', [1]));
    expect(e).toBeInstanceOf(MagicError);
    expect((e as MagicError).found).toBe(MAGIC);
    expect(codecError(() => unpackContainer(good(), MAGIC, [2, 3])).message).toMatch(/format version 1 is not supported \(this tensorrt-node reads version 2 or 3\)/);
  });

  test('unreadable JSON text', () => {
    const bad = good();
    bad[CONTAINER_HEADER_BYTES] = 0x78;
    expect(codecError(() => unpackContainer(bad, MAGIC, [1])).message).toMatch(/JSON part is unreadable \(not valid JSON/);
    expect(codecError(() => parseJsonText(new Uint8Array([0x22, 0xff, 0x22]))).message).toBeTruthy();
  });

  test('blob table records: misaligned, negative, non-integer, past the end', () => {
    expect(codecError(() => blobRange(4, 4, 64, 'weights 0')).message).toMatch(/weights 0 has an invalid offset 4/);
    codecError(() => blobRange(-8, 4, 64, 'w'));
    codecError(() => blobRange(8.5, 4, 64, 'w'));
    codecError(() => blobRange('8', 4, 64, 'w'));
    expect(codecError(() => blobRange(64, 8, 64, 'weights 1')).message).toMatch(/weights 1 \(bytes 64\.\.72\) lie outside the 64-byte blob/);
    expect(blobRange(56, 8, 64, 'w')).toBe(56);
    expect(blobRange(64, 0, 64, 'w')).toBe(64);
  });

  test('a magic that is not 8 ASCII characters cannot be written', () => {
    codecError(() => packContainer('SHORT', 1, {}, new BlobTable()));
  });
});
