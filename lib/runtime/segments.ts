/**
 * What a compiled program is made of, as data that crosses threads and goes into files:
 * TensorRT segments carry a backend's engine bytes; fallback segments a serialized graph.
 * Values flow between segments by name.
 */
import type { DType } from '../ir/dtype';
import type { Dim } from '../ir/symbolic';

export interface EngineSegment {
  kind: 'tensorrt';
  /** The backend that built the engine (`reference`, `tensorrt`). */
  backend: string;
  engine: Uint8Array;
  inputs: string[];
  outputs: string[];
}

export interface FallbackSegment {
  kind: 'fallback';
  /** serializeGraphToBuffer() of the segment's sub-graph. */
  graph: Uint8Array;
  inputs: string[];
  outputs: string[];
}

export type ProgramSegment = EngineSegment | FallbackSegment;

export interface ProgramIO {
  /** The model's name for it. */
  name: string;
  /** The value carrying it between segments. */
  value: string;
  dtype: DType;
  shape: Dim[];
}

/** Everything needed to run a program: what the worker thread receives. */
export interface ProgramData {
  inputs: ProgramIO[];
  outputs: ProgramIO[];
  segments: ProgramSegment[];
  /** Outputs that are constants (folded at compile time), by value name: dtype, shape, bytes. */
  constants: Record<string, { dtype: DType; shape: number[]; data: Uint8Array }>;
}
