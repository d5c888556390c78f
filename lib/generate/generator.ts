/**
 * Text generation with a causal LM program that has a KV cache: createGenerator(program)
 * finds the cache layout (./layout.ts) and the sizes the program takes (./limits.ts) once;
 * each generation then runs the program on the whole prompt (the prefill, past 0) and once per
 * new token after it, feeding back the present outputs as the past (./kv-cache.ts), and
 * chooses each token greedily or by seeded sampling (./sampling.ts).
 *
 * A batch of prompts of different lengths is left-padded with attention_mask zeros, as
 * transformers does, with position ids counting from each row's first real token; a row that
 * reaches a stop token is finished, and is fed the pad token (its output ignored) while the
 * others go on.
 */
import { abortedError } from '../engine/build-context';
import { InvalidArgumentError } from '../errors';
import type { DType } from '../ir/dtype';
import { gpuBinding } from '../gpu/binding';
import { DeviceTensor } from '../gpu/device-tensor';
import { dtypeInfo } from '../ir/dtype';
import { Tensor } from '../ir/tensor';
import { outputDeviceOf } from '../runtime/in-process';
import type { Program } from '../runtime/program';
import { KvCache, type CachePlace, type CacheValue } from './kv-cache';
import { slotSizes } from './slot-sizes';
import { discoverLayout, type KvCacheLayout } from './layout';
import { checkFits, generationLimits, type GenerationLimits } from './limits';
import { resolveGenerateOptions, resolvePrompts, type GenerateOptions, type ResolvedGenerateOptions } from './options';
import { chooseToken, SeededRandom, type LogitsRow } from './sampling';

/** Options of createGenerator(). */
export interface GeneratorOptions {
  /**
   * Where the KV cache lives between steps: `'device'` keeps it in device memory (runs with
   * `outputs: 'device'`; the program needs a GPU engine), `'host'` as host tensors. `'auto'`
   * (the default): `'device'` for a program with a GPU engine, else `'host'`.
   */
  cache?: 'auto' | CachePlace;
  /**
   * The sizes runs use. `'exact'`: the prompt's own length, and a cache one slot longer at
   * every step, so every run has new shapes. `'bucketed'`: the prompt left-padded to one of a
   * few lengths and the cache grown through powers of two, padding masked out by
   * attention_mask (the same tokens; ./slot-sizes.ts says for which models), so that a program
   * that prepares its engines per shape (the cuda backend) reuses them from step to step.
   * `'auto'` (the default): `'bucketed'` when the cache lives on the device and the model takes
   * position_ids, else `'exact'`.
   */
  sizes?: 'auto' | RunSizes;
}

/** How a generation sizes its runs (GeneratorOptions.sizes). */
export type RunSizes = 'exact' | 'bucketed';

/** The tokens one step chose: one per prompt, null for a prompt that had already stopped. */
export interface GenerateStep {
  /** 0 for the token the prompt's run chose, then 1, 2, ... */
  readonly step: number;
  readonly tokens: ReadonlyArray<number | null>;
}

/** Why a row ended: a stop token (the last of its tokens), or maxNewTokens reached. */
export type FinishReason = 'stop' | 'length';

/** What a generation made. */
export interface GenerateResult {
  /** The new tokens of each prompt, in prompt order (a stop token that ended a row included). */
  readonly tokens: number[][];
  readonly finishReasons: FinishReason[];
  /** Runs of the program (the prompt's run included). */
  readonly steps: number;
}

const DISPOSED = 'this generator has been disposed';

/**
 * Generation with one program. Generations may run concurrently (each has its own cache);
 * the program stays the caller's: dispose() ends this generator's generations, not the program.
 */
export class Generator {
  /** Where the program keeps its cache, found from its input and output names. */
  readonly layout: KvCacheLayout;
  /** The batch and lengths the program takes. */
  readonly limits: GenerationLimits;
  /** Where the cache lives between steps. */
  readonly cache: CachePlace;
  /** Whether runs use exact or bucketed sizes. */
  readonly sizes: RunSizes;
  private readonly device: number | null;
  private readonly outputIndex: ReadonlyMap<string, number>;
  /** Each generation not yet ended: its own abort, which dispose() pulls, and its iterator. */
  private readonly running = new Map<AbortController, AsyncGenerator<GenerateStep, void, undefined>>();
  private disposed = false;

