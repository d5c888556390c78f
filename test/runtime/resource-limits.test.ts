/**
 * Run-time memory: `maxTensorBytes` (compile and load
 * option) refuses an input, an engine layer's output or a fallback node's output larger than
 * the limit, before allocating it, with E_RESOURCE_LIMIT naming it and the sizes; an
 * allocation that fails anyway is E_RESOURCE_LIMIT too, not E_INTERNAL; a worker that runs
 * out of heap is reported so, and the program stays usable in every case.
 * Needs dist/ (npm run build:ts): runs go through the worker thread.
 */
import { Worker } from 'node:worker_threads';

import { compile, type CompileSettings } from '../../lib/compile';
import { InternalError, ResourceLimitError } from '../../lib/errors';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { loadProgramBuffer } from '../../lib/runtime/program-file';
import type { Program } from '../../lib/runtime/program';
import { asResourceLimitError, checkTensorBytes, runLimits } from '../../lib/engine/resource-limits';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { rejection, thrown } from '../helpers/errors';

/** x: float32 [s, 2] (s in [1, 64]) → cat([x, x, x, x], 1): [s, 8] → relu. Four times the input's bytes in the middle. */
function widen(): Graph {
  const g = new Graph('widen');
  g.symbols.set('s', { min: 1, max: 64 });
  const x = g.addInput('x', tensorType('float32', [sym('s'), 2]));
  const cat = call(g, 'aten.cat.default', { tensors: [x, x, x, x], dim: 1 }, { name: 'widen_cat' }).output;
  g.setOutputs([call(g, 'aten.relu.default', { self: cat }, { name: 'relu' }).output], ['y']);
  return g;
}

const input = (rows: number): Tensor => Tensor.from('float32', [rows, 2], Array.from({ length: rows * 2 }, (_, i) => (i % 3) - 1));
/** relu(cat([x, x, x, x], 1)), by hand. */
const expected = (x: Tensor): number[] => {
  const v = x.toArray();
  const out: number[] = [];
  for (let r = 0; r < x.shape[0]!; r++) for (let k = 0; k < 4; k++) out.push(Math.max(v[2 * r]!, 0), Math.max(v[2 * r + 1]!, 0));
  return out;
};

// 512 bytes: an input of 16 rows (128 bytes) fits, and so does its widened [16, 8] (512
// bytes); 32 rows widen to 1024 bytes.
const LIMIT = 512;

describe.each([
  ['in an engine segment', { minBlockSize: 1 }, 'reference backend: layer "widen_cat" (concat) output 0 would be'],
  ['in a fallback segment', { minBlockSize: 1, torchExecutedOps: ['aten.cat.default'] }, 'node widen_cat (aten.cat.default) output %'],
])('maxTensorBytes, the widening %s', (_, settings: CompileSettings, where: string) => {
  let program: Program;
  beforeAll(async () => {
    program = await compile(widen(), { backend: 'reference', maxTensorBytes: LIMIT, ...settings });
  });
  afterAll(() => program.dispose());

  test('runs that fit give the right answer', async () => {
    for (const rows of [1, 16]) expectTensor((await program.run([input(rows)]))[0]!, 'float32', [rows, 8], expected(input(rows)));
  });

  test('an intermediate over the limit is E_RESOURCE_LIMIT naming where and the sizes; the program stays usable', async () => {
    const e = await rejection(program.run([input(32)]));
    expect(e).toBeInstanceOf(ResourceLimitError);
    expect(e.code).toBe('E_RESOURCE_LIMIT');
    expect(e.message).toContain(where);
    expect(e.message).toContain('float32[32, 8], 1024 bytes, more than maxTensorBytes (512)');
    expect(e.details).toMatchObject({ bytes: 1024, maxTensorBytes: LIMIT, shape: [32, 8] });
    expectTensor((await program.run([input(3)]))[0]!, 'float32', [3, 8], expected(input(3)));
  });
});

test('an input over the limit is E_RESOURCE_LIMIT naming the input, and nothing is posted', async () => {
  const program = await compile(widen(), { backend: 'reference', minBlockSize: 1, maxTensorBytes: 256 });
  const posted = jest.spyOn(Worker.prototype, 'postMessage');
  try {
    const e = await rejection(program.run([input(64)]));
    expect(e.code).toBe('E_RESOURCE_LIMIT');
    expect(e.message).toContain('input "x" would be float32[64, 2], 512 bytes, more than maxTensorBytes (256)');
    expect(e.details).toMatchObject({ input: 'x' });
    expect(posted).not.toHaveBeenCalled();
  } finally {
    posted.mockRestore();
    await program.dispose();
  }
});

