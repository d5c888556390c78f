/**
 * A strict reader for the zip container of program files. Program files come from disks and
 * networks, so nothing in them is trusted: the end-of-central-directory record, every
 * central and local header, every size and offset is checked, entries must not overlap,
 * names must be unique, and every entry's CRC-32 is verified. Stored entries (method 0, what
 * tensorrt-node writes) are returned as views of the input; deflated ones (method 8, what a
 * re-zipping tool may produce) are inflated with fflate into a buffer of the announced size,
 * never more. ZIP64, encryption and multi-disk archives are refused. Every problem is a
 * BadProgramError that names it.
 */
import { crc32 } from 'node:zlib';

import { inflateSync } from 'fflate';

import { BadProgramError } from '../errors';

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_BYTES = 22;
const CENTRAL_BYTES = 46;
const LOCAL_BYTES = 30;
/** Deflate cannot expand data by more than about 1032:1. */
const MAX_DEFLATE_RATIO = 1032;

/** One zip entry: its name and (checked) bytes. */
export interface ZipEntry {
  name: string;
  data: Uint8Array;
  /** 0 (stored) or 8 (deflated). */
  method: number;
}

/** The fields local and central headers share, in the same layout (the central one 2 bytes later). */
interface HeaderFields {
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  nameLength: number;
  extraLength: number;
}

interface CentralEntry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Where the shared fields start: a local header's "version needed", a central header's (after "version made by"). */
const LOCAL_FIELDS_AT = 4;
const CENTRAL_FIELDS_AT = 6;

/**
 * Reads every entry of a zip archive, in central-directory order.
 *
 * @param label names the archive in error messages, e.g. `program file "model.trtp"`.
 * @throws {BadProgramError} `E_BAD_PROGRAM` for anything malformed or corrupt.
 */
