/**
 * Which NVIDIA libraries the GPU runtime can load, reported as data (for `doctor`).
 */
import { gpuBinding, type NativeLibraryInfo } from './binding';

export type CudaLibraryName = 'nvrtc' | 'cublasLt' | 'cudnn';

export interface CudaLibraryStatus {
  name: CudaLibraryName;
  found: boolean;
  /** The file that loaded. */
  path: string | null;
  /** Human-readable version, e.g. `13.0` (NVRTC), `13.1.0` (cuBLASLt), `9.14.0` (cuDNN). */
  version: string | null;
  /** Why not, when not found (`E_CUDA_LIBRARY_MISSING`, `E_ADDON_LOAD`...). */
  error: { code: string; message: string } | null;
}

/** `13000` → `13.0` (NVRTC), `130100` → `13.1.0` (cuBLASLt), `91400` → `9.14.0` (cuDNN). */
export function formatLibraryVersion(name: CudaLibraryName, version: number): string {
  if (name === 'nvrtc') return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
  if (name === 'cublasLt') return `${Math.floor(version / 10000)}.${Math.floor((version % 10000) / 100)}.${version % 100}`;
  return `${Math.floor(version / 10000)}.${Math.floor((version % 10000) / 100)}.${version % 100}`;
}

async function probe(name: CudaLibraryName, query: () => Promise<NativeLibraryInfo>): Promise<CudaLibraryStatus> {
  try {
    const info = await query();
    return { name, found: true, path: info.libraryPath, version: formatLibraryVersion(name, info.version), error: null };
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    return { name, found: false, path: null, version: null, error: { code: code ?? 'E_INTERNAL', message: message ?? String(error) } };
  }
}

/** Probes NVRTC, cuBLASLt and cuDNN; never throws. */
export async function cudaLibraries(): Promise<CudaLibraryStatus[]> {
  const binding = (): ReturnType<typeof gpuBinding> => gpuBinding();
  return Promise.all([
    probe('nvrtc', () => binding().nvrtcInfo()),
    probe('cublasLt', () => binding().cublasLtInfo()),
    probe('cudnn', () => binding().cudnnInfo()),
  ]);
}
