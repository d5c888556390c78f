/**
 * Reference backend: shuffle, slice, concat, shape, fill, constant and identity layers, with
 * TensorRT's semantics (slice by start/size/stride and sample modes, reshape's literal 0).
 * Checked against onnxruntime graphs of the same meaning, else against hand-derived values.
 */
import { BadInputError, InternalError } from '../../../lib/errors';
import { Network, type LayerParams, type SampleMode } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectExact, expectTensor } from '../../helpers/compare';
import { runOrtGraph, runOrtOp1 } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { runLayer1, runNetwork } from './helpers';

const rng = new Random(7);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);
const iota = (shape: number[], dtype: 'float32' | 'int64' | 'int32' = 'float32'): Tensor =>
  Tensor.from(
    dtype,
    shape,
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i),
  );

describe('shuffle', () => {
  it('is first transpose, reshape, second transpose (ONNX Transpose → Reshape → Transpose)', async () => {
    const x = rng.tensor([2, 3, 4]);
    const actual = await runLayer1({ kind: 'shuffle', firstTranspose: [2, 0, 1], reshape: [4, 6], secondTranspose: [1, 0], zeroIsPlaceholder: false }, [x]);
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Transpose', inputs: ['x'], outputs: ['t'], attributes: { perm: [2, 0, 1] } },
        { opType: 'Reshape', inputs: ['t', 'shape'], outputs: ['r'] },
        { opType: 'Transpose', inputs: ['r'], outputs: ['y'], attributes: { perm: [1, 0] } },
      ],
      inputs: { x, shape: i64([4, 6]) },
      outputs: ['y'],
    });
    expectExact(actual, expected!);
  });

  it('0 copies a dim only with zeroIsPlaceholder; -1 infers', async () => {
    const x = iota([2, 3, 4]);
    expectTensor(await runLayer1({ kind: 'shuffle', reshape: [0, -1], zeroIsPlaceholder: true }, [x]), 'float32', [2, 12], x.toArray());
    // Without the placeholder rule, 0 is a literal 0: [0, -1] cannot be inferred from 24
    // elements (a converter bug, caught when the layer runs at the latest)...
    await expect(runLayer1({ kind: 'shuffle', reshape: [0, -1], zeroIsPlaceholder: false }, [x])).rejects.toThrow(InternalError);
    // ...and an empty tensor reshapes to a literal 0.
    const empty = new Tensor('float32', [3, 0]);
    expectTensor(await runLayer1({ kind: 'shuffle', reshape: [0, 4], zeroIsPlaceholder: false }, [empty]), 'float32', [0, 4], []);
  });

  it('reads reshape dims from a shape tensor at run time', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [2, 3, 4]);
    const dims = net.addInput('dims', 'int64', [2]);
    const y = net.add1({ kind: 'shuffle', firstTranspose: [1, 0, 2], zeroIsPlaceholder: true }, [x, dims], 'reshape');
    expect(y.shape).toEqual([-1, -1]);
    net.markOutput(y, 'y');
    const xs = iota([2, 3, 4]);
    const { y: out1 } = await runNetwork(net, { x: xs, dims: i64([4, 6]) });
    const [expected] = await runOrtGraph({
      nodes: [
        { opType: 'Transpose', inputs: ['x'], outputs: ['t'], attributes: { perm: [1, 0, 2] } },
        { opType: 'Reshape', inputs: ['t', 'shape'], outputs: ['y'] },
      ],
      inputs: { x: xs, shape: i64([4, 6]) },
      outputs: ['y'],
    });
    expectExact(out1!, expected!);
    const { y: out2 } = await runNetwork(net, { x: xs, dims: i64([0, -1]) });
    expect(out2!.shape).toEqual([3, 8]);
  });
});

