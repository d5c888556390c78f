/**
 * SHAPE family converters (lib/ir/ops/shape.ts): views, permutes, joins and splits, slices,
 * expands and repeats, gathers and scatters, padding, filled tensors, triangles, flips and
 * rolls. Static shapes only: every size is read from the IR types, and PyTorch's bounds
 * (negative, clamped, INT64_MAX) are resolved here into TensorRT's start/size/stride.
 */
import type { DType } from '../../ir/dtype';
import type { Arg, Node, Value } from '../../ir/graph';
import { isStatic } from '../../ir/symbolic';
import { arange, full } from '../../kernels/shape';
import type { NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { defineConverter, type ConverterSpec } from '../define';
import type { ConverterImpl } from '../registry';
import type { CheckArgs } from '../types';
import { num, nums, optNum, optValues, value, values } from '../impl/args';
import { axisOf, cast, permute, reshape, toRank } from '../impl/basic';
import { indexTensor, wrapNegative } from '../impl/indices';
import {
  catParts,
  concat,
  expandTo,
  filled,
  inversePermutation,
  negativeSliceBounds,
  outDType,
  outShape,
  scalarConstant,
  sliceOrSelf,
  sliceAxisOrSelf,
  sliceBounds,
  squeezeAxis,
  staticShape,
  unsqueeze,
  VIEW_TARGETS,
} from '../impl/shape';

// ---------------------------------------------------------------------------------------
// Argument access and registration
// ---------------------------------------------------------------------------------------

const rankOf = (v: Value): number => v.tensorType.shape.length;

/** TensorRT uses INT8 for quantized values and UINT8 for network I/O only: data movement on them is not offered. */
const noQuantizedTypes: CheckArgs = (node) => {
  for (const v of [...node.inputValues(), ...node.outputs]) {
    if (v.type.kind !== 'tensor') continue;
    const d = v.type.dtype;
    if (d === 'int8' || d === 'uint8') {
      return `%${v.name} is ${d}: TensorRT uses ${d === 'int8' ? 'INT8 only for quantized tensors' : 'UINT8 only as a network I/O type'}, so ${node.target} cannot move it`;
    }
  }
  return true;
};

/**
 * Registers `impl` under every target with the int8/uint8 refusal before `check`; static
 * shapes only unless `dynamic` declares the converter correct with run-time dims too.
 */
function reg(targets: string | readonly string[], impl: ConverterImpl, check?: CheckArgs, dynamic: ConverterSpec['dynamic'] = false): void {
  defineConverter(targets, impl, { checks: [noQuantizedTypes, check], dynamic });
}

// ---------------------------------------------------------------------------------------
// Views and reshapes: one shuffle to the IR output shape (0 literal, -1 already resolved)
// ---------------------------------------------------------------------------------------

const toOutputShape: ConverterImpl = (node, ctx) => [reshape(ctx, ctx.tensor(value(node, 'self')), outShape(ctx))];

reg(VIEW_TARGETS, toOutputShape);

// Permutations read the rank only, so they also serve run-time dims.
reg('aten.permute.default', (node, ctx) => {
  const self = value(node, 'self');
  const rank = rankOf(self);
  return [permute(ctx, ctx.tensor(self), nums(node, 'dims').map((d) => axisOf(ctx, d, rank)))];
}, undefined, true);

reg('aten.transpose.int', (node, ctx) => {
  const self = value(node, 'self');
  const rank = rankOf(self);
  if (rank < 2) return [ctx.tensor(self)];
  const perm = Array.from({ length: rank }, (_, i) => i);
  const a = axisOf(ctx, num(node, 'dim0'), rank);
  const b = axisOf(ctx, num(node, 'dim1'), rank);
  [perm[a], perm[b]] = [perm[b]!, perm[a]!];
  return [permute(ctx, ctx.tensor(self), perm)];
}, undefined, true);

reg('aten.t.default', (node, ctx) => {
  const self = value(node, 'self');
  return [rankOf(self) < 2 ? ctx.tensor(self) : permute(ctx, ctx.tensor(self), [1, 0])];
}, undefined, true);

// ---------------------------------------------------------------------------------------
// Joins and splits
// ---------------------------------------------------------------------------------------

reg('aten.cat.default', (node, ctx) => {
  const dtype = outDType(ctx);
  const { ref, parts } = catParts(values(node, 'tensors'));
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(ref));
  // Parts empty along the axis add nothing; keep one so that the output exists.
  const nonEmpty = parts.filter((v) => staticShape(v)[axis] !== 0);
  const used = nonEmpty.length > 0 ? nonEmpty : [parts[0]!];
  const ts = used.map((v, i) => cast(ctx, ctx.tensor(v), dtype, `cast${i}`));
  return [concat(ctx, ts, axis)];
});

