/**
 * The translation map of dynamic legalization: for each op whose int / int[] arguments may
 * depend on a symbol, the `_dyn` variant (lib/ir/ops/dynamic.ts) that takes a shape tensor
 * there, when the rewrite applies, and how to build it. The legalization pass
 * (./legalize.ts) applies these rules to TensorRT segments; ops with SymInt arguments and no
 * rule here are what E_DYNAMIC_UNSUPPORTED lists.
 *
 * Builders get shape tensors from a {@link DynBuilder}: `scalar(d)` and `list(dims)` turn
 * symbolic dims (`s0`, `s0*4`, `min(s0, 2048)`) into `trt.size_dyn` reads plus
 * `trt.sym_*_dyn` arithmetic, and static ints into int64 constants (the "freeze" helper).
 * Slice bounds are normalized first with the same exact rules shape inference uses
 * (negative bounds count from the end, INT64_MAX means "to the end", then clamping): the
 * resulting start and length expressions are what becomes shape arithmetic.
 */
import { Value, type Arg, type Graph, type Node } from '../ir/graph';
import type { InferContext } from '../ir/ops/infer-context';
import { sliceExtent, sumDims } from '../ir/ops/shape';
import { isStatic, type Dim } from '../ir/symbolic';

/** What a rule's builder uses to make shape tensors and nodes (placed before the node being rewritten). */
export interface DynBuilder {
  readonly graph: Graph;
  /** A 0-D int64 shape tensor computing `d` (a constant when static). */
  scalar(d: Dim): Value;
  /** A 1-D int64 shape tensor of `dims` (static runs frozen into constants). */
  list(dims: readonly Dim[]): Value;
  /** The freeze helper: static ints as an int64 shape tensor (0-D when `scalar`). */
  freeze(values: readonly number[], scalar: boolean): Value;
  /** Adds a call node (checked against its schema; output types inferred). */
  call(target: string, args: Record<string, Arg>): Node;
  /** An inference context for `node`, with the graph's symbol ranges (exact min/max). */
  inferContext(node: Node): InferContext;
}

export interface DynamicRule {
  /** The op the node becomes (for reports). */
  variant: string;
  /** The arguments of `node` that need a shape tensor; empty when the static op is fine. */
  needs(node: Node): string[];
  /** Why this variant cannot take `node` (a run-time step, say), or null. */
  refuse?(node: Node): string | null;
  /** Builds the replacement: one value per node output, of the same types. */
  build(node: Node, b: DynBuilder): Value[];
}

/** True when `a` is, or holds, a SymInt value. */
export function holdsSymInt(a: Arg | undefined): boolean {
  if (a instanceof Value) return a.type.kind === 'symint';
  return Array.isArray(a) && a.some(holdsSymInt);
}

/** Names of the arguments of `node` holding SymInt values (run-time ints). */
export function symIntArgs(node: Node): string[] {
  return Object.entries(node.args)
    .filter(([, a]) => holdsSymInt(a))
    .map(([name]) => name);
}

/** An int or SymInt argument as a dim. */
export function dimOfArg(a: Arg): Dim {
  if (typeof a === 'number') return a;
  if (typeof a === 'boolean') return Number(a);
  if (a instanceof Value && a.type.kind === 'symint') return a.type.expr;
  throw new TypeError(`expected an int or a SymInt, got ${String(a)}`);
}

/** An int[] / SymInt[] argument as dims. */
export function dimsOfArg(a: Arg): Dim[] {
  return (Array.isArray(a) ? a : [a]).map(dimOfArg);
}

const self = (node: Node): Value => node.args.self as Value;

/** The size of dim `dim` of `self`. */
function dimSize(node: Node): Dim {
  const shape = self(node).tensorType.shape;
  const d = node.args.dim as number;
  return shape[d < 0 ? d + shape.length : d]!;
}

const normalizedAxis = (node: Node): number => {
  const rank = self(node).tensorType.shape.length;
  const d = node.args.dim as number;
  return d < 0 ? d + rank : d;
};

/** Refuses int8/uint8 data (TensorRT moves them only as quantized / I/O types). */
function quantized(node: Node): string | null {
  for (const v of [...node.inputValues(), ...node.outputs]) {
    if (v.type.kind === 'tensor' && (v.type.dtype === 'int8' || v.type.dtype === 'uint8')) return `%${v.name} is ${v.type.dtype}, which TensorRT does not move`;
  }
  return null;
}

/** A rule whose only trigger is SymInt values in `args`. */
function onSymInts(args: readonly string[]): (node: Node) => string[] {
  return (node) => args.filter((a) => holdsSymInt(node.args[a]));
}

