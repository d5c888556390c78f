/**
 * Converters of the ops whose output size only a run tells (lib/ir/ops/data-dependent.ts).
 * `trt.nonzero` becomes TensorRT's nonzero layer, whose count is a run-time (-1) dim of the
 * Network: the converter declares `dataDependent`, and compile() puts the node in an engine
 * segment only on a backend whose engines hold such sizes (SelectionSettings.dataDependentSizes).
 * `trt.compress` is a nonzero of its condition and a gather of those positions. Unique and
 * NonMaxSuppression have no converter and run in fallback segments.
 */
import { optNum, value } from '../impl/args';
import { axisOf, elementwise, reshape } from '../impl/basic';
import { defineConverter } from '../define';
import { NONZERO_TYPES } from '../../network/shape-inference';

/**
 * trt.nonzero: one nonzero layer. TensorRT's takes float32, float16, int32 and bool; other
 * types become one of those without changing which elements are zero: bfloat16 → float32 and
 * int8 / uint8 → int32 are exact casts, int64 goes through a comparison with 0 (a cast to
 * int32 would wrap 2^32 to 0). It reads the input's rank only, so run-time input dims are fine.
 */
defineConverter(
  'trt.nonzero',
  (node, ctx) => {
    const self = value(node, 'self');
    let x = ctx.tensor(self);
    if (x.dtype === 'bfloat16') x = ctx.add({ kind: 'cast', to: 'float32' }, [x], 'as_float32');
    else if (x.dtype === 'int8' || x.dtype === 'uint8') x = ctx.add({ kind: 'cast', to: 'int32' }, [x], 'as_int32');
    else if (!NONZERO_TYPES.includes(x.dtype)) {
      const zero = elementwise(ctx, x, ctx.scalar(0, x.dtype, x.shape.length, 'zero'), 'equal', x.dtype, 'is_zero');
      x = ctx.add({ kind: 'unary', op: 'not' }, [zero], 'is_nonzero');
    }
    return [ctx.add({ kind: 'nonzero' }, [x])];
  },
  {
    shapes: 'any',
    dataDependent: true,
    checks: [
      // A 0-d input: the IR (and TensorRT) give [0, N], ONNX Runtime and NumPy [1, N]; the interpreter keeps the IR's meaning.
      (node) => (value(node, 'self').tensorType.shape.length === 0 ? 'a 0-d input runs in the interpreter (its index rows are the IR\'s own: none)' : null),
    ],
  },
);

/**
 * trt.compress (ONNX Compress with a computed condition): the positions of the true elements
 * of the 1-D condition (a nonzero layer, [1, N], flattened to [N]) gathered along `axis` of
 * self, or of self flattened when there is none: TensorRT's own recipe (NvInfer.h, INonZeroLayer).
 * A condition shorter than the axis selects among its first slices only; a true element past
 * the axis is an index out of range, refused at run time as every gather's.
 */
defineConverter(
  'trt.compress',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = optNum(node, 'axis');
    const x = axis === null ? reshape(ctx, ctx.tensor(self), [-1], 'flat') : ctx.tensor(self);
    const a = axis === null ? 0 : axisOf(ctx, axis, x.shape.length);
    const positions = ctx.add({ kind: 'nonzero' }, [ctx.tensor(value(node, 'condition'))], 'positions');
    const index = reshape(ctx, positions, [-1], 'indices');
    return [ctx.add({ kind: 'gather', mode: 'default', axis: a }, [x, index])];
  },
  { shapes: 'any', dataDependent: true },
);
