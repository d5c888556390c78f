/**
 * `_dyn` ops: shape-tensor variants of ops whose int / int[] arguments may depend on a
 * run-time (symbolic) dim (docs/dynamic-shapes.md). Where the static op takes a SymInt or SymInt[], its
 * `_dyn` variant takes an int64 *shape tensor* instead, so that a converter never receives
 * an int that is really a run-time value: its schema says Tensor, and it gets a Tensor.
 *
 *   trt.size_dyn(Tensor self, int dim) -> Tensor            aten.sym_size.int, as a 0-D int64 tensor
 *   trt.shape_dyn(Tensor self) -> Tensor                    every dim, as a 1-D int64 tensor
 *   trt.sym_{add,sub,mul,floordiv,mod,max,min}_dyn(Tensor a, Tensor b) -> Tensor
 *                                                          SymInt arithmetic on 0-D int64 tensors
 *   trt.sym_list_dyn(Tensor[] items) -> Tensor              a SymInt[] as a 1-D int64 tensor
 *   trt.reshape_dyn(Tensor self, Tensor shape) -> Tensor    view / reshape / _unsafe_view / unflatten
 *   trt.expand_dyn(Tensor self, Tensor size) -> Tensor      expand (-1 keeps a dim)
 *   trt.slice_dyn(Tensor self, int dim, Tensor start, Tensor length, int step=1) -> Tensor
 *                                                          slice / narrow with normalized bounds
 *   trt.select_dyn(Tensor self, int dim, Tensor index) -> Tensor
 *   trt.full_dyn(Tensor size, Scalar fill_value, ScalarType dtype) -> Tensor
 *   trt.arange_dyn(Tensor start, Tensor length, Scalar step, ScalarType dtype) -> Tensor
 *
 * Slice bounds reach trt.slice_dyn already normalized (PyTorch's negative bounds and the
 * INT64_MAX sentinel resolved, clamped, turned into a start and a length) as shape
 * arithmetic, by the legalization pass (lib/legalization/).
 *
 * Shapes stay exact and symbolic: {@link shapeTensorDims} traces a shape tensor back through
 * these ops and constants to the symbolic dims it holds, so inference gives `[s0, 4, 16]`,
 * not "unknown".
 */
import { isInteger } from '../dtype';
import { tensorType, Value, type TensorType } from '../graph';
import { symFloorDiv, symMax, symMin, symMod, symSub, isStatic, type Dim, type SymOp } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';
import { exactMax, exactMin, expandShape, productDims, reshapeShape, sumDims } from './shape';

/** The `_dyn` SymInt-arithmetic op for each SymInt op, and back. */
export const SYM_ARITHMETIC_DYN: Readonly<Record<SymOp, string>> = {
  add: 'trt.sym_add_dyn',
  sub: 'trt.sym_sub_dyn',
  mul: 'trt.sym_mul_dyn',
  floordiv: 'trt.sym_floordiv_dyn',
  mod: 'trt.sym_mod_dyn',
  max: 'trt.sym_max_dyn',
  min: 'trt.sym_min_dyn',
};

const ARITHMETIC_OF = new Map<string, SymOp>(Object.entries(SYM_ARITHMETIC_DYN).map(([op, target]) => [target, op as SymOp]));

/** The SymOp a `trt.sym_*_dyn` target computes (undefined for other targets). */
export function symArithmeticDynOp(target: string): SymOp | undefined {
  return ARITHMETIC_OF.get(target);
}

/** `a op b` with the same canonical forms shape inference uses (min/max decided by the symbol ranges when possible). */
export function applyDimOp(ctx: InferContext | null, op: SymOp, a: Dim, b: Dim): Dim {
  switch (op) {
    case 'add':
      return sumDims([a, b]);
    case 'sub':
      return sumDims([a, symSub(0, b)]);
    case 'mul':
      return productDims([a, b]);
    case 'floordiv':
      return symFloorDiv(a, b);
    case 'mod':
      return symMod(a, b);
    case 'max':
      return ctx ? exactMax(ctx, a, b) : symMax(a, b);
    case 'min':
      return ctx ? exactMin(ctx, a, b) : symMin(a, b);
  }
}

/**
 * The symbolic values a shape tensor holds, traced through constants and the `_dyn` shape
 * ops (and int casts of them); null when they cannot be traced (a data-dependent tensor).
 * A 0-D tensor gives one value. `ctx` lets min/max use the graph's symbol ranges.
 */
export function shapeTensorDims(v: Value, ctx: InferContext | null = null): Dim[] | null {
  if (v.type.kind !== 'tensor') return null;
  const node = v.producer;
  if (node.kind === 'constant') {
    const t = node.tensor;
    if (t === undefined || !isInteger(t.dtype) || t.rank > 1) return null;
    return Array.from(t.data as ArrayLike<number | bigint>, Number);
  }
  if (node.kind !== 'call') return null;
  const arg = (name: string): Value | null => {
    const a = node.args[name];
    return a instanceof Value ? a : null;
  };
  const op = symArithmeticDynOp(node.target);
  if (op !== undefined) {
    const a = arg('a');
    const b = arg('b');
    const x = a && shapeTensorDims(a, ctx);
    const y = b && shapeTensorDims(b, ctx);
    if (!x || !y || x.length !== 1 || y.length !== 1) return null;
    return [applyDimOp(ctx, op, x[0]!, y[0]!)];
  }
  switch (node.target) {
    case 'trt.size_dyn': {
      const self = arg('self');
      const dim = node.args.dim;
      if (!self || typeof dim !== 'number') return null;
      const shape = self.tensorType.shape;
      const axis = dim < 0 ? dim + shape.length : dim;
      return axis >= 0 && axis < shape.length ? [shape[axis]!] : null;
    }
    case 'trt.shape_dyn': {
      const self = arg('self');
      return self ? [...self.tensorType.shape] : null;
    }
    case 'trt.sym_list_dyn': {
      const items = node.args.items;
      if (!Array.isArray(items)) return null;
      const out: Dim[] = [];
      for (const item of items) {
        const d = item instanceof Value ? shapeTensorDims(item, ctx) : null;
        if (d === null) return null;
        out.push(...d);
      }
      return out;
    }
    case 'aten._to_copy.default':
    case 'aten.to.dtype': {
      const self = arg('self');
      return self && isInteger(v.tensorType.dtype) ? shapeTensorDims(self, ctx) : null;
    }
    default:
      return null;
  }
}

