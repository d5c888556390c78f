/**
 * The strict zip reader: hostile archives (the probe's bombs, lying headers, overlaps,
 * truncations) are refused with a ZipError, and through the .trtp and .pt2 loaders with
 * E_BAD_PROGRAM / E_BAD_MODEL, before anything is inflated where the directory tells.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateRawSync } from 'node:zlib';

import { loadPt2 } from '../../../lib/frontends/pt2';
import { DEFAULT_ZIP_LIMITS, ZipArchive, ZipError } from '../../../lib/io/zip/reader';
import { loadProgramBuffer } from '../../../lib/runtime/program-file';
import { rejection, thrownError } from '../../helpers/errors';
import { FIXTURES } from '../../helpers/fixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const zw = require('../../../fuzz/zip-writer.js') as {
  storedEntry(name: string, data: Uint8Array, method?: number): Record<string, unknown> & { raw: Uint8Array; size: number; compressedSize: number; crc: number };
  localHeader(e: object): Buffer;
  writeZip(entries: object[]): Uint8Array;
  zipFiles(files: Record<string, Uint8Array>, method?: number): Uint8Array;
  withZip64End(zip: Uint8Array, edit?: (record: Buffer) => Buffer): Uint8Array;
};

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The ZipError `f` throws (fails the test when it throws nothing or something else). */
function zipError(f: () => unknown): ZipError {
  try {
    f();
  } catch (error) {
    if (error instanceof ZipError) return error;
    throw error;
  }
  throw new Error('expected a ZipError');
}

/**
 * The probe's bomb: `n` entries whose compressed data all end in one shared deflate stream
 * of `kernelBytes` zeros. Entry i's data is a stored deflate block quoting entry i+1's local
 * header, then entry i+1's data, so every entry inflates to the whole kernel (David
 * Fifield's overlapping construction). CRCs are left 0: the directory alone must condemn it.
 */
function overlapBomb(n: number, kernelBytes: number, prefix: string): Uint8Array {
  const kernel = deflateRawSync(new Uint8Array(kernelBytes), { level: 9 });
  const headers: Buffer[] = new Array(n);
  let size = kernelBytes;
  let compressedSize = kernel.length;
  const sizes: Array<{ size: number; compressedSize: number }> = new Array(n);
  for (let i = n - 1; i >= 0; i--) {
    if (i < n - 1) {
      size += headers[i + 1]!.length;
      compressedSize += 5 + headers[i + 1]!.length;
    }
    sizes[i] = { size, compressedSize };
    headers[i] = zw.localHeader({ name: `${prefix}${i}`, method: 8, crc: 0, size, compressedSize });
  }
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    offsets.push(at);
    parts.push(headers[i]!);
    at += headers[i]!.length;
    if (i < n - 1) {
      const quoted = headers[i + 1]!.length;
      const block = Buffer.from([0, quoted & 0xff, quoted >> 8, ~quoted & 0xff, (~quoted >> 8) & 0xff]);
      parts.push(block);
      at += block.length;
    }
  }
  parts.push(kernel);
  const body = Buffer.concat(parts);
  const entries = sizes.map((s, i) => ({ name: `${prefix}${i}`, method: 8, crc: 0, ...s, raw: new Uint8Array(0), localOffset: offsets[i] }));
  // writeZip writes only the central directory for entries with a localOffset: prepend the body.
  const directoryOnly = zw.writeZip(entries);
  const out = Buffer.concat([body, directoryOnly]);
  // Fix the end record's central-directory offset (writeZip assumed an empty body).
  out.writeUInt32LE(body.length, out.length - 6);
  return new Uint8Array(out);
}

