/**
 * Indexing kernels: gathers and scatters (ONNX Gather, GatherElements, GatherND, ScatterND,
 * ScatterElements; torch index_select, embedding, gather, advanced indexing), one-hot, top-k
 * and resizing (ONNX Resize, torch upsample/interpolate).
 *
 * Gathers, scatters without reduction, one-hot, top-k values and nearest resizing move
 * elements exactly, in any dtype; int64 scatter reductions are exact too. Index tensors may
 * be any integer type; an index into a dim of size d must lie in [-d, d) (negatives count
 * from the end), anything else is a BadInputError (`E_BAD_INPUT`) naming the index.
 */
import { BadInputError, InvalidArgumentError } from '../errors';
import { dtypeInfo, isBigIntDType, isComplex, isInteger } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { broadcastIndex, broadcastShapes, fromNumbers, normalizeAxis, readNumbers, stridesOf } from './access';
import { allocateData, copyRange, takeElements } from './shape';
import { filterTaps, lerpTaps, nearestIndex, resizedAxes, sourceCoordinate, type CoordinateTransform, type FilterOptions, type NearestMode } from './resize-coords';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** Element slots of any typed array, read and written without conversion. */
type Slots = { [index: number]: number | bigint; readonly length: number };

/**
 * The values of an integer index tensor as numbers. Past ±2^53 they round, but stay far
 * outside any dim, so range checks hold; messages print the exact value (indexText).
 */
function readIndices(indices: Tensor, op: string): Float64Array {
  if (!isInteger(indices.dtype)) throw new InvalidArgumentError(`${op}: indices must be an integer tensor, got ${indices.dtype}`);
  return readNumbers(indices);
}

/** Where an index value came from, for the error that names it exactly. */
interface IndexSource {
  readonly indices: Tensor;
  readonly k: number;
}

/**
 * An index into a dim of size `dim`: [-d, d), negatives counted from the end. Anything else
 * is run-time data the op cannot process: a BadInputError naming the exact index value.
 */
function wrapIndex(index: number, dim: number, op: string, what: string, source?: IndexSource): number {
  const i = index < 0 ? index + dim : index;
  if (i < 0 || i >= dim) {
    const exact = source === undefined ? String(index) : String(source.indices.data[source.k]);
    throw new BadInputError(`${op}: index ${exact} is out of range [${-dim}, ${dim}) for ${what} of size ${dim}`, {
      details: { index: exact, dim },
    });
  }
  return i;
}

/**
 * ONNX Gather / torch.index_select generalized: picks slices along `axis` by an index
 * tensor of any shape; output shape = data.shape[:axis] + indices.shape + data.shape[axis+1:].
 */
export function gather(data: Tensor, indices: Tensor, axis = 0): Tensor {
  const op = 'gather';
  if (data.rank === 0) throw new InvalidArgumentError(`${op}: data must have at least 1 dim`);
  const a = normalizeAxis(axis, data.rank, op);
  const idx = readIndices(indices, op);
  const dim = data.shape[a]!;
  const lanes = dtypeInfo(data.dtype).lanes;
  const outer = shapeSize(data.shape.slice(0, a));
  const inner = shapeSize(data.shape.slice(a + 1)) * lanes;
  const wrapped = Array.from(idx, (v, k) => wrapIndex(v, dim, op, `axis ${a} of data ${fmt(data.shape)}`, { indices, k }));
  const outShape = [...data.shape.slice(0, a), ...indices.shape, ...data.shape.slice(a + 1)];
  const out = allocateData(data.dtype, shapeSize(outShape));
  let o = 0;
  for (let i = 0; i < outer; i++) {
    for (const j of wrapped) {
      copyRange(out, o, data.data, (i * dim + j) * inner, inner);
      o += inner;
    }
  }
  return new Tensor(data.dtype, outShape, out);
}

/** torch.index_select: `index` is 1-D (or a scalar, treated as one index). */
export function indexSelect(t: Tensor, axis: number, index: Tensor): Tensor {
  if (index.rank > 1) throw new InvalidArgumentError(`indexSelect: index must be 0-D or 1-D, got ${fmt(index.shape)}`);
  return gather(t, index.rank === 0 ? new Tensor(index.dtype, [1], index.data) : index, t.rank === 0 ? 0 : axis);
}

