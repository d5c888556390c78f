/**
 * Data-movement kernels: reshaping, permuting, slicing, joining, padding and filling.
 *
 * These copy elements of any dtype exactly (int64 as bigints, float16/bfloat16 as their raw
 * bits, complex as interleaved pairs) and never go through float64, so they are lossless.
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, isComplex, type DType, type TypedArray } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { broadcastShapes, fromNumbers, normalizeAxis, stepIndex, stridesOf } from './access';

/** Element slots of any typed array, read and written without conversion. */
type Slots = { [index: number]: number | bigint; readonly length: number };

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** Fresh zeroed storage for `count` elements of `dtype` (complex: 2 slots each). */
export function allocateData(dtype: DType, count: number): TypedArray {
  const info = dtypeInfo(dtype);
  return new info.storage(count * info.lanes);
}

/**
 * Copies `length` storage slots from `src` to `dst` (same typed-array type). Exists because
 * `set`/`subarray` on the TypedArray union do not type-check (BigInt64Array's element type).
 */
export function copyRange(dst: TypedArray, dstStart: number, src: TypedArray, srcStart: number, length: number): void {
  (dst as Float64Array).set((src as Float64Array).subarray(srcStart, srcStart + length), dstStart);
}

/**
 * Copies a strided view of `t` into a new contiguous tensor of `outShape`: output element at
 * multi-index i reads input element `offset + sum(i[k] * strides[k])` (strides in elements,
 * may be 0 or negative). The backbone of permute, expand, slice, flip and tile.
 */
export function copyStrided(t: Tensor, outShape: Shape, strides: readonly number[], offset: number): Tensor {
  const lanes = dtypeInfo(t.dtype).lanes;
  const n = shapeSize(outShape);
  const out = allocateData(t.dtype, n);
  if (n === 0) return new Tensor(t.dtype, outShape, out);
  const src = t.data as unknown as Slots;
  const dst = out as unknown as Slots;
  const rank = outShape.length;
  if (rank === 0) {
    for (let l = 0; l < lanes; l++) dst[l] = src[offset * lanes + l]!;
    return new Tensor(t.dtype, outShape, out);
  }
  const inner = outShape[rank - 1]!;
  const innerStride = strides[rank - 1]!;
  const rows = n / inner;
  const counter = new Array<number>(rank).fill(0);
  let base = offset;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    if (lanes === 1) {
      if (innerStride === 1 && inner >= 16) {
        copyRange(out, o, t.data, base, inner);
        o += inner;
      } else {
        for (let j = 0, s = base; j < inner; j++, s += innerStride) dst[o++] = src[s]!;
      }
    } else {
      for (let j = 0, s = base * 2; j < inner; j++, s += innerStride * 2) {
        dst[o++] = src[s]!;
        dst[o++] = src[s + 1]!;
      }
    }
    base += stepIndex(counter, outShape, strides, rank - 1);
  }
  return new Tensor(t.dtype, outShape, out);
}

/** A new tensor of `outShape` whose element k is element `sourceIndex[k]` of `t` (exact copy, any dtype). */
export function takeElements(t: Tensor, outShape: Shape, sourceIndex: ArrayLike<number>): Tensor {
  const n = shapeSize(outShape);
  const out = allocateData(t.dtype, n);
  takeElementsInto(t, out, 0, sourceIndex, n);
  return new Tensor(t.dtype, outShape, out);
}

/** Writes elements `sourceIndex[0..count)` of `t` into elements `at…` of `out` (storage of t's dtype): takeElements a chunk at a time. */
export function takeElementsInto(t: Tensor, out: TypedArray, at: number, sourceIndex: ArrayLike<number>, count: number): void {
  const src = t.data as unknown as Slots;
  const dst = out as unknown as Slots;
  if (dtypeInfo(t.dtype).lanes === 1) {
    for (let k = 0; k < count; k++) dst[at + k] = src[sourceIndex[k]!]!;
  } else {
    for (let k = 0; k < count; k++) {
      const s = sourceIndex[k]! * 2;
      dst[2 * (at + k)] = src[s]!;
      dst[2 * (at + k) + 1] = src[s + 1]!;
    }
  }
}

