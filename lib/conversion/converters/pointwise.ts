/**
 * Converters of the pointwise ops (lib/ir/ops/pointwise.ts): arithmetic, comparisons, logical
 * ops, where/masked_fill, unary math, activations, clamps, casts and identity-like copies.
 *
 * Every converter computes in the dtype the IR inferred for its output (PyTorch's promotion),
 * casting operands to it first; Scalar arguments become constants of that dtype. Where
 * TensorRT lacks a type (bool arithmetic, int8/uint8) the work runs in int32 when that is
 * exact, and is refused in checkArgs when it is not. Complex ops are not converted here: the
 * complex lowering pass rewrites them into real arithmetic before conversion.
 */
import type { DType } from '../../ir/dtype';
import { isFloating } from '../../ir/dtype';
import type { Node } from '../../ir/graph';
import { Value } from '../../ir/graph';
import type { ElementWiseOp, NetTensor, UnaryOp } from '../../network';
import type { ConversionContext } from '../context';
import { trtType } from '../context';
import { defineConverter } from '../define';
import type { ConverterImpl } from '../registry';
import type { CheckArgs } from '../types';
import { cast, toRank } from '../impl/basic';
import {
  activation,
  arithmeticRefusal,
  arithmeticType,
  clampTensors,
  comparisonType,
  constantOf,
  ew,
  exactType,
  integerPow,
  like,
  log1p,
  modulo,
  numberArg,
  operandArg,
  operandTensors,
  outDType,
  rankOf,
  roundedDiv,
  select,
  truncFloat,
  unary,
  wideFloat,
  type Operand,
} from '../impl/pointwise';

// ---------------------------------------------------------------------------------------
// Registration.

/** Refuses SymInt arguments (run-time scalars): legalization gives such nodes a `_dyn` variant or a fallback (docs/dynamic-shapes.md). */
function symIntRefusal(node: Node): string | null {
  for (const [name, a] of Object.entries(node.args)) {
    if (a instanceof Value && a.type.kind === 'symint') return `argument ${name} is a run-time SymInt, which static conversion cannot take`;
  }
  return null;
}

/**
 * Registers `impl` for each target with the SymInt guard before `check`. Pointwise converters
 * read ranks, never dims (rank alignment of run-time dims goes through a shape tensor,
 * impl/basic.ts toRank), so they declare `dynamic: true` unless told otherwise.
 */
function register(targets: readonly string[], impl: ConverterImpl, check?: CheckArgs, dynamic = true): void {
  defineConverter(targets, impl, { checks: [symIntRefusal, check], dynamic });
}

/** A check that refuses when arithmetic in `dtypeOf(node)` cannot run in TensorRT. */
function arithmeticCheck(what: string, dtypeOf: (node: Node) => DType = (n) => arithmeticType(outDType(n))): CheckArgs {
  return (node, settings) => arithmeticRefusal(dtypeOf(node), what, settings) ?? true;
}

const input = (node: Node, ctx: ConversionContext, name = 'self'): NetTensor => ctx.tensor(operandArg(node, name) as Value);

/** The node's output dtype, and the result `t` (computed in another dtype) cast to it. */
function finish(ctx: ConversionContext, node: Node, t: NetTensor): NetTensor[] {
  return [cast(ctx, t, outDType(node), 'cast_out')];
}

// ---------------------------------------------------------------------------------------
// Arithmetic.

/**
 * first ± alpha·second in the output dtype (bool results through int32). A Scalar second
 * operand is folded with alpha into one constant.
 */
function linear(op: 'sum' | 'sub', first: string, second: string): ConverterImpl {
  return (node, ctx) => {
    const dtype = arithmeticType(outDType(node));
    const alpha = numberArg(node, 'alpha');
    const a = operandArg(node, first);
    let b = operandArg(node, second);
    if (alpha !== 1 && !(b instanceof Value)) b = (typeof b === 'boolean' ? (b ? 1 : 0) : b) * alpha;
    const [x, y] = operandTensors(ctx, [a, b], dtype);
    const scaled = alpha !== 1 && b instanceof Value ? ew(ctx, y!, like(ctx, alpha, y!, 'alpha'), 'prod', 'scale') : y!;
    return finish(ctx, node, ew(ctx, x!, scaled, op));
  };
}

