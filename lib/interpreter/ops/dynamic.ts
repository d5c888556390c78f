/**
 * Interpreter implementations of the `_dyn` shape-tensor ops (lib/ir/ops/dynamic.ts). Shape
 * tensors arrive as int64 tensors and are read as numbers; each op then does what its static
 * counterpart does with those numbers, so a legalized graph interprets exactly as the
 * original one.
 */
import { InvalidArgumentError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { symArithmeticDynOp } from '../../ir/ops/dynamic';
import { evaluateDim, symApply } from '../../ir/symbolic';
import { fromNumbers, readNumbers } from '../../kernels/access';
import { expand, full, reshape, slice, squeeze } from '../../kernels/shape';
import { Tensor } from '../../ir/tensor';
import { defineImpl, type ImplContext, type RuntimeArg } from '../registry';

const T = (a: RuntimeArg | undefined): Tensor => a as Tensor;

/** The values of a shape tensor as numbers. */
const values = (a: RuntimeArg | undefined): number[] => Array.from(readNumbers(T(a)));

/** The single value of a 0-D (or one-element) shape tensor. */
function one(a: RuntimeArg | undefined, what: string): number {
  const v = values(a);
  if (v.length !== 1) throw new InvalidArgumentError(`${what} must hold one value, got ${v.length}`);
  return v[0]!;
}

function axisOf(dim: number, rank: number, what: string): number {
  const a = dim < 0 ? dim + rank : dim;
  if (!(a >= 0 && a < Math.max(rank, 1))) throw new InvalidArgumentError(`${what}: dim ${dim} is out of range for rank ${rank}`);
  return a;
}

const outDType = (ctx: ImplContext): DType => ctx.node.outputs[0]!.tensorType.dtype;

defineImpl('trt.size_dyn', (args) => {
  const t = T(args.self);
  return [Tensor.scalar('int64', t.shape[axisOf(args.dim as number, t.rank, 'size_dyn')]!)];
});

defineImpl('trt.shape_dyn', (args) => [Tensor.from('int64', [T(args.self).rank], T(args.self).shape)]);

for (const target of ['trt.sym_add_dyn', 'trt.sym_sub_dyn', 'trt.sym_mul_dyn', 'trt.sym_floordiv_dyn', 'trt.sym_mod_dyn', 'trt.sym_max_dyn', 'trt.sym_min_dyn']) {
  const op = symArithmeticDynOp(target)!;
  defineImpl(target, (args) => {
    const a = one(args.a, `${target} a`);
    const b = one(args.b, `${target} b`);
    if ((op === 'floordiv' || op === 'mod') && b === 0) throw new InvalidArgumentError(`${target}: division by zero`);
    return [Tensor.scalar('int64', evaluateDim(symApply(op, a, b), {}))];
  });
}

defineImpl('trt.sym_list_dyn', (args) => {
  const all = (args.items as RuntimeArg[]).flatMap((t) => values(t));
  return [Tensor.from('int64', [all.length], all)];
});

defineImpl('trt.reshape_dyn', (args) => [reshape(T(args.self), values(args.shape))]);

defineImpl('trt.expand_dyn', (args) => [expand(T(args.self), values(args.size))]);

defineImpl('trt.slice_dyn', (args) => {
  const t = T(args.self);
  const axis = axisOf(args.dim as number, t.rank, 'slice_dyn');
  const start = one(args.start, 'slice_dyn start');
  const length = one(args.length, 'slice_dyn length');
  const step = args.step as number;
  const n = t.shape[axis]!;
  if (length < 0 || start < 0 || (length > 0 && start + (length - 1) * step >= n)) {
    throw new InvalidArgumentError(`slice_dyn: start ${start}, length ${length}, step ${step} do not fit dim ${axis} of size ${n}`);
  }
  return [slice(t, axis, start, length === 0 ? start : start + (length - 1) * step + 1, step)];
});

defineImpl('trt.select_dyn', (args) => {
  const t = T(args.self);
  const axis = axisOf(args.dim as number, t.rank, 'select_dyn');
  const index = one(args.index, 'select_dyn index');
  if (!(index >= 0 && index < t.shape[axis]!)) throw new InvalidArgumentError(`select_dyn: index ${index} is out of range for a dim of size ${t.shape[axis]}`);
  return [squeeze(slice(t, axis, index, index + 1), [axis])];
});

defineImpl('trt.full_dyn', (args, ctx) => {
  const fill = args.fill_value;
  return [full(values(args.size), typeof fill === 'boolean' ? fill : (fill as number), outDType(ctx))];
});

defineImpl('trt.arange_dyn', (args, ctx) => {
  const start = one(args.start, 'arange_dyn start');
  const length = one(args.length, 'arange_dyn length');
  const step = args.step as number;
  return [fromNumbers(outDType(ctx), [length], Array.from({ length }, (_, i) => start + i * step))];
});
