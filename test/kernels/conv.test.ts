import { InvalidArgumentError } from '../../lib/errors';
import { conv, convTranspose, type ConvOptions } from '../../lib/kernels/conv';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose } from '../helpers/compare';
import { runOrtOp, type OrtAttribute } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

interface Case {
  name: string;
  x: number[];
  w: number[];
  bias?: boolean;
  attrs: Record<string, OrtAttribute>;
  options: ConvOptions;
}

const convCases: Case[] = [
  { name: '1-D plain', x: [2, 3, 11], w: [4, 3, 3], bias: true, attrs: {}, options: {} },
  { name: '1-D stride, dilation, pads', x: [1, 2, 13], w: [3, 2, 4], attrs: { strides: [2], dilations: [2], pads: [1, 3] }, options: { stride: 2, dilation: 2, pads: [1, 3] } },
  { name: '2-D symmetric padding', x: [2, 3, 9, 8], w: [5, 3, 3, 3], bias: true, attrs: { pads: [1, 1, 1, 1] }, options: { padding: 1 } },
  { name: '2-D stride 2, asymmetric pads', x: [1, 4, 10, 9], w: [6, 4, 3, 2], bias: true, attrs: { strides: [2, 3], pads: [0, 1, 2, 1] }, options: { stride: [2, 3], pads: [0, 1, 2, 1] } },
  { name: '2-D groups 2 with dilation', x: [2, 4, 12, 11], w: [6, 2, 3, 3], bias: true, attrs: { group: 2, dilations: [2, 3], pads: [2, 3, 2, 3] }, options: { groups: 2, dilation: [2, 3], padding: [2, 3] } },
  { name: '2-D depthwise stride 2', x: [1, 8, 15, 15], w: [8, 1, 5, 5], bias: true, attrs: { group: 8, strides: [2, 2], pads: [2, 2, 2, 2] }, options: { groups: 8, stride: 2, padding: 2 } },
  { name: '2-D 1x1', x: [3, 16, 5, 4], w: [24, 16, 1, 1], bias: true, attrs: {}, options: {} },
  { name: '2-D kernel as large as input', x: [1, 2, 3, 3], w: [2, 2, 3, 3], attrs: {}, options: { padding: 'valid' } },
  { name: '2-D SAME_UPPER stride 2', x: [1, 3, 8, 7], w: [4, 3, 4, 3], attrs: { auto_pad: 'SAME_UPPER', strides: [2, 2] }, options: { autoPad: 'SAME_UPPER', stride: 2 } },
  { name: '2-D SAME_LOWER', x: [1, 3, 6, 7], w: [4, 3, 4, 2], attrs: { auto_pad: 'SAME_LOWER' }, options: { autoPad: 'SAME_LOWER' } },
  { name: '2-D VALID', x: [1, 2, 6, 7], w: [3, 2, 2, 3], attrs: { auto_pad: 'VALID', strides: [2, 1] }, options: { autoPad: 'VALID', stride: [2, 1] } },
  { name: '3-D groups, stride, pads', x: [1, 4, 6, 7, 5], w: [4, 2, 3, 2, 3], bias: true, attrs: { group: 2, strides: [2, 1, 2], pads: [1, 0, 1, 1, 1, 0] }, options: { groups: 2, stride: [2, 1, 2], pads: [1, 0, 1, 1, 1, 0] } },
  { name: '3-D dilation', x: [2, 2, 7, 6, 6], w: [3, 2, 2, 2, 2], attrs: { dilations: [2, 1, 3] }, options: { dilation: [2, 1, 3] } },
];

describe('conv', () => {
  const rng = new Random(21);
  it.each(convCases)('matches ONNX Conv: $name', async ({ x: xs, w: ws, bias, attrs, options }) => {
    const x = rng.tensor(xs);
    const w = rng.tensor(ws);
    const b = bias ? rng.tensor([ws[0]!]) : null;
    const [expected] = await runOrtOp({ opType: 'Conv', inputs: [x, w, b], attributes: attrs });
    expectClose(conv(x, w, b, options), expected!);
  });

  it("pads 'same' like PyTorch (extra pixel at the end)", async () => {
    const x = rng.tensor([1, 2, 7, 6]);
    const w = rng.tensor([3, 2, 4, 3]);
    // total padding (k-1)*d: 6 rows -> 3 + 3, 2*2 = 4 columns -> 2 + 2 with dilation 2;
    // the odd row total 3 for k=4, d=1 is 1 at the start and 2 at the end
    const [expected] = await runOrtOp({ opType: 'Conv', inputs: [x, w], attributes: { pads: [1, 2, 2, 2], dilations: [1, 2] } });
    expectClose(conv(x, w, null, { padding: 'same', dilation: [1, 2] }), expected!);
    expect(() => conv(x, w, null, { padding: 'same', stride: 2 })).toThrow(/stride 1/);
  });

  it('accepts an unbatched input', async () => {
    const x = rng.tensor([3, 6, 6]);
    const w = rng.tensor([2, 3, 3, 3]);
    const [expected] = await runOrtOp({ opType: 'Conv', inputs: [x.reshape([1, 3, 6, 6]), w] });
    const y = conv(x, w);
    expect(y.shape).toEqual([2, 4, 4]);
    expectClose(y, expected!.reshape([2, 4, 4]));
  });

  it('convolves float64 (onnxruntime has no CPU float64 Conv: float32-exact inputs, compared with its float32 result)', async () => {
    const x = rng.tensor([1, 2, 5, 5]);
    const w = rng.tensor([3, 2, 3, 3]);
    const asF64 = (t: Tensor) => Tensor.from('float64', t.shape, t.toArray());
    const [expected] = await runOrtOp({ opType: 'Conv', inputs: [x, w], attributes: { pads: [1, 1, 1, 1] } });
    const y = conv(asF64(x), asF64(w), null, { padding: 1 });
    expect(y.dtype).toBe('float64');
    expectClose(y, asF64(expected!));
  });

  it('convolves float16 (onnxruntime has no CPU float16 Conv: compared with its float32 result rounded)', async () => {
    const x = rng.tensor([1, 2, 5, 5], 'float16');
    const w = rng.tensor([3, 2, 3, 3], 'float16');
    const asF32 = (t: Tensor) => Tensor.from('float32', t.shape, t.toArray());
    const [expected] = await runOrtOp({ opType: 'Conv', inputs: [asF32(x), asF32(w)], attributes: { pads: [1, 1, 1, 1] } });
    const y = conv(x, w, null, { padding: 1 });
    expect(y.dtype).toBe('float16');
    expectClose(y, Tensor.from('float16', expected!.shape, expected!.toArray()), { rtol: 1e-3, atol: 1e-3 });
  });

  it('handles a batch of 0', () => {
    expect(conv(new Tensor('float32', [0, 2, 5, 5]), rng.tensor([3, 2, 3, 3])).shape).toEqual([0, 3, 3, 3]);
  });

  it('rejects inconsistent channels, groups and sizes', () => {
    const w = rng.tensor([4, 2, 3, 3]);
    expect(() => conv(rng.tensor([1, 3, 5, 5]), w)).toThrow(InvalidArgumentError);
    expect(() => conv(rng.tensor([1, 4, 5, 5]), w, null, { groups: 3 })).toThrow(/groups 3/);
    expect(() => conv(rng.tensor([1, 2, 2, 2]), w)).toThrow(/too small/);
    expect(() => conv(rng.tensor([1, 2, 5, 5]), w, rng.tensor([3]))).toThrow(/bias/);
    expect(() => conv(rng.tensor([1, 2, 5]), w)).toThrow(/\[1, 2, 5\]/);
  });
});