register(['aten.add.Tensor', 'aten.add.Scalar'], linear('sum', 'self', 'other'), arithmeticCheck('add'));
register(['aten.sub.Tensor', 'aten.sub.Scalar'], linear('sub', 'self', 'other'), arithmeticCheck('sub'));
register(['aten.rsub.Tensor', 'aten.rsub.Scalar'], linear('sub', 'other', 'self'), arithmeticCheck('rsub'));

/** An elementwise op on two operands computed in `dtypeOf(out)` and cast back to the output dtype. */
function binary(op: ElementWiseOp, names: [string, string] = ['self', 'other'], dtypeOf: (out: DType) => DType = arithmeticType): ConverterImpl {
  return (node, ctx) => {
    const [x, y] = operandTensors(ctx, [operandArg(node, names[0]), operandArg(node, names[1])], dtypeOf(outDType(node)));
    return finish(ctx, node, ew(ctx, x!, y!, op));
  };
}

register(['aten.mul.Tensor', 'aten.mul.Scalar'], binary('prod'), arithmeticCheck('mul'));
register(['aten.maximum.default', 'aten.max.other'], binary('max', ['self', 'other'], exactType), arithmeticCheck('maximum', (n) => exactType(outDType(n))));
register(['aten.minimum.default', 'aten.min.other'], binary('min', ['self', 'other'], exactType), arithmeticCheck('minimum', (n) => exactType(outDType(n))));

/** True division: the output dtype is a float (float32 for integer and bool operands). */
const trueDiv = binary('div');

/** Division rounded by `mode`: integers with TensorRT's div/floor_div, floats divided then rounded (16-bit floats in float32). */
function roundingDiv(mode: 'trunc' | 'floor' | null): ConverterImpl {
  return (node, ctx) => {
    const out = outDType(node);
    if (mode === null) return trueDiv(node, ctx);
    const dtype = wideFloat(out);
    const [x, y] = operandTensors(ctx, [operandArg(node, 'self'), operandArg(node, 'other')], dtype);
    return finish(ctx, node, roundedDiv(ctx, x!, y!, mode, dtype));
  };
}

const modeOf = (node: Node): 'trunc' | 'floor' | null => {
  const m = node.args.rounding_mode;
  return m === 'trunc' || m === 'floor' ? m : null;
};

const roundingDivCheck: CheckArgs = (node, settings) => {
  if (modeOf(node) === null) return true;
  const out = outDType(node);
  if (out === 'bool') return `div with rounding_mode '${String(modeOf(node))}' on bool operands is not supported (PyTorch has no such kernel either)`;
  return arithmeticRefusal(out, 'div', settings) ?? true;
};

register(['aten.div.Tensor', 'aten.div.Scalar'], trueDiv);
register(['aten.div.Tensor_mode', 'aten.div.Scalar_mode'], (node, ctx) => roundingDiv(modeOf(node))(node, ctx), roundingDivCheck);
register(['aten.floor_divide.default', 'aten.floor_divide.Scalar'], roundingDiv('floor'), (node, settings) => {
  const out = outDType(node);
  if (out === 'bool') return 'floor_divide of bool operands is not supported (PyTorch has no such kernel either)';
  return arithmeticRefusal(out, 'floor_divide', settings) ?? true;
});

/** remainder (floor) and fmod (trunc): a − round(a/b)·b; int8/uint8/bool exactly in int32, 16-bit floats in float32. */
function modConverter(mode: 'trunc' | 'floor'): ConverterImpl {
  return (node, ctx) => {
    const out = outDType(node);
    const dtype = isFloating(out) ? wideFloat(out) : exactType(out);
    const [x, y] = operandTensors(ctx, [operandArg(node, 'self'), operandArg(node, 'other')], dtype);
    return finish(ctx, node, modulo(ctx, x!, y!, mode, dtype));
  };
}