describe('slice', () => {
  const slice = (start: number[], size: number[], stride: number[], mode: SampleMode = 'strict_bounds'): LayerParams => ({ kind: 'slice', start, size, stride, mode });

  it('matches ONNX Slice with the equivalent ends (positive and negative strides)', async () => {
    const x = rng.tensor([5, 6]);
    const actual = await runLayer1(slice([1, 5], [3, 3], [1, -2]), [x]);
    // ends = start + size·stride; a negative end for a negative step means "past the front".
    const expected = await runOrtOp1({ opType: 'Slice', inputs: [x, { constant: i64([1, 5]) }, { constant: i64([4, -1000]) }, { constant: i64([0, 1]) }, { constant: i64([1, -2]) }] });
    expectExact(actual, expected);
  });

  it('stride 0 repeats one element', async () => {
    const x = iota([2, 3]);
    expectTensor(await runLayer1(slice([1, 0], [3, 3], [0, 1]), [x]), 'float32', [3, 3], [3, 4, 5, 3, 4, 5, 3, 4, 5]);
  });

  const line = Tensor.from('float32', [4], [10, 11, 12, 13]);
  it.each([
    ['wrap', [12, 13, 10, 11, 12, 13, 10, 11]],
    ['clamp', [10, 10, 10, 11, 12, 13, 13, 13]],
    ['fill', [0, 0, 10, 11, 12, 13, 0, 0]],
    ['reflect', [12, 11, 10, 11, 12, 13, 12, 11]],
  ] as Array<[SampleMode, number[]]>)('mode %s, hand-derived', async (mode, values) => {
    expectTensor(await runLayer1(slice([-2], [8], [1], mode), [line]), 'float32', [8], values);
  });

  it('reflect mirrors about the edge elements indefinitely; a single element repeats', async () => {
    const x = Tensor.from('int32', [4], [0, 1, 2, 3]);
    expectTensor(await runLayer1(slice([-7], [14], [1], 'reflect'), [x]), 'int32', [14], [1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0]);
    expectTensor(await runLayer1(slice([-2], [5], [1], 'reflect'), [Tensor.from('int32', [1], [7])]), 'int32', [5], [7, 7, 7, 7, 7]);
    expectTensor(await runLayer1(slice([5], [4], [-2], 'wrap'), [x]), 'int32', [4], [1, 3, 1, 3]);
  });

  it('fill takes its value from input 4', async () => {
    const fillValue = Tensor.from('float32', [], [-1]);
    const params = slice([-2], [8], [1], 'fill');
    expectTensor(await runLayer1(params, [line, null, null, null, { constant: fillValue }]), 'float32', [8], [-1, -1, 10, 11, 12, 13, -1, -1]);
  });

  it.each([
    ['fill', 'constant', 19],
    ['clamp', 'edge', 19],
    ['reflect', 'reflect', 19],
    ['wrap', 'wrap', 19],
  ] as Array<[SampleMode, string, number]>)('2-D %s matches ONNX Pad mode %s (as the ONNX parser builds Pad)', async (mode, padMode, opset) => {
    const x = rng.tensor([3, 4]);
    const actual = await runLayer1(slice([-2, -1], [3 + 2 + 1, 4 + 1 + 3], [1, 1], mode), [x]);
    const expected = await runOrtOp1({ opType: 'Pad', inputs: [x, { constant: i64([2, 1, 1, 3]) }], attributes: { mode: padMode }, opset });
    expectExact(actual, expected);
  });

  it('reads start, size and stride from shape tensors at run time; strict bounds are checked then', async () => {
    const net = new Network();
    const x = net.addInput('x', 'int64', [4, 5]);
    const start = net.addInput('start', 'int64', [2]);
    const size = net.addInput('size', 'int64', [2]);
    const stride = net.add1({ kind: 'constant', weights: i64([1, 2]) }, [], 'stride');
    const y = net.add1(slice([0, 0], [1, 1], [1, 1]), [x, start, size, stride], 'slice');
    expect(y.shape).toEqual([-1, -1]);
    net.markOutput(y, 'y');
    const xs = iota([4, 5], 'int64');
    const { y: out } = await runNetwork(net, { x: xs, start: i64([1, 0]), size: i64([2, 3]) });
    expectTensor(out!, 'int64', [2, 3], [5, 7, 9, 10, 12, 14]);
    await expect(runNetwork(net, { x: xs, start: i64([3, 0]), size: i64([2, 3]) })).rejects.toThrow(BadInputError);
    await expect(runNetwork(net, { x: xs, start: i64([3, 0]), size: i64([2, 3]) })).rejects.toThrow(/axis 0: element 1 reads index 4, outside \[0, 4\)/);
  });

  it('refuses a static out-of-bounds strict slice when the network is built', () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [4]);
    expect(() => net.add1(slice([2], [3], [1]), [x], 's')).toThrow(InternalError);
  });

  it('copies bool and int64 exactly', async () => {
    const b = Tensor.from('bool', [5], [1, 0, 0, 1, 1]);
    expectTensor(await runLayer1(slice([4], [3], [-2]), [b]), 'bool', [3], [1, 0, 1]);
    const big = Tensor.from('int64', [2], [2n ** 62n + 1n, -(2n ** 60n) - 3n]);
    const out = await runLayer1(slice([1], [2], [-1]), [big]);
    expect(Array.from(out.data as BigInt64Array)).toEqual([-(2n ** 60n) - 3n, 2n ** 62n + 1n]);
  });
});

