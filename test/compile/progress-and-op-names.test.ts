/**
 * compile()'s `onProgress` events (stages in order, each engine build with its index and
 * total) and the refusal of unknown `torchExecutedOps` names with close matches.
 */
import { compile, dryRun, type CompileProgressEvent } from '../../lib/compile';
import { InvalidArgumentError } from '../../lib/errors';
import type { Graph } from '../../lib/ir/graph';
import { reluChain } from '../helpers/relu-chain';
import { closeMatches, editDistance } from '../../lib/compile/suggest';

const chain = (): Graph => reluChain();

test('onProgress: import, lowering, partitioning, then each engine build with index and total', async () => {
  const events: CompileProgressEvent[] = [];
  const program = await compile(chain(), { minBlockSize: 2, torchExecutedOps: ['g1'], onProgress: (e) => events.push(e) });
  await program.dispose();
  expect(events.map((e) => `${e.stage}:${e.state}${e.index === undefined ? '' : `:${e.index}/${e.total}`}`)).toEqual([
    'import:start',
    'import:end',
    'lowering:start',
    'lowering:end',
    'partitioning:start',
    'partitioning:end',
    'build:start:0/2',
    'build:end:0/2',
    'build:start:1/2',
    'build:end:1/2',
  ]);
  expect(events.find((e) => e.stage === 'partitioning' && e.state === 'end')!.engines).toBe(2);
  expect(events.find((e) => e.stage === 'build')!.message).toBe('building engine 1/2 (segment 0, 3 ops)');
  const elapsed = events.map((e) => e.elapsedMs);
  expect(elapsed).toEqual([...elapsed].sort((a, b) => a - b));
  expect(program.report.modelOps).toBe(7);
  expect(program.report.io).toEqual({ inputs: [{ name: 'x', value: 'x' }], outputs: [{ name: 'y', value: 'r6' }] });
});

test('a dry run reports the stages before building, and no engines', async () => {
  const events: CompileProgressEvent[] = [];
  await dryRun(chain(), { onProgress: (e) => events.push(e) });
  expect(events.map((e) => e.stage)).toEqual(['import', 'import', 'lowering', 'lowering', 'partitioning', 'partitioning']);
  expect(events[5]!.engines).toBe(0);
});

test('onProgress must be a function', async () => {
  await expect(compile(chain(), { onProgress: 'yes' as never })).rejects.toThrow('compile settings: onProgress must be a function');
});

test('an unknown op target in torchExecutedOps is refused with close matches, before the model is read', async () => {
  const error = await compile('/no/such/model.onnx', { torchExecutedOps: ['aten.relu.defualt'] }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toBe('compile settings: torchExecutedOps: unknown op "aten.relu.defualt"; did you mean aten.relu.default?');
});

test('an op target without its overload is refused with its overloads as the matches', async () => {
  const gelu = await compile('/no/such/model.onnx', { torchExecutedOps: ['aten.gelu'] }).catch((e: unknown) => e);
  expect(gelu).toBeInstanceOf(InvalidArgumentError);
  expect((gelu as Error).message).toBe('compile settings: torchExecutedOps: unknown op "aten.gelu"; did you mean aten.gelu.default?');
  const add = await compile('/no/such/model.onnx', { torchExecutedOps: ['aten.add'] }).catch((e: unknown) => e);
  expect((add as Error).message).toMatch(/unknown op "aten\.add"; did you mean aten\.add\.\w+(, aten\.add\.\w+)*\?$/);
  expect((add as Error).message).toContain('aten.add.Tensor');
});

test('a name that is neither an op target nor a node of the model is refused with close matches', async () => {
  const error = await dryRun(chain(), { torchExecutedOps: ['r7', 'g2'] }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^compile settings: torchExecutedOps: no op target or node of the model is named "r7"; did you mean r1, r2, r3, r4, r5\?$/);
  // Known targets and node names pass, including a target the model does not use.
  await expect(dryRun(chain(), { torchExecutedOps: ['r1', 'aten.gelu.default', 'aten.mul.Tensor'] })).resolves.toBeDefined();
});

test('edit distance and close matches', () => {
  expect(editDistance('kitten', 'sitting')).toBe(3);
  expect(editDistance('Aten.Relu', 'aten.relu')).toBe(0);
  expect(closeMatches('relu', ['aten.relu.default', 'aten.gelu.default', 'x'])).toEqual(['aten.relu.default']);
  expect(closeMatches('linaer', ['linear', 'linear_1', 'softmax'])).toEqual(['linear']);
  expect(closeMatches('r7', ['r1', 'r2', 'g1', 'relu'])).toEqual(['r1', 'r2']);
  expect(closeMatches('zzzzzz', ['linear'])).toEqual([]);
  // The overload left out: the overloads, ahead of names at a small edit distance.
  expect(closeMatches('aten.gelu', ['aten.gelu.default', 'aten.gelu_backward.default', 'aten.relu.default', 'aten.elu.default'])).toEqual(['aten.gelu.default']);
  expect(closeMatches('aten.add', ['aten.add.Tensor', 'aten.add.Scalar', 'aten.sub.Tensor', 'aten.addmm.default'])).toEqual(['aten.add.Scalar', 'aten.add.Tensor']);
  // Dot-separated parts in a row, without the namespace.
  expect(closeMatches('gelu.default', ['aten.gelu.default', 'aten.relu.default', 'aten.gelu_backward.default'])).toEqual(['aten.gelu.default']);
});
