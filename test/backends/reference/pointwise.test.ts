/**
 * Reference backend: elementwise, unary, activation, cast and select layers against
 * onnxruntime where ONNX has the same semantics, else against TensorRT's documented formulas.
 */
import { InternalError } from '../../../lib/errors';
import type { ActivationType, ElementWiseOp, LayerParams, UnaryOp } from '../../../lib/network';
import { Network } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor } from '../../helpers/compare';
import { floatAttr, runOrtGraph, runOrtOp1, type OrtAttributes } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';
import { runLayer1 } from './helpers';

const rng = new Random(2024);

describe('elementwise', () => {
  const a = rng.tensor([2, 3, 4], 'float32', -2, 2);
  const b = rng.tensor([1, 3, 1], 'float32', 0.5, 2);
  const cases: Array<[ElementWiseOp, string]> = [
    ['sum', 'Add'],
    ['prod', 'Mul'],
    ['max', 'Max'],
    ['min', 'Min'],
    ['sub', 'Sub'],
    ['div', 'Div'],
    ['equal', 'Equal'],
    ['greater', 'Greater'],
    ['less', 'Less'],
  ];
  it.each(cases)('%s matches ONNX %s with equal-rank broadcasting', async (op, onnx) => {
    const actual = await runLayer1({ kind: 'elementwise', op }, [a, b]);
    expectClose(actual, await runOrtOp1({ opType: onnx, inputs: [a, b] }));
  });

  it('pow matches ONNX Pow', async () => {
    const base = rng.tensor([2, 3, 4], 'float32', 0.1, 3);
    expectClose(await runLayer1({ kind: 'elementwise', op: 'pow' }, [base, b]), await runOrtOp1({ opType: 'Pow', inputs: [base, b] }));
  });

  it.each([
    ['and', 'And'],
    ['or', 'Or'],
    ['xor', 'Xor'],
  ] as Array<[ElementWiseOp, string]>)('%s matches ONNX %s on bool', async (op, onnx) => {
    const x = Tensor.from('bool', [2, 4], [1, 1, 0, 0, 1, 0, 1, 0]);
    const y = Tensor.from('bool', [1, 4], [1, 0, 1, 0]);
    expectExact(await runLayer1({ kind: 'elementwise', op }, [x, y]), await runOrtOp1({ opType: onnx, inputs: [x, y] }));
  });

  it('integer div truncates toward zero as ONNX Div does; floor_div floors', async () => {
    const x = Tensor.from('int32', [6], [-7, 7, -7, 7, 9, -1]);
    const y = Tensor.from('int32', [6], [2, 2, -2, -2, 3, 5]);
    const div = await runLayer1({ kind: 'elementwise', op: 'div' }, [x, y]);
    expectExact(div, await runOrtOp1({ opType: 'Div', inputs: [x, y] }));
    expectTensor(div, 'int32', [6], [-3, 3, 3, -3, 3, 0]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'floor_div' }, [x, y]), 'int32', [6], [-4, 3, 3, -4, 3, -1]);
    const f = Tensor.from('float32', [3], [-7, 7.5, -0.5]);
    const g = Tensor.from('float32', [3], [2, 2, 4]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'floor_div' }, [f, g]), 'float32', [3], [-4, 3, -1]);
  });

  it('integer division by zero gives 0 instead of failing (TensorRT leaves it undefined)', async () => {
    const x = Tensor.from('int64', [3], [5, -5, 0]);
    const y = Tensor.from('int64', [3], [0, 0, 0]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'div' }, [x, y]), 'int64', [3], [0, 0, 0]);
  });

  it('int32 sum, max and equal keep the TensorRT types', async () => {
    const x = Tensor.from('int32', [1, 3], [1, -2, 3]);
    const y = Tensor.from('int32', [2, 1], [10, -10]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'sum' }, [x, y]), 'int32', [2, 3], [11, 8, 13, -9, -12, -7]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'max' }, [x, y]), 'int32', [2, 3], [10, 10, 10, 1, -2, 3]);
    expectTensor(await runLayer1({ kind: 'elementwise', op: 'equal' }, [x, x]), 'bool', [1, 3], [1, 1, 1]);
  });

  it('refuses inputs of different ranks (TensorRT does not broadcast ranks)', () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [2, 3]);
    const y = net.addInput('y', 'float32', [3]);
    expect(() => net.add1({ kind: 'elementwise', op: 'sum' }, [x, y], 'add')).toThrow(InternalError);
  });
});

