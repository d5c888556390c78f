/**
 * What program.run() accepts and sends to its worker, and the typed errors it refuses with:
 * inputs are checked before anything changes, so a refused run leaves the program as it was;
 * a detached buffer or a forged tensor is E_BAD_INPUT, not a DataCloneError that leaves the
 * worker referenced; a view of part of a large buffer sends only its own bytes and the
 * caller's buffer is never transferred.
 * Needs dist/ (npm run build:ts): runs go through the worker thread.
 */
import { Worker } from 'node:worker_threads';

import { compile } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import type { Program } from '../../lib/runtime/program';
import type { WorkerRequest } from '../../lib/runtime/worker/worker-protocol';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { rejection } from '../helpers/errors';

/** y = relu(x) + x on float32 [2, 4]: expected values are easy to write by hand. */
function reluPlusX(): Graph {
  const g = new Graph('relu_plus_x');
  const x = g.addInput('x', tensorType('float32', [2, 4]));
  const r = call(g, 'aten.relu.default', { self: x }).output;
  g.setOutputs([call(g, 'aten.add.Tensor', { self: r, other: x }).output], ['y']);
  return g;
}

const X = [-2, -1, 0, 1, 2, 3, -4, 5];
const Y = X.map((v) => Math.max(v, 0) + v);

let program: Program;
beforeAll(async () => {
  program = await compile(reluPlusX(), { backend: 'reference', minBlockSize: 1 });
});
afterAll(() => program.dispose());
afterEach(() => jest.restoreAllMocks());

const good = (): Tensor => Tensor.from('float32', [2, 4], X);

async function expectWorks(p: Program = program): Promise<void> {
  expectTensor((await p.run([good()]))[0]!, 'float32', [2, 4], Y);
}

