/**
 * Corners of lib/lowering/complex/rules.ts that its mutation run left untested: the names and
 * metadata of the nodes a rule makes (`<node>_<role>`, so that every node of a lowered program
 * can be traced to the complex op it came from), complex × real matmuls, comparisons whose
 * result depends on the precision they run in, a Scalar `True` operand, negative flatten dims,
 * and the refusal of division with a rounding mode. Numerics: the lowered graph run by the
 * interpreter on carriers against the original graph run on complex inputs.
 */
import '../../../lib/ir/ops';
import { Graph, tensorType } from '../../../lib/ir/graph';
import type { DType } from '../../../lib/ir/dtype';
import { interpret } from '../../../lib/interpreter';
import { lowerComplex } from '../../../lib/lowering/complex';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { Random } from '../../helpers/random';
import { builder, carrierOf, copyGraph } from './helpers';

const rng = new Random(14006);
const values = (dtype: DType, shape: number[]): Tensor => {
  const n = shape.reduce((a, d) => a * d, 1) * (dtype.startsWith('complex') ? 2 : 1);
  return Tensor.from(dtype, shape, dtype === 'bool' ? Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0)) : rng.floats(n, -2, 2));
};

/** Lowers a copy of `g` and checks it against `g` on `inputs`; returns the lowered graph. */
function lowerAndCompare(g: Graph, inputs: Tensor[], settings: Parameters<typeof lowerComplex>[1] = {}): Graph {
  const expected = interpret(g, inputs);
  const lowered = copyGraph(g);
  lowerComplex(lowered, settings);
  interpret(lowered, inputs.map(carrierOf)).forEach((t, i) => expectClose(t, carrierOf(expected[i]!), FP32, `output ${i} (${g.outputs[i]!.name})`));
  return lowered;
}

/** name=target (constants: name=constant) of every node but the inputs. */
const made = (g: Graph): string[] => g.nodes.filter((n) => n.kind !== 'placeholder').map((n) => `${n.name}=${n.target}`);

