/**
 * Kernels: CUDA C++ source compiled by NVRTC for a device's compute capability (through the
 * disk cache), loaded as a module with its kernels resolved.
 */
import { InvalidArgumentError } from '../errors';
import type { Logger } from '../logger';
import { gpuBinding, type NativeModule } from './binding';
import { deviceOrdinal, type DeviceLike } from './device';
import { compileWithCache, type CompileRequest } from './kernel-cache';

export interface CompileModuleOptions {
  /** Extra NVRTC options (e.g. `--use_fast_math`); the architecture is added from the device. */
  options?: readonly string[];
  /** Program name for NVRTC's log (default `kernels.cu`). */
  name?: string;
  /** Cache root; `null` disables the disk cache (default: see kernel-cache.ts). */
  cacheDir?: string | null;
  logger?: Logger;
}

/** A loaded module; `kernels` lists the resolved kernel names in the order plans index them. */
export class GpuModule {
  /** @internal */
  readonly native: NativeModule;
  readonly device: number;
  readonly kernels: readonly string[];
  /** Whether the cubin came from the disk cache. */
  readonly cached: boolean;

  /** @internal */
  constructor(native: NativeModule, device: number, cached: boolean) {
    this.native = native;
    this.device = device;
    this.kernels = Object.freeze([...native.kernels]);
    this.cached = cached;
  }

  /** Index of a kernel by name, for {@link LaunchStep.kernel}. */
  kernelIndex(name: string): number {
    const index = this.kernels.indexOf(name);
    if (index < 0) throw new InvalidArgumentError(`module has no kernel ${JSON.stringify(name)} (it has ${this.kernels.join(', ')})`);
    return index;
  }

  /** Unloads the module. Plans that launch it must be disposed first. */
  dispose(): void {
    this.native.dispose();
  }
}

/** Loads a cubin (or PTX/fatbin) image and resolves `kernels` (extern "C" names). */
export async function loadModule(image: Uint8Array, kernels: readonly string[], device: DeviceLike = 0): Promise<GpuModule> {
  const ordinal = deviceOrdinal(device);
  return new GpuModule(await gpuBinding().gpuLoadModule(ordinal, image, [...kernels]), ordinal, false);
}

/**
 * Compiles CUDA C++ `source` for `device` with NVRTC (cached on disk) and loads it.
 * @throws {NvrtcCompileError} `E_NVRTC_COMPILE` with the compiler log in the message and `details.log`.
 * @throws {CudaLibraryMissingError} `E_CUDA_LIBRARY_MISSING` when no NVRTC can be loaded.
 */
export async function compileModule(
  source: string,
  kernels: readonly string[],
  device: DeviceLike = 0,
  options: CompileModuleOptions = {},
): Promise<GpuModule> {
  if (typeof source !== 'string' || source.length === 0) throw new InvalidArgumentError('compileModule needs CUDA C++ source text');
  const binding = gpuBinding();
  const ordinal = deviceOrdinal(device);
  const [info, nvrtc] = await Promise.all([binding.gpuDevice(ordinal), binding.nvrtcInfo()]);
  const request: CompileRequest = {
    source,
    name: options.name ?? 'kernels.cu',
    arch: info.computeCapabilityMajor * 10 + info.computeCapabilityMinor,
    options: options.options ?? [],
  };
  const compiled = await compileWithCache(request, {
    dir: options.cacheDir,
    nvrtcVersion: nvrtc.version,
    logger: options.logger,
    compile: (r) => binding.nvrtcCompile(r.source, r.name, r.arch, [...(r.options ?? [])]),
  });
  const native = await binding.gpuLoadModule(ordinal, compiled.cubin, [...kernels]);
  return new GpuModule(native, ordinal, compiled.cached);
}
