/**
 * Ops the complex lowering pass (lib/lowering/complex/) rewrites complex arithmetic into.
 * TensorRT has no complex type, so a complex tensor of shape [...] travels as a real
 * "carrier" tensor of shape [..., 2] (real part, imaginary part: `view_as_real`'s layout);
 * these ops compute on carriers with real arithmetic and have their own converters
 * (lib/conversion/converters/complex.ts) and interpreter implementations
 * (lib/interpreter/ops/complex.ts).
 *
 * - `trt.complex_mul(a, b)`: the complex product of two carriers, broadcasting over the
 *   leading dims (NumPy rules) while the trailing 2 stays: `view_as_real(view_as_complex(a) *
 *   view_as_complex(b))`.
 * - `aten.atan2.default(self, other)`: atan2(self, other) elementwise (real tensors), the
 *   phase of a complex number (`angle`) once it is split into parts.
 */
import { isComplex, isFloating, promoteTypes, type DType } from '../dtype';
import { tensorType, type TensorType } from '../graph';
import { formatShape } from '../symbolic';
import type { InferContext } from './infer-context';
import { floatResultType, promoteOperands, tensorOperand } from './pointwise';
import { defineOp } from './registry';
import { broadcastDims } from './shape-rules';

/** A carrier argument: float32 or float64 with a last dim of exactly 2. */
function carrier(ctx: InferContext, name: string): TensorType {
  const t = ctx.tensor(name);
  if (t.dtype !== 'float32' && t.dtype !== 'float64') ctx.fail(`argument ${name} must be a float32 or float64 carrier of complex values, got ${t.dtype}`);
  if (t.shape.length === 0 || t.shape[t.shape.length - 1] !== 2) {
    ctx.fail(`argument ${name} must have a last dimension of 2 (real, imaginary), got shape ${formatShape(t.shape)}`);
  }
  return t;
}

defineOp('trt.complex_mul(Tensor self, Tensor other) -> Tensor', (ctx) => {
  const a = carrier(ctx, 'self');
  const b = carrier(ctx, 'other');
  const lead = broadcastDims(ctx, a.shape.slice(0, -1), b.shape.slice(0, -1));
  return [tensorType(promoteTypes(a.dtype, b.dtype), [...lead, 2])];
});

defineOp('aten.atan2.default(Tensor self, Tensor other) -> Tensor', (ctx) => {
  const y = ctx.tensor('self');
  const x = ctx.tensor('other');
  const dtype: DType = promoteOperands(ctx, [tensorOperand(y), tensorOperand(x)]);
  if (isComplex(dtype)) ctx.fail(`atan2 is not defined for complex tensors (${dtype})`);
  const out = floatResultType(dtype);
  if (!isFloating(out)) ctx.fail(`atan2 needs real operands, got ${y.dtype} and ${x.dtype}`);
  return [tensorType(out, broadcastDims(ctx, y.shape, x.shape))];
});
