/**
 * SHAPE family: data movement. Views and reshapes, permutes, joins and splits, slices and
 * selects, expands and repeats, gathers and scatters, padding, filled tensors (full, arange),
 * triangles, flips. Plus `trt.*` ops for ONNX semantics ATen lacks (negative-step Slice,
 * GatherND, ScatterND, OneHot).
 *
 * Shapes are inferred exactly and symbolically: products and sums are kept in a canonical
 * form (`s0*8`, `s0+1`), and clamps (slice bounds) are decided with the graph's symbol
 * ranges when they can be, and written as min/max expressions when they cannot.
 *
 * Conventions shared with the interpreter (lib/interpreter/ops/shape.ts): index tensors may
 * hold negative indices, which count from the end (ONNX semantics; a superset of PyTorch's).
 */
import { UnsupportedOpError } from '../../errors';
import { isInteger, promoteTypes, type DType } from '../dtype';
import { tensorType, Value, type TensorType } from '../graph';
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
  symSub,
  type Dim,
  type SymExpr,
} from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp, defineOps } from './registry';
import { broadcastDims, normAxis } from './shape-rules';
import { keyedDataDependentSymbol, maxElements } from './data-dependent';

// ---------------------------------------------------------------------------------------
// Symbolic helpers
// ---------------------------------------------------------------------------------------

/** Integers at or beyond this magnitude are "unbounded" sentinels (INT64_MAX / INT64_MIN arrive as ±2^63). */
export const SENTINEL = 2 ** 53;

const fmtShape = (s: readonly Dim[]): string =>
  `[${s.map((d) => (typeof d === 'number' ? String(d) : JSON.stringify(d))).join(', ')}]`;

/** True when `a <= b` holds for every value the graph's symbols may take. */
export function provablyLE(ctx: InferContext, a: Dim, b: Dim): boolean {
  return le(ctx, new Map(), a, b);
}

/**
 * provablyLE over shared expressions: `memo` (per top-level question) answers each pair of
 * shared nodes once, so nested max/min cost the product of their shared nodes, not of their
 * written-out trees.
 */
function le(ctx: InferContext, memo: Map<Dim, Map<Dim, boolean>>, a: Dim, b: Dim): boolean {
  if (isStatic(a) && isStatic(b)) return a <= b;
  let row = memo.get(a);
  const hit = row?.get(b);
  if (hit !== undefined) return hit;
  const answer = leUncached(ctx, memo, a, b);
  if (row === undefined) memo.set(a, (row = new Map()));
  row.set(b, answer);
  return answer;
}

function leUncached(ctx: InferContext, memo: Map<Dim, Map<Dim, boolean>>, a: Dim, b: Dim): boolean {
  if (dimEquals(a, b)) return true;
  const rec = (x: Dim, y: Dim): boolean => le(ctx, memo, x, y);
  // max(x, y) <= b when both are; min(x, y) <= b when either is; and the mirror images.
  if (!isStatic(a) && a.op === 'max' && rec(a.a, b) && rec(a.b, b)) return true;
  if (!isStatic(a) && a.op === 'min' && (rec(a.a, b) || rec(a.b, b))) return true;
  if (!isStatic(b) && b.op === 'min' && rec(a, b.a) && rec(a, b.b)) return true;
  if (!isStatic(b) && b.op === 'max' && (rec(a, b.a) || rec(a, b.b))) return true;
  // The difference in canonical form, so that s0 - (s0-1) is seen to be 1.
  return dimBounds(sumDims([b, symSub(0, a)]), ctx.symbols).min >= 0;
}

/** min(a, b), decided with the symbol ranges when possible. */
export function exactMin(ctx: InferContext, a: Dim, b: Dim): Dim {
  if (provablyLE(ctx, a, b)) return a;
  if (provablyLE(ctx, b, a)) return b;
  return symMin(a, b);
}

/** max(a, b), decided with the symbol ranges when possible. */
export function exactMax(ctx: InferContext, a: Dim, b: Dim): Dim {
  if (provablyLE(ctx, a, b)) return b;
  if (provablyLE(ctx, b, a)) return a;
  return symMax(a, b);
}

/** a + c for a static c, written `a-1` rather than `a+-1`. */
function addConst(a: Dim, c: number): Dim {
  return c < 0 ? symSub(a, -c) : symAdd(a, c);
}

interface Factored {
  coef: number;
  factors: Dim[];
}

/** Splits a product into a static coefficient and symbolic factors (`(s0*2)*4` → 8, [s0]). */
function factorize(dims: readonly Dim[]): Factored {
  let coef = 1;
  const factors: Dim[] = [];
  const visit = (d: Dim): void => {
    if (isStatic(d)) coef *= d;
    else if (d.op === 'mul') {
      visit(d.a);
      visit(d.b);
    } else factors.push(d);
  };
  dims.forEach(visit);
  return { coef, factors };
}

function buildProduct(f: Factored): Dim {
  if (f.coef === 0) return 0;
  return symMul(
    f.factors.reduce<Dim>((acc, d) => symMul(acc, d), 1),
    f.coef,
  );
}

/** The product of dims in canonical form: symbolic factors in order, then the constant (`s0*s1*8`). */
export function productDims(dims: readonly Dim[]): Dim {
  return buildProduct(factorize(dims));
}

/** a / b for products known to divide exactly, or null when that cannot be shown. */
function divideProducts(num: readonly Dim[], den: readonly Dim[]): Dim | null {
  const n = factorize(num);
  const d = factorize(den);
  if (d.coef === 0 || n.coef % d.coef !== 0) return null;
  const rest = [...n.factors];
  for (const f of d.factors) {
    const i = rest.findIndex((r) => dimEquals(r, f));
    if (i < 0) return null;
    rest.splice(i, 1);
  }
  return buildProduct({ coef: n.coef / d.coef, factors: rest });
}

/** True / false when the two products are provably equal / different, null when unknown. */
function sameProduct(a: readonly Dim[], b: readonly Dim[]): boolean | null {
  const x = factorize(a);
  const y = factorize(b);
  if (x.coef === 0 || y.coef === 0) return x.coef === 0 && y.coef === 0 ? true : x.factors.length + y.factors.length === 0 ? false : null;
  if (x.factors.length === y.factors.length) {
    const rest = [...y.factors];
    const all = x.factors.every((f) => {
      const i = rest.findIndex((r) => dimEquals(r, f));
      if (i < 0) return false;
      rest.splice(i, 1);
      return true;
    });
    if (all) return x.coef === y.coef;
  }
  return null;
}

