/**
 * Program files as earlier versions of this library wrote them, made from a file this library
 * writes, so that tests can check that the old forms still load:
 * - format 1.1: no `profiles` on the inputs (the optimization profiles lived only in the engines);
 * - format 1.0 (tensorrt-node 0.1.0), as 1.1 and: engine segments, in the manifest and in the
 *   stored partition report, have `"kind": "tensorrt"` whatever backend built them, and the
 *   report names no backend.
 */
import { unzipSync } from 'fflate';

import { packProgramFile, readProgramFile } from '../../lib/runtime/program-file';

type Json = Record<string, unknown>;

/** `bytes` (a single program file) rewritten as format 1.1: same blobs, no input profiles. */
export function asFormat11ProgramFile(bytes: Uint8Array): Uint8Array {
  const contents = readProgramFile(bytes);
  const m = format11Manifest(contents.manifest);
  return packProgramFile(m, contents.blobs);
}

function format11Manifest(manifest: unknown): Json & { inputs: Json[]; segments: Json[]; report: Json & { segments: Json[] } } {
  const m = structuredClone(manifest) as Json & { inputs: Json[]; segments: Json[]; report: Json & { segments: Json[] } };
  m.formatVersion = '1.1';
  for (const x of m.inputs) delete x.profiles;
  return m;
}

/** `bytes` (a single program file) rewritten as format 1.0: same blobs, old names. */
export function asFormat10ProgramFile(bytes: Uint8Array): Uint8Array {
  const contents = readProgramFile(bytes);
  const m = format11Manifest(contents.manifest);
  m.formatVersion = '1.0';
  for (const s of m.segments) if (s.kind === 'engine') s.kind = 'tensorrt';
  for (const s of m.report.segments) if (s.kind === 'engine') s.kind = 'tensorrt';
  delete m.report.backend;
  return packProgramFile(m, contents.blobs);
}

/** manifest.json of a program file exactly as stored (readProgramFile renames what 1.0 files say). */
export function rawManifest(bytes: Uint8Array): Json & { formatVersion: string; inputs: Json[]; segments: Json[]; report: Json & { segments: Json[] } } {
  return JSON.parse(new TextDecoder().decode(unzipSync(bytes)['manifest.json']!));
}
