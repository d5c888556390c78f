/**
 * The translation map of dynamic legalization: for each op whose int / int[] arguments may
 * depend on a symbol, the `_dyn` variant (lib/ir/ops/dynamic.ts) that takes a shape tensor
 * there, when the rewrite applies, and how to build it. The legalization pass
 * (./legalize.ts) applies these rules to engine segments; ops with SymInt arguments and no
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
import { DynamicUnsupportedError } from '../errors';
import { dimBounds, formatDim, isStatic, symMod, symMul, symSub, type Dim } from '../ir/symbolic';

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

/** Argument `name` of `node` as a dim, or null where it is absent (a slice bound left open). */
const optDimArg = (node: Node, name: string): Dim | null => (node.args[name] === null || node.args[name] === undefined ? null : dimOfArg(node.args[name]!));

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
      const step = node.args.step as number;
      const { start, length } = sliceExtent(b.inferContext(node), dimSize(node), optDimArg(node, startName), optDimArg(node, endName), step);
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

// ---------------------------------------------------------------------------------------
// Compositions: ops with no `_dyn` op of their own, rebuilt from the `_dyn` ops above and
// ordinary ops (cat) whose dynamic converters exist. Each output keeps its exact type.
// ---------------------------------------------------------------------------------------

const shapeOf = (v: Value): readonly Dim[] => v.tensorType.shape;
const hasRuntimeDims = (v: Value): boolean => !shapeOf(v).every(isStatic);

/** A reason unless `d` is ≥ 0 for every value of its symbols (thrown: the partitioner reports it). */
function provablyNonNegative(b: DynBuilder, d: Dim, what: string): void {
  if (isStatic(d) ? d >= 0 : dimBounds(d, b.graph.symbols).min >= 0) return;
  throw new DynamicUnsupportedError(`${what} = ${formatDim(d)} may be negative at run time; only non-negative run-time sizes are rewritten`);
}

/** `sizes` along `axis` of `x`, each a trt.slice_dyn starting where the previous ended. */
function slicesAlong(b: DynBuilder, x: Value, axis: number, sizes: readonly Dim[]): Value[] {
  let start: Dim = 0;
  return sizes.map((length) => {
    const piece = b.call('trt.slice_dyn', { self: x, dim: axis, start: b.scalar(start), length: b.scalar(length), step: 1 }).output;
    start = sumDims([start, length]);
    return piece;
  });
}

/**
 * constant_pad_nd: per padded dim (the last first, as PyTorch lists the pairs), a cat of
 * fills shaped like the tensor with that dim replaced by the pad, around the tensor.
 * Negative (cropping) pads with run-time dims are refused.
 */
const CONSTANT_PAD: DynamicRule = {
  variant: 'trt.full_dyn',
  needs: (node) => {
    const sym = onSymInts(['pad'])(node);
    return sym.length > 0 ? sym : hasRuntimeDims(self(node)) ? ['pad'] : [];
  },
  refuse: (node) => {
    if (holdsSymInt(node.args.value)) return 'the fill value must be static';
    const pad = dimsOfArg(node.args.pad!);
    return pad.some((p) => isStatic(p) && p < 0) ? 'negative (cropping) pads with run-time dims are not rewritten' : quantized(node);
  },
  build: (node, b) => {
    const pad = dimsOfArg(node.args.pad!);
    const dtype = node.outputs[0]!.tensorType.dtype;
    let x = self(node);
    const rank = shapeOf(x).length;
    for (let k = 0; k < pad.length / 2; k++) {
      const axis = rank - 1 - k;
      const [before, after] = [pad[2 * k]!, pad[2 * k + 1]!];
      provablyNonNegative(b, before, `pad ${2 * k}`);
      provablyNonNegative(b, after, `pad ${2 * k + 1}`);
      const fill = (n: Dim): Value => {
        const shape = shapeOf(x).map((d, i) => (i === axis ? n : d));
        return b.call('trt.full_dyn', { size: b.list(shape), fill_value: node.args.value ?? 0, dtype }).output;
      };
      const parts = [...(before === 0 ? [] : [fill(before)]), x, ...(after === 0 ? [] : [fill(after)])];
      if (parts.length > 1) x = b.call('aten.cat.default', { tensors: parts, dim: axis }).output;
    }
    // No pad at all: still one node of its own, so the rewrite never renames its input.
    return [x === self(node) ? b.call('trt.reshape_dyn', { self: x, shape: b.list(shapeOf(x)) }).output : x];
  },
};

/** aten.pad in mode "constant" is constant_pad_nd. */
const PAD: DynamicRule = {
  ...CONSTANT_PAD,
  refuse: (node) => (node.args.mode !== 'constant' ? `padding mode "${String(node.args.mode)}" is not rewritten (only "constant")` : CONSTANT_PAD.refuse!(node)),
};

/**
 * repeat: [d0, d1, ...] viewed as [1, d0, 1, d1, ...], expanded to [r0, d0, r1, d1, ...] and
 * merged to [r0*d0, r1*d1, ...] (PyTorch's tiling order).
 */
