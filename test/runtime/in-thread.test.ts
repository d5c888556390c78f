/**
 * Runs on the caller's thread (lib/runtime/in-thread.ts): the pure parts (the budget from the
 * environment, what may and what fits, the cost model, the probe shapes) here, and the
 * programs themselves in child processes of the built package (./in-thread-scenarios.js;
 * onnxruntime-node rejects jest's typed arrays), checked against PyTorch's outputs.
 */
import * as path from 'node:path';

import type { ProgramData } from '../../lib/runtime/segments';
import {
  DEFAULT_IN_THREAD_BUDGET_MS,
  fitsInThread,
  IN_THREAD_BUDGET_ENV,
  inThreadBudget,
  maxInThreadLoadMs,
  mayRunInThread,
  RunCost,
  STALL_MS,
} from '../../lib/runtime/in-thread';
import { probeShapes } from '../../lib/runtime/probe-shapes';
import { sym } from '../../lib/ir/symbolic';
import { Tensor } from '../../lib/ir/tensor';
import { REPO_ROOT, requireBuild, runNode } from '../helpers/built-package';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';

describe('the in-thread budget', () => {
  test('defaults, reads milliseconds, and 0 turns runs on this thread off', () => {
    expect(inThreadBudget({})).toBe(DEFAULT_IN_THREAD_BUDGET_MS);
    expect(inThreadBudget({ [IN_THREAD_BUDGET_ENV]: '' })).toBe(DEFAULT_IN_THREAD_BUDGET_MS);
    expect(inThreadBudget({ [IN_THREAD_BUDGET_ENV]: '0.5' })).toBe(0.5);
    expect(inThreadBudget({ [IN_THREAD_BUDGET_ENV]: '0' })).toBe(0);
  });

  test.each(['fast', '-1', 'Infinity', '1e999'])('%j is an E_INVALID_ARGUMENT naming the variable', (raw) => {
    expect(() => inThreadBudget({ [IN_THREAD_BUDGET_ENV]: raw })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT', details: { variable: IN_THREAD_BUDGET_ENV } }));
    expect(() => inThreadBudget({ [IN_THREAD_BUDGET_ENV]: raw })).toThrow(IN_THREAD_BUDGET_ENV);
  });
});

describe('which programs may run here, and which fit', () => {
  const io = { name: 'x', value: 'x', dtype: 'float32' as const, shape: [1] };
  const data = (segments: ProgramData['segments']): ProgramData => ({ inputs: [io], outputs: [io], segments, constants: {} });
  const engine = (backend: string) => ({ kind: 'engine' as const, backend, engine: new Uint8Array(0), inputs: ['x'], outputs: ['y'] });
  const fallback = { kind: 'fallback' as const, graph: new Uint8Array(0), inputs: ['y'], outputs: ['z'] };

  test('only programs made of onnxruntime engines', () => {
    expect(mayRunInThread(data([engine('onnxruntime')]))).toBe(true);
    expect(mayRunInThread(data([engine('onnxruntime'), engine('onnxruntime')]))).toBe(true);
    expect(mayRunInThread(data([engine('reference')]))).toBe(false);
    expect(mayRunInThread(data([engine('onnxruntime'), fallback]))).toBe(false);
    expect(mayRunInThread(data([]))).toBe(false);
  });

  test('a measured warm run within the budget, and a load within its cap', () => {
    expect(fitsInThread({ loadMs: 10, runMs: 1.5, inputElements: 4 }, 2)).toBe(true);
    expect(fitsInThread({ loadMs: 10, runMs: 2.5, inputElements: 4 }, 2)).toBe(false);
    expect(fitsInThread({ loadMs: maxInThreadLoadMs(2) + 1, runMs: 0.1 }, 2)).toBe(false);
    expect(fitsInThread({ loadMs: 10 }, 2)).toBe(false);
    expect(fitsInThread(undefined, 2)).toBe(false);
    expect(maxInThreadLoadMs(1000)).toBeGreaterThan(maxInThreadLoadMs(2));
  });
});

describe('RunCost', () => {
  test('predicts nothing fits before it has seen a run', () => {
    expect(new RunCost().predict(10)).toBe(Infinity);
  });

  test('scales the median cost per element, so one slow run moves nothing', () => {
    const cost = new RunCost(5);
    for (const ms of [1, 1, 1, 1]) cost.observe(ms, 100);
    cost.observe(500, 100);
    expect(cost.predict(100)).toBeCloseTo(1, 12);
    expect(cost.predict(1000)).toBeCloseTo(10, 12);
  });

  test('forgets runs older than its window', () => {
    const cost = new RunCost(3);
    for (const ms of [1, 1, 1]) cost.observe(ms, 1);
    for (const ms of [9, 9]) cost.observe(ms, 1);
    expect(cost.predict(1)).toBe(9);
  });

  test('keeps the median of its window through any sequence, repeated values included', () => {
    // A seeded sequence (observe() keeps its window sorted from one call to the next).
    let seed = 7;
    const next = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const window of [1, 2, 3, 4, 8, 9]) {
      const cost = new RunCost(window);
      const seen: number[] = [];
      for (let k = 0; k < 60; k++) {
        const ms = next() < 0.3 ? Math.floor(next() * 4) : next() * 10;
        cost.observe(ms, 1);
        seen.push(ms);
        const last = seen.slice(-window).sort((a, b) => a - b);
        expect(cost.predict(1)).toBe(last[last.length >> 1]);
      }
    }
  });

  test('fits() answers as predict() <= budget does, for elements and budgets that change or stay', () => {
    let seed = 11;
    const next = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const answers = new Set<boolean>();
    for (const window of [1, 2, 5, 8]) {
      const cost = new RunCost(window);
      for (let k = 0; k < 80; k++) {
        // Short runs and slow ones, in stretches; asked about a few sizes and budgets, mostly the same one (a static program).
        const elements = next() < 0.7 ? 128 : Math.floor(next() * 4) * 64;
        const budget = next() < 0.8 ? 3 : 0.5 + next() * 4;
        const fits = cost.fits(elements, budget);
        expect(fits).toBe(cost.predict(elements) <= budget);
        answers.add(fits);
        cost.observe(k % 20 < 8 ? 2 + 8 * next() : next() * 0.03, 128);
      }
    }
    expect(answers).toEqual(new Set([true, false]));
  });

  test('counts inputs without elements as one', () => {
    const cost = new RunCost();
    cost.observe(2, 0);
    expect(cost.predict(0)).toBe(2);
  });
});