/** torch.nn.functional.embedding: rows of weight [num, dim] picked by indices of any shape. */
export function embedding(weight: Tensor, indices: Tensor): Tensor {
  if (weight.rank !== 2) throw new InvalidArgumentError(`embedding: weight must be 2-D, got ${fmt(weight.shape)}`);
  return gather(weight, indices, 0);
}

/** Source offset in `data` for each element of `indices` (same rank), with the axis coordinate replaced by the index value. */
function elementOffsets(data: Tensor, indices: Tensor, axis: number, op: string): Int32Array {
  if (indices.rank !== data.rank) {
    throw new InvalidArgumentError(`${op}: indices ${fmt(indices.shape)} must have the rank of data ${fmt(data.shape)}`);
  }
  indices.shape.forEach((d, i) => {
    if (i !== axis && d > data.shape[i]!) {
      throw new InvalidArgumentError(`${op}: indices ${fmt(indices.shape)} exceed data ${fmt(data.shape)} at dim ${i}`);
    }
  });
  const idx = readIndices(indices, op);
  const dStrides = stridesOf(data.shape);
  const rank = data.rank;
  const dim = data.shape[axis]!;
  const offsets = new Int32Array(idx.length);
  const counter = new Array<number>(rank).fill(0);
  let base = 0;
  for (let k = 0; k < idx.length; k++) {
    const j = wrapIndex(idx[k]!, dim, op, `axis ${axis} of data ${fmt(data.shape)}`, { indices, k });
    offsets[k] = base + j * dStrides[axis]!;
    for (let ax = rank - 1; ax >= 0; ax--) {
      counter[ax]!++;
      if (ax !== axis) base += dStrides[ax]!;
      if (counter[ax]! < indices.shape[ax]!) break;
      if (ax !== axis) base -= dStrides[ax]! * indices.shape[ax]!;
      counter[ax] = 0;
    }
  }
  return offsets;
}

/** ONNX GatherElements / torch.gather: out[i][j][k] = data[i][index[i][j][k]][k] (for axis 1); output shape = indices shape. */
export function gatherElements(data: Tensor, indices: Tensor, axis: number): Tensor {
  const a = normalizeAxis(axis, data.rank, 'gatherElements');
  return takeElements(data, indices.shape, elementOffsets(data, indices, a, 'gatherElements'));
}

/** How scatters combine an update with the existing value: replace, or a reduction. */
export type ScatterReduction = 'none' | 'add' | 'mul' | 'max' | 'min';

/** Applies updates at `offsets` of a copy of data; 'none' copies slots exactly, reductions go through float64 (int64, uint64: bigints). */
function scatterAt(data: Tensor, offsets: ArrayLike<number>, block: number, updates: Tensor, reduction: ScatterReduction, op: string): Tensor {
  if (updates.dtype !== data.dtype) throw new InvalidArgumentError(`${op}: updates are ${updates.dtype} but data is ${data.dtype}`);
  const lanes = dtypeInfo(data.dtype).lanes;
  if (reduction === 'none') {
    const out = data.data.slice();
    for (let k = 0; k < offsets.length; k++) copyRange(out, offsets[k]! * lanes, updates.data, k * block * lanes, block * lanes);
    return new Tensor(data.dtype, data.shape, out);
  }
  if (isComplex(data.dtype) && reduction !== 'add') throw new InvalidArgumentError(`${op}: reduction ${reduction} is not defined for complex`);
  if (isBigIntDType(data.dtype)) return scatterBigInt(data, offsets, block, updates, reduction);
  const out = Float64Array.from(readNumbers(data));
  const U = readNumbers(updates);
  const combine: (a: number, b: number) => number =
    reduction === 'add' ? (a, b) => a + b : reduction === 'mul' ? (a, b) => a * b : reduction === 'max' ? Math.max : Math.min;
  for (let k = 0; k < offsets.length; k++) {
    const dst = offsets[k]! * lanes;
    const src = k * block * lanes;
    for (let i = 0; i < block * lanes; i++) out[dst + i] = combine(out[dst + i]!, U[src + i]!);
  }
  return fromNumbers(data.dtype, data.shape, out);
}

const INT64_COMBINE: Record<Exclude<ScatterReduction, 'none'>, (a: bigint, b: bigint) => bigint> = {
  add: (a, b) => a + b,
  mul: (a, b) => a * b,
  max: (a, b) => (a > b ? a : b),
  min: (a, b) => (a < b ? a : b),
};