/** The storage slots (1, or 2 for complex) that represent the scalar `value` in `dtype`. */
export function scalarSlots(dtype: DType, value: number | bigint | boolean): TypedArray {
  if (dtype === 'int64') {
    const v = typeof value === 'bigint' ? BigInt.asIntN(64, value) : fromNumbers('int64', [], [Number(value)]).data[0]!;
    return BigInt64Array.of(v as bigint);
  }
  if (dtype === 'uint64') {
    const v = typeof value === 'bigint' ? BigInt.asUintN(64, value) : fromNumbers('uint64', [], [Number(value)]).data[0]!;
    return BigUint64Array.of(v as bigint);
  }
  const v = Number(value);
  return fromNumbers(dtype, [], isComplex(dtype) ? [v, 0] : [v]).data;
}

/** A tensor with the same elements as `t` (copied) and another shape. */
function withShape(t: Tensor, shape: Shape): Tensor {
  return new Tensor(t.dtype, shape, t.data.slice());
}

/**
 * torch.reshape: at most one -1 (inferred), 0 is a literal 0. With `copyZeroDims` (ONNX
 * Reshape without allowzero), a 0 copies the input's dimension at that position instead.
 */
export function reshape(t: Tensor, shape: readonly number[], options: { copyZeroDims?: boolean } = {}): Tensor {
  const dims = shape.map((d, i) => {
    if (options.copyZeroDims && d === 0) {
      if (i >= t.rank) throw new InvalidArgumentError(`reshape: shape ${fmt(shape)} copies dim ${i} of a rank-${t.rank} input`);
      return t.shape[i]!;
    }
    return d;
  });
  const inferred = dims.filter((d) => d === -1).length;
  if (inferred > 1 || dims.some((d) => !Number.isInteger(d) || d < -1)) {
    throw new InvalidArgumentError(`reshape: invalid target shape ${fmt(shape)} for input ${fmt(t.shape)}`);
  }
  if (inferred === 1) {
    const known = dims.reduce((p, d) => (d === -1 ? p : p * d), 1);
    if (known === 0 || t.size % known !== 0) {
      throw new InvalidArgumentError(`reshape: cannot infer the -1 of ${fmt(shape)} for an input of shape ${fmt(t.shape)}`);
    }
    dims[dims.indexOf(-1)] = t.size / known;
  }
  if (shapeSize(dims) !== t.size) {
    throw new InvalidArgumentError(`reshape: cannot reshape an input of shape ${fmt(t.shape)} (${t.size} elements) to ${fmt(shape)}`);
  }
  return withShape(t, dims);
}

/** Normalizes a list of axes, rejecting duplicates; `op` names the kernel in errors. */
function normalizeAxes(axes: readonly number[], rank: number, op: string): number[] {
  const out = axes.map((a) => normalizeAxis(a, rank, op));
  if (new Set(out).size !== out.length) throw new InvalidArgumentError(`${op}: repeated axis in [${axes.join(', ')}]`);
  return out;
}

/** torch.permute / ONNX Transpose: output dim i is input dim perm[i] (negative entries allowed). */
export function permute(t: Tensor, perm: readonly number[]): Tensor {
  if (perm.length !== t.rank) {
    throw new InvalidArgumentError(`permute: perm [${perm.join(', ')}] does not match an input of shape ${fmt(t.shape)}`);
  }
  const p = normalizeAxes(perm, t.rank, 'permute');
  const inStrides = stridesOf(t.shape);
  return copyStrided(
    t,
    p.map((a) => t.shape[a]!),
    p.map((a) => inStrides[a]!),
    0,
  );
}

/** torch.transpose: swaps two dims. */
export function transpose(t: Tensor, dim0: number, dim1: number): Tensor {
  const perm = t.shape.map((_, i) => i);
  const a = normalizeAxis(dim0, t.rank, 'transpose');
  const b = normalizeAxis(dim1, t.rank, 'transpose');
  if (t.rank === 0) return withShape(t, []);
  perm[a] = b;
  perm[b] = a;
  return permute(t, perm);
}

