/**
 * Run-time index checks of the cuda backend (lib/backends/cuda/plan/run-checks.ts): gathers and
 * scatters whose indices arrive at run time report an index outside its axis through the plan's
 * status word, which the runner turns into the E_BAD_INPUT the reference backend gives. Whole
 * networks through the real lowerings on the CPU kernel emulator, against the reference backend.
 */
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { runCheckError } from '../../../../lib/backends/cuda/plan/run-checks';
import { BadInputError } from '../../../../lib/errors';
import { Network, type LayerParams } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { emulateLowered } from '../emulated-network';

/** data float32[4, 3] (an input) gathered or scattered along `params` with indices that are an input of `indexShape`. */
function indexNetwork(params: LayerParams, indexShape: number[], updatesShape?: number[]): Network {
  const net = new Network('indexing');
  const data = net.addInput('data', 'float32', [4, 3]);
  const indices = net.addInput('indices', 'int64', indexShape);
  const inputs = [data, indices];
  if (updatesShape !== undefined) inputs.push(net.addInput('updates', 'float32', updatesShape));
  net.markOutput(net.add1(params, inputs, 'pick'), 'y');
  return net;
}

const data = Tensor.from('float32', [4, 3], Array.from({ length: 12 }, (_, i) => i + 1));

interface Case {
  name: string;
  params: LayerParams;
  indexShape: number[];
  good: number[];
  /** In the network's terms ([0, d) after the conversion's wrap): one below 0, one at d. */
  bad: number[][];
  updates?: number[];
}

const cases: Case[] = [
  { name: 'default gather (row kernel)', params: { kind: 'gather', mode: 'default', axis: 0 }, indexShape: [3], good: [3, 0, 2], bad: [[1, -1, 2], [1, 4, 2]] },
  { name: 'default gather along axis 1 (walk)', params: { kind: 'gather', mode: 'default', axis: 1 }, indexShape: [2], good: [2, 0], bad: [[-1, 0], [0, 3]] },
  { name: 'element gather', params: { kind: 'gather', mode: 'element', axis: 0 }, indexShape: [1, 3], good: [3, 1, 0], bad: [[3, -1, 0], [3, 4, 0]] },
  { name: 'nd gather', params: { kind: 'gather', mode: 'nd', axis: 0 }, indexShape: [2, 2], good: [3, 2, 0, 1], bad: [[3, 3, 0, 1], [4, 0, 0, 1]] },
  { name: 'element scatter', params: { kind: 'scatter', mode: 'element', axis: 0 }, indexShape: [1, 3], good: [2, 0, 3], bad: [[2, -1, 3], [2, 0, 4]], updates: [1, 3] },
  { name: 'nd scatter', params: { kind: 'scatter', mode: 'nd', axis: 0 }, indexShape: [2, 2], good: [3, 2, 0, 1], bad: [[3, -2, 0, 1], [0, 0, 9, 1]], updates: [2] },
];

function feedsOf(c: Case, indices: number[]): Record<string, Tensor> {
  const feeds: Record<string, Tensor> = { data, indices: Tensor.from('int64', c.indexShape, indices) };
  if (c.updates !== undefined) feeds.updates = Tensor.from('float32', c.updates, Array.from({ length: c.updates.reduce((a, d) => a * d, 1) }, (_, i) => -(i + 1)));
  return feeds;
}

describe('cuda run-time index checks on the emulator', () => {
  test.each(cases)('$name: in range, the reference backend\'s answer and a zero status; out of range, the layer\'s code, where the reference refuses', async (c) => {
    const network = indexNetwork(c.params, c.indexShape, c.updates);
    const reference = new ReferenceRunner(network);
    const good = emulateLowered(network, feedsOf(c, c.good));
    expect(good.lowered.checks).toEqual([{ layer: 'pick', kind: c.params.kind, what: expect.stringMatching(/^an index is out of range for axis/) }]);
    expect(good.status).toBe(0);
    expect(good.outputs.y!.toArray()).toEqual((await reference.run(feedsOf(c, c.good))).y!.toArray());
    for (const bad of c.bad) {
      await expect(Promise.resolve().then(() => reference.run(feedsOf(c, bad)))).rejects.toThrow(BadInputError);
      const run = emulateLowered(network, feedsOf(c, bad));
      expect(run.status).toBe(1);
      const error = runCheckError(network.name, run.lowered.checks, run.status);
      expect(error).toBeInstanceOf(BadInputError);
      expect(error).toMatchObject({ code: 'E_BAD_INPUT', details: { layer: 'pick' } });
      expect(error.message).toMatch(/^cuda engine "indexing": layer "pick" \((gather|scatter)\): an index is out of range for axis \d of size \d/);
    }
  }, 120_000);

  test('indices that are constants of the network, all in range, need no run-time check: no status word, no zeroing step', () => {
    const net = new Network('constant-indices');
    const x = net.addInput('data', 'float32', [4, 3]);
    const indices = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [3, 1]) }, [], 'indices');
    net.markOutput(net.add1({ kind: 'gather', mode: 'default', axis: 0 }, [x, indices], 'pick'), 'y');
    const run = emulateLowered(net, { data });
    expect(run.lowered.checks).toEqual([]);
    expect(run.lowered.steps.some((s) => s.kind === 'memset' && s.dst.buffer === run.lowered.statusBuffer)).toBe(false);
    expect(run.outputs.y!.toArray()).toEqual([10, 11, 12, 4, 5, 6]);
  }, 60_000);

  test('constant indices outside the axis keep the run-time check, so the run fails as on the reference backend', async () => {
    const net = new Network('bad-constant');
    const x = net.addInput('data', 'float32', [4, 3]);
    const indices = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [3, 4]) }, [], 'indices');
    net.markOutput(net.add1({ kind: 'gather', mode: 'default', axis: 0 }, [x, indices], 'pick'), 'y');
    await expect(Promise.resolve().then(() => new ReferenceRunner(net).run({ data }))).rejects.toThrow(BadInputError);
    const run = emulateLowered(net, { data });
    expect(run.lowered.checks).toHaveLength(1);
    expect(run.status).toBe(1);
  }, 60_000);

  test('a status word that names no check is an internal error, not bad input', () => {
    expect(runCheckError('n', [], 3)).toMatchObject({ code: 'E_INTERNAL' });
  });
});
