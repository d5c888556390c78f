/** Whether NCCL loads, and which version, reported as data (for `doctor`). */
import { ncclBinding } from './binding';

export interface NcclStatus {
  found: boolean;
  path: string | null;
  /** e.g. `2.28.3`. */
  version: string | null;
  error: { code: string; message: string } | null;
}

/** ncclGetVersion's number as NCCL writes it: 22803 → `2.28.3` (X*1000 + Y*100 + Z before 2.9). */
export function formatNcclVersion(version: number): string {
  const major = version >= 10000 ? Math.floor(version / 10000) : Math.floor(version / 1000);
  const minor = version >= 10000 ? Math.floor((version % 10000) / 100) : Math.floor((version % 1000) / 100);
  return `${major}.${minor}.${version % 100}`;
}

/** Never throws. */
export async function ncclStatus(): Promise<NcclStatus> {
  try {
    const info = await ncclBinding().ncclInfo();
    return { found: true, path: info.libraryPath, version: formatNcclVersion(info.version), error: null };
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    return { found: false, path: null, version: null, error: { code: code ?? 'E_INTERNAL', message: message ?? String(error) } };
  }
}