/** torch.expand / broadcast_to: size-1 dims stretch, new leading dims are added, -1 keeps a dim. */
export function expand(t: Tensor, shape: readonly number[]): Tensor {
  const lead = shape.length - t.rank;
  if (lead < 0) throw new InvalidArgumentError(`expand: target ${fmt(shape)} has fewer dims than the input ${fmt(t.shape)}`);
  const inStrides = stridesOf(t.shape);
  const outShape: number[] = [];
  const strides: number[] = [];
  shape.forEach((d, i) => {
    if (i < lead) {
      if (!Number.isInteger(d) || d < 0) throw new InvalidArgumentError(`expand: invalid new leading dim ${d} in ${fmt(shape)}`);
      outShape.push(d);
      strides.push(0);
      return;
    }
    const src = t.shape[i - lead]!;
    const target = d === -1 ? src : d;
    if (target === src) {
      outShape.push(src);
      strides.push(inStrides[i - lead]!);
    } else if (src === 1 && Number.isInteger(target) && target >= 0) {
      outShape.push(target);
      strides.push(0);
    } else {
      throw new InvalidArgumentError(`expand: cannot expand an input of shape ${fmt(t.shape)} to ${fmt(shape)}`);
    }
  });
  return copyStrided(t, outShape, strides, 0);
}

/** ONNX Expand: the output shape is the broadcast of the input shape and `shape` (either may stretch). */
export function expandBidirectional(t: Tensor, shape: readonly number[]): Tensor {
  return expand(t, broadcastShapes(t.shape, shape));
}

/** torch.squeeze: drops the given size-1 dims (others are left, as in PyTorch), or all size-1 dims. */
export function squeeze(t: Tensor, axes?: number | readonly number[]): Tensor {
  if (axes === undefined) return withShape(t, t.shape.filter((d) => d !== 1));
  const list = normalizeAxes(typeof axes === 'number' ? [axes] : axes, t.rank, 'squeeze');
  return withShape(
    t,
    t.shape.filter((d, i) => !(d === 1 && list.includes(i))),
  );
}

/** torch.unsqueeze / ONNX Unsqueeze: inserts size-1 dims at `axes`, which index the output. */
export function unsqueeze(t: Tensor, axes: number | readonly number[]): Tensor {
  const list = typeof axes === 'number' ? [axes] : axes;
  const rank = t.rank + list.length;
  const at = new Set(normalizeAxes(list, rank, 'unsqueeze'));
  const shape: number[] = [];
  let j = 0;
  for (let i = 0; i < rank; i++) shape.push(at.has(i) ? 1 : t.shape[j++]!);
  return withShape(t, shape);
}

/** torch.flatten: merges dims start..end (inclusive); a scalar becomes [1]. */
export function flatten(t: Tensor, start = 0, end = -1): Tensor {
  if (t.rank === 0) return withShape(t, [1]);
  const s = normalizeAxis(start, t.rank, 'flatten');
  const e = normalizeAxis(end, t.rank, 'flatten');
  if (s > e) throw new InvalidArgumentError(`flatten: start dim ${start} comes after end dim ${end} for shape ${fmt(t.shape)}`);
  const merged = shapeSize(t.shape.slice(s, e + 1));
  return withShape(t, [...t.shape.slice(0, s), merged, ...t.shape.slice(e + 1)]);
}

/** ONNX Flatten: a 2-D result [prod(dims before axis), prod(dims from axis)]; axis in [-rank, rank]. */
export function flatten2d(t: Tensor, axis = 1): Tensor {
  const a = axis < 0 ? axis + t.rank : axis;
  if (!Number.isInteger(a) || a < 0 || a > t.rank) {
    throw new InvalidArgumentError(`flatten2d: axis ${axis} is out of range for a tensor of shape ${fmt(t.shape)}`);
  }
  return withShape(t, [shapeSize(t.shape.slice(0, a)), shapeSize(t.shape.slice(a))]);
}

/**
 * torch.cat / ONNX Concat along `axis`. All tensors must share a dtype (promote in the
 * caller); as in PyTorch, 1-D empty tensors are skipped when the others have another rank.
 */