/** scatterAt's reductions on int64 or uint64 data, exactly (stores wrap modulo 2^64). */
function scatterBigInt(data: Tensor, offsets: ArrayLike<number>, block: number, updates: Tensor, reduction: Exclude<ScatterReduction, 'none'>): Tensor {
  const out = (data.data as BigInt64Array | BigUint64Array).slice();
  const U = updates.data as BigInt64Array | BigUint64Array;
  const combine = INT64_COMBINE[reduction];
  for (let k = 0; k < offsets.length; k++) {
    const dst = offsets[k]!;
    const src = k * block;
    for (let i = 0; i < block; i++) out[dst + i] = combine(out[dst + i]!, U[src + i]!);
  }
  return new Tensor(data.dtype, data.shape, out);
}

/**
 * ONNX ScatterElements / torch.scatter (reduction 'none') and scatter_reduce-like reductions:
 * a copy of data with data[..., index[i,j,k], ...] (at `axis`) set from (or combined with)
 * updates[i,j,k]. With duplicate indices and 'none', the last update wins.
 */
export function scatterElements(data: Tensor, indices: Tensor, updates: Tensor, axis: number, reduction: ScatterReduction = 'none'): Tensor {
  const op = 'scatterElements';
  const a = normalizeAxis(axis, data.rank, op);
  if (updates.shape.length !== indices.rank || updates.shape.some((d, i) => d !== indices.shape[i])) {
    throw new InvalidArgumentError(`${op}: updates ${fmt(updates.shape)} must have the shape of indices ${fmt(indices.shape)}`);
  }
  return scatterAt(data, elementOffsets(data, indices, a, op), 1, updates, reduction, op);
}

/** Offsets (in elements) into data of each index tuple in the last dim of `indices`, and the size of the slice each addresses. */
function tupleOffsets(data: Tensor, indices: Tensor, op: string): { offsets: Int32Array; block: number; k: number } {
  if (indices.rank < 1) throw new InvalidArgumentError(`${op}: indices must have at least 1 dim`);
  const k = indices.shape[indices.rank - 1]!;
  if (k > data.rank) throw new InvalidArgumentError(`${op}: index tuples of length ${k} exceed the rank of data ${fmt(data.shape)}`);
  const idx = readIndices(indices, op);
  const strides = stridesOf(data.shape);
  const count = k === 0 ? shapeSize(indices.shape.slice(0, -1)) : idx.length / k;
  const offsets = new Int32Array(count);
  for (let t = 0; t < count; t++) {
    let off = 0;
    for (let j = 0; j < k; j++) {
      off += wrapIndex(idx[t * k + j]!, data.shape[j]!, op, `dim ${j} of data ${fmt(data.shape)}`, { indices, k: t * k + j }) * strides[j]!;
    }
    offsets[t] = off;
  }
  return { offsets, block: shapeSize(data.shape.slice(k)), k };
}

/** ONNX ScatterND: a copy of data with the slices addressed by index tuples set from (or combined with) updates. */
export function scatterND(data: Tensor, indices: Tensor, updates: Tensor, reduction: ScatterReduction = 'none'): Tensor {
  const op = 'scatterND';
  const { offsets, block, k } = tupleOffsets(data, indices, op);
  const expected = [...indices.shape.slice(0, -1), ...data.shape.slice(k)];
  if (updates.rank !== expected.length || updates.shape.some((d, i) => d !== expected[i])) {
    throw new InvalidArgumentError(`${op}: updates ${fmt(updates.shape)} must have shape ${fmt(expected)} for indices ${fmt(indices.shape)}`);
  }
  return scatterAt(data, offsets, block, updates, reduction, op);
}

/**
 * ONNX GatherND: slices of data addressed by index tuples in the last dim of `indices`;
 * the first `batchDims` dims of data and indices are matched pairwise.
 */
