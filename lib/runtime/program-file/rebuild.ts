/**
 * Programs that travel: before a program file's engines are loaded, each engine segment is
 * checked against this machine (its backend implemented and available, a TensorRT plan's
 * TensorRT version, a device that can run a GPU engine). One that cannot run here, or whose
 * backend the caller asked to replace (`loadProgram(file, { backend })`), is built again from
 * the Network the file keeps beside it (format 1.3 `source`), for the asked backend or the best
 * one present (`auto`), and a `warn` names both backends, why and what the rebuild cost. With
 * `rebuild: 'never'` the load refuses instead, typed, naming the backend or device — at load,
 * not at the first run. The file's contents are changed in place: the rebuilt engine replaces
 * the stored one (and a later save() writes it).
 */
import { getBackend, isBackendName, resolveBackend, type BackendName } from '../../backends';
import type { CudaDevice } from '../../devices';
import { BackendUnavailableError, NoCompatibleDeviceError, TensorRTMissingError, TensorRTNodeError } from '../../errors';
import { resolveBuildConfig, type BuildSettings } from '../../engine/build-config';
import { engineDeviceRecord } from '../../engine/device-record';
import { deviceTargetOf, selectDevice } from '../../engine/device-selection';
import type { Logger } from '../../logger';
import { checkNetwork } from '../../network/check';
import { deserializeNetworkFromBuffer } from '../../network/serialize';
import { currentDeviceAmong } from '../../gpu/current-device';
import type { ManifestEngineSegment, ProgramFileContents } from './manifest';

/** What loadProgram() may do with an engine that cannot run here: build it again (`auto`, the default) or refuse (`never`). */
export type RebuildPolicy = 'auto' | 'never';

/** The options of {@link prepareEngines}. */
export interface PrepareEnginesOptions {
  /** The backend the engines should run on: `auto` (default: each engine's own where it can run, else the best present) or a name. */
  backend: BackendName | 'auto';
  rebuild: RebuildPolicy;
  /** The preferred CUDA ordinal (load options `device`). */
  device: number | undefined;
  /** The device list, asked of the driver once, only if a GPU engine needs it. */
  devices: () => Promise<readonly CudaDevice[]>;
  log: Logger;
}

/**
 * Why a stored engine cannot run here, as the error loading or running it would give; null: it
 * can. The device comes first (as the loader has always checked it first): a GPU engine needs
 * a device here that can run it, from the driver's list or the caller's `availableDevices`,
 * which is also how a GPU backend without its driver shows (no device). Then the backend:
 * implemented in this build, its TensorRT version, and for a CPU backend its library
 * (onnxruntime-node installed).
 */
async function storedProblem(s: ManifestEngineSegment, options: PrepareEnginesOptions): Promise<TensorRTNodeError | null> {
  // An unknown backend name is a malformed file: buildProgramParts refuses it as such.
  if (!isBackendName(s.backend)) return null;
  const target = deviceTargetOf(s.device);
  if (target !== null) {
    const list = await options.devices();
    try {
      selectDevice(target, list, currentDeviceAmong(list), { device: options.device });
    } catch (error) {
      if (error instanceof NoCompatibleDeviceError) return error;
      throw error;
    }
  }
  const backend = getBackend(s.backend);
  const kind = s.backend === 'tensorrt' ? 'TensorRT' : s.backend;
  const missing = (reasons: string[]): TensorRTNodeError => {
    const message = `the ${kind} engine cannot run here: ${reasons.join('; ')}`;
    const details = { backend: s.backend, reasons };
    return s.backend === 'tensorrt' ? new TensorRTMissingError(message, { details }) : new BackendUnavailableError(message, { details });
  };
  if (!backend.implemented) return missing([`this tensorrt-node has no usable ${kind} backend (\`tensorrt-node doctor\` says why)`]);
  if (s.backend === 'tensorrt' && backend.version !== s.device.backendVersion) {
    return missing([`it was built with TensorRT ${s.device.backendVersion}, this machine has TensorRT ${backend.version}`]);
  }
  if (backend.residency === 'host') {
    const availability = await backend.available();
    if (!availability.ok) return missing(availability.reasons);
  }
  return null;
}