describe('the probe\'s zip bombs', () => {
  // 3000 entries over one 60 MB stream: about 210 KB on disk, 180 GB if every entry were inflated.
  const bomb = overlapBomb(3000, 60e6, 'e');

  test('are refused by open(), from the directory alone', () => {
    expect(bomb.length).toBeLessThan(1e6);
    // With default limits the ratio gives it away first...
    expect(zipError(() => ZipArchive.open(bomb)).message).toMatch(/\(ratio \d+:1\), above the limit of 200:1/);
    // ...and with no ratio or size limits, the overlap does.
    const e = zipError(() => ZipArchive.open(bomb, { maxRatio: Infinity, maxInflatedEntryBytes: Infinity, maxInflatedTotalBytes: Infinity }));
    expect(e.message).toMatch(/entries "e0" and "e1" overlap/);
  }, 5000);

  test('a .trtp bomb is E_BAD_PROGRAM', async () => {
    const e = await rejection(loadProgramBuffer(bomb, {}, 'program file "bomb.trtp"'));
    expect(e.code).toBe('E_BAD_PROGRAM');
    expect(e.message).toMatch(/^program file "bomb\.trtp": .*entry "e0"/);
  }, 5000);

  test('a .pt2 bomb is E_BAD_MODEL naming the entry', () => {
    const pt2Bomb = overlapBomb(3000, 60e6, 'model/data/weights/weight_');
    const e = thrownError(() => loadPt2(pt2Bomb));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.details).toMatchObject({ file: 'pt2 buffer', entry: 'model/data/weights/weight_0' });
  }, 5000);

  test('a single high-ratio entry is refused at open(), readable when the limit allows it', () => {
    const zeros = new Uint8Array(8 * 1024 * 1024);
    const zip = zw.zipFiles({ 'model/data/weights/weight_0': zeros }, 8);
    expect(zipError(() => ZipArchive.open(zip)).message).toMatch(/weight_0" inflates \d+ bytes to 8388608 \(ratio \d+:1\), above the limit/);
    const read = ZipArchive.open(zip, { maxRatio: 2000 }).read('model/data/weights/weight_0');
    expect(read.length).toBe(zeros.length);
    expect(read.every((b) => b === 0)).toBe(true);
  });

  test('many small entries are counted together: each under the ratio floor, 1 GB in all is refused at open()', () => {
    const zeros = new Uint8Array(1024 * 1024);
    const one = zw.storedEntry('x', zeros, 8);
    // 1000 entries sharing one compressed form (each its own copy in the file): about 1 MB.
    const zip = zw.writeZip(Array.from({ length: 1000 }, (_, i) => ({ ...one, name: `model/data/weights/weight_${i}` })));
    expect(zip.length).toBeLessThan(2e6);
    const e = zipError(() => ZipArchive.open(zip));
    expect(e.message).toBe(
      `its deflated entries inflate ${1000 * one.compressedSize} bytes to ${1000 * zeros.length} in all (ratio ${Math.round(zeros.length / one.compressedSize)}:1), above the limit of 200:1 (a zip bomb of many small entries?)`,
    );
    const pt2 = thrownError(() => loadPt2(zip));
    expect(pt2.code).toBe('E_BAD_MODEL');
    expect(pt2.message).toMatch(/^pt2 buffer: not a readable \.pt2 archive: its deflated entries inflate/);
    expect(pt2.details).toEqual({ file: 'pt2 buffer' });
    // The ratio in all is what counts: the same zeros beside as much incompressible data pass.
    const noise = new Uint8Array(6 * 1024 * 1024).map((_, i) => (i * 2654435761) >>> 24);
    const mixed = zw.writeZip([...Array.from({ length: 4 }, (_, i) => ({ ...one, name: `z${i}` })), zw.storedEntry('noise', noise, 8)]);
    expect(ZipArchive.open(mixed).read('z3').length).toBe(zeros.length);
  });

  test('reading deflated entries over and over is bounded by the same ratio', () => {
    const zeros = new Uint8Array(512 * 1024);
    const zip = ZipArchive.open(zw.zipFiles({ z: zeros }, 8));
    // 512 KiB from about 500 bytes: under the 1 MiB floor, read twice; the third read passes it.
    expect(zip.read('z').length).toBe(zeros.length);
    expect(zip.read('z').length).toBe(zeros.length);
    const e = zipError(() => zip.read('z'));
    expect(e.entry).toBe('z');
    expect(e.message).toMatch(/^entry "z": reading it would make the bytes inflated from this archive 1572864, from \d+ deflated bytes \(ratio \d+:1\), above the limit of 200:1/);
    // Stored entries are views: read as often as asked.
    const stored = ZipArchive.open(zw.zipFiles({ s: zeros }));
    for (let i = 0; i < 10; i++) expect(stored.read('s').length).toBe(zeros.length);
  });

  test('an entry that inflates past its declared size stops at the bound', () => {
    const zeros = new Uint8Array(1024 * 1024);
    const e = zw.storedEntry('a', zeros, 8);
    // Declares 64 KB (a ratio the limits accept); the stream holds 1 MB.
    const zip = zw.writeZip([{ ...e, size: 65536 }]);
    const archive = ZipArchive.open(zip);
    expect(zipError(() => archive.read('a')).message).toBe('entry "a": inflates to more than its declared 65536 bytes');
  });

  test('size limits: entry count, one entry, all entries', () => {
    const many = zw.zipFiles(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, text('x')])));
    expect(zipError(() => ZipArchive.open(many, { maxEntries: 19 })).message).toBe('it declares 20 entries, more than the limit of 19');
    expect(ZipArchive.open(many, { maxEntries: 20 }).entries).toHaveLength(20);
    const two = zw.zipFiles({ a: new Uint8Array(5000), b: new Uint8Array(5000) }, 8);
    expect(zipError(() => ZipArchive.open(two, { maxInflatedEntryBytes: 4999 })).message).toMatch(/entry "a" inflates to 5000 bytes, more than the limit of 4999/);
    expect(zipError(() => ZipArchive.open(two, { maxInflatedTotalBytes: 9999 })).entry).toBe('b');
    expect(DEFAULT_ZIP_LIMITS.maxRatio).toBe(200);
  });
});

