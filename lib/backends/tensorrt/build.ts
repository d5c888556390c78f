/**
 * The tensorrt backend's build: the replay program of the network (./program.ts) with its
 * run-time indices checked (./index-checks.ts), built by the
 * addon on the thread pool with TensorRT's log and progress reaching the build context
 * (./build-events.ts) and its AbortSignal answering each step; the timing cache read and
 * written back; built engines kept in the engine cache (./engine-cache.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentError, TensorRTNodeError, UnsupportedOpError } from '../../errors';
import { resolveLogger } from '../../logger';
import type { Network, TrtDType } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import type { BuildConfig } from '../../engine/build-config';
import { abortedError, throwIfAborted, type BuildContext } from '../../engine/build-context';
import { tensorrtBinding } from './binding';
import { buildEventHandler, MAX_SEVERITY } from './build-events';
import { engineCacheDir, engineCacheKey, readCachedEngine, timingCachePath, writeCachedEngine } from './engine-cache';
import { deserializeTensorRTEngine, serializeTensorRTEngine, type EngineTensor } from './engine-format';
import { withIndexChecks } from './index-checks';
import { encodeProgram, replayedNetwork, type ReplayBuildOptions } from './program';

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

/** Engine bytes for `network`, from the engine cache when it holds them. */
export async function buildTensorRTEngine(network: Network, config: BuildConfig, device: EngineDevice, context: BuildContext | undefined): Promise<Uint8Array> {
  const binding = tensorrtBinding();
  const { libraryVersion } = await binding.tensorrtCheckApi();
  if (network.layers.length === 0) throw new UnsupportedOpError(`network "${network.name}" has no layers; TensorRT builds no empty engine`);
  const timing = timingCacheOf(config);
  const options = replayOptions(config, device, timing.bytes);
  // The network as TensorRT gets it, made once for the program and the cache key (encodeProgram
  // finds nothing left to rewrite): run-time indices clamped and checked (./index-checks.ts).
  const checked = withIndexChecks(network);
  const replayed = replayedNetwork(checked);
  const program = encodeProgram(replayed, options);
  const cacheDir = engineCacheDir();
  const key = cacheDir === null ? null : engineCacheKey(encodeProgram(replayed, { ...options, timingCache: undefined }), libraryVersion, device);
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
    inputs: ioOf(checked, checked.inputs),
    outputs: ioOf(checked, checked.outputs),
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
