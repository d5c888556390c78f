/**
 * `tensorrt-node inspect` of a tensor-parallel program file: the world size, the blocks that
 * were split, and for each rank its target device, its all-reduce segments and what
 * `inspect` says of its program file (lib/cli/inspect-command.ts, which calls this module and
 * passes its single-file inspector and formatter in, so that this module needs only the
 * report types of ./inspect-report.ts).
 */
import type { CudaDevice } from '../devices';
import { readTensorParallelFile } from '../runtime/tensor-parallel/file-read';
import type { TensorParallelManifest } from '../runtime/tensor-parallel/file-manifest';
import { fileHeader, type FileHeader, type InspectReport } from './inspect-report';

/** `inspectProgramBytes` of inspect-command.ts. */
export type ProgramInspector = (bytes: Uint8Array, file: string, label: string, available?: readonly CudaDevice[]) => Promise<InspectReport>;

/** What `inspect` reports for a tensor-parallel file (`--json` prints it). */
export interface TensorParallelInspectReport extends FileHeader {
  worldSize: number;
  /** `layer (kind)` of every split block. */
  blocks: string[];
  ranks: Array<{ rank: number; entry: string; targetDevice: { type: 'gpu'; gpuId: number }; collectiveSegments: number[]; program: InspectReport }>;
  /** Every rank entry's SHA-256, and every blob's in each rank's program file, was checked. */
  checksumsVerified: boolean;
  manifest: TensorParallelManifest;
}

/**
 * Reads and checks a tensor-parallel program file (nothing deserialized) and inspects each rank's program.
 *
 * @throws {BadProgramError} `E_BAD_PROGRAM` naming the file, and the rank and entry at fault.
 */
export async function inspectTensorParallelBytes(
  bytes: Uint8Array,
  file: string,
  label: string,
  inspectProgramBytes: ProgramInspector,
  available?: readonly CudaDevice[],
): Promise<TensorParallelInspectReport> {
  const c = readTensorParallelFile(bytes, label);
  const m = c.manifest;
  const ranks: TensorParallelInspectReport['ranks'] = [];
  for (const [r, entry] of m.ranks.entries()) {
    const program = await inspectProgramBytes(c.rankBytes[r]!, `${file}: rank ${r} (${entry.program})`, c.ranks[r]!.label, available);
    ranks.push({ rank: r, entry: entry.program, targetDevice: entry.targetDevice, collectiveSegments: entry.collectiveSegments, program });
  }
  return {
    ...fileHeader(file, bytes, m),
    worldSize: m.worldSize,
    blocks: m.blocks.map((b) => `${b.layer} (${b.kind})`),
    ranks,
    checksumsVerified: true,
    manifest: m,
  };
}

/** The human-readable form: a header, then each rank's report indented under it. */
export function formatTensorParallelInspectReport(r: TensorParallelInspectReport, formatInspectReport: (r: InspectReport) => string): string {
  const lines = [
    `${r.file}: ${r.format}, format version ${r.formatVersion}, written by ${r.writtenBy} (${r.bytes} bytes)`,
    `${r.worldSize} ranks, backend ${r.backend}; split blocks: ${r.blocks.join(', ') || 'none'}`,
  ];
  for (const rank of r.ranks) {
    lines.push('');
    const at = rank.collectiveSegments.length === 0 ? 'no all-reduce' : `all-reduces at segments ${rank.collectiveSegments.join(', ')}`;
    lines.push(`rank ${rank.rank}: ${rank.entry}, target gpu ${rank.targetDevice.gpuId}, ${at}`);
    for (const line of formatInspectReport(rank.program).split('\n')) lines.push(line === '' ? '' : `  ${line}`);
  }
  return lines.join('\n');
}
