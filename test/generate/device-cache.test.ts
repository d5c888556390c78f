/**
 * The KV cache on a device: a program with a GPU engine generates with `outputs: 'device'`,
 * so each run's present outputs stay in device memory and are handed to the next run as they
 * are. No GPU here: the device is the simulated one (test/helpers/simulated-gpu.ts: device
 * memory is host bytes behind the addon's binding), and the `cuda` engine is a stand-in that
 * reads its device inputs' bytes, runs the tiny LM compiled for the reference backend, and
 * leaves its outputs in fresh device tensors, so the tokens are the real model's (checked
 * against the onnxruntime oracle, ./lm-oracle.ts). The stand-in touches device memory
 * directly, not through the binding's copies, so the copies counted are those of generate()
 * and the program: which shows that the cache never comes back to the host.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import type { Engine } from '../../lib/engine/backend';
import type { RunValue } from '../../lib/engine/residency';
import { compileForGeneration, createGenerator, type Generator, type GeneratorOptions } from '../../lib/generate';
import { DeviceTensor } from '../../lib/gpu/device-tensor';
import { Tensor } from '../../lib/ir/tensor';
import { Program } from '../../lib/runtime/program';
import type { ProgramData } from '../../lib/runtime/segments';
import { resetSimulatedGpu, simulatedGpu, type SimulatedBuffer } from '../helpers/simulated-gpu';
import { tinyKvLm } from '../helpers/tiny-kv-lm';
import { oracleGreedy } from './lm-oracle';

jest.mock('../../lib/gpu/binding', () => require('../helpers/simulated-gpu').bindingModule);

const lm = tinyKvLm();
const PROMPTS = [
  [3, 1, 4, 1, 5],
  [9, 2],
];
const STEPS = 16;

let reference: Program;
let oracle: number[][];

beforeAll(async () => {
  reference = await compileForGeneration(lm.model, { backend: 'reference', maxBatch: 2, maxLength: 32 });
  oracle = (await Promise.all(PROMPTS.map((p) => oracleGreedy(lm, p, STEPS)))).map((o) => o.tokens);
}, 120_000);
afterAll(async () => {
  await reference.dispose();
});
afterEach(() => {
  resetSimulatedGpu();
  jest.restoreAllMocks();
});

/** What the stand-in engine saw: per run, its inputs and the outputs it made, by value name. */
interface Call {
  fed: Record<string, RunValue>;
  /** The fed values' elements as the run read them. */
  seen: Record<string, Tensor>;
  made: Record<string, DeviceTensor>;
}

/** A device tensor's elements, read from the simulated memory itself (no counted copy). */
function peek(t: DeviceTensor): Tensor {
  const bytes = (t.buffer as unknown as SimulatedBuffer).data;
  const probe = new Tensor(t.dtype, [...t.shape]);
  new Uint8Array(probe.data.buffer, probe.data.byteOffset, probe.data.byteLength).set(bytes.subarray(0, probe.data.byteLength));
  return probe;
}

/** A new device tensor holding `t`, written straight into the simulated memory. */
async function place(t: Tensor): Promise<DeviceTensor> {
  const d = await DeviceTensor.allocate(t.dtype, [...t.shape], 0);
  (d.buffer as unknown as SimulatedBuffer).data.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  return d;
}

/** A program of one `cuda` engine segment with the reference program's I/O, and its stand-in engine's log. */
function deviceProgram(): { program: Program; calls: Call[] } {
  const data: ProgramData = {
    inputs: reference.data.inputs,
    outputs: reference.data.outputs,
    segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: reference.data.inputs.map((io) => io.value), outputs: reference.data.outputs.map((io) => io.value) }],
    constants: {},
  };
  const calls: Call[] = [];
  const engine: Engine = {
    inputNames: data.inputs.map((io) => io.value),
    outputNames: data.outputs.map((io) => io.value),
    residency: 'device',
    deviceOrdinal: 0,
    upload: (t) => place(t),
    async run(inputs) {
      const call: Call = { fed: { ...inputs }, seen: {}, made: {} };
      calls.push(call);
      const host = data.inputs.map((io) => {
        const v = inputs[io.value]!;
        return (call.seen[io.value] = v instanceof Tensor ? v : peek(v as DeviceTensor));
      });
      const outputs = await reference.run(host);
      for (const [i, io] of data.outputs.entries()) call.made[io.value] = await place(outputs[i]!);
      return { ...call.made };
    },
    dispose: () => undefined,
  };
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  return { program: new Program(data, reference.report, 'cuda', reference.symbolRanges), calls };
}

/**
 * Runs `body` with a generator (made with `options`) over a fresh stand-in device program;
 * disposes both after, whatever `body` does.
 */
async function withDeviceGenerator(options: GeneratorOptions, body: (g: { program: Program; calls: Call[]; generator: Generator }) => Promise<void>): Promise<void> {
  const { program, calls } = deviceProgram();
  const generator = createGenerator(program, options);
  try {
    await body({ program, calls, generator });
  } finally {
    await generator.dispose();
    await program.dispose();
  }
}

const valueOf = (program: Program, name: string): string => program.data.inputs.find((io) => io.name === name)?.value ?? program.data.outputs.find((io) => io.name === name)!.value;

