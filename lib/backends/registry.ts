/**
 * The backends by name, and `auto`'s resolution: try each by priority, keep every refusal
 * (backend and reasons) for the compile report and `doctor`, the way onnxruntime-web
 * resolves its execution providers. Resolution returns the Backend object itself, and the
 * table is a record over the closed name union, so no name can lack a backend or get another.
 */
import { BackendUnavailableError, InvalidArgumentError, TensorRTMissingError } from '../errors';
import { cudaBackend } from './cuda';
import { onnxruntimeBackend } from './onnxruntime';
import { referenceBackend } from './reference';
import { tensorrtBackend } from './tensorrt';
import { BACKEND_NAMES, isBackendName, type Availability, type Backend, type BackendName } from '../engine/backend';

/** Every backend; `satisfies` makes a missing name, or a backend filed under another name, a type error. */
export const BACKENDS = {
  tensorrt: tensorrtBackend,
  cuda: cudaBackend,
  onnxruntime: onnxruntimeBackend,
  reference: referenceBackend,
} as const satisfies { readonly [N in BackendName]: Backend<N> };

export { isBackendName };

/** The backend named `name` (a name read from a file or a flag). */
export function getBackend<N extends BackendName>(name: N): (typeof BACKENDS)[N];
export function getBackend(name: string): Backend;
export function getBackend(name: string): Backend {
  if (!isBackendName(name)) {
    throw new InvalidArgumentError(`no backend named "${name}" exists (known: ${BACKEND_NAMES.join(', ')})`, { details: { backend: name } });
  }
  return BACKENDS[name];
}

/** One backend that said no, and why. */
export interface BackendRefusal {
  backend: BackendName;
  reasons: string[];
}

/** What resolution chose, and every backend tried before it that refused. */
export interface BackendResolution {
  backend: Backend;
  refusals: BackendRefusal[];
}

/** Every backend, highest priority first. */
export const backendsByPriority = (table: Readonly<Record<BackendName, Backend>> = BACKENDS): Backend[] =>
  Object.values(table).sort((a, b) => b.priority - a.priority);

async function availability(backend: Backend): Promise<Availability> {
  try {
    return await backend.available();
  } catch (error) {
    return { ok: false, reasons: [`its probe failed: ${(error as Error).message}`] };
  }
}

/**
 * Resolves a backend choice: `auto` takes the first available backend by priority,
 * collecting each refusal; a named backend must be available. `table` is for tests with fake
 * backends.
 *
 * The error names what is missing: TensorRT only when tensorrt was the one asked for, since
 * a missing CUDA driver or onnxruntime-node is not fixed by installing TensorRT.
 *
 * @throws {TensorRTMissingError} `E_TENSORRT_MISSING`: `tensorrt` was named and is not usable here.
 * @throws {BackendUnavailableError} `E_BACKEND_UNAVAILABLE`: another backend was named and is not
 *   usable here (`details.backend`, `details.reasons`), or `auto` found none (`details.backend` is `auto`).
 */
export async function resolveBackend(choice: BackendName | 'auto', table: Readonly<Record<BackendName, Backend>> = BACKENDS): Promise<BackendResolution> {
  const candidates = choice === 'auto' ? backendsByPriority(table) : [table[choice]];
  const refusals: BackendRefusal[] = [];
  for (const backend of candidates) {
    const a = await availability(backend);
    if (a.ok) return { backend, refusals };
    refusals.push({ backend: backend.name, reasons: a.reasons });
  }
  const why = refusals.map((r) => `${r.backend}: ${r.reasons.join('; ')}`).join(' | ');
  const what = choice === 'auto' ? 'no backend is available here' : `backend "${choice}" was asked for, but it is not usable here`;
  const message = `${what} (${why}); \`tensorrt-node doctor\` says more`;
  if (choice === 'tensorrt') throw new TensorRTMissingError(message, { details: { backend: choice, reasons: refusals[0]!.reasons, refusals } });
  const reasons = choice === 'auto' ? refusals.map((r) => `${r.backend}: ${r.reasons.join('; ')}`) : refusals[0]!.reasons;
  throw new BackendUnavailableError(message, { details: { backend: choice, reasons, refusals } });
}

/** Every backend's availability, by priority (for `doctor`). */
export async function backendAvailability(table: Readonly<Record<BackendName, Backend>> = BACKENDS): Promise<Array<{ backend: BackendName; priority: number } & Availability>> {
  return Promise.all(backendsByPriority(table).map(async (b) => ({ backend: b.name, priority: b.priority, ...(await availability(b)) })));
}