describe('probeShapes', () => {
  const io = (shape: ProgramData['inputs'][number]['shape']) => ({ name: 'x', value: 'x', dtype: 'float32' as const, shape });

  test('static shapes as they are; each symbol at the smallest size its range allows, at least 1', () => {
    const batch = sym('batch');
    const seq = sym('seq');
    const symbols = new Map([
      ['batch', { min: 0, max: 8 }],
      ['seq', { min: 3, max: 9 }],
    ]);
    expect(probeShapes([io([2, 3]), io([batch, seq, 4])], symbols)).toEqual([
      [2, 3],
      [1, 3, 4],
    ]);
  });

  test("the first profile's min corner where every dynamic input recorded profiles (a KV-cache model's past 0, new 1, mask 1)", () => {
    const profiled = (name: string, shape: ProgramData['inputs'][number]['shape'], min: number[], max: number[]) => ({ ...io(shape), name, value: name, profiles: [{ min, opt: max, max }] });
    const inputs = [
      profiled('input_ids', [sym('batch'), sym('seq')], [1, 1], [2, 32]),
      profiled('attention_mask', [sym('batch'), sym('total')], [1, 1], [2, 32]),
      profiled('past', [sym('batch'), 2, sym('past'), 4], [1, 2, 0, 4], [2, 2, 31, 4]),
      io([3]),
    ];
    // Each symbol at its least size (at least 1) would give past 1 with a mask of 1: a run the model refuses.
    const symbols = new Map(['batch', 'seq', 'total', 'past'].map((n) => [n, { min: n === 'past' ? 0 : 1, max: 32 }]));
    expect(probeShapes(inputs, symbols)).toEqual([[1, 1], [1, 1], [1, 2, 0, 4], [3]]);
    // An input without profiles (a program file from before they were recorded): the symbols' least sizes.
    expect(probeShapes([inputs[0]!, io([sym('total')])], symbols)).toEqual([[1, 1], [1]]);
  });

  test('undefined where a symbol has no range', () => {
    expect(probeShapes([io([sym('n')])], new Map())).toBeUndefined();
  });
});

