/**
 * A concatenation into rows of 2–16 bytes along its innermost axis runs as one launch
 * (lib/backends/cuda/layers/row-blocks.ts): each thread stores a whole row, each block's map
 * (with its fused producer) computing its columns. Run on the CPU emulator against the
 * reference backend, bit for bit (copies and casts are exact); what stays one launch per block
 * is listed.
 */
import { channelsLast } from '../../../../lib/backends/cuda/passes/channels-last';
import type { LoweredStep } from '../../../../lib/backends/cuda/layers';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { Network, type NetTensor } from '../../../../lib/network';
import type { TrtDType } from '../../../../lib/network';
import { reducePrecision } from '../../../../lib/network/precision';
import type { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../../helpers/compare';

const FP16: Tolerance = { rtol: 2e-2, atol: 2e-2 };
import { Random } from '../../../helpers/random';
import { emulateLowered } from '../emulated-network';

const random = new Random(53);

const launches = (steps: readonly LoweredStep[]): string[] => steps.flatMap((s) => (s.kind === 'launch' ? [s.kernel.key] : []));
const exact = (got: Tensor, want: Tensor): void => {
  expect(got.shape).toEqual(want.shape);
  expect(Array.from(got.data as ArrayLike<number>)).toEqual(Array.from(want.data as ArrayLike<number>));
};

/** concat(inputs of `shapes`, axis) in `dtype`, each input first scaled by 2 (a fused producer). */
function concatNet(dtype: TrtDType, shapes: number[][], axis: number): Network {
  const net = new Network('concat');
  const parts: NetTensor[] = shapes.map((shape, i) => {
    const x = net.addInput(`x${i}`, dtype, shape);
    const two = net.add1({ kind: 'constant', weights: random.tensor(shape.map(() => 1), dtype, 2, 2) }, [], `two${i}`);
    return net.add1({ kind: 'elementwise', op: 'prod' }, [x, two], `scale${i}`);
  });
  net.markOutput(net.add1({ kind: 'concat', axis }, parts, 'cat'), 'y');
  return net;
}

const feedsFor = (dtype: TrtDType, shapes: readonly (readonly number[])[]): Record<string, Tensor> =>
  Object.fromEntries(shapes.map((shape, i) => [`x${i}`, random.tensor([...shape], dtype, -8, 8)]));

describe('concatenation into short rows as one launch', () => {
  test.each([
    ['float16', [[3, 4, 3], [3, 4, 1]], 'rows.u16x4'],
    ['float32', [[2, 5, 2], [2, 5, 1], [2, 5, 1]], 'rows.floatx4'],
    ['float16', [[6, 1], [6, 1]], 'rows.u16x2'],
    ['bfloat16', [[2, 3, 2, 7], [2, 3, 2, 1]], 'rows.u16x8'],
  ] as const)('%s %j: one launch, the producers fused, the same bits as the reference', (dtype, shapes, key) => {
    const net = concatNet(dtype, shapes.map((s) => [...s]), -1 + shapes[0]!.length);
    const feeds = feedsFor(dtype, shapes);
    const { outputs, lowered } = emulateLowered(net, feeds);
    const keys = launches(lowered.steps);
    expect(keys).toHaveLength(1);
    expect(keys[0]!.startsWith(`${key}.`)).toBe(true);
    exact(outputs.y!, new ReferenceRunner(net).run(feeds).y!);
  });

  test.each([
    ['rows of 12 bytes', 'float16', [[3, 4, 3], [3, 4, 3]], 2],
    ['an outer axis', 'float16', [[2, 4], [2, 4]], 0],
    ['rows of 32 bytes', 'float32', [[3, 4], [3, 4]], 1],
  ] as const)('%s: one launch per block', (_what, dtype, shapes, axis) => {
    const net = concatNet(dtype, shapes.map((s) => [...s]), axis);
    const feeds = feedsFor(dtype, shapes);
    const { outputs, lowered } = emulateLowered(net, feeds);
    expect(launches(lowered.steps)).toHaveLength(shapes.length);
    exact(outputs.y!, new ReferenceRunner(net).run(feeds).y!);
  });

  test('a block read through a transpose: three outer dims that do not coalesce', () => {
    const net = new Network('transposed');
    const a = net.addInput('a', 'float16', [3, 2, 5, 2]);
    const b = net.addInput('b', 'float16', [2, 3, 5, 2]);
    const t = net.add1({ kind: 'shuffle', firstTranspose: [1, 0, 2, 3], zeroIsPlaceholder: false }, [a], 't');
    net.markOutput(net.add1({ kind: 'concat', axis: 3 }, [t, b], 'cat'), 'y');
    const feeds = { a: random.tensor([3, 2, 5, 2], 'float16', -8, 8), b: random.tensor([2, 3, 5, 2], 'float16', -8, 8) };
    const { outputs, lowered } = emulateLowered(net, feeds);
    expect(launches(lowered.steps)).toHaveLength(1);
    expect(launches(lowered.steps)[0]!.startsWith('rows.u16x4.3.')).toBe(true);
    exact(outputs.y!, new ReferenceRunner(net).run(feeds).y!);
  });

  test('ResNet\'s widened image: the cast, the transpose and the zero channel are one launch over [N, H, W, 4] rows', () => {
    const net = new Network('stem');
    const x = net.addInput('x', 'float32', [2, 3, 9, 10]);
    const conv = net.add1(
      {
        kind: 'convolution', nbOutputMaps: 8, kernelSize: [3, 3], stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1], groups: 1,
        kernel: random.tensor([8, 3, 3, 3], 'float32', -0.5, 0.5), bias: random.tensor([8], 'float32'),
      },
      [x],
      'stem',
    );
    net.markOutput(conv, 'y');
    const { network, padded } = channelsLast(reducePrecision(net, ['fp16']).network);
    expect(padded).toBe(1);
    // The widened image itself as an output too: its bits are checked, not only the convolution's.
    const stem = network.layers.find((l) => l.name === 'stem')!;
    network.markOutput(network.tensor(stem.inputs[0]!), 'widened');
    const feeds = { x: random.tensor([2, 3, 9, 10], 'float32') };
    const { outputs, lowered } = emulateLowered(network, feeds);
    // The image's launch, then the convolution; the output's cast and transpose back follow.
    const first = lowered.steps[0]!;
    expect(first.kind === 'launch' && first.kernel.key.startsWith('rows.u16x4.2.3:')).toBe(true);
    expect(lowered.steps[1]).toMatchObject({ kind: 'conv', input: [2, 4, 9, 10], channelsLast: true });
    const reference = new ReferenceRunner(network).run(feeds);
    expect(outputs.widened!.shape).toEqual([2, 9, 10, 4]);
    exact(outputs.widened!, reference.widened!);
    expectClose(outputs.y!, new ReferenceRunner(net).run(feeds).y!, FP16, 'widened fp16 stem, emulated vs the fp32 network on the reference backend');
  });
});