reg('aten.stack.default', (node, ctx) => {
  const all = values(node, 'tensors');
  const dtype = outDType(ctx);
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(all[0]!) + 1);
  const ts = all.map((v, i) => unsqueeze(ctx, cast(ctx, ctx.tensor(v), dtype, `cast${i}`), axis, `unsqueeze${i}`));
  return [concat(ctx, ts, axis)];
});

/** One slice per output along `axis`, sized as the IR outputs are. */
function splitByOutputs(node: Node, ctx: ConversionContext, axis: number): NetTensor[] {
  const x = ctx.tensor(value(node, 'self'));
  let start = 0;
  return node.outputs.map((_, i) => {
    const size = outShape(ctx, i)[axis]!;
    const piece = sliceAxisOrSelf(ctx, x, axis, start, size, 1, `split${i}`);
    start += size;
    return piece;
  });
}

reg(['aten.split.Tensor', 'aten.split_with_sizes.default', 'aten.chunk.default'], (node, ctx) =>
  splitByOutputs(node, ctx, axisOf(ctx, num(node, 'dim'), rankOf(value(node, 'self')))),
);

reg('aten.unbind.int', (node, ctx) => {
  const self = value(node, 'self');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  const x = ctx.tensor(self);
  return node.outputs.map((_, i) => squeezeAxis(ctx, sliceAxisOrSelf(ctx, x, axis, i, 1, 1, `slice${i}`), axis, `squeeze${i}`));
});

// ---------------------------------------------------------------------------------------
// Slices and selects
// ---------------------------------------------------------------------------------------

/** A slice of `self` along `dim` by `step`, from the start and count `bounds` gives for a dim of size n. */
function sliceAlongDim(bounds: (node: Node, n: number, step: number) => { start: number; count: number }): ConverterImpl {
  return (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const n = staticShape(self)[axis]!;
    const step = num(node, 'step');
    const { start, count } = bounds(node, n, step);
    return [sliceAxisOrSelf(ctx, ctx.tensor(self), axis, start, count, step)];
  };
}

reg(
  'aten.slice.Tensor',
  sliceAlongDim((node, n, step) => sliceBounds(n, optNum(node, 'start'), optNum(node, 'end'), step)),
  (node) => (num(node, 'step') > 0 ? true : `step ${String(node.args.step)} must be positive`),
);

reg(
  'trt.slice_onnx',
  sliceAlongDim((node, n, step) =>
    step > 0 ? sliceBounds(n, num(node, 'start'), num(node, 'end'), step) : negativeSliceBounds(n, num(node, 'start'), num(node, 'end'), step),
  ),
  (node) => (num(node, 'step') !== 0 ? true : 'step must not be 0'),
);

reg('aten.select.int', (node, ctx) => {
  const self = value(node, 'self');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  const n = staticShape(self)[axis]!;
  const index = num(node, 'index');
  const picked = sliceAxisOrSelf(ctx, ctx.tensor(self), axis, index < 0 ? index + n : index, 1);
  return [squeezeAxis(ctx, picked, axis)];
});

reg('aten.narrow.default', (node, ctx) => {
  const self = value(node, 'self');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  const n = staticShape(self)[axis]!;
  const start = num(node, 'start');
  return [sliceAxisOrSelf(ctx, ctx.tensor(self), axis, start < 0 ? start + n : start, num(node, 'length'))];
});

// ---------------------------------------------------------------------------------------
// Expand, repeat
// ---------------------------------------------------------------------------------------

reg(['aten.expand.default', 'aten.expand_as.default'], (node, ctx) => [expandTo(ctx, ctx.tensor(value(node, 'self')), outShape(ctx))]);

