/**
 * Kernels whose output size depends on the input's values: nonzero, compress, unique and
 * non-maximum suppression (ONNX's definitions).
 */
import { BadInputError, InvalidArgumentError } from '../errors';
import { isBigIntDType } from '../ir/dtype';
import { Tensor } from '../ir/tensor';
import { normalizeAxis, readNumbers } from './access';
import { allocateData, copyRange } from './shape';

/** Element values that compare exactly: bigints for int64/uint64, numbers otherwise. */
function comparable(t: Tensor): ArrayLike<number | bigint> {
  return isBigIntDType(t.dtype) ? (t.data as BigInt64Array) : readNumbers(t);
}

/** The indices of the nonzero elements as int64 [rank, count], in row-major order. */
export function nonzero(t: Tensor): Tensor {
  const values = comparable(t);
  const hits: number[] = [];
  for (let i = 0; i < t.size; i++) if (values[i] !== 0 && values[i] !== 0n) hits.push(i);
  const rank = t.rank;
  const out = new BigInt64Array(rank * hits.length);
  hits.forEach((flat, j) => {
    let rest = flat;
    for (let d = rank - 1; d >= 0; d--) {
      const n = t.shape[d]!;
      out[d * hits.length + j] = BigInt(rest % n);
      rest = Math.floor(rest / n);
    }
  });
  return new Tensor('int64', [rank, hits.length], out);
}

/** The slices along `axis` (or flattened elements when null) whose condition element is true. */
export function compress(t: Tensor, condition: Tensor, axis: number | null): Tensor {
  const src = axis === null ? t.reshape([t.size]) : t;
  const a = axis === null ? 0 : normalizeAxis(axis, t.rank, 'compress');
  const n = src.shape[a]!;
  const cond = condition.data;
  const keep: number[] = [];
  for (let i = 0; i < cond.length; i++) {
    if (!cond[i]) continue;
    if (i >= n) throw new BadInputError(`compress: condition element ${i} is true but the axis has only ${n} slices`);
    keep.push(i);
  }
  let outer = 1;
  let inner = 1;
  for (let i = 0; i < a; i++) outer *= src.shape[i]!;
  for (let i = a + 1; i < src.rank; i++) inner *= src.shape[i]!;
  const shape = src.shape.map((d, i) => (i === a ? keep.length : d));
  const out = allocateData(t.dtype, outer * keep.length * inner);
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const k of keep) {
      copyRange(out, at, src.data, (o * n + k) * inner, inner);
      at += inner;
    }
  }
  return new Tensor(t.dtype, shape, out);
}

export interface UniqueResult {
  values: Tensor;
  indices: Tensor;
  inverse: Tensor;
  counts: Tensor;
}

const lexical = (x: ArrayLike<number | bigint>, i: number, j: number, len: number, ix: number, jx: number): number => {
  for (let k = 0; k < len; k++) {
    const p = x[i * len + k]!;
    const q = x[j * len + k]!;
    // NaN equals NaN and sorts last (numpy.unique's equal_nan).
    const pn = p !== p;
    const qn = q !== q;
    if (pn || qn) {
      if (pn && qn) continue;
      return pn ? 1 : -1;
    }
    if (p < q) return -1;
    if (p > q) return 1;
  }
  return ix - jx;
};

/**
 * ONNX Unique: the unique elements (axis null, over the flattened input) or unique slices
 * along `axis`, sorted ascending (lexicographically for slices) or in order of first
 * occurrence; with each one's first index, each input element's (slice's) index into them,
 * and their counts.
 */
export function unique(t: Tensor, axis: number | null, sorted: boolean): UniqueResult {
  const a = axis === null ? -1 : normalizeAxis(axis, t.rank, 'unique');
  // As [outer, n, inner] with the slices along the middle; a slice is made contiguous for comparison.
  const n = a < 0 ? t.size : t.shape[a]!;
  let outer = 1;
  let inner = 1;
  if (a >= 0) {
    for (let i = 0; i < a; i++) outer *= t.shape[i]!;
    for (let i = a + 1; i < t.rank; i++) inner *= t.shape[i]!;
  }
  const len = outer * inner;
  const values = comparable(t);
  const slices: Array<number | bigint> = new Array(n * len);
  for (let s = 0; s < n; s++) {
    for (let o = 0; o < outer; o++) for (let i = 0; i < inner; i++) slices[s * len + o * inner + i] = values[(o * n + s) * inner + i]!;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => lexical(slices, i, j, len, i, j));
  // Groups of equal slices, each named by its first occurrence (the smallest index: the sort is by index within ties).
  const groupOf = new Int32Array(n);
  const firsts: number[] = [];
  const counts: number[] = [];
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    if (k > 0 && lexical(slices, order[k - 1]!, i, len, 0, 0) === 0) {
      groupOf[i] = firsts.length - 1;
      counts[counts.length - 1]!++;
    } else {
      groupOf[i] = firsts.length;
      firsts.push(i);
      counts.push(1);
    }
  }
  // Output positions: sorted order as found, or by first occurrence.
  const rank = firsts.map((_, g) => g);
  if (!sorted) rank.sort((g, h) => firsts[g]! - firsts[h]!);
  const position = new Int32Array(firsts.length);
  rank.forEach((g, p) => (position[g] = p));
  const m = firsts.length;
  const outShape = a < 0 ? [m] : t.shape.map((d, i) => (i === a ? m : d));
  const out = allocateData(t.dtype, outer * m * inner);
  for (let p = 0; p < m; p++) {
    const s = firsts[rank[p]!]!;
    for (let o = 0; o < outer; o++) copyRange(out, (o * m + p) * inner, t.data, (o * n + s) * inner, inner);
  }
  const big = (xs: ArrayLike<number>): BigInt64Array => BigInt64Array.from(Array.from(xs, (x) => BigInt(x)));
  return {
    values: new Tensor(t.dtype, outShape, out),
    indices: new Tensor('int64', [m], big(rank.map((g) => firsts[g]!))),
    inverse: new Tensor('int64', [n], big(Array.from(groupOf, (g) => position[g]!))),
    counts: new Tensor('int64', [m], big(rank.map((g) => counts[g]!))),
  };
}