export function concat(tensors: readonly Tensor[], axis: number): Tensor {
  if (tensors.length === 0) throw new InvalidArgumentError('concat: no tensors given');
  const dtype = tensors[0]!.dtype;
  const mixed = tensors.find((t) => t.dtype !== dtype);
  if (mixed !== undefined) throw new InvalidArgumentError(`concat: dtypes ${dtype} and ${mixed.dtype} differ (promote first)`);
  const isLegacyEmpty = (t: Tensor): boolean => t.rank === 1 && t.shape[0] === 0;
  const ref = tensors.find((t) => !isLegacyEmpty(t)) ?? tensors[0]!;
  const parts = ref.rank === 1 ? tensors : tensors.filter((t) => !isLegacyEmpty(t));
  const a = normalizeAxis(axis, ref.rank, 'concat');
  if (ref.rank === 0) throw new InvalidArgumentError('concat: zero-dimensional tensors cannot be concatenated');
  for (const t of parts) {
    const ok = t.rank === ref.rank && t.shape.every((d, i) => i === a || d === ref.shape[i]);
    if (!ok) {
      throw new InvalidArgumentError(`concat: shapes ${parts.map((p) => fmt(p.shape)).join(', ')} do not match outside axis ${axis}`);
    }
  }
  const outShape = [...ref.shape];
  outShape[a] = parts.reduce((s, t) => s + t.shape[a]!, 0);
  const lanes = dtypeInfo(dtype).lanes;
  const outer = shapeSize(ref.shape.slice(0, a));
  const inner = shapeSize(ref.shape.slice(a + 1)) * lanes;
  const out = allocateData(dtype, shapeSize(outShape));
  let o = 0;
  for (let i = 0; i < outer; i++) {
    for (const t of parts) {
      const chunk = t.shape[a]! * inner;
      copyRange(out, o, t.data, i * chunk, chunk);
      o += chunk;
    }
  }
  return new Tensor(dtype, outShape, out);
}

/**
 * torch.split / ONNX Split along `axis`: `sizes` as a list must sum to the dim; as a number
 * it is a chunk size (the last chunk may be smaller).
 */
export function split(t: Tensor, sizes: number | readonly number[], axis = 0): Tensor[] {
  if (t.rank === 0) throw new InvalidArgumentError('split: a scalar cannot be split');
  const a = normalizeAxis(axis, t.rank, 'split');
  const dim = t.shape[a]!;
  let list: number[];
  if (typeof sizes === 'number') {
    if (!Number.isInteger(sizes) || sizes <= 0) throw new InvalidArgumentError(`split: chunk size ${sizes} must be a positive integer`);
    list = [];
    for (let s = 0; s < dim; s += sizes) list.push(Math.min(sizes, dim - s));
    if (list.length === 0) list.push(0);
  } else {
    list = [...sizes];
    const total = list.reduce((s, x) => s + x, 0);
    if (total !== dim || list.some((x) => !Number.isInteger(x) || x < 0)) {
      throw new InvalidArgumentError(`split: sizes [${list.join(', ')}] do not add up to dim ${a} of shape ${fmt(t.shape)}`);
    }
  }
  const out: Tensor[] = [];
  let start = 0;
  for (const size of list) {
    out.push(slice(t, a, start, start + size));
    start += size;
  }
  return out;
}

interface AxisSlice {
  start: number;
  step: number;
  count: number;
}

/** Resolves one axis of a slice with ONNX Slice's clamping (which PyTorch's agrees with for step > 0). */
function resolveSlice(dim: number, start: number | bigint | undefined, end: number | bigint | undefined, step: number): AxisSlice {
  if (!Number.isInteger(step) || step === 0) throw new InvalidArgumentError(`slice: step ${step} must be a non-zero integer`);
  const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi);
  let s: number;
  let e: number;
  if (step > 0) {
    s = start === undefined ? 0 : Number(start);
    e = end === undefined ? dim : Number(end);
    s = clamp(s < 0 ? s + dim : s, 0, dim);
    e = clamp(e < 0 ? e + dim : e, 0, dim);
  } else {
    s = start === undefined ? dim - 1 : Number(start);
    // An absent end means "past the front", which no negative index can express.
    e = end === undefined ? -Infinity : Number(end);
    s = clamp(s < 0 ? s + dim : s, 0, dim - 1);
    e = clamp(e < 0 ? e + dim : e, -1, dim - 1);
  }
  const count = Math.max(0, Math.ceil((e - s) / step));
  return { start: s, step, count };
}

