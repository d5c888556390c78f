/**
 * Folders: ONNX shape arithmetic (Shape → Gather → Unsqueeze → Concat → Reshape, and the
 * integer math around it) evaluated at import time on symbolic dims. What comes out is an
 * exact list of dims, so Reshape/Expand/ConstantOfShape receive SymInt arguments (as in a
 * torch.export graph) instead of tensors computed at run time. A folder returns null when
 * its inputs are not all known; the op's ordinary mapper then runs.
 */
import { stringConstant } from './strings';
import { Value } from '../../../ir/graph';
import {
  dimBounds,
  dimEquals,
  isStatic,
  symAdd,
  symFloorDiv,
  symMax,
  symMin,
  symMod,
  symMul,
  symProduct,
  symSub,
  type Dim,
} from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import { known, knownOfShape, shapeOfKnown, type Known, type OnnxContext, type OnnxResult } from '../context';
import { defineOnnxFolder } from '../registry';

/** All inputs known (shape-like), or null. */
function allKnown(ctx: OnnxContext): Known[] | null {
  const out: Known[] = [];
  for (let i = 0; i < ctx.node.inputs.length; i++) {
    if (!ctx.hasInput(i)) continue;
    const k = ctx.known(i);
    if (k === null) return null;
    out.push(k);
  }
  return out;
}

function normIndex(i: number, n: number): number | null {
  const j = i < 0 ? i + n : i;
  return j >= 0 && j < n ? j : null;
}

defineOnnxFolder('Identity', (ctx) => [ctx.raw(0)]);

defineOnnxFolder('Shape', (ctx) => {
  const r = ctx.raw(0);
  const shape: readonly Dim[] = r instanceof Value ? r.tensorType.shape : shapeOfKnown(r);
  const rank = shape.length;
  const clamp = (x: number): number => Math.min(Math.max(x < 0 ? x + rank : x, 0), rank);
  const start = ctx.opset >= 15 ? clamp(ctx.attrInt('start', 0)) : 0;
  const end = ctx.opset >= 15 && ctx.has('end') ? clamp(ctx.attrInt('end')) : rank;
  return [known(shape.slice(start, Math.max(start, end)))];
});

defineOnnxFolder('Size', (ctx) => {
  const r = ctx.raw(0);
  const shape: readonly Dim[] = r instanceof Value ? r.tensorType.shape : shapeOfKnown(r);
  return [known([symProduct(shape)], true)];
});

defineOnnxFolder('Constant', (ctx) => {
  const strings = stringConstant(ctx);
  if (strings !== null) return [strings];
  const a = ctx.node.attributes;
  let t: Tensor | null = ctx.attrTensor('value');
  if (t === null && a.has('value_int')) t = Tensor.scalar('int64', ctx.attrInt('value_int'));
  if (t === null && a.has('value_ints')) t = Tensor.from('int64', [ctx.attrInts('value_ints').length], ctx.attrInts('value_ints'));
  if (t === null && a.has('value_float')) t = Tensor.scalar('float32', ctx.attrFloat('value_float'));
  if (t === null && a.has('value_floats')) t = Tensor.from('float32', [ctx.attrFloats('value_floats').length], ctx.attrFloats('value_floats'));
  if (t === null) return ctx.unsupported('only value, value_int(s), value_float(s) and value_string(s) constants are supported');
  return [ctx.constantValue(t, 'value')];
});

defineOnnxFolder('Gather', (ctx) => {
  const data = ctx.known(0);
  const indices = ctx.constant(1);
  if (data === null || data.scalar || indices === null || indices.rank > 1) return null;
  if (ctx.attrInt('axis', 0) !== 0 && ctx.attrInt('axis', 0) !== -1) return null;
  const picked: Dim[] = [];
  for (const i of indices.toArray()) {
    const j = normIndex(i, data.dims.length);
    if (j === null) return ctx.bad(`index ${i} is out of range for a shape of length ${data.dims.length}`);
    picked.push(data.dims[j]!);
  }
  return [known(picked, indices.rank === 0, data.dtype)];
});

defineOnnxFolder('Concat', (ctx) => {
  const ins = allKnown(ctx);
  // Known lists are 1-D: only axis 0 (or -1) joins them; anything else is the mapper's to refuse.
  const axis = ctx.attrInt('axis');
  if (ins === null || ins.some((k) => k.scalar) || (axis !== 0 && axis !== -1)) return null;
  return [known(ins.flatMap((k) => k.dims), false, ins[0]?.dtype ?? 'int64')];
});

