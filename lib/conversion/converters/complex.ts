/**
 * Converters of the complex-lowering ops (lib/ir/ops/complex.ts). Complex values reach
 * conversion only as real carriers of shape [..., 2] (lib/lowering/complex/), so these are
 * real arithmetic:
 *
 * - `trt.complex_mul(a, b)`: the parts are split off with slices of size 1 on the last axis,
 *   re = ar·br − ai·bi and im = ar·bi + ai·br (four products, a sub and a sum, broadcasting
 *   over the leading dims after rank alignment), and concatenated back on the last axis.
 * - `aten.atan2.default(y, x)`: TensorRT has atan but no atan2. Where |x| ≥ |y| it is
 *   atan(y/x), plus π (y ≥ 0) or −π (y < 0) when x < 0; elsewhere ±π/2 − atan(x/y). Both
 *   ratios stay within [−1, 1], so nothing overflows and an infinite operand against a
 *   finite one works; atan2(0, 0) = 0. Not covered: the sign of zero (atan2(−0, −1) is −π
 *   and atan2(0, −0) is π in PyTorch; π and 0 here) and both operands infinite (NaN here).
 *
 * `trt.complex_mul` also has two variants for run-time (-1) dims, tried in this order:
 * slices whose sizes are read at run time, then gathers on the static last axis;
 * `aten.atan2` is static-only.
 */
