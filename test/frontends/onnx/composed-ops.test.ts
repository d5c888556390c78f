/**
 * ONNX ops composed of existing IR ops (GridSample, AffineGrid, ...): our importer +
 * interpreter against onnxruntime on one-node models, and the imported graph converted whole
 * (no fallback) against the interpreter.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { Tensor, type Shape } from '../../../lib/ir/tensor';
import { interpret } from '../../../lib/interpreter';
import { expectClose, FP32 } from '../../helpers/compare';
import { expectConvertedMatches } from '../../helpers/convert-compare';
import { expectOnnxMatchesOrt } from '../../helpers/onnx-compare';
import { buildGraphModel, buildSingleOpModel, closeOrt, floatAttr, runOrtGraph, runOrtOp, type OrtInput, type OrtOpSpec } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { cast } from '../../../lib/kernels/unary';

const rng = new Random(20260420);
const f32 = (shape: Shape, lo = -3, hi = 3): Tensor => rng.tensor(shape, 'float32', lo, hi);
const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

afterAll(async () => closeOrt());

/** Matches onnxruntime, then converts whole and matches the interpreter. */
async function expectComposedMatches(spec: OrtOpSpec): Promise<void> {
  await expectOnnxMatchesOrt(spec);
  await expectConverts(spec);
}

async function expectConverts(spec: OrtOpSpec): Promise<void> {
  const feeds = spec.inputs.filter((x): x is Tensor => x instanceof Tensor);
  await expectConvertedMatches(loadOnnx(buildSingleOpModel(spec)), feeds);
}

