/**
 * The backends that are declared but not written yet (`tensorrt`, `cuda`, `onnxruntime`;
 * issues 17, 18, 21): they take their place in the registry and in `auto`'s order, answer
 * available() with why not, and refuse to build or load.
 */
import { TensorRTMissingError } from '../errors';
import type { Availability, Backend, BackendName } from './types';

/** A backend that is not implemented in this version; `probe` adds what is known of its libraries. */
export function unavailableBackend<N extends BackendName>(
  name: N,
  priority: number,
  version: string,
  residency: 'host' | 'device',
  reasons: () => Promise<string[]>,
): Backend<N> {
  const refuse = async (what: string): Promise<never> => {
    const availability = await backend.available();
    const why = availability.ok ? 'not implemented' : availability.reasons.join('; ');
    throw new TensorRTMissingError(`the ${name} backend cannot ${what} here: ${why}`, { details: { backend: name } });
  };
  const backend: Backend<N> = {
    name,
    priority,
    version,
    residency,
    implemented: false,
    async available(): Promise<Availability> {
      return { ok: false, reasons: await reasons() };
    },
    build: () => refuse('build engines'),
    load: () => refuse('load engines'),
    inspect(): never {
      throw new TensorRTMissingError(`the ${name} backend is not implemented in this version: its engines cannot be read`, { details: { backend: name } });
    },
  };
  return backend;
}