reg('aten.repeat.default', (node, ctx) => {
  // Tiling reads coordinate j of an axis of size d at j mod d: a wrap-mode slice of size d·r.
  const out = outShape(ctx);
  const x = toRank(ctx, ctx.tensor(value(node, 'self')), out.length, 'rank');
  return [
    sliceOrSelf(
      ctx,
      x,
      out.map(() => 0),
      out,
      out.map(() => 1),
      'tile',
      'wrap',
    ),
  ];
});

reg('aten.repeat_interleave.self_int', (node, ctx) => {
  // [.., n, ..] → [.., n, 1, ..] → stride-0 expand to [.., n, r, ..] → [.., n·r, ..].
  const self = value(node, 'self');
  const repeats = num(node, 'repeats');
  const dim = optNum(node, 'dim');
  let x = ctx.tensor(self);
  let axis = 0;
  if (dim === null) x = reshape(ctx, x, [x.shape.reduce((a, d) => a * d, 1)], 'flatten');
  else if (x.shape.length === 0) x = reshape(ctx, x, [1], 'flatten');
  else axis = axisOf(ctx, dim, x.shape.length);
  const inserted = unsqueeze(ctx, x, axis + 1);
  const target = [...inserted.shape];
  target[axis + 1] = repeats;
  return [reshape(ctx, expandTo(ctx, inserted, target), outShape(ctx), 'merge')];
});

// ---------------------------------------------------------------------------------------
// Gathers
// ---------------------------------------------------------------------------------------

reg('aten.index_select.default', (node, ctx) => {
  const self = value(node, 'self');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  let idx = indexTensor(ctx, value(node, 'index'), staticShape(self)[axis]!);
  if (idx.shape.length === 0) idx = reshape(ctx, idx, [1], 'index_1d');
  return [ctx.add({ kind: 'gather', mode: 'default', axis }, [ctx.tensor(self), idx])];
});

// With a static table, an embedding reads no dim of its indices.
reg('aten.embedding.default', (node, ctx) => {
  const weight = value(node, 'weight');
  const idx = indexTensor(ctx, value(node, 'indices'), staticShape(weight)[0]!);
  return [ctx.add({ kind: 'gather', mode: 'default', axis: 0 }, [ctx.tensor(weight), idx])];
}, undefined, [(node) => (value(node, 'weight').tensorType.shape.every(isStatic) ? null : 'the embedding table has run-time dims')]);

reg('aten.gather.default', (node, ctx) => {
  const self = value(node, 'self');
  const index = value(node, 'index');
  const rank = rankOf(self);
  const axis = axisOf(ctx, num(node, 'dim'), rank);
  const dataShape = staticShape(self);
  const idxShape = staticShape(index);
  const idx = indexTensor(ctx, index, dataShape[axis]!);
  // PyTorch allows an index smaller than self off the gather axis; those positions read the
  // same coordinates, so self is cut to the index's extent there.
  const cut = dataShape.map((d, i) => (i === axis ? d : Math.min(d, idxShape[i]!)));
  const data = sliceOrSelf(
    ctx,
    ctx.tensor(self),
    cut.map(() => 0),
    cut,
    cut.map(() => 1),
    'crop',
  );
  if (rank === 0) return [reshape(ctx, data, [])];
  return [ctx.add({ kind: 'gather', mode: 'element', axis }, [data, idx])];
});

/** Index tensors of aten.index / index_put broadcast to one shape and stacked in a last dim of k tuples. */
function indexTuples(ctx: ConversionContext, self: Value, indices: Array<Value | null>, positions: readonly number[], broadcast: readonly number[]): NetTensor {
  const dims = staticShape(self);
  const parts = positions.map((d, i) => {
    const idx = cast(ctx, indexTensor(ctx, indices[d]!, dims[d]!, `index${i}`), 'int64', `index${i}_int64`);
    return unsqueeze(ctx, expandTo(ctx, idx, broadcast, `index${i}_expand`), broadcast.length, `index${i}_tuple`);
  });
  return concat(ctx, parts, broadcast.length, 'tuples');
}

/** NumPy broadcasting of static shapes. */
function broadcastShapes(shapes: ReadonlyArray<readonly number[]>): number[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(rank).fill(1);
  for (const s of shapes) s.forEach((d, i) => (d !== 1 ? (out[rank - s.length + i] = d) : undefined));
  return out;
}

interface AdvancedIndex {
  positions: number[];
  /** Indexed dims first, then the rest (before, then after). */
  perm: number[];
  before: number[];
  after: number[];
  broadcast: number[];
}

