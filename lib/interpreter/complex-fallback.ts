/**
 * Which ops the CPU interpreter runs on complex values. The complex lowering
 * (lib/lowering/complex/rewrite.ts) sends a complex op that has no rewrite rule to a fallback
 * segment only when it is listed here; any other such op is an E_UNSUPPORTED_OP at compile
 * time, so compile() never accepts a graph whose fallback segment would fail (or compute
 * garbage) when it runs.
 *
 * The list is explicit rather than "whatever the kernels do not refuse": a kernel that read a
 * complex tensor's interleaved (real, imaginary) slots as independent real numbers would run
 * and be wrong. Every entry is checked against an independent reference by
 * test/interpreter/complex-fallback.test.ts, which also checks that every other op the IR
 * accepts complex values for is refused.
 */
import { isComplex, type DType } from '../ir/dtype';
import { Value, type Arg, type Node } from '../ir/graph';

/** Why the interpreter cannot run this form of its op on complex values (null: it can). */
export type ComplexFallbackCheck = (node: Node) => string | null;

const isComplexArg = (a: Arg | undefined): boolean => a instanceof Value && a.type.kind === 'tensor' && isComplex(a.type.dtype);

/** Reductions and casts must not turn complex values into real ones through a dtype argument (PyTorch refuses that too). */
const staysComplex: ComplexFallbackCheck = (node) => {
  const dtype = node.args.dtype;
  if (typeof dtype !== 'string' || isComplex(dtype as DType)) return null;
  if (!Object.values(node.args).some(isComplexArg)) return null;
  return `${node.target} of complex values into dtype ${dtype} would drop the imaginary part (PyTorch refuses it); take real() or abs() first`;
};

/** Ops whose every form runs on complex values. */
const ANY_FORM: readonly string[] = [
  // Complex math (lib/kernels/complex.ts: principal branches, as torch's CPU kernels).
  'aten.sqrt.default',
  'aten.rsqrt.default',
  'aten.log.default',
  'aten.log1p.default',
  'aten.sin.default',
  'aten.cos.default',
  'aten.tan.default',
  'aten.tanh.default',
  'aten.sigmoid.default',
  'aten.pow.Tensor_Tensor',
  'aten.pow.Tensor_Scalar',
  'aten.pow.Scalar',
  // Predicates and truth values (either part NaN / infinite / nonzero).
  'aten.isnan.default',
  'aten.isinf.default',
  'aten.logical_not.default',
  'aten.logical_and.default',
  'aten.logical_or.default',
  'aten.logical_xor.default',
  // Filled tensors of a complex dtype (a real fill value gets a zero imaginary part).
  'aten.zeros.default',
  'aten.ones.default',
  'aten.full.default',
  'aten.zeros_like.default',
  'aten.ones_like.default',
  'aten.full_like.default',
  'aten.new_zeros.default',
  'aten.new_ones.default',
  'aten.new_full.default',
  'aten.zero.default',
  'aten.fill.Scalar',
  'aten.scalar_tensor.default',
  // Data movement: the kernels copy (or add) both slots of each element.
  'aten.expand_as.default',
  'aten.swapaxes.default',
  'aten.swapdims.default',
  'aten.repeat_interleave.self_int',
  'aten.gather.default',
  'aten.scatter.src',
  'aten.scatter.value',
  'aten.scatter_add.default',
  'aten.slice_scatter.default',
  'aten.select_scatter.default',
  'aten.index_put.default',
  'aten.constant_pad_nd.default',
  'aten.pad.default',
  'aten.embedding.default',
  'aten.roll.default',
  'aten.diff.default',
  'aten.dropout.default',
  'aten.to.dtype_layout',
  // Linear algebra with complex products (lib/kernels/linalg.ts, two slots per element).
  'aten.linear.default',
  'aten.addmm.default',
];

/**
 * The ops the interpreter runs on complex values, with a check for those that it runs only in
 * some forms. Ops with a rewrite rule appear here only for the forms their rule refuses
 * (sum/mean/prod/cumsum with a dtype argument, roll without dims, a nonzero pad value).
 */
export const INTERPRETER_COMPLEX_OPS: ReadonlyMap<string, ComplexFallbackCheck | null> = new Map<string, ComplexFallbackCheck | null>([
  ...ANY_FORM.map((target): [string, null] => [target, null]),
  ...['aten.sum.default', 'aten.sum.dim_IntList', 'aten.mean.default', 'aten.mean.dim', 'aten.prod.default', 'aten.prod.dim_int', 'aten.cumsum.default'].map(
    (target): [string, ComplexFallbackCheck] => [target, staysComplex],
  ),
  [
    'aten.fill.Tensor',
    (node) =>
      isComplexArg(node.args.value) && !isComplexArg(node.args.self)
        ? 'filling a real tensor with a complex value would drop its imaginary part (PyTorch refuses a nonzero one)'
        : null,
  ],
  [
    'aten.div.Scalar_mode',
    (node) => (node.args.rounding_mode == null ? null : `division with rounding mode ${JSON.stringify(node.args.rounding_mode)} is not defined for complex values`),
  ],
  [
    'aten.scatter.reduce',
    (node) => (node.args.reduce === 'add' ? null : `scatter with reduce=${JSON.stringify(node.args.reduce)} on complex values is not implemented by the CPU interpreter`),
  ],
]);

/**
 * Null when the CPU interpreter runs `node` (which reads or produces complex values) on its
 * complex values, so that a fallback segment can run it; else why not.
 */
export function interpreterComplexRefusal(node: Node): string | null {
  const check = INTERPRETER_COMPLEX_OPS.get(node.target);
  if (check === undefined) return `the CPU interpreter (fallback segments) has no complex implementation of ${node.target}`;
  return check === null ? null : check(node);
}
