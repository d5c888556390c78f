/**
 * generate() on a tiny GPT-2-shaped ONNX LM with a KV cache (test/helpers/tiny-kv-lm.ts),
 * compiled by compileForGeneration() for the reference and onnxruntime backends, against an
 * oracle that is onnxruntime-node running the same ONNX bytes one step at a time under a loop
 * written in the test (./lm-oracle.ts), one unpadded prompt at a time:
 * - greedy: the same 16 tokens, batch 1 and a batch of 2 prompts of different lengths
 *   (left-padded by generate(), so the padding and positions must not change a row's tokens);
 * - sampling: a seed reproduces the tokens (and across the two backends); every token sampled
 *   with top-k is among the k highest of the oracle's logits at its step, and with top-p in
 *   the oracle's nucleus;
 * - stop tokens end a row early, its stop token included;
 * - an AbortSignal ends a stream with E_ABORTED (between steps and mid-run), and so does
 *   dispose();
 * - programs that cannot generate are refused, naming what is missing.
 */
import { compile } from '../../lib/compile';
import { compileForGeneration, createGenerator, generate, type GenerateStep } from '../../lib/generate';
import type { Program } from '../../lib/runtime/program';
import { Tensor } from '../../lib/ir/tensor';
import { tinyKvLm, tinyLmWithoutCache } from '../helpers/tiny-kv-lm';
import { nucleus, oracleGreedy, oracleLogits, topGap, topK } from './lm-oracle';

const lm = tinyKvLm();
const STEPS = 16;
const PROMPTS = [
  [3, 1, 4, 1, 5],
  [9, 2],
];
const MAX_LENGTH = 32;

const programs: Record<string, Program> = {};
let oracle: Array<{ tokens: number[]; logits: number[][] }>;
/** The oracle's 28 tokens for the first prompt: the longest generation the programs take (5 + 28 - 1 = 32 positions). */
let longOracle: { tokens: number[]; logits: number[][] };

beforeAll(async () => {
  oracle = await Promise.all(PROMPTS.map((p) => oracleGreedy(lm, p, STEPS)));
  longOracle = await oracleGreedy(lm, PROMPTS[0]!, MAX_LENGTH - PROMPTS[0]!.length + 1);
  for (const backend of ['reference', 'onnxruntime'] as const) programs[backend] = await compileForGeneration(lm.model, { backend, maxBatch: 4, maxLength: MAX_LENGTH });
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(programs).map((p) => p.dispose()));
});

test('the oracle is well-conditioned: no greedy step is within 1e-3 of a tie', () => {
  for (const o of [...oracle, longOracle]) for (const row of o.logits) expect(topGap(row)).toBeGreaterThan(1e-3);
});

describe.each(['reference', 'onnxruntime'])('on the %s backend', (backend) => {
  test('greedy, batch 1: the oracle\'s 16 tokens', async () => {
    const result = await generate(programs[backend]!, PROMPTS[0]!, { maxNewTokens: STEPS });
    expect(result).toEqual({ tokens: [oracle[0]!.tokens], finishReasons: ['length'], steps: STEPS });
  });

  test('greedy, a batch of two prompts of different lengths: each row is its prompt\'s oracle tokens', async () => {
    const result = await generate(programs[backend]!, PROMPTS, { maxNewTokens: STEPS });
    expect(result.tokens).toEqual(oracle.map((o) => o.tokens));
    expect(result.finishReasons).toEqual(['length', 'length']);
  });

  test('bucketed sizes on the host: the same tokens as the oracle, batched, with the longest generation the program takes', async () => {
    const generator = createGenerator(programs[backend]!, { sizes: 'bucketed' });
    expect(generator.sizes).toBe('bucketed');
    try {
      expect((await generator.generate(PROMPTS, { maxNewTokens: STEPS })).tokens).toEqual(oracle.map((o) => o.tokens));
      // 5 + 28 - 1 = 32 positions: no room to pad the prompt or round the cache up at the end.
      expect((await generator.generate(PROMPTS[0]!, { maxNewTokens: 28 })).tokens).toEqual([longOracle.tokens]);
    } finally {
      await generator.dispose();
    }
  });

  test('streaming yields one token per prompt per step, in order', async () => {
    const generator = createGenerator(programs[backend]!);
    const steps: GenerateStep[] = [];
    for await (const step of generator.stream(PROMPTS, { maxNewTokens: 4 })) steps.push(step);
    expect(steps).toEqual([0, 1, 2, 3].map((i) => ({ step: i, tokens: oracle.map((o) => o.tokens[i]) })));
    await generator.dispose();
  });

  test('stop tokens end a row early (the stop token included) while the other goes on', async () => {
    // The second prompt's 4th greedy token, where it does not appear earlier in either row's first tokens.
    const stop = oracle[1]!.tokens[3]!;
    const firstAt = (tokens: number[]): number => tokens.indexOf(stop);
    const result = await generate(programs[backend]!, PROMPTS, { maxNewTokens: STEPS, stopTokenIds: [stop] });
    result.tokens.forEach((row, r) => {
      const at = firstAt(oracle[r]!.tokens);
      expect(row).toEqual(at < 0 ? oracle[r]!.tokens : oracle[r]!.tokens.slice(0, at + 1));
      expect(result.finishReasons[r]).toBe(at < 0 ? 'length' : 'stop');
    });
    expect(result.finishReasons[1]).toBe('stop');
    const alone = await generate(programs[backend]!, PROMPTS[1]!, { maxNewTokens: STEPS, stopTokenIds: [stop] });
    expect(alone).toEqual({ tokens: [oracle[1]!.tokens.slice(0, firstAt(oracle[1]!.tokens) + 1)], finishReasons: ['stop'], steps: firstAt(oracle[1]!.tokens) + 1 });
  });
});