/**
 * Decides, for every engine segment of `contents`, whether its stored engine runs here, and
 * builds the others again (see the module comment). Returns the indices of the rebuilt segments.
 *
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: a TensorRT engine cannot run here, and `rebuild` is `never` or the file keeps no Network for it.
 * @throws {BackendUnavailableError} `E_BACKEND_UNAVAILABLE`: likewise for another backend, or the asked `backend` is not usable here.
 * @throws {NoCompatibleDeviceError} `E_NO_COMPATIBLE_DEVICE`: likewise for a GPU engine no device here can run.
 */
export async function prepareEngines(contents: ProgramFileContents, options: PrepareEnginesOptions): Promise<number[]> {
  const { manifest, blobs, label } = contents;
  const rebuilt: number[] = [];
  for (const [i, s] of manifest.segments.entries()) {
    if (s.kind !== 'engine') continue;
    const asked = options.backend !== 'auto' && options.backend !== s.backend;
    const problem = asked ? null : await storedProblem(s, options);
    if (!asked && problem === null) continue;
    const why = asked ? `the ${options.backend} backend was asked for` : problem!.message;
    // A file saved before format 1.3 keeps no network: its engines load (or fail) as they always have.
    if (s.source === undefined && options.rebuild === 'auto' && !asked) continue;
    if (options.rebuild === 'never' || s.source === undefined) {
      const because = options.rebuild === 'never' ? 'and rebuild is "never"' : 'and the file keeps no network to rebuild it from (it was saved before program format 1.3)';
      const message = `${label}: segment ${i}: ${why}, ${because}`;
      if (problem === null) throw new BackendUnavailableError(message, { details: { backend: options.backend, segment: i, reasons: [why] } });
      const details = { ...problem.details, segment: i };
      if (problem instanceof NoCompatibleDeviceError) throw new NoCompatibleDeviceError(message, { cause: problem, details });
      if (problem instanceof TensorRTMissingError) throw new TensorRTMissingError(message, { cause: problem, details });
      throw new BackendUnavailableError(message, { cause: problem, details });
    }
    const { backend } = await resolveBackend(options.backend);
    const network = deserializeNetworkFromBuffer(blobs.get(s.source.network)!, `${label}: segment ${i}'s network`, checkNetwork);
    const build = { ...resolveBuildConfig(s.source.build as BuildSettings, `${label}: segment ${i}'s build settings`), timingCache: undefined };
    const list = backend.residency === 'host' ? [] : await options.devices();
    if (backend.residency !== 'host' && list.length === 0) {
      throw new BackendUnavailableError(`${label}: segment ${i}: ${why}, and the ${backend.name} backend found no CUDA device here to build for`, { details: { backend: backend.name, segment: i, reasons: ['no CUDA device'] } });
    }
    const device = engineDeviceRecord({ type: 'gpu', gpuId: options.device, dlaCore: null, allowGpuFallback: false }, backend, list, currentDeviceAmong(list) ?? undefined);
    const started = performance.now();
    const engine = await backend.build(network, build, device, { log: options.log });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    options.log(
      'warn',
      `${label}: segment ${i}: ${why}; rebuilt its ${s.backend} engine for the ${backend.name} backend from the network the file keeps (${seconds} s, ${network.layers.length} layers; ` +
        'program.save() keeps the rebuilt engine, and loading that file skips this)',
    );
    const name = `engines/segment${i}.${backend.name}.engine`;
    blobs.set(name, engine);
    manifest.segments[i] = { ...s, backend: backend.name, engine: name, device };
    manifest.backends[backend.name] = backend.version;
    rebuilt.push(i);
  }
  const engines = manifest.segments.filter((s): s is ManifestEngineSegment => s.kind === 'engine');
  // The program's backend is the one that built its engines, where that is one backend.
  if (rebuilt.length > 0 && engines.every((s) => s.backend === engines[0]!.backend)) manifest.backend = engines[0]!.backend;
  return rebuilt;
}