function advancedIndex(self: Value, indices: ReadonlyArray<Value | null>): AdvancedIndex {
  const shape = staticShape(self);
  const positions = indices.flatMap((x, d) => (x === null ? [] : [d]));
  const broadcast = broadcastShapes(positions.map((d) => staticShape(indices[d]!)));
  const adjacent = positions.length > 0 && positions[positions.length - 1]! - positions[0]! === positions.length - 1;
  const rest = shape.map((_, d) => d).filter((d) => !positions.includes(d));
  const before = adjacent ? rest.filter((d) => d < positions[0]!) : [];
  const after = rest.filter((d) => !before.includes(d));
  return { positions, perm: [...positions, ...before, ...after], before, after, broadcast };
}

const isMask = (v: Value | null): boolean => v !== null && (v.tensorType.dtype === 'bool' || v.tensorType.dtype === 'uint8');

reg(
  'aten.index.Tensor',
  (node, ctx) => {
    const self = value(node, 'self');
    const indices = optValues(node, 'indices');
    const shape = staticShape(self);
    const ix = advancedIndex(self, indices);
    if (ix.positions.length === 0) return [ctx.tensor(self)];
    if (ix.positions.length === 1) {
      // One index tensor: a plain gather along its dim (its dims replace the indexed one).
      const d = ix.positions[0]!;
      return [ctx.add({ kind: 'gather', mode: 'default', axis: d }, [ctx.tensor(self), indexTensor(ctx, indices[d]!, shape[d]!)])];
    }
    // Several: move the indexed dims first, gather index tuples (nd), then put the dims that
    // came before adjacent indices back in front.
    const data = permute(ctx, ctx.tensor(self), ix.perm, 'indexed_first');
    const tuples = indexTuples(ctx, self, indices, ix.positions, ix.broadcast);
    const gathered = ctx.add({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: 0 }, [data, tuples], 'gather_nd');
    const nb = ix.before.length;
    const nB = ix.broadcast.length;
    const back = [...Array.from({ length: nb }, (_, i) => nB + i), ...Array.from({ length: nB }, (_, i) => i), ...ix.after.map((_, i) => nB + nb + i)];
    return [permute(ctx, gathered, back, 'restore')];
  },
  (node) => (optValues(node, 'indices').some(isMask) ? 'boolean mask indices give a data-dependent shape' : true),
);

reg(
  'trt.gather_nd',
  (node, ctx) => {
    const self = value(node, 'self');
    const indices = value(node, 'indices');
    const b = num(node, 'batch_dims');
    const k = staticShape(indices).at(-1)!;
    const idx = indexTensor(ctx, indices, staticShape(self).slice(b, b + k));
    return [ctx.add({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: b }, [ctx.tensor(self), idx])];
  },
  (node) => (staticShape(value(node, 'indices')).at(-1) === 0 ? 'index tuples of length 0 (whole-slice gathers) are not supported by TensorRT gather nd' : true),
);

// ---------------------------------------------------------------------------------------
// Scatters
// ---------------------------------------------------------------------------------------

function scatterElements(node: Node, ctx: ConversionContext, updates: (indexShape: number[], dtype: DType) => NetTensor): NetTensor[] {
  const self = value(node, 'self');
  const index = value(node, 'index');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  const idxShape = staticShape(index);
  if (rankOf(self) === 0) {
    // A 0-dim self with a 0-dim index: the update replaces the one element.
    return [reshape(ctx, updates([], self.tensorType.dtype), [])];
  }
  const idx = indexTensor(ctx, index, staticShape(self)[axis]!);
  const upd = updates(idxShape, self.tensorType.dtype);
  return [ctx.add({ kind: 'scatter', mode: 'element', axis }, [ctx.tensor(self), idx, upd])];
}

const scatterCheck: CheckArgs = (node) => {
  const index = staticShape(value(node, 'index'));
  const self = staticShape(value(node, 'self'));
  if (index.length === 0 && self.length === 0) return true;
  return index.reduce((a, d) => a * d, 1) === 0 ? 'an empty index scatters nothing; TensorRT scatter layers need a non-empty index' : true;
};

reg(
  'aten.scatter.src',
  (node, ctx) =>
    scatterElements(node, ctx, (shape) => {
      // torch.scatter reads only the leading index-shaped block of a larger src.
      const src = ctx.tensor(value(node, 'src'));
      return sliceOrSelf(
        ctx,
        src,
        shape.map(() => 0),
        shape,
        shape.map(() => 1),
        'src_block',
      );
    }),
  scatterCheck,
);

