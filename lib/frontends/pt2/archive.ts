/**
 * The .pt2 container: a zip archive (torch.export.save / torch.export.pt2_archive) whose
 * entries all live under one root folder (the file's stem, e.g. `model/`). The strict zip
 * reader (lib/io/zip) validates the whole directory when the archive is opened; entries are
 * inflated and CRC-checked only when the importer asks for them, so pickled sample inputs
 * and compiled artifacts are never read.
 */
import { BadModelError, UnsupportedOpError } from '../../errors';
import { withZipErrors, ZipArchive } from '../../io/zip/reader';

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

const RESAVE = 'The file is truncated, corrupt or not a zip file; save it again with torch.export.save(exported_program, "model.pt2")';

/** A zip-level problem of the archive `source` as E_BAD_MODEL, with the advice to save it again. */
const badArchive =
  (source: string) =>
  (problem: string, options: { cause: unknown; details: Record<string, unknown> }): BadModelError =>
    new BadModelError(`${source}: not a readable .pt2 archive: ${problem}. ${RESAVE}`, options);

/** A read-only view of a .pt2 archive, addressed by paths relative to its root folder. */
export class Pt2Archive {
  private constructor(
    /** How to name the archive in messages (its path, or "pt2 buffer"). */
    readonly source: string,
    /** The root folder, with its trailing slash (`model/`), or '' when entries have none. */
    readonly root: string,
    private readonly zip: ZipArchive,
    /** The entries the importer may read, by relative path. */
    private readonly entries: ReadonlySet<string>,
  ) {}

  /** Validates the zip directory of `bytes`; a file that is not a sound zip archive (truncated, garbage, a zip bomb) is E_BAD_MODEL. */
  static open(bytes: Uint8Array, source: string): Pt2Archive {
    const zip = withZipErrors(() => ZipArchive.open(bytes), source, badArchive(source));
    const names = zip.entries.map((e) => e.name);
    if (names.length === 0) throw new BadModelError(`${source}: the .pt2 archive is empty`, { details: { file: source } });
    const marker = names.find((n) => /^[^/]+\/(archive_format|models\/[^/]+\.json)$/.test(n)) ?? names[0]!;
    const root = marker.includes('/') ? marker.slice(0, marker.indexOf('/') + 1) : '';
    const entries = new Set<string>();
    for (const name of names) {
      if (root !== '' && name.startsWith(root) && wanted(name.slice(root.length))) entries.add(name.slice(root.length));
    }
    return new Pt2Archive(source, root, zip, entries);
  }

  /** The entry's full name inside the zip file, for messages (`model/data/weights/weight_3`). */
  entryName(relative: string): string {
    return this.root + relative;
  }

  has(relative: string): boolean {
    return this.entries.has(relative);
  }

  /** Relative paths of the entries the importer may read. */
  list(): string[] {
    return [...this.entries].sort();
  }

  /** Checks that the entry exists without reading it; a missing entry is E_BAD_MODEL naming it and `what` it holds. */
  require(relative: string, what: string): void {
    if (!this.entries.has(relative)) {
      throw new BadModelError(`${this.source}: the archive has no entry "${this.entryName(relative)}" (${what})`, {
        details: { file: this.source, entry: this.entryName(relative) },
      });
    }
  }

  /** The entry's bytes (inflated and CRC-checked now); a missing entry is E_BAD_MODEL naming it and `what` it holds. */
  bytes(relative: string, what: string): Uint8Array {
    this.require(relative, what);
    return withZipErrors(() => this.zip.read(this.root + relative), this.source, badArchive(this.source));
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
    if (!this.has('archive_format') && [...this.entries].some((k) => k.startsWith('serialized_'))) {
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
