/**
 * Interpreter implementations of the SHAPE family (lib/ir/ops/shape.ts): thin adapters from
 * schema arguments to lib/kernels/shape.ts and lib/kernels/indexing.ts. Index tensors may hold
 * negative indices (counted from the end) everywhere, as the kernels allow.
 */
import { InvalidArgumentError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { broadcastShapes } from '../../kernels/access';
import { add, logicalXor, sub } from '../../kernels/elementwise';
import {
  embedding,
  gatherElements,
  gatherND,
  gather as gatherAxis,
  indexSelect,
  indexTensor,
  oneHot,
  scatterElements,
  scatterND,
  type ScatterReduction,
} from '../../kernels/indexing';
import {
  arange,
  concat,
  expand,
  flatten,
  flip,
  full,
  pad,
  padsFromTorch,
  permute,
  reshape,
  slice,
  sliceAxes,
  split,
  squeeze,
  tile,
  transpose,
  tril,
  triu,
  unsqueeze,
  type PadMode,
} from '../../kernels/shape';
import { cast } from '../../kernels/unary';
import { Tensor } from '../../ir/tensor';
import { defineImpl, type ImplContext, type RuntimeArg } from '../registry';

const T = (a: RuntimeArg | undefined): Tensor => a as Tensor;
const N = (a: RuntimeArg | undefined): number => a as number;
const ints = (a: RuntimeArg | undefined): number[] => (Array.isArray(a) ? (a as number[]) : [a as number]);
const optN = (a: RuntimeArg | undefined): number | undefined => (a === null || a === undefined ? undefined : (a as number));
const scalar = (a: RuntimeArg | undefined): number => (typeof a === 'boolean' ? Number(a) : (a as number));

/** The dtype inference gave output `i` of this node. */
function outDType(ctx: ImplContext, i = 0): DType {
  return ctx.node.outputs[i]!.tensorType.dtype;
}

function castTo(t: Tensor, dtype: DType): Tensor {
  return t.dtype === dtype ? t : cast(t, dtype);
}

/** An index in [-n, n) made non-negative; out of range is an error naming it. */
function wrapIndex(index: number, n: number, what: string): number {
  const i = index < 0 ? index + n : index;
  if (!(i >= 0 && i < n)) throw new InvalidArgumentError(`${what}: index ${index} is out of range for a dim of size ${n}`);
  return i;
}

function axisOf(dim: number, rank: number, what: string): number {
  const a = dim < 0 ? dim + rank : dim;
  if (!(a >= 0 && a < Math.max(rank, 1))) throw new InvalidArgumentError(`${what}: dim ${dim} is out of range for rank ${rank}`);
  return a;
}

// Views and reshapes --------------------------------------------------------------------

defineImpl('aten.view.default', (args) => [reshape(T(args.self), ints(args.size))]);
defineImpl('aten._unsafe_view.default', (args) => [reshape(T(args.self), ints(args.size))]);
defineImpl('aten.reshape.default', (args) => [reshape(T(args.self), ints(args.shape))]);
defineImpl('aten.permute.default', (args) => [permute(T(args.self), ints(args.dims))]);
defineImpl('aten.transpose.int', (args) => [transpose(T(args.self), N(args.dim0), N(args.dim1))]);
defineImpl('aten.swapaxes.default', (args) => [transpose(T(args.self), N(args.axis0), N(args.axis1))]);
defineImpl('aten.swapdims.default', (args) => [transpose(T(args.self), N(args.dim0), N(args.dim1))]);
defineImpl('aten.t.default', (args) => {
  const t = T(args.self);
  return [t.rank < 2 ? reshape(t, t.shape) : transpose(t, 0, 1)];
});
defineImpl('aten.numpy_T.default', (args) => {
  const t = T(args.self);
  return [permute(t, t.shape.map((_, i) => t.rank - 1 - i))];
});
defineImpl('aten.flatten.using_ints', (args) => [flatten(T(args.self), N(args.start_dim), N(args.end_dim))]);
defineImpl('aten.unflatten.int', (args) => {
  const t = T(args.self);
  const a = axisOf(N(args.dim), t.rank, 'unflatten');
  return [reshape(t, [...t.shape.slice(0, a), ...ints(args.sizes), ...t.shape.slice(a + 1)])];
});
defineImpl('aten.squeeze.default', (args) => [squeeze(T(args.self))]);
defineImpl('aten.squeeze.dim', (args) => [squeeze(T(args.self), [N(args.dim)])]);
defineImpl('aten.squeeze.dims', (args) => [squeeze(T(args.self), ints(args.dim))]);
defineImpl('aten.unsqueeze.default', (args) => [unsqueeze(T(args.self), N(args.dim))]);

// Joins and splits -------------------------------------------------------------------------

defineImpl('aten.cat.default', (args, ctx) => {
  const dtype = outDType(ctx);
  return [concat((args.tensors as Tensor[]).map((t) => castTo(t, dtype)), N(args.dim))];
});

defineImpl('aten.stack.default', (args, ctx) => {
  const dtype = outDType(ctx);
  const tensors = args.tensors as Tensor[];
  const a = axisOf(N(args.dim), tensors[0]!.rank + 1, 'stack');
  return [concat(tensors.map((t) => unsqueeze(castTo(t, dtype), a)), a)];
});

defineImpl('aten.split.Tensor', (args) => split(T(args.self), N(args.split_size), N(args.dim)));
defineImpl('aten.split_with_sizes.default', (args) => split(T(args.self), ints(args.split_sizes), N(args.dim)));
defineImpl('aten.chunk.default', (args) => {
  const t = T(args.self);
  const a = axisOf(N(args.dim), t.rank, 'chunk');
  const n = t.shape[a]!;
  const chunks = N(args.chunks);
  if (n === 0) return split(t, new Array<number>(chunks).fill(0), a);
  return split(t, Math.ceil(n / chunks), a);
});
/** meshgrid: tensor i laid along its grid dim (the first two swapped for "xy") and expanded over the grid. */
function meshgrid(tensors: readonly Tensor[], indexing: string): Tensor[] {
  const n = tensors.length;
  const at = (i: number): number => (indexing === 'xy' && n >= 2 && i < 2 ? 1 - i : i);
  const grid = new Array<number>(n);
  tensors.forEach((t, i) => (grid[at(i)] = t.rank === 0 ? 1 : t.shape[0]!));
  return tensors.map((t, i) => {
    const along = grid.map((d, j) => (j === at(i) ? d : 1));
    return expand(reshape(t, along), grid);
  });
}
defineImpl('aten.meshgrid.default', (args) => meshgrid(args.tensors as Tensor[], 'ij'));
defineImpl('aten.meshgrid.indexing', (args) => meshgrid(args.tensors as Tensor[], args.indexing as string));
defineImpl('aten.unbind.int', (args) => {
  const t = T(args.self);
  const a = axisOf(N(args.dim), t.rank, 'unbind');
  if (t.shape[a] === 0) return [];
  return split(t, 1, a).map((p) => squeeze(p, [a]));
});

// Slices and selects -------------------------------------------------------------------------

defineImpl('aten.slice.Tensor', (args) => [slice(T(args.self), N(args.dim), optN(args.start), optN(args.end), N(args.step))]);
defineImpl('trt.slice_onnx', (args) => [slice(T(args.self), N(args.dim), N(args.start), N(args.end), N(args.step))]);

defineImpl('aten.select.int', (args) => {
  const t = T(args.self);
  const a = axisOf(N(args.dim), t.rank, 'select');
  const i = wrapIndex(N(args.index), t.shape[a]!, 'select');
  return [squeeze(slice(t, a, i, i + 1), [a])];
});

defineImpl('aten.narrow.default', (args) => {
  const t = T(args.self);
  const a = axisOf(N(args.dim), t.rank, 'narrow');
  const n = t.shape[a]!;
  const start = N(args.start) < 0 ? N(args.start) + n : N(args.start);
  const length = N(args.length);
  if (start < 0 || length < 0 || start + length > n) {
    throw new InvalidArgumentError(`narrow: start ${N(args.start)} and length ${length} do not fit dim ${a} of size ${n}`);
  }
  return [slice(t, a, start, start + length)];
});

// Expand, repeat -------------------------------------------------------------------------------

defineImpl('aten.expand.default', (args) => [expand(T(args.self), ints(args.size))]);
defineImpl('aten.copy.default', (args) => {
  const self = T(args.self);
  return [expand(cast(T(args.src), self.dtype), self.shape)];
});
defineImpl('aten.expand_as.default', (args) => [expand(T(args.self), T(args.other).shape)]);
defineImpl('aten.repeat.default', (args) => [tile(T(args.self), ints(args.repeats))]);

defineImpl('aten.repeat_interleave.self_int', (args) => {
  let t = T(args.self);
  const repeats = N(args.repeats);
  let a = 0;
  if (args.dim === null || args.dim === undefined) t = flatten(t);
  else if (t.rank === 0) t = reshape(t, [1]);
  else a = axisOf(N(args.dim), t.rank, 'repeat_interleave');
  const n = t.shape[a]!;
  // Output position j along the axis reads input position floor(j / repeats).
  const index = Tensor.from(
    'int64',
    [n * repeats],
    Array.from({ length: n * repeats }, (_, j) => Math.floor(j / repeats)),
  );
  return [gatherAxis(t, index, a)];
});

// Gathers and scatters ---------------------------------------------------------------------------

defineImpl('aten.index_select.default', (args) => [indexSelect(T(args.self), N(args.dim), T(args.index))]);
defineImpl('aten.embedding.default', (args) => [embedding(T(args.weight), T(args.indices))]);
defineImpl('aten.gather.default', (args) => [gatherElements(T(args.self), T(args.index), N(args.dim))]);

/** torch.scatter uses only the leading index-shaped block of a larger src. */
function srcFor(src: Tensor, index: Tensor): Tensor {
  if (src.shape.every((d, i) => d === index.shape[i])) return src;
  return sliceAxes(
    src,
    index.shape.map(() => 0),
    [...index.shape],
  );
}

function scatterWith(args: Readonly<Record<string, RuntimeArg>>, reduction: ScatterReduction): Tensor {
  const self = T(args.self);
  const index = T(args.index);
  const src = args.src instanceof Tensor ? srcFor(args.src, index) : full(index.shape, scalar(args.value), self.dtype);
  return scatterElements(self, index, src, N(args.dim), reduction);
}

defineImpl('aten.scatter.src', (args) => [scatterWith(args, 'none')]);
defineImpl('aten.scatter.value', (args) => [scatterWith(args, 'none')]);
defineImpl('aten.scatter_add.default', (args) => [scatterWith(args, 'add')]);
defineImpl('aten.scatter.reduce', (args) => [scatterWith(args, args.reduce === 'multiply' ? 'mul' : 'add')]);
const REDUCTIONS: Record<string, ScatterReduction> = { sum: 'add', prod: 'mul', amax: 'max', amin: 'min' };
defineImpl('aten.scatter_reduce.two', (args) => {
  const reduction = REDUCTIONS[args.reduce as string];
  if (reduction === undefined) throw new InvalidArgumentError(`scatter_reduce: reduce "${String(args.reduce)}" is not supported`);
  return [scatterWith(args, reduction)];
});

// The mask and self broadcast together, then self's elements where the mask is true (row-major).
defineImpl('aten.masked_select.default', (args) => {
  const self = T(args.self);
  const mask = T(args.mask);
  const shape = broadcastShapes(self.shape, mask.shape);
  return [indexTensor(expand(self, shape), [expand(mask, shape)])];
});

defineImpl('aten.index.Tensor', (args) => {
  const t = T(args.self);
  const indices = args.indices as Array<Tensor | null>;
  const given = indices.flatMap((x, d) => (x === null ? [] : [d]));
  // One integer index tensor is a plain gather along its dim.
  if (given.length === 1 && indices[given[0]!]!.dtype !== 'bool' && indices[given[0]!]!.dtype !== 'uint8') {
    return [gatherAxis(t, indices[given[0]!]!, given[0]!)];
  }
  return [indexTensor(t, indices)];
});

/** The coordinates of the true elements of a mask, one int64 tensor per mask dim. */
function maskCoordinates(mask: Tensor): Tensor[] {
  const hits: number[] = [];
  for (let i = 0; i < mask.size; i++) if (mask.data[i]) hits.push(i);
  const coords: Tensor[] = [];
  let stride = mask.size;
  for (const d of mask.shape) {
    stride /= d;
    const s = stride;
    coords.push(Tensor.from('int64', [hits.length], hits.map((h) => Math.floor(h / s) % d)));
  }
  return coords;
}

defineImpl('aten.index_put.default', (args) => {
  const self = T(args.self);
  const values = T(args.values);
  const reduction: ScatterReduction = args.accumulate ? 'add' : 'none';
  const raw = args.indices as Array<Tensor | null>;
  const indices: Array<Tensor | null> = [];
  for (const x of raw) {
    if (x !== null && (x.dtype === 'bool' || x.dtype === 'uint8')) indices.push(...maskCoordinates(x));
    else indices.push(x);
  }
  if (indices.length > self.rank) throw new InvalidArgumentError(`index_put: ${indices.length} indices for a tensor of shape [${self.shape.join(', ')}]`);
  const positions = indices.flatMap((x, d) => (x === null ? [] : [d]));
  if (positions.length === 0) {
    const v = expand(values, self.shape);
    return [reduction === 'add' ? castTo(add(self, v), self.dtype) : v];
  }
  const b = broadcastShapes(...positions.map((d) => indices[d]!.shape));
  const adjacent = positions[positions.length - 1]! - positions[0]! === positions.length - 1;
  const rest = self.shape.map((_, d) => d).filter((d) => !positions.includes(d));
  const before = adjacent ? rest.filter((d) => d < positions[0]!) : [];
  const after = rest.filter((d) => !before.includes(d));
  // Move the indexed dims first: data [indexed..., before..., after...], updates [B..., before..., after...].
  const perm = [...positions, ...before, ...after];
  const indexedShape = [...before.map((d) => self.shape[d]!), ...b, ...after.map((d) => self.shape[d]!)];
  let updates = expand(values, indexedShape);
  if (before.length > 0) {
    const nb = before.length;
    const nB = b.length;
    updates = permute(updates, [
      ...Array.from({ length: nB }, (_, i) => nb + i),
      ...Array.from({ length: nb }, (_, i) => i),
      ...Array.from({ length: after.length }, (_, i) => nb + nB + i),
    ]);
  }
  const tuples = concat(
    positions.map((d) => unsqueeze(expand(castTo(indices[d]!, 'int64'), b), -1)),
    -1,
  );
  const scattered = scatterND(permute(self, perm), tuples, updates, reduction);
  const inverse = new Array<number>(perm.length);
  perm.forEach((p, i) => (inverse[p] = i));
  return [permute(scattered, inverse)];
});

defineImpl('trt.gather_nd', (args) => [gatherND(T(args.self), T(args.indices), N(args.batch_dims))]);
defineImpl('trt.scatter_nd', (args) => [scatterND(T(args.self), T(args.indices), T(args.updates), args.reduction as ScatterReduction)]);
defineImpl('trt.one_hot', (args) => [oneHot(T(args.indices), N(args.depth), T(args.values), N(args.axis))]);
defineImpl('aten.one_hot.default', (args) => [oneHot(T(args.self), N(args.num_classes), Tensor.from('int64', [2], [0, 1]), -1)]);

// Padding ---------------------------------------------------------------------------------------------

defineImpl('aten.constant_pad_nd.default', (args) => {
  const t = T(args.self);
  return [pad(t, padsFromTorch(ints(args.pad), t.rank), 'constant', scalar(args.value))];
});

const PAD_MODES: Record<string, PadMode> = { constant: 'constant', reflect: 'reflect', replicate: 'edge', circular: 'wrap' };
defineImpl('aten.pad.default', (args) => {
  const t = T(args.self);
  const mode = PAD_MODES[args.mode as string];
  if (mode === undefined) throw new InvalidArgumentError(`pad: unknown mode "${String(args.mode)}"`);
  return [pad(t, padsFromTorch(ints(args.pad), t.rank), mode, args.value === null || args.value === undefined ? 0 : scalar(args.value))];
});

// Filled tensors ----------------------------------------------------------------------------------------

defineImpl('aten.full.default', (args, ctx) => [full(ints(args.size), scalar(args.fill_value), outDType(ctx))]);
defineImpl('aten.zeros.default', (args, ctx) => [full(ints(args.size), 0, outDType(ctx))]);
defineImpl('aten.ones.default', (args, ctx) => [full(ints(args.size), 1, outDType(ctx))]);
defineImpl('aten.full_like.default', (args, ctx) => [full(T(args.self).shape, scalar(args.fill_value), outDType(ctx))]);
defineImpl('aten.zeros_like.default', (args, ctx) => [full(T(args.self).shape, 0, outDType(ctx))]);
defineImpl('aten.ones_like.default', (args, ctx) => [full(T(args.self).shape, 1, outDType(ctx))]);
defineImpl('aten.new_zeros.default', (args, ctx) => [full(ints(args.size), 0, outDType(ctx))]);
defineImpl('aten.zero.default', (args) => [full(T(args.self).shape, 0, T(args.self).dtype)]);
defineImpl('aten.diff.default', (args) => {
  const self = T(args.self);
  const dim = N(args.dim) < 0 ? N(args.dim) + self.rank : N(args.dim);
  const parts = [args.prepend, self, args.append].filter((t): t is Tensor => t instanceof Tensor);
  let x = parts.length === 1 ? self : concat(parts, dim);
  for (let k = 0; k < N(args.n); k++) {
    const size = x.shape[dim]!;
    const [next, prev] = [slice(x, dim, 1, size), slice(x, dim, 0, size - 1)];
    x = x.dtype === 'bool' ? logicalXor(next, prev) : sub(next, prev);
  }
  return [x];
});
defineImpl('aten.new_ones.default', (args, ctx) => [full(ints(args.size), 1, outDType(ctx))]);
defineImpl('aten.new_full.default', (args, ctx) => [full(ints(args.size), scalar(args.fill_value), outDType(ctx))]);

defineImpl('aten.arange.default', (args, ctx) => [arange(0, scalar(args.end), 1, outDType(ctx))]);
defineImpl('aten.arange.start', (args, ctx) => [arange(scalar(args.start), scalar(args.end), 1, outDType(ctx))]);
defineImpl('aten.arange.start_step', (args, ctx) => [arange(scalar(args.start), scalar(args.end), scalar(args.step), outDType(ctx))]);

// Same-shape rearrangements --------------------------------------------------------------------------------

defineImpl('aten.triu.default', (args) => [triu(T(args.self), N(args.diagonal))]);
defineImpl('aten.tril.default', (args) => [tril(T(args.self), N(args.diagonal))]);
defineImpl('aten.flip.default', (args) => [flip(T(args.self), ints(args.dims))]);

/** Rolls one axis by `shift` (elements move towards higher indices) as two slices joined. */
function rollAxis(t: Tensor, axis: number, shift: number): Tensor {
  const n = t.shape[axis]!;
  if (n === 0) return t;
  const s = ((shift % n) + n) % n;
  if (s === 0) return t;
  return concat([slice(t, axis, n - s, n), slice(t, axis, 0, n - s)], axis);
}

defineImpl('aten.roll.default', (args) => {
  const t = T(args.self);
  const shifts = ints(args.shifts);
  const dims = ints(args.dims);
  if (dims.length === 0) return [reshape(rollAxis(flatten(t), 0, shifts[0]!), t.shape)];
  let out = t;
  dims.forEach((d, i) => (out = rollAxis(out, axisOf(d, t.rank, 'roll'), shifts[i]!)));
  return [out === t ? reshape(t, t.shape) : out];
});

// Scatters of slices ----------------------------------------------------------------------------------------

/** Writes `src` over positions start, start+step, ... of `axis` (PyTorch's slice bounds), by an element scatter. */
function writeSlice(self: Tensor, src: Tensor, axis: number, start: number | undefined, end: number | undefined, step: number): Tensor {
  const n = self.shape[axis]!;
  const clamp = (v: number): number => Math.min(Math.max(v < 0 ? v + n : v, 0), n);
  const s = clamp(start ?? 0);
  const e = Math.max(clamp(end ?? n), s);
  const count = Math.ceil((e - s) / step);
  if (src.shape[axis] !== count) throw new InvalidArgumentError(`slice_scatter: src has ${src.shape[axis]} elements along dim ${axis}, the slice ${count}`);
  const line = Tensor.from(
    'int64',
    [count],
    Array.from({ length: count }, (_, i) => s + i * step),
  );
  const shape = src.shape.map((_, i) => (i === axis ? count : 1));
  const index = expand(reshape(line, shape), src.shape);
  return scatterElements(self, index, castTo(src, self.dtype), axis, 'none');
}

defineImpl('aten.slice_scatter.default', (args) => {
  const self = T(args.self);
  const a = axisOf(N(args.dim), self.rank, 'slice_scatter');
  return [writeSlice(self, T(args.src), a, optN(args.start), optN(args.end), N(args.step))];
});

defineImpl('aten.select_scatter.default', (args) => {
  const self = T(args.self);
  const a = axisOf(N(args.dim), self.rank, 'select_scatter');
  const i = wrapIndex(N(args.index), self.shape[a]!, 'select_scatter');
  return [writeSlice(self, unsqueeze(T(args.src), a), a, i, i + 1, 1)];
});