export function gatherND(data: Tensor, indices: Tensor, batchDims = 0): Tensor {
  const op = 'gatherND';
  const b = batchDims;
  if (!Number.isInteger(b) || b < 0 || b >= Math.min(data.rank, indices.rank)) {
    throw new InvalidArgumentError(`${op}: batchDims ${batchDims} is out of range for data ${fmt(data.shape)} and indices ${fmt(indices.shape)}`);
  }
  for (let i = 0; i < b; i++) {
    if (data.shape[i] !== indices.shape[i]) {
      throw new InvalidArgumentError(`${op}: batch dim ${i} differs between data ${fmt(data.shape)} and indices ${fmt(indices.shape)}`);
    }
  }
  const batch = shapeSize(data.shape.slice(0, b));
  const sub = data.shape.slice(b);
  const subIndexShape = indices.shape.slice(b);
  const subTensorSize = shapeSize(sub);
  const lanes = dtypeInfo(data.dtype).lanes;
  const perBatchIdx = shapeSize(subIndexShape);
  const idx = readIndices(indices, op);
  const k = indices.shape[indices.rank - 1]!;
  if (k > sub.length) {
    throw new InvalidArgumentError(`${op}: index tuples of length ${k} exceed data ${fmt(data.shape)} after ${b} batch dims`);
  }
  const strides = stridesOf(sub);
  const block = shapeSize(sub.slice(k));
  const tuples = shapeSize(indices.shape.slice(b, -1));
  const outShape = [...indices.shape.slice(0, -1), ...sub.slice(k)];
  const out = allocateData(data.dtype, shapeSize(outShape));
  let o = 0;
  for (let bi = 0; bi < batch; bi++) {
    for (let t = 0; t < tuples; t++) {
      let off = bi * subTensorSize;
      for (let j = 0; j < k; j++) {
        const at = bi * perBatchIdx + t * k + j;
        off += wrapIndex(idx[at]!, sub[j]!, op, `dim ${b + j} of data ${fmt(data.shape)}`, { indices, k: at }) * strides[j]!;
      }
      copyRange(out, o, data.data, off * lanes, block * lanes);
      o += block * lanes;
    }
  }
  return new Tensor(data.dtype, outShape, out);
}

/** The coordinates of the true elements of a bool mask, one int64 index tensor per mask dim (nonzero). */
function maskToIndices(mask: Tensor): Tensor[] {
  const strides = stridesOf(mask.shape);
  const hits: number[] = [];
  for (let i = 0; i < mask.size; i++) if (mask.data[i]) hits.push(i);
  return mask.shape.map((_, d) =>
    fromNumbers(
      'int64',
      [hits.length],
      hits.map((h) => Math.floor(h / strides[d]!) % mask.shape[d]!),
    ),
  );
}

/** Offsets of every element of a sub-shape of `shape` made of the dims `dims`, in row-major order. */
function subShapeOffsets(shape: Shape, dims: readonly number[]): Float64Array {
  const strides = stridesOf(shape);
  const sizes = dims.map((d) => shape[d]!);
  const out = new Float64Array(shapeSize(sizes));
  const counter = new Array<number>(dims.length).fill(0);
  let off = 0;
  for (let k = 0; k < out.length; k++) {
    out[k] = off;
    for (let i = dims.length - 1; i >= 0; i--) {
      counter[i]!++;
      off += strides[dims[i]!]!;
      if (counter[i]! < sizes[i]!) break;
      off -= strides[dims[i]!]! * sizes[i]!;
      counter[i] = 0;
    }
  }
  return out;
}

/**
 * torch advanced indexing (aten.index.Tensor): `indices[d]` indexes dim d (null/undefined
 * keeps the dim whole; bool masks stand for their nonzero coordinates). Index tensors
 * broadcast together; their result dims replace the indexed dims in place when those are
 * adjacent, and go first otherwise, as in NumPy.
 */