/** A shape-tensor argument: int64 (or int32), 0-D or 1-D with a static length. */
function shapeArg(ctx: InferContext, name: string, rank: 0 | 1 | 'any'): { type: TensorType; dims: Dim[] } {
  const t = ctx.tensor(name);
  if (t.dtype !== 'int64' && t.dtype !== 'int32') ctx.fail(`${name} must be an int64 shape tensor, got ${t.dtype}`);
  if (rank !== 'any' && t.shape.length !== rank) ctx.fail(`${name} must be a ${rank}-D shape tensor, got rank ${t.shape.length}`);
  if (t.shape.length > 1 || (t.shape.length === 1 && !isStatic(t.shape[0]!))) ctx.fail(`${name} must be a 0-D or 1-D shape tensor of static length`);
  const dims = shapeTensorDims(ctx.arg(name) as Value, ctx);
  if (dims === null) ctx.fail(`the values of ${name} cannot be traced to sizes (a shape tensor must come from _dyn shape ops and constants)`);
  return { type: t, dims };
}

defineOp('trt.size_dyn(Tensor self, int dim) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  if (self.shape.length === 0) ctx.fail('a 0-D tensor has no dims');
  return [tensorType('int64', [])];
});

defineOp('trt.shape_dyn(Tensor self) -> Tensor', (ctx) => [tensorType('int64', [ctx.tensor('self').shape.length])]);

for (const [op, target] of Object.entries(SYM_ARITHMETIC_DYN)) {
  defineOp(`${target}(Tensor a, Tensor b) -> Tensor`, (ctx) => {
    const a = shapeArg(ctx, 'a', 0);
    const b = shapeArg(ctx, 'b', 0);
    if ((op === 'floordiv' || op === 'mod') && b.dims[0] === 0) ctx.fail('division by zero');
    return [tensorType('int64', [])];
  });
}

defineOp('trt.sym_list_dyn(Tensor[] items) -> Tensor', (ctx) => {
  const items = ctx.tensors('items');
  let n = 0;
  items.forEach((t, i) => {
    if (t.dtype !== 'int64') ctx.fail(`items[${i}] must be int64, got ${t.dtype}`);
    if (t.shape.length > 1 || (t.shape.length === 1 && !isStatic(t.shape[0]!))) ctx.fail(`items[${i}] must be 0-D or 1-D of static length`);
    n += t.shape.length === 0 ? 1 : (t.shape[0] as number);
  });
  return [tensorType('int64', [n])];
});

defineOp('trt.reshape_dyn(Tensor self, Tensor shape) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const { dims } = shapeArg(ctx, 'shape', 1);
  return [tensorType(self.dtype, reshapeShape(ctx, self.shape, dims))];
});

defineOp('trt.expand_dyn(Tensor self, Tensor size) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const { dims } = shapeArg(ctx, 'size', 1);
  return [tensorType(self.dtype, expandShape(ctx, self.shape, dims))];
});

defineOp('trt.slice_dyn(Tensor self, int dim, Tensor start, Tensor length, int step=1) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const axis = normAxis(ctx, ctx.int('dim'), self.shape.length);
  shapeArg(ctx, 'start', 0);
  const { dims } = shapeArg(ctx, 'length', 0);
  if (ctx.int('step') <= 0) ctx.fail(`step must be positive, got ${ctx.int('step')}`);
  const shape = [...self.shape];
  shape[axis] = dims[0]!;
  return [tensorType(self.dtype, shape)];
});

defineOp('trt.select_dyn(Tensor self, int dim, Tensor index) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  if (self.shape.length === 0) ctx.fail('select() cannot be applied to a 0-dim tensor');
  const axis = normAxis(ctx, ctx.int('dim'), self.shape.length);
  shapeArg(ctx, 'index', 0);
  return [tensorType(self.dtype, self.shape.filter((_, i) => i !== axis))];
});

defineOp('trt.full_dyn(Tensor size, Scalar fill_value, ScalarType dtype) -> Tensor', (ctx) => {
  const { dims } = shapeArg(ctx, 'size', 1);
  if (dims.some((d) => isStatic(d) && d < 0)) ctx.fail(`size has a negative dim`);
  return [tensorType(ctx.dtype('dtype')!, dims)];
});

defineOp('trt.arange_dyn(Tensor start, Tensor length, Scalar step, ScalarType dtype) -> Tensor', (ctx) => {
  shapeArg(ctx, 'start', 0);
  const { dims } = shapeArg(ctx, 'length', 0);
  if (ctx.float('step') === 0) ctx.fail('step must be non-zero');
  return [tensorType(ctx.dtype('dtype')!, [dims[0]!])];
});