describe('unary', () => {
  const X = Tensor.from('float32', [2, 5], [-3.5, -1, -0.25, 0, 0.3, 1, 2.5, 6, -0.7, 0.9]);
  const POSITIVE = Tensor.from('float32', [2, 3], [0.01, 0.5, 1, 2, 10, 1000]);
  const UNIT = Tensor.from('float32', [5], [-0.9, -0.5, 0, 0.3, 0.99]);
  const GE1 = Tensor.from('float32', [4], [1, 1.5, 3, 40]);
  const cases: Array<[UnaryOp, string, Tensor]> = [
    ['exp', 'Exp', X],
    ['log', 'Log', POSITIVE],
    ['sqrt', 'Sqrt', POSITIVE],
    ['recip', 'Reciprocal', POSITIVE],
    ['abs', 'Abs', X],
    ['neg', 'Neg', X],
    ['sin', 'Sin', X],
    ['cos', 'Cos', X],
    ['tan', 'Tan', X],
    ['sinh', 'Sinh', X],
    ['cosh', 'Cosh', X],
    ['asin', 'Asin', UNIT],
    ['acos', 'Acos', UNIT],
    ['atan', 'Atan', X],
    ['asinh', 'Asinh', X],
    ['acosh', 'Acosh', GE1],
    ['atanh', 'Atanh', UNIT],
    ['ceil', 'Ceil', X],
    ['floor', 'Floor', X],
    ['erf', 'Erf', X],
    ['sign', 'Sign', X],
  ];
  it.each(cases)('%s matches ONNX %s', async (op, onnx, x) => {
    expectClose(await runLayer1({ kind: 'unary', op }, [x]), await runOrtOp1({ opType: onnx, inputs: [x] }));
  });

  it('round is half to even (ONNX Round)', async () => {
    const t = Tensor.from('float32', [10], [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 2.51, -3.7, 7]);
    const actual = await runLayer1({ kind: 'unary', op: 'round' }, [t]);
    expectExact(actual, await runOrtOp1({ opType: 'Round', inputs: [t] }));
    expectTensor(actual, 'float32', [10], [0, 2, 2, -0, -2, -2, 0, 3, -4, 7]);
  });

  it('not, isinf and isnan give bool (ONNX Not, IsInf, IsNaN)', async () => {
    const b = Tensor.from('bool', [3], [1, 0, 1]);
    expectExact(await runLayer1({ kind: 'unary', op: 'not' }, [b]), await runOrtOp1({ opType: 'Not', inputs: [b] }));
    const special = Tensor.from('float32', [5], [Infinity, -Infinity, NaN, 0, 1e38]);
    expectExact(await runLayer1({ kind: 'unary', op: 'isinf' }, [special]), await runOrtOp1({ opType: 'IsInf', inputs: [special] }));
    expectExact(await runLayer1({ kind: 'unary', op: 'isnan' }, [special]), await runOrtOp1({ opType: 'IsNaN', inputs: [special] }));
  });

  it('abs, neg and sign keep int32', async () => {
    const i = Tensor.from('int32', [4], [-5, 0, 3, -1]);
    for (const [op, onnx] of [
      ['abs', 'Abs'],
      ['neg', 'Neg'],
      ['sign', 'Sign'],
    ] as Array<[UnaryOp, string]>) {
      expectExact(await runLayer1({ kind: 'unary', op }, [i]), await runOrtOp1({ opType: onnx, inputs: [i] }), op);
    }
  });

  it('float16 stays float16', async () => {
    const h = rng.tensor([6], 'float16', -2, 2);
    expectClose(await runLayer1({ kind: 'unary', op: 'exp' }, [h]), await runOrtOp1({ opType: 'Exp', inputs: [h] }), { rtol: 1e-3, atol: 1e-3 });
  });
});

