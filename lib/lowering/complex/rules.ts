/**
 * The rewrite rules of the complex lowering pass: for each op that reads or produces complex
 * values, how to compute it on real carriers. A complex tensor of shape S travels as a
 * carrier of shape [...S, 2] (real, imaginary: `view_as_real`'s layout), so:
 *
 * - data movement keeps its op with the trailing 2 accounted for: sizes of view/reshape/
 *   expand gain a 2, repeat gains a 1, permute keeps the last axis last, and a negative dim
 *   d becomes d − 1 (slice, select, cat, stack, unsqueeze, flatten, transpose, split,
 *   sum, sym_size...). Non-negative dims are unchanged; NumPy broadcasting still lines up
 *   because the 2 is appended on the right of every operand;
 * - `view_as_complex` and `view_as_real` disappear (a carrier is that layout), `real` and
 *   `imag` select a part, `conj` multiplies by [1, −1], `abs` is √(re² + im²), `angle` is
 *   atan2(im, re), `polar` stacks abs·cos and abs·sin;
 * - complex × complex is `trt.complex_mul`; a real tensor operand of mul/div gets a
 *   trailing 1 (it scales both parts); a real operand of add/sub/cat/where... is padded
 *   with a zero imaginary part; a Scalar adds to the real part only;
 * - division by a complex value is a·conj(b) / |b|² and matmul is four real matmuls.
 *
 * Each rule returns, per node output, the carrier of a complex output or the value that
 * replaces a real output. A rule may refuse a node (`check`), with a reason.
 */
import { InternalError } from '../../errors';
import { call } from '../../ir/builder';
import { isComplex, type DType } from '../../ir/dtype';
import { Value, type Arg, type Graph, type Node } from '../../ir/graph';
import { Tensor } from '../../ir/tensor';
import { isComplexValue } from './detect';

/** What a rule needs from the pass that runs it. */
export interface RewriteEnvironment {
  readonly graph: Graph;
  /** The real dtype carrying a complex dtype (complex64 → float32; complex128 → float64, or float32 with truncateDouble). */
  carrierDType(dtype: DType): DType;
  /** The carrier of a complex value computed earlier. */
  carrierOf(value: Value): Value;
}

/** A rule's access to the node being rewritten, and the builders it composes with. */
export class RuleContext {
  constructor(
    readonly env: RewriteEnvironment,
    readonly node: Node,
  ) {}

  get graph(): Graph {
    return this.env.graph;
  }

  /** The node's argument `name` (null when absent). */
  arg(name: string): Arg {
    return this.node.args[name] ?? null;
  }

  /** The argument `name`, which must be a tensor value. */
  value(name: string): Value {
    const a = this.node.args[name];
    if (!(a instanceof Value)) throw new InternalError(`node ${this.node.name} (${this.node.target}): argument ${name} is not a value`);
    return a;
  }

  /** The rank of the complex (or real) tensor argument `name`, as the original graph types it. */
  rank(name = 'self'): number {
    return this.value(name).tensorType.shape.length;
  }

  /** Output `i` of the original node. */
  out(i = 0): Value {
    return this.node.outputs[i]!;
  }

  /** The carrier dtype of complex output `i` (the dtype a rule computes in). */
  outCarrier(i = 0): DType {
    const d = this.out(i).tensorType.dtype;
    if (!isComplex(d)) throw new InternalError(`node ${this.node.name}: output ${i} is ${d}, not complex`);
    return this.env.carrierDType(d);
  }

  /** Appends a call (placed where the node was), named after the node; returns the node. */
  callNode(target: string, args: Readonly<Record<string, Arg>>, role = ''): Node {
    const where = typeof this.node.meta.where === 'string' ? this.node.meta.where : undefined;
    return call(this.graph, target, args, { name: role ? `${this.node.name}_${role}` : this.node.name, where, meta: { ...this.node.meta, complexFrom: this.node.target } });
  }

  /** callNode for a single-output op: its value. */
  call(target: string, args: Readonly<Record<string, Arg>>, role = ''): Value {
    return this.callNode(target, args, role).output;
  }

  /** `v` cast to `dtype` (itself when it already is). */
  cast(v: Value, dtype: DType, role = 'cast'): Value {
    return v.tensorType.dtype === dtype ? v : this.call('aten._to_copy.default', { self: v, dtype }, role);
  }