  /** @internal Made by {@link createGenerator}. */
  constructor(
    readonly program: Program,
    options: GeneratorOptions = {},
  ) {
    this.layout = discoverLayout(program.inputs, program.outputs);
    this.limits = generationLimits(program.inputs, this.layout);
    this.device = outputDeviceOf(program.data);
    const place = options.cache ?? 'auto';
    if (!['auto', 'host', 'device'].includes(place)) throw new InvalidArgumentError(`createGenerator(): cache must be 'auto', 'host' or 'device', got ${String(place)}`);
    if (place === 'device' && this.device === null) {
      throw new InvalidArgumentError(`createGenerator(): cache: 'device' needs a program with a GPU engine; this one runs on the ${program.backend} backend, on the CPU`, { details: { backend: program.backend } });
    }
    this.cache = place === 'auto' ? (this.device === null ? 'host' : 'device') : place;
    const sizes = options.sizes ?? 'auto';
    if (!['auto', 'exact', 'bucketed'].includes(sizes)) throw new InvalidArgumentError(`createGenerator(): sizes must be 'auto', 'exact' or 'bucketed', got ${String(sizes)}`);
    if (sizes === 'bucketed' && this.layout.positionIds === undefined) {
      throw new InvalidArgumentError(
        "createGenerator(): sizes: 'bucketed' needs a model that takes position_ids (padding would shift the positions of one that counts them from the cache's length); this one does not, so use sizes: 'exact'",
        { details: { inputs: program.inputs.map((io) => io.name) } },
      );
    }
    this.sizes = sizes === 'auto' ? (this.cache === 'device' && this.layout.positionIds !== undefined ? 'bucketed' : 'exact') : sizes;
    this.outputIndex = new Map(program.outputs.map((io, i) => [io.name, i]));
  }

  /**
   * The tokens of each step as they are chosen: one prompt (a list of token ids) or a batch (a
   * list of lists). Options are checked now (E_INVALID_ARGUMENT, thrown); the program runs
   * as the iterator is read. Leaving the loop early (break) ends the generation and frees its
   * cache; so does aborting `options.signal` (the iterator then rejects with E_ABORTED).
   *
   * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: bad prompts or options, a request the
   *   program's sizes do not take (./limits.ts says which), a disposed generator.
   */
  stream(prompts: readonly number[] | ReadonlyArray<readonly number[]>, options?: GenerateOptions): AsyncIterableIterator<GenerateStep> {
    if (this.disposed) throw new InvalidArgumentError(DISPOSED);
    const resolved = resolveGenerateOptions(options, this.layout.vocab);
    const rows = resolvePrompts(prompts, this.layout.vocab);
    checkFits(this.limits, rows.length, Math.max(...rows.map((r) => r.length)), resolved.maxNewTokens);
    const own = new AbortController();
    const iterator = this.steps(rows, resolved, own);
    this.running.set(own, iterator);
    return iterator;
  }

  /**
   * Runs a whole generation: {@link stream}'s steps collected per prompt.
   *
   * @throws {AbortedError} `E_ABORTED`: `options.signal` was aborted, or the generator disposed.
   */
  async generate(prompts: readonly number[] | ReadonlyArray<readonly number[]>, options?: GenerateOptions): Promise<GenerateResult> {
    const iterator = this.stream(prompts, options);
    const stops = new Set(options?.stopTokenIds ?? []);
    const tokens: number[][] = [];
    let steps = 0;
    for await (const step of iterator) {
      steps = step.step + 1;
      step.tokens.forEach((t, r) => {
        if (t !== null) (tokens[r] ??= []).push(t);
      });
    }
    const finishReasons = tokens.map((row): FinishReason => (stops.has(row[row.length - 1]!) ? 'stop' : 'length'));
    return { tokens, finishReasons, steps };
  }

