/**
 * One strict zip reader for every archive tensorrt-node opens (`.trtp` program files and
 * `.pt2` archives). Archives come from disks and networks, so nothing in them is trusted.
 *
 * {@link ZipArchive.open} validates the whole directory before inflating a single byte:
 * the end record (and the ZIP64 end record when there is one), the entry count, every
 * central header, every local header against its central header, that every entry's bytes
 * lie inside the file and no two entries overlap, names (UTF-8, relative, no `..`, unique),
 * methods (stored or deflate), and the declared sizes and compression ratios against
 * {@link ZipLimits}, each entry's and all deflated entries' together (many small entries
 * must not add up to a bomb). Only then can entries be read, one at a time, on request
 * ({@link ZipArchive.read}): stored entries are views of the input, deflated ones are
 * inflated with an output bound of their declared size, and every entry's CRC-32 is checked.
 * Reading the same entry again inflates it again, so what reads inflate in all is bounded
 * by the same ratio.
 *
 * Failures are {@link ZipError}s (not library errors): each caller wraps them in its own
 * typed error (`E_BAD_PROGRAM`, `E_BAD_MODEL`) naming the file. The entry is in `entry`.
 */
import { crc32, inflateRawSync } from 'node:zlib';

/** Limits on what an archive may declare; see docs/fuzzing.md ("Zip limits"). */
export interface ZipLimits {
  /** Most entries in the central directory (default 10,000). */
  maxEntries: number;
  /** Longest entry name, in UTF-8 bytes (default 1,024). */
  maxNameBytes: number;
  /** Largest declared inflated size of one deflated entry (default 2 GiB). Stored entries are views of the input and cost nothing. */
  maxInflatedEntryBytes: number;
  /** Largest sum of the declared inflated sizes of all deflated entries (default 4 GiB). */
  maxInflatedTotalBytes: number;
  /**
   * Highest inflated/compressed ratio (default 200; deflate's own ceiling is about 1032), of
   * each deflated entry, of all deflated entries together, and of all reads together (the
   * bytes inflated by {@link ZipArchive.read}, an entry read twice counting twice, against
   * the compressed bytes of all deflated entries)...
   */
  maxRatio: number;
  /** ...checked only above this many inflated bytes (default 1 MiB; per entry, and in all), so small runs of zeros stay readable. */
  ratioFloorBytes: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 10_000,
  maxNameBytes: 1024,
  maxInflatedEntryBytes: 2 * 1024 ** 3,
  maxInflatedTotalBytes: 4 * 1024 ** 3,
  maxRatio: 200,
  ratioFloorBytes: 1024 ** 2,
});

/** A malformed, corrupt or over-limit archive; `entry` names the entry concerned, when one is. */
export class ZipError extends Error {
  constructor(
    message: string,
    readonly entry?: string,
  ) {
    super(message);
  }

  override get name(): string {
    return 'ZipError';
  }
}

/** What the central directory says of one entry (after validation). */
export interface ZipEntryInfo {
  readonly name: string;
  /** 0 (stored) or 8 (deflate). */
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  /** Where the entry's (compressed) data starts in the archive. */
  readonly dataStart: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_BYTES = 22;
const ZIP64_EOCD_BYTES = 56;
const ZIP64_LOCATOR_BYTES = 20;
const CENTRAL_BYTES = 46;
const LOCAL_BYTES = 30;
const ZIP64_EXTRA_ID = 0x0001;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

/** Little-endian field access that never reads past `bytes` (a read past the end is a ZipError). */
class Fields {
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private check(at: number, width: number): void {
    if (at < 0 || at + width > this.bytes.length) throw new ZipError(`a header field at offset ${at} lies past the end of the file (truncated or corrupt)`);
  }

  u16(at: number): number {
    this.check(at, 2);
    return this.view.getUint16(at, true);
  }

  u32(at: number): number {
    this.check(at, 4);
    return this.view.getUint32(at, true);
  }