describe('a detached input buffer', () => {
  test('is E_BAD_INPUT naming the input, and the program keeps working', async () => {
    const x = good();
    structuredClone(x.data.buffer, { transfer: [x.data.buffer as ArrayBuffer] });
    const posted = jest.spyOn(Worker.prototype, 'postMessage');
    const e = await rejection(program.run([x]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('input "x"');
    expect(e.message).toContain('detached');
    expect(posted).not.toHaveBeenCalled();
    await expectWorks();
  });

  test('of an empty tensor is refused too (structured clone would throw on it)', async () => {
    const g = new Graph('empty');
    const x = g.addInput('x', tensorType('float32', [0, 4]));
    g.setOutputs([call(g, 'aten.relu.default', { self: x }).output], ['y']);
    const p = await compile(g, { backend: 'reference', minBlockSize: 1 });
    try {
      const t = new Tensor('float32', [0, 4]);
      structuredClone(t.data.buffer, { transfer: [t.data.buffer as ArrayBuffer] });
      expect((await rejection(p.run([t]))).code).toBe('E_BAD_INPUT');
      expect((await p.run([new Tensor('float32', [0, 4])]))[0]!.shape).toEqual([0, 4]);
    } finally {
      await p.dispose();
    }
  });

  test('then dispose() settles at once (no worker left referenced)', async () => {
    const p = await compile(reluPlusX(), { backend: 'reference', minBlockSize: 1 });
    await expectWorks(p);
    const x = good();
    structuredClone(x.data.buffer, { transfer: [x.data.buffer as ArrayBuffer] });
    expect((await rejection(p.run([x]))).code).toBe('E_BAD_INPUT');
    await p.dispose();
    expect((await rejection(p.run([good()]))).message).toContain('disposed');
  });
});

describe('inputs that are not what a Tensor must hold', () => {
  test('data replaced after construction is E_BAD_INPUT naming the input', async () => {
    const forged: Array<[string, (t: Tensor) => void]> = [
      ['a plain array', (t) => Object.defineProperty(t, 'data', { value: [...X] })],
      ['the wrong typed array', (t) => Object.defineProperty(t, 'data', { value: Float64Array.from(X) })],
      ['too few elements', (t) => Object.defineProperty(t, 'data', { value: new Float32Array(3) })],
      ['an object posing as a Float32Array', (t) => Object.defineProperty(t, 'data', { value: { [Symbol.toStringTag]: 'Float32Array', length: 8 } })],
      ['a shape that is not a list', (t) => Object.defineProperty(t, 'shape', { value: '2,4' })],
    ];
    for (const [what, forge] of forged) {
      const t = good();
      forge(t);
      const e = await rejection(program.run([t]));
      expect([what, e.code]).toEqual([what, 'E_BAD_INPUT']);
      expect(e.message).toContain('input "x"');
    }
    await expectWorks();
  });

  test.each([
    ['null', null],
    ['a string', 'x'],
    ['a number', 42],
    ['undefined', undefined],
  ])('run(%s) is E_BAD_INPUT', async (_, given) => {
    const e = await rejection(program.run(given as never));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('inputs must be a list of tensors or an object keyed by input name (x)');
  });

  test('inputs by name count own properties only', async () => {
    // Inherited keys are not inputs: a prototype that has "x" does not give x.
    const inherited = Object.create({ x: good() }) as Record<string, Tensor>;
    expect((await rejection(program.run(inherited))).message).toContain('missing x');
    const e = await rejection(program.run({ constructor: good() } as never));
    expect(e.message).toContain('missing x');
    expect(e.message).toContain('unknown constructor');
    expectTensor((await program.run({ x: good() }))[0]!, 'float32', [2, 4], Y);
  });
});

describe('what a run sends to the worker', () => {
  /** Runs `x` and returns the run message the worker was posted. */
  async function posted(x: Tensor): Promise<Extract<WorkerRequest, { type: 'run' }>> {
    const spy = jest.spyOn(Worker.prototype, 'postMessage');
    expectTensor((await program.run([x]))[0]!, 'float32', [2, 4], Y);
    const runs = spy.mock.calls.map((c) => c[0] as WorkerRequest).filter((m) => m.type === 'run');
    expect(runs).toHaveLength(1);
    return runs[0] as Extract<WorkerRequest, { type: 'run' }>;
  }

  test('a view of 32 bytes of a 64 MiB buffer sends 32 bytes, and the caller keeps its buffer', async () => {
    const big = new ArrayBuffer(64 * 2 ** 20);
    const view = new Float32Array(big, 1024, 8);
    view.set(X);
    const message = await posted(new Tensor('float32', [2, 4], view));
    const sent = message.inputs[0]!.data;
    expect(sent.buffer.byteLength).toBe(32);
    expect(sent.byteOffset).toBe(0);
    expect([...sent]).toEqual(X);
    expect(big.byteLength).toBe(64 * 2 ** 20); // not transferred (detached)
    expect([...view]).toEqual(X);
  });

  test('a tensor over its whole buffer is posted as it is (postMessage copies it; nothing is transferred)', async () => {
    const x = good();
    const message = await posted(x);
    expect(message.inputs[0]!.data).toBe(x.data);
    expect(x.data.buffer.byteLength).toBe(32);
  });

  test('a view of a SharedArrayBuffer is copied, not shared with the worker', async () => {
    const shared = new Float32Array(new SharedArrayBuffer(32));
    shared.set(X);
    const sent = (await posted(new Tensor('float32', [2, 4], shared))).inputs[0]!.data;
    expect(sent).not.toBe(shared);
    expect(Object.prototype.toString.call(sent.buffer)).toBe('[object ArrayBuffer]');
    expect([...sent]).toEqual(X);
  });

  test('a postMessage failure rejects the run with a typed error and leaves no pending run behind', async () => {
    jest.spyOn(Worker.prototype, 'postMessage').mockImplementationOnce(() => {
      throw new DOMException('An ArrayBuffer is detached and could not be cloned.', 'DataCloneError');
    });
    const e = await rejection(program.run([good()]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('cannot be sent to the program worker');
    jest.restoreAllMocks();
    await expectWorks();
  });
});