const REPEAT: DynamicRule = {
  variant: 'trt.expand_dyn',
  needs: (node) => {
    const sym = onSymInts(['repeats'])(node);
    return sym.length > 0 ? sym : hasRuntimeDims(self(node)) ? ['repeats'] : [];
  },
  refuse: quantized,
  build: (node, b) => {
    const reps = dimsOfArg(node.args.repeats!);
    const x = self(node);
    reps.forEach((r, i) => provablyNonNegative(b, r, `repeats[${i}]`));
    const dims = [...new Array<Dim>(reps.length - shapeOf(x).length).fill(1), ...shapeOf(x)];
    // A size-1 dim before each axis that repeats (an axis repeated once needs none), so a rank-5
    // tile of one axis is rank 6, not 10 (TensorRT's limit is 8).
    const repeated = (i: number): boolean => reps[i] !== 1;
    const split = b.call('trt.reshape_dyn', { self: x, shape: b.list(dims.flatMap((d, i) => (repeated(i) ? [1, d] : [d]))) }).output;
    const tiled = b.call('trt.expand_dyn', { self: split, size: b.list(dims.flatMap((d, i) => (repeated(i) ? [reps[i]!, d] : [d]))) }).output;
    return [b.call('trt.reshape_dyn', { self: tiled, shape: b.list(dims.map((d, i) => symMul(reps[i]!, d))) }).output];
  },
};

/**
 * roll along given dims: per dim, with s = shift mod n (Python's sign rule), the last s
 * elements then the first n - s (two trt.slice_dyn and a cat).
 */
const ROLL: DynamicRule = {
  variant: 'trt.slice_dyn',
  needs: (node) => {
    const sym = onSymInts(['shifts'])(node);
    return sym.length > 0 ? sym : hasRuntimeDims(self(node)) ? ['shifts'] : [];
  },
  refuse: (node) => ((node.args.dims as number[] | undefined)?.length ? quantized(node) : 'roll over the flattened tensor (no dims) is not rewritten'),
  build: (node, b) => {
    const shifts = dimsOfArg(node.args.shifts!);
    const rank = shapeOf(self(node)).length;
    let x = self(node);
    (node.args.dims as number[]).forEach((d, i) => {
      const axis = d < 0 ? d + rank : d;
      const n = shapeOf(x)[axis]!;
      const s = symMod(shifts[i]!, n);
      const [tail, head] = slicesAlong(b, x, axis, [symSub(n, s), s]);
      x = b.call('aten.cat.default', { tensors: [head!, tail!], dim: axis }).output;
    });
    return [x];
  },
};

/**
 * `x` (size `n` along `axis`) with its `length` positions from `start` replaced by `src`: the
 * part before, src and the part after, concatenated (a part that is statically empty is left out).
 */
function spliced(b: DynBuilder, x: Value, axis: number, n: Dim, start: Dim, length: Dim, src: Value): Value {
  const rest = symSub(symSub(n, start), length);
  const piece = (from: Dim, size: Dim): Value => b.call('trt.slice_dyn', { self: x, dim: axis, start: b.scalar(from), length: b.scalar(size), step: 1 }).output;
  const parts = [...(start === 0 ? [] : [piece(0, start)]), src, ...(rest === 0 ? [] : [piece(sumDims([start, length]), rest)])];
  return parts.length === 1 ? src : b.call('aten.cat.default', { tensors: parts, dim: axis }).output;
}

/**
 * slice_scatter with step 1 on a tensor with run-time dims (BART's shifted decoder inputs,
 * `shifted[:, 1:] = ids[:, :-1]`): src {@link spliced} into self.
 */
const SLICE_SCATTER: DynamicRule = {
  variant: 'trt.slice_dyn',
  needs: (node) => {
    const sym = onSymInts(['start', 'end'])(node);
    return sym.length > 0 ? sym : hasRuntimeDims(self(node)) ? ['start', 'end'] : [];
  },
  refuse: (node) => (node.args.step !== 1 ? `only step 1 is rewritten, got ${String(node.args.step)}` : quantized(node)),
  build: (node, b) => {
    const axis = normalizedAxis(node);
    const n = dimSize(node);
    const { start, length } = sliceExtent(b.inferContext(node), n, optDimArg(node, 'start'), optDimArg(node, 'end'), 1);
    return [spliced(b, self(node), axis, n, start, length, node.args.src as Value)];
  },
};

/**
 * select_scatter on a tensor with run-time dims (BART's `shifted[:, 0] = start_token`): src
 * with the dim put back, {@link spliced} in at the index.
 */
const SELECT_SCATTER: DynamicRule = {
  variant: 'trt.slice_dyn',
  needs: (node) => {
    const sym = onSymInts(['index'])(node);
    return sym.length > 0 ? sym : hasRuntimeDims(self(node)) ? ['index'] : [];
  },
  refuse: quantized,
  build: (node, b) => {
    const axis = normalizedAxis(node);
    const n = dimSize(node);
    const src = b.call('aten.unsqueeze.default', { self: node.args.src as Value, dim: axis }).output;
    return [spliced(b, self(node), axis, n, fromEnd(node, 'index'), 1, src)];
  },
};

/** split / split_with_sizes with SymInt sizes or along a run-time dim: one trt.slice_dyn per piece (sizes from the exact output types). */
const SPLIT: DynamicRule = {
  variant: 'trt.slice_dyn',
  needs: (node) => {
    const sym = onSymInts(['split_size', 'split_sizes'])(node);
    return sym.length > 0 ? sym : isStatic(dimSize(node)) ? [] : ['split_size' in node.args ? 'split_size' : 'split_sizes'];
  },
  refuse: quantized,
  build: (node, b) => {
    const axis = normalizedAxis(node);
    return slicesAlong(
      b,
      self(node),
      axis,
      node.outputs.map((o) => o.tensorType.shape[axis]!),
    );
  },
};

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
  ['aten.constant_pad_nd.default', CONSTANT_PAD],
  ['aten.pad.default', PAD],
  ['aten.repeat.default', REPEAT],
  ['aten.roll.default', ROLL],
  ['aten.slice_scatter.default', SLICE_SCATTER],
  ['aten.select_scatter.default', SELECT_SCATTER],
  ['aten.split.Tensor', SPLIT],
  ['aten.split_with_sizes.default', SPLIT],
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