describe('programs on the caller thread (child processes of the built package)', () => {
  beforeAll(requireBuild);
  const SCRIPT = path.join(REPO_ROOT, 'test', 'runtime', 'in-thread-scenarios.js');
  /** A budget no run of these small models comes near: the scenarios are about behaviour, not timing. */
  const GENEROUS = { [IN_THREAD_BUDGET_ENV]: '1000' };
  /** The library's debug log on the child's stderr, printed when a scenario fails (why a load fell back to the worker, say). */
  const DEBUG_LOG = { DEBUG: 'tensorrt-node' };

  type Wire = { dtype: 'float32'; shape: number[]; data: number[] };
  const tensor = (w: Wire): Tensor => new Tensor(w.dtype, w.shape, Float32Array.from(w.data));

  function scenario<T>(name: string, env: Record<string, string> = GENEROUS): T {
    const r = runNode([SCRIPT, name], { ...DEBUG_LOG, ...env }, 120_000);
    if (r.status !== 0) throw new Error(`scenario ${name} failed (status ${r.status}, signal ${r.signal}):\n${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }

  const mlp = loadFixture('mlp');
  const expected = mlp.cases[0]!.outputs[0]!;

  test('a small onnxruntime program runs here, stops its worker, and answers as PyTorch did (inputs in order or by name)', () => {
    const r = scenario<{ inThread: boolean; workerAfterLoad: boolean; inThreadRuns: number; prepared: number; viaHandler: boolean; outputs: Wire[]; byName: Wire[] }>('mlp');
    // Both runs through the prepared run, which calls onnxruntime-node's session handler directly (the tested release has one).
    expect(r).toMatchObject({ inThread: true, workerAfterLoad: false, inThreadRuns: 2, prepared: 2, viaHandler: true });
    expectClose(tensor(r.outputs[0]!), expected, FP32, 'mlp');
    expectClose(tensor(r.byName[0]!), expected, FP32, 'mlp by name');
  }, 130_000);

  test('a run reads its inputs as they were when run() was called; dispose() fails runs not yet done and later ones', () => {
    const r = scenario<{ outputs: Wire[]; inFlight: string; queued: string; after: string; worker: boolean }>('lifecycle');
    expectClose(tensor(r.outputs[0]!), expected, FP32, 'mlp, input zeroed after run()');
    expect(r).toMatchObject({ inFlight: 'E_INVALID_ARGUMENT', queued: 'E_INVALID_ARGUMENT', after: 'E_INVALID_ARGUMENT', worker: false });
  }, 130_000);

  test('the fast path of run() answers as the general path does: the same outputs, the same typed errors', () => {
    type Described = { resolved?: true; class?: string; code?: string; message?: string; details?: unknown };
    const r = scenario<{
      fastAvailable: boolean;
      afterGood: { runs: number; prepared: number };
      afterBad: { runs: number; prepared: number };
      fast: Wire[];
      fastByName: Wire[];
      general: Wire[];
      errors: Record<string, { fast: Described; general: Described }>;
    }>('fastPath');
    expect(r.fastAvailable).toBe(true);
    // Both good runs (in order, by name) took the prepared run; the general one the executor; no bad input ran.
    expect(r.afterGood).toEqual({ runs: 2, prepared: 2 });
    expect(r.afterBad).toEqual({ runs: 3, prepared: 2 });
    expectClose(tensor(r.fast[0]!), expected, FP32, 'mlp, fast path');
    expectClose(tensor(r.fastByName[0]!), expected, FP32, 'mlp by name, fast path');
    expect(r.fast).toEqual(r.general);
    const codes: Record<string, string> = {
      wrongDType: 'E_BAD_INPUT',
      wrongShape: 'E_BAD_INPUT',
      wrongRank: 'E_BAD_INPUT',
      missingInList: 'E_BAD_INPUT',
      missingByName: 'E_BAD_INPUT',
      extraInList: 'E_BAD_INPUT',
      extraByName: 'E_BAD_INPUT',
      unknownName: 'E_BAD_INPUT',
      notATensor: 'E_BAD_INPUT',
      nullInput: 'E_BAD_INPUT',
      notAList: 'E_BAD_INPUT',
      reassignedData: 'E_BAD_INPUT',
      detachedData: 'E_BAD_INPUT',
      disposed: 'E_INVALID_ARGUMENT',
    };
    expect(Object.keys(r.errors).sort()).toEqual(Object.keys(codes).sort());
    for (const [kind, { fast, general }] of Object.entries(r.errors)) {
      expect({ kind, ...fast }).toEqual({ kind, ...general });
      expect({ kind, code: fast.code }).toEqual({ kind, code: codes[kind] });
    }
    expect(r.errors.wrongDType!.fast.message).toContain('"input0" must be float32, got float64');
    expect(r.errors.wrongShape!.fast.message).toContain('dim 0 must be 4, got 5');
    expect(r.errors.extraByName!.fast.message).toContain('unknown extra');
    expect(r.errors.reassignedData!.fast.message).toContain('is not a valid tensor');
    expect(r.errors.detachedData!.fast.message).toContain('detached');
    expect(r.errors.disposed!.fast.message).toBe('this program has been disposed');
  }, 130_000);

  test('runs issued together take the fast path one behind the other, each reading its input when run() was called', () => {
    const r = scenario<{
      afterTogether: { runs: number; prepared: number };
      together: Wire[][];
      alone: Wire[][];
      encoder: { inThread: boolean; prepared: number; outputs: Wire[] };
    }>('fastQueued');
    expect(r.afterTogether).toEqual({ runs: 5, prepared: 5 });
    expect(r.together).toHaveLength(5);
    // Each input was overwritten right after its run() call: the answers are those of the inputs as given.
    expect(r.together).toEqual(r.alone);
    // The scale-1 run is the fixture's input: PyTorch's answer.
    expectClose(tensor(r.together[1]![0]!), expected, FP32, 'mlp, queued run of the fixture input');
    expect(r.encoder).toMatchObject({ inThread: true, prepared: 1 });
    const encoder = loadFixture('encoder');
    r.encoder.outputs.forEach((w, i) => expectClose(tensor(w), encoder.cases[0]!.outputs[i]!, FP32, `encoder output ${i}, int64 input on the fast path`));
  }, 130_000);

  test('a dynamic-batch program refuses a batch outside its range, or a wrong static dim, as the general path does', () => {
    type Described = { code?: string; message?: string; details?: unknown };
    const r = scenario<Record<'huge' | 'mismatch', { fast: Described; general: Described }>>('fastDynamicErrors');
    expect(r.huge.fast).toEqual(r.huge.general);
    expect(r.huge.fast.code).toBe('E_SHAPE_OUT_OF_RANGE');
    expect(r.mismatch.fast).toEqual(r.mismatch.general);
    expect(r.mismatch.fast.code).toBe('E_BAD_INPUT');
  }, 130_000);

  test('a run predicted over the budget goes to the worker, and short runs come back here', () => {
    const r = scenario<{ inThread: boolean; long: Wire[]; short: Wire[]; afterLong: { inThreadRuns: number; worker: boolean }; afterShort: { inThreadRuns: number } }>('routing');
    expect(r.afterLong).toEqual({ inThreadRuns: 0, worker: true });
    expect(r.afterShort).toEqual({ inThreadRuns: 1 });
    expectClose(tensor(r.long[0]!), expected, FP32, 'mlp on the worker');
    expectClose(tensor(r.short[0]!), expected, FP32, 'mlp here again');
  }, 130_000);

  test('runs here that stall the event loop start the worker in the background, and the next runs go there', () => {
    // A budget of 1 ms puts the stall threshold at STALL_MS; each simulated stall is 40 ms.
    const r = scenario<{
      outputs: Wire[][];
      stalling: boolean;
      afterStalls: { inThreadRuns: number; starting: boolean };
      afterReady: { inThreadRuns: number; worker: boolean };
      afterForget: { inThreadRuns: number };
    }>('stall', { [IN_THREAD_BUDGET_ENV]: '1' });
    expect(STALL_MS).toBeLessThan(40);
    expect(r.stalling).toBe(true);
    // The run after the stalls stays here: the worker is still loading.
    expect(r.afterStalls).toEqual({ inThreadRuns: 3, starting: true });
    expect(r.afterReady).toEqual({ inThreadRuns: 3, worker: true });
    expect(r.afterForget).toEqual({ inThreadRuns: 4 });
    r.outputs.forEach((o, k) => expectClose(tensor(o[0]!), expected, FP32, `mlp run ${k}`));
  }, 130_000);

  test('a program with a dynamic batch runs here at every batch', () => {
    const r = scenario<{ inThread: boolean; shape: string[]; inThreadRuns: number; preparedRuns: number; outputs: Wire[]; first: Wire[] }>('dynamic');
    expect(r.inThread).toBe(true);
    expect(typeof r.shape[0]).toBe('string');
    expect(r.shape[0]).not.toBe('4');
    expect(r.inThreadRuns).toBe(2);
    // Both batches through the fast path: the staging of batch 4 does not serve batch 1.
    expect(r.preparedRuns).toBe(2);
    expectClose(tensor(r.outputs[0]!), expected, FP32, 'mlp batch 4');
    // Rows are independent: batch 1 on the first row is PyTorch's first row.
    const row = new Tensor('float32', [1, expected.shape[1]!], (expected.data as Float32Array).slice(0, expected.shape[1]!));
    expectClose(tensor(r.first[0]!), row, FP32, 'mlp batch 1');
  }, 130_000);

  test('a program with a complex input runs here through the general executor', () => {
    const fixture = loadFixture('llama_rotary_complex_input');
    const r = scenario<{ inThread: boolean; inThreadRuns: number; outputs: Wire[] }>('complex');
    expect(r).toMatchObject({ inThread: true, inThreadRuns: 1 });
    r.outputs.forEach((w, i) => expectClose(tensor(w), fixture.cases[0]!.outputs[i]!, FP32, `llama_rotary_complex_input output ${i}`));
  }, 130_000);

  test('the reference backend runs on its worker', () => {
    const r = scenario<{ inThread: boolean; worker: boolean; outputs: Wire[] }>('reference');
    expect(r).toMatchObject({ inThread: false, worker: true });
    expectClose(tensor(r.outputs[0]!), expected, FP32, 'mlp on the reference backend');
  }, 130_000);

  test(`${IN_THREAD_BUDGET_ENV}=0 keeps every run on the worker`, () => {
    const r = scenario<{ inThread: boolean; worker: boolean; outputs: Wire[] }>('budgetZero', { [IN_THREAD_BUDGET_ENV]: '0' });
    expect(r).toMatchObject({ inThread: false, worker: true });
    expectClose(tensor(r.outputs[0]!), expected, FP32, 'mlp on the worker');
  }, 130_000);

  test(`a bad ${IN_THREAD_BUDGET_ENV} fails compile() with E_INVALID_ARGUMENT naming it`, () => {
    const r = scenario<{ code: string; message: string; details: unknown }>('badBudget', { [IN_THREAD_BUDGET_ENV]: 'soon' });
    expect(r.code).toBe('E_INVALID_ARGUMENT');
    expect(r.message).toContain(IN_THREAD_BUDGET_ENV);
    expect(r.details).toEqual({ variable: IN_THREAD_BUDGET_ENV });
  }, 130_000);

  test('an idle program that runs here does not hold the process open', () => {
    const r = runNode([SCRIPT, 'idle'], GENEROUS, 120_000);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ inThread: true });
  }, 130_000);
});
