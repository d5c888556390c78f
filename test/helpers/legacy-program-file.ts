/**
 * Program files as tensorrt-node 0.1.0 wrote them (format 1.0): engine segments, in the
 * manifest and in the stored partition report, have `"kind": "tensorrt"` whatever backend
 * built them, and the report names no backend. Made from a file this library writes, so that
 * tests can check that the old spelling still loads.
 */
import { unzipSync } from 'fflate';

import { packProgramFile, readProgramFile } from '../../lib/runtime/program-file';

type Json = Record<string, unknown>;

/** `bytes` (a single program file) rewritten as format 1.0: same blobs, old names. */
export function asFormat10ProgramFile(bytes: Uint8Array): Uint8Array {
  const contents = readProgramFile(bytes);
  const m = structuredClone(contents.manifest) as unknown as Json & { segments: Json[]; report: Json & { segments: Json[] } };
  m.formatVersion = '1.0';
  for (const s of m.segments) if (s.kind === 'engine') s.kind = 'tensorrt';
  for (const s of m.report.segments) if (s.kind === 'engine') s.kind = 'tensorrt';
  delete m.report.backend;
  return packProgramFile(m, contents.blobs);
}

/** manifest.json of a program file exactly as stored (readProgramFile renames what 1.0 files say). */
export function rawManifest(bytes: Uint8Array): Json & { formatVersion: string; segments: Json[]; report: Json & { segments: Json[] } } {
  return JSON.parse(new TextDecoder().decode(unzipSync(bytes)['manifest.json']!));
}
