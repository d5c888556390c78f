/**
 * Reading tensor-parallel program files without deserializing anything: the container, the
 * top-level manifest (format, version, world size, ranks, blocks), every rank entry's size
 * and SHA-256, and then each rank's program file as a single program file is read
 * (lib/runtime/program-file/read.ts), its messages naming the rank and its entry.
 */
import { MANIFEST_ENTRY } from '../program-file/manifest';
import { checkFormatVersion, openArchive, readBlobs } from '../program-file/read';
import { describe, Reader } from '../program-file/reader';
import { readProgramFile } from '../program-file/read';
import { MAX_RANKS, RANK_ENTRY, TENSOR_PARALLEL_FORMAT, TENSOR_PARALLEL_FORMAT_VERSION, type TensorParallelFileContents, type TensorParallelManifest } from './file-manifest';

/** Whether `bytes` look like a tensor-parallel program file (its manifest says so); any doubt is false, for the strict readers to explain. */
export function isTensorParallelFile(bytes: Uint8Array): boolean {
  try {
    const { json } = openArchive(bytes, 'program buffer');
    return typeof json === 'object' && json !== null && (json as Record<string, unknown>).format === TENSOR_PARALLEL_FORMAT;
  } catch {
    return false;
  }
}

function readBlocks(r: Reader, x: unknown): void {
  r.array(x, 'blocks').forEach((b, i) => {
    const what = `blocks[${i}]`;
    const o = r.object(b, what, { required: ['kind', 'layer', 'anchor', 'columns', 'row'], optional: ['heads', 'kvHeads', 'kvMode', 'hidden'] });
    if (o.kind !== 'attention' && o.kind !== 'mlp') r.fail(`${what}.kind is ${describe(o.kind)}, not "attention" or "mlp"`);
    r.string(o.layer, `${what}.layer`);
    r.string(o.anchor, `${what}.anchor`);
    r.array(o.columns, `${what}.columns`).forEach((c, k) => {
      const col = r.object(c, `${what}.columns[${k}]`, { required: ['node', 'role', 'weight'] });
      for (const key of ['node', 'role', 'weight']) r.string(col[key], `${what}.columns[${k}].${key}`);
    });
    const row = r.object(o.row, `${what}.row`, { required: ['node', 'weight'] });
    r.string(row.node, `${what}.row.node`);
    r.string(row.weight, `${what}.row.weight`);
    for (const key of ['heads', 'kvHeads', 'hidden']) if (o[key] !== undefined) r.index(o[key], `${what}.${key}`);
    if (o.kvMode !== undefined && o.kvMode !== 'divide' && o.kvMode !== 'replicate') r.fail(`${what}.kvMode is ${describe(o.kvMode)}, not "divide" or "replicate"`);
  });
}

/**
 * Reads and checks a tensor-parallel program file: everything but deserializing graphs and
 * engines (what `inspect` shows, and the first half of loading).
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the file, and the rank and entry where one is at fault.
 */
export function readTensorParallelFile(bytes: Uint8Array, label = 'tensor-parallel program buffer'): TensorParallelFileContents {
  const opened = openArchive(bytes, label);
  const r: Reader = opened.r;
  const m = r.object(opened.json, MANIFEST_ENTRY);
  if (m.format !== TENSOR_PARALLEL_FORMAT) {
    const single = m.format === 'tensorrt-node program' ? ': it holds a single program; load it with loadProgram()' : '';
    r.fail(`${MANIFEST_ENTRY} says format ${describe(m.format)}, not "${TENSOR_PARALLEL_FORMAT}"${single}`, { format: m.format });
  }
  const lib = typeof m.library === 'object' && m.library !== null ? (m.library as Record<string, unknown>) : {};
  checkFormatVersion(m.formatVersion, label, typeof lib.version === 'string' ? lib.version : undefined, TENSOR_PARALLEL_FORMAT_VERSION);
  r.object(m, MANIFEST_ENTRY, { required: ['format', 'formatVersion', 'library', 'backend', 'worldSize', 'blocks', 'ranks', 'blobs'] });
  const library = r.object(m.library, 'library', { required: ['name', 'version'] });
  if (library.name !== 'tensorrt-node') r.fail(`library.name is ${describe(library.name)}, not "tensorrt-node"`);
  r.string(library.version, 'library.version');
  const backend = r.string(m.backend, 'backend');
  const n = r.index(m.worldSize, 'worldSize');
  if (n < 1 || n > MAX_RANKS) r.fail(`worldSize is ${n}: a tensor-parallel program has 1 to ${MAX_RANKS} ranks`);
  readBlocks(r, m.blocks);
  const ranks = r.array(m.ranks, 'ranks');
  if (ranks.length !== n) r.fail(`worldSize is ${n}, but ranks lists ${ranks.length} rank(s)`, { missingRanks: ranks.length < n });
  const referenced = new Set<string>();
  ranks.forEach((x, i) => {
    const what = `ranks[${i}]`;
    const o = r.object(x, what, { required: ['rank', 'program', 'targetDevice', 'collectiveSegments'] });
    if (r.index(o.rank, `${what}.rank`) !== i) r.fail(`${what}.rank is ${describe(o.rank)}: rank ${i} must be at index ${i}`);
    const entry = r.string(o.program, `${what}.program`);
    if (!RANK_ENTRY.test(entry)) r.fail(`${what}.program names ${describe(entry)}, which is not a rank entry (ranks/rank<r>.trtp)`);
    if (referenced.has(entry)) r.fail(`${what}.program names "${entry}", which another rank already uses`);
    referenced.add(entry);
    const dev = r.object(o.targetDevice, `${what}.targetDevice`, { required: ['type', 'gpuId'] });
    if (dev.type !== 'gpu') r.fail(`${what}.targetDevice.type is ${describe(dev.type)}, not "gpu"`);
    r.index(dev.gpuId, `${what}.targetDevice.gpuId`);
    r.array(o.collectiveSegments, `${what}.collectiveSegments`).forEach((s, k) => r.index(s, `${what}.collectiveSegments[${k}]`));
  });
  const blobs = readBlobs(opened, m.blobs, referenced, (name) => RANK_ENTRY.test(name));
  const manifest = m as unknown as TensorParallelManifest;
  const rankFiles = manifest.ranks.map((rank) => {
    const contents = readProgramFile(blobs.get(rank.program)!, `${label}: rank ${rank.rank} ("${rank.program}")`);
    if (contents.manifest.backend !== backend) {
      r.fail(`rank ${rank.rank} ("${rank.program}") was compiled for the backend "${contents.manifest.backend}", the file says "${backend}"`, { rank: rank.rank });
    }
    return contents;
  });
  return { manifest, ranks: rankFiles, rankBytes: manifest.ranks.map((rank) => blobs.get(rank.program)!), label };
}
