/**
 * Dynamic-shape converters (docs/dynamic-shapes.md).
 *
 * 1. The `_dyn` ops (lib/ir/ops/dynamic.ts). Their shape arguments are int64 shape tensors,
 *    and these converters take them only as such: they never read an int that is really a
 *    run-time value, and static converters never see a `_dyn` op. Registered for static
 *    and dynamic inputs alike (a `_dyn` node's data input may happen to be static).
 *
 * 2. Dynamic-only variants of ordinary ops, registered `shapes: 'dynamic'` next to the static
 *    converters, for nodes whose tensors have run-time (-1) dims but whose int arguments are
 *    static (the legalization pass has already rewritten every op whose int arguments depend
 *    on a symbol); only where the static converter's code would read a dim:
 *    - views (view/reshape/flatten/unflatten/squeeze/unsqueeze): a reshape whose dims are the
 *      IR output dims, each static, or copied from an equal input dim, or inferred (-1);
 *    - select, slice / narrow / split / chunk / unbind along a static axis, cat, stack,
 *      expand / expand_as, *_like fills, aten.index (one or several index tensors),
 *      index_select, repeat_interleave, gather (element-wise), gather nd and scatter nd,
 *      scatter along any axis;
 *    - linear / matmul / mm / bmm, softmax / log_softmax, sum / mean / amax / amin,
 *      layer_norm / native_layer_norm / rms_norm (static normalized dims),
 *      scaled_dot_product_attention (a run-time causal mask from a fill layer).
 *
 * Static converters whose code is correct with -1 dims as it is (pointwise ops, permutations,
 * embedding) say so where they are defined (`dynamic: true`, lib/conversion/define.ts).
 */