test('the nodes a rule makes are named <node>_<role> and keep the metadata of the op they replace', () => {
  const g = new Graph('names');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const y = g.addInput('y', tensorType('complex64', [3, 2]));
  const r = g.addInput('r', tensorType('float64', [2, 3]));
  const m = g.addInput('m', tensorType('bool', [2, 3]));
  g.setOutputs([
    op('aten.add.Tensor', { self: z, other: r, alpha: 1 }, 'addr'),
    op('aten.add.Scalar', { self: z, other: 2, alpha: 1 }, 'adds'),
    op('aten.mul.Tensor', { self: z, other: r }, 'mulr'),
    op('aten.real.default', { self: z }, 're'),
    op('aten._conj.default', { self: z }, 'cj'),
    op('aten.div.Tensor', { self: z, other: op('aten.add.Scalar', { self: z, other: 3, alpha: 1 }, 'den') }, 'dv'),
    op('aten.tril.default', { self: z, diagonal: 0 }, 'tl'),
    op('aten.eq.Scalar', { self: z, other: 0.5 }, 'eqs'),
    op('aten.where.ScalarOther', { condition: m, self: z, other: 0.5 }, 'wh'),
    op('aten.masked_fill.Scalar', { self: z, mask: m, value: 1 }, 'mf'),
    op('aten.where.ScalarSelf', { condition: m, self: 0.5, other: z }, 'ws'),
    op('aten.masked_fill.Tensor', { self: z, mask: m, value: op('aten.select.int', { self: op('aten.view.default', { self: z, size: [6] }, 'flat'), dim: 0, index: 2 }, 'v') }, 'mt'),
    op('aten._to_copy.default', { self: z, dtype: 'bool' }, 'nz'),
    op('aten.matmul.default', { self: z, other: y }, 'mm'),
    op('aten.polar.default', { abs: op('aten.abs.default', { self: z }, 'ab'), angle: op('aten.angle.default', { self: z }, 'an') }, 'pl'),
    op('aten.flatten.using_ints', { self: z, start_dim: -2, end_dim: -1 }, 'fl'),
  ]);
  for (const n of g.nodes) if (n.kind === 'call') n.meta.where = `model.py:${n.name}`;
  const lowered = lowerAndCompare(g, [values('complex64', [2, 3]), values('complex64', [3, 2]), values('float64', [2, 3]), values('bool', [2, 3])]);
  expect(made(lowered)).toEqual([
    'addr_cast_carrier=aten._to_copy.default', 'addr_real_unsqueeze=aten.unsqueeze.default', 'addr_real_pair=aten.constant_pad_nd.default', 'addr=aten.add.Tensor',
    'adds_scalar=constant', 'adds=aten.add.Tensor',
    'mulr_cast_carrier=aten._to_copy.default', 'mulr_scale=aten.unsqueeze.default', 'mulr=aten.mul.Tensor',
    're=aten.select.int',
    'cj_conj_sign=constant', 'cj=aten.mul.Tensor',
    'den_scalar=constant', 'den=aten.add.Tensor',
    'dv_conj_sign=constant', 'dv_conj=aten.mul.Tensor', 'dv_num=trt.complex_mul', 'dv_sq=aten.mul.Tensor', 'dv_norm2=aten.sum.dim_IntList', 'dv=aten.div.Tensor',
    'tl_pairs_first=aten.permute.default', 'tl_parts=aten.tril.default', 'tl=aten.permute.default',
    'eqs_other_pair=constant', 'eqs_parts=aten.eq.Tensor', 'eqs_re=aten.select.int', 'eqs_im=aten.select.int', 'eqs=aten.logical_and.default',
    'wh_cond=aten.unsqueeze.default', 'wh_other_pair=constant', 'wh=aten.where.self',
    'mf_mask=aten.unsqueeze.default', 'mf_fill=constant', 'mf=aten.where.self',
    'ws_cond=aten.unsqueeze.default', 'ws_self_pair=constant', 'ws=aten.where.self',
    'flat=aten.view.default', 'v=aten.select.int', 'mt_mask=aten.unsqueeze.default', 'mt=aten.where.self',
    'nz_nonzero=aten.ne.Scalar', 'nz_re=aten.select.int', 'nz_im=aten.select.int', 'nz=aten.logical_or.default',
    'mm_re=aten.select.int', 'mm_im=aten.select.int', 'mm_re_1=aten.select.int', 'mm_im_1=aten.select.int',
    'mm_ac=aten.matmul.default', 'mm_bd=aten.matmul.default', 'mm_mm_re=aten.sub.Tensor', 'mm_ad=aten.matmul.default', 'mm_bc=aten.matmul.default', 'mm_mm_im=aten.add.Tensor', 'mm=aten.stack.default',
    'ab_sq=aten.mul.Tensor', 'ab_norm2=aten.sum.dim_IntList', 'ab=aten.sqrt.default',
    'an_im=aten.select.int', 'an_re=aten.select.int', 'an=aten.atan2.default',
    'pl_cos=aten.cos.default', 'pl_re=aten.mul.Tensor', 'pl_sin=aten.sin.default', 'pl_im=aten.mul.Tensor', 'pl=aten.stack.default',
    'fl=aten.flatten.using_ints',
  ]);
  // Every made call says which complex op it came from, and where that op was in the model.
  const original = new Map(g.nodes.map((n) => [n.name, n.target]));
  for (const n of lowered.nodes.filter((x) => x.kind === 'call')) {
    const from = n.name.replace(/_.*$/, '');
    expect([n.name, n.meta.complexFrom, n.meta.where]).toEqual([n.name, original.get(from), `model.py:${from}`]);
  }
});

test('with truncateDouble: casts into and out of float32 carriers are named for what they cast, exp for its parts', () => {
  const g = new Graph('casts');
  const op = builder(g);
  const w = g.addInput('w', tensorType('float64', [2, 3, 2]));
  const z = g.addInput('z', tensorType('complex128', [2, 3]));
  const a = g.addInput('a', tensorType('float64', [2, 3]));
  const r = g.addInput('r', tensorType('float16', [2, 3]));
  g.setOutputs([
    op('aten.view_as_real.default', { self: op('aten.view_as_complex.default', { self: w }, 'vc') }, 'vr'),
    op('aten.polar.default', { abs: a, angle: a }, 'pl'),
    op('aten.add.Tensor', { self: z, other: r, alpha: 1 }, 'addr'),
    op('aten.mul.Tensor', { self: z, other: r }, 'mulr'),
    op('aten.view_as_real.default', { self: op('aten.exp.default', { self: z }, 'ex') }, 'exr'),
    op('aten.abs.default', { self: z }, 'ab'),
  ]);
  const lowered = copyGraph(g);
  lowerComplex(lowered, { truncateDouble: true });
  expect(made(lowered)).toEqual([
    // A rule's last node takes the name of the op it replaces (the casts of view_as_complex and view_as_real here).
    'vc=aten._to_copy.default', 'vr=aten._to_copy.default',
    'pl_cast_abs=aten._to_copy.default', 'pl_cast_angle=aten._to_copy.default', 'pl_cos=aten.cos.default', 'pl_re=aten.mul.Tensor', 'pl_sin=aten.sin.default', 'pl_im=aten.mul.Tensor', 'pl=aten.stack.default',
    'addr_cast_real=aten._to_copy.default', 'addr_real_unsqueeze=aten.unsqueeze.default', 'addr_real_pair=aten.constant_pad_nd.default', 'addr=aten.add.Tensor',
    'mulr_cast_real=aten._to_copy.default', 'mulr_scale=aten.unsqueeze.default', 'mulr=aten.mul.Tensor',
    'ex_re=aten.select.int', 'ex_im=aten.select.int', 'ex_exp_re=aten.exp.default', 'ex_cos=aten.cos.default', 'ex_exp_cos=aten.mul.Tensor', 'ex_sin=aten.sin.default', 'ex_exp_sin=aten.mul.Tensor', 'ex=aten.stack.default', 'exr=aten._to_copy.default',
    'ab_sq=aten.mul.Tensor', 'ab_norm2=aten.sum.dim_IntList', 'ab_1=aten.sqrt.default', 'ab=aten._to_copy.default',
  ]);
});

