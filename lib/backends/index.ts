/** The backends by name. */
import { InvalidArgumentError } from '../errors';
import { referenceBackend } from './reference';
import type { Backend } from './types';

const backends = new Map<string, Backend>([[referenceBackend.name, referenceBackend]]);

export function getBackend(name: string): Backend {
  const b = backends.get(name);
  if (b === undefined) {
    throw new InvalidArgumentError(`no backend named "${name}" is available in this build (available: ${[...backends.keys()].join(', ')})`);
  }
  return b;
}

export type { Backend, Runner } from './types';