import { isFloating, type DType } from '../../ir/dtype';
import { Value, type Arg, type Node } from '../../ir/graph';
import { dimEquals, formatDim, isStatic, type Dim } from '../../ir/symbolic';
import type { NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { defineConverter, staticIntArgs } from '../define';
import type { ConverterImpl } from '../registry';
import { num, nums, optNum, optValue, value } from '../impl/args';
import { axisOf, cast, elementwise, permute as permuteDims, reshape, trt } from '../impl/basic';
import {
  asVector,
  axesOf,
  dimOf,
  expandToShape,
  isDynamic,
  reshapeFromDims,
  reshapeTo,
  shapeArith,
  shapeConstant,
  shapeOf,
  shapeVector,
  sizeWithAxis,
  sliceAlong,
  sliceDynamic,
} from '../impl/dynamic';
import { indexTensor, indexTensorAlong, indexTuplesAlong } from '../impl/indices';
import { catParts, sliceBounds, VIEW_TARGETS } from '../impl/shape';
import { linear, scaled, torchMatmul } from '../impl/linalg';
import { attention } from '../impl/attention';
import { layerNorm, moments, rmsNorm } from '../impl/norm';
import { reduceTo, reductionAxes, softmax, SOFTMAX_TARGETS } from '../impl/reduce';
import { machineEpsilon } from '../../kernels/norm';

// ---------------------------------------------------------------------------------------
// Argument access
// ---------------------------------------------------------------------------------------

const irShape = (v: Value): readonly Dim[] => v.tensorType.shape;
const rankOf = (v: Value): number => v.tensorType.shape.length;
const outDType = (node: Node, i = 0): DType => node.outputs[i]!.tensorType.dtype;

/** Reasons shared by the dynamic-capable converters; null when fine. */
type Reason = string | null;

/** TensorRT moves int8/uint8 only as quantized / I/O types. */
function noQuantized(node: Node): Reason {
  for (const v of [...node.inputValues(), ...node.outputs]) {
    if (v.type.kind === 'tensor' && (v.type.dtype === 'int8' || v.type.dtype === 'uint8')) return `%${v.name} is ${v.type.dtype}, which TensorRT does not move`;
  }
  return null;
}

/** Registers a converter for nodes with run-time dims only (static nodes keep their static converter). */
function dynamicOnly(targets: string | readonly string[], impl: ConverterImpl, ...more: Array<(node: Node) => Reason>): void {
  defineConverter(targets, impl, { shapes: 'dynamic', checks: [staticIntArgs, ...more] });
}

/**
 * Pins the dims the IR knows statically onto a network tensor whose shape inference lost
 * them (a no-op reshape at run time), so layers that need static dims (normalized dims,
 * attention's head size) see them.
 */
function pinned(ctx: ConversionContext, t: NetTensor, v: Value, role = 'pin'): NetTensor {
  const shape = irShape(v);
  if (!t.shape.some((d, i) => d < 0 && isStatic(shape[i]!))) return t;
  return reshapeFromDims(
    ctx,
    t,
    shape.map((d, axis) => (isStatic(d) ? d : { axis })),
    role,
  );
}

// ---------------------------------------------------------------------------------------
// 1. The _dyn ops
// ---------------------------------------------------------------------------------------

/** Registers a `_dyn` converter (static and dynamic inputs). */
function dyn(target: string, impl: ConverterImpl, check?: (node: Node) => Reason): void {
  defineConverter(target, impl, { shapes: 'any', checks: [check] });
}

dyn('trt.size_dyn', (node, ctx) => {
  const self = value(node, 'self');
  return [dimOf(ctx, ctx.tensor(self), axisOf(ctx, num(node, 'dim'), rankOf(self)))];
});

dyn('trt.shape_dyn', (node, ctx) => {
  const x = ctx.tensor(value(node, 'self'));
  return [isDynamic(x) ? shapeOf(ctx, x) : shapeConstant(ctx, [...x.shape], 'shape')];
});

const ARITHMETIC: Record<string, 'sum' | 'sub' | 'prod' | 'floor_div' | 'max' | 'min' | 'mod'> = {
  'trt.sym_add_dyn': 'sum',
  'trt.sym_sub_dyn': 'sub',
  'trt.sym_mul_dyn': 'prod',
  'trt.sym_floordiv_dyn': 'floor_div',
  'trt.sym_mod_dyn': 'mod',
  'trt.sym_max_dyn': 'max',
  'trt.sym_min_dyn': 'min',
};

for (const [target, op] of Object.entries(ARITHMETIC)) {
  dyn(target, (node, ctx) => {
    const a = cast(ctx, ctx.tensor(value(node, 'a')), 'int64', 'a_int64');
    const b = cast(ctx, ctx.tensor(value(node, 'b')), 'int64', 'b_int64');
    if (op !== 'mod') return [shapeArith(ctx, a, b, op)];
    // Python's a % b (the sign of b): a - floor(a / b) * b.
    const q = shapeArith(ctx, a, b, 'floor_div', 'quotient');
    return [shapeArith(ctx, a, shapeArith(ctx, q, b, 'prod', 'multiple'), 'sub', 'mod')];
  });
}

dyn('trt.sym_list_dyn', (node, ctx) => {
  const items = (node.args.items as Arg[]).map((a) => ctx.tensor(a as Value));
  return [shapeVector(ctx, items, 'list')];
});

// The result's dims the IR knows statically (the channels of a TorchScript export's
// `reshape(b, h, w, -1)` before a convolution) are pinned: the layer's own shape inference
// sees only a shape tensor.
dyn('trt.reshape_dyn', (node, ctx) => [pinned(ctx, reshapeTo(ctx, ctx.tensor(value(node, 'self')), ctx.tensor(value(node, 'shape'))), node.output)], noQuantized);

dyn('trt.expand_dyn', (node, ctx) => [pinned(ctx, expandToShape(ctx, ctx.tensor(value(node, 'self')), ctx.tensor(value(node, 'size'))), node.output)], noQuantized);

dyn(
  'trt.slice_dyn',
  (node, ctx) => {
    const self = value(node, 'self');
    const x = ctx.tensor(self);
    const rank = rankOf(self);
    const axis = axisOf(ctx, num(node, 'dim'), rank);
    const start = shapeVector(
      ctx,
      Array.from({ length: rank }, (_, i) => (i === axis ? ctx.tensor(value(node, 'start')) : 0)),
      'start',
    );
    const size = sizeWithAxis(ctx, x, axis, ctx.tensor(value(node, 'length')), 'size');
    const stride = Array.from({ length: rank }, (_, i) => (i === axis ? num(node, 'step') : 1));
    return [sliceDynamic(ctx, x, start, size, stride)];
  },
  (node) => noQuantized(node) ?? (num(node, 'step') > 0 ? null : 'step must be positive'),
);

dyn(
  'trt.select_dyn',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    return [ctx.add({ kind: 'gather', mode: 'default', axis }, [ctx.tensor(self), ctx.tensor(value(node, 'index'))])];
  },
  noQuantized,
);

/** One value of `dtype` broadcast to the 1-D int64 shape `size` (a stride-0 slice of a ones-shaped constant). */
function filledDynamic(ctx: ConversionContext, fill: number | boolean, dtype: DType, size: NetTensor, role = 'fill'): NetTensor {
  const rank = size.shape[0]!;
  const v = typeof fill === 'boolean' ? Number(fill) : fill;
  const scalar = ctx.constant(Tensor.from(dtype, new Array<number>(rank).fill(1), [dtype === 'bool' ? (v !== 0 ? 1 : 0) : v]), ctx.name(`${role}_value`));
  if (rank === 0) return scalar;
  const zeros = new Array<number>(rank).fill(0);
  return sliceDynamic(ctx, scalar, zeros, size, zeros, role);
}

const fillValue = (node: Node): number | boolean => {
  const v = node.args.fill_value;
  return typeof v === 'boolean' ? v : num(node, 'fill_value');
};