describe('concat, shape, constant, identity', () => {
  it('concat matches ONNX Concat', async () => {
    const a = rng.tensor([2, 1, 3]);
    const b = rng.tensor([2, 4, 3]);
    const c = rng.tensor([2, 2, 3]);
    expectExact(await runLayer1({ kind: 'concat', axis: 1 }, [a, b, c]), await runOrtOp1({ opType: 'Concat', inputs: [a, b, c], attributes: { axis: 1 } }));
  });

  it('shape gives int64 dims, at run time for dynamic inputs', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float16', [-1, 3, -1], [{ min: [1, 3, 1], opt: [2, 3, 4], max: [8, 3, 8] }]);
    const s = net.add1({ kind: 'shape' }, [x], 'shape');
    expect(s.dtype).toBe('int64');
    net.markOutput(s, 's');
    const { s: out } = await runNetwork(net, { x: new Tensor('float16', [5, 3, 2]) });
    expectTensor(out!, 'int64', [3], [5, 3, 2]);
    expectExact(await runLayer1({ kind: 'shape' }, [new Tensor('bool', [2, 0, 7])]), await runOrtOp1({ opType: 'Shape', inputs: [new Tensor('bool', [2, 0, 7])] }));
  });

  it('constant and identity outputs belong to the caller (engine weights are not handed out)', async () => {
    const weights = Tensor.from('float32', [3], [1, 2, 3]);
    const net = new Network();
    const x = net.addInput('x', 'float32', [3]);
    const c = net.add1({ kind: 'constant', weights }, [], 'c');
    net.markOutput(c, 'c');
    net.markOutput(net.add1({ kind: 'identity' }, [x], 'id'), 'id');
    const { referenceBackend } = await import('../../../lib/backends/reference');
    const runner = referenceBackend.createRunner(await referenceBackend.build(net, {}));
    const feed = Tensor.from('float32', [3], [7, 8, 9]);
    const first = runner.run({ x: feed });
    expectTensor(first.c!, 'float32', [3], [1, 2, 3]);
    expect(first.id!.data).not.toBe(feed.data);
    (first.c!.data as Float32Array)[0] = 100;
    expectTensor(runner.run({ x: feed }).c!, 'float32', [3], [1, 2, 3]);
    runner.dispose();
  });
});

describe('fill (linspace)', () => {
  it('is alpha + Σ beta[d]·index_d', async () => {
    const params: LayerParams = { kind: 'fill', dims: [2, 3], alpha: 1, beta: [10, 2], dtype: 'float32' };
    expectTensor(await runLayer1(params, []), 'float32', [2, 3], [1, 3, 5, 11, 13, 15]);
    expectTensor(await runLayer1({ ...params, dtype: 'int32', alpha: -3, beta: [0, 1] }, []), 'int32', [2, 3], [-3, -2, -1, -3, -2, -1]);
  });

  it('takes dims, alpha and beta from inputs 0-2 (dims at run time)', async () => {
    const net = new Network();
    const dims = net.addInput('dims', 'int64', [1]);
    const alpha = net.add1({ kind: 'constant', weights: Tensor.from('int64', [], [5]) }, [], 'alpha');
    const beta = net.add1({ kind: 'constant', weights: Tensor.from('int64', [1], [-2]) }, [], 'beta');
    const y = net.add1({ kind: 'fill', dims: [], alpha: 0, beta: [], dtype: 'int64' }, [dims, alpha, beta], 'fill');
    net.markOutput(y, 'y');
    const { y: out } = await runNetwork(net, { dims: i64([4]) });
    expectTensor(out!, 'int64', [4], [5, 3, 1, -1]);
  });

  it('float values do not accumulate rounding error along a long output', async () => {
    const out = await runLayer1({ kind: 'fill', dims: [100000], alpha: 0, beta: [0.1], dtype: 'float32' }, []);
    expect(out.toArray()[99999]).toBe(Math.fround(9999.9));
  });
});