import { InternalError } from '../../errors';
import { isFloating, type DType } from '../../ir/dtype';
import { Value, type Node } from '../../ir/graph';
import type { ElementWiseOp, NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { alignRanks, cast } from '../impl/basic';
import { concat, sliceAxisOrSelf } from '../impl/shape';
import { defineConverter, staticIntArgs } from '../define';
import { value } from '../impl/args';
import { prependOnes, sliceAlong } from '../impl/dynamic';
import type { ConverterImpl } from '../registry';
import type { CheckArgs } from '../types';

function tensorArg(node: Node, name: string): Value {
  const a = node.args[name];
  if (!(a instanceof Value) || a.type.kind !== 'tensor') throw new InternalError(`node ${node.name} (${node.target}): argument ${name} is not a tensor`);
  return a;
}

const outDType = (node: Node): DType => node.outputs[0]!.tensorType.dtype;

/** An elementwise layer on two tensors of one dtype and rank. */
const ew = (ctx: ConversionContext, a: NetTensor, b: NetTensor, op: ElementWiseOp, role: string): NetTensor => ctx.add({ kind: 'elementwise', op }, [a, b], role);

/** Refuses what TensorRT cannot compute in: float64 without truncateDouble is refused by the registry already. */
const floatOutput: CheckArgs = (node) => {
  const d = outDType(node);
  return d === 'float32' || d === 'float16' || d === 'bfloat16' || d === 'float64' ? true : `${node.target} computes in floats, got ${d}`;
};

/**
 * The complex product of two carriers. `part(t, i)` takes part i of a carrier as a [..., 1]
 * tensor: a slice for static shapes; for run-time dims a gather of index [i] on the last
 * (static, size-2) axis, which needs no shape tensor.
 */
function complexMul(part: (ctx: ConversionContext, t: NetTensor, index: 0 | 1, role: string) => NetTensor): ConverterImpl {
  return (node, ctx) => {
    const dtype = outDType(node);
    const [a, b] = alignRanks(ctx, [cast(ctx, ctx.tensor(tensorArg(node, 'self')), dtype, 'cast_a'), cast(ctx, ctx.tensor(tensorArg(node, 'other')), dtype, 'cast_b')]);
    const ar = part(ctx, a!, 0, 'a_re');
    const ai = part(ctx, a!, 1, 'a_im');
    const br = part(ctx, b!, 0, 'b_re');
    const bi = part(ctx, b!, 1, 'b_im');
    const re = ew(ctx, ew(ctx, ar, br, 'prod', 'ar_br'), ew(ctx, ai, bi, 'prod', 'ai_bi'), 'sub', 're');
    const im = ew(ctx, ew(ctx, ar, bi, 'prod', 'ar_bi'), ew(ctx, ai, br, 'prod', 'ai_br'), 'sum', 'im');
    return [concat(ctx, [re, im], a!.shape.length - 1, 'pair')];
  };
}

const slicePart = (ctx: ConversionContext, t: NetTensor, index: 0 | 1, role: string): NetTensor => sliceAxisOrSelf(ctx, t, t.shape.length - 1, index, 1, 1, role);

const gatherPart = (ctx: ConversionContext, t: NetTensor, index: 0 | 1, role: string): NetTensor =>
  ctx.add({ kind: 'gather', mode: 'default', axis: t.shape.length - 1 }, [t, ctx.constant(Tensor.from('int32', [1], [index]), ctx.name(`${role}_index`))], role);

/**
 * trt.complex_mul on real carriers [..., 2]: the parts sliced off the static last axis
 * (sizes of the other dims read at run time), re = ar·br − ai·bi, im = ar·bi + ai·br,
 * concatenated back.
 */
defineConverter(
  'trt.complex_mul',
  (node, ctx) => {
    const dtype = outDType(node);
    const [a, b] = [cast(ctx, ctx.tensor(value(node, 'self')), dtype, 'cast_a'), cast(ctx, ctx.tensor(value(node, 'other')), dtype, 'cast_b')];
    const rank = Math.max(a.shape.length, b.shape.length);
    const [x, y] = [prependOnes(ctx, a, rank - a.shape.length, 'rank_a'), prependOnes(ctx, b, rank - b.shape.length, 'rank_b')];
    const last = rank - 1;
    const part = (t: NetTensor, index: 0 | 1, role: string): NetTensor => sliceAlong(ctx, t, last, index, 1, 1, role);
    const ew = (p: NetTensor, q: NetTensor, op: 'prod' | 'sub' | 'sum', role: string): NetTensor => ctx.add({ kind: 'elementwise', op }, [p, q], role);
    const [ar, ai, br, bi] = [part(x, 0, 'a_re'), part(x, 1, 'a_im'), part(y, 0, 'b_re'), part(y, 1, 'b_im')];
    const re = ew(ew(ar, br, 'prod', 'ar_br'), ew(ai, bi, 'prod', 'ai_bi'), 'sub', 're');
    const im = ew(ew(ar, bi, 'prod', 'ar_bi'), ew(ai, br, 'prod', 'ai_br'), 'sum', 'im');
    return [ctx.add({ kind: 'concat', axis: last }, [re, im], 'pair')];
  },
  {
    shapes: 'dynamic',
    checks: [
      staticIntArgs,
      (node) => {
        const d = outDType(node);
        if (!isFloating(d)) return `${node.target} computes in floats, got ${d}`;
        const carriers = [value(node, 'self'), value(node, 'other')];
        return carriers.every((v) => v.tensorType.shape.at(-1) === 2) ? null : 'the carriers must end in a static dim of 2';
      },
    ],
  },
);

defineConverter('trt.complex_mul', complexMul(slicePart), {
  checks: [floatOutput],
  name: 'trt.complex_mul (slice, 4 prod, sub, sum, concat)',
});
defineConverter('trt.complex_mul', complexMul(gatherPart), {
  shapes: 'dynamic',
  checks: [floatOutput],
  name: 'trt.complex_mul (dynamic: gather, 4 prod, sub, sum, concat)',
});

defineConverter(
  'aten.atan2.default',
  (node, ctx) => {
    const out = outDType(node);
    // 16-bit floats are computed in float32 (their atan loses too much), then cast back.
    const dtype: DType = out === 'float16' || out === 'bfloat16' ? 'float32' : out;
    const [y, x] = alignRanks(ctx, [cast(ctx, ctx.tensor(tensorArg(node, 'self')), dtype, 'cast_y'), cast(ctx, ctx.tensor(tensorArg(node, 'other')), dtype, 'cast_x')]);
    const rank = Math.max(y!.shape.length, x!.shape.length);
    const scalar = (v: number, role: string): NetTensor => ctx.scalar(v, dtype, rank, role);
    const unary = (t: NetTensor, op: 'abs' | 'atan', role: string): NetTensor => ctx.add({ kind: 'unary', op }, [t], role);
    const select = (c: NetTensor, a: NetTensor, b: NetTensor, role: string): NetTensor => ctx.add({ kind: 'select' }, [c, a, b], role);
    const zero = scalar(0, 'zero');
    const yNegative = ew(ctx, y!, zero, 'less', 'y_neg');
    // |x| >= |y| (false when either is NaN, which then propagates through the other branch).
    const [ax, ay] = [unary(x!, 'abs', 'abs_x'), unary(y!, 'abs', 'abs_y')];
    const xDominant = ew(ctx, ew(ctx, ax, ay, 'greater', 'x_gt'), ew(ctx, ax, ay, 'equal', 'x_eq'), 'or', 'x_dominant');
    // |x| >= |y|: atan(y/x), plus ±π when x < 0 (π for y = 0).
    const turn = select(yNegative, scalar(-Math.PI, 'minus_pi'), scalar(Math.PI, 'pi'), 'turn');
    const correction = select(ew(ctx, x!, zero, 'less', 'x_neg'), turn, zero, 'correction');
    const near = ew(ctx, unary(ew(ctx, y!, x!, 'div', 'y_over_x'), 'atan', 'atan_y_over_x'), correction, 'sum', 'x_side');
    // |y| > |x|: ±π/2 − atan(x/y).
    const quarter = select(yNegative, scalar(-Math.PI / 2, 'minus_half_pi'), scalar(Math.PI / 2, 'half_pi'), 'quarter');
    const far = ew(ctx, quarter, unary(ew(ctx, x!, y!, 'div', 'x_over_y'), 'atan', 'atan_x_over_y'), 'sub', 'y_side');
    const angle = select(xDominant, near, far, 'angle');
    // atan2(0, 0) = 0 (y/x is NaN there).
    const origin = ew(ctx, ew(ctx, x!, zero, 'equal', 'x_zero'), ew(ctx, y!, zero, 'equal', 'y_zero'), 'and', 'origin');
    return [cast(ctx, select(origin, zero, angle, 'atan2'), out, 'cast_out')];
  },
  { checks: [floatOutput] },
);