dyn('trt.full_dyn', (node, ctx) => [filledDynamic(ctx, fillValue(node), outDType(node), ctx.tensor(value(node, 'size')))], (node) =>
  trtOrNull(outDType(node)),
);

const FILL_TYPES = new Set<DType>(['float32', 'float16', 'int32', 'int64']);

dyn(
  'trt.arange_dyn',
  (node, ctx) => {
    const dtype = outDType(node);
    const via: DType = FILL_TYPES.has(dtype) ? dtype : isFloating(dtype) ? 'float32' : 'int64';
    const start = cast(ctx, ctx.tensor(value(node, 'start')), via, 'start_cast');
    const beta = ctx.constant(Tensor.from(via, [1], [num(node, 'step')]), ctx.name('step'));
    const dims = asVector(ctx, ctx.tensor(value(node, 'length')), 'dims');
    const out = ctx.add({ kind: 'fill', dims: [0], alpha: 0, beta: [num(node, 'step')], dtype: trt(ctx, via) }, [dims, start, beta], 'arange');
    return [cast(ctx, out, dtype, 'cast_out')];
  },
  (node) => trtOrNull(outDType(node)) ?? (Number.isInteger(num(node, 'step')) || isFloating(outDType(node)) ? null : 'a fractional step needs a float dtype'),
);

function trtOrNull(dtype: DType): Reason {
  return dtype === 'float64' || dtype === 'complex64' || dtype === 'complex128' || dtype === 'int8' || dtype === 'uint8' ? `TensorRT cannot produce ${dtype} here` : null;
}

// ---------------------------------------------------------------------------------------
// 2. Dynamic-capable converters of ordinary ops
// ---------------------------------------------------------------------------------------

/**
 * The IR output dims of a view, each static, or the input axis holding an equal dim, or -1
 * (inferred) for at most one; null when more than one dim cannot be read from the input.
 */
function viewDims(self: Value, out: Value): Array<number | { axis: number }> | null {
  const input = irShape(self);
  const used = new Set<number>();
  let inferred = 0;
  const dims = irShape(out).map((d) => {
    if (isStatic(d)) return d;
    const axis = input.findIndex((e, j) => !used.has(j) && dimEquals(e, d));
    if (axis >= 0) {
      used.add(axis);
      return { axis };
    }
    inferred++;
    return -1;
  });
  return inferred <= 1 ? dims : null;
}

dynamicOnly(
  VIEW_TARGETS,
  (node, ctx) => [reshapeFromDims(ctx, ctx.tensor(value(node, 'self')), viewDims(value(node, 'self'), node.outputs[0]!)!)],
  noQuantized,
  (node) =>
    viewDims(value(node, 'self'), node.outputs[0]!) === null
      ? `more than one run-time dim of the output ${node.outputs[0]!.name} cannot be read from the input's dims`
      : null,
);

/** The axis argument `dim` normalized, refusing run-time dims along it. */
const staticAxis = (node: Node): Reason => {
  const self = value(node, 'self');
  const rank = rankOf(self);
  const d = num(node, 'dim');
  const axis = d < 0 ? d + rank : d;
  return isStatic(irShape(self)[axis]!) ? null : `dim ${d} has a run-time size; the legalization pass turns such ops into _dyn variants`;
};

// select: a gather of one (wrapped) index along the axis.
dynamicOnly(
  'aten.select.int',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const index = num(node, 'index');
    const n = irShape(self)[axis]!;
    const i = index < 0 ? index + (n as number) : index;
    const idx = ctx.constant(Tensor.from('int64', [], [i]), ctx.name('index'));
    return [ctx.add({ kind: 'gather', mode: 'default', axis }, [ctx.tensor(self), idx])];
  },
  noQuantized,
  (node) => (num(node, 'index') >= 0 ? null : staticAxis(node)),
);

dynamicOnly(
  'aten.slice.Tensor',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const step = num(node, 'step');
    const b = sliceBounds(irShape(self)[axis] as number, optNum(node, 'start'), optNum(node, 'end'), step);
    return [sliceAlong(ctx, ctx.tensor(self), axis, b.start, b.count, step)];
  },
  noQuantized,
  staticAxis,
  (node) => (num(node, 'step') > 0 ? null : 'step must be positive'),
);

dynamicOnly(
  'aten.narrow.default',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const n = irShape(self)[axis] as number;
    const start = num(node, 'start');
    return [sliceAlong(ctx, ctx.tensor(self), axis, start < 0 ? start + n : start, num(node, 'length'), 1)];
  },
  noQuantized,
  staticAxis,
);