describe('sampling', () => {
  const options = { maxNewTokens: STEPS, temperature: 1.5, seed: 1234 };

  test('a seed reproduces the tokens, on both backends; another seed gives others', async () => {
    const a = await generate(programs.reference!, PROMPTS, options);
    const b = await generate(programs.reference!, PROMPTS, options);
    const c = await generate(programs.onnxruntime!, PROMPTS, options);
    expect(b.tokens).toEqual(a.tokens);
    expect(c.tokens).toEqual(a.tokens);
    const other = await generate(programs.reference!, PROMPTS, { ...options, seed: 99 });
    expect(other.tokens).not.toEqual(a.tokens);
    // At temperature 1.5 the tokens are not the greedy ones.
    expect(a.tokens).not.toEqual(oracle.map((o) => o.tokens));
  });

  test('top-k: every sampled token is among the k highest of the oracle\'s logits at its step', async () => {
    for (const seed of [1, 2, 3]) {
      const { tokens } = await generate(programs.onnxruntime!, PROMPTS, { maxNewTokens: STEPS, temperature: 2, topK: 3, seed });
      for (let r = 0; r < PROMPTS.length; r++) {
        const logits = await oracleLogits(lm, PROMPTS[r]!, tokens[r]!, STEPS);
        tokens[r]!.forEach((t, step) => expect(topK(logits[step]!, 3)).toContain(t));
        // Not always the top one: the draw did pick among the three.
        if (seed === 1 && r === 0) expect(tokens[r]!.some((t, step) => t !== topK(logits[step]!, 1)[0])).toBe(true);
      }
    }
  }, 60_000);

  test('top-p: every sampled token is in the oracle\'s nucleus at its step', async () => {
    const { tokens } = await generate(programs.reference!, PROMPTS, { maxNewTokens: STEPS, temperature: 1, topP: 0.6, seed: 5 });
    for (let r = 0; r < PROMPTS.length; r++) {
      const logits = await oracleLogits(lm, PROMPTS[r]!, tokens[r]!, STEPS);
      tokens[r]!.forEach((t, step) => expect(nucleus(logits[step]!, 0.6 + 1e-6, 1)).toContain(t));
    }
  }, 60_000);

  test('top-k 1 is greedy', async () => {
    const result = await generate(programs.reference!, PROMPTS, { maxNewTokens: STEPS, topK: 1, seed: 8 });
    expect(result.tokens).toEqual(oracle.map((o) => o.tokens));
  });
});