reg(
  'aten.scatter.value',
  (node, ctx) => scatterElements(node, ctx, (shape, dtype) => filled(ctx, num(node, 'value'), dtype, shape, 'updates')),
  scatterCheck,
);

reg(
  'aten.index_put.default',
  (node, ctx) => {
    const self = value(node, 'self');
    const indices = optValues(node, 'indices');
    const vals = ctx.tensor(value(node, 'values'));
    const shape = staticShape(self);
    const ix = advancedIndex(self, indices);
    if (ix.positions.length === 0) return [cast(ctx, expandTo(ctx, vals, shape, 'values'), self.tensorType.dtype)];
    // Indexed dims first: data [indexed..., before..., after...]; updates [B..., before..., after...].
    const data = permute(ctx, ctx.tensor(self), ix.perm, 'indexed_first');
    const indexedShape = [...ix.before.map((d) => shape[d]!), ...ix.broadcast, ...ix.after.map((d) => shape[d]!)];
    let updates = expandTo(ctx, vals, indexedShape, 'values');
    const nb = ix.before.length;
    const nB = ix.broadcast.length;
    if (nb > 0) {
      updates = permute(
        ctx,
        updates,
        [...Array.from({ length: nB }, (_, i) => nb + i), ...Array.from({ length: nb }, (_, i) => i), ...ix.after.map((_, i) => nb + nB + i)],
        'values_order',
      );
    }
    const tuples = indexTuples(ctx, self, indices, ix.positions, ix.broadcast);
    const scattered = ctx.add({ kind: 'scatter', mode: 'nd', axis: 0 }, [data, tuples, updates], 'scatter_nd');
    return [permute(ctx, scattered, inversePermutation(ix.perm), 'restore')];
  },
  (node) => {
    if (node.args.accumulate === true) return 'accumulate=True needs a scatter with addition, which TensorRT lacks (and duplicate indices must add up)';
    const indices = optValues(node, 'indices');
    if (indices.some(isMask)) return 'boolean mask indices are data-dependent';
    const given = indices.filter((v): v is Value => v !== null);
    if (given.some((v) => staticShape(v).reduce((a, d) => a * d, 1) === 0)) return 'an empty index writes nothing; TensorRT scatter layers need a non-empty index';
    return true;
  },
);

reg(
  'trt.scatter_nd',
  (node, ctx) => {
    const self = value(node, 'self');
    const indices = value(node, 'indices');
    const k = staticShape(indices).at(-1)!;
    const idx = indexTensor(ctx, indices, staticShape(self).slice(0, k));
    return [ctx.add({ kind: 'scatter', mode: 'nd', axis: 0 }, [ctx.tensor(self), idx, ctx.tensor(value(node, 'updates'))])];
  },
  (node) => {
    if (node.args.reduction !== 'none') return `reduction "${String(node.args.reduction)}": TensorRT's scatter layer has no reductions`;
    const indices = staticShape(value(node, 'indices'));
    if (indices.at(-1) === 0) return 'index tuples of length 0 are not supported by TensorRT scatter nd';
    if (indices.reduce((a, d) => a * d, 1) === 0) return 'an empty index writes nothing; TensorRT scatter layers need a non-empty index';
    return true;
  },
);

// ---------------------------------------------------------------------------------------
// One-hot: compare an iota along the new axis with the indices
// ---------------------------------------------------------------------------------------

/**
 * Integer indices (negatives wrapped by `depth`, float indices truncated towards zero) with
 * a size-1 dim inserted at `axis`, compared against 0..depth-1 laid along that axis: a bool
 * mask of the one-hot output's shape.
 */