// split / chunk / unbind along a static-size axis: one slice (or gather) per output.
dynamicOnly(
  ['aten.split.Tensor', 'aten.split_with_sizes.default', 'aten.chunk.default'],
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const x = ctx.tensor(self);
    let start = 0;
    return node.outputs.map((o, i) => {
      const size = irShape(o)[axis] as number;
      const piece = sliceAlong(ctx, x, axis, start, size, 1, `split${i}`);
      start += size;
      return piece;
    });
  },
  noQuantized,
  staticAxis,
);

dynamicOnly(
  'aten.unbind.int',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const x = ctx.tensor(self);
    return node.outputs.map((_, i) =>
      ctx.add({ kind: 'gather', mode: 'default', axis }, [x, ctx.constant(Tensor.from('int64', [], [i]), ctx.name(`index${i}`))], `select${i}`),
    );
  },
  noQuantized,
  staticAxis,
);

dynamicOnly(
  'aten.cat.default',
  (node, ctx) => {
    // Legacy empty tensors (1-D, size 0) are skipped, as in PyTorch and the static converter.
    const { ref, parts: joined } = catParts(node.args.tensors as Value[]);
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(ref));
    const dtype = outDType(node);
    const parts = joined.filter((v) => irShape(v)[axis] !== 0);
    const used = parts.length > 0 ? parts : [ref];
    const ts = used.map((v, i) => cast(ctx, ctx.tensor(v), dtype, `cast${i}`));
    return [ts.length === 1 ? ts[0]! : ctx.add({ kind: 'concat', axis }, ts)];
  },
  noQuantized,
  (node) => {
    const { ref, parts } = catParts(node.args.tensors as Value[]);
    return parts.every((v) => rankOf(v) === rankOf(ref)) ? null : 'tensors of different ranks cannot be concatenated';
  },
);

dynamicOnly(
  'aten.stack.default',
  (node, ctx) => {
    const all = node.args.tensors as Value[];
    const rank = rankOf(all[0]!);
    const axis = axisOf(ctx, num(node, 'dim'), rank + 1);
    const dtype = outDType(node);
    const ts = all.map((v, i) => {
      const t = cast(ctx, ctx.tensor(v), dtype, `cast${i}`);
      const dims: Array<number | { axis: number }> = t.shape.map((_, a) => ({ axis: a }));
      dims.splice(axis, 0, 1);
      return reshapeFromDims(ctx, t, dims, `unsqueeze${i}`);
    });
    return [ts.length === 1 ? ts[0]! : ctx.add({ kind: 'concat', axis }, ts)];
  },
  noQuantized,
);

dynamicOnly(
  'aten.expand.default',
  (node, ctx) => [expandToShape(ctx, ctx.tensor(value(node, 'self')), shapeConstant(ctx, nums(node, 'size'), 'size'))],
  noQuantized,
);

dynamicOnly(
  'aten.expand_as.default',
  (node, ctx) => {
    const other = ctx.tensor(value(node, 'other'));
    const target = isDynamic(other) ? shapeOf(ctx, other, 'size') : shapeConstant(ctx, [...other.shape], 'size');
    return [expandToShape(ctx, ctx.tensor(value(node, 'self')), target)];
  },
  noQuantized,
);

/** A run-time-shaped fill like `self`. */
function filledLike(value_: (node: Node) => number | boolean): ConverterImpl {
  return (node, ctx) => {
    const x = ctx.tensor(value(node, 'self'));
    return [filledDynamic(ctx, value_(node), outDType(node), shapeOf(ctx, x, 'size'))];
  };
}

dynamicOnly('aten.full_like.default', filledLike(fillValue), (node) => trtOrNull(outDType(node)));
dynamicOnly('aten.zeros_like.default', filledLike(() => 0), (node) => trtOrNull(outDType(node)));
dynamicOnly('aten.ones_like.default', filledLike(() => 1), (node) => trtOrNull(outDType(node)));

/** aten.index's indexed dims, the other dims before (when the indexed ones are adjacent) and after, and the broadcast index dims of its output. */
function advancedLayout(node: Node): { indices: Array<Value | null>; positions: number[]; before: number[]; after: number[]; broadcast: Dim[] } {
  const indices = (node.args.indices as Arg[]).map((a) => (a instanceof Value ? a : null));
  const rank = rankOf(value(node, 'self'));
  const positions = indices.flatMap((v, d) => (v === null ? [] : [d]));
  const adjacent = positions.length > 0 && positions.at(-1)! - positions[0]! === positions.length - 1;
  const rest = Array.from({ length: rank }, (_, d) => d).filter((d) => !positions.includes(d));
  const before = adjacent ? rest.filter((d) => d < positions[0]!) : [];
  const after = rest.filter((d) => !before.includes(d));
  const out = irShape(node.output);
  return { indices, positions, before, after, broadcast: out.slice(before.length, out.length - after.length) };
}