const RESHAPE: DynamicRule = {
  variant: 'trt.reshape_dyn',
  needs: onSymInts(['size', 'shape']),
  refuse: quantized,
  build: (node, b) => {
    const size = node.args.size ?? node.args.shape;
    return [b.call('trt.reshape_dyn', { self: self(node), shape: b.list(dimsOfArg(size!)) }).output];
  },
};

const UNFLATTEN: DynamicRule = {
  variant: 'trt.reshape_dyn',
  needs: onSymInts(['sizes']),
  refuse: quantized,
  build: (node, b) => [b.call('trt.reshape_dyn', { self: self(node), shape: b.list(node.outputs[0]!.tensorType.shape) }).output],
};

const EXPAND: DynamicRule = {
  variant: 'trt.expand_dyn',
  needs: onSymInts(['size']),
  refuse: quantized,
  build: (node, b) => [b.call('trt.expand_dyn', { self: self(node), size: b.list(dimsOfArg(node.args.size!)) }).output],
};

/** slice / ONNX slice: SymInt bounds, or any bound on a run-time dim (its normalization depends on the size). */
function sliceRule(startName: string, endName: string): DynamicRule {
  return {
    variant: 'trt.slice_dyn',
    needs: (node) => {
      const sym = onSymInts([startName, endName, 'step'])(node);
      if (sym.length > 0) return sym;
      return isStatic(dimSize(node)) ? [] : [startName, endName];
    },
    refuse: (node) => {
      if (holdsSymInt(node.args.step)) return 'trt.slice_dyn takes a static step';
      if (!((node.args.step as number) > 0)) return `trt.slice_dyn takes a positive step, got ${String(node.args.step)}`;
      return quantized(node);
    },
    build: (node, b) => {
      const get = (name: string): Dim | null => (node.args[name] === null || node.args[name] === undefined ? null : dimOfArg(node.args[name]!));
      const step = node.args.step as number;
      const { start, length } = sliceExtent(b.inferContext(node), dimSize(node), get(startName), get(endName), step);
      return [
        b.call('trt.slice_dyn', { self: self(node), dim: normalizedAxis(node), start: b.scalar(start), length: b.scalar(length), step }).output,
      ];
    },
  };
}

/** A static negative index on a run-time dim: n + index. */
function fromEnd(node: Node, name: string): Dim {
  const x = dimOfArg(node.args[name]!);
  return isStatic(x) && x < 0 ? sumDims([dimSize(node), x]) : x;
}

const negativeOnRuntimeDim = (node: Node, name: string): boolean => {
  const x = node.args[name];
  return typeof x === 'number' && x < 0 && !isStatic(dimSize(node));
};

const NARROW: DynamicRule = {
  variant: 'trt.slice_dyn',
  needs: (node) => {
    const sym = onSymInts(['start', 'length'])(node);
    return sym.length > 0 ? sym : negativeOnRuntimeDim(node, 'start') ? ['start'] : [];
  },
  refuse: quantized,
  build: (node, b) => [
    b.call('trt.slice_dyn', {
      self: self(node),
      dim: normalizedAxis(node),
      start: b.scalar(fromEnd(node, 'start')),
      length: b.scalar(dimOfArg(node.args.length!)),
      step: 1,
    }).output,
  ],
};

const SELECT: DynamicRule = {
  variant: 'trt.select_dyn',
  needs: (node) => {
    const sym = onSymInts(['index'])(node);
    return sym.length > 0 ? sym : negativeOnRuntimeDim(node, 'index') ? ['index'] : [];
  },
  refuse: quantized,
  build: (node, b) => [b.call('trt.select_dyn', { self: self(node), dim: normalizedAxis(node), index: b.scalar(fromEnd(node, 'index')) }).output],
};

/** full / zeros / ones / new_*: the size becomes a shape tensor; the fill value must be static. */
function fullRule(fill: (node: Node) => Arg): DynamicRule {
  return {
    variant: 'trt.full_dyn',
    needs: onSymInts(['size']),
    refuse: (node) => (holdsSymInt(fill(node)) ? 'trt.full_dyn takes a static fill value' : null),
    build: (node, b) => [
      b.call('trt.full_dyn', { size: b.list(dimsOfArg(node.args.size!)), fill_value: fill(node), dtype: node.outputs[0]!.tensorType.dtype }).output,
    ],
  };
}

