/**
 * The tensor-parallel program file: one zip archive whose `manifest.json` names the world
 * size and, per rank, the entry holding that rank's program file (an ordinary `.trtp`, with
 * its own manifest and SHA-256s), its target device and its collective segments. Shared by
 * the writer (file-write.ts), the reader (file-read.ts) and the loader (file-load.ts);
 * docs/program-format.md ("Tensor-parallel program files") describes it.
 */
import { TENSOR_PARALLEL_FORMAT } from '../program-file/manifest';
import type { BlockSharding } from '../../lowering/sharding/shard';
import type { ProgramFileContents } from '../program-file/manifest';

export { TENSOR_PARALLEL_FORMAT };

/** The version this library writes, and the newest it reads (the same rules as single program files). */
export const TENSOR_PARALLEL_FORMAT_VERSION = { major: 1, minor: 0 } as const;

/** The most ranks a file may hold (a sanity bound on untrusted manifests). */
export const MAX_RANKS = 4096;

/** The entry of rank `r`'s program file. */
export const rankEntry = (r: number): string => `ranks/rank${r}.trtp`;
export const RANK_ENTRY = /^ranks\/rank(0|[1-9]\d{0,3})\.trtp$/;

/** One rank in the manifest. */
export interface ManifestRank {
  rank: number;
  /** The entry holding the rank's program file. */
  program: string;
  /** The device the rank was compiled for (rank r: CUDA device r, offset by `device.gpuId`). */
  targetDevice: { type: 'gpu'; gpuId: number };
  /** Indices of its segments that are all-reduces (fallback graphs of one `trt.all_reduce`). */
  collectiveSegments: number[];
}

/** `manifest.json` of a tensor-parallel program file. */
export interface TensorParallelManifest {
  format: typeof TENSOR_PARALLEL_FORMAT;
  /** `MAJOR.MINOR`. */
  formatVersion: string;
  library: { name: 'tensorrt-node'; version: string };
  /** The backend every rank was compiled for. */
  backend: string;
  /** The number of ranks. */
  worldSize: number;
  /** What was split, per block (TensorParallelProgram.blocks). */
  blocks: BlockSharding[];
  /** Rank r at index r. */
  ranks: ManifestRank[];
  /** Every entry but the manifest: its SHA-256 (hex) and size. */
  blobs: Record<string, { sha256: string; bytes: number }>;
}

/** A checked tensor-parallel file: its manifest and each rank's checked program file. */
export interface TensorParallelFileContents {
  manifest: TensorParallelManifest;
  /** Rank r's program file, read and checked as a single program file (nothing deserialized). */
  ranks: ProgramFileContents[];
  /** Rank r's program file as stored (what `inspect` reads as a single program file). */
  rankBytes: Uint8Array[];
  label: string;
}