/** The position of an index tensor whose (right-aligned) dim is broadcast dim `j`, and that dim's axis in it; null when none has it. */
function broadcastSource(layout: ReturnType<typeof advancedLayout>, j: number): { tensor: number; axis: number } | null {
  const dim = layout.broadcast[j]!;
  for (const [i, d] of layout.positions.entries()) {
    const s = irShape(layout.indices[d]!);
    const axis = j - (layout.broadcast.length - s.length);
    if (axis >= 0 && dimEquals(s[axis]!, dim)) return { tensor: i, axis };
  }
  return null;
}

/**
 * aten.index with run-time dims. One index tensor (ONNX Gather): a gather along its dim.
 * Several (`logits[arange(b), lengths - 1]`, a sequence classifier's last token): as the
 * static converter, the indexed dims moved first, the index tensors broadcast to their common
 * shape (the output's broadcast dims, read from an index tensor at run time where they are
 * run-time dims) and stacked into tuples for a gather nd, and the dims before adjacent indices
 * put back in front. Negative indices into a run-time dim are wrapped by that dim read at run time.
 */
dynamicOnly(
  'aten.index.Tensor',
  (node, ctx) => {
    const layout = advancedLayout(node);
    const { indices, positions, before, after, broadcast } = layout;
    const x = ctx.tensor(value(node, 'self'));
    if (positions.length === 1) {
      const d = positions[0]!;
      return [ctx.add({ kind: 'gather', mode: 'default', axis: d }, [x, indexTensorAlong(ctx, indices[d]!, x, d)])];
    }
    const nB = broadcast.length;
    const parts = positions.map((d, i) => indexTensorAlong(ctx, indices[d]!, x, d, `index${i}`));
    const target = shapeVector(
      ctx,
      broadcast.map((dim, j): number | NetTensor => {
        if (isStatic(dim)) return dim;
        const source = broadcastSource(layout, j)!;
        return dimOf(ctx, parts[source.tensor]!, source.axis, `broadcast_dim${j}`);
      }),
      'broadcast_shape',
    );
    const tuples = parts.map((t, i) => {
      const full = expandToShape(ctx, cast(ctx, t, 'int64', `index${i}_int64`), target, `index${i}_expand`);
      return reshapeFromDims(ctx, full, [...axesOf(full), 1], `index${i}_tuple`);
    });
    const data = permuteDims(ctx, x, [...positions, ...before, ...after], 'indexed_first');
    const gathered = ctx.add({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: 0 }, [data, ctx.add({ kind: 'concat', axis: nB }, tuples, 'tuples')], 'gather_nd');
    const nb = before.length;
    const back = [...Array.from({ length: nb }, (_, i) => nB + i), ...Array.from({ length: nB }, (_, i) => i), ...after.map((_, i) => nB + nb + i)];
    return [permuteDims(ctx, gathered, back, 'restore')];
  },
  noQuantized,
  (node) => {
    const layout = advancedLayout(node);
    const given = layout.positions.map((d) => layout.indices[d]!);
    if (given.length === 0) return 'no index tensor';
    if (given.some((v) => v.tensorType.dtype === 'bool' || v.tensorType.dtype === 'uint8')) return 'boolean mask indices are data-dependent';
    if (given.length === 1) return null;
    const unread = layout.broadcast.findIndex((dim, j) => !isStatic(dim) && broadcastSource(layout, j) === null);
    return unread < 0 ? null : `the broadcast index dim ${formatDim(layout.broadcast[unread]!)} is no index tensor's dim`;
  },
);

/**
 * gather with run-time dims: an element-wise gather. PyTorch allows an index smaller than
 * self off the gather axis (those positions read the same coordinates), so self is first cut
 * to the index's extent there, read at run time where the two dims are not provably equal.
 */
dynamicOnly(
  'aten.gather.default',
  (node, ctx) => {
    const self = value(node, 'self');
    const index = value(node, 'index');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const x = ctx.tensor(self);
    const idx = indexTensorAlong(ctx, index, x, axis);
    const inShape = irShape(self);
    const idxShape = irShape(index);
    const same = inShape.every((d, i) => i === axis || dimEquals(d, idxShape[i]!));
    if (same) return [ctx.add({ kind: 'gather', mode: 'element', axis }, [x, idx])];
    const it = ctx.tensor(index);
    const size = shapeVector(
      ctx,
      inShape.map((_, i) => (i === axis ? dimOf(ctx, x, i, `self_dim${i}`) : dimOf(ctx, it, i, `index_dim${i}`))),
      'crop_size',
    );
    const data = sliceDynamic(ctx, x, new Array<number>(inShape.length).fill(0), size, new Array<number>(inShape.length).fill(1), 'crop');
    return [ctx.add({ kind: 'gather', mode: 'element', axis }, [data, idx])];
  },
  noQuantized,
  (node) => (rankOf(value(node, 'index')) === rankOf(value(node, 'self')) ? null : 'index and self must have the same rank'),
);