test('greedy on the device, exact sizes: the oracle\'s tokens, the presents fed back as the next past without leaving the device, and every cache tensor freed', async () => {
  await withDeviceGenerator({ sizes: 'exact' }, async ({ program, calls, generator }) => {
    expect(generator.cache).toBe('device');
    const live = simulatedGpu.live.size;
    const result = await generator.generate(PROMPTS, { maxNewTokens: STEPS });
    expect(result.tokens).toEqual(oracle);
    expect(calls).toHaveLength(STEPS);
    for (let step = 1; step < STEPS; step++) {
      for (let l = 0; l < lm.layers; l++) {
        for (const kind of ['key', 'value']) {
          const fed = calls[step]!.fed[valueOf(program, `past_key_values.${l}.${kind}`)];
          expect(fed).toBeInstanceOf(DeviceTensor);
          expect(fed).toBe(calls[step - 1]!.made[valueOf(program, `present.${l}.${kind}`)]);
        }
      }
    }
    // Device to host: the prompt's last-position logits, one copy per row, then one copy a step.
    expect(simulatedGpu.copies.toHost).toBe(PROMPTS.length + STEPS - 1);
    expect(simulatedGpu.live.size).toBe(live);
  });
}, 60_000);

test('greedy on the device, bucketed sizes (the default there): the oracle\'s tokens from three shapes, the new slots moved into the cache in place between growths, unused slots zero, every tensor freed', async () => {
  await withDeviceGenerator({}, async ({ program, calls, generator }) => {
    expect(generator.sizes).toBe('bucketed');
    const live = simulatedGpu.live.size;
    simulatedGpu.dirtyAllocs = true;
    const pastKey = valueOf(program, 'past_key_values.0.key');
    const result = await generator.generate(PROMPTS, { maxNewTokens: STEPS });
    expect(result.tokens).toEqual(oracle);
    expect(calls).toHaveLength(STEPS);
    // The prompt padded to 16; the cache 16 slots after it, then 31 (32 clamped to the
    // program's maxLength 32 less the token fed) for every later step.
    const ids = valueOf(program, 'input_ids');
    expect(calls[0]!.fed[ids]!.shape).toEqual([2, 16]);
    const capacities = calls.map((c) => c.fed[pastKey]!.shape[2]);
    expect(capacities).toEqual([0, 16, ...new Array<number>(STEPS - 2).fill(31)]);
    expect(new Set(calls.map((c) => Object.values(c.fed).map((v) => v.shape.join('x')).join(' '))).size).toBe(3);
    for (let step = 3; step < STEPS; step++) {
      // Between growths the past tensors are the same device tensors, their new slot written in place.
      expect(calls[step]!.fed[pastKey]).toBe(calls[2]!.fed[pastKey]);
    }
    const mask = calls[5]!.seen[valueOf(program, 'attention_mask')]!.toArray().map(Number);
    // Step 5 reads 16 + 4 used slots: row 0 (5 tokens) padded by 11, row 1 (2 tokens) by 14; unused slots 0, the fed token 1.
    expect(mask).toHaveLength(2 * 32);
    const row = (r: number): number[] => mask.slice(r * 32, (r + 1) * 32);
    expect(row(0)).toEqual([...new Array<number>(11).fill(0), ...new Array<number>(9).fill(1), ...new Array<number>(11).fill(0), 1]);
    expect(row(1)).toEqual([...new Array<number>(14).fill(0), ...new Array<number>(6).fill(1), ...new Array<number>(11).fill(0), 1]);
    // Slots 20..30 of the cache step 5 reads hold zeros (garbage there would reach the output through 0 × NaN).
    const past = calls[5]!.seen[pastKey]!;
    const [, heads, slots, dim] = past.shape as number[];
    for (let h = 0; h < 2 * heads!; h++) {
      const unused = (past.data as Float32Array).subarray((h * slots! + 20) * dim!, (h + 1) * slots! * dim!);
      expect(unused.every((x) => x === 0)).toBe(true);
    }
    // One strided copy per cache tensor per run but the last, and nothing else leaves the device.
    expect(simulatedGpu.copies.rects).toBe((STEPS - 1) * 2 * lm.layers);
    expect(simulatedGpu.copies.toHost).toBe(PROMPTS.length + STEPS - 1);
    expect(simulatedGpu.live.size).toBe(live);
  });
}, 60_000);

test('aborted mid-run on the device: E_ABORTED, and the cache and the late run\'s outputs are freed', async () => {
  await withDeviceGenerator({}, async ({ generator }) => {
    const live = simulatedGpu.live.size;
    const controller = new AbortController();
    const it = generator.stream(PROMPTS, { maxNewTokens: STEPS, signal: controller.signal });
    await it.next();
    await it.next();
    expect(simulatedGpu.live.size).toBeGreaterThan(live);
    const pending = it.next();
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toMatchObject({ code: 'E_ABORTED', message: 'generate() was aborted: stop' });
    expect(simulatedGpu.live.size).toBe(live);
  });
}, 60_000);

test('cache: \'host\' on a GPU program keeps the cache as host tensors', async () => {
  await withDeviceGenerator({ cache: 'host' }, async ({ program, calls, generator }) => {
    const result = await generator.generate(PROMPTS[1]!, { maxNewTokens: 4 });
    expect(result.tokens).toEqual([oracle[1]!.slice(0, 4)]);
    // The program's host outputs come back as host tensors, and go back in as such (uploaded by the program).
    expect(calls[1]!.fed[valueOf(program, 'past_key_values.0.key')]).toBeInstanceOf(DeviceTensor);
    expect(calls[1]!.fed[valueOf(program, 'past_key_values.0.key')]).not.toBe(calls[0]!.made[valueOf(program, 'present.0.key')]);
  });
}, 60_000);
