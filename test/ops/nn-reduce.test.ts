/**
 * NN family, reductions: ONNX Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax, CumSum and TopK
 * against onnxruntime; ATen-only overloads against hand-derived values; symbolic shapes.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { formatShape, sym } from '../../lib/ir/symbolic';
import { Tensor } from '../../lib/ir/tensor';
import { expectOnnxMatchesOrt } from '../helpers/onnx-compare';
import { buildSingleOpModel, type OrtOpSpec } from '../helpers/ort-single-op';
import { f32, i64, run } from '../helpers/ops-setup';
import { Random } from '../helpers/random';

describe('ONNX Reduce* against onnxruntime', () => {
  const rng = new Random(101);
  const x = rng.tensor([2, 3, 4]);

  // [axes, keepdims]
  const cases: Array<[number[], number]> = [
    [[1], 1],
    [[1], 0],
    [[-1], 1],
    [[0, -1], 0],
    [[-3, 2], 1],
    [[], 1],
    [[], 0],
  ];

  for (const opType of ['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSumExp', 'ReduceSumSquare']) {
    describe(opType, () => {
      it.each(cases)('axes %j keepdims %i at opset 18 (axes input)', async (axes, keepdims) => {
        await expectOnnxMatchesOrt({
          opType,
          inputs: axes.length ? [x, { constant: i64(axes) }] : [x],
          attributes: { keepdims },
          opset: 18,
        });
      });
      if (opType !== 'ReduceSum') {
        it.each(cases)('axes %j keepdims %i at opset 13 (axes attribute)', async (axes, keepdims) => {
          await expectOnnxMatchesOrt({ opType, inputs: [x], attributes: axes.length ? { axes, keepdims } : { keepdims }, opset: 13 });
        });
      } else {
        it.each(cases)('axes %j keepdims %i at opset 13 (axes input since 13)', async (axes, keepdims) => {
          await expectOnnxMatchesOrt({ opType, inputs: axes.length ? [x, { constant: i64(axes) }] : [x], attributes: { keepdims }, opset: 13 });
        });
      }
      it('noop_with_empty_axes=1 with no axes does not reduce (opset 18)', async () => {
        await expectOnnxMatchesOrt({ opType, inputs: [x], attributes: { noop_with_empty_axes: 1 }, opset: 18 });
      });
    });
  }

  it('ReduceSum keeps int32 (ATen would widen to int64)', async () => {
    const xi = rng.intTensor([3, 4], -50, 50, 'int32');
    const [out] = await expectOnnxMatchesOrt({ opType: 'ReduceSum', inputs: [xi, { constant: i64([1]) }], attributes: { keepdims: 0 }, opset: 13 });
    expect(out!.dtype).toBe('int32');
  });

  it('ReduceMax and ReduceProd of int64 keep the type', async () => {
    const xi = rng.intTensor([2, 5], -5, 5, 'int64');
    await expectOnnxMatchesOrt({ opType: 'ReduceMax', inputs: [xi, { constant: i64([-1]) }], opset: 18 });
    await expectOnnxMatchesOrt({ opType: 'ReduceProd', inputs: [xi], attributes: { axes: [0] }, opset: 13 });
  });

  it('reduces a size-1 dim and a tensor with a zero-size kept dim', async () => {
    await expectOnnxMatchesOrt({ opType: 'ReduceSum', inputs: [rng.tensor([3, 1]), { constant: i64([1]) }], opset: 13 });
    await expectOnnxMatchesOrt({ opType: 'ReduceSum', inputs: [rng.tensor([0, 3]), { constant: i64([1]) }], opset: 13 });
    await expectOnnxMatchesOrt({ opType: 'ReduceMean', inputs: [rng.tensor([0, 3]), { constant: i64([1]) }], attributes: { keepdims: 0 }, opset: 18 });
  });

  it('ReduceMean maps to aten.mean.dim with the axes and keepdim', () => {
    const g = loadOnnx(buildSingleOpModel({ opType: 'ReduceMean', inputs: [x], attributes: { axes: [-1, 0], keepdims: 0 }, opset: 13 }));
    const node = g.calls()[0]!;
    expect(node.target).toBe('aten.mean.dim');
    expect(node.args.dim).toEqual([-1, 0]);
    expect(node.args.keepdim).toBe(false);
  });

  it('rejects an out-of-range axis as E_BAD_MODEL naming the node', () => {
    const model = buildSingleOpModel({ opType: 'ReduceMean', inputs: [x], attributes: { axes: [3] }, opset: 13 });
    expect(() => loadOnnx(model)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "ReduceMean_0"') }));
  });

  it('imports axes computed at run time at run time, with onnxruntime\'s values', async () => {
    const spec: OrtOpSpec = { opType: 'ReduceSum', inputs: [x, i64([1])], opset: 13 };
    expect(loadOnnx(buildSingleOpModel(spec)).nodes.some((n) => n.kind === 'call' && n.target === 'trt.deferred_node')).toBe(true);
    await expectOnnxMatchesOrt(spec);
  });
});

describe('ONNX ArgMax / ArgMin against onnxruntime', () => {
  const rng = new Random(102);
  // Few distinct values so that ties happen.
  const ties = rng.intTensor([3, 4, 5], 0, 2, 'int32');
  const floats = rng.tensor([3, 4, 5]);
  for (const opType of ['ArgMax', 'ArgMin']) {
    it.each([
      [0, 1, 0],
      [1, 0, 0],
      [-1, 1, 0],
      [-1, 0, 1],
      [1, 1, 1],
    ])(`${opType} axis %i keepdims %i select_last_index %i`, async (axis, keepdims, last) => {
      for (const input of [ties, floats]) {
        await expectOnnxMatchesOrt({ opType, inputs: [input], attributes: { axis, keepdims, select_last_index: last }, opset: 13 });
      }
    });
  }
});

describe('ONNX Softmax / LogSoftmax / CumSum against onnxruntime', () => {
  const rng = new Random(103);
  const x = rng.tensor([2, 3, 5], 'float32', -4, 4);
  for (const opType of ['Softmax', 'LogSoftmax']) {
    it.each([[-1], [0], [1], [2]])(`${opType} axis %i`, async (axis) => {
      await expectOnnxMatchesOrt({ opType, inputs: [x], attributes: { axis }, opset: 13 });
    });
    it(`${opType} default axis at opset 21 and a size-1 axis`, async () => {
      await expectOnnxMatchesOrt({ opType, inputs: [x], opset: 21 });
      await expectOnnxMatchesOrt({ opType, inputs: [rng.tensor([4, 1])], attributes: { axis: 1 }, opset: 13 });
    });
  }

  it.each([
    [0, 0, 0],
    [1, 0, 0],
    [-1, 1, 0],
    [1, 0, 1],
    [2, 1, 1],
  ])('CumSum axis %i exclusive %i reverse %i', async (axis, exclusive, reverse) => {
    await expectOnnxMatchesOrt({ opType: 'CumSum', inputs: [x, { constant: i64([axis]) }], attributes: { exclusive, reverse }, opset: 14 });
  });

  it('CumSum keeps int32 and takes a scalar int32 axis', async () => {
    const xi = rng.intTensor([3, 4], -9, 9, 'int32');
    const [out] = await expectOnnxMatchesOrt({ opType: 'CumSum', inputs: [xi, { constant: Tensor.from('int32', [], [1]) }], opset: 13 });
    expect(out!.dtype).toBe('int32');
    await expectOnnxMatchesOrt({ opType: 'CumSum', inputs: [xi, { constant: Tensor.from('int32', [], [0]) }], attributes: { exclusive: 1 }, opset: 13 });
  });
});

describe('ONNX TopK against onnxruntime', () => {
  const rng = new Random(104);
  const x = rng.tensor([3, 6, 4]);
  it.each([
    [2, -1, 1],
    [3, 1, 1],
    [1, 0, 0],
    [6, 1, 0],
    [0, -1, 1],
  ])('k=%i axis %i largest %i', async (k, axis, largest) => {
    await expectOnnxMatchesOrt({ opType: 'TopK', inputs: [x, { constant: i64([k]) }], attributes: { axis, largest }, outputCount: 2, opset: 13 });
  });

  it('breaks ties by the lower index', async () => {
    const xi = rng.intTensor([4, 7], 0, 2, 'int64');
    await expectOnnxMatchesOrt({ opType: 'TopK', inputs: [xi, { constant: i64([4]) }], outputCount: 2, opset: 19 });
    await expectOnnxMatchesOrt({ opType: 'TopK', inputs: [xi, { constant: i64([4]) }], attributes: { largest: 0 }, outputCount: 2, opset: 13 });
  });

  it('imports a K computed at run time at run time, with onnxruntime\'s values', async () => {
    const spec: OrtOpSpec = { opType: 'TopK', inputs: [x, i64([2])], outputCount: 2, opset: 13 };
    expect(loadOnnx(buildSingleOpModel(spec)).nodes.some((n) => n.kind === 'call' && n.target === 'trt.deferred_node')).toBe(true);
    await expectOnnxMatchesOrt(spec);
  });
});

describe('ATen reductions on hand-derived values', () => {
  const x = f32([2, 3], [1, 5, 2, 7, -1, 7]);

  it('max.dim / min.dim give values and first indices', () => {
    const [v, i] = run('aten.max.dim', [x], ([self]) => ({ self, dim: 1 }));
    expect(v!.toArray()).toEqual([5, 7]);
    expect(i!.dtype).toBe('int64');
    expect(i!.toArray()).toEqual([1, 0]);
    const [mv, mi] = run('aten.min.dim', [x], ([self]) => ({ self, dim: 0, keepdim: true }));
    expect(mv!.shape).toEqual([1, 3]);
    expect(mv!.toArray()).toEqual([1, -1, 2]);
    expect(mi!.toArray()).toEqual([0, 1, 0]);
  });

  it('sum.default, mean.default, prod.dim_int, amax over all dims, argmax flattened', () => {
    expect(run('aten.sum.default', [x], ([self]) => ({ self }))[0]!.toArray()).toEqual([21]);
    expect(run('aten.mean.default', [x], ([self]) => ({ self }))[0]!.toArray()).toEqual([3.5]);
    expect(run('aten.prod.dim_int', [x], ([self]) => ({ self, dim: 0 }))[0]!.toArray()).toEqual([7, -5, 14]);
    expect(run('aten.amax.default', [x], ([self]) => ({ self }))[0]!.toArray()).toEqual([7]);
    const [am] = run('aten.argmax.default', [x], ([self]) => ({ self }));
    expect(am!.shape).toEqual([]);
    expect(am!.toArray()).toEqual([3]);
    const [amk] = run('aten.argmin.default', [x], ([self]) => ({ self, keepdim: true }));
    expect(amk!.shape).toEqual([1, 1]);
    expect(amk!.toArray()).toEqual([4]);
  });

  it('sum of int32 is int64 (PyTorch) unless dtype is given; cumsum likewise', () => {
    const xi = Tensor.from('int32', [3], [1, 2, 3]);
    const [s] = run('aten.sum.dim_IntList', [xi], ([self]) => ({ self, dim: [0] }));
    expect(s!.dtype).toBe('int64');
    const [c] = run('aten.cumsum.default', [xi], ([self]) => ({ self, dim: 0 }));
    expect(c!.dtype).toBe('int64');
    expect(c!.toArray()).toEqual([1, 3, 6]);
  });

  it('softmax.int with dtype, _softmax and _log_softmax by hand', () => {
    const v = f32([2], [0, Math.log(3)]);
    const [s] = run('aten.softmax.int', [v], ([self]) => ({ self, dim: 0, dtype: 'float64' }));
    expect(s!.dtype).toBe('float64');
    expect(s!.toArray()[0]).toBeCloseTo(0.25, 7);
    expect(s!.toArray()[1]).toBeCloseTo(0.75, 7);
    const [ls] = run('aten._log_softmax.default', [v], ([self]) => ({ self, dim: -1, half_to_float: false }));
    expect(ls!.toArray()[0]).toBeCloseTo(Math.log(0.25), 6);
  });

  it('logsumexp and linalg_vector_norm by hand', () => {
    const v = f32([2, 2], [0, 0, 3, 4]);
    const [l] = run('aten.logsumexp.default', [v], ([self]) => ({ self, dim: [1] }));
    expect(l!.toArray()[0]).toBeCloseTo(Math.log(2), 6);
    expect(l!.toArray()[1]).toBeCloseTo(Math.log(Math.exp(3) + Math.exp(4)), 5);
    const [n2] = run('aten.linalg_vector_norm.default', [v], ([self]) => ({ self, dim: [1] }));
    expect(n2!.toArray()).toEqual([0, 5]);
    const [ninf] = run('aten.linalg_vector_norm.default', [v], ([self]) => ({ self, ord: Infinity }));
    expect(ninf!.toArray()).toEqual([4]);
    const [n3] = run('aten.linalg_vector_norm.default', [v], ([self]) => ({ self, ord: 3, dim: [1], keepdim: true }));
    expect(n3!.shape).toEqual([2, 1]);
    expect(n3!.toArray()[1]).toBeCloseTo(Math.cbrt(27 + 64), 5);
  });

  it('topk.default by hand: smallest two along dim 0', () => {
    const [v, i] = run('aten.topk.default', [x], ([self]) => ({ self, k: 1, dim: 0, largest: false }));
    expect(v!.toArray()).toEqual([1, -1, 2]);
    expect(i!.toArray()).toEqual([0, 1, 0]);
  });
});

describe('symbolic inference of reductions', () => {
  it('keeps symbolic dims and drops reduced ones', () => {
    const g = new Graph();
    g.symbols.set('s0', { min: 1, max: 64 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 4, 5]));
    expect(formatShape(call(g, 'aten.sum.dim_IntList', { self: x, dim: [1], keepdim: false }).output.tensorType.shape)).toBe('[s0, 5]');
    expect(formatShape(call(g, 'aten.mean.dim', { self: x, dim: [-1], keepdim: true }).output.tensorType.shape)).toBe('[s0, 4, 1]');
    expect(formatShape(call(g, 'aten.amax.default', { self: x, dim: [0] }).output.tensorType.shape)).toBe('[4, 5]');
    const topk = call(g, 'aten.topk.default', { self: x, k: 2, dim: 0 });
    expect(formatShape(topk.outputs[1]!.tensorType.shape)).toBe('[2, 4, 5]');
    expect(topk.outputs[1]!.tensorType.dtype).toBe('int64');
  });

  it('fails with E_BAD_MODEL naming the node for a repeated dim', () => {
    const g = new Graph();
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    expect(() => call(g, 'aten.sum.dim_IntList', { self: x, dim: [1, -1] }, { name: 'my_sum' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('my_sum') }),
    );
  });
});
