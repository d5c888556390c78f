'use strict';
/**
 * A raw zip writer with full control over every header field: the fuzzer rebuilds archives
 * from mutated entries with it (valid CRCs and sizes unless told otherwise), and the zip
 * reader's tests build hostile archives (bombs, overlaps, lying headers) with it.
 */
const { crc32, deflateRawSync } = require('node:zlib');

/** One entry as stored: `raw` are the bytes written after the local header (compressed or not). */
function storedEntry(name, data, method = 0) {
  const raw = method === 8 ? deflateRawSync(data) : data;
  return { name, method, crc: crc32(data) >>> 0, size: data.length, compressedSize: raw.length, raw };
}

function u16(v) {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v & 0xffff);
  return b;
}

function u32(v) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

function u64(v) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return b;
}

/** The ZIP64 extra field holding `values` (64-bit each). */
function zip64Extra(values) {
  return Buffer.concat([u16(1), u16(8 * values.length), ...values.map(u64)]);
}

/** A local header; `e.local` overrides fields written there only (to make it disagree). `e.zip64` moves the sizes into a ZIP64 extra field. */
function localHeader(e) {
  const f = { ...e, ...(e.local ?? {}) };
  const name = Buffer.from(f.name, 'utf8');
  if (f.zip64) f.extra = zip64Extra([f.size, f.compressedSize]);
  const extra = f.extra ?? Buffer.alloc(0);
  if (f.zip64) return Buffer.concat([u32(0x04034b50), u16(45), u16(f.flags ?? 0), u16(f.method), u16(0), u16(0x21), u32(f.crc), u32(0xffffffff), u32(0xffffffff), u16(name.length), u16(extra.length), name, extra]);
  return Buffer.concat([u32(0x04034b50), u16(20), u16(f.flags ?? 0), u16(f.method), u16(0), u16(0x21), u32(f.crc), u32(f.compressedSize), u32(f.size), u16(name.length), u16(extra.length), name, extra]);
}

/** A central header for `e`, whose local header is at `offset`. */
function centralHeader(e, offset) {
  const name = Buffer.from(e.name, 'utf8');
  const extra = e.zip64 ? zip64Extra([e.size, e.compressedSize, offset]) : (e.centralExtra ?? Buffer.alloc(0));
  const [size, compressedSize, at] = e.zip64 ? [0xffffffff, 0xffffffff, 0xffffffff] : [e.size, e.compressedSize, offset];
  return Buffer.concat([
    u32(0x02014b50), u16(20), u16(20), u16(e.flags ?? 0), u16(e.method), u16(0), u16(0x21), u32(e.crc), u32(compressedSize), u32(size),
    u16(name.length), u16(extra.length), u16(0), u16(0), u16(0), u32(0), u32(at), name, extra,
  ]);
}

function endRecord(count, cdSize, cdOffset) {
  return Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(cdSize), u32(cdOffset), u16(0)]);
}

/**
 * Writes `entries` (from {@link storedEntry}, possibly edited) as an archive. An entry with
 * `localOffset` set gets no local header of its own: its central header points there.
 */
function writeZip(entries) {
  const parts = [];
  let at = 0;
  const offsets = entries.map((e) => {
    if (e.localOffset !== undefined) return e.localOffset;
    const header = localHeader(e);
    const offset = at;
    parts.push(header, e.raw);
    at += header.length + e.raw.length;
    return offset;
  });
  const central = Buffer.concat(entries.map((e, i) => centralHeader(e, offsets[i])));
  return new Uint8Array(Buffer.concat([...parts, central, endRecord(entries.length, central.length, at)]));
}

/**
 * `zip` (as {@link writeZip} writes it: no comment) with a ZIP64 end record and locator, and
 * its classic end record saturated, as ZIP64 writers leave it. `edit` may change the record.
 */
function withZip64End(zip, edit = (record) => record) {
  const b = Buffer.from(zip);
  const eocd = b.length - 22;
  const count = b.readUInt16LE(eocd + 10);
  const cdSize = b.readUInt32LE(eocd + 12);
  const cdOffset = b.readUInt32LE(eocd + 16);
  const record = edit(Buffer.concat([u32(0x06064b50), u64(44), u16(45), u16(45), u32(0), u32(0), u64(count), u64(count), u64(cdSize), u64(cdOffset)]));
  const locator = Buffer.concat([u32(0x07064b50), u32(0), u64(eocd), u32(1)]);
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(0xffff), u16(0xffff), u32(0xffffffff), u32(0xffffffff), u16(0)]);
  return new Uint8Array(Buffer.concat([b.subarray(0, eocd), record, locator, end]));
}

/** A well-formed archive of `files` ({name: bytes}), stored or deflated. */
function zipFiles(files, method = 0) {
  return writeZip(Object.entries(files).map(([name, data]) => storedEntry(name, data, method)));
}

module.exports = { withZip64End, storedEntry, localHeader, centralHeader, endRecord, writeZip, zipFiles };