export function indexTensor(t: Tensor, indices: readonly (Tensor | null | undefined)[]): Tensor {
  const op = 'indexTensor';
  const expanded: (Tensor | null)[] = [];
  for (const index of indices) {
    if (index === null || index === undefined) {
      expanded.push(null);
    } else if (index.dtype === 'bool') {
      const d = expanded.length;
      if (index.shape.some((s, i) => s !== t.shape[d + i])) {
        throw new InvalidArgumentError(`${op}: mask ${fmt(index.shape)} does not match shape ${fmt(t.shape)} at dim ${d}`);
      }
      expanded.push(...maskToIndices(index));
    } else {
      expanded.push(index);
    }
  }
  if (expanded.length > t.rank) {
    throw new InvalidArgumentError(`${op}: ${expanded.length} indices for a tensor of shape ${fmt(t.shape)}`);
  }
  const positions = expanded.flatMap((index, d) => (index === null ? [] : [d]));
  if (positions.length === 0) return takeElements(t, t.shape, Int32Array.from({ length: t.size }, (_, i) => i));
  const tensors = positions.map((d) => expanded[d]!);
  let bshape: number[];
  try {
    bshape = broadcastShapes(...tensors.map((x) => x.shape));
  } catch {
    throw new InvalidArgumentError(`${op}: index shapes ${tensors.map((x) => fmt(x.shape)).join(', ')} cannot be broadcast together`);
  }
  const strides = stridesOf(t.shape);
  const count = shapeSize(bshape);
  const indexOffsets = new Float64Array(count);
  tensors.forEach((index, i) => {
    const d = positions[i]!;
    const values = readIndices(index, op);
    const map = broadcastIndex(index.shape, bshape);
    for (let k = 0; k < count; k++) {
      indexOffsets[k]! += wrapIndex(values[map[k]!]!, t.shape[d]!, op, `dim ${d} of ${fmt(t.shape)}`, { indices: index, k: map[k]! }) * strides[d]!;
    }
  });
  const adjacent = positions[positions.length - 1]! - positions[0]! === positions.length - 1;
  const rest = t.shape.map((_, d) => d).filter((d) => !positions.includes(d));
  const before = adjacent ? rest.filter((d) => d < positions[0]!) : [];
  const after = rest.filter((d) => !before.includes(d));
  const pre = subShapeOffsets(t.shape, before);
  const post = subShapeOffsets(t.shape, after);
  const outShape = [...before.map((d) => t.shape[d]!), ...bshape, ...after.map((d) => t.shape[d]!)];
  const source = new Float64Array(pre.length * count * post.length);
  let o = 0;
  for (let a = 0; a < pre.length; a++) {
    for (let k = 0; k < count; k++) {
      const base = pre[a]! + indexOffsets[k]!;
      for (let c = 0; c < post.length; c++) source[o++] = base + post[c]!;
    }
  }
  return takeElements(t, outShape, source);
}

/**
 * ONNX OneHot: inserts a dim of size `depth` at `axis` (in [-rank-1, rank]) holding
 * values[1] at the index and values[0] elsewhere; the output has values' dtype. Negative
 * indices count from depth; indices outside [-depth, depth) give an all-off row.
 */
export function oneHot(indices: Tensor, depth: number, values: Tensor, axis = -1): Tensor {
  const op = 'oneHot';
  if (values.size !== 2) throw new InvalidArgumentError(`${op}: values must hold [off, on], got shape ${fmt(values.shape)}`);
  const d = Math.trunc(depth);
  if (!(d >= 0)) throw new InvalidArgumentError(`${op}: depth ${depth} must be non-negative`);
  const rank = indices.rank + 1;
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank) throw new InvalidArgumentError(`${op}: axis ${axis} is out of range for output rank ${rank}`);
  const idx = indices.dtype === 'bool' ? readNumbers(indices) : isInteger(indices.dtype) ? readNumbers(indices) : readNumbers(indices).map(Math.trunc);
  const outer = shapeSize(indices.shape.slice(0, a));
  const inner = shapeSize(indices.shape.slice(a));
  const outShape = [...indices.shape.slice(0, a), d, ...indices.shape.slice(a)];
  const source = new Int32Array(shapeSize(outShape));
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      let v = idx[o * inner + j]!;
      if (v < 0) v += d;
      if (v >= 0 && v < d) source[(o * d + v) * inner + j] = 1;
    }
  }
  return takeElements(values, outShape, source);
}

/**
 * torch.topk / ONNX TopK along `axis`: the k largest (or smallest) elements and their int64
 * indices, sorted (NaN counts as the largest value, as in PyTorch). Stable: equal values keep
 * the lower index first. Values are copied exactly. `sorted` = false allows any order, so
 * the sorted order is returned either way.
 */
