/**
 * compile()'s `signal`: an abort before or during a compile rejects it with AbortedError
 * (E_ABORTED), on the compile worker as in-process; an unaborted signal changes nothing.
 * The TensorRT build's own cancellation (stepComplete answering false) is tested against the
 * recording TensorRT double in test/native/trt/backend.test.ts.
 */
import { compile, type CompileProgressEvent, type CompileSettings } from '../../lib/compile';
import { AbortedError } from '../../lib/errors';
import type { Graph } from '../../lib/ir/graph';
import { reluChain } from '../helpers/relu-chain';

const chain = (): Graph => reluChain();

const SETTINGS: CompileSettings = { backend: 'reference', minBlockSize: 2, torchExecutedOps: ['g1'] };

test('an already aborted signal rejects with AbortedError quoting the reason, before any stage', async () => {
  const controller = new AbortController();
  controller.abort(new Error('user pressed ctrl-c'));
  const events: CompileProgressEvent[] = [];
  const error = await compile(chain(), { ...SETTINGS, signal: controller.signal, onProgress: (e) => events.push(e) }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AbortedError);
  expect(error).toMatchObject({ code: 'E_ABORTED', message: 'compile() was aborted: user pressed ctrl-c' });
  expect(events.filter((e) => e.stage !== 'import')).toEqual([]);
});

test('aborting during the first engine build rejects; no program is returned', async () => {
  const controller = new AbortController();
  const error = await compile(chain(), {
    ...SETTINGS,
    signal: controller.signal,
    onProgress: (e) => {
      if (e.stage === 'build' && e.state === 'start') controller.abort();
    },
  }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AbortedError);
  expect((error as Error).message).toBe('compile() was aborted');
});

test('a signal that is never aborted changes nothing', async () => {
  const program = await compile(chain(), { ...SETTINGS, signal: new AbortController().signal });
  expect(program.report.segments.filter((s) => s.kind === 'engine')).toHaveLength(2);
  await program.dispose();
});

test('signal must be an AbortSignal', async () => {
  await expect(compile(chain(), { signal: 'stop' as never })).rejects.toThrow('compile settings: signal must be an AbortSignal (new AbortController().signal)');
});