describe('GridSample', () => {
  // Coordinates past [-1, 1] exercise the padding modes.
  const x = f32([2, 3, 4, 5]);
  const grid = f32([2, 3, 6, 2], -1.4, 1.4);
  const modes = ['linear', 'nearest', 'cubic'];
  const paddings = ['zeros', 'border', 'reflection'];
  // Cubic with border padding: ONNX's reference clamps an outside coordinate before taking
  // taps, onnxruntime (as PyTorch) clamps each tap; they agree on grids inside [-1, 1].
  const inside = f32([2, 3, 6, 2], -1, 1);
  const combos = modes.flatMap((mode) => paddings.flatMap((padding_mode) => [0, 1].map((align_corners) => [mode, padding_mode, align_corners] as const)));
  it.each(combos)('%s, %s padding, align_corners=%d', async (mode, padding_mode, align_corners) => {
    const g = mode === 'cubic' && padding_mode === 'border' ? inside : grid;
    await expectComposedMatches({ opType: 'GridSample', inputs: [x, g], attributes: { mode, padding_mode, align_corners }, opset: 20 });
  });

  it('the opset-16 names (bilinear, bicubic)', async () => {
    for (const mode of ['bilinear', 'bicubic']) await expectOnnxMatchesOrt({ opType: 'GridSample', inputs: [x, grid], attributes: { mode }, opset: 16 });
  });

  it('volumetric (5-D) inputs convert whole', async () => {
    const grid3 = f32([1, 2, 3, 4, 3], -1.3, 1.3);
    for (const mode of ['linear', 'nearest']) {
      for (const padding_mode of paddings) await expectConverts({ opType: 'GridSample', inputs: [f32([1, 2, 3, 4, 5]), grid3], attributes: { mode, padding_mode }, opset: 20 });
    }
  });

  it('refuses a grid whose last dim does not match the spatial rank as E_BAD_MODEL', () => {
    const model = buildSingleOpModel({ opType: 'GridSample', inputs: [x, f32([2, 3, 6, 3])], opset: 20 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "GridSample_0"') }));
  });
});

describe('AffineGrid', () => {
  it.each([0, 1])('2-D and 3-D, align_corners=%d', async (align_corners) => {
    await expectComposedMatches({ opType: 'AffineGrid', inputs: [f32([2, 2, 3]), { constant: i64([2, 3, 4, 5]) }], attributes: { align_corners }, opset: 20 });
    await expectComposedMatches({ opType: 'AffineGrid', inputs: [f32([1, 3, 4]), { constant: i64([1, 2, 3, 4, 2]) }], attributes: { align_corners }, opset: 20 });
  });
});

describe('Col2Im', () => {
  const col2im = (x: Tensor, image: number[], block: number[], attributes: Record<string, number[]> = {}): OrtOpSpec => ({
    opType: 'Col2Im',
    inputs: [x, { constant: i64(image) }, { constant: i64(block) }],
    attributes,
    opset: 18,
  });
  it('2-D: plain, strided with a remainder, dilated and padded', async () => {
    await expectComposedMatches(col2im(f32([2, 2 * 6, 9]), [4, 5], [2, 3]));
    // (7 - 2) / 2 + 1 = 3 blocks along H leave the last row uncovered.
    await expectComposedMatches(col2im(f32([1, 3 * 4, 6]), [7, 5], [2, 2], { strides: [2, 2] }));
    await expectComposedMatches(col2im(f32([1, 2 * 4, 16]), [5, 4], [2, 2], { dilations: [2, 1], pads: [1, 0, 0, 1] }));
  });
  it('1-D and 3-D', async () => {
    await expectConverts(col2im(f32([2, 3 * 2, 4]), [5], [2]));
    await expectConverts(col2im(f32([1, 2 * 8, 8]), [3, 3, 3], [2, 2, 2]));
  });
  it('refuses an L that does not match the image as E_BAD_MODEL', () => {
    expect(() => loadOnnx(buildSingleOpModel(col2im(f32([1, 4, 5]), [3, 3], [2, 2])))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});

describe('bitwise ops', () => {
  const ints = {
    int8: (shape: Shape) => rng.intTensor(shape, -128, 128, 'int8'),
    uint8: (shape: Shape) => rng.intTensor(shape, 0, 256, 'uint8'),
    // The extremes carry the sign bit and every other bit.
    int32: (shape: Shape) => {
      const t = rng.intTensor(shape, -2_000_000_000, 2_000_000_000, 'int32');
      (t.data as Int32Array).set([-2147483648, 2147483647, -1, 0]);
      return t;
    },
  };
  const types = Object.keys(ints) as Array<keyof typeof ints>;
  const binaryCases = ['BitwiseAnd', 'BitwiseOr', 'BitwiseXor'].flatMap((op) => types.map((t) => [op, t] as const));
  it.each(binaryCases)('%s on %s, broadcast', async (opType, dtype) => {
    await expectComposedMatches({ opType, inputs: [ints[dtype]([3, 4, 5]), ints[dtype]([4, 5])], opset: 18 });
  });
  it.each(types)('BitwiseNot on %s', async (dtype) => {
    await expectComposedMatches({ opType: 'BitwiseNot', inputs: [ints[dtype]([3, 4])], opset: 18 });
  });
  it.each(['LEFT', 'RIGHT'])('BitShift %s on uint8, shifts 0 to 9', async (direction) => {
    const y = Tensor.from('uint8', [10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await expectComposedMatches({ opType: 'BitShift', inputs: [ints.uint8([3, 10]), y], attributes: { direction }, opset: 11 });
  });
  const run = (opType: string, inputs: Tensor[], attributes?: Record<string, string>): unknown[] =>
    Array.from(interpret(loadOnnx(buildSingleOpModel({ opType, inputs, attributes, opset: 18 })), inputs)[0]!.data as ArrayLike<unknown>);
  it('int16, in int32 work: the sign bit and the others, against hand-computed bits', () => {
    const a = Tensor.from('int16', [3], [-32768, 0x5555, -1]);
    const b = Tensor.from('int16', [3], [-1, 0x0f0f, 12345]);
    expect(run('BitwiseAnd', [a, b])).toEqual([-32768, 0x0505, 12345]);
    expect(run('BitwiseOr', [a, b])).toEqual([-1, 0x5f5f, -1]);
    expect(run('BitwiseXor', [a, b])).toEqual([32767, 0x5a5a, -12346]);
  });
  it('uint64 past 2^53, exactly (int64 work on the same 64 bits)', () => {
    const a = Tensor.from('uint64', [2], [2n ** 64n - 1n, 2n ** 63n + 5n]);
    const b = Tensor.from('uint64', [2], [2n ** 53n + 1n, 3n]);
    expect(run('BitwiseAnd', [a, b])).toEqual([2n ** 53n + 1n, 1n]);
    expect(run('BitwiseOr', [a, b])).toEqual([2n ** 64n - 1n, 2n ** 63n + 7n]);
    expect(run('BitwiseXor', [a, b])).toEqual([18437736874454810622n, 2n ** 63n + 6n]);
    expect(run('BitwiseNot', [Tensor.from('uint16', [3], [0, 65535, 1])])).toEqual([65535, 0, 65534]);
  });
  it('BitShift on uint16 and uint64, shifts up to and past the width', () => {
    const x16 = Tensor.from('uint16', [2], [65535, 1]);
    const y16 = Tensor.from('uint16', [2], [4, 15]);
    expect(run('BitShift', [x16, y16], { direction: 'LEFT' })).toEqual([65520, 32768]);
    expect(run('BitShift', [x16, y16], { direction: 'RIGHT' })).toEqual([4095, 0]);
    const x = Tensor.from('uint64', [4], [2n ** 64n - 1n, 1n, 2n ** 63n, 2n ** 63n]);
    const y = Tensor.from('uint64', [4], [4n, 63n, 64n, 63n]);
    expect(run('BitShift', [x, y], { direction: 'LEFT' })).toEqual([2n ** 64n - 16n, 2n ** 63n, 0n, 0n]);
    expect(run('BitShift', [x, y], { direction: 'RIGHT' })).toEqual([2n ** 60n - 1n, 0n, 0n, 1n]);
  });
  it('refuses float operands as E_UNSUPPORTED_OP', () => {
    const x = Tensor.from('float32', [2], [1, 2]);
    expect(() => loadOnnx(buildSingleOpModel({ opType: 'BitwiseAnd', inputs: [x, x], opset: 18 }))).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });
});

describe('Einsum', () => {
  const cases: Array<[string, Shape[]]> = [
    ['bij,bjk->bik', [[2, 3, 4], [2, 4, 5]]],
    ['ij->ji', [[3, 4]]],
    ['ij', [[3, 4]]],
    ['i,i', [[5], [5]]],
    ['ii->i', [[4, 4]]],
    ['...ii->...i', [[2, 3, 3]]],
    ['...ij,...jk', [[2, 3, 4], [2, 4, 5]]],
    ['i,j,k->ijk', [[2], [3], [4]]],
    ['bhqd, bhkd -> bhqk', [[1, 2, 3, 4], [1, 2, 5, 4]]],
  ];
  it.each(cases)('%s', async (equation, shapes) => {
    await expectComposedMatches({ opType: 'Einsum', inputs: shapes.map((s) => f32(s)), attributes: { equation }, opset: 12 });
  });
  it('int32 operands keep their type', async () => {
    await expectComposedMatches({ opType: 'Einsum', inputs: [rng.intTensor([2, 3], -5, 5, 'int32'), rng.intTensor([3], -5, 5, 'int32')], attributes: { equation: 'ij,j->i' }, opset: 12 });
  });
  it('refuses a term whose labels do not match its rank as E_BAD_MODEL', () => {
    expect(() => loadOnnx(buildSingleOpModel({ opType: 'Einsum', inputs: [f32([2, 3])], attributes: { equation: 'ijk->i' }, opset: 12 }))).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "Einsum_0"') }),
    );
  });
});

describe('DFT and STFT', () => {
  const scalar = (v: number): { constant: Tensor } => ({ constant: Tensor.from('int64', [], [v]) });
  it('real and complex signals, forward and inverse, along each axis (opset 17 attribute)', async () => {
    for (const parts of [1, 2]) {
      for (const axis of [1, 2]) {
        for (const inverse of [0, 1]) await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 6, 5, parts])], attributes: { axis, inverse }, opset: 17 });
      }
    }
  });
  it('onesided, and a dft_length that pads or truncates', async () => {
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 7, 1])], attributes: { onesided: 1 }, opset: 17 });
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 6, 2]), scalar(9)], opset: 17 });
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 6, 2]), scalar(4)], opset: 17 });
  });
  it('the opset-20 axis input', async () => {
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([3, 4, 2]), null, scalar(0)], opset: 20 });
  });
  it('onesided inverse (irfft): the even length by default, the odd one by dft_length; a spectrum of another size refused', async () => {
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 5, 3, 2])], attributes: { axis: 1, inverse: 1, onesided: 1 }, opset: 17 });
    await expectComposedMatches({ opType: 'DFT', inputs: [f32([2, 4, 2]), scalar(7)], attributes: { inverse: 1, onesided: 1 }, opset: 17 });
    const padded = buildSingleOpModel({ opType: 'DFT', inputs: [f32([1, 3, 2]), { constant: Tensor.from('int64', [], [8]) }], attributes: { inverse: 1, onesided: 1 }, opset: 17 });
    expect(() => loadOnnx(padded)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('takes 5 bins; the spectrum has 3') }));
  });
  it('STFT with frame_length, with a window, two-sided', async () => {
    await expectComposedMatches({ opType: 'STFT', inputs: [f32([2, 40, 1]), scalar(6), null, scalar(8)], opset: 17 });
    await expectComposedMatches({ opType: 'STFT', inputs: [f32([1, 30, 1]), scalar(5), { constant: f32([10], 0, 1) }], opset: 17 });
    await expectComposedMatches({ opType: 'STFT', inputs: [f32([1, 30, 2]), scalar(5), null, scalar(10)], attributes: { onesided: 0 }, opset: 17 });
  });
});