describe('cancellation', () => {
  test('aborting between steps: the stream rejects with E_ABORTED and the generator has nothing running', async () => {
    const generator = createGenerator(programs.onnxruntime!);
    const controller = new AbortController();
    const seen: GenerateStep[] = [];
    const consume = async (): Promise<void> => {
      for await (const step of generator.stream(PROMPTS, { maxNewTokens: STEPS, signal: controller.signal })) {
        seen.push(step);
        if (step.step === 2) controller.abort(new Error('client went away'));
      }
    };
    await expect(consume()).rejects.toMatchObject({ code: 'E_ABORTED', message: 'generate() was aborted: client went away' });
    expect(seen.map((s) => s.step)).toEqual([0, 1, 2]);
    expect((generator as unknown as { running: Map<unknown, unknown> }).running.size).toBe(0);
    await generator.dispose();
  });

  test('aborting while a run is in flight rejects that step at once', async () => {
    const generator = createGenerator(programs.reference!);
    const controller = new AbortController();
    const it = generator.stream(PROMPTS[0]!, { maxNewTokens: STEPS, signal: controller.signal });
    await it.next();
    const pending = it.next();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'E_ABORTED', message: 'generate() was aborted' });
    await expect(it.next()).resolves.toEqual({ done: true, value: undefined });
    await generator.dispose();
  });

  test('an already aborted signal runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(generate(programs.reference!, PROMPTS, { signal: controller.signal })).rejects.toMatchObject({ code: 'E_ABORTED' });
  });

  test('dispose() ends running and unread generations; later calls are refused', async () => {
    const generator = createGenerator(programs.reference!);
    const running = generator.stream(PROMPTS, { maxNewTokens: STEPS });
    await running.next();
    const inFlight = running.next();
    const unread = generator.stream(PROMPTS, { maxNewTokens: STEPS });
    await generator.dispose();
    await expect(inFlight).rejects.toMatchObject({ code: 'E_ABORTED', message: 'generate() was aborted: the generator was disposed' });
    await expect(unread.next()).resolves.toEqual({ done: true, value: undefined });
    expect(() => generator.stream(PROMPTS)).toThrow('this generator has been disposed');
  });

  test('leaving a stream early (break) ends it', async () => {
    const generator = createGenerator(programs.reference!);
    for await (const step of generator.stream(PROMPTS, { maxNewTokens: STEPS })) if (step.step === 1) break;
    expect((generator as unknown as { running: Map<unknown, unknown> }).running.size).toBe(0);
    await generator.dispose();
  });
});