function oneHotMask(ctx: ConversionContext, indices: Value, depth: number, axis: number): NetTensor {
  const dtype = indices.tensorType.dtype;
  let idx: NetTensor;
  if (dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16' || dtype === 'float64') {
    const x = ctx.tensor(indices);
    const zero = scalarConstant(ctx, 0, dtype, x.shape.length, 'zero');
    const negative = ctx.add({ kind: 'elementwise', op: 'less' }, [x, zero], 'negative');
    const truncated = ctx.add(
      { kind: 'select' },
      [negative, ctx.add({ kind: 'unary', op: 'ceil' }, [x], 'ceil'), ctx.add({ kind: 'unary', op: 'floor' }, [x], 'floor')],
      'trunc',
    );
    idx = wrapNegative(ctx, cast(ctx, truncated, 'int64', 'indices_int64'), depth, 'indices');
  } else {
    idx = indexTensor(ctx, indices, depth);
  }
  const rank = idx.shape.length + 1;
  const iotaShape = new Array<number>(rank).fill(1);
  iotaShape[axis] = depth;
  const iota = ctx.constant(new Tensor(idx.dtype, iotaShape, arange(0, depth, 1, idx.dtype).data), ctx.name('iota'));
  return ctx.add({ kind: 'elementwise', op: 'equal' }, [unsqueeze(ctx, idx, axis), iota], 'mask');
}

reg('aten.one_hot.default', (node, ctx) => {
  const self = value(node, 'self');
  const mask = oneHotMask(ctx, self, num(node, 'num_classes'), rankOf(self));
  return [cast(ctx, mask, 'int64', 'to_int64')];
});

reg(
  'trt.one_hot',
  (node, ctx) => {
    const indices = value(node, 'indices');
    const vals = ctx.tensor(value(node, 'values'));
    const axis = axisOf(ctx, num(node, 'axis'), rankOf(indices) + 1);
    const mask = oneHotMask(ctx, indices, num(node, 'depth'), axis);
    const rank = mask.shape.length;
    const pick = (i: number, role: string): NetTensor => reshape(ctx, sliceAxisOrSelf(ctx, vals, 0, i, 1, 1, role), new Array<number>(rank).fill(1), `${role}_rank`);
    return [ctx.add({ kind: 'select' }, [mask, pick(1, 'on'), pick(0, 'off')])];
  },
  (node) => (rankOf(value(node, 'values')) !== 1 ? 'values must be a 1-D [off, on] tensor' : true),
);

// ---------------------------------------------------------------------------------------
// Padding: a slice that starts before the data (negative start) and reads out of bounds by mode
// ---------------------------------------------------------------------------------------

function padSlice(node: Node, ctx: ConversionContext, mode: 'constant' | 'reflect' | 'replicate' | 'circular', fillValue: number | boolean): NetTensor {
  const self = value(node, 'self');
  const pad = nums(node, 'pad');
  const rank = rankOf(self);
  const start = new Array<number>(rank).fill(0);
  for (let k = 0; k < pad.length / 2; k++) start[rank - 1 - k] = -pad[2 * k]!;
  const size = outShape(ctx);
  const stride = size.map(() => 1);
  const x = ctx.tensor(self);
  if (start.every((s, i) => s === 0 && size[i] === x.shape[i])) return x;
  if (mode === 'constant') {
    const fill = scalarConstant(ctx, fillValue, self.tensorType.dtype, 0, 'pad_value');
    return sliceOrSelf(ctx, x, start, size, stride, 'pad', 'fill', fill);
  }
  return sliceOrSelf(ctx, x, start, size, stride, 'pad', mode === 'reflect' ? 'reflect' : mode === 'replicate' ? 'clamp' : 'wrap');
}

reg('aten.constant_pad_nd.default', (node, ctx) => [padSlice(node, ctx, 'constant', num(node, 'value'))]);

reg(
  'aten.pad.default',
  (node, ctx) => {
    const mode = node.args.mode as 'constant' | 'reflect' | 'replicate' | 'circular';
    return [padSlice(node, ctx, mode, optNum(node, 'value') ?? 0)];
  },
  (node) => {
    const mode = node.args.mode as string;
    if (mode === 'constant') return true;
    const shape = staticShape(value(node, 'self'));
    const pad = nums(node, 'pad');
    for (let k = 0; k < pad.length / 2; k++) {
      const d = shape[shape.length - 1 - k]!;
      if (d === 0 && pad[2 * k]! + pad[2 * k + 1]! + d > 0) return `${mode} padding of an empty dim has nothing to read`;
    }
    return true;
  },
);

// ---------------------------------------------------------------------------------------
// Filled tensors: one scalar constant broadcast by a stride-0 slice; arange as a constant
// ---------------------------------------------------------------------------------------

