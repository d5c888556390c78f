/**
 * Index checks for TensorRT (lib/backends/tensorrt/index-checks.ts): the rewritten network, run
 * on the reference backend (TensorRT is not on this machine), reads clamped indices and sets the
 * layer's check output exactly when the original network's run is refused; and the tensorrt
 * engine (lib/backends/tensorrt/run.ts) over a fake native engine and the simulated device turns
 * a set flag into E_BAD_INPUT naming the layer, frees every output, and never returns the flags.
 */
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { CHECK_OUTPUT_PREFIX, isCheckOutput, withIndexChecks } from '../../../lib/backends/tensorrt/index-checks';
import { tensorrtEngine } from '../../../lib/backends/tensorrt/run';
import type { NativeTensorRTEngine } from '../../../lib/backends/tensorrt/binding';
import { BadInputError } from '../../../lib/errors';
import { toDevice } from '../../../lib/gpu/device-tensor';
import { Network, type LayerParams } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { resetSimulatedGpu, simulatedBufferAt, simulatedGpu } from '../../helpers/simulated-gpu';

jest.mock('../../../lib/gpu/binding', () => require('../../helpers/simulated-gpu').bindingModule);

interface Case {
  name: string;
  params: LayerParams;
  /** The data input's declared dims (-1: dynamic, with a profile around [4, 3]). */
  dataDims: number[];
  indexShape: number[];
  indexType: 'int32' | 'int64';
  good: number[];
  bad: number[][];
  updates?: number[];
}

const cases: Case[] = [
  { name: 'default gather, static data', params: { kind: 'gather', mode: 'default', axis: 0 }, dataDims: [4, 3], indexShape: [3], indexType: 'int64', good: [3, 0, 2], bad: [[1, -1, 2], [1, 4, 2]] },
  { name: 'default gather, the axis dynamic (its size read at run time)', params: { kind: 'gather', mode: 'default', axis: 0 }, dataDims: [-1, 3], indexShape: [2], indexType: 'int32', good: [3, 1], bad: [[4, 0], [0, -1]] },
  { name: 'default gather, scalar index', params: { kind: 'gather', mode: 'default', axis: 1 }, dataDims: [4, 3], indexShape: [], indexType: 'int64', good: [2], bad: [[3], [-1]] },
  { name: 'element gather', params: { kind: 'gather', mode: 'element', axis: 0 }, dataDims: [4, 3], indexShape: [1, 3], indexType: 'int64', good: [3, 1, 0], bad: [[3, -1, 0], [3, 4, 0]] },
  { name: 'nd gather, dynamic data', params: { kind: 'gather', mode: 'nd', axis: 0 }, dataDims: [-1, -1], indexShape: [2, 2], indexType: 'int64', good: [3, 2, 0, 1], bad: [[3, 3, 0, 1], [4, 0, 0, 1]] },
  { name: 'element scatter', params: { kind: 'scatter', mode: 'element', axis: 0 }, dataDims: [4, 3], indexShape: [1, 3], indexType: 'int64', good: [2, 0, 3], bad: [[2, -1, 3], [2, 0, 4]], updates: [1, 3] },
  { name: 'nd scatter', params: { kind: 'scatter', mode: 'nd', axis: 0 }, dataDims: [4, 3], indexShape: [2, 2], indexType: 'int32', good: [3, 2, 0, 1], bad: [[3, -2, 0, 1], [0, 0, 9, 1]], updates: [2] },
];

function networkOf(c: Case): Network {
  const net = new Network('indexing');
  const profile = c.dataDims.some((d) => d < 0) ? [{ min: c.dataDims.map((d) => (d < 0 ? 1 : d)), opt: [4, 3], max: c.dataDims.map((d) => (d < 0 ? 8 : d)) }] : [];
  const data = net.addInput('data', 'float32', c.dataDims, profile);
  const inputs = [data, net.addInput('indices', c.indexType, c.indexShape)];
  if (c.updates !== undefined) inputs.push(net.addInput('updates', 'float32', c.updates));
  net.markOutput(net.add1(c.params, inputs, 'pick'), 'y');
  return net;
}

const data = Tensor.from('float32', [4, 3], Array.from({ length: 12 }, (_, i) => i + 1));

function feedsOf(c: Case, indices: number[]): Record<string, Tensor> {
  const feeds: Record<string, Tensor> = { data, indices: Tensor.from(c.indexType, c.indexShape, indices) };
  if (c.updates !== undefined) feeds.updates = Tensor.from('float32', c.updates, Array.from({ length: c.updates.reduce((a, d) => a * d, 1) }, (_, i) => -(i + 1)));
  return feeds;
}

