/**
 * The program file's manifest (`manifest.json`): its constants and types, shared by the
 * writer (write.ts), the reader (read.ts) and the loader (load.ts). docs/program-format.md
 * describes the format.
 */
import type { DType } from '../../ir/dtype';
import type { SerializedDim } from '../../ir/serialize';
import type { EngineDevice } from '../../engine/device-selection';

/** The `format` field of every manifest. */
export const PROGRAM_FORMAT = 'tensorrt-node program';
/**
 * The format version this library writes, and the newest it reads (docs/program-format.md).
 * 1.1: engine segments say `"kind": "engine"`; 1.0 files say `"tensorrt"` (LEGACY_ENGINE_KIND).
 * 1.2: inputs with run-time dims carry their optimization profiles (`profiles`).
 * 1.3: engine segments may carry what they were built from (`source`: the Network and the
 *      build settings), which lets loadProgram() rebuild them for another backend.
 */
export const PROGRAM_FORMAT_VERSION = { major: 1, minor: 3 } as const;
/** The first format version whose engine segments may carry `source`. */
export const SOURCES_SINCE = { major: 1, minor: 3 } as const;
/** The first format version whose inputs may carry `profiles`; older files load without them. */
export const PROFILES_SINCE = { major: 1, minor: 2 } as const;
/** The `format` of a tensor-parallel program file (lib/runtime/tensor-parallel/file-manifest.ts): its ranks' program files in one archive. */
export const TENSOR_PARALLEL_FORMAT = 'tensorrt-node tensor-parallel program';
/** The manifest's entry name. */
export const MANIFEST_ENTRY = 'manifest.json';

export const BLOB_NAME = /^(engines|networks|graphs|constants|data)\/[A-Za-z0-9._-]{1,200}$/;
export const SHA256 = /^[0-9a-f]{64}$/;
/** How deep generic values and symbolic dims may nest. */
export const MAX_DEPTH = 200;
/** DOS time stamp written into every entry (files are byte-for-byte reproducible). */
export const FIXED_MTIME = new Date(1980, 0, 1, 0, 0, 0);
// ---------------------------------------------------------------------------------------
// The manifest (JSON)

/** A value that is JSON data, with tags for what JSON cannot hold (see `encodeValue` in values.ts). */
export type EncodedValue = null | boolean | number | string | EncodedValue[] | { [key: string]: EncodedValue };

/** One program input or output. */
export interface ManifestIO {
  name: string;
  value: string;
  dtype: DType;
  /** Integers and symbolic expressions, as lib/ir/serialize.ts writes dims. */
  shape: SerializedDim[];
  /**
   * Inputs with run-time dims (format 1.2 on): min/opt/max shapes, one per optimization
   * profile (ProgramIO.profiles). Absent on static inputs, outputs, and in older files.
   */
  profiles?: Array<{ min: number[]; opt: number[]; max: number[] }>;
  /** Other fields of the ProgramIO (profiles, complex adapters...), generically encoded. */
  extra?: Record<string, EncodedValue>;
}

/**
 * What format 1.0 files (tensorrt-node 0.1.0) call an engine segment, whatever backend built
 * it. The reader takes it as `engine` (readProgramFile returns manifests with `engine` only).
 */
export const LEGACY_ENGINE_KIND = 'tensorrt';

/** An engine segment in the manifest: an engine built by `backend`. */
export interface ManifestEngineSegment {
  kind: 'engine';
  backend: string;
  /** The blob holding the engine bytes. */
  engine: string;
  inputs: string[];
  outputs: string[];
  device: EngineDevice;
  /** Format 1.3: what the engine was built from: the blob of its serialized Network, and the build settings. */
  source?: { network: string; build: ManifestBuild };
  extra?: Record<string, EncodedValue>;
}

/** The build settings of an engine source (BuildConfig without the timing cache). */
export interface ManifestBuild {
  precisions: string[];
  /** Absent: the backend's default. */
  workspaceBytes?: number;
  hardwareCompatibility: string;
  optimizationLevel: number;
}

/** A fallback segment in the manifest. */
export interface ManifestFallbackSegment {
  kind: 'fallback';
  /** The blob holding serializeGraphToBuffer() bytes. */
  graph: string;
  inputs: string[];
  outputs: string[];
  extra?: Record<string, EncodedValue>;
}

export type ManifestSegment = ManifestEngineSegment | ManifestFallbackSegment;

/** `manifest.json`. */
export interface ProgramManifest {
  format: typeof PROGRAM_FORMAT;
  /** `MAJOR.MINOR`. */
  formatVersion: string;
  library: { name: 'tensorrt-node'; version: string };
  /** The program's backend (Program.backend). */
  backend: string;
  /** Every backend an engine uses, with its version. */
  backends: Record<string, string>;
  inputs: ManifestIO[];
  outputs: ManifestIO[];
  /** Ranges of the symbols the I/O shapes use; bounds may be "Infinity" / "-Infinity". */
  symbols: Array<{ name: string; min: number | 'Infinity' | '-Infinity'; max: number | 'Infinity' | '-Infinity' }>;
  /** In execution order. */
  segments: ManifestSegment[];
  /** Program outputs folded to constants at compile time. */
  constants: Array<{ value: string; dtype: DType; shape: number[]; blob: string }>;
  /** The partition report, generically encoded. */
  report: EncodedValue;
  /** Other fields of ProgramData, generically encoded. */
  extra?: Record<string, EncodedValue>;
  /** Every blob of the archive: its SHA-256 (hex) and size. */
  blobs: Record<string, { sha256: string; bytes: number }>;
}


/** ProgramIO, segment and ProgramData fields with a dedicated manifest form (others go to `extra`). */
export const KNOWN_IO_KEYS = new Set(['name', 'value', 'dtype', 'shape', 'profiles']);
export const KNOWN_ENGINE_KEYS = new Set(['kind', 'backend', 'engine', 'inputs', 'outputs', 'device', 'placement', 'source']);
export const KNOWN_FALLBACK_KEYS = new Set(['kind', 'graph', 'inputs', 'outputs']);
export const KNOWN_DATA_KEYS = new Set(['inputs', 'outputs', 'segments', 'constants']);

/** A checked manifest and its verified blobs: what readProgramFile returns. */
export interface ProgramFileContents {
  manifest: ProgramManifest;
  /** Blob name → bytes (SHA-256 verified). */
  blobs: Map<string, Uint8Array>;
  /** Where the bytes came from, for messages: `program file "x.trtp"` or `program buffer`. */
  label: string;
}

