/**
 * Layer-building helpers of the pointwise converters: operands (tensors and Scalar arguments)
 * brought to one dtype and rank, the dtype a computation runs in where TensorRT lacks the
 * IR's (bool arithmetic, int8/uint8), and the compositions TensorRT has no single layer for
 * (trunc, floor/trunc division, remainder, fmod, log1p, integer pow, clamp).
 *
 * TensorRT rules relied on (TensorRT 10 operator docs): elementwise arithmetic takes floats,
 * int32 and int64 (int8 only as a quantized type); comparisons take floats, int32 and int64;
 * and/or/xor take bool; kDIV on integers truncates and kFLOOR_DIV floors; unary ops take
 * floats, except abs and sign (also int32/int64) and not (bool); activations take floats;
 * select takes float, int32, int64 and bool branches; cast converts between all types,
 * float to integer truncating toward zero and anything nonzero to true.
 */
import { InternalError } from '../../errors';
import type { Arg, Node } from '../../ir/graph';
import { Value } from '../../ir/graph';
import { isFloating, isInteger, resultTypeOfOperands, scalarDType, type DType, type PromotionOperand } from '../../ir/dtype';
import type { ActivationType, ElementWiseOp, NetTensor, UnaryOp } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import type { SelectionSettings } from '../types';
import { cast, toRank } from './basic';

/** A pointwise operand as a node holds it: a tensor value, or a Scalar argument. */
export type Operand = Value | number | boolean;

/** True for an argument that is an operand a converter can build (a tensor value or a literal). */
export function isOperand(a: Arg): a is Operand {
  return a instanceof Value || typeof a === 'number' || typeof a === 'boolean';
}

/** The node argument `name` as an operand (an internal error when it is anything else). */
export function operandArg(node: Node, name: string): Operand {
  const a = node.args[name];
  if (a === undefined || !isOperand(a)) throw new InternalError(`node ${node.name} (${node.target}): argument ${name} is not a tensor or a number`);
  if (a instanceof Value && a.type.kind !== 'tensor') throw new InternalError(`node ${node.name}: argument ${name} is a SymInt (dynamic graphs are refused before conversion)`);
  return a;
}

/** The node argument `name` as a number (booleans as 0/1). */
export function numberArg(node: Node, name: string): number {
  const a = node.args[name];
  if (typeof a === 'number') return a;
  if (typeof a === 'boolean') return a ? 1 : 0;
  throw new InternalError(`node ${node.name} (${node.target}): argument ${name} is not a number`);
}

/** The node's only output dtype. */
export function outDType(node: Node): DType {
  return node.outputs[0]!.tensorType.dtype;
}

/** How an operand takes part in PyTorch type promotion. */
function promotionOf(a: Operand): PromotionOperand {
  if (a instanceof Value) {
    const t = a.tensorType;
    return { dtype: t.dtype, role: t.shape.length > 0 ? 'tensor' : 'zerodim' };
  }
  const kind = typeof a === 'boolean' ? 'bool' : Number.isInteger(a) ? 'int' : 'float';
  return { dtype: scalarDType(kind), role: 'scalar' };
}

/** torch.result_type of the operands (the dtype a comparison or a where computes in). */
export function promotedType(operands: readonly Operand[]): DType {
  const d = resultTypeOfOperands(operands.map(promotionOf));
  if (d === undefined) throw new InternalError('promotedType: no operands');
  return d;
}

/** A Scalar's value as a tensor of `dtype` holds it (bool: nonzero; integers: truncated). */
export function scalarIn(value: number | boolean, dtype: DType): number {
  const v = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  if (dtype === 'bool') return v !== 0 ? 1 : 0;
  if (isInteger(dtype)) {
    if (!Number.isFinite(v)) throw new InternalError(`scalar ${v} does not fit ${dtype}`);
    return Math.trunc(v);
  }
  return v;
}

/** A constant of `rank` dims of 1 holding `value` in `dtype`. */
export function constantOf(ctx: ConversionContext, value: number | boolean, dtype: DType, rank: number, role = 'scalar'): NetTensor {
  const shape = new Array<number>(rank).fill(1);
  return ctx.constant(Tensor.from(dtype, shape, [scalarIn(value, dtype)]), ctx.name(role));
}

/** The rank of an operand (0 for a Scalar). */
export function rankOf(a: Operand): number {
  return a instanceof Value ? a.tensorType.shape.length : 0;
}

/**
 * Operands as network tensors of `dtype` and one rank (at least `minRank`): tensors are cast
 * and get leading 1s, Scalars become constants of that rank.
 */