/**
 * repeat_interleave by a static count with run-time dims (CodeGen's rotary tables): a size-1
 * axis after `dim`, expanded to the count, merged back into `dim` (no dim: the flat tensor).
 */
dynamicOnly(
  'aten.repeat_interleave.self_int',
  (node, ctx) => {
    const repeats = num(node, 'repeats');
    const dim = optNum(node, 'dim');
    let x = ctx.tensor(value(node, 'self'));
    let axis = 0;
    if (dim === null || x.shape.length === 0) x = reshapeFromDims(ctx, x, [-1], 'flatten');
    else axis = axisOf(ctx, dim, x.shape.length);
    const rank = x.shape.length;
    const inserted = reshapeFromDims(ctx, x, [...axesOf(x, 0, axis + 1), 1, ...axesOf(x, axis + 1)], 'insert');
    const target = shapeConstant(ctx, Array.from({ length: rank + 1 }, (_, i) => (i === axis + 1 ? repeats : -1)), 'repeat_dims');
    const expanded = expandToShape(ctx, inserted, target, 'repeat');
    return [reshapeFromDims(ctx, expanded, [...axesOf(expanded, 0, axis), -1, ...axesOf(expanded, axis + 2)], 'merge')];
  },
  noQuantized,
);

/**
 * index_select with run-time dims (Falcon's rotary tables indexed by position ids): a gather
 * along the axis, negative indices wrapped by the axis's size read at run time where it is one.
 */
dynamicOnly(
  'aten.index_select.default',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const x = ctx.tensor(self);
    let idx = indexTensorAlong(ctx, value(node, 'index'), x, axis);
    if (idx.shape.length === 0) idx = reshape(ctx, idx, [1], 'index_1d');
    return [ctx.add({ kind: 'gather', mode: 'default', axis }, [x, idx])];
  },
  noQuantized,
);

/**
 * ONNX GatherND with run-time dims (the index tuples of a NonZero, say; the dynamo exporter's
 * advanced indexing of a run-time batch): a gather nd, as the static converter, when the tuple
 * length is static; negative components wrap by the sizes they address, read at run time where
 * those are run-time dims.
 */
dynamicOnly(
  'trt.gather_nd',
  (node, ctx) => {
    const self = value(node, 'self');
    const indices = value(node, 'indices');
    const b = num(node, 'batch_dims');
    const k = irShape(indices).at(-1) as number;
    const x = ctx.tensor(self);
    const idx = indexTuplesAlong(ctx, indices, x, b, k);
    return [ctx.add({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: b }, [x, idx])];
  },
  noQuantized,
  (node) => {
    const k = irShape(value(node, 'indices')).at(-1);
    return k === undefined || !isStatic(k) || k === 0 ? 'index tuples need a static length of at least 1 (TensorRT gather nd)' : null;
  },
);

/**
 * scatter.src / scatter.value with run-time dims: negative indices wrap by the scatter axis's
 * size (read at run time where it is a run-time dim, as the dynamo exporter's BART mask
 * writes), and src must have the index's shape (torch.scatter reads only the index-shaped
 * leading block of a larger src, a crop by run-time sizes).
 */
function scatterDynamic(updates: (node: Node, ctx: ConversionContext, index: NetTensor) => NetTensor): ConverterImpl {
  return (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const index = value(node, 'index');
    const x = ctx.tensor(self);
    // Negative indices along a run-time axis wrap by its size read at run time.
    const idx = indexTensorAlong(ctx, index, x, axis);
    return [ctx.add({ kind: 'scatter', mode: 'element', axis }, [x, idx, updates(node, ctx, ctx.tensor(index))])];
  };
}

const scatterAxis = (node: Node): Reason =>
  rankOf(value(node, 'self')) === 0 ? 'a 0-dim scatter has no run-time dims' : rankOf(value(node, 'index')) !== rankOf(value(node, 'self')) ? 'index and self differ in rank' : null;

/** An index that is empty for some run-time size scatters nothing, which TensorRT's scatter refuses; so the index must have no static 0 dim. */
const nonEmptyIndex = (node: Node): Reason => (irShape(value(node, 'index')).some((d) => d === 0) ? 'an empty index scatters nothing; TensorRT scatter layers need a non-empty index' : null);

dynamicOnly(
  'aten.scatter.src',
  scatterDynamic((node, ctx) => ctx.tensor(value(node, 'src'))),
  noQuantized,
  scatterAxis,
  nonEmptyIndex,
  (node) => {
    const src = irShape(value(node, 'src'));
    const index = irShape(value(node, 'index'));
    return src.length === index.length && src.every((d, i) => dimEquals(d, index[i]!)) ? null : 'src must have the shape of index with run-time dims (a larger src is cropped by run-time sizes)';
  },
);