/** The sum of dims in canonical form: equal terms grouped (`s0+s0` → `s0*2`), the constant last. */
export function sumDims(dims: readonly Dim[]): Dim {
  let constant = 0;
  const terms: Array<{ term: Dim; count: number }> = [];
  const visit = (d: Dim, sign: number): void => {
    if (isStatic(d)) constant += sign * d;
    else if (d.op === 'add') {
      visit(d.a, sign);
      visit(d.b, sign);
    } else if (d.op === 'sub') {
      visit(d.a, sign);
      visit(d.b, -sign);
    } else {
      let term: Dim = d;
      let count = sign;
      if (d.op === 'mul' && isStatic(d.b)) {
        term = d.a;
        count = sign * d.b;
      }
      const hit = terms.find((t) => dimEquals(t.term, term));
      if (hit) hit.count += count;
      else terms.push({ term, count });
    }
  };
  dims.forEach((d) => visit(d, 1));
  let out: Dim = 0;
  let first = true;
  for (const { term, count } of terms) {
    if (count === 0) continue;
    const abs = symMul(term, Math.abs(count));
    if (first) out = count > 0 ? abs : symSub(0, abs);
    else out = count > 0 ? symAdd(out, abs) : symSub(out, abs);
    first = false;
  }
  return addConst(out, constant);
}

/** ceil(a / b) for a positive static b, exact. */
function ceilDiv(a: Dim, b: number): Dim {
  if (isStatic(a)) return Math.ceil(a / b);
  if (b === 1) return a;
  if (symMod(a, b) === 0) return symFloorDiv(a, b);
  return symFloorDiv(addConst(a, b - 1), b);
}

/** A Scalar argument: a number, a boolean, or a SymInt value's expression. */
function scalarArg(ctx: InferContext, name: string): number | boolean | SymExpr {
  const a = ctx.arg(name);
  if (typeof a === 'number' || typeof a === 'boolean') return a;
  if (a instanceof Value && a.type.kind === 'symint') return a.type.expr as SymExpr;
  return ctx.fail(`argument ${name} must be a number`);
}

function optDim(ctx: InferContext, name: string): Dim | null {
  return ctx.has(name) ? ctx.dim(name) : null;
}

