/**
 * The `cuda` backend (docs/cuda-backend.md): the Network every backend receives, run on a
 * GPU with generated kernels (NVRTC), cuBLASLt and cuDNN through the GPU runtime (lib/gpu).
 *
 * The rooms: this entry (availability, build, load); build.ts (the pass list of ./passes/,
 * then plans at the profile shapes and every kernel compiled for the target device);
 * engine-format.ts (the engine bytes: the rewritten network, the build configuration, the
 * device and the cubins); layers/ (per layer kind: generated kernels and library calls);
 * plan/ (a network instantiated at concrete shapes, lowered and laid out in memory); run/
 * (the Engine: a plan per input shape set, the GEMM timing cache). build() checks the network
 * (a converter bug is an InternalError); a layer the lowerings cannot run is an
 * UnsupportedOpError.
 */
import { probeDevices, type DeviceProbe } from '../../devices';
import { InternalError, UnsupportedOpError } from '../../errors';
import { gpuBinding } from '../../gpu/binding';
import { cudaLibraries, type CudaLibraryStatus } from '../../gpu/libraries';
import { dataDependentTensors, type Network } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import { VERSION } from '../../version';
import { DEFAULT_BUILD_CONFIG, type BuildConfig } from '../../engine/build-config';
import { checkNetwork } from '../../network/check';
import type { BuildContext } from '../../engine/build-context';
import type { Availability, Backend, Engine } from '../../engine/backend';
import { buildCudaEngine } from './build';
import { deserializeCudaEngine, type EngineTarget } from './engine-format';
import { CudaRunner } from './run/runner';
import { profileCudaEngine } from './profile';

export { CudaRunner } from './run/runner';
export { deserializeCudaEngine, serializeCudaEngine, CUDA_ENGINE_MAGIC, CUDA_ENGINE_VERSION } from './engine-format';

/** What available() asks (injectable: tests answer with fakes). */
export interface CudaProbes {
  devices(): Promise<DeviceProbe>;
  /** Whether the GPU runtime works on `ordinal` (the addon's runtime part and the driver's entry points). */
  runtime(ordinal: number): Promise<void>;
  libraries(): Promise<CudaLibraryStatus[]>;
}

export const REAL_PROBES: CudaProbes = {
  devices: probeDevices,
  runtime: async (ordinal) => {
    await gpuBinding().gpuDevice(ordinal);
  },
  libraries: cudaLibraries,
};

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Why the cuda backend cannot work here, or ok: a driver, a device, the GPU runtime, NVRTC, cuBLASLt and cuDNN. Never rejects. */
export async function cudaAvailability(probes: CudaProbes = REAL_PROBES): Promise<Availability> {
  const reasons: string[] = [];
  let probe: DeviceProbe;
  try {
    probe = await probes.devices();
  } catch (e) {
    return { ok: false, reasons: [`the CUDA device probe failed: ${messageOf(e)}`] };
  }
  if (probe.devices.length === 0) {
    const error = probe.error;
    if (error === null) reasons.push('no GPU: the CUDA driver lists no device');
    else if (error.code === 'E_NO_DEVICE') reasons.push(`no GPU: ${error.message}`);
    else if (error.code === 'E_CUDA_MISSING') reasons.push(`no CUDA driver: ${error.message}`);
    else reasons.push(`the CUDA driver cannot be used [${error.code}]: ${error.message}`);
    return { ok: false, reasons };
  }
  try {
    await probes.runtime(probe.devices[0]!.ordinal);
  } catch (e) {
    reasons.push(`the GPU runtime cannot use device ${probe.devices[0]!.ordinal}: ${messageOf(e)}`);
  }
  let libraries: CudaLibraryStatus[] = [];
  try {
    libraries = await probes.libraries();
  } catch (e) {
    reasons.push(`the NVIDIA library probe failed: ${messageOf(e)}`);
  }
  for (const lib of libraries) if (!lib.found) reasons.push(`${lib.name} is missing: ${lib.error?.message ?? 'not found'}`);
  return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
}

/** The device an engine record names as a build target (GPU records only). */
export function engineTarget(device: EngineDevice): EngineTarget {
  if (device.type !== 'gpu' || device.computeCapability === null || device.deviceName === null) {
    throw new InternalError(`the cuda backend builds for a GPU, but was given a ${device.type} device record without a compute capability and name`);
  }
  return { name: device.deviceName, computeCapability: { ...device.computeCapability } };
}

/**
 * Structure and shapes of a network to build (a violation is a converter bug); then a layer
 * whose output size only a run tells (a nonzero layer), which this backend cannot take: it
 * plans every buffer of a run from the input shapes alone (compile() keeps such nodes in
 * fallback segments on this backend: `dataDependentSizes` below).
 */
function checkForBuild(network: Network): void {
  checkNetwork(network, (message, cause) => {
    if (cause instanceof InternalError) throw cause;
    throw new InternalError(`network "${network.name}": ${message}`, cause === undefined ? undefined : { cause });
  });
  const nonzero = network.layers.find((l) => l.params.kind === 'nonzero' || l.params.kind === 'nms' || l.params.kind === 'unique') ?? [...dataDependentTensors(network).values()][0];
  if (nonzero !== undefined) {
    throw new UnsupportedOpError(`the cuda backend cannot run layer "${nonzero.name}" (${nonzero.params.kind}): its output size depends on tensor data, and this backend plans every buffer before a run`, {
      details: { layer: nonzero.name, kind: nonzero.params.kind },
    });
  }
}

export const cudaBackend = {
  name: 'cuda',
  priority: 2,
  version: VERSION,
  residency: 'device',
  // Its plans size every buffer from the input shapes before a run (checkForBuild above).
  dataDependentSizes: 'none',
  activationQuantizedTypes: ['int8', 'uint8'],
  // Its timingCache warning is its build's own (it says where its GEMM timings go).
  buildSettings: {
    uses: ['precisions', 'timingCache'],
    instead: 'it builds for the target GPU only (no hardware-compatible engines), its libraries (cuBLASLt, cuDNN) size their own workspaces, and it has no optimization levels',
  },
  implemented: true,
  available: () => cudaAvailability(),
  async build(network: Network, config: BuildConfig = DEFAULT_BUILD_CONFIG, device: EngineDevice, context?: BuildContext): Promise<Uint8Array> {
    checkForBuild(network);
    return buildCudaEngine(network, config, engineTarget(device), context?.log === undefined ? {} : { logger: context.log });
  },
  async load(engine: Uint8Array, device: EngineDevice | null): Promise<Engine> {
    const contents = deserializeCudaEngine(engine);
    return CudaRunner.load(contents, device?.gpuId ?? 0);
  },
  profileEngine: profileCudaEngine,
  inspect(engine: Uint8Array) {
    const { network, precision } = deserializeCudaEngine(engine);
    return { inputNames: network.inputs.map((i) => i.name), outputNames: network.outputs.map((o) => o.name), precision: precision ?? 'fp32 (not recorded)' };
  },
} satisfies Backend<'cuda'>;