register(['aten.remainder.Tensor', 'aten.remainder.Scalar', 'aten.remainder.Scalar_Tensor'], modConverter('floor'));
register(['aten.fmod.Tensor', 'aten.fmod.Scalar'], modConverter('trunc'));

/**
 * pow. Floats: exponent 2 as x·x, 0.5 as sqrt, 1 as x, -1 as a reciprocal (as PyTorch's own
 * special cases), otherwise TensorRT's pow. Integers: pow with PyTorch's rule for negative
 * exponents (0 unless |x| = 1).
 */
const powConverter: ConverterImpl = (node, ctx) => {
  const out = outDType(node);
  const dtype = arithmeticType(out);
  const base = operandArg(node, 'self');
  const exponent = operandArg(node, 'exponent');
  if (isFloating(dtype) && base instanceof Value && typeof exponent === 'number') {
    const [x] = operandTensors(ctx, [base], dtype);
    const special: Record<number, () => NetTensor> = {
      1: () => x!,
      2: () => ew(ctx, x!, x!, 'prod', 'square'),
      0.5: () => unary(ctx, x!, 'sqrt', 'sqrt'),
      [-1]: () => unary(ctx, x!, 'recip', 'recip'),
    };
    const f = special[exponent];
    if (f) return finish(ctx, node, f());
  }
  const [x, e] = operandTensors(ctx, [base, exponent], dtype);
  if (isFloating(dtype)) return finish(ctx, node, ew(ctx, x!, e!, 'pow'));
  const nonNegative = typeof exponent === 'number' ? exponent >= 0 : typeof exponent === 'boolean';
  return finish(ctx, node, integerPow(ctx, x!, e!, nonNegative));
};

register(['aten.pow.Tensor_Tensor', 'aten.pow.Tensor_Scalar', 'aten.pow.Scalar'], powConverter, arithmeticCheck('pow'));

// ---------------------------------------------------------------------------------------
// Comparisons and logical ops.

type Comparison = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** A comparison in the promoted dtype (bool and 8-bit integers as int32): ne = not equal, le = less or equal, ge = greater or equal. */
function comparison(op: Comparison): ConverterImpl {
  return (node, ctx) => {
    const a = operandArg(node, 'self');
    const b = operandArg(node, 'other');
    const [x, y] = operandTensors(ctx, [a, b], comparisonType([a, b]));
    const cmp = (o: ElementWiseOp, role?: string): NetTensor => ew(ctx, x!, y!, o, role);
    switch (op) {
      case 'eq':
        return [cmp('equal')];
      case 'ne':
        return [unary(ctx, cmp('equal', 'equal'), 'not')];
      case 'lt':
        return [cmp('less')];
      case 'gt':
        return [cmp('greater')];
      case 'le':
        return [ew(ctx, cmp('less', 'less'), cmp('equal', 'equal'), 'or')];
      case 'ge':
        return [ew(ctx, cmp('greater', 'greater'), cmp('equal', 'equal'), 'or')];
    }
  };
}

for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const) register([`aten.${op}.Tensor`, `aten.${op}.Scalar`], comparison(op));

/** A logical op on truth values: both operands cast to bool (nonzero is true). */
function logical(op: 'and' | 'or' | 'xor'): ConverterImpl {
  return (node, ctx) => {
    const [x, y] = operandTensors(ctx, [operandArg(node, 'self'), operandArg(node, 'other')], 'bool');
    return [ew(ctx, x!, y!, op)];
  };
}

register(['aten.logical_and.default'], logical('and'));
register(['aten.logical_or.default'], logical('or'));
register(['aten.logical_xor.default'], logical('xor'));
register(['aten.logical_not.default'], (node, ctx) => [unary(ctx, cast(ctx, input(node, ctx), 'bool'), 'not')]);