describe('STFT of a complex signal with a window', () => {
  // onnxruntime disagrees here (it windows interleaved parts); the definition computed directly.
  it('matches Σ w[n]·x[t·step + n]·e^(−2πikn/F)', () => {
    const [len, step, frame] = [20, 4, 6];
    const x = f32([1, len, 2]);
    const w = f32([frame], 0, 1);
    const model = buildSingleOpModel({ opType: 'STFT', inputs: [x, { constant: Tensor.from('int64', [], [step]) }, { constant: w }], attributes: { onesided: 0 }, opset: 17 });
    const [y] = interpret(loadOnnx(model), [x]);
    const xs = x.toArray() as number[];
    const ws = w.toArray() as number[];
    const frames = Math.floor((len - frame) / step) + 1;
    const expected: number[] = [];
    for (let t = 0; t < frames; t++) {
      for (let k = 0; k < frame; k++) {
        let [re, im] = [0, 0];
        for (let n = 0; n < frame; n++) {
          const [a, b] = [xs[2 * (t * step + n)]! * ws[n]!, xs[2 * (t * step + n) + 1]! * ws[n]!];
          const th = (-2 * Math.PI * k * n) / frame;
          re += a * Math.cos(th) - b * Math.sin(th);
          im += a * Math.sin(th) + b * Math.cos(th);
        }
        expected.push(re, im);
      }
    }
    expectClose(y!, Tensor.from('float32', [1, frames, frame, 2], expected), FP32, 'STFT');
  });
});