defineOnnxFolder('Unsqueeze', (ctx) => {
  const k = ctx.known(0);
  if (k === null || !k.scalar) return null;
  const axes = ctx.opset >= 13 ? ctx.known(1) : known(ctx.attrInts('axes'));
  if (axes === null || axes.dims.length !== 1 || !(axes.dims[0] === 0 || axes.dims[0] === -1)) return null;
  return [known(k.dims, false, k.dtype)];
});

defineOnnxFolder('Squeeze', (ctx) => {
  const k = ctx.known(0);
  if (k === null || k.scalar || k.dims.length !== 1) return null;
  // A one-element list squeezes to a scalar only along its one axis (absent axes mean the same).
  const axes = staticList(ctx, 1, [0]);
  if (axes === null || axes.length !== 1 || !(axes[0] === 0 || axes[0] === -1)) return null;
  return [known(k.dims, true, k.dtype)];
});

/** Static integers of input `i`, or null (absent inputs give `fallback`). */
function staticList(ctx: OnnxContext, i: number, fallback: number[] | null): number[] | null {
  if (!ctx.hasInput(i)) return fallback;
  const k = ctx.known(i);
  return k !== null && k.dims.every(isStatic) ? (k.dims as number[]) : null;
}

/** The indices ONNX Slice picks along a dim of size n (starts/ends clamped as the spec says). */
function sliceIndices(n: number, start: number, end: number, step: number): number[] {
  const clamp = (x: number, lo: number, hi: number): number => Math.min(Math.max(x, lo), hi);
  let s = start < 0 ? start + n : start;
  let e = end < 0 ? end + n : end;
  const out: number[] = [];
  if (step > 0) {
    s = clamp(s, 0, n);
    e = clamp(e, 0, n);
    for (let i = s; i < e; i += step) out.push(i);
  } else {
    s = clamp(s, -1, n - 1);
    e = clamp(e, -1, n - 1);
    for (let i = s; i > e; i += step) out.push(i);
  }
  return out;
}

/** Row-major strides of a shape. */
function stridesOf(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length).fill(1);
  for (let a = shape.length - 2; a >= 0; a--) strides[a] = strides[a + 1]! * shape[a + 1]!;
  return strides;
}

/**
 * The elements at every combination of `picks` (one index list per input axis), row-major
 * over the input axes taken in `order` (the identity for a slice, the permutation for a
 * transpose).
 */
function pickElements(k: Known, picks: readonly number[][], order: readonly number[] = picks.map((_, i) => i)): Dim[] {
  const strides = stridesOf(shapeOfKnown(k));
  const out: Dim[] = [];
  const walk = (j: number, offset: number): void => {
    if (j === order.length) {
      out.push(k.dims[offset]!);
      return;
    }
    const axis = order[j]!;
    for (const i of picks[axis]!) walk(j + 1, offset + i * strides[axis]!);
  };
  walk(0, 0);
  return out;
}

defineOnnxFolder('Slice', (ctx) => {
  const k = ctx.knownAnyRank(0);
  if (k === null || k.scalar) return null;
  const shape = shapeOfKnown(k);
  const starts = staticList(ctx, 1, null);
  const ends = staticList(ctx, 2, null);
  if (starts === null || ends === null || starts.length !== ends.length) return null;
  const axes = staticList(ctx, 3, starts.map((_, i) => i));
  const steps = staticList(ctx, 4, starts.map(() => 1));
  if (axes === null || steps === null || axes.length !== starts.length || steps.length !== starts.length) return null;
  const picks = shape.map((n) => Array.from({ length: n }, (_, i) => i));
  const seen = new Set<number>();
  for (let j = 0; j < axes.length; j++) {
    const a = normIndex(axes[j]!, shape.length);
    // Bad axes or steps: the mapper reports them.
    if (a === null || seen.has(a) || steps[j] === 0) return null;
    seen.add(a);
    picks[a] = sliceIndices(shape[a]!, starts[j]!, ends[j]!, steps[j]!);
  }
  return [knownOfShape(pickElements(k, picks), picks.map((p) => p.length), k.dtype)];
});

defineOnnxFolder('Transpose', (ctx) => {
  const k = ctx.knownAnyRank(0);
  if (k === null) return null;
  const shape = shapeOfKnown(k);
  const perm = ctx.attrInts('perm', shape.map((_, i) => shape.length - 1 - i));
  if (perm.length !== shape.length || [...perm].sort((p, q) => p - q).some((p, i) => p !== i)) return null;
  const all = shape.map((n) => Array.from({ length: n }, (_, i) => i));
  const out = pickElements(k, all, perm);
  return [knownOfShape(out, perm.map((p) => shape[p]!), k.dtype)];
});

defineOnnxFolder('Cast', (ctx) => {
  const k = ctx.knownAnyRank(0);
  const to = ctx.attrInt('to');
  if (k === null || k.dtype === 'bool') return null;
  if (to === 7) return [knownOfShape(k.dims, shapeOfKnown(k), 'int64')];
  if (to === 6) return [knownOfShape(k.dims, shapeOfKnown(k), 'int32')];
  return null;
});

