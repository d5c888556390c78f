/**
 * The addon's TensorRT functions (native/trt/bindings.cc), present only in an addon built with
 * TensorRT's headers (TENSORRT_ROOT or TENSORRT_INCLUDE_DIR at build time; docs/tensorrt.md).
 */
import { TensorRTMissingError } from '../../errors';
import { getAddon } from '../../native';
import type { NativeBuildEvent } from './build-events';

export interface NativeTensorRTEngine {
  io(): Array<{ name: string; input: boolean; dataType: number; dims: number[] }>;
  /** Output shapes for these input shapes (sets them on a pooled context; no GPU work). */
  outputShapes(inputShapes: Record<string, number[]>): Record<string, number[]>;
  /**
   * Sets shapes and addresses on a pooled context, enqueueV3 on the device's stream, resolves
   * when the stream is done. Outputs whose shape outputShapes() gives with a -1 (sized by the
   * run: a nonzero's) take no address: TensorRT asks an IOutputAllocator for their memory, from
   * the device's pool and at most `maxTensorBytes` (0: no bound; E_RESOURCE_LIMIT over it,
   * E_OUT_OF_DEVICE_MEMORY when the pool cannot give it, both naming the output), and the run
   * resolves with them; undefined when there are none.
   */
  run(inputShapes: Record<string, number[]>, addresses: Record<string, bigint>, deviceOrdinal: number, maxTensorBytes: number): Promise<NativeDecidedOutputs | undefined>;
  dispose(): void;
}

/** The outputs a run sized, in memory of the addon's own until moved into the caller's buffers. */
export interface NativeDecidedOutputs {
  /** The shapes TensorRT notified, by output name. */
  readonly shapes: Record<string, number[]>;
  /** What TensorRT asked for each (at least the tensor's bytes, and never 0). */
  readonly allocatedBytes: Record<string, number>;
  /** Copies `bytes` of each named output to `address` (a device buffer of the caller's), then frees all of this run's memory. */
  moveInto(into: Record<string, readonly [address: bigint, bytes: number]>): Promise<void>;
  /** Frees the memory uncopied (nothing once moveInto was called). */
  dispose(): void;
}

export interface TensorRTBinding {
  /**
   * Replays a program (./program.ts) and builds on the thread pool; events: ('log', severity,
   * message) and ('progress', kind, phase, parent, step), all delivered before the Promise
   * settles. With `cancellable`, each stepComplete waits for onEvent's answer to the step
   * and `false` stops the build (E_ABORTED); without, answers are ignored and nothing waits.
   */
  tensorrtBuild(program: Uint8Array, onEvent: NativeBuildEvent, maxSeverity: number, deviceOrdinal: number, cancellable: boolean): Promise<{ plan: Uint8Array; timingCache: Uint8Array; libraryVersion: number; hardwareCompatibility: number }>;
  /** Deserializes a plan with the device's context current (ordinal -1: whatever is current). */
  tensorrtLoad(plan: Uint8Array, allowHostCode: boolean, deviceOrdinal: number): Promise<NativeTensorRTEngine>;
  /** Resolves when libnvinfer is usable by this build's headers; rejects E_TENSORRT_MISSING saying why not. */
  tensorrtCheckApi(): Promise<{ libraryVersion: number; headerVersion: number }>;
}

export const BUILT_WITHOUT_TENSORRT =
  'the native addon was built without TensorRT: rebuild it with TENSORRT_ROOT (or TENSORRT_INCLUDE_DIR) naming a TensorRT 10 install ' +
  '(`TENSORRT_ROOT=/opt/tensorrt npm run build:native`; docs/tensorrt.md)';

/** The TensorRT functions of the loaded addon. @throws {TensorRTMissingError} when it was built without TensorRT. */
export function tensorrtBinding(): TensorRTBinding {
  const addon = getAddon();
  if (!addon.info.tensorrtBackend) throw new TensorRTMissingError(`the tensorrt backend is not usable: ${BUILT_WITHOUT_TENSORRT}`);
  return addon.binding as unknown as TensorRTBinding;
}
