/**
 * Data-movement and generator layers as ONNX ops: IConstantLayer (an initializer),
 * IShuffleLayer, ISliceLayer, IConcatenationLayer, IShapeLayer and IFillLayer. Shape tensors
 * given as layer inputs (the `_dyn` layers) become ONNX shape arithmetic on int64 values.
 */
import type { DType } from '../../../ir/dtype';
import { padSource } from '../../../kernels/shape';
import { Tensor } from '../../../ir/tensor';
import { executeLayer } from '../../../network/evaluate';
import { computeIn, expandTypes, whereTypes, type LowerContext, type Lowering } from './context';

/** "Before index 0" as a Slice end with a negative step (ONNX clamps it to -1). */
const BEFORE_START = -(2n ** 62n);

export const constant: Lowering<'constant'> = (p, c) => [c.g.initializer(p.weights)];

/**
 * A shuffle that only reshapes a constant to static dims (a weight shaped for broadcasting),
 * as an initializer of its own: onnxruntime would fold it when it loads the model, but its
 * fusions look at constants as the model gives them (a GELU's 0.5 and √2 must be scalars,
 * ./pointwise.ts), and run before that folding reaches them.
 */
function foldedReshape(p: Parameters<Lowering<'shuffle'>>[0], c: LowerContext): string | undefined {
  if (p.firstTranspose !== undefined || p.secondTranspose !== undefined || p.reshape === undefined || c.has(1)) return undefined;
  const value = c.g.constantValue(c.input(0));
  const dims = c.outputShape(0);
  if (value === undefined || dims.some((d) => d < 0)) return undefined;
  return c.g.initializer(value.reshape([...dims]));
}

/** Input `i` as int64 (shape tensors are int64, but an int32 one is accepted). */
export function int64Input(c: LowerContext, i: number): string {
  return c.g.cast(c.input(i), c.inputDType(i), 'int64');
}

/**
 * IShuffleLayer: transpose, reshape, transpose. Reshape's 0 copies the input dim only with
 * zeroIsPlaceholder, which is ONNX's allowzero = 0; a literal 0 is allowzero = 1.
 */
export const shuffle: Lowering<'shuffle'> = (p, c) => {
  const g = c.g;
  const folded = foldedReshape(p, c);
  if (folded !== undefined) return [folded];
  let x = c.input(0);
  if (p.firstTranspose !== undefined) x = g.op('Transpose', [x], { perm: p.firstTranspose });
  const dims = c.has(1) ? int64Input(c, 1) : p.reshape !== undefined ? g.int64(p.reshape) : null;
  if (dims !== null) x = g.op('Reshape', [x, dims], { allowzero: p.zeroIsPlaceholder ? 0 : 1 });
  if (p.secondTranspose !== undefined) x = g.op('Transpose', [x], { perm: p.secondTranspose });
  return [x === c.input(0) ? g.op('Identity', [x]) : x];
};

export const concat: Lowering<'concat'> = (p, c) => [c.g.op('Concat', c.layer.inputs.map((_, i) => c.input(i)), { axis: p.axis })];

export const shape: Lowering<'shape'> = (_p, c) => [c.g.op('Shape', [c.input(0)])];

/** Per-axis source indices of a slice whose parameters and input dims are known; null marks a fill element. */
function staticIndexMaps(p: Extract<Parameters<Lowering<'slice'>>[0], object>, dims: readonly number[]): Array<Array<number | null>> {
  const pad = p.mode === 'wrap' ? 'wrap' : p.mode === 'clamp' ? 'edge' : 'reflect';
  return p.size.map((n, axis) =>
    Array.from({ length: n }, (_, j) => {
      const i = p.start[axis]! + j * p.stride[axis]!;
      const d = dims[axis]!;
      if (i >= 0 && i < d) return i;
      return p.mode === 'fill' || d === 0 ? null : padSource(i, d, pad);
    }),
  );
}

/** The elements of `x` where `masks` (one bool vector per axis, null: all in bounds) hold, else the fill value. */
function applyFill(c: LowerContext, x: string, masks: Array<string | null>, rank: number): string {
  const g = c.g;
  let all: string | null = null;
  masks.forEach((m, axis) => {
    if (m === null) return;
    const others = Array.from({ length: rank }, (_, a) => a).filter((a) => a !== axis);
    const shaped = others.length === 0 ? m : g.op('Unsqueeze', [m, g.int64(others)]);
    all = all === null ? shaped : g.op('And', [all, shaped]);
  });
  if (all === null) return x;
  const mask: string = all;
  const dtype = c.inputDType(0);
  const fill = c.has(4) ? c.input(4) : c.g.scalar(dtype, 0);
  return computeIn(c, [x, fill], dtype, whereTypes(dtype), (ins) => g.op('Where', [mask, ...ins]));
}

