/**
 * Writing tensor-parallel program files: each rank saved as an ordinary program file
 * (lib/runtime/program-file/write.ts), the files stored as entries of one archive under a
 * manifest naming the ranks. Takes the program's plain parts, not the class (program.ts
 * delegates here; file-load.ts builds programs), so that the modules stay acyclic.
 */
import * as fs from 'node:fs';

import { InvalidArgumentError } from '../../errors';
import { defineEntry } from '../../io/json-blobs';
import type { SymbolRange } from '../../ir/symbolic';
import type { BlockSharding } from '../../lowering/sharding/shard';
import type { PartitionReport } from '../../partitioning/partition';
import { VERSION } from '../../version';
import { packProgramFile, saveProgramBuffer, sha256 } from '../program-file/write';
import type { ProgramData } from '../segments';
import { rankEntry, TENSOR_PARALLEL_FORMAT, TENSOR_PARALLEL_FORMAT_VERSION, type TensorParallelManifest } from './file-manifest';

/** What a tensor-parallel program file holds (a TensorParallelProgram is one). */
export interface SavableTensorParallel {
  readonly ranks: ReadonlyArray<{
    readonly rank: number;
    readonly data: ProgramData;
    readonly report: PartitionReport;
    readonly backend: string;
    readonly targetDevice: { type: 'gpu'; gpuId: number };
    readonly collectiveSegments: readonly number[];
  }>;
  readonly blocks: readonly BlockSharding[];
  readonly symbolRanges: ReadonlyMap<string, SymbolRange>;
  readonly backend: string;
}

/** The program as tensor-parallel `.trtp` bytes (docs/program-format.md). */
export function saveTensorParallelBuffer(program: SavableTensorParallel): Uint8Array {
  const blobs = new Map<string, Uint8Array>();
  const manifest: TensorParallelManifest = {
    format: TENSOR_PARALLEL_FORMAT,
    formatVersion: `${TENSOR_PARALLEL_FORMAT_VERSION.major}.${TENSOR_PARALLEL_FORMAT_VERSION.minor}`,
    library: { name: 'tensorrt-node', version: VERSION },
    backend: program.backend,
    worldSize: program.ranks.length,
    blocks: structuredClone([...program.blocks]),
    ranks: program.ranks.map((r) => {
      const entry = rankEntry(r.rank);
      blobs.set(entry, saveProgramBuffer({ data: r.data, report: r.report, backend: r.backend, symbolRanges: program.symbolRanges }));
      return { rank: r.rank, program: entry, targetDevice: { type: 'gpu', gpuId: r.targetDevice.gpuId }, collectiveSegments: [...r.collectiveSegments] };
    }),
    blobs: {},
  };
  for (const [name, bytes] of blobs) defineEntry(manifest.blobs, name, { sha256: sha256(bytes), bytes: bytes.byteLength });
  return packProgramFile(manifest, blobs);
}

/** Writes the program to `file` as one tensor-parallel `.trtp` file. */
export async function saveTensorParallel(program: SavableTensorParallel, file: string): Promise<void> {
  if (typeof file !== 'string' || file.length === 0) throw new InvalidArgumentError('save: the path must be a non-empty string');
  await fs.promises.writeFile(file, saveTensorParallelBuffer(program));
}
