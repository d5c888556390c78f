/**
 * SymInt ops: reading a tensor's size, integer arithmetic on sizes, and turning sizes into
 * an int64 tensor. These are the shape plumbing of dynamic graphs (torch.export emits
 * `sym_size` and Python operators; the ONNX frontend folds Shape subgraphs into them).
 */
import { symIntType, tensorType } from '../graph';
import { symApply, type SymOp } from '../symbolic';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';

defineOp('aten.sym_size.int(Tensor self, int dim) -> SymInt', (ctx) => {
  const shape = ctx.tensor('self').shape;
  return [symIntType(shape[normAxis(ctx, ctx.int('dim'), shape.length)]!)];
});

const arithmetic: Record<string, SymOp> = {
  'sym.add': 'add',
  'sym.sub': 'sub',
  'sym.mul': 'mul',
  'sym.floordiv': 'floordiv',
  'sym.mod': 'mod',
  'sym.max': 'max',
  'sym.min': 'min',
};

for (const [name, op] of Object.entries(arithmetic)) {
  defineOp(`${name}(SymInt a, SymInt b) -> SymInt`, (ctx) => {
    const a = ctx.dim('a');
    const b = ctx.dim('b');
    if ((op === 'floordiv' || op === 'mod') && b === 0) ctx.fail('division by zero');
    return [symIntType(symApply(op, a, b))];
  });
}

/** The SymOp a `sym.*` target computes. */
export function symOpOf(target: string): SymOp | undefined {
  return arithmetic[target];
}

defineOp('trt.sym_tensor(SymInt[] values, bool scalar=False, ScalarType dtype=int64) -> Tensor', (ctx) => {
  const values = ctx.dims('values');
  const scalar = ctx.bool('scalar');
  if (scalar && values.length !== 1) ctx.fail(`a scalar needs exactly one value, got ${values.length}`);
  const dtype = ctx.dtype('dtype') ?? 'int64';
  if (dtype !== 'int64' && dtype !== 'int32') ctx.fail(`dtype must be int64 or int32, got ${dtype}`);
  return [tensorType(dtype, scalar ? [] : [values.length])];
});