dynamicOnly(
  'aten.scatter.value',
  scatterDynamic((node, ctx, index) => filledDynamic(ctx, num(node, 'value'), outDType(node), shapeOf(ctx, index, 'updates_shape'), 'updates')),
  noQuantized,
  (node) => trtOrNull(outDType(node)),
  scatterAxis,
  nonEmptyIndex,
);

/**
 * ONNX ScatterND with run-time dims (the dynamo exporter's slice assignment, BART's shifted
 * decoder inputs): a scatter nd when the tuple length is static and no index dim is a static 0;
 * negative components wrap by the sizes they address, read at run time where those are
 * run-time dims.
 */
dynamicOnly(
  'trt.scatter_nd',
  (node, ctx) => {
    const x = ctx.tensor(value(node, 'self'));
    const k = irShape(value(node, 'indices')).at(-1) as number;
    const idx = indexTuplesAlong(ctx, value(node, 'indices'), x, 0, k);
    return [ctx.add({ kind: 'scatter', mode: 'nd', axis: 0 }, [x, idx, ctx.tensor(value(node, 'updates'))])];
  },
  noQuantized,
  (node) => (node.args.reduction !== 'none' ? `reduction "${String(node.args.reduction)}": TensorRT's scatter layer has no reductions` : null),
  (node) => {
    const indices = irShape(value(node, 'indices'));
    const k = indices.at(-1);
    if (k === undefined || !isStatic(k) || k === 0) return 'index tuples need a static length of at least 1 (TensorRT scatter nd)';
    return indices.some((d) => d === 0) ? 'an empty index writes nothing; TensorRT scatter layers need a non-empty index' : null;
  },
);

// ---------------------------------------------------------------------------------------
// Matrix products, softmax, reductions, normalization, attention
// ---------------------------------------------------------------------------------------

/** Refuses non-float operands (TensorRT's matrix multiply takes only floats). */
const floats =
  (...names: string[]) =>
  (node: Node): Reason => {
    for (const name of names) {
      const v = optValue(node, name);
      if (v && !isFloating(v.tensorType.dtype)) return `${name} is ${v.tensorType.dtype}; TensorRT computes this only in floating point`;
    }
    return null;
  };

dynamicOnly('aten.linear.default', (node, ctx) => {
  const bias = optValue(node, 'bias');
  return [linear(ctx, ctx.tensor(value(node, 'input')), ctx.tensor(value(node, 'weight')), bias ? ctx.tensor(bias) : null)];
}, floats('input', 'weight', 'bias'));
dynamicOnly('aten.matmul.default', (node, ctx) => [torchMatmul(ctx, ctx.tensor(value(node, 'self')), ctx.tensor(value(node, 'other')))], floats('self', 'other'));
// GPT-2's Conv1D (x.view(-1, nx) then addmm) and ONNX Gemm: alpha * mat1 @ mat2 + beta * self.
dynamicOnly(
  'aten.addmm.default',
  (node, ctx) => {
    const product = scaled(ctx, torchMatmul(ctx, ctx.tensor(value(node, 'mat1')), ctx.tensor(value(node, 'mat2'))), num(node, 'alpha'), 'alpha');
    const beta = num(node, 'beta');
    // beta = 0 ignores self entirely (NaN and inf included), as PyTorch does.
    if (beta === 0) return [product];
    return [elementwise(ctx, product, scaled(ctx, ctx.tensor(value(node, 'self')), beta, 'beta'), 'sum', product.dtype, 'add')];
  },
  floats('self', 'mat1', 'mat2'),
  (node) => (typeof node.args.alpha === 'number' && typeof node.args.beta === 'number' ? null : 'alpha and beta must be numbers'),
);
dynamicOnly(['aten.mm.default', 'aten.bmm.default'], (node, ctx) => [torchMatmul(ctx, ctx.tensor(value(node, 'self')), ctx.tensor(value(node, 'mat2')))], floats('self', 'mat2'));

for (const [target, log] of SOFTMAX_TARGETS) {
  dynamicOnly(target, (node, ctx) => [softmax(ctx, ctx.tensor(value(node, 'self')), num(node, 'dim'), outDType(node), log)], (node) =>
    isFloating(outDType(node)) ? null : `softmax of ${outDType(node)}`,
  );
}

function reduction(op: 'sum' | 'avg' | 'max' | 'min', dims: (node: Node) => number[] | null, keepdim: (node: Node) => boolean): ConverterImpl {
  return (node, ctx) => {
    const x = ctx.tensor(value(node, 'self'));
    return [reduceTo(ctx, x, op, reductionAxes(ctx, x.shape.length, dims(node)), keepdim(node), outDType(node))];
  };
}

const optDims = (node: Node): number[] | null => (node.args.dim === null || node.args.dim === undefined ? null : nums(node, 'dim'));
const keep = (node: Node): boolean => node.args.keepdim === true;
const reducible = (node: Node): Reason => trtOrNull(outDType(node)) ?? (outDType(node) === 'bool' ? 'a bool reduction' : null);