  /** A constant of `dtype` and `shape` holding `values`. */
  constant(values: readonly number[], shape: readonly number[], dtype: DType, role: string): Value {
    return this.graph.addConstant(`${this.node.name}_${role}`, Tensor.from(dtype, shape, values));
  }

  /** The carrier of complex value `v`, cast to `dtype` when given. */
  carrier(v: Value, dtype?: DType): Value {
    const c = this.env.carrierOf(v);
    return dtype === undefined ? c : this.cast(c, dtype, 'cast_carrier');
  }

  /** A real tensor as a carrier: a zero imaginary part padded on (exact, no arithmetic). */
  realToPair(t: Value, dtype: DType): Value {
    const x = this.call('aten.unsqueeze.default', { self: this.cast(t, dtype, 'cast_real'), dim: -1 }, 'real_unsqueeze');
    return this.call('aten.constant_pad_nd.default', { self: x, pad: [0, 1], value: 0 }, 'real_pair');
  }

  /**
   * Any operand of a complex op as a carrier of `dtype`: a complex value's carrier, a real
   * tensor padded with a zero imaginary part, a number as a [number, 0] constant.
   */
  pair(a: Arg, dtype: DType, role = 'scalar'): Value {
    if (a instanceof Value) return isComplexValue(a) ? this.carrier(a, dtype) : this.realToPair(a, dtype);
    if (typeof a === 'number' || typeof a === 'boolean') return this.constant([Number(a), 0], [2], dtype, role);
    throw new InternalError(`node ${this.node.name} (${this.node.target}): operand ${JSON.stringify(a)} is not a tensor or a number`);
  }

  /** A real tensor with a trailing 1, so that it scales both parts of a carrier. */
  realScale(t: Value, dtype: DType): Value {
    return this.call('aten.unsqueeze.default', { self: this.cast(t, dtype, 'cast_real'), dim: -1 }, 'scale');
  }

  /** Part 0 (real) or 1 (imaginary) of a carrier. */
  part(carrier: Value, index: 0 | 1): Value {
    return this.call('aten.select.int', { self: carrier, dim: -1, index }, index === 0 ? 're' : 'im');
  }

  /** Two real tensors of one shape as a carrier (stacked on a new last axis). */
  stackParts(re: Value, im: Value): Value {
    return this.call('aten.stack.default', { tensors: [re, im], dim: -1 }, 'pair');
  }

  /** The conjugate of a carrier. */
  conj(carrier: Value): Value {
    const sign = this.constant([1, -1], [2], carrier.tensorType.dtype, 'conj_sign');
    return this.call('aten.mul.Tensor', { self: carrier, other: sign }, 'conj');
  }

  /** |z|² of a carrier, keeping a trailing 1 (so it divides both parts). */
  normSquared(carrier: Value): Value {
    const sq = this.call('aten.mul.Tensor', { self: carrier, other: carrier }, 'sq');
    return this.call('aten.sum.dim_IntList', { self: sq, dim: [-1], keepdim: true, dtype: null }, 'norm2');
  }

  /**
   * The same op on carriers: complex tensor arguments (also inside lists) replaced by their
   * carriers, real ones left, `overrides` applied. Returns all outputs.
   */
  sameOp(overrides: Readonly<Record<string, Arg>> = {}, target = this.node.target): Value[] {
    const swap = (a: Arg): Arg => (a instanceof Value && isComplexValue(a) ? this.carrier(a) : Array.isArray(a) ? a.map(swap) : a);
    const args: Record<string, Arg> = {};
    for (const [k, a] of Object.entries(this.node.args)) args[k] = swap(a);
    return this.callNode(target, { ...args, ...overrides }).outputs;
  }
}

/** A dim of a complex tensor as a dim of its carrier: negative dims count one more from the end. */
export const shiftDim = (d: number): number => (d < 0 ? d - 1 : d);

/** An int or int-list dim argument shifted (lists element-wise). */
function shiftDims(a: Arg): Arg {
  if (typeof a === 'number') return shiftDim(a);
  if (Array.isArray(a)) return a.map((x) => (typeof x === 'number' ? shiftDim(x) : x));
  return a;
}

