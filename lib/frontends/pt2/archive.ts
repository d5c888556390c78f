/**
 * The .pt2 container: a zip archive (torch.export.save / torch.export.pt2_archive) whose
 * entries all live under one root folder (the file's stem, e.g. `model/`). We read the
 * entries we need with fflate, skipping pickled sample inputs and compiled artifacts.
 */
import { unzipSync } from 'fflate';

import { BadModelError, UnsupportedOpError } from '../../errors';

/** Entries the importer reads; everything else (sample inputs, AOTInductor files...) is skipped. */
function wanted(relative: string): boolean {
  return (
    relative === 'archive_format' ||
    relative === 'archive_version' ||
    relative === 'byteorder' ||
    relative.startsWith('models/') ||
    relative.startsWith('data/weights/') ||
    relative.startsWith('data/constants/') ||
    relative.startsWith('serialized_') // the legacy (pickle) layout: detected and rejected
  );
}

/** A read-only view of a .pt2 archive, addressed by paths relative to its root folder. */
export class Pt2Archive {
  private constructor(
    /** How to name the archive in messages (its path, or "pt2 buffer"). */
    readonly source: string,
    /** The root folder, with its trailing slash (`model/`), or '' when entries have none. */
    readonly root: string,
    private readonly entries: ReadonlyMap<string, Uint8Array>,
  ) {}

  /** Unzips `bytes`; a file that is not a zip archive (truncated, garbage) is E_BAD_MODEL. */
  static open(bytes: Uint8Array, source: string): Pt2Archive {
    if (bytes.length < 22) {
      throw new BadModelError(`${source}: not a .pt2 archive (${bytes.length} bytes is too short for a zip file)`, { details: { file: source } });
    }
    const corrupt = (why: string): never => {
      throw new BadModelError(
        `${source}: not a readable .pt2 archive: ${why}. The file is truncated, corrupt or not a zip file; ` +
          'save it again with torch.export.save(exported_program, "model.pt2")',
        { details: { file: source } },
      );
    };
    if (!hasCompleteEndRecord(bytes)) corrupt('no complete end-of-central-directory record');
    const names: string[] = [];
    let current: string | undefined;
    let files: Record<string, Uint8Array>;
    try {
      files = unzipSync(bytes, {
        filter: (info) => {
          names.push(info.name);
          const slash = info.name.indexOf('/');
          const keep = slash >= 0 && wanted(info.name.slice(slash + 1));
          if (keep) current = info.name;
          return keep;
        },
      });
    } catch (cause) {
      const entry = current === undefined ? '' : ` (while reading entry "${current}")`;
      throw new BadModelError(
        `${source}: not a readable .pt2 archive${entry}: ${(cause as Error).message}. The file is truncated, corrupt or not a zip file; ` +
          'save it again with torch.export.save(exported_program, "model.pt2")',
        { cause, details: { file: source, entry: current } },
      );
    }
    if (names.length === 0) throw new BadModelError(`${source}: the .pt2 archive is empty`, { details: { file: source } });
    // Garbage that happens to parse gives nonsense names: PyTorch writes short ASCII paths.
    if (names.some((n) => n.length > 1024 || !/^[\x20-\x7e]+$/.test(n))) corrupt('its directory lists entries with unreadable names');
    const marker = names.find((n) => /^[^/]+\/(archive_format|models\/[^/]+\.json)$/.test(n)) ?? names[0]!;
    const root = marker.includes('/') ? marker.slice(0, marker.indexOf('/') + 1) : '';
    const entries = new Map<string, Uint8Array>();
    for (const [name, data] of Object.entries(files)) {
      if (name.startsWith(root)) entries.set(name.slice(root.length), data);
    }
    return new Pt2Archive(source, root, entries);
  }

  /** The entry's full name inside the zip file, for messages (`model/data/weights/weight_3`). */
  entryName(relative: string): string {
    return this.root + relative;
  }

  has(relative: string): boolean {
    return this.entries.has(relative);
  }

  /** Relative paths of the entries that were read. */
  list(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** The entry's bytes; a missing entry is E_BAD_MODEL naming it and `what` it holds. */
  bytes(relative: string, what: string): Uint8Array {
    const data = this.entries.get(relative);
    if (data === undefined) {
      throw new BadModelError(`${this.source}: the archive has no entry "${this.entryName(relative)}" (${what})`, {
        details: { file: this.source, entry: this.entryName(relative) },
      });
    }
    return data;
  }

  text(relative: string, what: string): string {
    return new TextDecoder('utf-8').decode(this.bytes(relative, what));
  }

  /** The entry parsed as JSON; malformed JSON is E_BAD_MODEL naming the entry. */
  json(relative: string, what: string): unknown {
    const text = this.text(relative, what);
    try {
      return JSON.parse(text) as unknown;
    } catch (cause) {
      throw new BadModelError(`${this.source}: entry "${this.entryName(relative)}" (${what}) is not valid JSON: ${(cause as Error).message}`, {
        cause,
        details: { file: this.source, entry: this.entryName(relative) },
      });
    }
  }

  /** Checks the archive's format markers (archive_format = "pt2", little-endian data). */
  checkFormat(): void {
    if (!this.has('archive_format') && [...this.entries.keys()].some((k) => k.startsWith('serialized_'))) {
      throw new UnsupportedOpError(
        `${this.source} is a legacy torch.export archive (serialized_exported_program.json with pickled weights), which tensorrt-node does not read. ` +
          'Save it again with a recent PyTorch (2.6 or later): torch.export.save(ep, "model.pt2")',
        { details: { file: this.source } },
      );
    }
    if (this.has('archive_format')) {
      const format = this.text('archive_format', 'archive format').trim();
      if (format !== 'pt2') {
        throw new BadModelError(`${this.source}: entry "${this.entryName('archive_format')}" says "${format}", expected "pt2"`, {
          details: { file: this.source, entry: this.entryName('archive_format') },
        });
      }
    }
    if (this.has('byteorder')) {
      const order = this.text('byteorder', 'byte order').trim();
      if (order !== 'little') {
        throw new UnsupportedOpError(`${this.source}: entry "${this.entryName('byteorder')}" says the data is "${order}"-endian; only little-endian archives are supported`, {
          details: { file: this.source, entry: this.entryName('byteorder') },
        });
      }
    }
  }
}

/**
 * Whether the zip's end-of-central-directory record (signature 0x06054b50, 22 bytes plus a
 * comment) lies whole at the end of `bytes`; a truncated file loses it.
 */
function hasCompleteEndRecord(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let e = bytes.length - 22; e >= lowest; e--) {
    if (view.getUint32(e, true) === 0x06054b50) {
      const commentLength = view.getUint16(e + 20, true);
      if (e + 22 + commentLength <= bytes.length) return true;
    }
  }
  return false;
}