describe('Cast of a small integer constant', () => {
  it('stays known at import, so a float Range over it compiles (as HannWindow expands)', async () => {
    const n = Tensor.from('int64', [], [5]);
    const spec = {
      nodes: [
        { opType: 'Cast', inputs: ['n'], outputs: ['nf'], attributes: { to: 1 } },
        { opType: 'Constant', inputs: [], outputs: ['zero'], attributes: { value: Tensor.from('float32', [], [0]) } },
        { opType: 'Constant', inputs: [], outputs: ['half'], attributes: { value: Tensor.from('float32', [], [0.5]) } },
        { opType: 'Range', inputs: ['zero', 'nf', 'half'], outputs: ['r'] },
      ],
      inputs: { n },
      outputs: ['r'],
      opset: 17,
    };
    const [expected] = await runOrtGraph(spec);
    const graph = loadOnnx(buildGraphModel(spec), { constantInputs: { n } });
    const [actual] = interpret(graph, []);
    expectClose(actual!, expected!, FP32, 'Range');
    expect(actual!.toArray()).toEqual([0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]);
  });
});

describe('LRN, MaxUnpool, ReverseSequence, ConvInteger, BatchNormalization in training mode', () => {
  // onnxruntime takes odd sizes only.
  it.each([1, 3, 5])('LRN size %d', async (size) => {
    await expectComposedMatches({ opType: 'LRN', inputs: [f32([2, 6, 3, 3])], attributes: { size, alpha: floatAttr(0.01), beta: floatAttr(0.6), bias: floatAttr(1.5) }, opset: 13 });
  });

  it('MaxUnpool of MaxPool indices', async () => {
    const x = f32([2, 3, 4, 4]);
    const [, indices] = await runOrtOp({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [2, 2], strides: [2, 2] }, outputCount: 2, opset: 12 });
    await expectComposedMatches({ opType: 'MaxUnpool', inputs: [f32([2, 3, 2, 2]), indices!], attributes: { kernel_shape: [2, 2], strides: [2, 2] }, opset: 11 });
  });

  it('MaxUnpool to a larger output_shape keeps the default layout (ONNX test data; onnxruntime re-indexes)', async () => {
    const spec: OrtOpSpec = {
      opType: 'MaxUnpool',
      inputs: [Tensor.from('float32', [1, 1, 2, 2], [5, 6, 7, 8]), Tensor.from('int64', [1, 1, 2, 2], [5, 7, 13, 15]), { constant: i64([1, 1, 5, 5]) }],
      attributes: { kernel_shape: [2, 2], strides: [2, 2] },
      opset: 11,
    };
    const [y] = interpret(loadOnnx(buildSingleOpModel(spec)), spec.inputs.filter((t): t is Tensor => t instanceof Tensor));
    const expected = new Array<number>(25).fill(0);
    [5, 6, 7, 8].forEach((v, i) => (expected[[6, 8, 16, 18][i]!] = v));
    expect(y!.shape).toEqual([1, 1, 5, 5]);
    expect(y!.toArray()).toEqual(expected);
    await expectConverts(spec);
  });

  it.each([
    [0, 1],
    [1, 0],
  ])('ReverseSequence time_axis %d, batch_axis %d', async (time_axis, batch_axis) => {
    const shape = time_axis === 0 ? [5, 4, 3] : [4, 5, 3];
    await expectComposedMatches({ opType: 'ReverseSequence', inputs: [f32(shape), i64([5, 1, 3, 0])], attributes: { time_axis, batch_axis }, opset: 10 });
  });

  it('ConvInteger with zero points (per-tensor and per-channel), padded and strided', async () => {
    const x = rng.intTensor([1, 2, 5, 5], 0, 256, 'uint8');
    // Weights and their zero points are initializers, as TensorRT needs constant kernels.
    const w = { constant: rng.intTensor([3, 2, 3, 3], 0, 256, 'uint8') };
    await expectComposedMatches({ opType: 'ConvInteger', inputs: [x, w, Tensor.from('uint8', [], [7])], attributes: { pads: [1, 1, 1, 1] }, opset: 10 });
    const wz = { constant: Tensor.from('uint8', [], [128]) };
    await expectComposedMatches({ opType: 'ConvInteger', inputs: [x, w, Tensor.from('uint8', [], [200]), wz], attributes: { strides: [2, 2] }, opset: 10 });
    // onnxruntime has no per-channel w_zero_point: converted against the interpreter only.
    const perChannel = { constant: Tensor.from('uint8', [3], [1, 128, 255]) };
    await expectConverts({ opType: 'ConvInteger', inputs: [x, w, Tensor.from('uint8', [], [200]), perChannel], opset: 10 });
    const xi = rng.intTensor([1, 2, 4, 4], -128, 128, 'int8');
    await expectComposedMatches({ opType: 'ConvInteger', inputs: [xi, { constant: rng.intTensor([2, 2, 2, 2], -128, 128, 'int8') }], opset: 10 });
  });

  it('BatchNormalization training_mode=1: output and running statistics', async () => {
    const inputs = [f32([3, 4, 2, 5]), { constant: f32([4]) }, { constant: f32([4]) }, { constant: f32([4]) }, { constant: f32([4], 0.5, 2) }];
    await expectComposedMatches({ opType: 'BatchNormalization', inputs, attributes: { training_mode: 1, momentum: floatAttr(0.8), epsilon: floatAttr(1e-3) }, outputCount: 3, opset: 15 });
  });
});