/** A rule: `check` says why a node cannot be rewritten (null when it can); `build` rewrites it. */
export interface ComplexRule {
  check?: (node: Node) => string | null;
  build: (ctx: RuleContext) => Value[];
}

const isComplexArg = (a: Arg | undefined): boolean => a instanceof Value && isComplexValue(a);

/** The op unchanged on carriers, with the listed int dim arguments shifted. */
const dimsShifted =
  (...names: string[]): ComplexRule['build'] =>
  (ctx) =>
    ctx.sameOp(Object.fromEntries(names.filter((n) => ctx.node.args[n] !== undefined).map((n) => [n, shiftDims(ctx.arg(n))])));

/** A size-list argument with the trailing 2 appended. */
const sizeAppended =
  (name: string): ComplexRule['build'] =>
  (ctx) =>
    ctx.sameOp({ [name]: [...(ctx.arg(name) as Arg[]), 2] });

/** The carrier of `self` cast to the output's carrier dtype (data unchanged). */
const identity: ComplexRule['build'] = (ctx) => [ctx.carrier(ctx.value('self'), ctx.outCarrier())];

/** The real result `v` cast to output `i`'s dtype. */
const asOutput = (ctx: RuleContext, v: Value, i = 0): Value => ctx.cast(v, ctx.out(i).tensorType.dtype, 'cast_out');

/** All dims of a rank-`n` complex tensor as carrier dims (reductions over "everything"). */
const allDims = (n: number): number[] => [...Array(n).keys()];

/** sum/mean over dims of a complex tensor: the same reduction on the carrier, never over its last axis. */
function reduction(target: 'aten.sum.dim_IntList' | 'aten.mean.dim'): ComplexRule['build'] {
  return (ctx) => {
    const self = ctx.value('self');
    const n = ctx.rank();
    const dtype = ctx.outCarrier();
    if (n === 0) return [ctx.carrier(self, dtype)];
    const given = ctx.arg('dim');
    const dims = given === null || (Array.isArray(given) && given.length === 0) ? allDims(n) : shiftDims(given);
    const keepdim = ctx.node.args.keepdim === true;
    return [ctx.call(target, { self: ctx.carrier(self, dtype), dim: dims, keepdim, dtype: null })];
  };
}

/** tril/triu on a carrier: the pair axis moved first (out of the matrix dims), the op, moved back. */
const triangle: ComplexRule['build'] = (ctx) => {
  const n = ctx.rank();
  const front = ctx.call('aten.permute.default', { self: ctx.carrier(ctx.value('self')), dims: [n, ...allDims(n)] }, 'pairs_first');
  const t = ctx.call(ctx.node.target, { self: front, diagonal: ctx.arg('diagonal') }, 'parts');
  return [ctx.call('aten.permute.default', { self: t, dims: [...allDims(n).map((d) => d + 1), 0] })];
};

/** add/sub/rsub of two tensors, either of which may be real: the same op on pairs (alpha kept). */
const linearTensor: ComplexRule['build'] = (ctx) => {
  const dtype = ctx.outCarrier();
  return [ctx.call(ctx.node.target, { self: ctx.pair(ctx.arg('self'), dtype), other: ctx.pair(ctx.arg('other'), dtype), alpha: ctx.arg('alpha') })];
};

/** add/sub/rsub with a Scalar: the Scalar is a [s, 0] pair; `target` is the Tensor overload. */
const linearScalar =
  (target: string): ComplexRule['build'] =>
  (ctx) => {
    const dtype = ctx.outCarrier();
    return [ctx.call(target, { self: ctx.pair(ctx.arg('self'), dtype), other: ctx.pair(ctx.arg('other'), dtype), alpha: ctx.arg('alpha') })];
  };

/** self / other for carriers: by a real tensor, both parts divide; by a complex one, a·conj(b)/|b|². */
function divide(ctx: RuleContext, self: Arg, other: Arg, dtype: DType): Value {
  if (other instanceof Value && !isComplexValue(other)) {
    return ctx.call('aten.div.Tensor', { self: ctx.pair(self, dtype), other: ctx.realScale(other, dtype) });
  }
  if (!(other instanceof Value)) return ctx.call('aten.div.Scalar', { self: ctx.pair(self, dtype), other });
  const b = ctx.carrier(other, dtype);
  const num = ctx.call('trt.complex_mul', { self: ctx.pair(self, dtype), other: ctx.conj(b) }, 'num');
  return ctx.call('aten.div.Tensor', { self: num, other: ctx.normSquared(b) });
}

