/**
 * What sizes a program compiled for generation takes, from its inputs' shapes and optimization
 * profiles, and the checks that a generation fits them: made before the first run, so that a
 * too-long request is refused in the caller's terms (prompt length, maxNewTokens) rather than
 * as E_SHAPE_OUT_OF_RANGE from the run of some later step.
 *
 * A generation runs the program once on the whole prompt (the prefill: seq = prompt length,
 * past = 0) and then once per new token (seq = 1, past = tokens so far), so the program must
 * take seq = 1, past = 0, and past and attention_mask lengths up to prompt + maxNewTokens - 1.
 */
import { InvalidArgumentError } from '../errors';
import { isStatic, type Dim } from '../ir/symbolic';
import type { KvCacheLayout } from './layout';

/** An input's shape and, for one with run-time dims, its {min, max} shapes per optimization profile. */
export interface ProfiledIO {
  readonly name: string;
  readonly shape: readonly Dim[];
  readonly profiles?: ReadonlyArray<{ readonly min: readonly number[]; readonly max: readonly number[] }>;
}

/** An inclusive range of sizes; max may be Infinity. */
export interface SizeRange {
  readonly min: number;
  readonly max: number;
}

/** The sizes a generation may use. */
export interface GenerationLimits {
  /** Prompts per generation (dim 0 of input_ids and the caches). */
  readonly batch: SizeRange;
  /** Tokens a run may feed (input_ids dim 1): the prompt at the prefill, 1 after. */
  readonly seq: SizeRange;
  /** Cached positions (the caches' dim 2). */
  readonly past: SizeRange;
  /** Positions attention_mask covers (its dim 1): past + seq. */
  readonly total: SizeRange;
}

const ANY: SizeRange = { min: 0, max: Infinity };

/**
 * The sizes dim `axis` of `io` takes: a static dim its size; a run-time dim the union of its
 * profiles' ranges (gaps between profiles are not tracked); a symbolic dim without profiles
 * (a program file older than format 1.2) any size, left to the run's own check.
 */
export function dimRange(io: ProfiledIO, axis: number): SizeRange {
  const d = io.shape[axis];
  if (d !== undefined && isStatic(d)) return { min: d, max: d };
  if (io.profiles === undefined || io.profiles.length === 0) return ANY;
  return { min: Math.min(...io.profiles.map((p) => p.min[axis]!)), max: Math.max(...io.profiles.map((p) => p.max[axis]!)) };
}

const meet = (a: SizeRange, b: SizeRange): SizeRange => ({ min: Math.max(a.min, b.min), max: Math.min(a.max, b.max) });
const fmt = (r: SizeRange): string => (r.min === r.max ? `${r.min}` : `[${r.min}, ${r.max === Infinity ? '∞' : r.max}]`);

/** How to compile a model so that generate() can run it (the end of the messages below). */
export const COMPILE_HINT =
  'compile the model with compileForGeneration(model, { maxBatch, maxLength }) (CLI: tensorrt-node generate MODEL --max-length N), ' +
  'which gives every input the dynamic ranges generation needs (docs/generate.md)';

/**
 * The limits of a program with layout `layout` and inputs `inputs`.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` when the program cannot generate at all:
 *   a static past length, a past that cannot be 0 (the prefill's), or input_ids that cannot
 *   take one token (a decode step's); the message names the input, its range and the fix.
 */
export function generationLimits(inputs: readonly ProfiledIO[], layout: KvCacheLayout): GenerationLimits {
  const byName = new Map(inputs.map((io) => [io.name, io]));
  const io = (name: string): ProfiledIO => byName.get(name)!;
  let batch = meet(dimRange(io(layout.inputIds), 0), dimRange(io(layout.attentionMask), 0));
  let seq = dimRange(io(layout.inputIds), 1);
  let past = ANY;
  for (const layer of layout.layers) {
    for (const name of [layer.pastKey, layer.pastValue]) {
      batch = meet(batch, dimRange(io(name), 0));
      past = meet(past, dimRange(io(name), 2));
    }
  }
  if (layout.positionIds !== undefined) {
    batch = meet(batch, dimRange(io(layout.positionIds), 0));
    seq = meet(seq, dimRange(io(layout.positionIds), 1));
  }
  const total = dimRange(io(layout.attentionMask), 1);
  const first = layout.layers[0]!.pastKey;
  const problems: string[] = [];
  if (past.min === past.max && isStatic(io(first).shape[2]!)) problems.push(`${first} has a static past length ${past.min} (dim 2), so the cache cannot grow`);
  else if (past.min > 0) problems.push(`the past length (dim 2 of ${first} and the other caches) ranges over ${fmt(past)}; the first run (the prompt) has an empty cache, past 0`);
  if (seq.min > 1) problems.push(`input_ids dim 1 ranges over ${fmt(seq)}; every run after the prompt feeds one token`);
  if (total.max < 2) problems.push(`attention_mask dim 1 ranges over ${fmt(total)}; it covers the cache and the new tokens, so it must grow with them`);
  if (batch.min > batch.max) problems.push('the batch dims of input_ids, attention_mask and the caches have no size in common');
  if (problems.length > 0) {
    throw new InvalidArgumentError(`the program was not compiled for generation: ${problems.join('; ')}. To generate, ${COMPILE_HINT}`, { details: { problems } });
  }
  return { batch, seq, past, total };
}

/**
 * Whether a generation of `batch` prompts padded to `promptLength` tokens and `maxNewTokens`
 * new ones fits `limits`: its last run has promptLength + maxNewTokens - 2 positions cached
 * and covers one more with attention_mask.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the size that does not fit, the
 *   program's range, and what would.
 */
export function checkFits(limits: GenerationLimits, batch: number, promptLength: number, maxNewTokens: number): void {
  const fail = (message: string, details: Record<string, unknown>): never => {
    throw new InvalidArgumentError(`generate(): ${message}`, { details });
  };
  if (batch < limits.batch.min || batch > limits.batch.max) {
    fail(`${batch} prompt${batch === 1 ? '' : 's'}: this program takes batches of ${fmt(limits.batch)} (dim 0 of input_ids and the caches); split the prompts, or ${COMPILE_HINT} with a larger maxBatch`, { batch, range: limits.batch });
  }
  if (promptLength < limits.seq.min || promptLength > limits.seq.max || promptLength > limits.total.max) {
    const most = Math.min(limits.seq.max, limits.total.max);
    fail(`the prompt has ${promptLength} tokens (the longest of the batch, padded); this program takes prompts of at most ${most} (input_ids dim 1: ${fmt(limits.seq)})`, { promptLength, range: limits.seq });
  }
  // The last run feeds the last token but one; with one new token there is only the prompt's run.
  const last = promptLength + maxNewTokens - 1;
  const lastPast = maxNewTokens === 1 ? 0 : last - 1;
  if (last > limits.total.max || lastPast > limits.past.max) {
    const room = Math.min(limits.total.max, limits.past.max + 1) - promptLength + 1;
    fail(
      `a prompt of ${promptLength} tokens and maxNewTokens ${maxNewTokens} reach ${last} positions in the last run; this program takes at most ${Math.min(limits.total.max, limits.past.max + 1)} ` +
        `(attention_mask dim 1: ${fmt(limits.total)}, past: ${fmt(limits.past)}): ask for at most ${Math.max(room, 0)} new tokens, or ${COMPILE_HINT} with a larger maxLength`,
      { promptLength, maxNewTokens, positions: last, range: limits.total },
    );
  }
}
