/**
 * The run-time checks of a cuda engine's inputs, on what any value has (dtype and shape), so
 * host Tensors and device values go through the same rules: every input exactly once, the
 * network's dtype (float64 for a float32 input only from the host: truncateDouble), its
 * rank and static dims, and dynamic dims inside one optimization profile. Pure.
 */
import { BadInputError, ShapeOutOfRangeError } from '../../../errors';
import type { Network } from '../../../network';

export interface InputLike {
  readonly dtype: string;
  readonly shape: readonly number[];
}

const fmt = (dtype: string, shape: readonly number[]): string => `${dtype}[${shape.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;

/**
 * Checks `inputs` against `network` and returns each input's shape by name.
 * `hostWidening(name)` says whether a float64 value may stand for that float32 input.
 *
 * @throws {BadInputError} a missing, unknown or ill-typed input, naming it.
 * @throws {ShapeOutOfRangeError} a dynamic dim outside every optimization profile.
 */
export function checkInputs(network: Network, inputs: Readonly<Record<string, InputLike>>, hostWidening: (name: string) => boolean): Record<string, number[]> {
  if (inputs === null || typeof inputs !== 'object') throw new BadInputError('run() takes an object of input values keyed by input name');
  const names = network.inputs.map((i) => i.name);
  for (const name of Object.keys(inputs)) {
    if (!names.includes(name)) throw new BadInputError(`unknown input "${name}"; the engine's inputs are ${names.map((n) => `"${n}"`).join(', ')}`, { details: { input: name } });
  }
  const shapes: Record<string, number[]> = Object.create(null);
  for (const input of network.inputs) {
    const declared = network.tensors[input.tensor]!;
    const want = fmt(declared.dtype, declared.shape);
    const v = Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined;
    const details = { input: input.name };
    if (v === undefined || v === null) throw new BadInputError(`missing input "${input.name}" (${want})`, { details });
    if (typeof v !== 'object' || !Array.isArray(v.shape)) throw new BadInputError(`input "${input.name}" must be a Tensor or a DeviceTensor, got ${typeof v}`, { details });
    const widened = v.dtype === 'float64' && declared.dtype === 'float32' && hostWidening(input.name);
    if (v.dtype !== declared.dtype && !widened) {
      throw new BadInputError(`input "${input.name}" is ${v.dtype}, the engine takes ${want}`, { details: { ...details, expected: declared.dtype, actual: v.dtype } });
    }
    if (v.shape.length !== declared.shape.length) {
      throw new BadInputError(`input "${input.name}" has shape [${v.shape.join(', ')}] (rank ${v.shape.length}), the engine takes ${want}`, { details });
    }
    declared.shape.forEach((d, i) => {
      if (d >= 0 && v.shape[i] !== d) {
        throw new BadInputError(`input "${input.name}" dim ${i} is ${v.shape[i]}, the engine was built for ${d} (${want})`, { details: { ...details, dim: i } });
      }
    });
    shapes[input.name] = [...v.shape];
  }
  checkProfiles(network, shapes);
  return shapes;
}

/** The first optimization profile every input fits; ShapeOutOfRangeError naming the first violation otherwise. */
function checkProfiles(network: Network, shapes: Readonly<Record<string, readonly number[]>>): void {
  const count = Math.max(0, ...network.inputs.map((i) => i.profiles.length));
  const misses: string[] = [];
  let first: { input: string; dim: number; value: number; min: number; max: number; profile: number } | undefined;
  for (let p = 0; p < count; p++) {
    let miss: typeof first;
    for (const input of network.inputs) {
      const profile = input.profiles[p];
      const shape = shapes[input.name]!;
      const dim = profile === undefined ? -1 : shape.findIndex((d, i) => d < profile.min[i]! || d > profile.max[i]!);
      if (dim >= 0) {
        miss = { input: input.name, dim, value: shape[dim]!, min: profile!.min[dim]!, max: profile!.max[dim]!, profile: p };
        break;
      }
    }
    if (miss === undefined) return;
    first ??= miss;
    misses.push(`profile ${p} needs "${miss.input}" dim ${miss.dim} in [${miss.min}, ${miss.max}]`);
  }
  if (first === undefined) return;
  const others = misses.length > 1 ? ` (no optimization profile fits: ${misses.join('; ')})` : '';
  throw new ShapeOutOfRangeError(`input "${first.input}" dim ${first.dim} is ${first.value}, outside the optimization profile's range [${first.min}, ${first.max}]${others}`, {
    details: { ...first },
  });
}