describe('RNN, GRU and LSTM unrolled', () => {
  const [T, B, I, H] = [4, 3, 5, 6];
  const weights = (gates: number, dirs: number): OrtInput[] => [
    { constant: f32([dirs, gates * H, I], -0.5, 0.5) },
    { constant: f32([dirs, gates * H, H], -0.5, 0.5) },
    { constant: f32([dirs, 2 * gates * H], -0.5, 0.5) },
  ];
  const kinds = [
    ['RNN', 1],
    ['GRU', 3],
    ['LSTM', 4],
  ] as const;
  const cases = kinds.flatMap(([op, gates]) => ['forward', 'reverse', 'bidirectional'].map((direction) => [op, gates, direction] as const));
  it.each(cases)('%s (%d gates), %s, with initial states', async (opType, gates, direction) => {
    const dirs = direction === 'bidirectional' ? 2 : 1;
    const states: OrtInput[] = [null, f32([dirs, B, H])];
    if (opType === 'LSTM') states.push(f32([dirs, B, H]), { constant: f32([dirs, 3 * H], -0.5, 0.5) });
    const outputCount = opType === 'LSTM' ? 3 : 2;
    await expectComposedMatches({ opType, inputs: [f32([T, B, I]), ...weights(gates, dirs), ...states], attributes: { hidden_size: H, direction }, outputCount, opset: 14 });
  });

  it('GRU linear_before_reset, clip, and no bias', async () => {
    const [w, r] = weights(3, 1);
    await expectComposedMatches({ opType: 'GRU', inputs: [f32([T, B, I]), w!, r!], attributes: { hidden_size: H, linear_before_reset: 1, clip: floatAttr(0.8) }, outputCount: 2, opset: 14 });
  });

  it('sequence_lens masks the steps past each length (forward)', async () => {
    const lens = Tensor.from('int32', [B], [4, 1, 2]);
    for (const [opType, gates] of kinds) {
      await expectComposedMatches({ opType, inputs: [f32([T, B, I]), ...weights(gates, 1), lens], attributes: { hidden_size: H }, outputCount: 2, opset: 14 });
    }
  });

  it('refuses sequence_lens in reverse as E_UNSUPPORTED_OP', () => {
    const spec: OrtOpSpec = { opType: 'RNN', inputs: [f32([T, B, I]), ...weights(1, 1), Tensor.from('int32', [B], [1, 2, 3])], attributes: { hidden_size: H, direction: 'reverse' }, opset: 14 };
    expect(() => loadOnnx(buildSingleOpModel(spec))).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('ONNX node "RNN_0"') }));
  });
});

