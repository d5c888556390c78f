/**
 * What `inspect` reports of every kind of program file, single or tensor-parallel (shared by
 * inspect-command.ts and inspect-tensor-parallel.ts).
 */

/** The report fields every kind of program file has. */
export interface FileHeader {
  file: string;
  bytes: number;
  format: string;
  formatVersion: string;
  writtenBy: string;
  backend: string;
}

/** The {@link FileHeader} of a file's manifest. */
export function fileHeader(
  file: string,
  bytes: Uint8Array,
  m: { format: string; formatVersion: string; library: { name: string; version: string }; backend: string },
): FileHeader {
  return { file, bytes: bytes.byteLength, format: m.format, formatVersion: m.formatVersion, writtenBy: `${m.library.name} ${m.library.version}`, backend: m.backend };
}