describe('activation (TensorRT ActivationType formulas)', () => {
  const X = Tensor.from('float32', [2, 6], [-30, -3.5, -1, -0.25, 0, 0.3, 0.5, 1, 2.5, 6, 25, -0.7]);
  const act = (type: ActivationType, alpha?: number, beta?: number): LayerParams => ({ kind: 'activation', type, alpha, beta });
  const cases: Array<[string, LayerParams, string, OrtAttributes]> = [
    ['relu', act('relu'), 'Relu', {}],
    ['sigmoid', act('sigmoid'), 'Sigmoid', {}],
    ['tanh', act('tanh'), 'Tanh', {}],
    ['leaky_relu alpha 0.1', act('leaky_relu', 0.1), 'LeakyRelu', { alpha: floatAttr(0.1) }],
    ['elu alpha 0.7', act('elu', 0.7), 'Elu', { alpha: floatAttr(0.7) }],
    ['selu alpha, beta = gamma', act('selu', 1.6732632, 1.0507009), 'Selu', { alpha: floatAttr(1.6732632), gamma: floatAttr(1.0507009) }],
    ['softsign', act('softsign'), 'Softsign', {}],
    ['softplus alpha 1 beta 1', act('softplus', 1, 1), 'Softplus', {}],
    ['hard_sigmoid alpha 0.2 beta 0.5', act('hard_sigmoid', 0.2, 0.5), 'HardSigmoid', { alpha: floatAttr(0.2), beta: floatAttr(0.5) }],
    ['thresholded_relu alpha 0.4', act('thresholded_relu', 0.4), 'ThresholdedRelu', { alpha: floatAttr(0.4) }],
  ];
  it.each(cases)('%s matches ONNX', async (_name, params, onnx, attributes) => {
    expectClose(await runLayer1(params, [X]), await runOrtOp1({ opType: onnx, inputs: [X], attributes }));
  });

  it('gelu_erf and gelu_tanh match ONNX Gelu (opset 20)', async () => {
    expectClose(await runLayer1(act('gelu_erf'), [X]), await runOrtOp1({ opType: 'Gelu', inputs: [X], opset: 20 }));
    expectClose(await runLayer1(act('gelu_tanh'), [X]), await runOrtOp1({ opType: 'Gelu', inputs: [X], attributes: { approximate: 'tanh' }, opset: 20 }));
  });

  it('clip is max(alpha, min(beta, x)) (ONNX Clip)', async () => {
    const expected = await runOrtOp1({ opType: 'Clip', inputs: [X, { constant: Tensor.scalar('float32', -0.5) }, { constant: Tensor.scalar('float32', 2) }] });
    expectClose(await runLayer1(act('clip', -0.5, 2), [X]), expected);
  });

  it('softplus is alpha·log(exp(beta·x) + 1) and scaled_tanh alpha·tanh(beta·x) (ONNX graphs)', async () => {
    const alpha = Tensor.from('float32', [1, 1], [1.5]);
    const beta = Tensor.from('float32', [1, 1], [0.75]);
    const [softplus, scaledTanh] = await runOrtGraph({
      nodes: [
        { opType: 'Mul', inputs: ['x', 'beta'], outputs: ['bx'] },
        { opType: 'Softplus', inputs: ['bx'], outputs: ['sp'] },
        { opType: 'Mul', inputs: ['sp', 'alpha'], outputs: ['softplus'] },
        { opType: 'Tanh', inputs: ['bx'], outputs: ['th'] },
        { opType: 'Mul', inputs: ['th', 'alpha'], outputs: ['scaled_tanh'] },
      ],
      inputs: { x: X, alpha, beta },
      outputs: ['softplus', 'scaled_tanh'],
    });
    expectClose(await runLayer1(act('softplus', 1.5, 0.75), [X]), softplus!);
    expectClose(await runLayer1(act('scaled_tanh', 1.5, 0.75), [X]), scaledTanh!);
  });

  it('hand-checked TensorRT corner cases: leaky_relu at 0, selu with beta, thresholded_relu at alpha, unset alpha is 0', async () => {
    const x = Tensor.from('float32', [4], [-2, 0, 0.5, 3]);
    expectTensor(await runLayer1(act('leaky_relu', 0.5), [x]), 'float32', [4], [-1, 0, 0.5, 3]);
    const selu = await runLayer1(act('selu', 2, 3), [x]);
    expectClose(selu, Tensor.from('float32', [4], [3 * (2 * Math.exp(-2) - 2), 0, 1.5, 9]));
    expectTensor(await runLayer1(act('thresholded_relu', 0.5), [x]), 'float32', [4], [0, 0, 0, 3]);
    expectTensor(await runLayer1(act('leaky_relu'), [x]), 'float32', [4], [-0, 0, 0.5, 3]);
    expectTensor(await runLayer1(act('clip', 1, -1), [x]), 'float32', [4], [1, 1, 1, 1]);
  });

  it('relu takes int32', async () => {
    expectTensor(await runLayer1(act('relu'), [Tensor.from('int32', [3], [-4, 0, 7])]), 'int32', [3], [0, 0, 7]);
  });
});

describe('cast', () => {
  it.each([
    ['float32', 'int32', Tensor.from('float32', [6], [1.2, -1.7, 2.5, -0.5, 100.9, 5.6])],
    ['float32', 'bool', Tensor.from('float32', [4], [0, -0, 0.1, -3])],
    ['bool', 'float32', Tensor.from('bool', [3], [1, 0, 1])],
    ['int32', 'float16', Tensor.from('int32', [3], [-7, 0, 2049])],
    ['int64', 'int32', Tensor.from('int64', [3], [-7, 0, 123456789])],
    ['float16', 'float32', Tensor.from('float16', [3], [0.1, -2.5, 65504])],
    ['int32', 'int64', Tensor.from('int32', [2], [-2147483648, 2147483647])],
  ] as const)('%s → %s matches ONNX Cast', async (_from, to, x) => {
    const onnxTo = { float32: 1, int32: 6, bool: 9, float16: 10, int64: 7 }[to];
    expectExact(await runLayer1({ kind: 'cast', to }, [x]), await runOrtOp1({ opType: 'Cast', inputs: [x], attributes: { to: onnxTo } }));
  });

  it('float → int truncates toward zero (TensorRT Cast example: 5.6 → 5)', async () => {
    const x = Tensor.from('float32', [4], [5.6, -5.6, 8.9, -0.9]);
    expectTensor(await runLayer1({ kind: 'cast', to: 'int64' }, [x]), 'int64', [4], [5, -5, 8, 0]);
  });
});

describe('select', () => {
  it('matches ONNX Where with equal-rank broadcasting', async () => {
    const c = Tensor.from('bool', [2, 1, 3], [1, 0, 1, 0, 0, 1]);
    const x = rng.tensor([1, 4, 3]);
    const y = rng.tensor([2, 4, 1]);
    expectExact(await runLayer1({ kind: 'select' }, [c, x, y]), await runOrtOp1({ opType: 'Where', inputs: [c, x, y] }));
  });
});
