/**
 * Outputs written into the caller's own device tensors (`program.run(inputs, { outputs: [...] })`,
 * Engine.run's `into`): a target must be a live device value on the output's device with the
 * output's dtype and shape. One message for every backend and for the program's own copy, so a
 * mismatched target fails the same way wherever it is found. Pure.
 */
import { InvalidArgumentError } from '../errors';
import type { DType } from '../ir/dtype';

/** What an output is: the target must match it exactly. */
export interface OutputSpec {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly device: number;
}

const describe = (dtype: string, shape: readonly number[]): string => `${dtype} [${shape.join(', ')}]`;

/** How a target looks, for the message. */
function describeTarget(target: unknown): string {
  if (target === null || typeof target !== 'object') return target === null ? 'null' : typeof target;
  const t = target as { dtype?: unknown; shape?: unknown; residency?: { kind?: unknown; ordinal?: unknown }; disposed?: unknown };
  if (t.disposed === true) return 'a disposed DeviceTensor';
  if (typeof t.dtype !== 'string' || !Array.isArray(t.shape)) return 'an object that is not a DeviceTensor';
  const where = t.residency?.kind === 'device' ? `device ${String(t.residency.ordinal)}` : 'the host';
  return `${describe(t.dtype, t.shape as number[])} on ${where}`;
}

/**
 * The error for `target` standing for output `output` (what it is and what was needed), or
 * undefined when it fits `want`.
 */
export function outputTargetError(output: string, target: unknown, want: OutputSpec): InvalidArgumentError | undefined {
  const t = target as { dtype?: unknown; shape?: readonly number[]; residency?: { kind?: unknown; ordinal?: unknown }; disposed?: unknown } | null;
  const fits =
    t !== null &&
    typeof t === 'object' &&
    t.disposed !== true &&
    t.dtype === want.dtype &&
    t.residency?.kind === 'device' &&
    t.residency.ordinal === want.device &&
    Array.isArray(t.shape) &&
    t.shape.length === want.shape.length &&
    t.shape.every((d, i) => d === want.shape[i]);
  if (fits) return undefined;
  return new InvalidArgumentError(`run(): output "${output}" is ${describe(want.dtype, want.shape)} on device ${want.device}; the DeviceTensor given for it is ${describeTarget(target)}`, {
    details: { output, expected: describe(want.dtype, want.shape), device: want.device },
  });
}