export function operandTensors(ctx: ConversionContext, operands: readonly Operand[], dtype: DType, minRank = 0): NetTensor[] {
  const rank = Math.max(minRank, ...operands.map(rankOf));
  return operands.map((a, i) =>
    a instanceof Value ? toRank(ctx, cast(ctx, ctx.tensor(a), dtype, `cast${i}`), rank, `broadcast${i}`) : constantOf(ctx, a, dtype, rank, `scalar${i}`),
  );
}

/** Network tensors brought to one rank (dtypes unchanged). */
export function sameRank(ctx: ConversionContext, ts: readonly NetTensor[]): NetTensor[] {
  const rank = Math.max(...ts.map((t) => t.shape.length));
  return ts.map((t, i) => toRank(ctx, t, rank, `broadcast${i}`));
}

/** An elementwise layer on two tensors of one dtype (ranks aligned here). */
export function ew(ctx: ConversionContext, a: NetTensor, b: NetTensor, op: ElementWiseOp, role?: string): NetTensor {
  const [x, y] = sameRank(ctx, [a, b]);
  return ctx.add({ kind: 'elementwise', op }, [x!, y!], role);
}

export function unary(ctx: ConversionContext, t: NetTensor, op: UnaryOp, role?: string): NetTensor {
  return ctx.add({ kind: 'unary', op }, [t], role);
}

export function activation(ctx: ConversionContext, t: NetTensor, type: ActivationType, alpha?: number, beta?: number, role?: string): NetTensor {
  return ctx.add({ kind: 'activation', type, ...(alpha === undefined ? {} : { alpha }), ...(beta === undefined ? {} : { beta }) }, [t], role);
}

/** select(cond, a, b) with the three ranks aligned. */
export function select(ctx: ConversionContext, cond: NetTensor, a: NetTensor, b: NetTensor, role?: string): NetTensor {
  const [c, x, y] = sameRank(ctx, [cond, a, b]);
  return ctx.add({ kind: 'select' }, [c!, x!, y!], role);
}

/** A scalar constant shaped to broadcast against `like`, in `like`'s dtype. */
export function like(ctx: ConversionContext, value: number, t: NetTensor, role = 'const'): NetTensor {
  return constantOf(ctx, value, t.dtype, t.shape.length, role);
}

// ---------------------------------------------------------------------------------------
// Dtypes.

const is16BitFloat = (d: DType): boolean => d === 'float16' || d === 'bfloat16';

/** True for dtypes TensorRT computes arithmetic in (floats, int32, int64). */
export function isArithmeticType(d: DType, settings: SelectionSettings): boolean {
  return d === 'float32' || d === 'float16' || d === 'bfloat16' || d === 'int32' || d === 'int64' || (d === 'float64' && settings.truncateDouble === true);
}

/**
 * The dtype arithmetic producing `out` runs in: bool results are computed in int32 and cast
 * back (true where nonzero, as PyTorch's bool arithmetic); everything else as is.
 */
export function arithmeticType(out: DType): DType {
  return out === 'bool' ? 'int32' : out;
}

/**
 * The dtype for ops that are exact whatever the integer type (select, max, min, sign...):
 * bool, int8 and uint8 go through int32, which holds all their values.
 */
export function exactType(d: DType): DType {
  return d === 'bool' || d === 'int8' || d === 'uint8' ? 'int32' : d;
}

/** A comparison's dtype: the promoted type, with bool and 8-bit integers compared as int32. */
export function comparisonType(operands: readonly Operand[]): DType {
  return exactType(promotedType(operands));
}

/** The dtype float math on `d` runs in: 16-bit floats in float32 for compositions that lose accuracy. */
export function wideFloat(d: DType): DType {
  return is16BitFloat(d) ? 'float32' : d;
}

/** The reason arithmetic in `d` cannot run in TensorRT, or null. */
export function arithmeticRefusal(d: DType, what: string, settings: SelectionSettings): string | null {
  if (d === 'bool' || isArithmeticType(d, settings)) return null;
  if (d === 'int8' || d === 'uint8') {
    return `${what} in ${d} is not supported: TensorRT has no ${d} arithmetic (int8 is its quantized type, uint8 only an I/O type), and PyTorch's wrap-around results cannot be reproduced through int32`;
  }
  return `${what} in ${d} is not supported by TensorRT`;
}

// ---------------------------------------------------------------------------------------
// Compositions.