test('loadProgram takes maxTensorBytes too (it is a run option, not saved in the file)', async () => {
  const compiled = await compile(widen(), { backend: 'reference', minBlockSize: 1 });
  const bytes = compiled.saveBuffer();
  await compiled.dispose();
  const strict = await loadProgramBuffer(bytes, { maxTensorBytes: LIMIT });
  const roomy = await loadProgramBuffer(bytes);
  try {
    expect((await rejection(strict.run([input(32)]))).code).toBe('E_RESOURCE_LIMIT');
    expectTensor((await roomy.run([input(32)]))[0]!, 'float32', [32, 8], expected(input(32)));
    expect((await rejection(loadProgramBuffer(bytes, { maxTensorBytes: -1 }))).message).toContain('load options: maxTensorBytes must be a positive integer');
  } finally {
    await strict.dispose();
    await roomy.dispose();
  }
});

test('an allocation that fails below the limit is E_RESOURCE_LIMIT, and the worker keeps answering', async () => {
  // [1, 2^20, 2^20] float32 is 4 TiB: under this limit, but no typed array can be that long,
  // so V8 refuses it at once (no memory is touched). The program budget is lifted too, which
  // would refuse it at compile (test/compile/memory-plan.test.ts): this test is about the run.
  const g = new Graph('huge');
  const x = g.addInput('x', tensorType('float32', [1, 1, 1]));
  g.setOutputs([call(g, 'aten.expand.default', { self: x, size: [1, 2 ** 20, 2 ** 20] }, { name: 'blow_up' }).output], ['y']);
  const program = await compile(g, { backend: 'reference', minBlockSize: 1, torchExecutedOps: ['aten.expand.default'], maxTensorBytes: Number.MAX_SAFE_INTEGER, maxProgramBytes: Number.MAX_SAFE_INTEGER });
  try {
    for (let i = 0; i < 2; i++) {
      const e = await rejection(program.run([Tensor.from('float32', [1, 1, 1], [1])]));
      expect(e.code).toBe('E_RESOURCE_LIMIT');
      expect(e.message).toContain('out of memory');
      expect(e.message).toContain('blow_up');
      expect(e.details).toMatchObject({ allocation: expect.stringContaining('Invalid typed array length') });
    }
  } finally {
    await program.dispose();
  }
});

describe('asResourceLimitError', () => {
  test('maps an allocation RangeError, bare or as the cause of an E_INTERNAL, and keeps the message', () => {
    let failure: unknown;
    try {
      new Float64Array(2 ** 40);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(RangeError);
    const wrapped = new InternalError('node mul_1 (aten.mul.Tensor) failed: boom', { cause: failure, details: { node: 'mul_1' } });
    const e = asResourceLimitError(wrapped) as ResourceLimitError;
    expect(e.code).toBe('E_RESOURCE_LIMIT');
    expect(e.message).toContain('node mul_1 (aten.mul.Tensor) failed');
    expect(e.details).toMatchObject({ node: 'mul_1' });
    expect((asResourceLimitError(failure) as ResourceLimitError).code).toBe('E_RESOURCE_LIMIT');
  });

  test('leaves other errors alone', () => {
    const bug = new InternalError('a bug');
    expect(asResourceLimitError(bug)).toBe(bug);
    const range = new RangeError('Maximum call stack size exceeded');
    expect(asResourceLimitError(range)).toBe(range);
  });
});

test('checkTensorBytes and runLimits', () => {
  expect(() => checkTensorBytes(runLimits(16, 'x'), 'float64', [2], 'v')).not.toThrow();
  const e = thrown(() => checkTensorBytes(runLimits(16, 'x'), 'complex128', [2], 'value "v"'), ResourceLimitError, 'E_RESOURCE_LIMIT');
  expect(e.message).toContain('value "v" would be complex128[2], 32 bytes, more than maxTensorBytes (16)');
  expect(runLimits(undefined, 'x').maxTensorBytes).toBe(2 ** 32);
  for (const bad of [0, -1, 1.5, NaN, Infinity, '8', null]) expect(() => runLimits(bad, 'load options')).toThrow('load options: maxTensorBytes must be a positive integer');
});

test('a worker out of heap is reported as E_RESOURCE_LIMIT by the client', async () => {
  // A real ERR_WORKER_OUT_OF_MEMORY, from a worker with a tiny heap, through the client's mapping.
  const { workerFailure } = await import('../../lib/runtime/worker/worker-client');
  const w = new Worker('const a = []; for (;;) a.push(new Array(1e5).fill(1));', { eval: true, resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } });
  const error = await new Promise<Error>((resolve) => w.on('error', resolve));
  expect((error as Error & { code?: string }).code).toBe('ERR_WORKER_OUT_OF_MEMORY');
  const e = workerFailure(error, 'program worker');
  expect(e.code).toBe('E_RESOURCE_LIMIT');
  expect(e.message).toContain('the program worker ran out of memory');
  expect(e.message).toContain('its next run starts a new worker');
});