  /**
   * Ends every generation still running (they reject with E_ABORTED) and waits until their
   * caches are freed; later calls are E_INVALID_ARGUMENT. The program is left as it is.
   * Idempotent.
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    const running = [...this.running];
    this.running.clear();
    // A generation waiting in a run rejects at the abort; one suspended at a step its reader
    // has not asked past ends at return(), which runs its clean-up; one never started just ends.
    for (const [controller] of running) controller.abort(new Error('the generator was disposed'));
    await Promise.all(running.map(([, iterator]) => iterator.return(undefined).catch(() => undefined)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** The generation itself. */
  private async *steps(rows: number[][], options: ResolvedGenerateOptions, own: AbortController): AsyncGenerator<GenerateStep, void, undefined> {
    const signal = options.signal === undefined ? own.signal : AbortSignal.any([options.signal, own.signal]);
    const batch = rows.length;
    const longest = Math.max(...rows.map((r) => r.length));
    const sizes = this.sizes === 'bucketed' ? slotSizes(this.limits, options.maxNewTokens) : null;
    const cache = new KvCache(this.layout, batch, sizes);
    const random = new SeededRandom(options.seed);
    const promptLength = sizes === null ? longest : sizes.promptLength(longest);
    const pads = rows.map((r) => promptLength - r.length);
    const done = new Array<boolean>(batch).fill(false);
    // The last token of each row, fed to the next run.
    let last: number[] = [];
    try {
      for (let step = 0; step < options.maxNewTokens; step++) {
        if (signal.aborted) throw abortedError(signal, 'generate()');
        const seq = step === 0 ? promptLength : 1;
        const ids = step === 0 ? rows.flatMap((r, i) => [...new Array<number>(pads[i]!).fill(options.padTokenId), ...r]) : last;
        const logits = await this.runStep(cache, this.feeds(batch, seq, cache, ids, pads), seq, signal, step === options.maxNewTokens - 1);
        const tokens = rows.map((_, r) => {
          if (done[r]) return null;
          const token = chooseToken(logits.data, logits.offsetOf(r), logits.vocab, options.sampling, random, `the logits of prompt ${r} at step ${step}`);
          if (options.stopTokenIds.has(token)) done[r] = true;
          return token;
        });
        last = tokens.map((t) => t ?? options.padTokenId);
        yield { step, tokens };
        if (done.every(Boolean)) return;
      }
    } finally {
      this.running.delete(own);
      await cache.dispose();
    }
  }

  /**
   * The inputs of one run (the cache's added by runStep). attention_mask covers the cache's
   * slots, then the `seq` fed: a used slot or a fed token is 1 unless it is a prompt's left
   * padding; a slot past the used ones is 0. Positions count the slots used before (every
   * position the generation has seen, padding included), less the row's padding.
   */
  private feeds(batch: number, seq: number, cache: KvCache, ids: readonly number[], pads: readonly number[]): Record<string, CacheValue> {
    const layout = this.layout;
    const past = cache.used;
    const slots = cache.capacity;
    const total = slots + seq;
    const ints = (name: string, shape: number[], values: number[]): Tensor => Tensor.from(layout.dtypes[name]!, shape, values);
    const mask: number[] = [];
    for (let r = 0; r < batch; r++) {
      for (let j = 0; j < total; j++) {
        // The position slot j holds: itself for a used slot, none (-1) for an unused one, then the tokens fed.
        const at = j < past ? j : j < slots ? -1 : past + j - slots;
        mask.push(at < pads[r]! ? 0 : 1);
      }
    }
    const feeds: Record<string, CacheValue> = {
      [layout.inputIds]: ints(layout.inputIds, [batch, seq], [...ids]),
      [layout.attentionMask]: ints(layout.attentionMask, [batch, total], mask),
    };
    if (layout.positionIds !== undefined) {
      // transformers' rule: the cumulative sum of the mask, minus one; 1 where the mask is 0.
      const positions: number[] = [];
      for (let r = 0; r < batch; r++) for (let j = past; j < past + seq; j++) positions.push(j < pads[r]! ? 1 : j - pads[r]!);
      feeds[layout.positionIds] = ints(layout.positionIds, [batch, seq], positions);
    }
    if (layout.useCacheBranch !== undefined) feeds[layout.useCacheBranch] = Tensor.from('bool', [1], [slots > 0 ? 1 : 0]);
    return feeds;
  }