/** ~x: not for bool; −1 − x for signed integers and 255 − x for uint8 (8-bit types through int32, exact). */
register(['aten.bitwise_not.default'], (node, ctx) => {
  const x = input(node, ctx);
  const dtype = outDType(node);
  if (dtype === 'bool') return [unary(ctx, x, 'not')];
  const wide = cast(ctx, x, exactType(dtype), 'widen');
  return finish(ctx, node, ew(ctx, like(ctx, dtype === 'uint8' ? 255 : -1, wide, 'ones'), wide, 'sub'));
});

// ---------------------------------------------------------------------------------------
// where and masked_fill.

/** The dtype select runs in for an output dtype (TensorRT's select has no int8/uint8). */
const selectType = (d: DType): DType => (d === 'int8' || d === 'uint8' ? 'int32' : d);

register(['aten.where.self', 'aten.where.ScalarSelf', 'aten.where.ScalarOther', 'aten.where.Scalar'], (node, ctx) => {
  const cond = input(node, ctx, 'condition');
  const [x, y] = operandTensors(ctx, [operandArg(node, 'self'), operandArg(node, 'other')], selectType(outDType(node)), cond.shape.length);
  return finish(ctx, node, select(ctx, cond, x!, y!));
});

/** masked_fill: the value (in self's dtype) where the mask is set. */
register(['aten.masked_fill.Scalar', 'aten.masked_fill.Tensor'], (node, ctx) => {
  const mask = input(node, ctx, 'mask');
  const dtype = selectType(outDType(node));
  const self = operandArg(node, 'self');
  const value = operandArg(node, 'value');
  const rank = Math.max(rankOf(self), mask.shape.length);
  const [x] = operandTensors(ctx, [self], dtype, rank);
  const v = value instanceof Value ? toRank(ctx, cast(ctx, ctx.tensor(value), dtype, 'cast_value'), rank, 'broadcast_value') : constantOf(ctx, value, dtype, rank, 'value');
  return finish(ctx, node, select(ctx, mask, v, x!));
});

// ---------------------------------------------------------------------------------------
// Unary math.

/** A float function: integer and bool inputs are cast to the float output dtype first. */
function floatUnary(build: (ctx: ConversionContext, x: NetTensor) => NetTensor): ConverterImpl {
  return (node, ctx) => [build(ctx, cast(ctx, input(node, ctx), outDType(node)))];
}

const unaryOps: Record<string, UnaryOp> = { exp: 'exp', log: 'log', sqrt: 'sqrt', reciprocal: 'recip', sin: 'sin', cos: 'cos', tan: 'tan', erf: 'erf' };
for (const [op, u] of Object.entries(unaryOps)) register([`aten.${op}.default`], floatUnary((ctx, x) => unary(ctx, x, u)));
register(['aten.tanh.default'], floatUnary((ctx, x) => activation(ctx, x, 'tanh')));
register(['aten.sigmoid.default'], floatUnary((ctx, x) => activation(ctx, x, 'sigmoid')));
register(['aten.rsqrt.default'], floatUnary((ctx, x) => unary(ctx, unary(ctx, x, 'sqrt', 'sqrt'), 'recip')));
/** log1p composed (TensorRT has none), in float32 for 16-bit floats. */
register(['aten.log1p.default'], (node, ctx) => finish(ctx, node, log1p(ctx, cast(ctx, input(node, ctx), wideFloat(outDType(node)), 'widen'))));

/** −x: unary neg for floats (TensorRT's neg takes only floats), 0 − x for int32/int64. */
register(
  ['aten.neg.default'],
  (node, ctx) => {
    const x = input(node, ctx);
    if (isFloating(outDType(node))) return [unary(ctx, x, 'neg')];
    return [ew(ctx, like(ctx, 0, x, 'zero'), x, 'sub')];
  },
  arithmeticCheck('neg'),
);

/** |x|: unary abs (floats, int32, int64); the identity for bool and uint8. */
register(
  ['aten.abs.default'],
  (node, ctx) => {
    const x = input(node, ctx);
    const dtype = outDType(node);
    return [dtype === 'bool' || dtype === 'uint8' ? x : unary(ctx, x, 'abs')];
  },
  (node, settings) => {
    const dtype = outDType(node);
    return dtype === 'int8' ? 'abs of int8 is not supported: TensorRT has no int8 arithmetic and abs(-128) wraps in PyTorch' : (dtype === 'bool' || dtype === 'uint8' ? null : arithmeticRefusal(dtype, 'abs', settings)) ?? true;
  },
);