describe('refusals', () => {
  test('a run whose mask length is not past + new tokens (the profile allows each alone): E_BAD_INPUT naming the layer, on both CPU backends', async () => {
    const codes: string[] = [];
    for (const backend of ['reference', 'onnxruntime'] as const) {
      const program = programs[backend]!;
      const feeds: Record<string, Tensor> = {};
      for (const input of program.inputs) {
        const dims = input.shape.map((d, i) => (typeof d === 'number' ? d : i === 0 ? 1 : input.name.startsWith('past') ? 5 : input.name === 'attention_mask' ? 3 : 2));
        feeds[input.name] = new Tensor(input.dtype, dims);
      }
      let error: unknown;
      try {
        await program.run(feeds);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'E_BAD_INPUT', details: { layer: expect.stringContaining('MatMul_34/attention') } });
      codes.push((error as { code: string }).code);
    }
    expect(codes).toEqual(['E_BAD_INPUT', 'E_BAD_INPUT']);
  });

  test('a program that is not a KV-cache LM: E_INVALID_ARGUMENT naming what is missing', async () => {
    const plain = await compile(tinyLmWithoutCache(), { backend: 'reference', inputs: { input_ids: { min: [1, 1], max: [2, 8] } } });
    try {
      let error: unknown;
      try {
        createGenerator(plain);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'E_INVALID_ARGUMENT' });
      const message = (error as Error).message;
      expect(message).toMatch(/^the program is not a causal LM with a KV cache in the layout generate\(\) takes: /);
      expect(message).toContain('no input attention_mask');
      expect(message).toContain('no past_key_values.N.key / .value inputs and no present.N.key / .value outputs');
      expect((error as { details: { problems: string[] } }).details.problems).toEqual([
        'no input attention_mask',
        'no past_key_values.N.key / .value inputs and no present.N.key / .value outputs (a model exported without its KV cache)',
      ]);
    } finally {
      await plain.dispose();
    }
    await expect(compileForGeneration(tinyLmWithoutCache(), { maxLength: 8 })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('the model is not a causal LM with a KV cache') });
  });

  test('a KV-cache LM compiled with static shapes: refused, naming the past dim and how to compile', async () => {
    const shape = (past: number) => [1, lm.heads, past, lm.headDim];
    const inputs: Record<string, { shape: number[] }> = { input_ids: { shape: [1, 1] }, attention_mask: { shape: [1, 5] }, position_ids: { shape: [1, 1] } };
    for (let l = 0; l < lm.layers; l++) inputs[`past_key_values.${l}.key`] = inputs[`past_key_values.${l}.value`] = { shape: shape(4) };
    const fixed = await compile(lm.model, { backend: 'reference', inputs });
    try {
      expect(() => createGenerator(fixed)).toThrow(
        /^the program was not compiled for generation: past_key_values\.0\.key has a static past length 4 \(dim 2\), so the cache cannot grow\. To generate, compile the model with compileForGeneration\(model, \{ maxBatch, maxLength \}\)/,
      );
    } finally {
      await fixed.dispose();
    }
  });

  test('bucketed sizes on a model without position_ids: refused (padding would move its positions); exact sizes give the oracle\'s tokens', async () => {
    const counted = tinyKvLm({ positionIds: false });
    const program = await compileForGeneration(counted.model, { backend: 'reference', maxBatch: 1, maxLength: 16 });
    try {
      expect(() => createGenerator(program, { sizes: 'bucketed' })).toThrow(/^createGenerator\(\): sizes: 'bucketed' needs a model that takes position_ids/);
      const generator = createGenerator(program);
      expect(generator.sizes).toBe('exact');
      const expected = await oracleGreedy(counted, PROMPTS[0]!, 8);
      expect((await generator.generate(PROMPTS[0]!, { maxNewTokens: 8 })).tokens).toEqual([expected.tokens]);
      await generator.dispose();
    } finally {
      await program.dispose();
    }
  });

  test('a request the program\'s sizes do not take, or bad prompts and options, before anything runs', async () => {
    const generator = createGenerator(programs.reference!);
    expect(generator.limits).toEqual({ batch: { min: 1, max: 4 }, seq: { min: 1, max: MAX_LENGTH }, past: { min: 0, max: MAX_LENGTH - 1 }, total: { min: 1, max: MAX_LENGTH } });
    expect(() => generator.stream(PROMPTS[0]!, { maxNewTokens: 29 })).toThrow(
      'generate(): a prompt of 5 tokens and maxNewTokens 29 reach 33 positions in the last run; this program takes at most 32 (attention_mask dim 1: [1, 32], past: [0, 31]): ask for at most 28 new tokens',
    );
    expect(() => generator.stream(PROMPTS[0]!, { maxNewTokens: 28 })).not.toThrow();
    expect(() => generator.stream([[1], [2], [3], [4], [5]])).toThrow(/^generate\(\): 5 prompts: this program takes batches of \[1, 4\]/);
    expect(() => generator.stream([])).toThrow('generate(): the prompt must be a non-empty list of token ids');
    expect(() => generator.stream([[1, 2], []])).toThrow('generate(): prompt 1 is empty');
    expect(() => generator.stream([1, 17])).toThrow('generate(): the prompt[1] is 17, not a token id (an integer >= 0 below the vocabulary size 17)');
    expect(() => generator.stream([1], { topK: 2, temperature: 0 })).toThrow('generate() options: topK applies when sampling, and temperature 0 is greedy');
    expect(() => generator.stream([1], { topP: 1.5 })).toThrow('generate() options: topP must be a number in (0, 1], got 1.5');
    expect(() => generator.stream([1], { maxNewTokens: 0 })).toThrow('generate() options: maxNewTokens must be an integer >= 1, got 0');
    expect(() => generator.stream([1], { stopTokenIds: [40] })).toThrow(/^generate\(\) options: stopTokenIds must be a list of token ids/);
    expect(() => generator.stream([1], { maxTokens: 3 } as never)).toThrow('generate() options: unknown option "maxTokens"');
    expect(() => createGenerator(programs.reference!, { cache: 'device' })).toThrow("createGenerator(): cache: 'device' needs a program with a GPU engine; this one runs on the reference backend, on the CPU");
    expect(() => createGenerator(programs.reference!, { sizes: 'padded' as never })).toThrow("createGenerator(): sizes must be 'auto', 'exact' or 'bucketed', got padded");
    expect(createGenerator(programs.reference!).sizes).toBe('exact');
    await generator.dispose();
  });
});