interface TransposeCase {
  name: string;
  x: number[];
  w: number[];
  bias?: boolean;
  attrs: Record<string, OrtAttribute>;
  options: Parameters<typeof convTranspose>[3];
}

const transposeCases: TransposeCase[] = [
  { name: '1-D stride 2', x: [2, 3, 5], w: [3, 2, 3], bias: true, attrs: { strides: [2] }, options: { stride: 2 } },
  { name: '1-D pads, output_padding, dilation', x: [1, 2, 6], w: [2, 3, 4], attrs: { strides: [3], pads: [2, 1], output_padding: [2], dilations: [2] }, options: { stride: 3, pads: [2, 1], outputPadding: 2, dilation: 2 } },
  { name: '2-D stride 2 padding 1 output_padding 1', x: [2, 4, 5, 6], w: [4, 3, 3, 3], bias: true, attrs: { strides: [2, 2], pads: [1, 1, 1, 1], output_padding: [1, 1] }, options: { stride: 2, padding: 1, outputPadding: 1 } },
  { name: '2-D groups 2, dilation, asymmetric', x: [1, 4, 4, 5], w: [4, 3, 2, 3], bias: true, attrs: { group: 2, dilations: [2, 1], strides: [1, 2], pads: [0, 1, 1, 2] }, options: { groups: 2, dilation: [2, 1], stride: [1, 2], pads: [0, 1, 1, 2] } },
  { name: '2-D depthwise', x: [1, 3, 4, 4], w: [3, 1, 3, 3], attrs: { group: 3, strides: [2, 2] }, options: { groups: 3, stride: 2 } },
  { name: '2-D output_shape', x: [1, 2, 4, 4], w: [2, 2, 3, 3], attrs: { strides: [2, 2], output_shape: [8, 9] }, options: { stride: 2, outputShape: [8, 9] } },
  { name: '2-D SAME_UPPER', x: [1, 2, 3, 4], w: [2, 2, 4, 3], attrs: { strides: [2, 2], auto_pad: 'SAME_UPPER' }, options: { stride: 2, autoPad: 'SAME_UPPER' } },
  { name: '3-D', x: [1, 2, 3, 4, 3], w: [2, 2, 2, 3, 2], bias: true, attrs: { strides: [2, 1, 2], pads: [0, 1, 0, 1, 0, 1] }, options: { stride: [2, 1, 2], pads: [0, 1, 0, 1, 0, 1] } },
];

describe('convTranspose', () => {
  const rng = new Random(22);
  it.each(transposeCases)('matches ONNX ConvTranspose: $name', async ({ x: xs, w: ws, bias, attrs, options }) => {
    const x = rng.tensor(xs);
    const w = rng.tensor(ws);
    const groups = options?.groups ?? 1;
    const b = bias ? rng.tensor([ws[1]! * groups]) : null;
    const [expected] = await runOrtOp({ opType: 'ConvTranspose', inputs: [x, w, b], attributes: attrs });
    expectClose(convTranspose(x, w, b, options), expected!);
  });

  it('is the adjoint of conv (hand-checked 1-D example)', () => {
    // x = [1, 2], w = [1, 10, 100], stride 2: out = [1, 10, 100+2, 20, 200]
    const y = convTranspose(Tensor.from('float32', [1, 1, 2], [1, 2]), Tensor.from('float32', [1, 1, 3], [1, 10, 100]), null, { stride: 2 });
    expect(y.toArray()).toEqual([1, 10, 102, 20, 200]);
  });

  it('rejects inconsistent channels', () => {
    expect(() => convTranspose(rng.tensor([1, 3, 4, 4]), rng.tensor([2, 2, 3, 3]))).toThrow(/channels/);
  });
});