/** sign: unary sign (floats, int32, int64; 8-bit integers through int32); the identity for bool. */
register(['aten.sign.default'], (node, ctx) => {
  const x = input(node, ctx);
  const dtype = outDType(node);
  if (dtype === 'bool') return [x];
  return finish(ctx, node, unary(ctx, cast(ctx, x, exactType(dtype), 'widen'), 'sign'));
});

/** floor, ceil, round and trunc: float layers; integer and bool tensors pass through unchanged. */
function rounding(build: (ctx: ConversionContext, x: NetTensor) => NetTensor): ConverterImpl {
  return (node, ctx) => {
    const x = input(node, ctx);
    return [isFloating(outDType(node)) ? build(ctx, x) : x];
  };
}

register(['aten.floor.default'], rounding((ctx, x) => unary(ctx, x, 'floor')));
register(['aten.ceil.default'], rounding((ctx, x) => unary(ctx, x, 'ceil')));
/** TensorRT's round is half to even, as torch.round. */
register(['aten.round.default'], rounding((ctx, x) => unary(ctx, x, 'round')));
register(['aten.trunc.default'], rounding((ctx, x) => truncFloat(ctx, x)));

/** round(x·10^d)/10^d (or the reverse for negative d), as PyTorch computes it; in float32 for 16-bit floats. */
register(['aten.round.decimals'], (node, ctx) => {
  const x = input(node, ctx);
  const out = outDType(node);
  const decimals = numberArg(node, 'decimals');
  if (!isFloating(out)) return [x];
  if (decimals === 0) return [unary(ctx, x, 'round')];
  const wide = cast(ctx, x, wideFloat(out), 'widen');
  const scale = like(ctx, 10 ** Math.abs(decimals), wide, 'scale');
  const [up, down]: [ElementWiseOp, ElementWiseOp] = decimals > 0 ? ['prod', 'div'] : ['div', 'prod'];
  const rounded = unary(ctx, ew(ctx, wide, scale, up, 'scaled'), 'round', 'round');
  return finish(ctx, node, ew(ctx, rounded, scale, down, 'unscaled'));
});

/** isnan/isinf: unary layers for floats; all false for integers and bool (x ≠ x). */
function predicate(op: 'isnan' | 'isinf'): ConverterImpl {
  return (node, ctx) => {
    const x = input(node, ctx);
    const dtype = (node.args.self as Value).tensorType.dtype;
    if (isFloating(dtype)) return [unary(ctx, x, op)];
    const wide = cast(ctx, x, exactType(dtype), 'widen');
    return [unary(ctx, ew(ctx, wide, wide, 'equal', 'equal'), 'not')];
  };
}

register(['aten.isnan.default'], predicate('isnan'));
register(['aten.isinf.default'], predicate('isinf'));

// ---------------------------------------------------------------------------------------
// Activations (floats only, by the IR's types, except relu).

/** relu: the activation for floats; max(x, 0) for integers (8-bit ones through int32). */
register(['aten.relu.default'], (node, ctx) => {
  const x = input(node, ctx);
  const dtype = outDType(node);
  if (isFloating(dtype)) return [activation(ctx, x, 'relu')];
  const wide = cast(ctx, x, exactType(dtype), 'widen');
  return finish(ctx, node, ew(ctx, wide, like(ctx, 0, wide, 'zero'), 'max'));
});

register(['aten.gelu.default'], (node, ctx) => [activation(ctx, input(node, ctx), node.args.approximate === 'tanh' ? 'gelu_tanh' : 'gelu_erf')]);

/** silu: x·sigmoid(x). */
register(['aten.silu.default'], (node, ctx) => {
  const x = input(node, ctx);
  return [ew(ctx, x, activation(ctx, x, 'sigmoid', undefined, undefined, 'sigmoid'), 'prod')];
});

