/**
 * The options of generate() and stream(), and their validation: every bad value is
 * E_INVALID_ARGUMENT naming the option, before anything runs.
 */
import { InvalidArgumentError } from '../errors';
import type { Sampling } from './sampling';

/** Options of one generation (generate(), stream()). */
export interface GenerateOptions {
  /** New tokens per prompt at most (default 20); a row ends earlier at a stop token. */
  maxNewTokens?: number;
  /**
   * 0 (the default without topK or topP): greedy, the highest logit each step. Above 0:
   * sampling from softmax(logits / temperature). With topK or topP and no temperature, 1.
   */
  temperature?: number;
  /** Sample among the k highest logits only (an integer >= 1). */
  topK?: number;
  /** Sample among the fewest most probable tokens whose probabilities sum to at least topP, in (0, 1]. */
  topP?: number;
  /** Seeds the sampling (any safe integer): the same seed, prompts and program give the same tokens. Default: a random seed. */
  seed?: number;
  /** Token ids that end a row (included in its output): the tokenizer's end-of-sequence ids. */
  stopTokenIds?: readonly number[];
  /**
   * The id fed where there is no token: left of shorter prompts (masked out by attention_mask)
   * and after a row stopped while others go on. Default: the first stop token id, else 0.
   */
  padTokenId?: number;
  /** Aborting it stops the generation with E_ABORTED, freeing its cache. */
  signal?: AbortSignal;
}

/** The options with their defaults applied. */
export interface ResolvedGenerateOptions {
  readonly maxNewTokens: number;
  readonly sampling: Sampling;
  readonly seed: number;
  readonly stopTokenIds: ReadonlySet<number>;
  readonly padTokenId: number;
  readonly signal: AbortSignal | undefined;
}

const KEYS = ['maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'stopTokenIds', 'padTokenId', 'signal'];

/** The default of maxNewTokens (transformers' default generation length). */
export const DEFAULT_MAX_NEW_TOKENS = 20;

/** A token id: an integer >= 0, below `vocab` when it is known. */
export function isTokenId(v: unknown, vocab: number | undefined): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && (vocab === undefined || v < vocab);
}

/**
 * `options` checked and completed. `vocab` (the logits' size, when static) bounds token ids.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the option and the value.
 */
export function resolveGenerateOptions(options: GenerateOptions | undefined, vocab: number | undefined): ResolvedGenerateOptions {
  const o = (options ?? {}) as Record<string, unknown>;
  const bad = (message: string): never => {
    throw new InvalidArgumentError(`generate() options: ${message}`);
  };
  if (typeof o !== 'object' || o === null || Array.isArray(o)) bad('must be an object');
  for (const k of Object.keys(o)) if (!KEYS.includes(k)) bad(`unknown option "${k}" (known: ${KEYS.join(', ')})`);
  const given = (k: string): boolean => o[k] !== undefined;
  const maxNewTokens = given('maxNewTokens') ? o.maxNewTokens : DEFAULT_MAX_NEW_TOKENS;
  if (typeof maxNewTokens !== 'number' || !Number.isSafeInteger(maxNewTokens) || maxNewTokens < 1) bad(`maxNewTokens must be an integer >= 1, got ${String(maxNewTokens)}`);
  if (given('temperature') && !(typeof o.temperature === 'number' && Number.isFinite(o.temperature) && o.temperature >= 0)) bad(`temperature must be a finite number >= 0, got ${String(o.temperature)}`);
  if (given('topK') && !(typeof o.topK === 'number' && Number.isSafeInteger(o.topK) && o.topK >= 1)) bad(`topK must be an integer >= 1, got ${String(o.topK)}`);
  if (given('topP') && !(typeof o.topP === 'number' && o.topP > 0 && o.topP <= 1)) bad(`topP must be a number in (0, 1], got ${String(o.topP)}`);
  if (given('seed') && !(typeof o.seed === 'number' && Number.isSafeInteger(o.seed))) bad(`seed must be a safe integer, got ${String(o.seed)}`);
  const sampled = given('topK') || given('topP');
  const temperature = given('temperature') ? (o.temperature as number) : sampled ? 1 : 0;
  if (temperature === 0 && sampled) bad(`${given('topK') ? 'topK' : 'topP'} applies when sampling, and temperature 0 is greedy: give a temperature above 0 (or leave it out, for 1)`);
  const stops = given('stopTokenIds') ? o.stopTokenIds : [];
  if (!Array.isArray(stops) || !stops.every((v) => isTokenId(v, vocab))) {
    bad(`stopTokenIds must be a list of token ids (integers >= 0${vocab === undefined ? '' : ` below the vocabulary size ${vocab}`}), got ${JSON.stringify(stops)}`);
  }
  const padTokenId = given('padTokenId') ? o.padTokenId : ((stops as number[])[0] ?? 0);
  if (!isTokenId(padTokenId, vocab)) bad(`padTokenId must be a token id (an integer >= 0${vocab === undefined ? '' : ` below ${vocab}`}), got ${String(padTokenId)}`);
  const signal = o.signal as AbortSignal | undefined;
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    bad('signal must be an AbortSignal (new AbortController().signal)');
  }
  return {
    maxNewTokens: maxNewTokens as number,
    sampling: { temperature, ...(given('topK') ? { topK: o.topK as number } : {}), ...(given('topP') ? { topP: o.topP as number } : {}) },
    seed: given('seed') ? (o.seed as number) : randomSeed(),
    stopTokenIds: new Set(stops as number[]),
    padTokenId: padTokenId as number,
    signal,
  };
}

/** A seed for a generation given none. */
function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 32);
}

/**
 * Prompts as a batch: one prompt (a list of ids) or several (a list of lists), each non-empty.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the prompt and the bad id.
 */
export function resolvePrompts(prompts: unknown, vocab: number | undefined): number[][] {
  const bad = (message: string): never => {
    throw new InvalidArgumentError(`generate(): ${message}`);
  };
  if (!Array.isArray(prompts) || prompts.length === 0) return bad('the prompt must be a non-empty list of token ids, or a non-empty list of such lists (a batch)');
  const batch = (prompts as unknown[]).every((p) => Array.isArray(p)) ? (prompts as unknown[][]) : [prompts as unknown[]];
  batch.forEach((p, r) => {
    const label = batch.length === 1 && !Array.isArray(prompts[0]) ? 'the prompt' : `prompt ${r}`;
    if (p.length === 0) bad(`${label} is empty (a prompt needs at least one token, e.g. the tokenizer's beginning-of-sequence id)`);
    const at = p.findIndex((v) => !isTokenId(v, vocab));
    if (at >= 0) bad(`${label}[${at}] is ${JSON.stringify(p[at]) ?? String(p[at])}, not a token id (an integer >= 0${vocab === undefined ? '' : ` below the vocabulary size ${vocab}`})`);
  });
  return batch as number[][];
}
