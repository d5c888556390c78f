/**
 * What compile's pipeline hands every backend's build (lib/engine/build-context.ts): the
 * compile's logger, a progress sink whose events become onProgress `phase` events of the
 * engine being built, and the compile's signal. The backend here is the reference one with
 * its build wrapped to report two phase events, as TensorRT's monitor would.
 */
import { BACKENDS } from '../../lib/backends/registry';
import type { BuildContext } from '../../lib/engine/build-context';
import type { Backend } from '../../lib/engine/backend';
import { compileGraph } from '../../lib/compile/pipeline';
import { progressReporter, type CompileProgressEvent } from '../../lib/compile/progress';
import { resolveSettings } from '../../lib/compile/settings';
import type { Graph } from '../../lib/ir/graph';
import { reluChain } from '../helpers/relu-chain';

const chain = (): Graph => reluChain(['r1', 'r2', 'g1', 'r3', 'r4']);

afterEach(() => jest.restoreAllMocks());

test('every build gets the compile logger, a progress sink reporting as phase events of its engine, and the signal', async () => {
  const contexts: Array<BuildContext | undefined> = [];
  const reference: Backend = BACKENDS.reference;
  const original = reference.build.bind(reference);
  jest.spyOn(reference, 'build').mockImplementation(async (network, config, device, context) => {
    contexts.push(context);
    context?.log?.('debug', `building ${network.name}`);
    context?.progress?.({ state: 'start', phase: 'Building engine', step: 0, steps: 4 });
    context?.progress?.({ state: 'step', phase: 'Building engine', step: 1, steps: 4 });
    return original(network, config, device, context);
  });
  const signal = new AbortController().signal;
  const events: CompileProgressEvent[] = [];
  const logs: string[] = [];
  const settings = resolveSettings({ backend: 'reference', minBlockSize: 2, torchExecutedOps: ['g1'], signal, onProgress: (e) => events.push(e) });
  await compileGraph(chain(), settings, (_l, m) => logs.push(m), progressReporter(settings.onProgress));
  expect(contexts).toHaveLength(2);
  for (const c of contexts) expect(c?.signal).toBe(signal);
  expect(logs.filter((m) => m.startsWith('building chain_segment'))).toEqual(['building chain_segment0', 'building chain_segment2']);
  const build = events.filter((e) => e.stage === 'build').map((e) => ({ state: e.state, index: e.index, total: e.total, message: e.message, phase: e.phase?.state }));
  expect(build).toEqual([
    { state: 'start', index: 0, total: 2, message: 'building engine 1/2 (segment 0, 2 ops)', phase: undefined },
    { state: 'phase', index: 0, total: 2, message: 'engine 1/2: Building engine started, 4 step(s)', phase: 'start' },
    { state: 'phase', index: 0, total: 2, message: 'engine 1/2: Building engine 1/4', phase: 'step' },
    { state: 'end', index: 0, total: 2, message: 'built engine 1/2 (segment 0, 2 ops)', phase: undefined },
    { state: 'start', index: 1, total: 2, message: 'building engine 2/2 (segment 2, 2 ops)', phase: undefined },
    { state: 'phase', index: 1, total: 2, message: 'engine 2/2: Building engine started, 4 step(s)', phase: 'start' },
    { state: 'phase', index: 1, total: 2, message: 'engine 2/2: Building engine 1/4', phase: 'step' },
    { state: 'end', index: 1, total: 2, message: 'built engine 2/2 (segment 2, 2 ops)', phase: undefined },
  ]);
});