const FLAG = `${CHECK_OUTPUT_PREFIX}pick`;

describe('withIndexChecks on the reference backend', () => {
  test.each(cases)('$name: in range, the same answer and a clear flag; out of range, the flag where the original is refused', (c) => {
    const original = networkOf(c);
    const checked = withIndexChecks(original);
    expect(checked.outputs.map((o) => o.name)).toEqual(['y', FLAG]);
    const plain = new ReferenceRunner(original);
    const guarded = new ReferenceRunner(checked);
    const good = guarded.run(feedsOf(c, c.good));
    expect(good.y!.toArray()).toEqual(plain.run(feedsOf(c, c.good)).y!.toArray());
    expect(good[FLAG]!.shape).toEqual([]);
    expect(good[FLAG]!.toArray()).toEqual([0]);
    for (const bad of c.bad) {
      expect(() => plain.run(feedsOf(c, bad))).toThrow(BadInputError);
      expect(guarded.run(feedsOf(c, bad))[FLAG]!.toArray()).toEqual([1]);
    }
  });

  test('constant indices in range need no check: the network comes back as it was', () => {
    const net = new Network('constant');
    const x = net.addInput('data', 'float32', [4, 3]);
    const idx = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [3, 0]) }, [], 'idx');
    net.markOutput(net.add1({ kind: 'gather', mode: 'default', axis: 0 }, [x, idx], 'pick'), 'y');
    expect(withIndexChecks(net)).toBe(net);
  });

  test('constant indices out of range, or against a dynamic axis, are checked', () => {
    for (const [dims, values] of [[[4, 3], [3, 4]], [[-1, 3], [3, 0]]] as const) {
      const net = new Network('constant');
      const x = net.addInput('data', 'float32', [...dims], dims[0] < 0 ? [{ min: [1, 3], opt: [4, 3], max: [8, 3] }] : []);
      const idx = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [...values]) }, [], 'idx');
      net.markOutput(net.add1({ kind: 'gather', mode: 'default', axis: 0 }, [x, idx], 'pick'), 'y');
      expect(withIndexChecks(net).outputs.map((o) => o.name)).toEqual(['y', FLAG]);
    }
  });
});

describe('the tensorrt engine reads its index checks', () => {
  beforeEach(() => resetSimulatedGpu());

  /** A native engine whose run writes `flag` into the check output and 7s into y, as TensorRT would. */
  function fakeNative(flag: number): NativeTensorRTEngine {
    return {
      io: () => [
        { name: 'x', dataType: 0 },
        { name: 'y', dataType: 0 },
        { name: FLAG, dataType: 0 },
      ],
      outputShapes: () => ({ y: [2], [FLAG]: [] }),
      run: async (_shapes: unknown, addresses: Record<string, bigint>) => {
        new Float32Array(simulatedBufferAt(addresses.y!).data.buffer).fill(7);
        new Float32Array(simulatedBufferAt(addresses[FLAG]!).data.buffer)[0] = flag;
      },
      dispose: () => undefined,
    } as unknown as NativeTensorRTEngine;
  }

  test('a clear flag: the outputs without the flag; a set flag: E_BAD_INPUT naming the layer, nothing left allocated', async () => {
    const x = await toDevice(Tensor.from('float32', [2], [1, 2]), 0);
    const live = simulatedGpu.live.size;
    const good = await tensorrtEngine(fakeNative(0), { inputNames: ['x'], outputNames: ['y'] }, 0, [FLAG]).run({ x });
    expect(Object.keys(good)).toEqual(['y']);
    expect(isCheckOutput(Object.keys(good)[0]!)).toBe(false);
    expect(simulatedGpu.live.size).toBe(live + 1);
    (good.y as unknown as { dispose(): void }).dispose();
    const failed = tensorrtEngine(fakeNative(1), { inputNames: ['x'], outputNames: ['y'] }, 0, [FLAG]).run({ x });
    await expect(failed).rejects.toThrow(BadInputError);
    await expect(failed).rejects.toMatchObject({ code: 'E_BAD_INPUT', details: { layer: 'pick' }, message: expect.stringContaining('tensorrt engine: layer "pick": an index is out of range') });
    expect(simulatedGpu.live.size).toBe(live);
  });
});