export interface NmsOptions {
  maxPerClass: number;
  iouThreshold: number;
  /** Boxes scoring at or below it are never selected. */
  scoreThreshold: number | null;
  /** Boxes as [x_center, y_center, width, height] rather than two corners [y1, x1, y2, x2]. */
  centerPointBox: boolean;
}

/**
 * ONNX NonMaxSuppression: per batch and class, boxes in descending score (ties: lower index
 * first) are selected unless their IoU with a box already selected exceeds the threshold, up
 * to maxPerClass. Returns int64 [selected, 3] rows of (batch, class, box).
 */
export function nonMaxSuppression(boxes: Tensor, scores: Tensor, o: NmsOptions): Tensor {
  if (boxes.rank !== 3 || boxes.shape[2] !== 4 || scores.rank !== 3 || scores.shape[0] !== boxes.shape[0] || scores.shape[2] !== boxes.shape[1]) {
    throw new InvalidArgumentError(`non_max_suppression: boxes [${boxes.shape.join(', ')}] and scores [${scores.shape.join(', ')}] do not fit`);
  }
  const [batches, n] = [boxes.shape[0]!, boxes.shape[1]!];
  const classes = scores.shape[1]!;
  const b = readNumbers(boxes);
  const s = readNumbers(scores);
  // Corners as [ymin, xmin, ymax, xmax] per box.
  const corners = new Float64Array(batches * n * 4);
  for (let i = 0; i < batches * n; i++) {
    const [p, q, r, u] = [b[i * 4]!, b[i * 4 + 1]!, b[i * 4 + 2]!, b[i * 4 + 3]!];
    if (o.centerPointBox) corners.set([q - u / 2, p - r / 2, q + u / 2, p + r / 2], i * 4);
    else corners.set([Math.min(p, r), Math.min(q, u), Math.max(p, r), Math.max(q, u)], i * 4);
  }
  const iou = (i: number, j: number): number => {
    const [a0, a1, a2, a3] = [corners[i * 4]!, corners[i * 4 + 1]!, corners[i * 4 + 2]!, corners[i * 4 + 3]!];
    const [b0, b1, b2, b3] = [corners[j * 4]!, corners[j * 4 + 1]!, corners[j * 4 + 2]!, corners[j * 4 + 3]!];
    const areaA = (a2 - a0) * (a3 - a1);
    const areaB = (b2 - b0) * (b3 - b1);
    if (areaA <= 0 || areaB <= 0) return 0;
    const h = Math.max(0, Math.min(a2, b2) - Math.max(a0, b0));
    const w = Math.max(0, Math.min(a3, b3) - Math.max(a1, b1));
    const inter = h * w;
    return inter / (areaA + areaB - inter);
  };
  const rows: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    for (let c = 0; c < classes; c++) {
      if (o.maxPerClass === 0) continue;
      const base = (batch * classes + c) * n;
      const candidates: number[] = [];
      for (let i = 0; i < n; i++) if (o.scoreThreshold === null || s[base + i]! > o.scoreThreshold) candidates.push(i);
      candidates.sort((i, j) => s[base + j]! - s[base + i]! || i - j);
      const kept: number[] = [];
      for (const i of candidates) {
        if (kept.length >= o.maxPerClass) break;
        if (kept.every((k) => !(iou(batch * n + i, batch * n + k) > o.iouThreshold))) kept.push(i);
      }
      for (const i of kept) rows.push(batch, c, i);
    }
  }
  return new Tensor('int64', [rows.length / 3, 3], BigInt64Array.from(rows, (x) => BigInt(x)));
}