/** Copies out the slices chosen per axis (axes without an entry are taken whole). */
function sliceResolved(t: Tensor, perAxis: ReadonlyMap<number, AxisSlice>): Tensor {
  const inStrides = stridesOf(t.shape);
  let offset = 0;
  const outShape: number[] = [];
  const strides: number[] = [];
  t.shape.forEach((d, i) => {
    const s = perAxis.get(i);
    if (s === undefined) {
      outShape.push(d);
      strides.push(inStrides[i]!);
    } else {
      outShape.push(s.count);
      strides.push(inStrides[i]! * s.step);
      if (s.count > 0) offset += s.start * inStrides[i]!;
    }
  });
  return copyStrided(t, outShape, strides, offset);
}

/**
 * torch.slice / one axis of ONNX Slice: elements start, start+step, ... before end. Negative
 * start/end count from the end; out-of-range values (INT64_MAX and such, as number or
 * bigint) are clamped as ONNX specifies; a negative step walks backwards.
 */
export function slice(t: Tensor, axis: number, start?: number | bigint, end?: number | bigint, step = 1): Tensor {
  if (t.rank === 0) throw new InvalidArgumentError('slice: a scalar cannot be sliced');
  const a = normalizeAxis(axis, t.rank, 'slice');
  return sliceResolved(t, new Map([[a, resolveSlice(t.shape[a]!, start, end, step)]]));
}

/** ONNX Slice over several axes at once (axes default to 0..n-1, steps to 1). */
export function sliceAxes(
  t: Tensor,
  starts: readonly (number | bigint)[],
  ends: readonly (number | bigint)[],
  axes?: readonly number[],
  steps?: readonly number[],
): Tensor {
  if (t.rank === 0) throw new InvalidArgumentError('sliceAxes: a scalar cannot be sliced');
  const ax = axes ?? starts.map((_, i) => i);
  if (ends.length !== starts.length || ax.length !== starts.length || (steps !== undefined && steps.length !== starts.length)) {
    throw new InvalidArgumentError(`sliceAxes: starts, ends, axes and steps must have the same length (input ${fmt(t.shape)})`);
  }
  const norm = normalizeAxes(ax, t.rank, 'sliceAxes');
  const perAxis = new Map<number, AxisSlice>();
  norm.forEach((a, i) => perAxis.set(a, resolveSlice(t.shape[a]!, starts[i], ends[i], steps?.[i] ?? 1)));
  return sliceResolved(t, perAxis);
}

/**
 * ONNX Tile / torch.Tensor.repeat / torch.tile: repeats the tensor `repeats[i]` times along
 * dim i. A longer `repeats` adds leading dims; a shorter one is padded with leading 1s.
 */
export function tile(t: Tensor, repeats: readonly number[]): Tensor {
  if (repeats.some((r) => !Number.isInteger(r) || r < 0)) {
    throw new InvalidArgumentError(`tile: repeats [${repeats.join(', ')}] must be non-negative integers`);
  }
  const rank = Math.max(t.rank, repeats.length);
  const shape = [...new Array<number>(rank - t.rank).fill(1), ...t.shape];
  const reps = [...new Array<number>(rank - repeats.length).fill(1), ...repeats];
  const inStrides = stridesOf(shape);
  // Tiling is a strided copy of [r0, d0, r1, d1, ...] with stride 0 on each repeat axis,
  // whose row-major layout is exactly that of the tiled [r0*d0, r1*d1, ...].
  const viewShape: number[] = [];
  const viewStrides: number[] = [];
  for (let i = 0; i < rank; i++) {
    viewShape.push(reps[i]!, shape[i]!);
    viewStrides.push(0, inStrides[i]!);
  }
  const view = copyStrided(t, viewShape, viewStrides, 0);
  return new Tensor(
    t.dtype,
    shape.map((d, i) => d * reps[i]!),
    view.data,
  );
}

/** torch.flip: reverses the order of elements along each of `axes`. */
export function flip(t: Tensor, axes: readonly number[]): Tensor {
  const list = normalizeAxes(axes, t.rank, 'flip');
  if (t.rank === 0) return withShape(t, []);
  const strides = stridesOf(t.shape);
  let offset = 0;
  for (const a of list) {
    offset += (t.shape[a]! - 1) * strides[a]!;
    strides[a] = -strides[a]!;
  }
  return t.size === 0 ? withShape(t, t.shape) : copyStrided(t, t.shape, strides, offset);
}

