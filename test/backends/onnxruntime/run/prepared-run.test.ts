/**
 * How a prepared run ends (lib/backends/onnxruntime/run/prepared-run.ts), on a stand-in session:
 * the caller's RunSettled is called exactly once from the run's own continuation, whichever
 * way the run ends, and runs started while one is in flight end as well. (Runs on a real
 * onnxruntime session are checked in test/runtime/in-thread.test.ts: onnxruntime-node
 * rejects jest's typed arrays.)
 */
import type { OrtEngineDescription } from '../../../../lib/backends/onnxruntime/engine-format';
import { prepareOrtRun, type PreparedRunHost } from '../../../../lib/backends/onnxruntime/run/prepared-run';
import type { SessionRun } from '../../../../lib/backends/onnxruntime/run/session-handler';
import type { RunSettled } from '../../../../lib/engine/backend';
import { BadInputError, InvalidArgumentError } from '../../../../lib/errors';
import { DEFAULT_RUN_LIMITS } from '../../../../lib/engine/resource-limits';
import { Tensor } from '../../../../lib/ir/tensor';

const description = {
  network: 'net',
  opset: 17,
  inputs: [{ name: 'x', dtype: 'float32', shape: [2], profiles: [] }],
  outputs: [{ name: 'y', dtype: 'float32', shape: [2] }],
} as unknown as OrtEngineDescription;

/** A host whose session answers y = 2x a setImmediate later, or as `behave` says. */
function hostWith(behave: 'ok' | 'reject' | 'throw' = 'ok'): PreparedRunHost {
  const session: SessionRun = {
    run(feeds) {
      if (behave === 'throw') throw new Error('thrown');
      const x = (feeds.x as unknown as { data: Float32Array }).data.slice();
      return new Promise((resolve, reject) =>
        setImmediate(() => (behave === 'reject' ? reject(new Error('refused')) : resolve({ y: { dims: [2], data: x.map((v) => 2 * v) } }))),
      );
    },
  };
  class FakeOrtTensor {
    constructor(
      readonly type: string,
      readonly data: Float32Array,
      readonly dims: number[],
    ) {}
  }
  return {
    ort: { Tensor: FakeOrtTensor } as never,
    description,
    session,
    checkInputs: () => undefined,
    disposedError: () => new InvalidArgumentError('disposed'),
    runError: (error) => new BadInputError(`run failed: ${(error as Error).message}`),
  };
}

const prepared = (host: PreparedRunHost) => prepareOrtRun(host, [{ name: 'x', dtype: 'float32', checkedShape: [2] }], [{ name: 'y', dtype: 'float32' }], DEFAULT_RUN_LIMITS)!;

/** A RunSettled that records its calls; done() tags its answer, failed() throws a wrapper. */
function recorder() {
  const calls: string[] = [];
  const settled: RunSettled = {
    done: (outputs) => (calls.push('done'), outputs.concat(Tensor.from('float32', [1], [-1]))),
    failed: (error) => {
      calls.push('failed');
      throw new Error(`settled: ${(error as Error).message}`);
    },
  };
  return { calls, settled };
}

const x = (a: number, b: number) => Tensor.from('float32', [2], [a, b]);

describe('a prepared run ends through its caller', () => {
  test('done() gets the outputs and start() resolves what it returns', async () => {
    const run = prepared(hostWith());
    const { calls, settled } = recorder();
    const out = await run.start(run.stage([x(1, 2)]), settled);
    expect(calls).toEqual(['done']);
    expect(out.map((t) => [...t.data])).toEqual([[2, 4], [-1]]);
  });

  test('runs started while one is in flight end too, each with its own outputs and settled', async () => {
    const run = prepared(hostWith());
    const a = recorder();
    const b = recorder();
    const [outA, outB, outC] = await Promise.all([run.start(run.stage([x(1, 2)]), a.settled), run.start(run.stage([x(3, 4)]), b.settled), run.start(run.stage([x(5, 6)]))]);
    expect([a.calls, b.calls]).toEqual([['done'], ['done']]);
    expect([outA![0]!.data, outB![0]!.data, outC![0]!.data].map((d) => [...d])).toEqual([[2, 4], [6, 8], [10, 12]]);
    // And the run after them takes the path without closures again.
    const c = recorder();
    await run.start(run.stage([x(7, 8)]), c.settled);
    expect(c.calls).toEqual(['done']);
  });

  test.each(['reject', 'throw'] as const)('a run that fails (%s) calls failed() with the typed error, and start() rejects with what it throws', async (behave) => {
    const run = prepared(hostWith(behave));
    const { calls, settled } = recorder();
    await expect(run.start(run.stage([x(1, 2)]), settled)).rejects.toThrow(/^settled: run failed: (refused|thrown)$/);
    expect(calls).toEqual(['failed']);
    // Without a settled, the typed error itself.
    await expect(run.start(run.stage([x(1, 2)]))).rejects.toBeInstanceOf(BadInputError);
  });

  test('a run of a disposed engine calls failed() with the disposed error', async () => {
    const host = hostWith();
    const run = prepared(host);
    const staged = run.stage([x(1, 2)]);
    host.session = null;
    const { calls, settled } = recorder();
    await expect(run.start(staged, settled)).rejects.toThrow('settled: disposed');
    expect(calls).toEqual(['failed']);
    expect(() => run.stage([x(1, 2)])).toThrow('disposed');
  });
});