/** arange with SymInt bounds: start and the length (from the output type: exact) as shape tensors. */
const ARANGE: DynamicRule = {
  variant: 'trt.arange_dyn',
  needs: onSymInts(['start', 'end', 'step']),
  refuse: (node) => (holdsSymInt(node.args.step) ? 'trt.arange_dyn takes a static step' : null),
  build: (node, b) => {
    const start = node.args.start === undefined ? 0 : dimOfArg(node.args.start!);
    const step = node.args.step === undefined ? 1 : (node.args.step as number);
    const out = node.outputs[0]!.tensorType;
    return [b.call('trt.arange_dyn', { start: b.scalar(start), length: b.scalar(out.shape[0]!), step, dtype: out.dtype }).output];
  },
};

/** trt.sym_tensor (shape values used as data): the values as a shape tensor, cast when int32. */
const SYM_TENSOR: DynamicRule = {
  variant: 'trt.sym_list_dyn',
  needs: onSymInts(['values']),
  build: (node, b) => {
    const dims = dimsOfArg(node.args.values!);
    const t = node.args.scalar === true ? b.scalar(dims[0]!) : b.list(dims);
    const dtype = node.outputs[0]!.tensorType.dtype;
    return [dtype === 'int64' ? t : b.call('aten._to_copy.default', { self: t, dtype }).output];
  },
};

/**
 * A SymInt used as a Scalar operand of arithmetic (`x * seq_len`): the `.Tensor` overload
 * with a 0-D int64 shape tensor in its place, which PyTorch's type promotion treats exactly
 * as an int Scalar (a 0-dim tensor never promotes a tensor of its category or above).
 */
function scalarOperand(tensorTarget: string): DynamicRule {
  return {
    variant: tensorTarget,
    needs: onSymInts(['other']),
    refuse: (node) => (holdsSymInt(node.args.alpha) ? 'alpha must be static' : null),
    build: (node, b) => {
      const args: Record<string, Arg> = { self: self(node), other: b.scalar(dimOfArg(node.args.other!)) };
      if ('alpha' in node.args) args.alpha = node.args.alpha!;
      return [b.call(tensorTarget, args).output];
    },
  };
}

/**
 * The rules by target. SymInt-producing ops (`aten.sym_size.int`, `sym.*`) are not here:
 * the legalization pass turns them into `trt.size_dyn` / `trt.sym_*_dyn` itself (their
 * outputs change from SymInt to shape tensor, which needs the pass's bookkeeping).
 */
export const DYNAMIC_RULES: ReadonlyMap<string, DynamicRule> = new Map<string, DynamicRule>([
  ['aten.view.default', RESHAPE],
  ['aten.reshape.default', RESHAPE],
  ['aten._unsafe_view.default', RESHAPE],
  ['aten.unflatten.int', UNFLATTEN],
  ['aten.expand.default', EXPAND],
  ['aten.slice.Tensor', sliceRule('start', 'end')],
  ['trt.slice_onnx', sliceRule('start', 'end')],
  ['aten.narrow.default', NARROW],
  ['aten.select.int', SELECT],
  ['aten.full.default', fullRule((n) => n.args.fill_value!)],
  ['aten.zeros.default', fullRule(() => 0)],
  ['aten.ones.default', fullRule(() => 1)],
  ['aten.new_full.default', fullRule((n) => n.args.fill_value!)],
  ['aten.new_zeros.default', fullRule(() => 0)],
  ['aten.new_ones.default', fullRule(() => 1)],
  ['aten.arange.default', ARANGE],
  ['aten.arange.start', ARANGE],
  ['aten.arange.start_step', ARANGE],
  ['trt.sym_tensor', SYM_TENSOR],
  ['aten.add.Scalar', scalarOperand('aten.add.Tensor')],
  ['aten.sub.Scalar', scalarOperand('aten.sub.Tensor')],
  ['aten.rsub.Scalar', scalarOperand('aten.rsub.Tensor')],
  ['aten.mul.Scalar', scalarOperand('aten.mul.Tensor')],
  ['aten.div.Scalar', scalarOperand('aten.div.Tensor')],
]);

/** The SymInt-producing ops the pass itself turns into shape-tensor ops. */
export const SYMINT_OPS: ReadonlyMap<string, string> = new Map([
  ['aten.sym_size.int', 'trt.size_dyn'],
  ['sym.add', 'trt.sym_add_dyn'],
  ['sym.sub', 'trt.sym_sub_dyn'],
  ['sym.mul', 'trt.sym_mul_dyn'],
  ['sym.floordiv', 'trt.sym_floordiv_dyn'],
  ['sym.mod', 'trt.sym_mod_dyn'],
  ['sym.max', 'trt.sym_max_dyn'],
  ['sym.min', 'trt.sym_min_dyn'],
]);