export function topk(t: Tensor, k: number, axis = -1, largest = true, sorted = true): [Tensor, Tensor] {
  const op = 'topk';
  if (isComplex(t.dtype)) throw new InvalidArgumentError(`${op}: complex tensors cannot be ordered`);
  const a = normalizeAxis(axis, t.rank, op);
  const dim = t.rank === 0 ? 1 : t.shape[a]!;
  if (!Number.isInteger(k) || k < 0 || k > dim) throw new InvalidArgumentError(`${op}: k = ${k} is out of range for dim ${a} of size ${dim} in ${fmt(t.shape)}`);
  const keys: Slots = t.dtype === 'float16' || t.dtype === 'bfloat16' ? readNumbers(t) : (t.data as unknown as Slots);
  const outer = t.rank === 0 ? 1 : shapeSize(t.shape.slice(0, a));
  const inner = t.rank === 0 ? 1 : shapeSize(t.shape.slice(a + 1));
  const outShape = t.rank === 0 ? [] : t.shape.map((s, i) => (i === a ? k : s));
  const source = new Float64Array(outer * k * inner);
  const picked = new Float64Array(outer * k * inner);
  const isNaNKey = (v: number | bigint): boolean => typeof v === 'number' && Number.isNaN(v);
  // "before" in the output order: NaN first when largest, last when smallest.
  const before = (x: number | bigint, y: number | bigint): boolean => {
    if (isNaNKey(x) || isNaNKey(y)) return largest ? isNaNKey(x) && !isNaNKey(y) : isNaNKey(y) && !isNaNKey(x);
    return largest ? x > y : x < y;
  };
  const order = new Array<number>(dim);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const base = o * dim * inner + i;
      for (let j = 0; j < dim; j++) order[j] = j;
      order.sort((p, q) => {
        const x = keys[base + p * inner]!;
        const y = keys[base + q * inner]!;
        return before(x, y) ? -1 : before(y, x) ? 1 : p - q;
      });
      for (let j = 0; j < k; j++) {
        const dst = (o * k + j) * inner + i;
        source[dst] = base + order[j]! * inner;
        picked[dst] = order[j]!;
      }
    }
  }
  return [takeElements(t, outShape, source), fromNumbers('int64', outShape, picked)];
}

export type { CoordinateTransform, NearestMode } from './resize-coords';

/** Options of {@link resize}. */
export interface ResizeOptions {
  /** 'nearest' (default) or 'linear' (bilinear/trilinear...). */
  mode?: 'nearest' | 'linear';
  /** Default 'half_pixel' (ONNX's default). */
  coordinateTransformationMode?: CoordinateTransform;
  /** Default 'round_prefer_floor' (ONNX's default); PyTorch's nearest is 'asymmetric' + 'floor'. */
  nearestMode?: NearestMode;
  /**
   * Scale factors per resized dim (the dims `size` covers), used by the coordinate transform
   * instead of out/in, as when PyTorch is given scale_factor (or ONNX scales).
   */
  scales?: readonly number[];
  /**
   * ONNX's general filters (cubic, antialias, half_pixel_symmetric, tf_crop_and_resize), per
   * resized dim (the roi differs by axis); replaces mode and coordinateTransformationMode.
   */
  filter?: (axis: number) => FilterOptions;
}

/** One dim through ONNX's general filter: out[.., o, ..] = Σ w_k in[.., i_k, ..], or the extrapolation value. */
function filterAxis(X: Float64Array, shape: number[], axis: number, outSize: number, scale: number, options: FilterOptions): Float64Array {
  const inSize = shape[axis]!;
  const outer = shapeSize(shape.slice(0, axis));
  const inner = shapeSize(shape.slice(axis + 1));
  const out = new Float64Array(outer * outSize * inner);
  for (let o = 0; o < outSize; o++) {
    const taps = filterTaps(o, inSize, outSize, scale, options);
    for (let p = 0; p < outer; p++) {
      const dst = (p * outSize + o) * inner;
      if (taps.outside) {
        out.fill(options.extrapolationValue, dst, dst + inner);
        continue;
      }
      taps.index.forEach((idx, k) => {
        const w = taps.weight[k]!;
        const src = (p * inSize + idx) * inner;
        for (let i = 0; i < inner; i++) out[dst + i] += w * X[src + i]!;
      });
    }
  }
  shape[axis] = outSize;
  return out;
}

/** Linear interpolation of one dim: out[.., o, ..] = (1-w)*in[.., i0, ..] + w*in[.., i1, ..]. */
function lerpAxis(X: Float64Array, shape: number[], axis: number, outSize: number, coord: (o: number) => number): Float64Array {
  const inSize = shape[axis]!;
  const outer = shapeSize(shape.slice(0, axis));
  const inner = shapeSize(shape.slice(axis + 1));
  const out = new Float64Array(outer * outSize * inner);
  for (let o = 0; o < outSize; o++) {
    const { i0, i1, w1 } = lerpTaps(coord(o), inSize);
    const w0 = 1 - w1;
    for (let p = 0; p < outer; p++) {
      const src0 = (p * inSize + i0) * inner;
      const src1 = (p * inSize + i1) * inner;
      const dst = (p * outSize + o) * inner;
      for (let i = 0; i < inner; i++) out[dst + i] = w0 * X[src0 + i]! + w1 * X[src1 + i]!;
    }
  }
  shape[axis] = outSize;
  return out;
}