describe('dilated AveragePool and LpPool', () => {
  // With count_include_pad and ceil_mode, a last window past the pads counts only what lies in the
  // padded input, as onnxruntime and ONNX's corrected reference do.
  const forms = [
    [0, 0],
    [0, 1],
    [1, 0],
    [1, 1],
  ] as const;
  it.each(forms)('AveragePool 2-D and 3-D, count_include_pad=%d, ceil_mode=%d', async (count_include_pad, ceil_mode) => {
    const attributes = { kernel_shape: [2, 3], dilations: [2, 2], strides: [1, 2], pads: [1, 0, 1, 2], count_include_pad, ceil_mode };
    await expectComposedMatches({ opType: 'AveragePool', inputs: [f32([2, 3, 7, 8])], attributes, opset: 19 });
    const attributes3 = { kernel_shape: [2, 2, 2], dilations: [2, 1, 2], strides: [2, 2, 1], count_include_pad, ceil_mode };
    await expectComposedMatches({ opType: 'AveragePool', inputs: [f32([1, 2, 6, 5, 5])], attributes: attributes3, opset: 19 });
  });
  it('LpPool with dilations', async () => {
    await expectComposedMatches({ opType: 'LpPool', inputs: [f32([1, 2, 6, 6])], attributes: { kernel_shape: [2, 2], dilations: [2, 3], p: 3 }, opset: 18 });
  });
});

