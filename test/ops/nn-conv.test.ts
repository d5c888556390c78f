/**
 * NN family, convolution and pooling: ONNX Conv, ConvTranspose, MaxPool, AveragePool,
 * GlobalAveragePool and GlobalMaxPool against onnxruntime; ATen-only overloads (conv2d
 * unbatched, conv_transpose2d, max_pool2d_with_indices, adaptive pools, avg_pool with
 * divisor_override) against hand-derived values; symbolic output sizes.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { formatShape, sym } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { convolutionArgs } from '../helpers/conv-args';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, runOrtOp, type OrtAttributes } from '../helpers/ort-single-op';
import { expectValues, f32, run } from '../helpers/ops-setup';
import { Random } from '../helpers/random';

describe('ONNX Conv against onnxruntime', () => {
  const rng = new Random(401);
  // [label, input shape, weight shape, attributes, with bias]
  const cases: Array<[string, number[], number[], OrtAttributes, boolean]> = [
    ['plain 3x3', [2, 3, 7, 7], [4, 3, 3, 3], {}, true],
    ['group 2, stride 2, dilation 2, pads 1', [1, 4, 9, 8], [6, 2, 3, 3], { group: 2, strides: [2, 2], dilations: [2, 2], pads: [1, 1, 1, 1] }, true],
    ['asymmetric pads', [1, 2, 6, 6], [3, 2, 3, 2], { pads: [0, 1, 2, 1] }, true],
    ['SAME_UPPER stride 2, even kernel', [1, 2, 7, 6], [3, 2, 2, 4], { auto_pad: 'SAME_UPPER', strides: [2, 2] }, false],
    ['SAME_LOWER stride 1', [1, 2, 5, 5], [2, 2, 4, 4], { auto_pad: 'SAME_LOWER' }, true],
    // (onnxruntime rejects dilations with SAME_*)
    ['SAME_UPPER stride 3', [1, 1, 10, 11], [2, 1, 4, 3], { auto_pad: 'SAME_UPPER', strides: [3, 3] }, true],
    ['VALID stride [1, 2]', [2, 2, 6, 7], [2, 2, 3, 3], { auto_pad: 'VALID', strides: [1, 2] }, false],
    ['depthwise', [1, 4, 5, 5], [4, 1, 3, 3], { group: 4, pads: [1, 1, 1, 1] }, true],
    ['kernel_shape given, 1x1', [2, 3, 4, 4], [5, 3, 1, 1], { kernel_shape: [1, 1] }, true],
    ['1-D stride 2 pads', [2, 3, 10], [4, 3, 3], { strides: [2], pads: [1, 2] }, true],
    ['3-D', [1, 2, 4, 5, 5], [3, 2, 2, 3, 3], { pads: [1, 0, 1, 1, 0, 1], strides: [1, 2, 1] }, true],
    ['batch of 1, 1x1 input', [1, 1, 1, 1], [1, 1, 1, 1], {}, true],
  ];
  it.each(cases)('%s', async (_label, xs, ws, attributes, withBias) => {
    const inputs = [rng.tensor(xs), rng.tensor(ws), ...(withBias ? [rng.tensor([ws[0]!])] : [])];
    for (const opset of [13, 21]) await expectOnnxMatchesOrt({ opType: 'Conv', inputs, attributes, opset });
  });

  it('with constant weights', async () => {
    await expectOnnxMatchesOrt({ opType: 'Conv', inputs: [rng.tensor([1, 2, 5, 5]), { constant: rng.tensor([3, 2, 3, 3]) }, { constant: rng.tensor([3]) }], opset: 13 });
  });

  it('maps symmetric pads onto aten.convolution and asymmetric ones onto trt.conv_padded', () => {
    const sym = loadOnnx(buildSingleOpModel({ opType: 'Conv', inputs: [rng.tensor([1, 2, 5, 5]), rng.tensor([3, 2, 3, 3])], attributes: { pads: [1, 1, 1, 1] }, opset: 13 }));
    expect(sym.calls()[0]!.target).toBe('aten.convolution.default');
    const asym = loadOnnx(buildSingleOpModel({ opType: 'Conv', inputs: [rng.tensor([1, 2, 5, 5]), rng.tensor([3, 2, 3, 3])], attributes: { pads: [0, 0, 1, 1] }, opset: 13 }));
    expect(asym.calls()[0]!.target).toBe('trt.conv_padded');
  });

  it('rejects channels that do not match the groups as E_BAD_MODEL naming the node', () => {
    const model = buildSingleOpModel({ opType: 'Conv', inputs: [rng.tensor([1, 4, 5, 5]), rng.tensor([4, 3, 3, 3])], attributes: { group: 2 }, opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "Conv_0"') }));
  });

  it('rejects a pads list of the wrong length as E_BAD_MODEL', () => {
    const model = buildSingleOpModel({ opType: 'Conv', inputs: [rng.tensor([1, 2, 5, 5]), rng.tensor([3, 2, 3, 3])], attributes: { pads: [1, 1] }, opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});

describe('ONNX ConvTranspose against onnxruntime', () => {
  const rng = new Random(402);
  const cases: Array<[string, number[], number[], OrtAttributes, boolean]> = [
    ['plain', [1, 3, 4, 4], [3, 2, 3, 3], {}, true],
    ['stride 2, pads 1, output_padding 1', [2, 2, 4, 5], [2, 3, 3, 3], { strides: [2, 2], pads: [1, 1, 1, 1], output_padding: [1, 1] }, true],
    ['asymmetric pads', [1, 2, 4, 4], [2, 2, 3, 3], { strides: [2, 2], pads: [0, 1, 2, 0] }, true],
    ['group 2 and dilation 2', [1, 4, 3, 3], [4, 1, 3, 3], { group: 2, dilations: [2, 2] }, true],
    ['output_shape', [1, 2, 3, 3], [2, 2, 3, 3], { strides: [2, 2], output_shape: [6, 7] }, true],

    ['SAME_UPPER stride 2', [1, 2, 3, 4], [2, 1, 4, 3], { auto_pad: 'SAME_UPPER', strides: [2, 2] }, false],
    ['SAME_LOWER stride 2', [1, 2, 3, 4], [2, 1, 4, 3], { auto_pad: 'SAME_LOWER', strides: [2, 2] }, false],
    ['VALID', [1, 1, 3, 3], [1, 2, 2, 2], { auto_pad: 'VALID', strides: [2, 1] }, true],
    ['1-D stride 3', [2, 2, 5], [2, 3, 4], { strides: [3], pads: [1, 1] }, true],
    ['3-D', [1, 2, 2, 3, 3], [2, 2, 2, 2, 3], { strides: [2, 1, 2], pads: [0, 1, 1, 0, 1, 1] }, true],
  ];
  it.each(cases)('%s', async (_label, xs, ws, attributes, withBias) => {
    const bias = ws[1]! * (typeof attributes.group === 'number' ? attributes.group : 1);
    const inputs = [rng.tensor(xs), rng.tensor(ws), ...(withBias ? [rng.tensor([bias])] : [])];
    for (const opset of [13, 21]) await expectOnnxMatchesOrt({ opType: 'ConvTranspose', inputs, attributes, opset });
  });

  // ONNX's formula makes the pads negative when output_shape passes the full result (7 × 7
  // here): total = -1 rows (pads begin 0, end -1) and -2 columns (pads -1 and -1: begin is
  // total - floor(total / 2)). ONNX's own test data (test_convtranspose_output_shape) pads the
  // result there; onnxruntime 1.30 refuses such an output_shape. So: onnxruntime's full result
  // at rows 0-6 and columns 1-7, and the bias alone around it.
  it('output_shape past the full result: the full result where ONNX\'s pads put it, the bias alone around it', async () => {
    const [x, w, b] = [rng.tensor([1, 2, 3, 3]), rng.tensor([2, 3, 3, 3]), rng.tensor([3])];
    const [full] = await runOrtOp({ opType: 'ConvTranspose', inputs: [x, w, b], attributes: { strides: [2, 2] }, opset: 13 });
    expect(full!.shape).toEqual([1, 3, 7, 7]);
    const model = buildSingleOpModel({ opType: 'ConvTranspose', inputs: [x, w, b], attributes: { strides: [2, 2], output_shape: [8, 9] }, opset: 13 });
    const [y] = interpret(loadOnnx(model), [x, w, b]);
    expect(y!.shape).toEqual([1, 3, 8, 9]);
    const got = y!.toArray();
    const want = full!.toArray();
    const bias = b.toArray();
    for (let c = 0; c < 3; c++) {
      for (let i = 0; i < 8; i++) {
        for (let j = 0; j < 9; j++) {
          const [fi, fj] = [i, j - 1];
          const expected = fi >= 0 && fi < 7 && fj >= 0 && fj < 7 ? want[(c * 7 + fi) * 7 + fj]! : bias[c]!;
          expect(Math.abs(got[(c * 8 + i) * 9 + j]! - expected)).toBeLessThanOrEqual(1e-5 + 1e-5 * Math.abs(expected));
        }
      }
    }
  });
});

describe('ONNX MaxPool / AveragePool against onnxruntime', () => {
  const rng = new Random(403);
  const maxCases: Array<[string, number[], OrtAttributes]> = [
    ['2x2 stride 2', [2, 3, 6, 6], { kernel_shape: [2, 2], strides: [2, 2] }],
    ['3x3 stride 2 pads 1', [1, 2, 7, 7], { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }],
    ['ceil_mode', [1, 2, 7, 6], { kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1 }],
    ['ceil_mode with pads (last window dropped)', [1, 1, 6, 6], { kernel_shape: [2, 2], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1 }],
    ['dilations', [1, 2, 8, 8], { kernel_shape: [2, 3], dilations: [2, 2], strides: [1, 2] }],
    ['asymmetric pads', [1, 2, 5, 5], { kernel_shape: [3, 3], pads: [0, 1, 2, 1] }],
    ['pads larger than half the kernel', [1, 1, 4, 4], { kernel_shape: [2, 2], pads: [1, 1, 1, 1] }],
    ['SAME_UPPER stride 2', [1, 2, 5, 6], { kernel_shape: [3, 2], strides: [2, 2], auto_pad: 'SAME_UPPER' }],
    ['SAME_LOWER', [1, 2, 5, 6], { kernel_shape: [2, 2], auto_pad: 'SAME_LOWER' }],
    ['1-D', [2, 3, 9], { kernel_shape: [3], strides: [2], pads: [1, 1] }],
    ['3-D', [1, 2, 4, 5, 6], { kernel_shape: [2, 2, 3], strides: [2, 1, 2] }],
  ];
  it.each(maxCases)('MaxPool %s', async (_label, shape, attributes) => {
    const x = rng.tensor(shape);
    for (const opset of [13, 21]) await expectOnnxMatchesOrt({ opType: 'MaxPool', inputs: [x], attributes, opset });
  });

  it.each(maxCases.filter(([, shape]) => shape.length === 4))('MaxPool %s with the Indices output', async (_label, shape, attributes) => {
    await expectOnnxMatchesOrt({ opType: 'MaxPool', inputs: [rng.tensor(shape)], attributes, outputCount: 2, opset: 13 });
  });

  it('MaxPool of int8 and uint8', async () => {
    await expectOnnxMatchesOrt({ opType: 'MaxPool', inputs: [rng.intTensor([1, 2, 4, 4], -100, 100, 'int8')], attributes: { kernel_shape: [2, 2] }, opset: 13 });
    await expectOnnxMatchesOrt({ opType: 'MaxPool', inputs: [rng.intTensor([1, 2, 4, 4], 0, 200, 'uint8')], attributes: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] }, opset: 13 });
  });

  const avgCases: Array<[string, number[], OrtAttributes]> = [
    ['2x2 stride 2', [2, 3, 6, 6], { kernel_shape: [2, 2], strides: [2, 2] }],
    ['pads, count_include_pad 0', [1, 2, 5, 5], { kernel_shape: [3, 3], pads: [1, 1, 1, 1] }],
    ['pads, count_include_pad 1', [1, 2, 5, 5], { kernel_shape: [3, 3], pads: [1, 1, 1, 1], count_include_pad: 1 }],
    ['ceil_mode', [1, 2, 7, 6], { kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1 }],
    ['ceil_mode, pads, count_include_pad 1', [1, 1, 6, 7], { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1, count_include_pad: 1 }],
    ['asymmetric pads', [1, 2, 5, 5], { kernel_shape: [3, 3], pads: [0, 1, 2, 1] }],
    ['asymmetric pads, count_include_pad 1', [1, 2, 5, 5], { kernel_shape: [3, 3], pads: [0, 1, 2, 1], count_include_pad: 1 }],
    ['SAME_UPPER stride 2', [1, 2, 5, 6], { kernel_shape: [3, 2], strides: [2, 2], auto_pad: 'SAME_UPPER' }],
    ['SAME_LOWER', [1, 2, 5, 6], { kernel_shape: [2, 2], auto_pad: 'SAME_LOWER' }],
    ['1-D', [2, 3, 9], { kernel_shape: [3], strides: [2], pads: [1, 1] }],
    ['3-D', [1, 2, 4, 5, 6], { kernel_shape: [2, 2, 3], strides: [2, 1, 2] }],
  ];
  it.each(avgCases)('AveragePool %s', async (_label, shape, attributes) => {
    const x = rng.tensor(shape);
    for (const opset of [13, 21]) await expectOnnxMatchesOrt({ opType: 'AveragePool', inputs: [x], attributes, opset });
  });

  it('MaxPool storage_order=1 with Indices: column-major indices, as onnxruntime gives them', async () => {
    const x = rng.tensor([1, 1, 6, 6]);
    await expectOnnxMatchesOrt({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [2, 2], storage_order: 1 }, outputCount: 2, opset: 13 });
  });

  it('rejects a MaxPool without kernel_shape as E_BAD_MODEL', () => {
    const model = buildSingleOpModel({ opType: 'MaxPool', inputs: [rng.tensor([1, 1, 4, 4])], opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('kernel_shape') }));
  });

  it.each([[[2, 3, 5]], [[2, 3, 4, 5]], [[1, 2, 3, 4, 5]], [[2, 3, 1, 1]]])('GlobalAveragePool and GlobalMaxPool on %j', async (shape) => {
    const x = rng.tensor(shape);
    await expectOnnxMatchesOrt({ opType: 'GlobalAveragePool', inputs: [x], opset: 13 });
    await expectOnnxMatchesOrt({ opType: 'GlobalMaxPool', inputs: [x], opset: 13 });
  });
});

describe('ATen convolution and pooling on hand-derived values', () => {
  const x = f32([1, 1, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);

  it('conv2d on an unbatched input, with bias and padding', () => {
    const w = f32([1, 1, 2, 2], [1, 0, 0, 1]);
    const b = f32([1], [10]);
    const [y] = run('aten.conv2d.default', [f32([1, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]), w, b], ([input, weight, bias]) => ({ input, weight, bias }));
    expect(y!.shape).toEqual([1, 2, 2]);
    expectValues(y!, [16, 18, 22, 24]);
    const [p] = run('aten.conv2d.padding', [x, w], ([input, weight]) => ({ input, weight, padding: 'same' }));
    expect(p!.shape).toEqual([1, 1, 3, 3]);
    expectValues(p!, [6, 8, 3, 12, 14, 6, 7, 8, 9]);
  });

  it('conv_transpose2d scatters each input pixel times the kernel', () => {
    const input = f32([1, 1, 2, 2], [1, 2, 3, 4]);
    const w = f32([1, 1, 2, 2], [1, 1, 1, 1]);
    const [y] = run('aten.conv_transpose2d.input', [input, w], ([i, weight]) => ({ input: i, weight, stride: 2 }));
    expect(y!.shape).toEqual([1, 1, 4, 4]);
    expectValues(y!, [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
    const [z] = run('aten.convolution.default', [input, w], ([i, weight]) =>
      convolutionArgs({ input: i!, weight: weight!, stride: [1, 1], padding: [0, 0], transposed: true }),
    );
    expectValues(z!, [1, 3, 2, 4, 10, 6, 3, 7, 4]);
  });

  it('max_pool2d_with_indices gives flat indices within each plane', () => {
    const [v, i] = run('aten.max_pool2d_with_indices.default', [x], ([self]) => ({ self, kernel_size: [2, 2], stride: [1, 1] }));
    expectValues(v!, [5, 6, 8, 9]);
    expect(i!.dtype).toBe('int64');
    expect(i!.toArray()).toEqual([4, 5, 7, 8]);
    const [c] = run('aten.max_pool2d.default', [x], ([self]) => ({ self, kernel_size: 2, ceil_mode: true }));
    expect(c!.shape).toEqual([1, 1, 2, 2]);
    expectValues(c!, [5, 6, 8, 9]);
  });

  it('avg_pool2d with count_include_pad and divisor_override; avg_pool1d', () => {
    const [a] = run('aten.avg_pool2d.default', [x], ([self]) => ({ self, kernel_size: [2, 2], stride: [2, 2], padding: [1, 1] }));
    expectValues(a!, [1 / 4, 5 / 4, 11 / 4, 28 / 4]);
    const [b] = run('aten.avg_pool2d.default', [x], ([self]) => ({ self, kernel_size: [2, 2], stride: [2, 2], padding: [1, 1], count_include_pad: false }));
    expectValues(b!, [1, 2.5, 5.5, 7]);
    const [c] = run('aten.avg_pool2d.default', [x], ([self]) => ({ self, kernel_size: [2, 2], stride: [1, 1], divisor_override: 2 }));
    expectValues(c!, [6, 8, 12, 14]);
    const [d] = run('aten.avg_pool1d.default', [f32([1, 4], [1, 2, 3, 6])], ([self]) => ({ self, kernel_size: [2] }));
    expectValues(d!, [1.5, 4.5]);
  });

  it('adaptive pools (PyTorch windows floor(i*In/Out) to ceil((i+1)*In/Out))', () => {
    const [a] = run('aten.adaptive_avg_pool2d.default', [x], ([self]) => ({ self, output_size: [2, 2] }));
    expectValues(a!, [3, 4, 6, 7]);
    const [b] = run('aten._adaptive_avg_pool2d.default', [x], ([self]) => ({ self, output_size: [1, 1] }));
    expectValues(b!, [5]);
    const [m, i] = run('aten.adaptive_max_pool2d.default', [x], ([self]) => ({ self, output_size: [2, 1] }));
    expectValues(m!, [6, 9]);
    expect(i!.toArray()).toEqual([5, 8]);
    const [c] = run('aten.adaptive_avg_pool1d.default', [f32([1, 5], [1, 2, 3, 4, 5])], ([self]) => ({ self, output_size: [2] }));
    expectValues(c!, [2, 4]);
  });

  it('max_pool1d and max_pool3d', () => {
    const [a] = run('aten.max_pool1d.default', [f32([1, 5], [1, 5, 2, 4, 3])], ([self]) => ({ self, kernel_size: [2], stride: [1] }));
    expectValues(a!, [5, 5, 4, 4]);
    const [b] = run('aten.max_pool3d.default', [f32([1, 2, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8])], ([self]) => ({ self, kernel_size: [2, 2, 2] }));
    expect(b!.shape).toEqual([1, 1, 1, 1]);
    expectValues(b!, [8]);
  });

  it('rejects pooling padding beyond half the kernel (as PyTorch) as E_BAD_MODEL', () => {
    const g = new Graph();
    const v = g.addInput('x', tensorType('float32', [1, 1, 4, 4]));
    expect(() => call(g, 'aten.max_pool2d.default', { self: v, kernel_size: [2, 2], padding: [2, 2] }, { name: 'pool1' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('pool1') }),
    );
  });
});

describe('symbolic inference of convolution and pooling', () => {
  function graph(): Graph {
    const g = new Graph();
    for (const s of ['s0', 's1', 's2']) g.symbols.set(s, { min: 1, max: 1024 });
    return g;
  }

  it('conv keeps a symbolic batch and computes the spatial size', () => {
    const g = graph();
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 3, 32, 30]));
    const w = g.addConstant('w', new Tensor('float32', [8, 3, 3, 3]));
    const y = call(g, 'aten.convolution.default', convolutionArgs({ input: x, weight: w, stride: [2, 2], padding: [1, 1] })).output;
    expect(formatShape(y.tensorType.shape)).toBe('[s0, 8, 16, 15]');
    g.setOutputs([y]);
    const [out] = interpret(g, [new Random(404).tensor([2, 3, 32, 30])]);
    expect(out!.shape).toEqual([2, 8, 16, 15]);
  });

  it('conv and pools of symbolic spatial dims are exact expressions', () => {
    const g = graph();
    const x = g.addInput('x', tensorType('float32', [1, 3, sym('s1'), sym('s2')]));
    const w = g.addConstant('w', new Tensor('float32', [4, 3, 3, 3]));
    const conv = call(g, 'aten.conv2d.default', { input: x, weight: w, stride: [2, 2], padding: [1, 1] }).output;
    expect(formatShape(conv.tensorType.shape)).toBe('[1, 4, (s1-1)//2+1, (s2-1)//2+1]');
    const same = call(g, 'aten.conv2d.default', { input: x, weight: w, padding: [1, 1] }).output;
    expect(formatShape(same.tensorType.shape)).toBe('[1, 4, s1, s2]');
    const tconv = call(g, 'aten.conv_transpose2d.input', { input: x, weight: g.addConstant('wt', new Tensor('float32', [3, 2, 4, 4])), stride: 2, padding: 1 }).output;
    expect(formatShape(tconv.tensorType.shape)).toBe('[1, 2, s1*2, s2*2]');
    const pool = call(g, 'aten.max_pool2d.default', { self: x, kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], ceil_mode: true }).output;
    expect(formatShape(pool.tensorType.shape)).toBe('[1, 3, s1//2+1, s2//2+1]');
    const pool2 = call(g, 'aten.max_pool2d.default', { self: x, kernel_size: [2, 2], stride: [3, 3], ceil_mode: true }).output;
    expect(formatShape(pool2.tensorType.shape)).toBe('[1, 3, min(s1//3+1, (s1-1)//3+1), min(s2//3+1, (s2-1)//3+1)]');
    g.setOutputs([conv, tconv, pool, pool2]);
    const outs = interpret(g, [new Random(405).tensor([1, 3, 9, 8])]);
    expect(outs.map((t) => t.shape)).toEqual([
      [1, 4, 5, 4],
      [1, 2, 18, 16],
      [1, 3, 5, 5],
      [1, 3, 3, 3],
    ]);
  });

  it('an ONNX Conv with a symbolic batch imports with an exact shape', () => {
    const rng = new Random(406);
    const model = buildSingleOpModel({ opType: 'Conv', inputs: [rng.tensor([2, 3, 8, 8]), { constant: rng.tensor([5, 3, 3, 3]) }], attributes: { strides: [2, 2] }, opset: 13 });
    // Rename the batch dim into a symbol by editing the decoded model's input.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { onnx } = require('onnx-proto');
    const decoded = onnx.ModelProto.decode(model);
    decoded.graph.input[0].type.tensorType.shape.dim[0] = { dimParam: 'batch' };
    const g = loadOnnx(onnx.ModelProto.encode(decoded).finish());
    expect(formatShape(g.outputs[0]!.tensorType.shape)).toBe('[batch, 5, 3, 3]');
  });
});