dynamicOnly('aten.sum.dim_IntList', reduction('sum', optDims, keep), reducible);
dynamicOnly('aten.sum.default', reduction('sum', () => null, () => false), reducible);
dynamicOnly('aten.mean.dim', reduction('avg', optDims, keep), reducible);
dynamicOnly('aten.mean.default', reduction('avg', () => null, () => false), reducible);
dynamicOnly('aten.amax.default', reduction('max', optDims, keep), reducible);
dynamicOnly('aten.amin.default', reduction('min', optDims, keep), reducible);

/** The normalized dims (the last `count`) must be static: TensorRT's normalization takes static scale/bias. */
const staticNormalized = (node: Node): Reason => {
  const count = nums(node, 'normalized_shape').length;
  const shape = irShape(value(node, 'input'));
  return shape.slice(shape.length - count).every(isStatic) ? null : 'the normalized dims have run-time sizes';
};

/** layer_norm; with `stats`, native_layer_norm (mean and rstd too, when something reads them). */
function layerNormImpl(stats: boolean): ConverterImpl {
  return (node, ctx) => {
    const w = optValue(node, 'weight');
    const b = optValue(node, 'bias');
    const x = pinned(ctx, ctx.tensor(value(node, 'input')), value(node, 'input'));
    const n = nums(node, 'normalized_shape').length;
    const eps = num(node, 'eps');
    const out = layerNorm(ctx, x, n, w && ctx.tensor(w), b && ctx.tensor(b), eps);
    if (!stats) return [out];
    if (!ctx.isUsed(node.outputs[1]!) && !ctx.isUsed(node.outputs[2]!)) return [out, null, null];
    const rank = x.shape.length;
    const { mean, rstd } = moments(ctx, x, Array.from({ length: n }, (_, i) => rank - n + i), eps);
    return [out, cast(ctx, mean, outDType(node, 1), 'mean_out'), cast(ctx, rstd, outDType(node, 2), 'rstd_out')];
  };
}

dynamicOnly('aten.layer_norm.default', layerNormImpl(false), floats('input'), staticNormalized);
dynamicOnly('aten.native_layer_norm.default', layerNormImpl(true), floats('input'), staticNormalized);

dynamicOnly(
  'aten.rms_norm.default',
  (node, ctx) => {
    const input = value(node, 'input');
    const w = optValue(node, 'weight');
    const eps = optNum(node, 'eps') ?? machineEpsilon(input.tensorType.dtype);
    return [rmsNorm(ctx, pinned(ctx, ctx.tensor(input), input), nums(node, 'normalized_shape').length, w && ctx.tensor(w), eps)];
  },
  floats('input'),
  staticNormalized,
);

/** True when query, key and value have one head count (dim -3; 1 when absent), static or not. */
function sameHeads(node: Node): boolean {
  const [q, k, v] = ['query', 'key', 'value'].map((name) => irShape(value(node, name)).at(-3) ?? 1);
  return dimEquals(q!, k!) && dimEquals(q!, v!);
}

/**
 * scaled_dot_product_attention with run-time sequence lengths: one attention layer (or, for
 * operands it does not take, the spelled-out form, whose causal mask is built at run time;
 * lib/conversion/impl/attention.ts).
 */
dynamicOnly(
  'aten.scaled_dot_product_attention.default',
  (node, ctx) => {
    const query = value(node, 'query');
    const q = pinned(ctx, ctx.tensor(query), query, 'query_pin');
    const k = pinned(ctx, ctx.tensor(value(node, 'key')), value(node, 'key'), 'key_pin');
    const v = pinned(ctx, ctx.tensor(value(node, 'value')), value(node, 'value'), 'value_pin');
    const mask = optValue(node, 'attn_mask');
    return [attention(ctx, q, k, v, { mask: mask === null ? null : ctx.tensor(mask), causal: node.args.is_causal === true, scale: optNum(node, 'scale') })];
  },
  floats('query', 'key', 'value'),
  (node) => {
    if (num(node, 'dropout_p') !== 0) return 'dropout_p must be 0 in inference';
    if (!isStatic(irShape(value(node, 'query')).at(-1)!)) return 'the head size (last dim of query) must be static';
    if (node.args.enable_gqa !== true || sameHeads(node)) return null;
    const heads = ['query', 'key', 'value'].map((name) => irShape(value(node, name)).at(-3));
    if (heads.some((h) => h === undefined || !isStatic(h))) return `grouped-query attention needs static head counts (dim -3 of query, key and value), got ${heads.map((h) => (h === undefined ? 'none' : formatDim(h))).join(', ')}`;
    const [hq, hk, hv] = heads as number[];
    if (hq! % hk! !== 0 || hq! % hv! !== 0) return `grouped-query attention: ${hq} query heads are not a multiple of ${hk} key / ${hv} value heads`;
    return null;
  },
);