/** A static slice whose every read lies inside the input: ONNX Slice (and Expand for stride-0 axes). */
function sliceInBounds(c: LowerContext, p: Parameters<Lowering<'slice'>>[0]): string {
  const g = c.g;
  const axes: number[] = [];
  const [starts, ends, steps]: bigint[][] = [[], [], []];
  const dims = c.inputShape(0);
  p.size.forEach((n, axis) => {
    const [s, st] = [p.start[axis]!, p.stride[axis]!];
    if (s === 0 && st === 1 && n === dims[axis]) return;
    const step = st === 0 ? 1 : st;
    const count = st === 0 ? Math.min(n, 1) : n;
    const end = s + count * step;
    axes.push(axis);
    starts.push(BigInt(s));
    ends.push(step < 0 && end < 0 ? BEFORE_START : BigInt(end));
    steps.push(BigInt(step));
  });
  let x = axes.length === 0 ? c.input(0) : g.op('Slice', [c.input(0), g.int64(starts), g.int64(ends), g.int64(axes), g.int64(steps)]);
  if (p.stride.some((st, axis) => st === 0 && p.size[axis]! > 1)) {
    const dtype = c.inputDType(0);
    x = computeIn(c, [x], dtype, expandTypes(dtype), (ins) => g.op('Expand', [ins[0]!, g.int64(p.size)]));
  }
  return x === c.input(0) ? g.op('Identity', [x]) : x;
}

/** A static slice that reads outside the input (wrap, clamp, reflect, fill): one Gather per axis over precomputed indices. */
function sliceByIndexMaps(c: LowerContext, p: Parameters<Lowering<'slice'>>[0]): string {
  const g = c.g;
  const dims = c.inputShape(0);
  const maps = staticIndexMaps(p, dims);
  let x = c.input(0);
  const masks: Array<string | null> = maps.map((map, axis) => {
    if (map.length === dims[axis] && map.every((v, j) => v === j)) return null;
    x = g.op('Gather', [x, g.int64(map.map((v) => v ?? 0))], { axis });
    if (map.every((v) => v !== null)) return null;
    return g.initializer(Tensor.from('bool', [map.length], map.map((v) => (v === null ? 0 : 1))));
  });
  x = applyFill(c, x, masks, dims.length);
  return x === c.input(0) ? g.op('Identity', [x]) : x;
}

/**
 * A slice whose start, size or stride come from shape tensors, or whose input dims are only
 * known at run time: per axis, indices start + j·stride mapped into [0, d) by the mode, then
 * a Gather (strict_bounds: one Slice, and an Expand for the axes whose stride is 0).
 */
function sliceDynamic(c: LowerContext, p: Parameters<Lowering<'slice'>>[0]): string {
  const g = c.g;
  const rank = c.inputShape(0).length;
  const vector = (i: number, fallback: readonly number[]): string => (c.has(i) ? int64Input(c, i) : g.int64(fallback));
  const [start, size, stride] = [vector(1, p.start), vector(2, p.size), vector(3, p.stride)];
  if (p.mode === 'strict_bounds') {
    // A stride of 0 repeats one element: slice it with step 1, then expand it to the size.
    const [zero, one] = [g.int64([0], []), g.int64([1], [])];
    const repeats = g.op('Equal', [stride, zero]);
    const steps = g.op('Where', [repeats, one, stride]);
    const end = g.op('Add', [start, g.op('Mul', [g.op('Where', [repeats, one, size]), steps])]);
    const fixed = g.op('Where', [g.op('Less', [end, zero]), g.int64([BEFORE_START], []), end]);
    const ends = g.op('Where', [g.op('Less', [steps, zero]), fixed, end]);
    const sliced = g.op('Slice', [c.input(0), start, ends, g.int64(Array.from({ length: rank }, (_, a) => a)), steps]);
    const dtype = c.inputDType(0);
    return computeIn(c, [sliced], dtype, expandTypes(dtype), (ins) => g.op('Expand', [ins[0]!, g.op('Where', [repeats, size, one])]));
  }
  const inputShape = g.op('Shape', [c.input(0)]);
  const at = (v: string, axis: number): string => g.op('Gather', [v, g.int64([axis], [])], { axis: 0 });
  const zero = g.int64([0], []);
  let x = c.input(0);
  const masks: Array<string | null> = [];
  for (let axis = 0; axis < rank; axis++) {
    const d = at(inputShape, axis);
    const j = g.op('Range', [zero, at(size, axis), g.int64([1], [])]);
    let idx = g.op('Add', [at(start, axis), g.op('Mul', [j, at(stride, axis)])]);
    let mask: string | null = null;
    if (p.mode === 'wrap') idx = g.op('Mod', [idx, d], { fmod: 0 });
    else if (p.mode === 'clamp') idx = g.op('Max', [g.op('Min', [idx, g.op('Sub', [d, g.int64([1], [])])]), zero]);
    else if (p.mode === 'reflect') {
      const period = g.op('Max', [g.op('Mul', [g.int64([2], []), g.op('Sub', [d, g.int64([1], [])])]), g.int64([1], [])]);
      const m = g.op('Mod', [idx, period], { fmod: 0 });
      idx = g.op('Where', [g.op('Less', [m, d]), m, g.op('Sub', [period, m])]);
    } else {
      mask = g.op('And', [g.op('GreaterOrEqual', [idx, zero]), g.op('Less', [idx, d])]);
      idx = g.op('Where', [mask, idx, zero]);
    }
    masks.push(mask);
    x = g.op('Gather', [x, idx], { axis });
  }
  return applyFill(c, x, masks, rank);
}