const fillWith =
  (fillValue: (node: Node) => number | boolean): ConverterImpl =>
  (node, ctx) => [filled(ctx, fillValue(node), outDType(ctx), outShape(ctx))];

const fillArg = (node: Node): number | boolean => {
  const v = node.args.fill_value;
  return typeof v === 'boolean' ? v : num(node, 'fill_value');
};

reg(['aten.full.default', 'aten.full_like.default'], fillWith(fillArg));
reg(['aten.zeros.default', 'aten.zeros_like.default'], fillWith(() => 0));
reg(['aten.ones.default', 'aten.ones_like.default'], fillWith(() => 1));
// new_* read only the dtype of `self`: with static sizes their output is static whatever
// `self`'s dims are (swin's attention mask, `x.new_zeros((1, H, W, 1))` of a dynamic-batch x).
// Sizes holding SymInts are rewritten into trt.full_dyn by the legalization pass first.
reg('aten.new_full.default', fillWith(fillArg), undefined, true);
reg('aten.new_zeros.default', fillWith(() => 0), undefined, true);
reg('aten.new_ones.default', fillWith(() => 1), undefined, true);

const arangeWith =
  (bounds: (node: Node) => [number, number, number]): ConverterImpl =>
  (node, ctx) => {
    const [start, end, step] = bounds(node);
    return [ctx.constant(arange(start, end, step, outDType(ctx)), ctx.name('values'))];
  };

reg('aten.arange.default', arangeWith((node) => [0, num(node, 'end'), 1]));
reg('aten.arange.start', arangeWith((node) => [num(node, 'start'), num(node, 'end'), 1]));
reg('aten.arange.start_step', arangeWith((node) => [num(node, 'start'), num(node, 'end'), num(node, 'step')]));

// ---------------------------------------------------------------------------------------
// Triangles, flips, rolls
// ---------------------------------------------------------------------------------------

function triangle(node: Node, ctx: ConversionContext, keep: (offset: number) => boolean): NetTensor[] {
  const self = value(node, 'self');
  const shape = staticShape(self);
  const rows = shape[shape.length - 2]!;
  const cols = shape[shape.length - 1]!;
  const bits = Array.from({ length: rows * cols }, (_, k) => (keep((k % cols) - Math.floor(k / cols)) ? 1 : 0));
  const maskShape = [...new Array<number>(shape.length - 2).fill(1), rows, cols];
  const mask = ctx.constant(Tensor.from('bool', maskShape, bits), ctx.name('mask'));
  const zero = scalarConstant(ctx, 0, self.tensorType.dtype, shape.length, 'zero');
  return [ctx.add({ kind: 'select' }, [mask, ctx.tensor(self), zero])];
}

reg('aten.triu.default', (node, ctx) => {
  const diagonal = num(node, 'diagonal');
  return triangle(node, ctx, (d) => d >= diagonal);
});

reg('aten.tril.default', (node, ctx) => {
  const diagonal = num(node, 'diagonal');
  return triangle(node, ctx, (d) => d <= diagonal);
});

reg('aten.flip.default', (node, ctx) => {
  const self = value(node, 'self');
  const shape = staticShape(self);
  const axes = new Set(nums(node, 'dims').map((d) => axisOf(ctx, d, shape.length)));
  if (shape.length === 0 || axes.size === 0) return [ctx.tensor(self)];
  // A negative stride walks an axis backwards from its last element.
  const start = shape.map((d, i) => (axes.has(i) && d > 0 ? d - 1 : 0));
  const stride = shape.map((_, i) => (axes.has(i) ? -1 : 1));
  return [sliceOrSelf(ctx, ctx.tensor(self), start, shape, stride, 'flip')];
});

/** Rolls one axis by `shift` (towards higher indices) as two slices joined. */
function rollAxis(ctx: ConversionContext, t: NetTensor, axis: number, shift: number, role: string): NetTensor {
  const n = t.shape[axis]!;
  if (n === 0) return t;
  const s = ((shift % n) + n) % n;
  if (s === 0) return t;
  return concat(ctx, [sliceAxisOrSelf(ctx, t, axis, n - s, s, 1, `${role}_tail`), sliceAxisOrSelf(ctx, t, axis, 0, n - s, 1, `${role}_head`)], axis, role);
}