describe('comparisons run in the precision PyTorch promotes to', () => {
  test('complex64 == 0.1 compares in float32 (0.1 rounds the same way on both sides)', () => {
    const g = new Graph('eq_scalar');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [2, 3]));
    g.setOutputs([op('aten.eq.Scalar', { self: z, other: 0.1 }, 'eq'), op('aten.ne.Scalar', { self: z, other: 0.1 }, 'ne')]);
    const zs = Tensor.from('complex64', [2, 3], [0.1, 0, 0.1, 1, 0.2, 0, 0.1, 0, 0, 0, 0.1, 0]);
    lowerAndCompare(g, [zs]);
    expect(Array.from(interpret(g, [zs])[0]!.toArray(), Boolean)).toEqual([true, false, false, true, false, true]);
  });

  test('a complex128 value == complex64 compares in float64 (a difference below float32 precision counts)', () => {
    const g = new Graph('eq_wide');
    const op = builder(g);
    const b = g.addInput('b', tensorType('complex64', [2, 2]));
    const c = g.addInput('c', tensorType('float32', [2, 2]));
    // complex128 computed inside the graph is carried as float64 without truncateDouble.
    const a = op('aten.add.Scalar', { self: op('aten._to_copy.default', { self: b, dtype: 'complex128' }, 'wide'), other: 1e-10, alpha: 1 }, 'nudged');
    g.setOutputs([op('aten.eq.Tensor', { self: a, other: b }, 'eq'), op('aten.ne.Tensor', { self: b, other: a }, 'ne_wide'), op('aten.ne.Tensor', { self: c, other: b }, 'ne')]);
    const bs = Tensor.from('complex64', [2, 2], [1, 0, 1, 1, 2, 0, 2, 0]);
    const cs = Tensor.from('float32', [2, 2], [1, 0, 2, 3]);
    lowerAndCompare(g, [bs, cs]);
    const [eq, neWide, ne] = interpret(g, [bs, cs]);
    expect([eq, neWide, ne].map((t) => Array.from(t!.toArray(), Boolean))).toEqual([
      [false, false, false, false],
      [true, true, true, true],
      [false, true, false, true],
    ]);
  });
});

test('a Scalar True is the complex number 1', () => {
  const g = new Graph('bool_scalar');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  g.setOutputs([op('aten.add.Scalar', { self: z, other: true, alpha: 1 }, 'add')]);
  const zs = values('complex64', [2, 3]);
  lowerAndCompare(g, [zs]);
  expectClose(carrierOf(interpret(g, [zs])[0]!), Tensor.from('float32', [2, 3, 2], Array.from(zs.data as Float32Array, (v, i) => (i % 2 === 0 ? v + 1 : v))), FP32, 'z + True');
});

test('division with rounding_mode None is a complex division (a mode itself is refused by shape inference, before lowering)', () => {
  const g = new Graph('div_mode');
  const op = builder(g);
  const z = g.addInput('z', tensorType('complex64', [2, 3]));
  const w = g.addInput('w', tensorType('complex64', [2, 3]));
  g.setOutputs([op('aten.div.Tensor_mode', { self: z, other: w, rounding_mode: null }, 'dv')]);
  const lowered = copyGraph(g);
  lowerComplex(lowered);
  const zs = values('complex64', [2, 3]);
  const ws = values('complex64', [2, 3]);
  const [zd, wd] = [zs.data as Float32Array, ws.data as Float32Array];
  const quotient = Array.from({ length: 6 }, (_, k) => {
    const [a, b, c, d] = [zd[2 * k]!, zd[2 * k + 1]!, wd[2 * k]!, wd[2 * k + 1]!];
    const n = c * c + d * d;
    return [(a * c + b * d) / n, (b * c - a * d) / n];
  }).flat();
  expectClose(interpret(lowered, [carrierOf(zs), carrierOf(ws)])[0]!, Tensor.from('float32', [2, 3, 2], quotient), FP32, 'z / w');
});
