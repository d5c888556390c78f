/**
 * Whether TensorRT can be used here: its runtime library (found with dlopen, never linked)
 * and the addon's TensorRT backend, which is compiled in only when the addon is built with
 * TensorRT's headers (TENSORRT_ROOT or TENSORRT_INCLUDE_DIR; docs/tensorrt.md).
 */
import { TensorRTNodeError } from './errors';
import { getAddon } from './native';

export interface TensorRTLibrary {
  /** The libnvinfer file that was loaded. */
  path: string;
  /** e.g. `10.16.0`. */
  version: string;
}

export interface TensorRTStatus {
  /** libnvinfer was found (and answered its version), or why not. */
  library: ({ found: true } & TensorRTLibrary) | { found: false; code: string; reason: string };
  /**
   * The addon has a TensorRT backend (building and running engines): false for an addon built
   * without TensorRT's headers ("built without TensorRT"), which then runs programs on the
   * other backends.
   */
  backendBuilt: boolean;
  /** Both: compile() may use the `tensorrt` backend. */
  available: boolean;
}

/** getInferLibVersion()'s number → `major.minor.patch` (TensorRT 10 encodes 10*10000 + minor*100 + patch). */
export function formatTensorRTVersion(versionNumber: number): string {
  const major = Math.floor(versionNumber / 10000);
  const minor = Math.floor((versionNumber % 10000) / 100);
  const patch = versionNumber % 100;
  return `${major}.${minor}.${patch}`;
}

/** Finds libnvinfer. @throws {TensorRTMissingError} `E_TENSORRT_MISSING` listing every name tried. */
export async function findTensorRTLibrary(): Promise<TensorRTLibrary> {
  const raw = await getAddon().binding.tensorrtLibrary();
  return { path: raw.libraryPath, version: formatTensorRTVersion(raw.version) };
}

/** Reports what of TensorRT is usable; never throws for a missing library (it says why instead). */
export async function tensorrtStatus(): Promise<TensorRTStatus> {
  const addon = getAddon();
  let library: TensorRTStatus['library'];
  try {
    library = { found: true, ...(await findTensorRTLibrary()) };
  } catch (error) {
    if (!(error instanceof TensorRTNodeError) || error.code !== 'E_TENSORRT_MISSING') throw error;
    library = { found: false, code: error.code, reason: error.message };
  }
  const backendBuilt = addon.info.tensorrtBackend;
  return { library, backendBuilt, available: library.found && backendBuilt };
}

/**
 * Resolves `true` when programs can be compiled for and run on TensorRT here; never rejects.
 * Asynchronous because the probe dlopens libnvinfer, a large library, on the thread pool:
 * `if (await isTensorRTAvailable()) ...`.
 */
export async function isTensorRTAvailable(): Promise<boolean> {
  try {
    return (await tensorrtStatus()).available;
  } catch {
    return false;
  }
}
