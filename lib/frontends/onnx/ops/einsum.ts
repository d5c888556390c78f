/**
 * ONNX Einsum: the composition of lib/ir/einsum.ts over the importer's values (ONNX keeps the
 * inputs' element type, as that composition does).
 */
import { composeEinsum, type EinsumBuilder } from '../../../ir/einsum';
import type { Value } from '../../../ir/graph';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

/** The importer's side of an einsum: ops emitted as IR nodes, errors naming the node. */
export function onnxEinsumBuilder(ctx: OnnxContext): EinsumBuilder<Value> {
  return {
    emit: (target, args) => ctx.emit(target, args as never),
    constant: (t, hint) => ctx.constantValue(t, hint),
    shape: (v) => v.tensorType.shape,
    dtype: (v) => v.tensorType.dtype,
    cast: (v, dtype) => ctx.cast(v, dtype),
    bad: (message) => ctx.bad(message),
    unsupported: (message) => ctx.unsupported(message),
  };
}

defineOnnxOp('Einsum', (ctx) => [composeEinsum(onnxEinsumBuilder(ctx), ctx.attrString('equation'), ctx.inputs())]);