  /** A 64-bit field; values past 2^53 cannot be offsets or sizes of anything in memory. */
  u64(at: number, what: string): number {
    this.check(at, 8);
    const value = this.view.getBigUint64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError(`its ${what} (${value}) is absurdly large: corrupt`);
    return Number(value);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why `name` is not a sane relative entry name, or undefined when it is. */
function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains control characters';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  const segments = name.split('/');
  // A trailing slash (a directory entry) leaves one empty last segment, which is fine.
  if (segments.slice(0, -1).some((s) => s === '') || segments.some((s) => s === '.' || s === '..')) return 'has an empty, "." or ".." path segment';
  return undefined;
}

/** The ZIP64 extended-information extra field's body in `extra` (offset, length), if present. */
function findZip64Extra(f: Fields, at: number, length: number): { at: number; length: number } | undefined {
  const end = at + length;
  let p = at;
  while (p + 4 <= end) {
    const id = f.u16(p);
    const size = f.u16(p + 2);
    if (p + 4 + size > end) throw new ZipError('an extra field runs past its header (corrupt)');
    if (id === ZIP64_EXTRA_ID) return { at: p + 4, length: size };
    p += 4 + size;
  }
  return undefined;
}

interface Directory {
  count: number;
  offset: number;
  size: number;
  /** Where the central directory must end: the ZIP64 end record, or the end record. */
  end: number;
}

/** Finds and checks the end-of-central-directory record (and its ZIP64 form). */
function readDirectoryLocation(bytes: Uint8Array, f: Fields, limits: ZipLimits): Directory {
  if (bytes.length < EOCD_BYTES) throw new ZipError(`${bytes.length} bytes is too short for a zip archive (truncated?)`);
  // The end record is the last one whose comment runs exactly to the end of the file.
  let eocd = -1;
  for (let at = bytes.length - EOCD_BYTES; at >= Math.max(0, bytes.length - EOCD_BYTES - U16_MAX); at--) {
    if (f.u32(at) === EOCD_SIGNATURE && at + EOCD_BYTES + f.u16(at + 20) === bytes.length) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('no zip end-of-central-directory record (truncated, or not a zip archive)');
  const disk = f.u16(eocd + 4);
  const cdDisk = f.u16(eocd + 6);
  const onDisk = f.u16(eocd + 8);
  let count = f.u16(eocd + 10);
  let size = f.u32(eocd + 12);
  let offset = f.u32(eocd + 16);
  let end = eocd;
  const locator = eocd - ZIP64_LOCATOR_BYTES;
  if (locator >= 0 && f.u32(locator) === ZIP64_LOCATOR_SIGNATURE) {
    if (f.u32(locator + 4) !== 0 || f.u32(locator + 16) !== 1) throw new ZipError('multi-disk (spanned) zip archives are not supported');
    const record = f.u64(locator + 8, 'ZIP64 end record offset');
    if (record + ZIP64_EOCD_BYTES > locator || f.u32(record) !== ZIP64_EOCD_SIGNATURE) {
      throw new ZipError('its ZIP64 end-of-central-directory locator points at no ZIP64 end record (corrupt)');
    }
    // The record may carry an extensible data sector after its 56 fixed bytes; it must end at the locator.
    if (record + 12 + f.u64(record + 4, 'ZIP64 end record size') !== locator) throw new ZipError('its ZIP64 end record does not end where its locator starts (corrupt)');
    if (f.u32(record + 16) !== 0 || f.u32(record + 20) !== 0) throw new ZipError('multi-disk (spanned) zip archives are not supported');
    const count64 = f.u64(record + 32, 'entry count');
    if (f.u64(record + 24, 'entry count on this disk') !== count64) throw new ZipError('its ZIP64 end record gives two different entry counts (corrupt)');
    const size64 = f.u64(record + 40, 'central directory size');
    const offset64 = f.u64(record + 48, 'central directory offset');
    // Where the classic record has a real value (not the 0xFF.. "see ZIP64" marker), both must agree.
    if ((count !== U16_MAX && count !== count64) || (size !== U32_MAX && size !== size64) || (offset !== U32_MAX && offset !== offset64)) {
      throw new ZipError('its end record and its ZIP64 end record disagree on the central directory (corrupt)');
    }
    count = count64;
    size = size64;
    offset = offset64;
    end = record;
  } else {
    if (count === U16_MAX || size === U32_MAX || offset === U32_MAX) throw new ZipError('its end record asks for ZIP64 values, but there is no ZIP64 end record (truncated or corrupt)');
    if (disk !== 0 || cdDisk !== 0 || onDisk !== count) throw new ZipError('multi-disk (spanned) zip archives are not supported (or its end record is corrupt)');
  }
  if (count > limits.maxEntries) throw new ZipError(`it declares ${count} entries, more than the limit of ${limits.maxEntries}`);
  if (offset + size !== end) {
    throw new ZipError(`its central directory (${size} bytes at offset ${offset}) does not end where the end record starts (offset ${end}): corrupt or truncated`);
  }
  // Each central header is at least 46 bytes: a count the directory cannot hold is a lie.
  if (count * CENTRAL_BYTES > size) throw new ZipError(`it declares ${count} entries, but its ${size}-byte central directory cannot hold them (corrupt)`);
  return { count, offset, size, end };
}

interface Central {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Reads central header `i` at `at`; returns it and where the next one starts. */
function readCentral(bytes: Uint8Array, f: Fields, at: number, i: number, dir: Directory, limits: ZipLimits): { entry: Central; next: number } {
  if (at + CENTRAL_BYTES > dir.end) throw new ZipError(`central directory entry ${i} runs past the central directory`);
  if (f.u32(at) !== CENTRAL_SIGNATURE) throw new ZipError(`central directory entry ${i} has a bad signature (corrupt)`);
  const flags = f.u16(at + 8);
  const method = f.u16(at + 10);
  const crc = f.u32(at + 16);
  let compressedSize = f.u32(at + 20);
  let size = f.u32(at + 24);
  const nameLength = f.u16(at + 28);
  const extraLength = f.u16(at + 30);
  const commentLength = f.u16(at + 32);
  let startDisk = f.u16(at + 34);
  let localOffset = f.u32(at + 42);
  const next = at + CENTRAL_BYTES + nameLength + extraLength + commentLength;
  if (next > dir.end) throw new ZipError(`central directory entry ${i} runs past the central directory`);
  if (nameLength > limits.maxNameBytes) throw new ZipError(`central directory entry ${i} has a ${nameLength}-byte name, longer than the limit of ${limits.maxNameBytes}`);
  let name: string;
  try {
    name = utf8.decode(bytes.subarray(at + CENTRAL_BYTES, at + CENTRAL_BYTES + nameLength));
  } catch {
    throw new ZipError(`central directory entry ${i} has a name that is not UTF-8`);
  }
  const problem = nameProblem(name);
  if (problem !== undefined) throw new ZipError(`central directory entry ${i} (${JSON.stringify(name)}) has a name that ${problem}`, name);
  if (size === U32_MAX || compressedSize === U32_MAX || localOffset === U32_MAX || startDisk === U16_MAX) {
    // ZIP64: the extra field holds, in this order, only the values whose classic field is saturated.
    const z = findZip64Extra(f, at + CENTRAL_BYTES + nameLength, extraLength);
    if (z === undefined) throw new ZipError(`entry "${name}" needs a ZIP64 extra field and has none (corrupt)`, name);
    let p = z.at;
    const take = (what: string): number => {
      if (p + 8 > z.at + z.length) throw new ZipError(`entry "${name}": its ZIP64 extra field is too short for its ${what} (corrupt)`, name);
      const v = f.u64(p, `${what} of entry "${name}"`);
      p += 8;
      return v;
    };
    if (size === U32_MAX) size = take('size');
    if (compressedSize === U32_MAX) compressedSize = take('compressed size');
    if (localOffset === U32_MAX) localOffset = take('local header offset');
    if (startDisk === U16_MAX) {
      if (p + 4 > z.at + z.length) throw new ZipError(`entry "${name}": its ZIP64 extra field is too short for its disk number (corrupt)`, name);
      startDisk = f.u32(p);
    }
  }
  if (startDisk !== 0) throw new ZipError(`entry "${name}" starts on disk ${startDisk}: multi-disk archives are not supported`, name);
  return { entry: { name, method, flags, crc, compressedSize, size, localOffset }, next };
}

/** Checks one entry's declared method, flags, sizes and ratio against the limits. */
function checkDeclared(c: Central, limits: ZipLimits): void {
  const where = `entry "${c.name}"`;
  const fail = (message: string): never => {
    throw new ZipError(`${where} ${message}`, c.name);
  };
  if (c.flags & 0x1) fail('is encrypted, which is not supported');
  if (c.flags & 0x40) fail('uses strong encryption, which is not supported');
  if (c.method !== 0 && c.method !== 8) fail(`uses compression method ${c.method} (only 0, stored, and 8, deflate, are read)`);
  if (c.method === 0 && c.size !== c.compressedSize) fail(`is stored but its sizes differ (${c.compressedSize} and ${c.size} bytes): corrupt`);
  if (c.method !== 8) return;
  if (c.size > limits.maxInflatedEntryBytes) fail(`inflates to ${c.size} bytes, more than the limit of ${limits.maxInflatedEntryBytes}`);
  // Deflate needs at least 2 bytes for any stream, and cannot beat about 1032:1.
  if (c.compressedSize < 2 || c.size > c.compressedSize * 1032 + 1024) fail(`announces ${c.size} bytes from ${c.compressedSize} compressed: impossible, corrupt`);
  if (c.size > limits.ratioFloorBytes && c.size > c.compressedSize * limits.maxRatio) {
    fail(`inflates ${c.compressedSize} bytes to ${c.size} (ratio ${Math.round(c.size / c.compressedSize)}:1), above the limit of ${limits.maxRatio}:1 (a zip bomb?)`);
  }
}

/** Checks the local header of `c` against it; returns where its data starts. */
function checkLocal(bytes: Uint8Array, f: Fields, c: Central, dataLimit: number): number {
  const where = `entry "${c.name}"`;
  const fail = (message: string): never => {
    throw new ZipError(`${where}: ${message}`, c.name);
  };
  const lo = c.localOffset;
  if (lo + LOCAL_BYTES > dataLimit) fail(`its local header (offset ${lo}) lies outside the archive's data (truncated or corrupt)`);
  if (f.u32(lo) !== LOCAL_SIGNATURE) fail(`bad local header signature at offset ${lo} (corrupt)`);
  const flags = f.u16(lo + 6);
  const method = f.u16(lo + 8);
  const crc = f.u32(lo + 14);
  let compressedSize = f.u32(lo + 18);
  let size = f.u32(lo + 22);
  const nameLength = f.u16(lo + 26);
  const extraLength = f.u16(lo + 28);
  const dataStart = lo + LOCAL_BYTES + nameLength + extraLength;
  if (dataStart > dataLimit) fail('its local header runs past the archive\'s data (truncated or corrupt)');
  if (method !== c.method || (flags & 0x41) !== (c.flags & 0x41)) fail('its local header disagrees with the central directory (method or flags): corrupt');
  let localName: string | undefined;
  try {
    localName = utf8.decode(bytes.subarray(lo + LOCAL_BYTES, lo + LOCAL_BYTES + nameLength));
  } catch {
    localName = undefined;
  }
  if (localName !== c.name) fail('its local header names another entry: corrupt');
  if (size === U32_MAX || compressedSize === U32_MAX) {
    const z = findZip64Extra(f, lo + LOCAL_BYTES + nameLength, extraLength);
    if (z === undefined || z.length < 16) fail('its local header needs a ZIP64 extra field with both sizes and has none (corrupt)');
    size = f.u64(z!.at, `size of entry "${c.name}"`);
    compressedSize = f.u64(z!.at + 8, `compressed size of entry "${c.name}"`);
  }
  // With a data descriptor (flag bit 3) the local header may leave CRC and sizes zero.
  const described = (c.flags & 0x8) !== 0 && crc === 0 && compressedSize === 0 && size === 0;
  if (!described && (crc !== c.crc || compressedSize !== c.compressedSize || size !== c.size)) {
    fail('its local header and the central directory disagree on its CRC or sizes: corrupt');
  }
  if (dataStart + c.compressedSize > dataLimit) fail(`its ${c.compressedSize} bytes of data run past the archive's data (truncated or corrupt)`);
  return dataStart;
}

/** A validated zip archive whose entries are read (inflated, CRC-checked) on request. */
export class ZipArchive {
  private readonly byName: ReadonlyMap<string, ZipEntryInfo>;
  /** Entries whose CRC-32 has been verified (stored ones are views, so reading again is free). */
  private readonly verified = new Set<string>();
  /** Bytes inflated by read() so far, every read counted. */
  private inflatedByReads = 0;

  private constructor(
    private readonly bytes: Uint8Array,
    /** Every entry, in central-directory order. */
    readonly entries: readonly ZipEntryInfo[],
    private readonly limits: Readonly<ZipLimits>,
    /** Compressed bytes of all deflated entries. */
    private readonly deflatedBytes: number,
  ) {
    this.byName = new Map(entries.map((e) => [e.name, e]));
  }

  /**
   * Validates the archive's whole directory; inflates nothing.
   *
   * @throws {ZipError} for anything malformed, corrupt, unsupported or over `limits`.
   */
  static open(bytes: Uint8Array, limits: Partial<ZipLimits> = {}): ZipArchive {
    const l: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...limits };
    const f = new Fields(bytes);
    const dir = readDirectoryLocation(bytes, f, l);
    const central: Central[] = [];
    const names = new Set<string>();
    let at = dir.offset;
    let inflatedTotal = 0;
    let deflatedTotal = 0;
    for (let i = 0; i < dir.count; i++) {
      const { entry, next } = readCentral(bytes, f, at, i, dir, l);
      if (names.has(entry.name)) throw new ZipError(`entry "${entry.name}" appears twice`, entry.name);
      names.add(entry.name);
      checkDeclared(entry, l);
      if (entry.method === 8) {
        inflatedTotal += entry.size;
        deflatedTotal += entry.compressedSize;
        if (inflatedTotal > l.maxInflatedTotalBytes) {
          throw new ZipError(`its deflated entries inflate to more than the limit of ${l.maxInflatedTotalBytes} bytes in all (a zip bomb?)`, entry.name);
        }
      }
      central.push(entry);
      at = next;
    }
    if (at !== dir.end) throw new ZipError(`the central directory holds ${dir.end - at} bytes after its ${dir.count} entries: corrupt`);
    // Entries up to ratioFloorBytes skip the ratio check one by one; together they may not:
    // a thousand 1 MiB entries of zeros are 1 GiB from about 1 MB of file.
    if (inflatedTotal > l.ratioFloorBytes && inflatedTotal > deflatedTotal * l.maxRatio) {
      throw new ZipError(
        `its deflated entries inflate ${deflatedTotal} bytes to ${inflatedTotal} in all (ratio ${Math.round(inflatedTotal / deflatedTotal)}:1), ` +
          `above the limit of ${l.maxRatio}:1 (a zip bomb of many small entries?)`,
      );
    }

    // Entries must lie before the directory and must not share bytes: sharing is how
    // "many entries, one stream" bombs multiply a small file.
    const spans: Array<{ start: number; end: number; name: string }> = [];
    const entries: ZipEntryInfo[] = central.map((c) => {
      const dataStart = checkLocal(bytes, f, c, dir.offset);
      spans.push({ start: c.localOffset, end: dataStart + c.compressedSize, name: c.name });
      return Object.freeze({ name: c.name, method: c.method, crc: c.crc, compressedSize: c.compressedSize, size: c.size, dataStart });
    });
    spans.sort((a, b) => a.start - b.start);
    for (let i = 1; i < spans.length; i++) {
      if (spans[i]!.start < spans[i - 1]!.end) {
        throw new ZipError(`entries "${spans[i - 1]!.name}" and "${spans[i]!.name}" overlap: corrupt (or a zip bomb)`, spans[i]!.name);
      }
    }
    return new ZipArchive(bytes, Object.freeze(entries), Object.freeze(l), deflatedTotal);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The entry's directory record, or undefined. */
  info(name: string): ZipEntryInfo | undefined {
    return this.byName.get(name);
  }

  /**
   * The entry's bytes: a view of the archive for stored entries, a new buffer of at most the
   * declared size for deflated ones. Its CRC-32 is checked.
   *
   * @throws {ZipError} when the entry is absent, its data is corrupt or does not inflate to its
   *   declared size, or reading it would take the bytes inflated by all reads past the ratio
   *   limit (the same deflated entries read over and over).
   */
  read(name: string): Uint8Array {
    const e = this.byName.get(name);
    if (e === undefined) throw new ZipError(`there is no entry "${name}"`, name);
    const raw = this.bytes.subarray(e.dataStart, e.dataStart + e.compressedSize);
    let data: Uint8Array;
    if (e.method === 0) data = raw;
    else {
      // Every entry fits once (open() checked the declared total against the same limit);
      // reading entries again inflates them again, and that work is bounded too.
      const { maxRatio, ratioFloorBytes } = this.limits;
      const after = this.inflatedByReads + e.size;
      if (after > ratioFloorBytes && after > this.deflatedBytes * maxRatio) {
        throw new ZipError(
          `entry "${name}": reading it would make the bytes inflated from this archive ${after}, from ${this.deflatedBytes} deflated bytes ` +
            `(ratio ${Math.round(after / this.deflatedBytes)}:1), above the limit of ${maxRatio}:1 (entries read over and over?)`,
          name,
        );
      }
      this.inflatedByReads += e.size;
      try {
        // The bound stops inflating as soon as the output passes the declared size.
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) });
      } catch (cause) {
        const why = (cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? `inflates to more than its declared ${e.size} bytes` : `its deflated data is corrupt (${(cause as Error).message})`;
        throw new ZipError(`entry "${name}": ${why}`, name);
      }
      if (data.length !== e.size) throw new ZipError(`entry "${name}": inflates to ${data.length} bytes, the directory says ${e.size}: corrupt`, name);
    }
    if (!this.verified.has(name)) {
      if (crc32(data) >>> 0 !== e.crc) throw new ZipError(`entry "${name}" is corrupt: its CRC-32 does not match (a changed or damaged byte)`, name);
      if (e.method === 0) this.verified.add(name);
    }
    return data;
  }
}

/**
 * Runs `read` and turns a {@link ZipError} into the caller's typed error: `make` gets the
 * zip problem (to prefix with the file's name) and details naming `file` and the entry.
 * Any other exception passes through unchanged.
 */
export function withZipErrors<T>(read: () => T, file: string, make: (message: string, options: { cause: unknown; details: Record<string, unknown> }) => Error): T {
  try {
    return read();
  } catch (cause) {
    if (!(cause instanceof ZipError)) throw cause;
    const details: Record<string, unknown> = { file };
    if (cause.entry !== undefined) details.entry = cause.entry;
    throw make(cause.message, { cause, details });
  }
}