defineOnnxFolder('Reshape', (ctx) => {
  const k = ctx.knownAnyRank(0);
  const shape = ctx.known(1);
  if (k === null || shape === null || !shape.dims.every(isStatic)) return null;
  const allowzero = ctx.opset >= 14 ? ctx.attrInt('allowzero', 0) : 0;
  const inShape = shapeOfKnown(k);
  const target = (shape.dims as number[]).map((d, i) => (d === 0 && allowzero === 0 ? inShape[i] : d));
  // Malformed targets: the mapper reports them.
  if (target.some((d) => d === undefined || d < -1) || target.filter((d) => d === -1).length > 1) return null;
  const dims = target as number[];
  const rest = dims.reduce((p, d) => (d === -1 ? p : p * d), 1);
  const free = dims.indexOf(-1);
  if (free >= 0) {
    if (rest === 0 || k.dims.length % rest !== 0) return null;
    dims[free] = k.dims.length / rest;
  } else if (rest !== k.dims.length) return null;
  return [knownOfShape(k.dims, dims, k.dtype)];
});

/** Elementwise fold of two known lists with scalar broadcasting. */
function binary(ctx: OnnxContext, f: (a: Dim, b: Dim) => Dim | null): OnnxResult[] | null {
  const ins = allKnown(ctx);
  if (ins === null || ins.length !== 2) return null;
  const [a, b] = ins as [Known, Known];
  if (a.dtype === 'bool' || b.dtype === 'bool') return null;
  const n = Math.max(a.dims.length, b.dims.length);
  if (!(a.dims.length === n || a.dims.length === 1) || !(b.dims.length === n || b.dims.length === 1)) return null;
  const out: Dim[] = [];
  // Folded arithmetic is float64: with an operand or a result past 2^53 it would round (an
  // INT64_MAX "to the end" bound passes through the other folders, but is no number to
  // compute with), so such a node is computed exactly, as int64, at run time instead.
  const exact = (d: Dim): boolean => !isStatic(d) || Number.isSafeInteger(d);
  for (let i = 0; i < n; i++) {
    const x = a.dims[a.dims.length === 1 ? 0 : i]!;
    const y = b.dims[b.dims.length === 1 ? 0 : i]!;
    if (!exact(x) || !exact(y)) return null;
    const r = f(x, y);
    if (r === null || !exact(r)) return null;
    out.push(r);
  }
  return [known(out, a.scalar && b.scalar, a.dtype)];
}

const truncDiv = (a: Dim, b: Dim): Dim | null => {
  if (b === 0) return null;
  if (isStatic(a) && isStatic(b)) return Math.trunc(a / b);
  // Symbolic dims are non-negative: truncation equals floor for a positive divisor.
  return isStatic(b) && b > 0 ? symFloorDiv(a, b) : null;
};

defineOnnxFolder('Add', (ctx) => binary(ctx, symAdd));
defineOnnxFolder('Sub', (ctx) => binary(ctx, symSub));
defineOnnxFolder('Mul', (ctx) => binary(ctx, symMul));
defineOnnxFolder('Div', (ctx) => binary(ctx, truncDiv));
defineOnnxFolder('Mod', (ctx) => (ctx.attrInt('fmod', 0) === 0 ? binary(ctx, (a, b) => (b === 0 ? null : symMod(a, b))) : null));
defineOnnxFolder('Max', (ctx) => binary(ctx, symMax));
defineOnnxFolder('Min', (ctx) => binary(ctx, symMin));
defineOnnxFolder('Neg', (ctx) => {
  const k = ctx.known(0);
  return k === null || k.dtype === 'bool' ? null : [known(k.dims.map((d) => symSub(0, d)), k.scalar, k.dtype)];
});

/**
 * The range of a - b over every size the symbols may take. Symbols are sizes (never
 * negative), so `s == -1` is false for any s: the TorchScript exporter's
 * `Where(Equal(size, -1), 1, size)` around Expand folds with it.
 */
function differenceRange(ctx: OnnxContext, a: Dim, b: Dim): { min: number; max: number } {
  if (dimEquals(a, b)) return { min: 0, max: 0 };
  if (isStatic(a) && isStatic(b)) return { min: a - b, max: a - b };
  return dimBounds(symSub(a, b), ctx.graph.symbols);
}

/**
 * Elementwise comparison of two known lists into a bool list. `decide` answers from the range
 * of a - b, or null when the range does not settle it (then the whole fold gives up).
 */