describe('corrupt and lying archives', () => {
  const good = (): Array<ReturnType<typeof zw.storedEntry>> => [zw.storedEntry('a.json', text('{"a":1}')), zw.storedEntry('b.bin', text('hello world'), 8)];

  test('a well-formed archive reads back, stored and deflated', () => {
    const zip = ZipArchive.open(zw.writeZip(good()));
    expect(zip.entries.map((e) => [e.name, e.method, e.size])).toEqual([['a.json', 0, 7], ['b.bin', 8, 11]]);
    expect(new TextDecoder().decode(zip.read('a.json'))).toBe('{"a":1}');
    expect(new TextDecoder().decode(zip.read('b.bin'))).toBe('hello world');
    expect(zipError(() => zip.read('c')).message).toBe('there is no entry "c"');
  });

  test('a bad CRC-32 is found when the entry is read', () => {
    const [a, b] = good();
    const zip = ZipArchive.open(zw.writeZip([a!, { ...b!, crc: (b!.crc ^ 1) >>> 0 }]));
    expect(new TextDecoder().decode(zip.read('a.json'))).toBe('{"a":1}');
    expect(zipError(() => zip.read('b.bin')).message).toBe('entry "b.bin" is corrupt: its CRC-32 does not match (a changed or damaged byte)');
  });

  test('a changed byte in a stored entry: E_BAD_MODEL from loadPt2, naming the entry', () => {
    const bytes = Buffer.from(fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2')));
    const at = bytes.indexOf(Buffer.from('{"graph_module"'));
    bytes[at + 100] ^= 0x20;
    expect(() => loadPt2(bytes)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', details: { file: 'pt2 buffer', entry: 'model/models/model.json' } }));
  });

  test('overlapping stored entries', () => {
    // Entry "outer" stores, as its data, a whole local header and data of entry "inner".
    const inner = zw.storedEntry('inner', text('secret'));
    const innerBytes = Buffer.concat([zw.localHeader(inner), inner.raw]);
    const outer = zw.storedEntry('outer', innerBytes);
    const outerHeader = zw.localHeader(outer);
    const zip = zw.writeZip([outer, { ...inner, localOffset: outerHeader.length }]);
    expect(zipError(() => ZipArchive.open(zip)).message).toBe('entries "outer" and "inner" overlap: corrupt (or a zip bomb)');
  });

  test('local and central headers must agree', () => {
    const [a, b] = good();
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, local: { size: 8, compressedSize: 8 } }, b!]))).message).toMatch(/disagree on its CRC or sizes/);
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, local: { name: 'z.json' } }, b!]))).message).toMatch(/names another entry/);
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, local: { method: 8 } }, b!]))).message).toMatch(/method or flags/);
  });

  test('methods, encryption, names', () => {
    const [a] = good();
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, method: 12 }]))).message).toMatch(/compression method 12/);
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, flags: 1 }]))).message).toMatch(/encrypted/);
    expect(zipError(() => ZipArchive.open(zw.writeZip([a!, a!]))).message).toBe('entry "a.json" appears twice');
    for (const name of ['/etc/passwd', '../x', 'a/../../x', 'C:/x', 'a\\b', 'a//b', 'a\u0000b', '']) {
      expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, name }]))).message).toMatch(/has a name that/);
    }
  });

  test('sizes and offsets that point outside the file', () => {
    const [a] = good();
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, size: 1e6, compressedSize: 1e6 }]))).message).toMatch(/run past the archive's data/);
    expect(zipError(() => ZipArchive.open(zw.writeZip([{ ...a!, localOffset: 4e9 }]))).message).toMatch(/lies outside the archive's data/);
    const bytes = Buffer.from(zw.writeZip([a!]));
    bytes.writeUInt16LE(5000, bytes.length - 12); // the end record's entry count
    bytes.writeUInt16LE(5000, bytes.length - 14);
    expect(zipError(() => ZipArchive.open(bytes)).message).toMatch(/declares 5000 entries, but its \d+-byte central directory cannot hold them/);
  });

  test('every truncation of a real .pt2 is refused, as E_BAD_MODEL from loadPt2', () => {
    const bytes = fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2'));
    for (let cut = 0; cut < bytes.length; cut += 997) {
      expect(() => ZipArchive.open(bytes.subarray(0, cut))).toThrow(ZipError);
      expect(() => loadPt2(bytes.subarray(0, cut))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
    }
    // The fixture itself, with its ZIP64 end record, reads.
    expect(ZipArchive.open(bytes).entries.length).toBeGreaterThan(5);
  });

  test('ZIP64: end record and per-entry sizes are read; a record that disagrees is refused', () => {
    const [a, b] = good();
    const zip64 = zw.withZip64End(zw.writeZip([{ ...a!, zip64: true }, b!]));
    const zip = ZipArchive.open(zip64);
    expect(new TextDecoder().decode(zip.read('a.json'))).toBe('{"a":1}');
    expect(new TextDecoder().decode(zip.read('b.bin'))).toBe('hello world');
    const lying = zw.withZip64End(zw.writeZip([a!, b!]), (record) => {
      record.writeBigUInt64LE(3n, 32); // 3 entries, the directory holds 2
      record.writeBigUInt64LE(3n, 24);
      return record;
    });
    expect(zipError(() => ZipArchive.open(lying)).message).toBe("it declares 3 entries, but its 103-byte central directory cannot hold them (corrupt)");
    const noRecord = Buffer.from(zip64);
    noRecord.writeUInt32LE(0, noRecord.length - 42); // the locator's signature
    expect(zipError(() => ZipArchive.open(noRecord)).message).toMatch(/asks for ZIP64 values, but there is no ZIP64 end record/);
  });
});
