/**
 * What a compiled program is made of, as data that crosses threads and goes into files:
 * engine segments carry the engine bytes of the backend that built them (tensorrt, cuda,
 * onnxruntime or reference); fallback segments a serialized graph.
 * Values flow between segments by name.
 */
import type { DType } from '../ir/dtype';
import type { Dim } from '../ir/symbolic';
import type { EngineDevice } from '../engine/device-selection';
import type { BuildConfig } from '../engine/build-config';

/**
 * What an engine was built from, so that another backend can build it again where the one
 * that built it cannot run (loadProgram's `rebuild`): the segment's Network as
 * serializeNetworkToBuffer gives it (backend-neutral), and the build settings (a timing cache
 * is the builder's own business and is not kept).
 */
export interface EngineSource {
  network: Uint8Array;
  build: Omit<BuildConfig, 'timingCache'>;
}

export interface EngineSegment {
  kind: 'engine';
  /** The backend that built the engine, and so runs it (`tensorrt`, `cuda`, `onnxruntime`, `reference`). */
  backend: string;
  engine: Uint8Array;
  inputs: string[];
  outputs: string[];
  /** The device the engine was built for (lib/engine/device-selection.ts); compile() always sets it. */
  device?: EngineDevice;
  /** Set by loadProgram(): the device selected to run the engine (absent for CPU engines). */
  placement?: { ordinal: number; name: string; reason: string };
  /**
   * What the engine was built from (absent for reference engines, which are their Network and
   * run everywhere, and in files before format 1.3). Kept on the calling thread: the worker
   * does not get it (Program strips it).
   */
  source?: EngineSource;
}

export interface FallbackSegment {
  kind: 'fallback';
  /** serializeGraphToBuffer() of the segment's sub-graph. */
  graph: Uint8Array;
  inputs: string[];
  outputs: string[];
}

export type ProgramSegment = EngineSegment | FallbackSegment;

/**
 * How a complex program input or output is carried inside the program (ProgramIO.complex).
 * The complex lowering states the same contract in its own type (CarrierAdapter in
 * lib/lowering/complex/): the two meet structurally, so neither stage imports the other.
 */
export interface ComplexIOAdapter {
  /** The carrier's dtype; its shape is the complex shape with a trailing 2. */
  carrier: 'float32' | 'float64';
}

/**
 * The shapes one optimization profile was compiled for, for one program input: every dim's
 * smallest size, the size the engines were tuned for, and its largest size, in the input's
 * dim order (a static dim has the same size in all three). What `settings.inputs` gave as
 * `{ min, opt, max }` or `profiles`, after the model's own ranges and the defaults (an opt
 * not given is the max) were applied.
 */
export interface ShapeProfile {
  min: number[];
  opt: number[];
  max: number[];
}

export interface ProgramIO {
  /** The model's name for it. */
  name: string;
  /** The value carrying it between segments. */
  value: string;
  dtype: DType;
  shape: Dim[];
  /** Set for a complex input/output: the value is its real carrier [..., 2] (lib/runtime/complex-io.ts converts). */
  complex?: ComplexIOAdapter;
  /**
   * Inputs with run-time dims only: their min/opt/max shapes, one per optimization profile,
   * in profile order. Absent on static inputs, on outputs, and on programs loaded from files
   * written before program format 1.2 (they did not record them).
   */
  profiles?: ShapeProfile[];
}

/** Everything needed to run a program: what the worker thread receives. */
export interface ProgramData {
  inputs: ProgramIO[];
  outputs: ProgramIO[];
  segments: ProgramSegment[];
  /** Outputs that are constants (folded at compile time), by value name: dtype, shape, bytes. */
  constants: Record<string, { dtype: DType; shape: number[]; data: Uint8Array }>;
}

/** `data` without its engines' sources: what a worker needs to run the program (the sources only matter to save() and a rebuild at load). */
export function withoutSources(data: ProgramData): ProgramData {
  if (!data.segments.some((s) => s.kind === 'engine' && s.source !== undefined)) return data;
  return { ...data, segments: data.segments.map((s) => (s.kind === 'engine' && s.source !== undefined ? { ...s, source: undefined } : s)) };
}