function compare(ctx: OnnxContext, decide: (min: number, max: number) => boolean | null): OnnxResult[] | null {
  const ins = allKnown(ctx);
  if (ins === null || ins.length !== 2) return null;
  const [a, b] = ins as [Known, Known];
  const n = Math.max(a.dims.length, b.dims.length);
  if (!(a.dims.length === n || a.dims.length === 1) || !(b.dims.length === n || b.dims.length === 1)) return null;
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) {
    const { min, max } = differenceRange(ctx, a.dims[a.dims.length === 1 ? 0 : i]!, b.dims[b.dims.length === 1 ? 0 : i]!);
    const holds = decide(min, max);
    if (holds === null) return null; // only known at run time
    out.push(holds ? 1 : 0);
  }
  return [known(out, a.scalar && b.scalar, 'bool')];
}

/** `yes` when it holds for the whole range, false when for none of it, else null. */
const settled = (yes: boolean, no: boolean): boolean | null => (yes ? true : no ? false : null);

defineOnnxFolder('Equal', (ctx) => compare(ctx, (min, max) => settled(min === 0 && max === 0, min > 0 || max < 0)));
defineOnnxFolder('Less', (ctx) => compare(ctx, (min, max) => settled(max < 0, min >= 0)));
defineOnnxFolder('LessOrEqual', (ctx) => compare(ctx, (min, max) => settled(max <= 0, min > 0)));
defineOnnxFolder('Greater', (ctx) => compare(ctx, (min, max) => settled(min > 0, max <= 0)));
defineOnnxFolder('GreaterOrEqual', (ctx) => compare(ctx, (min, max) => settled(min >= 0, max < 0)));

/** Logic on folded comparisons (bool lists, always static). */
function logic(ctx: OnnxContext, f: (a: boolean, b: boolean) => boolean): OnnxResult[] | null {
  const ins = allKnown(ctx);
  if (ins === null || ins.length !== 2 || ins.some((k) => k.dtype !== 'bool')) return null;
  const [a, b] = ins as [Known, Known];
  const n = Math.max(a.dims.length, b.dims.length);
  if (!(a.dims.length === n || a.dims.length === 1) || !(b.dims.length === n || b.dims.length === 1)) return null;
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) out.push(f(a.dims[a.dims.length === 1 ? 0 : i] !== 0, b.dims[b.dims.length === 1 ? 0 : i] !== 0) ? 1 : 0);
  return [known(out, a.scalar && b.scalar, 'bool')];
}

defineOnnxFolder('And', (ctx) => logic(ctx, (a, b) => a && b));
defineOnnxFolder('Or', (ctx) => logic(ctx, (a, b) => a || b));
defineOnnxFolder('Xor', (ctx) => logic(ctx, (a, b) => a !== b));
defineOnnxFolder('Not', (ctx) => {
  const k = ctx.known(0);
  return k === null || k.dtype !== 'bool' ? null : [known(k.dims.map((d) => (d === 0 ? 1 : 0)), k.scalar, 'bool')];
});

defineOnnxFolder('Where', (ctx) => {
  const ins = allKnown(ctx);
  if (ins === null || ins.length !== 3) return null;
  const [c, a, b] = ins as [Known, Known, Known];
  if (!c.dims.every(isStatic)) return null;
  const n = Math.max(c.dims.length, a.dims.length, b.dims.length);
  const at = (k: Known, i: number): Dim => k.dims[k.dims.length === 1 ? 0 : i]!;
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) out.push(at(c, i) !== 0 ? at(a, i) : at(b, i));
  return [known(out, c.scalar && a.scalar && b.scalar, a.dtype)];
});

defineOnnxFolder('ConstantOfShape', (ctx) => {
  const shape = ctx.known(0);
  const value = ctx.attrTensor('value');
  if (shape === null || shape.dims.length !== 1 || !isStatic(shape.dims[0]!) || (shape.dims[0] as number) > 64) return null;
  const dtype = value?.dtype ?? 'float32';
  if (dtype !== 'int64' && dtype !== 'int32') return null;
  const fill = value === null ? 0 : value.toArray()[0]!;
  return [known(new Array<Dim>(shape.dims[0] as number).fill(fill), false, dtype)];
});

defineOnnxFolder('Range', (ctx) => {
  const ins = allKnown(ctx);
  if (ins === null || ins.length !== 3 || !ins.every((k) => k.scalar && isStatic(k.dims[0]!))) return null;
  const [start, limit, delta] = ins.map((k) => k.dims[0] as number) as [number, number, number];
  if (delta === 0) return ctx.bad('Range delta is zero');
  const count = Math.max(Math.ceil((limit - start) / delta), 0);
  if (count > 64) return null;
  return [known(Array.from({ length: count }, (_, i) => start + i * delta), false, ins[0]!.dtype)];
});