export function readZip(bytes: Uint8Array, label: string): ZipEntry[] {
  const fail = (message: string): never => {
    throw new BadProgramError(`${label}: ${message}`);
  };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (at: number): number => view.getUint16(at, true);
  const u32 = (at: number): number => view.getUint32(at, true);
  /** The shared header fields whose "version needed" field is at `at` (flags follow it). */
  const fields = (at: number): HeaderFields => ({
    flags: u16(at + 2),
    method: u16(at + 4),
    crc: u32(at + 10),
    compressedSize: u32(at + 14),
    size: u32(at + 18),
    nameLength: u16(at + 22),
    extraLength: u16(at + 24),
  });
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  /** The `length` bytes at `at` as UTF-8, or undefined when they are not UTF-8. */
  const decodeName = (at: number, length: number): string | undefined => {
    try {
      return utf8.decode(bytes.subarray(at, at + length));
    } catch {
      return undefined;
    }
  };

  if (bytes.length < EOCD_BYTES) fail(`not a program file: ${bytes.length} bytes, too short for a zip archive (truncated?)`);
  // The end-of-central-directory record: the last one whose comment runs exactly to the end.
  let eocd = -1;
  for (let at = bytes.length - EOCD_BYTES; at >= Math.max(0, bytes.length - EOCD_BYTES - 0xffff); at--) {
    if (u32(at) === EOCD_SIGNATURE && at + EOCD_BYTES + u16(at + 20) === bytes.length) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) fail('not a program file: no zip end-of-central-directory record (truncated, or not a zip archive)');
  const diskNumber = u16(eocd + 4);
  const cdDisk = u16(eocd + 6);
  const entriesOnDisk = u16(eocd + 8);
  const entryCount = u16(eocd + 10);
  const cdSize = u32(eocd + 12);
  const cdOffset = u32(eocd + 16);
  if (entryCount === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) fail('ZIP64 archives are not supported');
  if (diskNumber !== 0 || cdDisk !== 0 || entriesOnDisk !== entryCount) fail('multi-disk zip archives are not supported (or its end record is corrupt)');
  if (cdOffset + cdSize !== eocd) {
    fail(`its central directory (${cdSize} bytes at offset ${cdOffset}) does not end where the end record starts (offset ${eocd}): corrupt or truncated`);
  }

  const central: CentralEntry[] = [];
  const names = new Set<string>();
  let at = cdOffset;
  for (let i = 0; i < entryCount; i++) {
    if (at + CENTRAL_BYTES > eocd) fail(`central directory entry ${i} runs past the central directory`);
    if (u32(at) !== CENTRAL_SIGNATURE) fail(`central directory entry ${i} has a bad signature (corrupt)`);
    const { flags, method, crc, compressedSize, size, nameLength, extraLength } = fields(at + CENTRAL_FIELDS_AT);
    const commentLength = u16(at + 32);
    const startDisk = u16(at + 34);
    const localOffset = u32(at + 42);
    const end = at + CENTRAL_BYTES + nameLength + extraLength + commentLength;
    if (end > eocd) fail(`central directory entry ${i} runs past the central directory`);
    const name = decodeName(at + CENTRAL_BYTES, nameLength) ?? fail(`central directory entry ${i} has a name that is not UTF-8`);
    const where = `entry "${name}"`;
    if (name.length === 0) fail(`central directory entry ${i} has an empty name`);
    if (names.has(name)) fail(`${where} appears twice`);
    names.add(name);
    if (flags & 0x1) fail(`${where} is encrypted, which program files never are`);
    if (method !== 0 && method !== 8) fail(`${where} uses compression method ${method} (only 0, stored, and 8, deflate, are read)`);
    if (startDisk !== 0) fail(`${where} starts on disk ${startDisk}: multi-disk archives are not supported`);
    if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) fail(`${where} needs ZIP64, which is not supported`);
    if (method === 0 && size !== compressedSize) fail(`${where} is stored but its sizes differ (${compressedSize} and ${size} bytes): corrupt`);
    if (method === 8 && size > compressedSize * MAX_DEFLATE_RATIO + 1024) fail(`${where} announces ${size} bytes from ${compressedSize} compressed: impossible, corrupt`);
    central.push({ name, method, flags, crc, compressedSize, size, localOffset });
    at = end;
  }
  if (at !== eocd) fail(`the central directory holds ${eocd - at} bytes after its ${entryCount} entries: corrupt`);

  // Local headers: each must agree with its central entry, and entries must not overlap.
  const spans: Array<[number, number, string]> = [];
  const entries: ZipEntry[] = [];
  for (const c of central) {
    const where = `entry "${c.name}"`;
    const lo = c.localOffset;
    if (lo + LOCAL_BYTES > cdOffset) fail(`${where}: its local header (offset ${lo}) lies outside the archive's data (truncated or corrupt)`);
    if (u32(lo) !== LOCAL_SIGNATURE) fail(`${where}: bad local header signature at offset ${lo} (corrupt)`);
    const { flags, method, crc, compressedSize, size, nameLength, extraLength } = fields(lo + LOCAL_FIELDS_AT);
    const dataStart = lo + LOCAL_BYTES + nameLength + extraLength;
    if (method !== c.method || (flags & 0x1) !== 0) fail(`${where}: its local header disagrees with the central directory (method or flags): corrupt`);
    if (dataStart > cdOffset) fail(`${where}: its local header runs past the archive's data (truncated or corrupt)`);
    if (decodeName(lo + LOCAL_BYTES, nameLength) !== c.name) fail(`${where}: its local header names another entry: corrupt`);
    // With a data descriptor (flag bit 3) the local header may leave CRC and sizes zero.
    const described = (c.flags & 0x8) !== 0 && crc === 0 && compressedSize === 0 && size === 0;
    if (!described && (crc !== c.crc || compressedSize !== c.compressedSize || size !== c.size)) {
      fail(`${where}: its local header and the central directory disagree on its CRC or sizes: corrupt`);
    }
    const dataEnd = dataStart + c.compressedSize;
    if (dataEnd > cdOffset) fail(`${where}: its ${c.compressedSize} bytes of data run past the archive's data (truncated or corrupt)`);
    spans.push([lo, dataEnd, c.name]);
    const raw = bytes.subarray(dataStart, dataEnd);
    let data: Uint8Array;
    if (c.method === 0) data = raw;
    else {
      try {
        data = inflateSync(raw, { out: new Uint8Array(c.size) });
      } catch (cause) {
        throw new BadProgramError(`${label}: entry "${c.name}": its deflated data is corrupt (${(cause as Error).message})`, { cause });
      }
      if (data.length !== c.size) fail(`${where}: inflates to ${data.length} bytes, the directory says ${c.size}: corrupt`);
    }
    if (crc32(data) >>> 0 !== c.crc) fail(`${where} is corrupt: its CRC-32 does not match (a changed or damaged byte)`);
    entries.push({ name: c.name, data, method: c.method });
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) fail(`entries "${spans[i - 1]![2]}" and "${spans[i]![2]}" overlap: corrupt`);
  }
  return entries;
}