reg('aten.roll.default', (node, ctx) => {
  const self = value(node, 'self');
  const shape = staticShape(self);
  const shifts = nums(node, 'shifts');
  const dims = nums(node, 'dims');
  const x = ctx.tensor(self);
  if (dims.length === 0) {
    const flat = reshape(ctx, x, [shape.reduce((a, d) => a * d, 1)], 'flatten');
    return [reshape(ctx, rollAxis(ctx, flat, 0, shifts[0]!, 'roll'), shape, 'unflatten')];
  }
  let out = x;
  dims.forEach((d, i) => (out = rollAxis(ctx, out, axisOf(ctx, d, shape.length), shifts[i]!, `roll${i}`)));
  return [out];
});

// ---------------------------------------------------------------------------------------
// Scatters of slices: for step 1 the parts around the slice joined with src; otherwise an
// element scatter with constant positions
// ---------------------------------------------------------------------------------------

/** self with positions start, start+step, ... (count of them) along `axis` replaced by src. */
function writeSlice(ctx: ConversionContext, self: Value, src: NetTensor, axis: number, start: number, count: number, step: number): NetTensor {
  const x = ctx.tensor(self);
  const n = staticShape(self)[axis]!;
  if (count === 0) return x;
  if (step === 1 || count === 1) {
    const end = start + count;
    const parts = [
      ...(start > 0 ? [sliceAxisOrSelf(ctx, x, axis, 0, start, 1, 'before')] : []),
      src,
      ...(end < n ? [sliceAxisOrSelf(ctx, x, axis, end, n - end, 1, 'after')] : []),
    ];
    return concat(ctx, parts, axis, 'join');
  }
  const lineShape = src.shape.map((_, i) => (i === axis ? count : 1));
  const line = ctx.constant(
    Tensor.from(
      'int64',
      lineShape,
      Array.from({ length: count }, (_, i) => start + i * step),
    ),
    ctx.name('positions'),
  );
  const index = expandTo(ctx, line, src.shape, 'index');
  return ctx.add({ kind: 'scatter', mode: 'element', axis }, [x, index, src], 'scatter');
}

reg(
  'aten.slice_scatter.default',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
    const step = num(node, 'step');
    const { start, count } = sliceBounds(staticShape(self)[axis]!, optNum(node, 'start'), optNum(node, 'end'), step);
    return [writeSlice(ctx, self, ctx.tensor(value(node, 'src')), axis, start, count, step)];
  },
  (node) => (num(node, 'step') > 0 ? true : `step ${String(node.args.step)} must be positive`),
);

reg('aten.select_scatter.default', (node, ctx) => {
  const self = value(node, 'self');
  const axis = axisOf(ctx, num(node, 'dim'), rankOf(self));
  const n = staticShape(self)[axis]!;
  const index = num(node, 'index');
  const src = unsqueeze(ctx, ctx.tensor(value(node, 'src')), axis, 'src');
  return [writeSlice(ctx, self, src, axis, index < 0 ? index + n : index, 1, 1)];
});

// ---------------------------------------------------------------------------------------
// SymInt plumbing: host-side shape math, folded away when shapes are static
// ---------------------------------------------------------------------------------------

const symRefusal: CheckArgs = (node) =>
  `${node.target} computes a SymInt on the host: specialization folds it in static graphs, and in dynamic graphs the shape-tensor legalization (lib/legalization/) turns it into a _dyn op, so it must not reach conversion`;

const noConversion: ConverterImpl = (node) => {
  throw new TypeError(`${node.target} has no layers`);
};

for (const target of ['aten.sym_size.int', 'sym.add', 'sym.sub', 'sym.mul', 'sym.floordiv', 'sym.mod', 'sym.max', 'sym.min']) {
  defineConverter(target, noConversion, { shapes: 'any', checks: [symRefusal] });
}

defineConverter(
  'trt.sym_tensor',
  (node, ctx) => {
    const vals = nums(node, 'values');
    const dtype = outDType(ctx);
    const data = node.args.scalar === true ? full([], vals[0]!, dtype) : Tensor.from(dtype, [vals.length], vals);
    return [ctx.constant(data, ctx.name('values'))];
  },
  {
    shapes: 'any',
    checks: [
      (node) =>
        (node.args.values as Arg[]).every((a) => typeof a === 'number')
          ? true
          : 'its values include run-time SymInts; in dynamic graphs the shape-tensor legalization (lib/legalization/) turns it into trt.sym_list_dyn',
    ],
  },
);