/**
 * ONNX Resize / torch interpolate given the output size: `size` lists every dim, or only the
 * trailing spatial dims (rank - 2, for [N, C, ...] inputs). Nearest copies elements exactly
 * (any dtype); linear interpolates each resized dim in turn, clamping source coordinates to
 * the input as ONNX and PyTorch do (align_corners=True is 'align_corners'; False is
 * 'half_pixel', or 'pytorch_half_pixel' as exported to ONNX).
 */
export function resize(x: Tensor, size: readonly number[], options: ResizeOptions = {}): Tensor {
  const op = 'resize';
  const lead = size.length === x.rank ? 0 : 2;
  if (size.length !== x.rank && (x.rank < 3 || size.length !== x.rank - 2)) {
    throw new InvalidArgumentError(`${op}: size [${size.join(', ')}] must cover all dims or the spatial dims of ${fmt(x.shape)}`);
  }
  if (size.some((s) => !Number.isInteger(s) || s < 0)) throw new InvalidArgumentError(`${op}: invalid size [${size.join(', ')}]`);
  if (options.scales !== undefined && options.scales.length !== size.length) {
    throw new InvalidArgumentError(`${op}: scales [${options.scales.join(', ')}] must match size [${size.join(', ')}]`);
  }
  const outShape = [...x.shape.slice(0, lead), ...size];
  const mode = options.coordinateTransformationMode ?? 'half_pixel';
  // A crop (tf_crop_and_resize) changes an axis even at its own size and scale 1.
  const axes =
    options.filter !== undefined && options.filter(0).coordinate === 'tf_crop_and_resize'
      ? size.map((_, i) => lead + i)
      : resizedAxes(x.shape, size, options.scales);
  for (const a of axes) {
    if (x.shape[a] === 0 && outShape[a]! > 0) throw new InvalidArgumentError(`${op}: cannot resize empty dim ${a} of ${fmt(x.shape)}`);
  }
  const coordOf = (a: number) => (o: number) =>
    sourceCoordinate(o, x.shape[a]!, outShape[a]!, options.scales?.[a - lead], mode);
  if ((options.mode ?? 'nearest') === 'nearest') {
    const nearest = options.nearestMode ?? 'round_prefer_floor';
    const maps = outShape.map((d, a) =>
      Int32Array.from({ length: d }, (_, o) =>
        axes.includes(a) ? nearestIndex(coordOf(a)(o), x.shape[a]!, nearest) : o,
      ),
    );
    return takeElements(x, outShape, combineAxisMaps(x.shape, outShape, maps));
  }
  if (isComplex(x.dtype)) throw new InvalidArgumentError(`${op}: linear resizing of complex tensors is not supported`);
  let values: Float64Array = readNumbers(x);
  const shape = [...x.shape];
  const filter = options.filter;
  for (const a of axes) {
    values =
      filter === undefined
        ? lerpAxis(values, shape, a, outShape[a]!, coordOf(a))
        : filterAxis(values, shape, a, outShape[a]!, options.scales?.[a - lead] ?? outShape[a]! / x.shape[a]!, filter(a - lead));
  }
  return fromNumbers(x.dtype, outShape, values);
}

/** Flat source indices of an output whose coordinate along each axis maps through `maps[axis]`. */
function combineAxisMaps(inShape: Shape, outShape: Shape, maps: readonly Int32Array[]): Float64Array {
  const strides = stridesOf(inShape);
  const n = shapeSize(outShape);
  const rank = outShape.length;
  const out = new Float64Array(n);
  const counter = new Array<number>(rank).fill(0);
  for (let k = 0; k < n; k++) {
    let s = 0;
    for (let a = 0; a < rank; a++) s += maps[a]![counter[a]!]! * strides[a]!;
    out[k] = s;
    for (let a = rank - 1; a >= 0; a--) {
      if (++counter[a]! < outShape[a]!) break;
      counter[a] = 0;
    }
  }
  return out;
}