/**
 * ISliceLayer: output dim i has size[i] elements, element j reads start[i] + j·stride[i],
 * out-of-bounds reads handled by the mode (strict_bounds leaves them undefined; onnxruntime
 * then clamps or refuses, never reads outside).
 */
export const slice: Lowering<'slice'> = (p, c) => {
  if (c.has(1) || c.has(2) || c.has(3)) return [sliceDynamic(c, p)];
  const dims = c.inputShape(0);
  const known = dims.every((d) => d >= 0);
  const inBounds =
    p.mode === 'strict_bounds' ||
    (known && p.size.every((n, axis) => n === 0 || [p.start[axis]!, p.start[axis]! + (n - 1) * p.stride[axis]!].every((i) => i >= 0 && i < dims[axis]!)));
  if (inBounds) return [sliceInBounds(c, p)];
  return [known ? sliceByIndexMaps(c, p) : sliceDynamic(c, p)];
};

/**
 * IFillLayer, kLINSPACE. With every parameter static it is a constant, computed once by the
 * reference executor (exact, as the reference defines it). From shape tensors: alpha +
 * Σ beta[d]·Range(dims[d]) broadcast over the dims, in int64 when alpha and beta are
 * integer tensors and the output int64, else in float64, then cast.
 */
export const fill: Lowering<'fill'> = (p, c) => {
  const g = c.g;
  if (!c.has(0) && !c.has(1) && !c.has(2)) return [g.initializer(executeLayer(c.layer, [null, null, null])[0]!)];
  const rank = c.outputShape(0).length;
  const integral = (i: number): boolean => !c.has(i) || c.inputDType(i) === 'int32' || c.inputDType(i) === 'int64';
  const as: DType = p.dtype === 'int64' && integral(1) && integral(2) && [p.alpha, ...p.beta].every(Number.isInteger) ? 'int64' : 'float64';
  const dims = c.has(0) ? int64Input(c, 0) : g.int64(p.dims);
  const alpha = c.has(1) ? g.cast(g.op('Reshape', [c.input(1), g.int64([], [0])]), c.inputDType(1), as) : g.scalar(as, p.alpha);
  const beta = c.has(2) ? g.cast(c.input(2), c.inputDType(2), as) : g.initializer(Tensor.from(as, [p.beta.length], p.beta));
  let out = alpha;
  for (let d = 0; d < rank; d++) {
    const n = g.op('Gather', [dims, g.int64([d], [])], { axis: 0 });
    const steps = g.cast(g.op('Range', [g.int64([0], []), n, g.int64([1], [])]), 'int64', as);
    const term = g.op('Mul', [steps, g.op('Gather', [beta, g.int64([d], [])], { axis: 0 })]);
    const others = Array.from({ length: rank }, (_, a) => a).filter((a) => a !== d);
    out = g.op('Add', [out, others.length === 0 ? term : g.op('Unsqueeze', [term, g.int64(others)])]);
  }
  // Rank 0, or a dim of 0 that the sum alone would not give its shape: expand to the dims.
  out = g.op('Expand', [out, dims]);
  return [g.cast(out, as, p.dtype)];
};