/** Real and imaginary parts of a matmul operand (null imaginary part for a real operand). */
function matmulParts(ctx: RuleContext, a: Value, dtype: DType): [Value, Value | null] {
  if (!isComplexValue(a)) return [ctx.cast(a, dtype, 'cast_real'), null];
  const c = ctx.carrier(a, dtype);
  return [ctx.part(c, 0), ctx.part(c, 1)];
}

/** (A + Bi)(C + Di) = (AC − BD) + (AD + BC)i with four (or two) real matmuls of `target`. */
const complexMatmul =
  (otherName: string): ComplexRule['build'] =>
  (ctx) => {
    const target = ctx.node.target;
    const dtype = ctx.outCarrier();
    const [a, b] = matmulParts(ctx, ctx.value('self'), dtype);
    const [c, d] = matmulParts(ctx, ctx.value(otherName), dtype);
    const mm = (x: Value, y: Value, role: string): Value => ctx.call(target, { self: x, [otherName]: y }, role);
    const ac = mm(a, c, 'ac');
    let re = ac;
    let im: Value;
    if (b !== null && d !== null) {
      re = ctx.call('aten.sub.Tensor', { self: ac, other: mm(b, d, 'bd'), alpha: 1 }, 'mm_re');
      im = ctx.call('aten.add.Tensor', { self: mm(a, d, 'ad'), other: mm(b, c, 'bc'), alpha: 1 }, 'mm_im');
    } else if (b !== null) im = mm(b, c, 'bc');
    else im = mm(a, d!, 'ad');
    return [ctx.stackParts(re, im)];
  };

/** where(cond, x, y) on carriers: the condition gets a trailing 1, real or Scalar branches become pairs. */
const whereRule: ComplexRule['build'] = (ctx) => {
  const dtype = ctx.outCarrier();
  const cond = ctx.call('aten.unsqueeze.default', { self: ctx.value('condition'), dim: -1 }, 'cond');
  return [ctx.call('aten.where.self', { condition: cond, self: ctx.pair(ctx.arg('self'), dtype, 'self_pair'), other: ctx.pair(ctx.arg('other'), dtype, 'other_pair') })];
};

/** eq/ne: compared part by part; eq needs both parts equal, ne either part different. */
const comparison =
  (op: 'eq' | 'ne'): ComplexRule['build'] =>
  (ctx) => {
    const [x, y] = [ctx.arg('self'), ctx.arg('other')];
    const complexDtype = [x, y].find((a): a is Value => isComplexArg(a))!.tensorType.dtype;
    // Compare in the wider carrier type of the two (complex64 vs complex128 promote).
    const dtype = [x, y].some((a) => a instanceof Value && (a.tensorType.dtype === 'complex128' || a.tensorType.dtype === 'float64'))
      ? ctx.env.carrierDType('complex128')
      : ctx.env.carrierDType(complexDtype);
    const parts = ctx.call(`aten.${op}.Tensor`, { self: ctx.pair(x, dtype, 'self_pair'), other: ctx.pair(y, dtype, 'other_pair') }, 'parts');
    const re = ctx.call('aten.select.int', { self: parts, dim: -1, index: 0 }, 're');
    const im = ctx.call('aten.select.int', { self: parts, dim: -1, index: 1 }, 'im');
    return [ctx.call(op === 'eq' ? 'aten.logical_and.default' : 'aten.logical_or.default', { self: re, other: im })];
  };

/** Casts: complex → complex changes the carrier dtype; complex → real keeps the real part (bool: nonzero); real → complex pads. */
const castRule: ComplexRule['build'] = (ctx) => {
  const self = ctx.value('self');
  const out = ctx.out().tensorType.dtype;
  if (isComplexValue(self) && isComplex(out)) return [ctx.carrier(self, ctx.outCarrier())];
  if (isComplexValue(self)) {
    const c = ctx.carrier(self);
    if (out === 'bool') {
      const nonzero = ctx.call('aten.ne.Scalar', { self: c, other: 0 }, 'nonzero');
      const re = ctx.call('aten.select.int', { self: nonzero, dim: -1, index: 0 }, 're');
      const im = ctx.call('aten.select.int', { self: nonzero, dim: -1, index: 1 }, 'im');
      return [ctx.call('aten.logical_or.default', { self: re, other: im })];
    }
    return [asOutput(ctx, ctx.part(c, 0))];
  }
  return [ctx.realToPair(self, ctx.outCarrier())];
};