/** Throws E_UNSUPPORTED_OP naming the node: the op is well-formed but its shape depends on tensor data. */
function dataDependent(ctx: InferContext, what: string): never {
  throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): ${what} depends on tensor data; it cannot be compiled`, {
    details: { op: ctx.target },
  });
}

function checkIndexType(ctx: InferContext, t: TensorType, name: string): void {
  if (!isInteger(t.dtype)) ctx.fail(`${name} must be an integer tensor, got ${t.dtype}`);
}

/** Normalized, distinct axes. */
function normAxes(ctx: InferContext, axes: readonly number[], rank: number, what = 'dim'): number[] {
  const out = axes.map((a) => normAxis(ctx, a, rank, what));
  if (new Set(out).size !== out.length) ctx.fail(`${what} list [${axes.join(', ')}] repeats an axis`);
  return out;
}

// ---------------------------------------------------------------------------------------
// Views and reshapes
// ---------------------------------------------------------------------------------------

/** The output shape of view/reshape: at most one -1, inferred from the element count. */
export function reshapeShape(ctx: InferContext, input: readonly Dim[], size: readonly Dim[]): Dim[] {
  const inferred = size.filter((d) => d === -1).length;
  if (inferred > 1) ctx.fail(`shape ${fmtShape(size)} has more than one -1`);
  size.forEach((d) => {
    if (isStatic(d) && d < -1) ctx.fail(`shape ${fmtShape(size)} has a negative size`);
  });
  if (inferred === 1) {
    const others = size.filter((d) => d !== -1);
    if (others.some((d) => d === 0)) ctx.fail(`shape ${fmtShape(size)} has both a 0 and a -1, so the -1 is ambiguous`);
    let missing = divideProducts(input, others);
    if (missing === null) {
      const num = productDims(input);
      const den = productDims(others);
      if (isStatic(num) && isStatic(den)) ctx.fail(`cannot view a tensor of shape ${fmtShape(input)} as ${fmtShape(size)}`);
      missing = symFloorDiv(num, den);
    }
    return size.map((d) => (d === -1 ? missing! : d));
  }
  if (sameProduct(input, size) === false) ctx.fail(`cannot view a tensor of shape ${fmtShape(input)} (${fmtShape([productDims(input)])} elements) as ${fmtShape(size)}`);
  return [...size];
}

defineOps(
  [
    'aten.view.default(Tensor(a) self, SymInt[] size) -> Tensor(a)',
    'aten.reshape.default(Tensor(a) self, SymInt[] shape) -> Tensor(a)',
    'aten._unsafe_view.default(Tensor self, SymInt[] size) -> Tensor',
  ],
  (ctx) => {
    const self = ctx.tensor('self');
    const size = ctx.dims(ctx.target === 'aten.reshape.default' ? 'shape' : 'size');
    return [tensorType(self.dtype, reshapeShape(ctx, self.shape, size))];
  },
);

defineOp('aten.permute.default(Tensor(a) self, int[] dims) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  const dims = ctx.ints('dims');
  if (dims.length !== self.shape.length) ctx.fail(`dims [${dims.join(', ')}] do not match rank ${self.shape.length}`);
  const perm = normAxes(ctx, dims, self.shape.length);
  return [tensorType(self.dtype, perm.map((a) => self.shape[a]!))];
});

/** `self` with the dims named by arguments `first` and `second` swapped. */
function swapped(ctx: InferContext, first: string, second: string): TensorType[] {
  const self = ctx.tensor('self');
  const rank = self.shape.length;
  const a = normAxis(ctx, ctx.int(first), rank);
  const b = normAxis(ctx, ctx.int(second), rank);
  const shape = [...self.shape];
  if (rank > 0) [shape[a], shape[b]] = [shape[b]!, shape[a]!];
  return [tensorType(self.dtype, shape)];
}

defineOp('aten.transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)', (ctx) => swapped(ctx, 'dim0', 'dim1'));

// NumPy's names for transpose (MaxViT's `x.swapaxes(1, 2)`).
for (const [target, a, b] of [['aten.swapaxes.default', 'axis0', 'axis1'], ['aten.swapdims.default', 'dim0', 'dim1']] as const) {
  defineOp(`${target}(Tensor(a) self, int ${a}, int ${b}) -> Tensor(a)`, (ctx) => swapped(ctx, a, b));
}

defineOp('aten.t.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  if (self.shape.length > 2) ctx.fail(`t() expects a tensor of at most 2 dims, got ${self.shape.length}`);
  return [tensorType(self.dtype, [...self.shape].reverse())];
});

// `x.T`: every dim reversed (Falcon's attention transposes its key with it).
defineOp('aten.numpy_T.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  return [tensorType(self.dtype, [...self.shape].reverse())];
});

defineOp('aten.flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  const rank = self.shape.length;
  if (rank === 0) return [tensorType(self.dtype, [1])];
  const s = normAxis(ctx, ctx.int('start_dim'), rank, 'start_dim');
  const e = normAxis(ctx, ctx.int('end_dim'), rank, 'end_dim');
  if (s > e) ctx.fail(`start_dim ${s} comes after end_dim ${e}`);
  return [tensorType(self.dtype, [...self.shape.slice(0, s), productDims(self.shape.slice(s, e + 1)), ...self.shape.slice(e + 1)])];
});

defineOp('aten.unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const sizes = ctx.dims('sizes');
  if (sizes.length === 0) ctx.fail('sizes must not be empty');
  const middle = reshapeShape(ctx, [self.shape[a]!], sizes);
  return [tensorType(self.dtype, [...self.shape.slice(0, a), ...middle, ...self.shape.slice(a + 1)])];
});

defineOp('aten.squeeze.default(Tensor(a) self) -> Tensor(a)', (ctx) => {
  // Symbolic dims are taken as not 1 (torch.export specializes sizes 0 and 1).
  const self = ctx.tensor('self');
  return [tensorType(self.dtype, self.shape.filter((d) => d !== 1))];
});

function squeezeDims(ctx: InferContext, dims: readonly number[]): TensorType {
  const self = ctx.tensor('self');
  const rank = self.shape.length;
  const axes = normAxes(ctx, dims, rank);
  if (rank === 0) return tensorType(self.dtype, []);
  return tensorType(
    self.dtype,
    self.shape.filter((d, i) => !(d === 1 && axes.includes(i))),
  );
}

defineOp('aten.squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)', (ctx) => [squeezeDims(ctx, [ctx.int('dim')])]);
defineOp('aten.squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)', (ctx) => [squeezeDims(ctx, ctx.ints('dim'))]);

defineOp('aten.unsqueeze.default(Tensor(a) self, int dim) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length + 1);
  const shape = [...self.shape];
  shape.splice(a, 0, 1);
  return [tensorType(self.dtype, shape)];
});

// ---------------------------------------------------------------------------------------
// Joins and splits
// ---------------------------------------------------------------------------------------

/** Two dims that must be equal: the static one (or the first) wins. */
function unifyDim(ctx: InferContext, a: Dim, b: Dim, what: string): Dim {
  if (dimEquals(a, b)) return a;
  if (isStatic(a) && isStatic(b)) return ctx.fail(what);
  return isStatic(a) ? a : isStatic(b) ? b : a;
}

defineOp('aten.cat.default(Tensor[] tensors, int dim=0) -> Tensor', (ctx) => {
  const all = ctx.tensors('tensors');
  if (all.length === 0) ctx.fail('needs at least one tensor');
  // As in PyTorch, 1-D empty tensors are skipped when the others have another rank.
  const isLegacyEmpty = (t: TensorType): boolean => t.shape.length === 1 && t.shape[0] === 0;
  const ref = all.find((t) => !isLegacyEmpty(t)) ?? all[0]!;
  const parts = all.filter((t) => t === ref || !isLegacyEmpty(t) || ref.shape.length === 1);
  const rank = ref.shape.length;
  if (rank === 0) ctx.fail('zero-dimensional tensors cannot be concatenated');
  const a = normAxis(ctx, ctx.int('dim'), rank);
  const shape = [...ref.shape];
  for (const t of parts) {
    if (t.shape.length !== rank) ctx.fail(`tensors of ranks ${rank} and ${t.shape.length} cannot be concatenated`);
    t.shape.forEach((d, i) => {
      if (i !== a) shape[i] = unifyDim(ctx, shape[i]!, d, `shapes ${parts.map((p) => fmtShape(p.shape)).join(', ')} differ outside dim ${a}`);
    });
  }
  shape[a] = sumDims(parts.map((t) => t.shape[a]!));
  const dtype = all.map((t) => t.dtype).reduce((x, y) => promoteTypes(x, y));
  return [tensorType(dtype, shape)];
});

defineOp('aten.stack.default(Tensor[] tensors, int dim=0) -> Tensor', (ctx) => {
  const all = ctx.tensors('tensors');
  if (all.length === 0) ctx.fail('needs at least one tensor');
  const shape = [...all[0]!.shape];
  for (const t of all) {
    if (t.shape.length !== shape.length) ctx.fail(`stack needs tensors of one shape, got ${all.map((x) => fmtShape(x.shape)).join(', ')}`);
    t.shape.forEach((d, i) => {
      shape[i] = unifyDim(ctx, shape[i]!, d, `stack needs tensors of one shape, got ${all.map((x) => fmtShape(x.shape)).join(', ')}`);
    });
  }
  const a = normAxis(ctx, ctx.int('dim'), shape.length + 1);
  shape.splice(a, 0, all.length);
  const dtype = all.map((t) => t.dtype).reduce((x, y) => promoteTypes(x, y));
  return [tensorType(dtype, shape)];
});

/** Output types of a split into pieces of the given sizes along `axis`. */
function pieces(self: TensorType, axis: number, sizes: readonly Dim[]): TensorType[] {
  return sizes.map((s) => {
    const shape = [...self.shape];
    shape[axis] = s;
    return tensorType(self.dtype, shape);
  });
}

/** Chunk sizes of splitting a dim of size n into chunks of `size` (the last may be smaller); null when the count is symbolic. */
function chunkSizes(ctx: InferContext, n: Dim, size: Dim): Dim[] | null {
  if (isStatic(size) && size <= 0) ctx.fail(`split size ${size} must be positive`);
  if (isStatic(n) && isStatic(size)) {
    if (n === 0) return [0];
    const count = Math.ceil(n / size);
    return Array.from({ length: count }, (_, i) => (i < count - 1 ? size : n - size * (count - 1)));
  }
  // size divides n exactly (n = s0*4, size 4 or size s0)
  const q = divideProducts([n], [size]);
  if (q !== null && isStatic(q)) return new Array<Dim>(q).fill(size);
  if (isStatic(size)) {
    // The count may still be fixed by the symbol ranges (n in [2, 64] with chunks of 64).
    const b = dimBounds(n, ctx.symbols);
    const lo = Math.max(1, Math.ceil(b.min / size));
    const hi = Math.max(1, Math.ceil(b.max / size));
    if (lo === hi && Number.isFinite(hi)) {
      return Array.from({ length: hi }, (_, i) => (i < hi - 1 ? size : symSub(n, size * (hi - 1))));
    }
  }
  return null;
}

defineOp('aten.split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const n = self.shape[a]!;
  const sizes = chunkSizes(ctx, n, ctx.dim('split_size'));
  if (sizes === null) dataDependent(ctx, `the number of chunks of size ${fmtShape([ctx.dim('split_size')])} in dim ${fmtShape([n])}`);
  return pieces(self, a, sizes);
});

defineOp('aten.split_with_sizes.default(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const sizes = ctx.dims('split_sizes');
  if (sizes.some((s) => isStatic(s) && s < 0)) ctx.fail(`split sizes ${fmtShape(sizes)} must be non-negative`);
  const total = sumDims(sizes);
  const n = self.shape[a]!;
  if (isStatic(total) && isStatic(n) && total !== n) ctx.fail(`split sizes ${fmtShape(sizes)} do not add up to dim ${a} of size ${n}`);
  return pieces(self, a, sizes);
});

defineOp('aten.chunk.default(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]', (ctx) => {
  const self = ctx.tensor('self');
  const chunks = ctx.int('chunks');
  if (chunks <= 0) ctx.fail(`chunks must be positive, got ${chunks}`);
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const n = self.shape[a]!;
  let sizes: Dim[] | null;
  if (n === 0) sizes = new Array<Dim>(chunks).fill(0);
  else if (isStatic(n)) sizes = chunkSizes(ctx, n, Math.max(1, Math.ceil(n / chunks)));
  else if (symMod(n, chunks) === 0) sizes = new Array<Dim>(chunks).fill(symFloorDiv(n, chunks));
  else sizes = chunkSizes(ctx, n, ceilDiv(n, chunks));
  if (sizes === null) dataDependent(ctx, `the number of chunks of dim ${fmtShape([n])}`);
  return pieces(self, a, sizes);
});

defineOp('aten.unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  let n = self.shape[a]!;
  if (!isStatic(n)) {
    const b = dimBounds(n, ctx.symbols);
    if (b.min !== b.max) dataDependent(ctx, `the number of outputs of unbind over symbolic dim ${fmtShape([n])}`);
    n = b.min;
  }
  const shape = self.shape.filter((_, i) => i !== a);
  return Array.from({ length: n }, () => tensorType(self.dtype, shape));
});

/**
 * meshgrid: each of N 0-D or 1-D tensors spread over the grid of all their sizes ("ij": dim i
 * is tensor i's; "xy": the first two swapped, NumPy's Cartesian order). BEiT's relative
 * position table.
 */
function meshgrid(ctx: InferContext, indexing: string): TensorType[] {
  const all = ctx.tensors('tensors');
  if (all.length === 0) ctx.fail('needs at least one tensor');
  if (indexing !== 'ij' && indexing !== 'xy') ctx.fail(`indexing must be "ij" or "xy", got "${indexing}"`);
  if (all.some((t) => t.shape.length > 1)) ctx.fail(`expects 0-D or 1-D tensors, got ${all.map((t) => fmtShape(t.shape)).join(', ')}`);
  if (all.some((t) => t.dtype !== all[0]!.dtype)) ctx.fail(`expects tensors of one dtype, got ${all.map((t) => t.dtype).join(', ')}`);
  const sizes: Dim[] = all.map((t) => (t.shape.length === 0 ? 1 : t.shape[0]!));
  if (indexing === 'xy' && sizes.length >= 2) [sizes[0], sizes[1]] = [sizes[1]!, sizes[0]!];
  return all.map((t) => tensorType(t.dtype, [...sizes]));
}

defineOp('aten.meshgrid.default(Tensor[] tensors) -> Tensor[]', (ctx) => meshgrid(ctx, 'ij'));
defineOp('aten.meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]', (ctx) => meshgrid(ctx, ctx.str('indexing')));

// ---------------------------------------------------------------------------------------
// Slices and selects
// ---------------------------------------------------------------------------------------

/**
 * One bound of a positive-step slice, wrapped (negative counts from the end) and clamped to
 * [0, n] as PyTorch and ONNX do. Symbolic bounds are taken as non-negative unless their range
 * says they are negative.
 */
function clampBound(ctx: InferContext, x: Dim, n: Dim): Dim {
  if (isStatic(x)) {
    if (x >= SENTINEL) return n;
    if (x <= -SENTINEL) return 0;
    if (x < 0) return exactMax(ctx, addConst(n, x), 0);
    return exactMin(ctx, x, n);
  }
  if (dimBounds(x, ctx.symbols).max < 0) return exactMax(ctx, symAdd(n, x), 0);
  return exactMin(ctx, x, n);
}

/** Start and length of slice(start, end, step) for step > 0 over a dim of size n. */
export function sliceExtent(ctx: InferContext, n: Dim, start: Dim | null, end: Dim | null, step: number): { start: Dim; length: Dim } {
  if (!(step > 0)) ctx.fail(`slice step must be positive, got ${step}`);
  const s = start === null ? 0 : clampBound(ctx, start, n);
  let e = end === null ? n : clampBound(ctx, end, n);
  e = exactMax(ctx, e, s);
  const span = sumDims([e, symSub(0, s)]);
  return { start: s, length: ceilDiv(span, step) };
}

function staticStep(ctx: InferContext, name = 'step'): number {
  const step = ctx.dim(name);
  if (!isStatic(step)) ctx.fail(`${name} must be a static integer`);
  return step;
}

defineOp(
  'aten.slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)',
  (ctx) => {
    const self = ctx.tensor('self');
    const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
    const { length } = sliceExtent(ctx, self.shape[a]!, optDim(ctx, 'start'), optDim(ctx, 'end'), staticStep(ctx));
    const shape = [...self.shape];
    shape[a] = length;
    return [tensorType(self.dtype, shape)];
  },
);

/**
 * Length of an ONNX Slice along one axis for a negative step: after wrapping negatives, start
 * clamps to [0, n-1] and end to [-1, n-1]; the count is ceil((start - end) / |step|), at least 0.
 */
function negativeSliceLength(ctx: InferContext, n: Dim, start: Dim, end: Dim, step: number): Dim {
  const last = addConst(n, -1);
  const clamp = (x: Dim, lo: number): Dim => {
    if (isStatic(x) && x >= SENTINEL) return last;
    let raw: Dim;
    if (isStatic(x)) raw = x <= -SENTINEL ? lo : x < 0 ? addConst(n, x) : x;
    else raw = dimBounds(x, ctx.symbols).max < 0 ? symAdd(n, x) : x;
    return exactMin(ctx, exactMax(ctx, raw, lo), last);
  };
  const s = clamp(start, 0);
  const e = clamp(end, -1);
  const span = exactMax(ctx, sumDims([s, symSub(0, e)]), 0);
  return ceilDiv(span, -step);
}

defineOp('trt.slice_onnx(Tensor self, int dim, SymInt start, SymInt end, int step) -> Tensor', (ctx) => {
  // One axis of ONNX Slice, for any non-zero step (ONNX clamping; a negative step walks backwards).
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const step = ctx.int('step');
  if (step === 0) ctx.fail('slice step must not be 0');
  const n = self.shape[a]!;
  const length =
    step > 0 ? sliceExtent(ctx, n, ctx.dim('start'), ctx.dim('end'), step).length : negativeSliceLength(ctx, n, ctx.dim('start'), ctx.dim('end'), step);
  const shape = [...self.shape];
  shape[a] = length;
  return [tensorType(self.dtype, shape)];
});

defineOp('aten.select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  if (self.shape.length === 0) ctx.fail('select() cannot be applied to a 0-dim tensor');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const index = ctx.dim('index');
  const n = self.shape[a]!;
  if (isStatic(index) && isStatic(n) && (index < -n || index >= n)) ctx.fail(`index ${index} is out of range for dim ${a} of size ${n}`);
  return [tensorType(self.dtype, self.shape.filter((_, i) => i !== a))];
});

defineOp('aten.narrow.default(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const start = ctx.dim('start');
  const length = ctx.dim('length');
  const n = self.shape[a]!;
  if (isStatic(length) && length < 0) ctx.fail(`length ${length} must be non-negative`);
  if (isStatic(start) && isStatic(length) && isStatic(n)) {
    const s = start < 0 ? start + n : start;
    if (s < 0 || s + length > n) ctx.fail(`start ${start} + length ${length} exceeds dim ${a} of size ${n}`);
  }
  const shape = [...self.shape];
  shape[a] = length;
  return [tensorType(self.dtype, shape)];
});

// ---------------------------------------------------------------------------------------
// Expand, repeat
// ---------------------------------------------------------------------------------------

/** torch.expand's shape rule (-1 keeps a dim; size-1 dims stretch; new dims lead). */
export function expandShape(ctx: InferContext, input: readonly Dim[], size: readonly Dim[]): Dim[] {
  const lead = size.length - input.length;
  if (lead < 0) ctx.fail(`the target ${fmtShape(size)} has fewer dims than the input ${fmtShape(input)}`);
  return size.map((t, i) => {
    if (i < lead) {
      if (isStatic(t) && t < 0) ctx.fail(`the new leading dim ${i} of ${fmtShape(size)} must be given (not ${t})`);
      return t;
    }
    const d = input[i - lead]!;
    if (t === -1 || dimEquals(t, d)) return d;
    if (d === 1) {
      if (isStatic(t) && t < 0) ctx.fail(`invalid size ${t} in ${fmtShape(size)}`);
      return t;
    }
    if (isStatic(d) && isStatic(t)) ctx.fail(`cannot expand a tensor of shape ${fmtShape(input)} to ${fmtShape(size)}`);
    // A symbolic dim against another size: valid only when they are equal (or the input is 1).
    return isStatic(d) ? d : t;
  });
}

defineOp('aten.expand.default(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  return [tensorType(self.dtype, expandShape(ctx, self.shape, ctx.dims('size')))];
});

defineOp('aten.expand_as.default(Tensor(a) self, Tensor other) -> Tensor(a)', (ctx) => {
  const self = ctx.tensor('self');
  return [tensorType(self.dtype, expandShape(ctx, self.shape, ctx.tensor('other').shape))];
});

// The functional form of copy_: src broadcast to self's shape, in self's dtype.
defineOp('aten.copy.default(Tensor self, Tensor src, bool non_blocking=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  expandShape(ctx, ctx.tensor('src').shape, self.shape);
  return [tensorType(self.dtype, [...self.shape])];
});

defineOp('aten.repeat.default(Tensor self, SymInt[] repeats) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const reps = ctx.dims('repeats');
  if (reps.length < self.shape.length) ctx.fail(`repeats ${fmtShape(reps)} must have at least as many entries as the input has dims (${self.shape.length})`);
  if (reps.some((r) => isStatic(r) && r < 0)) ctx.fail(`repeats ${fmtShape(reps)} must be non-negative`);
  const padded = [...new Array<Dim>(reps.length - self.shape.length).fill(1), ...self.shape];
  return [tensorType(self.dtype, padded.map((d, i) => productDims([d, reps[i]!])))];
});

defineOp(
  'aten.repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    const repeats = ctx.dim('repeats');
    if (isStatic(repeats) && repeats < 0) ctx.fail(`repeats ${repeats} must be non-negative`);
    const dim = ctx.optInt('dim');
    if (dim === null) return [tensorType(self.dtype, [productDims([...self.shape, repeats])])];
    const a = normAxis(ctx, dim, self.shape.length);
    const shape = [...self.shape];
    if (shape.length === 0) return [tensorType(self.dtype, [repeats])];
    shape[a] = productDims([shape[a]!, repeats]);
    return [tensorType(self.dtype, shape)];
  },
);

// ---------------------------------------------------------------------------------------
// Gathers and scatters
// ---------------------------------------------------------------------------------------

defineOp('aten.index_select.default(Tensor self, int dim, Tensor index) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const index = ctx.tensor('index');
  checkIndexType(ctx, index, 'index');
  if (index.shape.length > 1) ctx.fail(`index must be 0-D or 1-D, got ${fmtShape(index.shape)}`);
  if (self.shape.length === 0) ctx.fail('index_select needs a tensor of at least 1 dim');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const shape = [...self.shape];
  shape[a] = index.shape.length === 0 ? 1 : index.shape[0]!;
  return [tensorType(self.dtype, shape)];
});

defineOp(
  'aten.embedding.default(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor',
  (ctx) => {
    const weight = ctx.tensor('weight');
    const indices = ctx.tensor('indices');
    checkIndexType(ctx, indices, 'indices');
    if (weight.shape.length !== 2) ctx.fail(`weight must be 2-D, got ${fmtShape(weight.shape)}`);
    return [tensorType(weight.dtype, [...indices.shape, weight.shape[1]!])];
  },
);

defineOp('aten.gather.default(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const index = ctx.tensor('index');
  checkIndexType(ctx, index, 'index');
  if (index.shape.length !== self.shape.length) ctx.fail(`index ${fmtShape(index.shape)} must have the rank of self ${fmtShape(self.shape)}`);
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  return [tensorType(self.dtype, index.shape)];
});

function scatterCommon(ctx: InferContext, src: TensorType | null): TensorType {
  const self = ctx.tensor('self');
  const index = ctx.tensor('index');
  checkIndexType(ctx, index, 'index');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  if (index.shape.length !== self.shape.length) ctx.fail(`index ${fmtShape(index.shape)} must have the rank of self ${fmtShape(self.shape)}`);
  if (src !== null) {
    if (src.dtype !== self.dtype) ctx.fail(`src is ${src.dtype} but self is ${self.dtype}`);
    if (src.shape.length !== index.shape.length) ctx.fail(`src ${fmtShape(src.shape)} must have the rank of index ${fmtShape(index.shape)}`);
  }
  return tensorType(self.dtype, self.shape);
}

defineOp('aten.scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor', (ctx) => [scatterCommon(ctx, ctx.tensor('src'))]);
defineOp('aten.scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor', (ctx) => [scatterCommon(ctx, null)]);
defineOp('aten.scatter_add.default(Tensor self, int dim, Tensor index, Tensor src) -> Tensor', (ctx) => [scatterCommon(ctx, ctx.tensor('src'))]);
defineOp('aten.scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor', (ctx) => {
  const reduce = ctx.str('reduce');
  if (reduce !== 'add' && reduce !== 'multiply') ctx.fail(`reduce must be "add" or "multiply", got "${reduce}"`);
  return [scatterCommon(ctx, ctx.tensor('src'))];
});
defineOp(
  'aten.scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor',
  (ctx) => {
    const reduce = ctx.str('reduce');
    if (!['sum', 'prod', 'amax', 'amin'].includes(reduce)) {
      if (reduce === 'mean') throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): reduce "mean" is not supported`, { details: { op: ctx.target } });
      ctx.fail(`reduce must be one of sum, prod, mean, amax, amin; got "${reduce}"`);
    }
    if (!ctx.bool('include_self')) throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): include_self=False is not supported`, { details: { op: ctx.target } });
    return [scatterCommon(ctx, ctx.tensor('src'))];
  },
);

/** Shape of advanced indexing (NumPy rules): index tensors broadcast; adjacent ones replace their dims in place, others go first. */
function indexShape(ctx: InferContext, self: TensorType, indices: ReadonlyArray<TensorType | null>): Dim[] {
  if (indices.length > self.shape.length) ctx.fail(`${indices.length} indices for a tensor of rank ${self.shape.length}`);
  const positions: number[] = [];
  indices.forEach((t, d) => {
    if (t === null) return;
    if (t.dtype === 'bool' || t.dtype === 'uint8') dataDependent(ctx, 'indexing with a boolean mask (its result size)');
    checkIndexType(ctx, t, `indices[${d}]`);
    positions.push(d);
  });
  if (positions.length === 0) return [...self.shape];
  const b = broadcastDims(ctx, ...positions.map((d) => indices[d]!.shape));
  const adjacent = positions[positions.length - 1]! - positions[0]! === positions.length - 1;
  const rest = self.shape.map((_, d) => d).filter((d) => !positions.includes(d));
  const before = adjacent ? rest.filter((d) => d < positions[0]!) : [];
  const after = rest.filter((d) => !before.includes(d));
  return [...before.map((d) => self.shape[d]!), ...b, ...after.map((d) => self.shape[d]!)];
}

function optTensorList(ctx: InferContext, name: string): Array<TensorType | null> {
  const a = ctx.arg(name);
  if (!Array.isArray(a)) ctx.fail(`argument ${name} must be a list`);
  return a.map((v, i) => {
    if (v === null) return null;
    if (!(v instanceof Value) || v.type.kind !== 'tensor') return ctx.fail(`argument ${name}[${i}] must be a tensor or None`);
    return v.type;
  });
}

/**
 * x[mask] with a bool mask as the one index tensor (what `x[mask]` and `x[:, mask]` export to):
 * the mask's dims must be self's from its position on, and become one dim, the count of its
 * true elements: a data-dependent symbol named after the mask (the same mask, the same count).
 * A mask together with other index tensors, or a 0-d one, is refused as data-dependent.
 */
function maskIndexShape(ctx: InferContext, self: TensorType, indices: ReadonlyArray<TensorType | null>): Dim[] {
  const given = indices.flatMap((t, d) => (t === null ? [] : [d]));
  const d = given[0]!;
  const mask = indices[d]!;
  if (given.length !== 1) dataDependent(ctx, 'indexing with a boolean mask together with other index tensors (its result size)');
  if (mask.shape.length === 0) dataDependent(ctx, 'indexing with a 0-d boolean mask (its result size)');
  if (d + mask.shape.length > self.shape.length) ctx.fail(`mask ${fmtShape(mask.shape)} at dim ${d} has more dims than self ${fmtShape(self.shape)}`);
  mask.shape.forEach((m, i) => {
    const s = self.shape[d + i]!;
    if (isStatic(m) && isStatic(s) && m !== s) ctx.fail(`mask ${fmtShape(mask.shape)} does not match self ${fmtShape(self.shape)} at dim ${d + i} (${m} against ${s})`);
  });
  const value = (ctx.arg('indices') as Value[])[d]!;
  const count = keyedDataDependentSymbol(ctx, `mask_count_${value.name}`, maxElements(mask.shape));
  return [...self.shape.slice(0, d), count, ...self.shape.slice(d + mask.shape.length)];
}

defineOp('aten.index.Tensor(Tensor self, Tensor?[] indices) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const indices = optTensorList(ctx, 'indices');
  if (indices.some((t) => t !== null && t.dtype === 'bool')) return [tensorType(self.dtype, maskIndexShape(ctx, self, indices))];
  return [tensorType(self.dtype, indexShape(ctx, self, indices))];
});

// The elements of self where the mask (broadcast with self) is true, flattened: [count].
defineOp('aten.masked_select.default(Tensor self, Tensor mask) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mask = ctx.tensor('mask');
  if (mask.dtype !== 'bool') ctx.fail(`mask must be bool, got ${mask.dtype}`);
  const shape = broadcastDims(ctx, self.shape, mask.shape);
  const [s, m] = [ctx.arg('self') as Value, ctx.arg('mask') as Value];
  return [tensorType(self.dtype, [keyedDataDependentSymbol(ctx, `masked_select_${s.name}_${m.name}`, maxElements(shape))])];
});

defineOp('aten.index_put.default(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const values = ctx.tensor('values');
  const indices = optTensorList(ctx, 'indices');
  if (indices.length > self.shape.length) ctx.fail(`${indices.length} indices for a tensor of rank ${self.shape.length}`);
  if (values.dtype !== self.dtype) ctx.fail(`values are ${values.dtype} but self is ${self.dtype}`);
  const masks = indices.some((t) => t !== null && (t.dtype === 'bool' || t.dtype === 'uint8'));
  if (!masks) {
    // values must broadcast to the indexed shape
    const target = indexShape(ctx, self, indices);
    broadcastDims(ctx, target, values.shape);
    if (values.shape.length > target.length) ctx.fail(`values ${fmtShape(values.shape)} have more dims than the indexed shape ${fmtShape(target)}`);
  }
  return [tensorType(self.dtype, self.shape)];
});

defineOp('trt.gather_nd(Tensor self, Tensor indices, int batch_dims=0) -> Tensor', (ctx) => {
  // ONNX GatherND: index tuples in the last dim of indices address slices of self.
  const self = ctx.tensor('self');
  const indices = ctx.tensor('indices');
  checkIndexType(ctx, indices, 'indices');
  const b = ctx.int('batch_dims');
  if (indices.shape.length < 1) ctx.fail('indices must have at least 1 dim');
  if (b < 0 || b >= Math.min(self.shape.length, indices.shape.length)) ctx.fail(`batch_dims ${b} is out of range`);
  const k = indices.shape[indices.shape.length - 1]!;
  if (!isStatic(k)) return ctx.fail(`the last dim of indices ${fmtShape(indices.shape)} must be static`);
  if (b + k > self.shape.length) ctx.fail(`index tuples of length ${k} exceed the rank of self ${fmtShape(self.shape)} after ${b} batch dims`);
  const batch = self.shape.slice(0, b).map((d, i) => unifyDim(ctx, d, indices.shape[i]!, `batch dim ${i} differs between self and indices`));
  return [tensorType(self.dtype, [...batch, ...indices.shape.slice(b, -1), ...self.shape.slice(b + k)])];
});

defineOp('trt.scatter_nd(Tensor self, Tensor indices, Tensor updates, str reduction="none") -> Tensor', (ctx) => {
  // ONNX ScatterND: a copy of self with the slices addressed by index tuples replaced (or reduced).
  const self = ctx.tensor('self');
  const indices = ctx.tensor('indices');
  const updates = ctx.tensor('updates');
  checkIndexType(ctx, indices, 'indices');
  const reduction = ctx.str('reduction');
  if (!['none', 'add', 'mul', 'max', 'min'].includes(reduction)) ctx.fail(`reduction must be none, add, mul, max or min; got "${reduction}"`);
  if (updates.dtype !== self.dtype) ctx.fail(`updates are ${updates.dtype} but self is ${self.dtype}`);
  if (indices.shape.length < 1) ctx.fail('indices must have at least 1 dim');
  const k = indices.shape[indices.shape.length - 1]!;
  if (!isStatic(k)) return ctx.fail(`the last dim of indices ${fmtShape(indices.shape)} must be static`);
  if (k > self.shape.length) ctx.fail(`index tuples of length ${k} exceed the rank of self ${fmtShape(self.shape)}`);
  const expected = [...indices.shape.slice(0, -1), ...self.shape.slice(k)];
  if (updates.shape.length !== expected.length || updates.shape.some((d, i) => isStatic(d) && isStatic(expected[i]!) && d !== expected[i])) {
    ctx.fail(`updates ${fmtShape(updates.shape)} must have shape ${fmtShape(expected)}`);
  }
  return [tensorType(self.dtype, self.shape)];
});

defineOp('trt.one_hot(Tensor indices, SymInt depth, Tensor values, int axis=-1) -> Tensor', (ctx) => {
  // ONNX OneHot: values = [off, on]; negative indices count from depth; out-of-range gives all off.
  const indices = ctx.tensor('indices');
  const values = ctx.tensor('values');
  const depth = ctx.dim('depth');
  if (isStatic(depth) && depth < 0) ctx.fail(`depth ${depth} must be non-negative`);
  if (values.shape.length > 1 || (values.shape.length === 1 && values.shape[0] !== 2)) ctx.fail(`values must hold [off, on], got ${fmtShape(values.shape)}`);
  const a = normAxis(ctx, ctx.int('axis'), indices.shape.length + 1, 'axis');
  const shape = [...indices.shape];
  shape.splice(a, 0, depth);
  return [tensorType(values.dtype, shape)];
});

defineOp('aten.one_hot.default(Tensor self, int num_classes=-1) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  checkIndexType(ctx, self, 'self');
  const n = ctx.int('num_classes');
  if (n === -1) dataDependent(ctx, 'one_hot without num_classes (its size is max(self) + 1)');
  if (n < 0) ctx.fail(`num_classes ${n} must be non-negative`);
  return [tensorType('int64', [...self.shape, n])];
});

// ---------------------------------------------------------------------------------------
// Padding
// ---------------------------------------------------------------------------------------

function padShape(ctx: InferContext, input: readonly Dim[], pad: readonly Dim[]): Dim[] {
  if (pad.length % 2 !== 0) ctx.fail(`pad ${fmtShape(pad)} must have an even length`);
  if (pad.length / 2 > input.length) ctx.fail(`pad ${fmtShape(pad)} pads more dims than the input has (${input.length})`);
  const shape = [...input];
  for (let k = 0; k < pad.length / 2; k++) {
    const axis = input.length - 1 - k;
    const d = sumDims([shape[axis]!, pad[2 * k]!, pad[2 * k + 1]!]);
    if (isStatic(d) && d < 0) ctx.fail(`pad ${fmtShape(pad)} makes dim ${axis} of ${fmtShape(input)} negative`);
    shape[axis] = d;
  }
  return shape;
}

defineOp('aten.constant_pad_nd.default(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  scalarArg(ctx, 'value');
  return [tensorType(self.dtype, padShape(ctx, self.shape, ctx.dims('pad')))];
});

defineOp('aten.pad.default(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const mode = ctx.str('mode');
  if (!['constant', 'reflect', 'replicate', 'circular'].includes(mode)) ctx.fail(`mode must be constant, reflect, replicate or circular; got "${mode}"`);
  if (mode !== 'constant' && ctx.has('value')) ctx.fail(`a padding value is only allowed with mode "constant", not "${mode}"`);
  const pad = ctx.dims('pad');
  if (mode === 'reflect') {
    for (let k = 0; k < pad.length / 2; k++) {
      const d = self.shape[self.shape.length - 1 - k];
      const [p0, p1] = [pad[2 * k]!, pad[2 * k + 1]!];
      if (d !== undefined && isStatic(d) && isStatic(p0) && isStatic(p1) && (p0 >= d || p1 >= d)) {
        ctx.fail(`reflect padding ${p0}, ${p1} must be smaller than the padded dim (${d})`);
      }
    }
  }
  return [tensorType(self.dtype, padShape(ctx, self.shape, pad))];
});

// ---------------------------------------------------------------------------------------
// Filled tensors
// ---------------------------------------------------------------------------------------

const FACTORY_KW = 'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None';

function sizeArg(ctx: InferContext, name: string): Dim[] {
  const size = ctx.dims(name);
  if (size.some((d) => isStatic(d) && d < 0)) ctx.fail(`${name} ${fmtShape(size)} has a negative dim`);
  return size;
}

/** The dtype PyTorch gives a scalar fill value: bool, int64 for integers, float32 otherwise. */
function scalarDType(v: number | boolean | SymExpr): DType {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v !== 'number' || Number.isInteger(v)) return 'int64';
  return 'float32';
}

defineOp(`aten.full.default(SymInt[] size, Scalar fill_value, *, ${FACTORY_KW}) -> Tensor`, (ctx) => {
  const fill = scalarArg(ctx, 'fill_value');
  return [tensorType(ctx.dtype('dtype') ?? scalarDType(fill), sizeArg(ctx, 'size'))];
});

defineOps([`aten.zeros.default(SymInt[] size, *, ${FACTORY_KW}) -> Tensor`, `aten.ones.default(SymInt[] size, *, ${FACTORY_KW}) -> Tensor`], (ctx) => [
  tensorType(ctx.dtype('dtype') ?? 'float32', sizeArg(ctx, 'size')),
]);

defineOp(`aten.full_like.default(Tensor self, Scalar fill_value, *, ${FACTORY_KW}, MemoryFormat? memory_format=None) -> Tensor`, (ctx) => {
  const self = ctx.tensor('self');
  scalarArg(ctx, 'fill_value');
  return [tensorType(ctx.dtype('dtype') ?? self.dtype, self.shape)];
});

defineOps(
  [
    `aten.zeros_like.default(Tensor self, *, ${FACTORY_KW}, MemoryFormat? memory_format=None) -> Tensor`,
    `aten.ones_like.default(Tensor self, *, ${FACTORY_KW}, MemoryFormat? memory_format=None) -> Tensor`,
  ],
  (ctx) => {
    const self = ctx.tensor('self');
    return [tensorType(ctx.dtype('dtype') ?? self.dtype, self.shape)];
  },
);

// diff: n-th forward differences along dim, after prepend/append are joined on (transformers'
// mask code takes torch.diff of position ids to find packed sequences). Bool tensors differ by xor.
defineOp('aten.diff.default(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const rank = self.shape.length;
  if (rank === 0) ctx.fail('diff needs a tensor of rank 1 or more');
  const n = ctx.int('n');
  if (n < 0) ctx.fail(`order must be non-negative, got ${n}`);
  const dim = normAxis(ctx, ctx.int('dim'), rank);
  let size: Dim = self.shape[dim]!;
  for (const name of ['prepend', 'append']) {
    const t = ctx.optTensor(name);
    if (t === null) continue;
    if (t.dtype !== self.dtype) ctx.fail(`${name} is ${t.dtype}, self is ${self.dtype}`);
    if (t.shape.length !== rank) ctx.fail(`${name} has rank ${t.shape.length}, self ${rank}`);
    size = symAdd(size, t.shape[dim]!);
  }
  if (typeof size === 'number' && size < n) ctx.fail(`${n}-th differences of ${size} elements along dim ${dim}`);
  const shape = [...self.shape];
  shape[dim] = addConst(size, -n);
  return [tensorType(self.dtype, shape)];
});

// zero: what torch.export's in-place `zero_` (Swin V2: `qkv_bias[n:2 * n].zero_()`) becomes in the importer.
defineOp('aten.zero.default(Tensor self) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  return [tensorType(self.dtype, self.shape)];
});

defineOps(
  [`aten.new_zeros.default(Tensor self, SymInt[] size, *, ${FACTORY_KW}) -> Tensor`, `aten.new_ones.default(Tensor self, SymInt[] size, *, ${FACTORY_KW}) -> Tensor`],
  (ctx) => [tensorType(ctx.dtype('dtype') ?? ctx.tensor('self').dtype, sizeArg(ctx, 'size'))],
);

defineOp(`aten.new_full.default(Tensor self, SymInt[] size, Scalar fill_value, *, ${FACTORY_KW}) -> Tensor`, (ctx) => {
  scalarArg(ctx, 'fill_value');
  return [tensorType(ctx.dtype('dtype') ?? ctx.tensor('self').dtype, sizeArg(ctx, 'size'))];
});

/** Number of elements of arange(start, end, step), exactly as the kernel counts them (never negative). */
function arangeLength(ctx: InferContext, start: number | boolean | SymExpr, end: number | boolean | SymExpr, step: number | boolean | SymExpr): Dim {
  const num = (v: number | boolean | SymExpr): Dim => (typeof v === 'boolean' ? Number(v) : v);
  const [s, e, st] = [num(start), num(end), num(step)];
  if (st === 0) ctx.fail('step must be non-zero');
  if (isStatic(s) && isStatic(e) && isStatic(st)) {
    if (![s, e, st].every(Number.isFinite)) ctx.fail(`start ${s}, end ${e} and step ${st} must be finite`);
    return Math.max(0, Math.ceil((e - s) / st));
  }
  if (!isStatic(st) || !Number.isInteger(st)) ctx.fail('with a symbolic start or end, step must be a static integer');
  if ((isStatic(s) && !Number.isInteger(s)) || (isStatic(e) && !Number.isInteger(e))) ctx.fail('a symbolic arange needs integer bounds');
  const span = st > 0 ? sumDims([e, symSub(0, s)]) : sumDims([s, symSub(0, e)]);
  return ceilDiv(exactMax(ctx, span, 0), Math.abs(st));
}

function arangeType(ctx: InferContext, ...values: Array<number | boolean | SymExpr>): TensorType {
  const dtype = ctx.dtype('dtype') ?? (values.every((v) => typeof v !== 'number' || Number.isInteger(v)) ? 'int64' : 'float32');
  const [start, end, step] = values.length === 1 ? [0, values[0]!, 1] : values.length === 2 ? [values[0]!, values[1]!, 1] : (values as [number, number, number]);
  return tensorType(dtype, [arangeLength(ctx, start, end, step)]);
}

defineOp(`aten.arange.default(Scalar end, *, ${FACTORY_KW}) -> Tensor`, (ctx) => [arangeType(ctx, scalarArg(ctx, 'end'))]);
defineOp(`aten.arange.start(Scalar start, Scalar end, *, ${FACTORY_KW}) -> Tensor`, (ctx) => [
  arangeType(ctx, scalarArg(ctx, 'start'), scalarArg(ctx, 'end')),
]);
defineOp(`aten.arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ${FACTORY_KW}) -> Tensor`, (ctx) => [
  arangeType(ctx, scalarArg(ctx, 'start'), scalarArg(ctx, 'end'), scalarArg(ctx, 'step')),
]);

// ---------------------------------------------------------------------------------------
// Same-shape rearrangements
// ---------------------------------------------------------------------------------------

defineOps(['aten.triu.default(Tensor self, int diagonal=0) -> Tensor', 'aten.tril.default(Tensor self, int diagonal=0) -> Tensor'], (ctx) => {
  const self = ctx.tensor('self');
  if (self.shape.length < 2) ctx.fail(`needs a tensor of at least 2 dims, got ${fmtShape(self.shape)}`);
  return [tensorType(self.dtype, self.shape)];
});

defineOp('aten.flip.default(Tensor self, int[] dims) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  normAxes(ctx, ctx.ints('dims'), self.shape.length);
  return [tensorType(self.dtype, self.shape)];
});

defineOp('aten.roll.default(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const shifts = ctx.dims('shifts');
  const dims = ctx.ints('dims');
  if (dims.length === 0 ? shifts.length !== 1 : shifts.length !== dims.length) {
    ctx.fail(`shifts ${fmtShape(shifts)} and dims [${dims.join(', ')}] must have the same length`);
  }
  dims.forEach((d) => normAxis(ctx, d, self.shape.length));
  return [tensorType(self.dtype, self.shape)];
});

// ---------------------------------------------------------------------------------------
// Scatters of slices (functionalized in-place slice assignment: x[:, 2:4] = y)
// ---------------------------------------------------------------------------------------

defineOp(
  'aten.slice_scatter.default(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    const src = ctx.tensor('src');
    const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
    const { length } = sliceExtent(ctx, self.shape[a]!, optDim(ctx, 'start'), optDim(ctx, 'end'), staticStep(ctx));
    const expected = [...self.shape];
    expected[a] = length;
    if (src.dtype !== self.dtype) ctx.fail(`src is ${src.dtype} but self is ${self.dtype}`);
    if (src.shape.length !== expected.length) ctx.fail(`src ${fmtShape(src.shape)} must have shape ${fmtShape(expected)}`);
    src.shape.forEach((d, i) => unifyDim(ctx, d, expected[i]!, `src ${fmtShape(src.shape)} must have shape ${fmtShape(expected)}`));
    return [tensorType(self.dtype, self.shape)];
  },
);

defineOp('aten.select_scatter.default(Tensor self, Tensor src, int dim, SymInt index) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const src = ctx.tensor('src');
  const a = normAxis(ctx, ctx.int('dim'), self.shape.length);
  const expected = self.shape.filter((_, i) => i !== a);
  if (src.dtype !== self.dtype) ctx.fail(`src is ${src.dtype} but self is ${self.dtype}`);
  if (src.shape.length !== expected.length) ctx.fail(`src ${fmtShape(src.shape)} must have shape ${fmtShape(expected)}`);
  src.shape.forEach((d, i) => unifyDim(ctx, d, expected[i]!, `src ${fmtShape(src.shape)} must have shape ${fmtShape(expected)}`));
  return [tensorType(self.dtype, self.shape)];
});
