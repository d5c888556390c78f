/**
 * The `tensorrt` backend: build() encodes the network as a replay program (./program.ts), and
 * the addon (native/trt) replays it into a strongly typed INetworkDefinition, configures the
 * builder from the BuildConfig and builds on the thread pool, TensorRT's log and progress
 * reaching the build context's logger and progress sink (./build-events.ts), its AbortSignal
 * answering stepComplete; load() deserializes the plan on the engine's device, and each
 * run takes an execution context from the engine's pool, sets shapes and device addresses and
 * enqueues on the device's stream. Built engines are cached on disk (./engine-cache.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InternalError, InvalidArgumentError, TensorRTMissingError, TensorRTNodeError, UnsupportedOpError } from '../../errors';
import { resolveLogger } from '../../logger';
import { getAddon } from '../../native';
import type { Network, TrtDType } from '../../network';
import { currentDevice } from '../../gpu/current-device';
import type { EngineDevice } from '../../engine/device-selection';
import type { Tensor } from '../../ir/tensor';
import { formatTensorRTVersion, tensorrtStatus } from '../../tensorrt';
import type { BuildConfig } from '../../engine/build-config';
import { abortedError, throwIfAborted, type BuildContext } from '../../engine/build-context';
import type { DeviceValue, RunValue } from '../../engine/residency';
import type { Availability, Backend, Engine, EngineSignature } from '../../engine/backend';
import { BUILT_WITHOUT_TENSORRT, tensorrtBinding, type NativeTensorRTEngine } from './binding';
import { buildEventHandler, MAX_SEVERITY } from './build-events';
import { engineCacheDir, engineCacheKey, readCachedEngine, timingCachePath, writeCachedEngine } from './engine-cache';
import { deserializeTensorRTEngine, serializeTensorRTEngine, type EngineTensor } from './engine-format';
import { encodeProgram, type ReplayBuildOptions } from './program';

export { encodeProgram } from './program';
export { deserializeTensorRTEngine, serializeTensorRTEngine } from './engine-format';

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

function replayOptions(config: BuildConfig, device: EngineDevice, timingCache: Uint8Array | undefined): ReplayBuildOptions {
  return {
    precisions: config.precisions,
    workspaceBytes: config.workspaceBytes,
    hardwareCompatibility: device.hardwareCompatibility === 'ampere+' || config.hardwareCompatibility === 'ampere+' ? 'ampere+' : 'none',
    optimizationLevel: config.optimizationLevel,
    timingCache,
  };
}

/** Reads the timing cache a build starts from, and where to write it back (null: nowhere). */
function timingCacheOf(config: BuildConfig): { bytes: Uint8Array | undefined; writeTo: string | null } {
  const cacheDir = engineCacheDir();
  const file = typeof config.timingCache === 'string' ? config.timingCache : config.timingCache === undefined && cacheDir !== null ? timingCachePath(cacheDir) : null;
  if (config.timingCache instanceof Uint8Array) return { bytes: config.timingCache, writeTo: null };
  if (file === null) return { bytes: undefined, writeTo: null };
  if (!fs.existsSync(file)) return { bytes: undefined, writeTo: file };
  try {
    return { bytes: new Uint8Array(fs.readFileSync(file)), writeTo: file };
  } catch (error) {
    throw new InvalidArgumentError(`timingCache: cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function writeTimingCache(file: string, bytes: Uint8Array): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
  } catch (error) {
    throw new InvalidArgumentError(`timingCache: cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}

const ioOf = (network: Network, ids: ReadonlyArray<{ tensor: number; name: string }>): EngineTensor[] =>
  ids.map((i) => ({ name: i.name, dtype: network.tensor(i.tensor).dtype as TrtDType, shape: [...network.tensor(i.tensor).shape] }));

/** Whether cached bytes are a readable engine (a truncated or foreign file is rebuilt, not loaded). */
function isReadable(bytes: Uint8Array): boolean {
  try {
    deserializeTensorRTEngine(bytes);
    return true;
  } catch {
    return false;
  }
}

async function build(network: Network, config: BuildConfig, device: EngineDevice, context: BuildContext | undefined): Promise<Uint8Array> {
  const binding = tensorrtBinding();
  const { libraryVersion } = await binding.tensorrtCheckApi();
  if (network.layers.length === 0) throw new UnsupportedOpError(`network "${network.name}" has no layers; TensorRT builds no empty engine`);
  const timing = timingCacheOf(config);
  const options = replayOptions(config, device, timing.bytes);
  const program = encodeProgram(network, options);
  const cacheDir = engineCacheDir();
  const key = cacheDir === null ? null : engineCacheKey(encodeProgram(network, { ...options, timingCache: undefined }), libraryVersion, device);
  if (cacheDir !== null && key !== null) {
    const cached = readCachedEngine(cacheDir, key);
    if (cached !== null && isReadable(cached)) {
      (context?.log ?? resolveLogger())('debug', `tensorrt: engine of network "${network.name}" found in the engine cache (${key.slice(0, 12)})`);
      return cached;
    }
  }
  const log = context?.log ?? resolveLogger();
  const signal = context?.signal;
  throwIfAborted(signal, `the TensorRT engine build of network "${network.name}"`);
  const events = buildEventHandler(log, context);
  let result: Awaited<ReturnType<typeof binding.tensorrtBuild>>;
  try {
    // With a signal, every TensorRT step waits for onEvent's answer, so an abort stops the build at the next step.
    result = await binding.tensorrtBuild(program, events.onEvent, MAX_SEVERITY, device.type === 'gpu' && device.gpuId !== null ? device.gpuId : -1, signal !== undefined);
  } catch (error) {
    if (events.failure !== null) throw events.failure.error;
    if (error instanceof TensorRTNodeError && error.code === 'E_ABORTED') throw abortedError(signal, `the TensorRT engine build of network "${network.name}"`, error);
    throw error;
  }
  if (events.failure !== null) throw events.failure.error;
  // Aborted after TensorRT's last step: the engine exists, but the caller no longer wants it.
  throwIfAborted(signal, `the TensorRT engine build of network "${network.name}"`);
  if (timing.writeTo !== null && result.timingCache.byteLength > 0) writeTimingCache(timing.writeTo, result.timingCache);
  const engine = serializeTensorRTEngine({
    libraryVersion: result.libraryVersion,
    hardwareCompatibility: options.hardwareCompatibility,
    versionCompatible: options.versionCompatible ?? false,
    inputs: ioOf(network, network.inputs),
    outputs: ioOf(network, network.outputs),
    plan: result.plan,
  });
  if (cacheDir !== null && key !== null) {
    // The cache only saves time: a failure to store is logged, never the build's failure.
    try {
      writeCachedEngine(cacheDir, key, engine);
    } catch (error) {
      log('warn', `tensorrt: could not store the engine in the cache ${cacheDir}: ${(error as Error).message}`);
    }
  }
  return engine;
}

/** A device address for TensorRT: the GPU runtime's DeviceBuffer must expose it. */
function addressOf(value: RunValue, name: string): bigint {
  const buffer = (value as { buffer?: { address?: unknown } }).buffer;
  if (buffer === undefined || typeof buffer.address !== 'bigint') {
    throw new InternalError(
      `tensorrt engine: the device value of "${name}" exposes no device address (DeviceBuffer.address); this build's GPU runtime cannot hand buffers to TensorRT`,
    );
  }
  return buffer.address;
}

function tensorrtEngine(native: NativeTensorRTEngine, signature: EngineSignature, ordinal: number): Engine {
  return {
    ...signature,
    residency: 'device',
    deviceOrdinal: ordinal,
    async run(inputs: Readonly<Record<string, RunValue>>): Promise<Record<string, RunValue>> {
      const shapes: Record<string, number[]> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) shapes[name] = [...v.shape];
      const outputShapes = native.outputShapes(shapes);
      // Output allocation and host↔device copies belong to the GPU runtime (lib/gpu).
      const { DeviceTensor } = await import('../../gpu/device-tensor');
      const outputs: Record<string, RunValue> = Object.create(null);
      const addresses: Record<string, bigint> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) addresses[name] = addressOf(v, name);
      const io = new Map(native.io().map((t) => [t.name, t]));
      for (const name of signature.outputNames) {
        const dtype = DTYPE_OF[io.get(name)?.dataType ?? -1];
        if (dtype === undefined) throw new InternalError(`tensorrt engine: output "${name}" has a DataType this library does not know`);
        const out = await DeviceTensor.allocate(dtype, outputShapes[name] ?? [], ordinal);
        outputs[name] = out;
        addresses[name] = addressOf(out, name);
      }
      await native.run(shapes, addresses, ordinal);
      return outputs;
    },
    // Host inputs of a program reach the engine's device through this (lib/runtime/execute.ts).
    async upload(tensor: Tensor): Promise<DeviceValue> {
      const { toDevice } = await import('../../gpu/device-tensor');
      return toDevice(tensor, ordinal);
    },
    dispose: () => native.dispose(),
  };
}

const DTYPE_OF: Record<number, TrtDType> = { 0: 'float32', 1: 'float16', 2: 'int8', 3: 'int32', 4: 'bool', 5: 'uint8', 7: 'bfloat16', 8: 'int64' };

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
  async available(): Promise<Availability> {
    const reasons = await tensorrtRefusals();
    return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
  },
  async build(network: Network, config: BuildConfig, device: EngineDevice, context?: BuildContext): Promise<Uint8Array> {
    const reasons = await tensorrtRefusals();
    if (reasons.length > 0) throw new TensorRTMissingError(`the tensorrt backend cannot build engines here: ${reasons.join('; ')}`, { details: { backend: 'tensorrt', reasons } });
    return build(network, config, device, context);
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
    return tensorrtEngine(native, { inputNames: record.inputs.map((i) => i.name), outputNames: record.outputs.map((o) => o.name) }, ordinal < 0 ? currentDevice() : ordinal);
  },
  inspect(engine: Uint8Array): EngineSignature {
    const record = deserializeTensorRTEngine(engine);
    return { inputNames: record.inputs.map((i) => i.name), outputNames: record.outputs.map((o) => o.name) };
  },
} satisfies Backend<'tensorrt'>;
