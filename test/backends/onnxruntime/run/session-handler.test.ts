/**
 * directSessionRun() (lib/backends/onnxruntime/run/session-handler.ts): a prepared run calls the
 * session's handler with the arguments session.run(feeds) would pass it, and only where the
 * handler looks like the one every supported onnxruntime-common release has. (Runs through
 * it are checked against PyTorch in test/runtime/in-thread.test.ts: onnxruntime-node
 * rejects jest's typed arrays.)
 */
import { directSessionRun } from '../../../../lib/backends/onnxruntime/run/session-handler';

const session = (handler: unknown, outputNames = ['y', 'z']) => ({ outputNames, handler });

describe('directSessionRun', () => {
  test('passes the feeds with every output fetched and no run options, and answers what the handler answers', async () => {
    const calls: unknown[][] = [];
    const answer = { y: 1, z: 2 };
    const handler = {
      outputNames: ['y', 'z'],
      run(feeds: unknown, fetches: unknown, options: unknown) {
        calls.push([feeds, fetches, options]);
        return Promise.resolve(answer);
      },
    };
    const run = directSessionRun(session(handler))!;
    const feeds = { x: {} as never };
    await expect(run.run(feeds)).resolves.toBe(answer);
    await run.run(feeds);
    expect(calls).toEqual([
      [feeds, { y: null, z: null }, {}],
      [feeds, { y: null, z: null }, {}],
    ]);
    // The same frozen objects each run: nothing to allocate, nothing the handler could change.
    expect(calls[0]![1]).toBe(calls[1]![1]);
    expect(Object.isFrozen(calls[0]![1]) && Object.isFrozen(calls[0]![2])).toBe(true);
  });

  test.each([
    ['no handler', undefined],
    ['a null handler', null],
    ['a handler without run()', { outputNames: ['y', 'z'] }],
    ['a run() of another arity', { outputNames: ['y', 'z'], run: (feeds: unknown) => feeds }],
    ['other output names', { outputNames: ['z', 'y'], run: (a: unknown, b: unknown, c: unknown) => [a, b, c] }],
    ['no output names', { run: (a: unknown, b: unknown, c: unknown) => [a, b, c] }],
  ])('undefined for %s (the prepared run then calls session.run())', (_what, handler) => {
    expect(directSessionRun(session(handler))).toBeUndefined();
  });
});