/** trunc(x) of a float tensor: ceil below zero, floor elsewhere (keeps -0, NaN and ±inf). */
export function truncFloat(ctx: ConversionContext, x: NetTensor, role = 'trunc'): NetTensor {
  const negative = ew(ctx, x, like(ctx, 0, x, `${role}/zero`), 'less', `${role}/negative`);
  return select(ctx, negative, unary(ctx, x, 'ceil', `${role}/ceil`), unary(ctx, x, 'floor', `${role}/floor`), role);
}

/**
 * a / b rounded as `mode` in `dtype` (a and b already of it). Integers: kDIV truncates,
 * kFLOOR_DIV floors. Floats: true division, then floor or trunc.
 */
export function roundedDiv(ctx: ConversionContext, a: NetTensor, b: NetTensor, mode: 'trunc' | 'floor', dtype: DType, role = 'div'): NetTensor {
  if (!isFloating(dtype)) return ew(ctx, a, b, mode === 'floor' ? 'floor_div' : 'div', role);
  const q = ew(ctx, a, b, 'div', `${role}/quotient`);
  return mode === 'floor' ? unary(ctx, q, 'floor', role) : truncFloat(ctx, q, role);
}

/** a − round(a / b)·b: `floor` gives Python's remainder (torch.remainder), `trunc` C's fmod. */
export function modulo(ctx: ConversionContext, a: NetTensor, b: NetTensor, mode: 'trunc' | 'floor', dtype: DType, role = 'mod'): NetTensor {
  const q = roundedDiv(ctx, a, b, mode, dtype, `${role}/div`);
  return ew(ctx, a, ew(ctx, q, b, 'prod', `${role}/prod`), 'sub', role);
}

/**
 * log1p(x) = log(u)·x/(u − 1) with u = 1 + x (Goldberg's trick, exact to a few ulps near 0),
 * x itself where u rounds to 1, and +inf for +inf.
 */
export function log1p(ctx: ConversionContext, x: NetTensor, role = 'log1p'): NetTensor {
  const u = ew(ctx, x, like(ctx, 1, x, `${role}/one`), 'sum', `${role}/u`);
  const d = ew(ctx, u, like(ctx, 1, x, `${role}/one_b`), 'sub', `${role}/u_minus_1`);
  const ratio = ew(ctx, ew(ctx, unary(ctx, u, 'log', `${role}/log`), x, 'prod', `${role}/scaled`), d, 'div', `${role}/ratio`);
  const tiny = ew(ctx, d, like(ctx, 0, x, `${role}/zero`), 'equal', `${role}/tiny`);
  const inf = ew(ctx, x, like(ctx, Infinity, x, `${role}/inf`), 'equal', `${role}/is_inf`);
  const pass = ew(ctx, tiny, inf, 'or', `${role}/pass`);
  return select(ctx, pass, x, ratio, role);
}

/**
 * Integer power as PyTorch's: x ** e for e ≥ 0; for e < 0, 1/x truncated, i.e. 0 unless
 * |x| = 1, where it is x ** |e|. `exponentNonNegative` skips the correction.
 */
export function integerPow(ctx: ConversionContext, x: NetTensor, e: NetTensor, exponentNonNegative: boolean, role = 'pow'): NetTensor {
  if (exponentNonNegative) return ew(ctx, x, e, 'pow', role);
  const magnitude = unary(ctx, e, 'abs', `${role}/abs_exponent`);
  const p = ew(ctx, x, magnitude, 'pow', `${role}/power`);
  const negative = ew(ctx, e, like(ctx, 0, e, `${role}/zero`), 'less', `${role}/negative_exponent`);
  const unit = ew(ctx, unary(ctx, x, 'abs', `${role}/abs_base`), like(ctx, 1, x, `${role}/one`), 'equal', `${role}/unit_base`);
  const zeroed = ew(ctx, negative, unary(ctx, unit, 'not', `${role}/not_unit`), 'and', `${role}/zeroed`);
  return select(ctx, zeroed, like(ctx, 0, p, `${role}/zero_result`), p, role);
}

/** max(x, lo) then min(·, hi) (torch.clamp: lo > hi gives hi); either bound may be null. */
export function clampTensors(ctx: ConversionContext, x: NetTensor, lo: NetTensor | null, hi: NetTensor | null, role = 'clamp'): NetTensor {
  let y = x;
  if (lo !== null) y = ew(ctx, y, lo, 'max', hi === null ? role : `${role}/min_bound`);
  if (hi !== null) y = ew(ctx, y, hi, 'min', role);
  return y;
}