  /**
   * Runs the program on `feeds` (`seq` tokens) and the cache; the presents become the cache
   * (unless this is the `last` run), and the logits of each row's last position come back on
   * the host. An abort rejects at once; the run's outputs are then freed when it ends.
   */
  private async runStep(cache: KvCache, feeds: Record<string, CacheValue>, seq: number, signal: AbortSignal, last: boolean): Promise<LastLogits> {
    const inputs = { ...feeds, ...cache.inputs() };
    const run: Promise<CacheValue[]> = this.cache === 'device' ? this.program.run(inputs, { outputs: 'device' }) : this.program.run(inputs);
    cache.readBy(run);
    const outputs = await abortable(run, signal, (late) => disposeAll(late));
    const byName = new Map<string, CacheValue>();
    for (const [name, i] of this.outputIndex) byName.set(name, outputs[i]!);
    const kept = new Set<CacheValue>();
    for (const layer of this.layout.layers) kept.add(byName.get(layer.presentKey)!).add(byName.get(layer.presentValue)!);
    try {
      return await lastLogits(byName.get(this.layout.logits)!);
    } finally {
      // Everything but the presents (the logits, outputs the layout does not read) is done with.
      disposeAll(outputs.filter((v) => !kept.has(v)));
      // After the last run nothing reads the cache again: its presents are freed, not moved in.
      if (last) disposeAll([...kept]);
      else await cache.advance(byName, seq);
    }
  }
}

/** The logits of each row's last position, as numbers. */
interface LastLogits {
  readonly data: LogitsRow;
  readonly vocab: number;
  offsetOf(row: number): number;
}

const isHalf = (dtype: DType): boolean => dtype === 'float16' || dtype === 'bfloat16';

/**
 * The last position's logits of every row of `logits` [batch, seq, vocab]: a view of a host
 * float32 tensor; from a device tensor, only those rows are copied (one copy for seq 1).
 */
async function lastLogits(logits: CacheValue): Promise<LastLogits> {
  const [batch, seq, vocab] = logits.shape as [number, number, number];
  if (logits instanceof Tensor) {
    if (!isHalf(logits.dtype)) return { data: logits.data as Float32Array, vocab, offsetOf: (r) => (r * seq + seq - 1) * vocab };
    const rows = Array.from({ length: batch }, (_, r) => new Tensor(logits.dtype, [vocab], (logits.data as Uint16Array).subarray((r * seq + seq - 1) * vocab, (r * seq + seq) * vocab)).toArray());
    return { data: rows.flat(), vocab, offsetOf: (r) => r * vocab };
  }
  const info = dtypeInfo(logits.dtype);
  const data = new info.storage(batch * vocab);
  if (seq === 1) {
    await gpuBinding().gpuCopyDtoH(logits.buffer, 0, data);
  } else {
    const rowBytes = vocab * info.itemBytes;
    await Promise.all(Array.from({ length: batch }, (_, r) => gpuBinding().gpuCopyDtoH(logits.buffer, (r * seq + seq - 1) * rowBytes, data.subarray(r * vocab, (r + 1) * vocab))));
  }
  const host = new Tensor(logits.dtype, [batch, vocab], data);
  return { data: isHalf(logits.dtype) ? host.toArray() : (host.data as Float32Array), vocab, offsetOf: (r) => r * vocab };
}

function disposeAll(values: readonly CacheValue[]): void {
  for (const v of values) if (v instanceof DeviceTensor) v.dispose();
}

/**
 * `run`, or an AbortedError as soon as `signal` aborts; outputs of a run that ends after the
 * abort go to `late`.
 */
function abortable<T>(run: Promise<T>, signal: AbortSignal, late: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    void run.then(late, () => undefined);
    return Promise.reject(abortedError(signal, 'generate()'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      void run.then(late, () => undefined);
      reject(abortedError(signal, 'generate()'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    run.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        // After an abort, onAbort has rejected and handed the outputs to `late`.
        if (!signal.aborted) resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A generator for `program`, a causal LM with a KV cache (docs/generate.md has the layout and
 * how to compile for it).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: the program is not a KV-cache LM (the
 *   message lists every input and output missing), or was not compiled with the dynamic sizes
 *   generation needs (the message names the input and the fix).
 */
export function createGenerator(program: Program, options?: GeneratorOptions): Generator {
  return new Generator(program, options);
}

/**
 * One generation: createGenerator(program).generate(prompts, options), the generator disposed
 * after. For several generations with one program, keep a generator.
 */
export async function generate(program: Program, prompts: readonly number[] | ReadonlyArray<readonly number[]>, options?: GenerateOptions & GeneratorOptions): Promise<GenerateResult> {
  const { cache, sizes, ...rest } = options ?? {};
  const generator = createGenerator(program, { ...(cache === undefined ? {} : { cache }), ...(sizes === undefined ? {} : { sizes }) });
  try {
    return await generator.generate(prompts, rest);
  } finally {
    await generator.dispose();
  }
}
