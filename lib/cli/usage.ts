/**
 * Usage errors (bad flag values, missing arguments): exit 2, unlike runtime and model
 * errors (exit 1). They are E_INVALID_ARGUMENT errors that name the flag at fault.
 */
import { InvalidArgumentError } from '../errors';
import type { NamedInputSpec } from '../compile/settings';

/** A command line that cannot be carried out as written; the message names the flag and says what to write. */
export class UsageError extends InvalidArgumentError {
  constructor(message: string, options?: ConstructorParameters<typeof InvalidArgumentError>[1]) {
    super(message, options);
  }
}

/** A count or size for `flag`: a safe integer >= `min`. */
export function parseInteger(flag: string, text: string, min: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} ${text}: expected an integer >= ${min}`);
  return n;
}

/** A positive duration in seconds for `flag` (`2`, `0.5`). */
export function parseSeconds(flag: string, text: string): number {
  const n = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(n > 0 && Number.isFinite(n))) throw new UsageError(`${flag} ${text}: expected a positive number of seconds`);
  return n;
}

/** `1x3x224x224` → [1, 3, 224, 224]; `scalar` → []. Dims are safe positive integers. */
function parseDims(option: string, dims: string): number[] {
  if (dims === 'scalar') return [];
  return dims.split('x').map((d) => {
    const n = /^\d+$/.test(d) ? Number(d) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(`--shape ${option}: dim ${JSON.stringify(d)} is not a positive integer (write name=DxDxD, e.g. input0=1x3x224x224)`);
    }
    return n;
  });
}

/**
 * `--shape name=1x3x224x224` (static) or `--shape name=MIN:OPT:MAX` (a range, each DxD;
 * `MIN:MAX` leaves opt to the max) → [name, input spec].
 */
export function parseShapeOption(text: string): [string, NamedInputSpec] {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1) {
    throw new UsageError(`--shape ${text}: expected name=DxDxD or name=MIN:OPT:MAX (e.g. input0=1x3x224x224 or input0=1x3x224x224:8x3x224x224:32x3x224x224)`);
  }
  const name = text.slice(0, eq);
  const parts = text.slice(eq + 1).split(':').map((p) => parseDims(text, p));
  if (parts.length === 1) return [name, { shape: parts[0]! }];
  if (parts.some((p) => p.length !== parts[0]!.length)) throw new UsageError(`--shape ${text}: min, opt and max must have the same number of dims`);
  if (parts.length === 2) return [name, { min: parts[0]!, max: parts[1]! }];
  if (parts.length === 3) return [name, { min: parts[0]!, opt: parts[1]!, max: parts[2]! }];
  throw new UsageError(`--shape ${text}: a range is MIN:OPT:MAX (three shapes at most)`);
}

/** Every `--shape`, keyed by input name; an input given twice is a usage error. */
export function parseShapeOptions(texts: readonly string[] = []): Map<string, NamedInputSpec> {
  const shapes = new Map<string, NamedInputSpec>();
  for (const text of texts) {
    const [name, spec] = parseShapeOption(text);
    if (shapes.has(name)) throw new UsageError(`--shape ${text}: input "${name}" was given a shape twice`);
    shapes.set(name, spec);
  }
  return shapes;
}

/** The dims a spec runs at: the static shape, or the range's opt (else max). */
export function specRunShape(spec: NamedInputSpec): number[] | undefined {
  if ('shape' in spec) return spec.shape;
  if ('max' in spec) return spec.opt ?? spec.max;
  return undefined;
}
