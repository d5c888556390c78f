/**
 * The `tensorrt` backend. The rooms: this entry (availability, build, load); build.ts (the
 * engine cache, the timing cache, the native build); engine-format.ts; program.ts (per layer
 * kind: the replay program, with enums.ts); run.ts (an Engine over the native one). build()
 * encodes the network as a replay program (./program.ts), and the addon (native/trt) replays it into a strongly typed INetworkDefinition, configures the
 * builder from the BuildConfig and builds on the thread pool, TensorRT's log and progress
 * reaching the build context's logger and progress sink (./build-events.ts), its AbortSignal
 * answering stepComplete; load() deserializes the plan on the engine's device, and each
 * run takes an execution context from the engine's pool, sets shapes and device addresses and
 * enqueues on the device's stream. Built engines are cached on disk (./engine-cache.ts).
 */
import { TensorRTMissingError, TensorRTNodeError } from '../../errors';
import { getAddon } from '../../native';
import type { Network } from '../../network';
import { currentDevice } from '../../gpu/current-device';
import type { EngineDevice } from '../../engine/device-selection';
import { formatTensorRTVersion, tensorrtStatus } from '../../tensorrt';
import type { BuildConfig } from '../../engine/build-config';
import type { BuildContext } from '../../engine/build-context';
import type { Availability, Backend, Engine, EngineSignature } from '../../engine/backend';
import { BUILT_WITHOUT_TENSORRT, tensorrtBinding, type NativeTensorRTEngine } from './binding';
import { buildTensorRTEngine } from './build';
import { deserializeTensorRTEngine } from './engine-format';
import { isCheckOutput } from './index-checks';
import { NMS_REFUSAL, UNIQUE_REFUSAL } from './program';
import { unbuildableQuantize } from './quantize';
import { tensorrtEngine } from './run';

export { encodeProgram } from './program';
export { deserializeTensorRTEngine, serializeTensorRTEngine } from './engine-format';

/** The engine's inputs and outputs as callers see them: the index-check outputs (./index-checks.ts) are the engine's own. */
function signatureOf(record: { inputs: ReadonlyArray<{ name: string }>; outputs: ReadonlyArray<{ name: string }> }): EngineSignature {
  return { inputNames: record.inputs.map((i) => i.name), outputNames: record.outputs.map((o) => o.name).filter((name) => !isCheckOutput(name)) };
}

/** TensorRT's version once a probe found the library (what engines record as backendVersion). */
let foundVersion: string | undefined;

/** Why the backend cannot work here (empty when it can). */
export async function tensorrtRefusals(): Promise<string[]> {
  const reasons: string[] = [];
  try {
    const status = await tensorrtStatus();
    if (status.library.found) foundVersion = status.library.version;
    if (!status.backendBuilt) reasons.push(BUILT_WITHOUT_TENSORRT);
    if (!status.library.found) reasons.push(status.library.reason);
    if (status.backendBuilt && status.library.found) {
      try {
        await tensorrtBinding().tensorrtCheckApi();
      } catch (error) {
        reasons.push((error as Error).message);
      }
    }
  } catch (error) {
    reasons.push(`the TensorRT probe failed: ${(error as Error).message}`);
  }
  return reasons;
}

export const tensorrtBackend = {
  name: 'tensorrt',
  priority: 3,
  /** TensorRT's version, known once available() or build() found the library; `none` before. */
  get version(): string {
    return foundVersion ?? 'none';
  },
  /**
   * Whether this build of the addon carries the TensorRT part (compiled with TensorRT's
   * headers); a program file's TensorRT engines are refused up front (E_TENSORRT_MISSING)
   * by an addon built without it. False too when the addon does not load.
   */
  get implemented(): boolean {
    try {
      return getAddon().info.tensorrtBackend;
    } catch {
      return false;
    }
  },
  residency: 'device',
  // A nonzero's size may reach an engine output: the run gives TensorRT an IOutputAllocator
  // for each output whose shape has a -1 once the input shapes are set (native/trt/runtime.cc,
  // ./run.ts). Such a size still never enters an engine from outside (lib/partitioning).
  dataDependentSizes: 'anywhere',
  // Its nms would list other rows than ONNX's NonMaxSuppression, and it has no unique (./program.ts, NMS_REFUSAL, UNIQUE_REFUSAL).
  refusedLayers: { nms: NMS_REFUSAL, unique: UNIQUE_REFUSAL },
  // FP8 and INT4 quantize/dequantize forms TensorRT takes neither whole nor spelled out (./quantize.ts).
  quantizeRefusal: unbuildableQuantize,
  buildSettings: { uses: ['precisions', 'workspaceBytes', 'timingCache', 'hardwareCompatibility', 'optimizationLevel'], instead: '' },
  async available(): Promise<Availability> {
    const reasons = await tensorrtRefusals();
    return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
  },
  async build(network: Network, config: BuildConfig, device: EngineDevice, context?: BuildContext): Promise<Uint8Array> {
    const reasons = await tensorrtRefusals();
    if (reasons.length > 0) throw new TensorRTMissingError(`the tensorrt backend cannot build engines here: ${reasons.join('; ')}`, { details: { backend: 'tensorrt', reasons } });
    return buildTensorRTEngine(network, config, device, context);
  },
  async load(engine: Uint8Array, device: EngineDevice | null): Promise<Engine> {
    const record = deserializeTensorRTEngine(engine);
    // No device: deserialize on whatever context is current (-1), run on the default device.
    const ordinal = device?.gpuId ?? -1;
    let native: NativeTensorRTEngine;
    try {
      native = await tensorrtBinding().tensorrtLoad(record.plan, record.versionCompatible, ordinal);
    } catch (error) {
      if (error instanceof TensorRTNodeError && error.code === 'E_TENSORRT') {
        throw new TensorRTNodeError('E_TENSORRT', `${error.message} (the engine was built with TensorRT ${formatTensorRTVersion(record.libraryVersion)})`, { cause: error, details: error.details });
      }
      throw error;
    }
    return tensorrtEngine(native, signatureOf(record), ordinal < 0 ? currentDevice() : ordinal, record.outputs.map((o) => o.name).filter(isCheckOutput));
  },
  inspect(engine: Uint8Array): EngineSignature {
    return signatureOf(deserializeTensorRTEngine(engine));
  },
} satisfies Backend<'tensorrt'>;