/** hardswish: x·hard_sigmoid(x) with PyTorch's slope 1/6 and offset 1/2. */
register(['aten.hardswish.default'], (node, ctx) => {
  const x = input(node, ctx);
  return [ew(ctx, x, activation(ctx, x, 'hard_sigmoid', 1 / 6, 0.5, 'hardsigmoid'), 'prod')];
});

register(['aten.hardsigmoid.default'], (node, ctx) => [activation(ctx, input(node, ctx), 'hard_sigmoid', 1 / 6, 0.5)]);
register(['trt.hardsigmoid_onnx'], (node, ctx) => [activation(ctx, input(node, ctx), 'hard_sigmoid', numberArg(node, 'alpha'), numberArg(node, 'beta'))]);
register(['aten.leaky_relu.default'], (node, ctx) => [activation(ctx, input(node, ctx), 'leaky_relu', numberArg(node, 'negative_slope'))]);

/**
 * elu: the activation when scale and input_scale are 1; otherwise composed as PyTorch
 * defines it: scale·x for x > 0, scale·elu(input_scale·x) elsewhere.
 */
register(['aten.elu.default'], (node, ctx) => {
  const x = input(node, ctx);
  const alpha = numberArg(node, 'alpha');
  const scale = numberArg(node, 'scale');
  const inputScale = numberArg(node, 'input_scale');
  if (scale === 1 && inputScale === 1) return [activation(ctx, x, 'elu', alpha)];
  const scaled = (t: NetTensor, s: number, role: string): NetTensor => (s === 1 ? t : ew(ctx, t, like(ctx, s, t, `${role}_factor`), 'prod', role));
  const negative = scaled(activation(ctx, scaled(x, inputScale, 'input_scale'), 'elu', alpha, undefined, 'elu'), scale, 'scale_negative');
  const positive = ew(ctx, x, like(ctx, 0, x, 'zero'), 'greater', 'positive');
  return [select(ctx, positive, scaled(x, scale, 'scale_positive'), negative)];
});

/**
 * softplus: TensorRT's activation computes alpha·log(exp(beta·x) + 1), so alpha = 1/beta;
 * PyTorch's threshold (x itself where beta·x > threshold) is always composed with a select,
 * which also keeps exp from overflowing. 16-bit floats run in float32 (exp overflows half
 * from beta·x ≈ 11, below the default threshold of 20).
 */
register(['aten.softplus.default'], (node, ctx) => {
  const out = outDType(node);
  const beta = numberArg(node, 'beta');
  const threshold = numberArg(node, 'threshold');
  const x = cast(ctx, input(node, ctx), wideFloat(out), 'widen');
  const soft = activation(ctx, x, 'softplus', 1 / beta, beta, 'softplus');
  const bx = beta === 1 ? x : ew(ctx, x, like(ctx, beta, x, 'beta'), 'prod', 'beta_x');
  const linear = ew(ctx, bx, like(ctx, threshold, x, 'threshold'), 'greater', 'linear');
  return finish(ctx, node, select(ctx, linear, x, soft));
});

/** PyTorch's prelu kernel: x > 0 ? x : weight·x, in the promoted dtype (bool through int32). */
register(
  ['aten._prelu_kernel.default'],
  (node, ctx) => {
    const dtype = arithmeticType(outDType(node));
    const [x, w] = operandTensors(ctx, [operandArg(node, 'self'), operandArg(node, 'weight')], dtype);
    const positive = ew(ctx, x!, like(ctx, 0, x!, 'zero'), 'greater', 'positive');
    return finish(ctx, node, select(ctx, positive, x!, ew(ctx, x!, w!, 'prod', 'scaled')));
  },
  arithmeticCheck('prelu'),
);

// ---------------------------------------------------------------------------------------
// Clamps.

/**
 * Clamps x to optional bounds (Scalars or tensors) in the output dtype. Floats with two
 * Scalar bounds lo ≤ hi use TensorRT's clip activation; everything else max then min
 * (torch.clamp's order: lo > hi gives hi), 8-bit integers through int32 (exact).
 */