/**
 * The rule table by op target. Ops not listed here (complex sqrt, log, sin, pow, gather,
 * index_put, fft...) have no rule: the pass lists them in one error, or, when
 * `complexFallback` is set, sends those the CPU interpreter runs on complex values
 * (lib/interpreter/complex-fallback.ts) to fallback segments and refuses the others.
 */
export const COMPLEX_RULES: Readonly<Record<string, ComplexRule>> = {
  // Views between complex and real: a carrier already is view_as_real's layout.
  'aten.view_as_complex.default': { build: (ctx) => [ctx.cast(ctx.value('self'), ctx.outCarrier())] },
  'aten.view_as_real.default': { build: (ctx) => [asOutput(ctx, ctx.carrier(ctx.value('self')))] },

  // Parts, magnitude and phase.
  'aten.real.default': { build: (ctx) => [asOutput(ctx, ctx.part(ctx.carrier(ctx.value('self')), 0))] },
  'aten.imag.default': { build: (ctx) => [asOutput(ctx, ctx.part(ctx.carrier(ctx.value('self')), 1))] },
  'aten.abs.default': {
    build: (ctx) => {
      const c = ctx.carrier(ctx.value('self'));
      const sq = ctx.call('aten.mul.Tensor', { self: c, other: c }, 'sq');
      const sum = ctx.call('aten.sum.dim_IntList', { self: sq, dim: [-1], keepdim: false, dtype: null }, 'norm2');
      return [asOutput(ctx, ctx.call('aten.sqrt.default', { self: sum }))];
    },
  },
  'aten.angle.default': {
    build: (ctx) => {
      const c = ctx.carrier(ctx.value('self'));
      return [asOutput(ctx, ctx.call('aten.atan2.default', { self: ctx.part(c, 1), other: ctx.part(c, 0) }))];
    },
  },
  'aten._conj.default': { build: (ctx) => [ctx.conj(ctx.carrier(ctx.value('self'), ctx.outCarrier()))] },
  'aten.conj_physical.default': { build: (ctx) => [ctx.conj(ctx.carrier(ctx.value('self'), ctx.outCarrier()))] },
  'aten.polar.default': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const abs = ctx.cast(ctx.value('abs'), dtype, 'cast_abs');
      const angle = ctx.cast(ctx.value('angle'), dtype, 'cast_angle');
      const re = ctx.call('aten.mul.Tensor', { self: abs, other: ctx.call('aten.cos.default', { self: angle }, 'cos') }, 're');
      const im = ctx.call('aten.mul.Tensor', { self: abs, other: ctx.call('aten.sin.default', { self: angle }, 'sin') }, 'im');
      return [ctx.stackParts(re, im)];
    },
  },

  // Arithmetic.
  'aten.mul.Tensor': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const [x, y] = [ctx.value('self'), ctx.value('other')];
      if (isComplexValue(x) && isComplexValue(y)) return [ctx.call('trt.complex_mul', { self: ctx.carrier(x, dtype), other: ctx.carrier(y, dtype) })];
      const [c, r] = isComplexValue(x) ? [x, y] : [y, x];
      return [ctx.call('aten.mul.Tensor', { self: ctx.carrier(c, dtype), other: ctx.realScale(r, dtype) })];
    },
  },
  'aten.mul.Scalar': { build: (ctx) => [ctx.call('aten.mul.Scalar', { self: ctx.carrier(ctx.value('self'), ctx.outCarrier()), other: ctx.arg('other') })] },
  'aten.add.Tensor': { build: linearTensor },
  'aten.sub.Tensor': { build: linearTensor },
  'aten.rsub.Tensor': { build: linearTensor },
  'aten.add.Scalar': { build: linearScalar('aten.add.Tensor') },
  'aten.sub.Scalar': { build: linearScalar('aten.sub.Tensor') },
  'aten.rsub.Scalar': { build: linearScalar('aten.rsub.Tensor') },
  'aten.neg.default': { build: (ctx) => [ctx.call('aten.neg.default', { self: ctx.carrier(ctx.value('self'), ctx.outCarrier()) })] },
  'aten.div.Tensor': { build: (ctx) => [divide(ctx, ctx.arg('self'), ctx.arg('other'), ctx.outCarrier())] },
  'aten.div.Scalar': { build: (ctx) => [divide(ctx, ctx.arg('self'), ctx.arg('other'), ctx.outCarrier())] },
  'aten.div.Tensor_mode': {
    check: (node) => (node.args.rounding_mode === null || node.args.rounding_mode === undefined ? null : 'division with a rounding mode is not defined for complex values'),
    build: (ctx) => [divide(ctx, ctx.arg('self'), ctx.arg('other'), ctx.outCarrier())],
  },
  'aten.reciprocal.default': { build: (ctx) => [divide(ctx, 1, ctx.value('self'), ctx.outCarrier())] },
  'aten.exp.default': {
    build: (ctx) => {
      const c = ctx.carrier(ctx.value('self'), ctx.outCarrier());
      const [re, im] = [ctx.part(c, 0), ctx.part(c, 1)];
      const e = ctx.call('aten.exp.default', { self: re }, 'exp_re');
      const cos = ctx.call('aten.mul.Tensor', { self: e, other: ctx.call('aten.cos.default', { self: im }, 'cos') }, 'exp_cos');
      const sin = ctx.call('aten.mul.Tensor', { self: e, other: ctx.call('aten.sin.default', { self: im }, 'sin') }, 'exp_sin');
      return [ctx.stackParts(cos, sin)];
    },
  },
  'aten.matmul.default': { build: complexMatmul('other') },
  'aten.mm.default': { build: complexMatmul('mat2') },
  'aten.bmm.default': { build: complexMatmul('mat2') },

  // Reductions (never over the carrier's last axis).
  'aten.sum.dim_IntList': { check: (node) => (node.args.dtype == null ? null : 'sum with a dtype argument on complex values has no rule'), build: reduction('aten.sum.dim_IntList') },
  'aten.mean.dim': { check: (node) => (node.args.dtype == null ? null : 'mean with a dtype argument on complex values has no rule'), build: reduction('aten.mean.dim') },
  'aten.sum.default': { check: (node) => (node.args.dtype == null ? null : 'sum with a dtype argument on complex values has no rule'), build: reduction('aten.sum.dim_IntList') },
  'aten.mean.default': { check: (node) => (node.args.dtype == null ? null : 'mean with a dtype argument on complex values has no rule'), build: reduction('aten.mean.dim') },

  // Comparisons, selection.
  'aten.eq.Tensor': { build: comparison('eq') },
  'aten.ne.Tensor': { build: comparison('ne') },
  'aten.eq.Scalar': { build: comparison('eq') },
  'aten.ne.Scalar': { build: comparison('ne') },
  'aten.where.self': { build: whereRule },
  'aten.where.ScalarSelf': { build: whereRule },
  'aten.where.ScalarOther': { build: whereRule },
  'aten.where.Scalar': { build: whereRule },
  'aten.masked_fill.Scalar': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const mask = ctx.call('aten.unsqueeze.default', { self: ctx.value('mask'), dim: -1 }, 'mask');
      return [ctx.call('aten.where.self', { condition: mask, self: ctx.pair(ctx.arg('value'), dtype, 'fill'), other: ctx.carrier(ctx.value('self'), dtype) })];
    },
  },
  'aten.masked_fill.Tensor': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const mask = ctx.call('aten.unsqueeze.default', { self: ctx.value('mask'), dim: -1 }, 'mask');
      return [ctx.call('aten.where.self', { condition: mask, self: ctx.pair(ctx.value('value'), dtype, 'fill'), other: ctx.carrier(ctx.value('self'), dtype) })];
    },
  },

  // Casts and copies.
  'aten._to_copy.default': { build: castRule },
  'aten.to.dtype': { build: castRule },
  'aten.type_as.default': { build: castRule },
  'aten.clone.default': { build: identity },
  'aten.alias.default': { build: identity },
  'aten.detach.default': { build: identity },
  'aten.contiguous.default': { build: identity },
  'aten.lift_fresh_copy.default': { build: identity },

  // Views and reshapes.
  'aten.view.default': { build: sizeAppended('size') },
  'aten.reshape.default': { build: sizeAppended('shape') },
  'aten._unsafe_view.default': { build: sizeAppended('size') },
  'aten.expand.default': { build: sizeAppended('size') },
  'aten.repeat.default': { build: (ctx) => ctx.sameOp({ repeats: [...(ctx.arg('repeats') as Arg[]), 1] }) },
  'aten.permute.default': {
    build: (ctx) => {
      const n = ctx.rank();
      return ctx.sameOp({ dims: [...(ctx.arg('dims') as number[]).map((d) => (d < 0 ? d + n : d)), n] });
    },
  },
  'aten.transpose.int': { build: dimsShifted('dim0', 'dim1') },
  'aten.t.default': {
    build: (ctx) => (ctx.rank() < 2 ? identity(ctx) : ctx.sameOp({ dims: [1, 0, 2] }, 'aten.permute.default')),
  },
  'aten.flatten.using_ints': {
    build: (ctx) => (ctx.rank() === 0 ? [ctx.call('aten.view.default', { self: ctx.carrier(ctx.value('self')), size: [1, 2] })] : dimsShifted('start_dim', 'end_dim')(ctx)),
  },
  'aten.unflatten.int': { build: dimsShifted('dim') },
  'aten.squeeze.default': { build: (ctx) => ctx.sameOp() },
  'aten.squeeze.dim': { build: dimsShifted('dim') },
  'aten.squeeze.dims': { build: dimsShifted('dim') },
  'aten.unsqueeze.default': { build: dimsShifted('dim') },

  // Slices, joins and splits.
  'aten.slice.Tensor': { build: dimsShifted('dim') },
  'aten.select.int': { build: dimsShifted('dim') },
  'aten.narrow.default': { build: dimsShifted('dim') },
  'aten.index_select.default': { build: dimsShifted('dim') },
  'aten.index.Tensor': { build: (ctx) => ctx.sameOp() },
  'aten.flip.default': { build: dimsShifted('dims') },
  'aten.roll.default': {
    check: (node) => (Array.isArray(node.args.dims) && node.args.dims.length > 0 ? null : 'roll without dims (over the flattened tensor) has no rule for complex values'),
    build: dimsShifted('dims'),
  },
  'aten.constant_pad_nd.default': {
    check: (node) => (node.args.value === 0 || node.args.value === false ? null : 'padding complex values with a nonzero value has no rule'),
    build: (ctx) => ctx.sameOp({ pad: [0, 0, ...(ctx.arg('pad') as Arg[])] }),
  },
  'aten.cat.default': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const tensors = (ctx.arg('tensors') as Arg[]).map((t, i) => ctx.pair(t, dtype, `pair${i}`));
      return [ctx.call('aten.cat.default', { tensors, dim: shiftDim(ctx.arg('dim') as number) })];
    },
  },
  'aten.stack.default': {
    build: (ctx) => {
      const dtype = ctx.outCarrier();
      const tensors = (ctx.arg('tensors') as Arg[]).map((t, i) => ctx.pair(t, dtype, `pair${i}`));
      return [ctx.call('aten.stack.default', { tensors, dim: shiftDim(ctx.arg('dim') as number) })];
    },
  },
  'aten.split.Tensor': { build: dimsShifted('dim') },
  'aten.split_with_sizes.default': { build: dimsShifted('dim') },
  'aten.chunk.default': { build: dimsShifted('dim') },
  'aten.unbind.int': { build: dimsShifted('dim') },

  // Running sums add parts independently; triangles move the carrier axis out of their last two dims.
  'aten.cumsum.default': { check: (node) => (node.args.dtype == null ? null : 'cumsum with a dtype argument on complex values has no rule'), build: dimsShifted('dim') },
  'aten.tril.default': { build: triangle },
  'aten.triu.default': { build: triangle },

  // Shape plumbing.
  'aten.sym_size.int': { build: dimsShifted('dim') },
};

/** Null when `node` (which reads or produces complex values) can be rewritten, else why not. */
export function ruleRefusal(node: Node): string | null {
  const rule = COMPLEX_RULES[node.target];
  if (rule === undefined) return `no rule rewrites ${node.target} on complex values into real arithmetic`;
  return rule.check?.(node) ?? null;
}
