/** Interpreter implementations of the SymInt ops (lib/ir/ops/sym.ts). */
import { symOpOf } from '../../ir/ops/sym';
import { evaluateDim, symApply } from '../../ir/symbolic';
import { InvalidArgumentError } from '../../errors';
import { Tensor } from '../../ir/tensor';
import { defineImpl } from '../registry';

defineImpl('aten.sym_size.int', (args) => {
  const t = args.self as Tensor;
  const dim = args.dim as number;
  const axis = dim < 0 ? dim + t.rank : dim;
  if (axis < 0 || axis >= t.rank) throw new InvalidArgumentError(`sym_size: dim ${dim} is out of range for rank ${t.rank}`);
  return [t.shape[axis]!];
});

for (const target of ['sym.add', 'sym.sub', 'sym.mul', 'sym.floordiv', 'sym.mod', 'sym.max', 'sym.min']) {
  const op = symOpOf(target)!;
  defineImpl(target, (args) => [evaluateDim(symApply(op, args.a as number, args.b as number), {})]);
}

defineImpl('trt.sym_tensor', (args) => {
  const values = args.values as number[];
  const dtype = (args.dtype as 'int64' | 'int32' | null) ?? 'int64';
  return [Tensor.from(dtype, args.scalar ? [] : [values.length], values)];
});