function clampImpl(node: Node, ctx: ConversionContext, lo: Operand | null, hi: Operand | null): NetTensor[] {
  const out = outDType(node);
  const self = operandArg(node, 'self');
  if (isFloating(out) && typeof lo === 'number' && typeof hi === 'number' && lo <= hi) {
    const [x] = operandTensors(ctx, [self], out);
    return [activation(ctx, x!, 'clip', lo, hi)];
  }
  const dtype = exactType(out);
  const bounds = [lo, hi].filter((b): b is Operand => b !== null);
  const ts = operandTensors(ctx, [self, ...bounds], dtype);
  const loT = lo === null ? null : ts[1]!;
  const hiT = hi === null ? null : ts[lo === null ? 1 : 2]!;
  return finish(ctx, node, clampTensors(ctx, ts[0]!, loT, hiT));
}

const optOperand = (node: Node, name: string): Operand | null => (node.args[name] === null || node.args[name] === undefined ? null : operandArg(node, name));

register(['aten.clamp.default', 'aten.clamp.Tensor'], (node, ctx) => clampImpl(node, ctx, optOperand(node, 'min'), optOperand(node, 'max')));
register(['aten.clamp_min.default', 'aten.clamp_min.Tensor'], (node, ctx) => clampImpl(node, ctx, operandArg(node, 'min'), null));
register(['aten.clamp_max.default', 'aten.clamp_max.Tensor'], (node, ctx) => clampImpl(node, ctx, null, operandArg(node, 'max')));
register(['aten.hardtanh.default'], (node, ctx) => clampImpl(node, ctx, operandArg(node, 'min_val'), operandArg(node, 'max_val')));

// ---------------------------------------------------------------------------------------
// Casts, copies and constants.

/** Refuses a cast target TensorRT cannot hold (the partitioner then sends the node to a fallback segment). */
function castTargetCheck(target: (node: Node) => DType | null): CheckArgs {
  return (node, settings) => {
    const to = target(node);
    if (to === null) return true;
    if (trtType(to, settings.truncateDouble) === null) {
      return to === 'float64'
        ? 'casting to float64: TensorRT has no float64 (set truncateDouble to compute it in float32)'
        : `casting to ${to}: TensorRT cannot hold ${to}`;
    }
    return true;
  };
}

const dtypeArg = (node: Node): DType | null => (typeof node.args.dtype === 'string' ? (node.args.dtype as DType) : null);

/** A cast layer to the output dtype (no layer when the dtype does not change). */
const castConverter: ConverterImpl = (node, ctx) => [cast(ctx, input(node, ctx), outDType(node))];

register(['aten._to_copy.default'], castConverter, (node, settings) => {
  const layout = node.args.layout;
  if (layout !== null && layout !== undefined && layout !== 'strided') return `_to_copy to layout ${String(layout)} is not supported (TensorRT tensors are dense)`;
  return castTargetCheck(dtypeArg)(node, settings);
});
register(['aten.to.dtype', 'aten.to.device', 'aten.to.dtype_layout'], castConverter, castTargetCheck(dtypeArg));
register(['aten.type_as.default'], castConverter, castTargetCheck((n) => outDType(n)));

/** Copies and views that do not change values: the input tensor itself (convert.ts adds an identity where it must be an output). */
register(['aten.clone.default', 'aten.alias.default', 'aten.detach.default', 'aten.contiguous.default', 'aten.lift_fresh_copy.default'], (node, ctx) => [input(node, ctx)]);
register(['aten.dropout.default'], (node, ctx) => [input(node, ctx, 'input')]);

/** scalar_tensor: a 0-d constant. Static only: its SymInt operand is the legalization's business. */
register(
  ['aten.scalar_tensor.default'],
  (node, ctx) => {
    const s = node.args.s;
    const value = typeof s === 'boolean' || typeof s === 'number' ? s : 0;
    return [constantOf(ctx, value, outDType(node), 0, 'value')];
  },
  undefined,
  false,
);