/** How pad fills the border: a constant, a mirror without the edge, the edge repeated, or wrap-around. */
export type PadMode = 'constant' | 'reflect' | 'edge' | 'wrap';

/** Source index along an axis of size `dim` for padded position `p` (relative to the data), or -1 for the constant. */
export function padSource(p: number, dim: number, mode: PadMode): number {
  if (p >= 0 && p < dim) return p;
  switch (mode) {
    case 'constant':
      return -1;
    case 'edge':
      return p < 0 ? 0 : dim - 1;
    case 'wrap':
      return ((p % dim) + dim) % dim;
    case 'reflect': {
      if (dim === 1) return 0;
      const period = 2 * (dim - 1);
      const m = ((p % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
}

/** Converts torch.nn.functional.pad's list (last dim first, begin/end pairs) into {@link pad}'s ONNX layout. */
export function padsFromTorch(torchPad: readonly number[], rank: number): number[] {
  if (torchPad.length % 2 !== 0 || torchPad.length / 2 > rank) {
    throw new InvalidArgumentError(`padsFromTorch: pad list of length ${torchPad.length} does not fit a rank-${rank} tensor`);
  }
  const pads = new Array<number>(2 * rank).fill(0);
  for (let k = 0; k < torchPad.length / 2; k++) {
    const axis = rank - 1 - k;
    pads[axis] = torchPad[2 * k]!;
    pads[rank + axis] = torchPad[2 * k + 1]!;
  }
  return pads;
}

/**
 * ONNX Pad / F.pad: `pads` is [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}] (negative
 * values crop). Modes: 'constant' (fills `value`), 'reflect' (mirror excluding the edge),
 * 'edge' (replicate), 'wrap' (circular).
 */
export function pad(t: Tensor, pads: readonly number[], mode: PadMode = 'constant', value: number | bigint = 0): Tensor {
  const rank = t.rank;
  if (pads.length !== 2 * rank || pads.some((p) => !Number.isInteger(p))) {
    throw new InvalidArgumentError(`pad: pads [${pads.join(', ')}] must be 2 integers per axis of shape ${fmt(t.shape)}`);
  }
  const outShape = t.shape.map((d, i) => d + pads[i]! + pads[rank + i]!);
  if (outShape.some((d) => d < 0)) throw new InvalidArgumentError(`pad: pads [${pads.join(', ')}] crop ${fmt(t.shape)} below zero`);
  if (mode !== 'constant') {
    t.shape.forEach((d, i) => {
      if (d === 0 && outShape[i]! > 0) throw new InvalidArgumentError(`pad: ${mode} padding of an empty axis ${i} of ${fmt(t.shape)}`);
    });
  }
  const inStrides = stridesOf(t.shape);
  // Per-axis source offsets; padding gets a huge negative offset so a sum is negative
  // exactly when some axis is in the padding.
  const PAD = -(2 ** 40);
  const offsets = outShape.map((d, ax) => {
    const arr = new Float64Array(d);
    for (let i = 0; i < d; i++) {
      const s = padSource(i - pads[ax]!, t.shape[ax]!, mode);
      arr[i] = s < 0 ? PAD : s * inStrides[ax]!;
    }
    return arr;
  });
  const n = shapeSize(outShape);
  const lanes = dtypeInfo(t.dtype).lanes;
  const out = allocateData(t.dtype, n);
  const dst = out as unknown as Slots;
  const src = t.data as unknown as Slots;
  const fill = scalarSlots(t.dtype, value) as unknown as Slots;
  const counter = new Array<number>(rank).fill(0);
  for (let k = 0; k < n; k++) {
    let s = 0;
    for (let ax = 0; ax < rank; ax++) s += offsets[ax]![counter[ax]!]!;
    for (let l = 0; l < lanes; l++) dst[k * lanes + l] = s < 0 ? fill[l]! : src[s * lanes + l]!;
    for (let ax = rank - 1; ax >= 0; ax--) {
      if (++counter[ax]! < outShape[ax]!) break;
      counter[ax] = 0;
    }
  }
  return new Tensor(t.dtype, outShape, out);
}

/** Keeps elements of the last two dims where `keep(col - row)` holds, zeroing the rest. */
function triangle(t: Tensor, keep: (offset: number) => boolean, op: string): Tensor {
  if (t.rank < 2) throw new InvalidArgumentError(`${op}: needs at least 2 dims, got shape ${fmt(t.shape)}`);
  const rows = t.shape[t.rank - 2]!;
  const cols = t.shape[t.rank - 1]!;
  const lanes = dtypeInfo(t.dtype).lanes;
  const out = allocateData(t.dtype, t.size);
  const src = t.data as unknown as Slots;
  const dst = out as unknown as Slots;
  const batches = rows * cols === 0 ? 0 : t.size / (rows * cols);
  for (let b = 0; b < batches; b++) {
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        if (!keep(c - r)) continue;
        const k = ((b * rows + r) * cols + c) * lanes;
        for (let l = 0; l < lanes; l++) dst[k + l] = src[k + l]!;
      }
    }
  }
  return new Tensor(t.dtype, t.shape, out);
}

/** torch.triu: keeps elements on and above the `diagonal`-th diagonal of the last two dims. */
export function triu(t: Tensor, diagonal = 0): Tensor {
  return triangle(t, (d) => d >= diagonal, 'triu');
}

/** torch.tril: keeps elements on and below the `diagonal`-th diagonal of the last two dims. */
export function tril(t: Tensor, diagonal = 0): Tensor {
  return triangle(t, (d) => d <= diagonal, 'tril');
}

/**
 * torch.arange / ONNX Range: start, start+step, ... below `end` (above it for a negative
 * step), ceil((end-start)/step) elements. Integer dtypes are exact (int64 through bigints);
 * floats compute start + i*step in float64 and round once. The default dtype is int64 when
 * all arguments are integers, else float32.
 */
export function arange(start: number | bigint, end: number | bigint, step: number | bigint = 1, dtype?: DType): Tensor {
  const allInts = [start, end, step].every((v) => typeof v === 'bigint' || Number.isInteger(v));
  const type: DType = dtype ?? (allInts ? 'int64' : 'float32');
  if (Number(step) === 0) throw new InvalidArgumentError('arange: step must be non-zero');
  if ([start, end, step].some((v) => typeof v === 'number' && !Number.isFinite(v))) {
    throw new InvalidArgumentError(`arange: start ${start}, end ${end} and step ${step} must be finite`);
  }
  let length: number;
  if (allInts) {
    const diff = BigInt(end) - BigInt(start);
    const st = BigInt(step);
    // bigint division truncates; round a positive inexact quotient up to get the ceiling
    const q = diff / st + (diff % st !== 0n && diff > 0n === st > 0n ? 1n : 0n);
    length = Number(q);
  } else {
    length = Math.ceil((Number(end) - Number(start)) / Number(step));
  }
  length = Math.max(0, length);
  if ((type === 'int64' || type === 'uint64') && allInts) {
    // The stores wrap modulo 2^64.
    const data = type === 'int64' ? new BigInt64Array(length) : new BigUint64Array(length);
    const s = BigInt(start);
    const st = BigInt(step);
    for (let i = 0; i < length; i++) data[i] = s + BigInt(i) * st;
    return new Tensor(type, [length], data);
  }
  const lanes = dtypeInfo(type).lanes;
  const values = new Float64Array(length * lanes);
  const s = Number(start);
  const st = Number(step);
  for (let i = 0; i < length; i++) values[i * lanes] = s + i * st;
  return fromNumbers(type, [length], values);
}

/** torch.full / ONNX ConstantOfShape: a tensor of `shape` filled with `value` (bigint keeps int64 and uint64 exact). */
export function full(shape: Shape, value: number | bigint | boolean, dtype: DType): Tensor {
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new InvalidArgumentError(`full: invalid shape ${fmt(shape)}`);
  const slots = scalarSlots(dtype, value);
  const n = shapeSize(shape);
  const out = allocateData(dtype, n);
  if (slots.length === 1) (out as Float64Array).fill((slots as Float64Array)[0]!);
  else for (let k = 0; k < n; k++) copyRange(out, k * 2, slots, 0, 2);
  return new Tensor(dtype, shape, out);
}