describe('16-bit float inputs of composed activations', () => {
  it("Celu on float16 is computed in float32 and rounded once: onnxruntime's float32 Celu of the same values, rounded to float16", async () => {
    const x16 = cast(f32([256], -4, 4), 'float16');
    const exact = await runOrtOp({ opType: 'Celu', inputs: [cast(x16, 'float32')], attributes: { alpha: floatAttr(2) }, opset: 12 });
    const want = cast(exact[0]!, 'float16');
    const model = buildSingleOpModel({ opType: 'Celu', inputs: [x16], attributes: { alpha: floatAttr(2) }, opset: 12 });
    const got = interpret(loadOnnx(model), [x16])[0]!;
    expect(got.dtype).toBe('float16');
    expect(Array.from(got.data as Uint16Array)).toEqual(Array.from(want.data as Uint16Array));
  });
});

describe('newer opsets: RMSNormalization (23), Swish (24), LpNormalization (22)', () => {
  it.each([
    [-1, [2, 3, 8], [8]],
    [1, [2, 3, 4], [3, 4]],
    [0, [3, 5], [3, 5]],
  ] as const)('RMSNormalization axis %d over %j, scale %j, against onnxruntime', async (axis, shape, scaleShape) => {
    await expectComposedMatches({ opType: 'RMSNormalization', inputs: [f32([...shape]), f32([...scaleShape])], attributes: { axis, epsilon: floatAttr(1e-3) }, opset: 23 });
  });
  it('RMSNormalization with a scale that broadcasts over the normalized shape, against onnxruntime', async () => {
    await expectComposedMatches({ opType: 'RMSNormalization', inputs: [f32([2, 3, 4]), f32([1, 4])], attributes: { axis: 1 }, opset: 23 });
  });
  it.each([1, 0.5])('Swish alpha %s, against onnxruntime', async (alpha) => {
    await expectComposedMatches({ opType: 'Swish', inputs: [f32([3, 7])], attributes: { alpha: floatAttr(alpha) }, opset: 24 });
  });
  it.each([1, 2])('LpNormalization p=%d with a zero row (it stays zero), against onnxruntime', async (p) => {
    const x = f32([3, 4]);
    (x.data as Float32Array).fill(0, 4, 8);
    await expectComposedMatches({ opType: 'LpNormalization', inputs: [x], attributes: { axis: 1, p }, opset: 22 });
  });
});
