/**
 * Einsum as other ops, for every place that meets it (ONNX's Einsum, torch.einsum in a .pt2,
 * the interpreter): each operand's repeated labels are reduced to their diagonal; two float
 * operands of static sizes are one batched matrix product (contraction()); otherwise operands
 * are laid out over every label (size-1 dims where a label is absent), multiplied, and the
 * labels missing from the output are summed away. Ellipses broadcast from the right; without "->" the
 * output is the ellipsis dims then the labels that occur once, in alphabetical order (numpy's
 * implicit mode). The ops are built through an {@link EinsumBuilder}, so the same composition
 * makes graph nodes or computes tensors.
 */
import type { DType } from './dtype';
import type { Dim } from './symbolic';
import { Tensor } from './tensor';

/** What the composition needs of the values it works on. */
export interface EinsumBuilder<V> {
  /** A call of an aten op on values and plain arguments; its one result. */
  emit(target: string, args: Record<string, unknown>): V;
  /** A constant tensor as a value. */
  constant(t: Tensor, hint: string): V;
  shape(v: V): readonly Dim[];
  dtype(v: V): DType;
  /** `v` converted to `dtype` (itself when it has it). */
  cast(v: V, dtype: DType): V;
  /** Throws: the equation or the operands are malformed (a BadModel-kind error). */
  bad(message: string): never;
  /** Throws: a valid einsum this composition cannot express (an Unsupported-kind error). */
  unsupported(message: string): never;
}

/** The equation's terms (labels per operand, '...' for the ellipsis) and the output's, when given. */
export interface EinsumEquation {
  terms: string[][];
  output: string[] | undefined;
}

function parseTerm(term: string, bad: (message: string) => never): string[] {
  const labels: string[] = [];
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith('...', i)) {
      if (labels.includes('...')) bad(`term ${JSON.stringify(term)} has two ellipses`);
      labels.push('...');
      i += 2;
    } else if (/[a-zA-Z]/.test(term[i]!)) {
      labels.push(term[i]!);
    } else {
      bad(`term ${JSON.stringify(term)} has an invalid character ${JSON.stringify(term[i])}`);
    }
  }
  return labels;
}

/** Parses `equation` (spaces ignored). */
export function parseEinsum(equation: string, bad: (message: string) => never): EinsumEquation {
  const compact = equation.replace(/\s+/g, '');
  const sides = compact.split('->');
  if (sides.length > 2) bad(`equation ${JSON.stringify(equation)} has more than one "->"`);
  const [lhs, rhs] = sides as [string, string | undefined];
  return { terms: lhs.split(',').map((t) => parseTerm(t, bad)), output: rhs === undefined ? undefined : parseTerm(rhs, bad) };
}

/** Labels with the ellipsis replaced by the last `count` of the `ellipsis` labels. */
function expandEllipsis(labels: readonly string[], ellipsis: readonly string[], count: number): string[] {
  return labels.flatMap((l) => (l === '...' ? ellipsis.slice(ellipsis.length - count) : [l]));
}

/** Every operand's labels (ellipses expanded) and the output's, checked against the operands' ranks. */
export function einsumLabels(equation: string, ranks: readonly number[], bad: (message: string) => never): { inputs: string[][]; output: string[] } {
  const { terms, output } = parseEinsum(equation, bad);
  if (terms.length !== ranks.length) bad(`equation ${JSON.stringify(equation)} has ${terms.length} terms for ${ranks.length} operands`);
  const counts = terms.map((t, i) => {
    const named = t.filter((l) => l !== '...').length;
    const rank = ranks[i]!;
    if (t.includes('...') ? rank < named : rank !== named) bad(`term ${i} has ${named} labels for an operand of rank ${rank}`);
    return rank - named;
  });
  const ellipsis = Array.from({ length: Math.max(0, ...counts) }, (_, i) => `#${i}`);
  const inputs = terms.map((t, i) => expandEllipsis(t, ellipsis, counts[i]!));
  let out: string[];
  if (output === undefined) {
    const all = inputs.flat().filter((l) => !l.startsWith('#'));
    out = [...ellipsis, ...[...new Set(all)].filter((l) => all.indexOf(l) === all.lastIndexOf(l)).sort()];
  } else {
    out = expandEllipsis(output, ellipsis, ellipsis.length);
    const known = new Set(inputs.flat());
    const missing = out.find((l) => !known.has(l));
    if (missing !== undefined) bad(`output label ${missing} is not in any operand`);
    if (new Set(out).size !== out.length) bad(`the output repeats a label: ${JSON.stringify(output.join(''))}`);
  }
  return { inputs, output: out };
}

/** The output shape: each output label's size from the operands (a size-1 dim broadcasts). */
export function einsumShape(equation: string, shapes: ReadonlyArray<readonly Dim[]>, bad: (message: string) => never): Dim[] {
  const { inputs, output } = einsumLabels(
    equation,
    shapes.map((s) => s.length),
    bad,
  );
  const sizes = new Map<string, Dim>();
  inputs.forEach((labels, i) =>
    labels.forEach((l, k) => {
      const d = shapes[i]![k]!;
      const had = sizes.get(l);
      if (had === undefined || had === 1) sizes.set(l, d);
      else if (d !== 1 && typeof had === 'number' && typeof d === 'number' && had !== d) bad(`label ${l} has sizes ${had} and ${d}`);
    }),
  );
  return output.map((l) => sizes.get(l)!);
}

/** `x` (labelled) with each repeated label reduced to its diagonal. */
function diagonals<V>(b: EinsumBuilder<V>, x: V, labels: string[]): { x: V; labels: string[] } {
  for (;;) {
    const q = labels.findIndex((l, i) => labels.indexOf(l) !== i);
    if (q < 0) return { x, labels };
    const p = labels.indexOf(labels[q]!);
    const shape = b.shape(x);
    const d = shape[p]!;
    if (typeof d !== 'number') b.unsupported(`the repeated label ${labels[q]} needs a static size`);
    const n = d as number;
    const maskShape = shape.map((_, i) => (i === p || i === q ? n : 1));
    const values = Array.from({ length: n * n }, (_, k) => (Math.floor(k / n) === k % n ? 1 : 0));
    const mask = b.constant(Tensor.from('bool', maskShape, values), 'diagonal');
    const kept = b.emit('aten.where.ScalarOther', { condition: mask, self: x, other: 0 });
    x = b.cast(b.emit('aten.sum.dim_IntList', { self: kept, dim: [q], keepdim: false }), b.dtype(x));
    labels = labels.filter((_, i) => i !== q);
  }
}

const product = (dims: readonly number[]): number => dims.reduce((a, d) => a * d, 1);

/**
 * Two operands as one batched matrix product, where every label's size is static and the
 * same in both operands (no size-1 broadcast): labels in one operand only and not in the
 * output are summed first; then A is laid out [batch, free A, contracted] and B [batch,
 * contracted, free B], both flattened to 3-D, multiplied, and the product unflattened and put
 * in the output's order. Null where it does not apply (the general composition then runs).
 * A product of [B, I, J] reads no more than the operands, where the general form materializes
 * every label at once (attention-sized einsums: B·H·I·J·D elements).
 */
function contraction<V>(b: EinsumBuilder<V>, x: { x: V; labels: string[] }, y: { x: V; labels: string[] }, output: readonly string[]): V | null {
  const sizes = new Map<string, number>();
  for (const { x: v, labels } of [x, y]) {
    const shape = b.shape(v);
    for (const [k, l] of labels.entries()) {
      const d = shape[k]!;
      if (typeof d !== 'number' || (sizes.has(l) && sizes.get(l) !== d)) return null;
      sizes.set(l, d);
    }
  }
  // Labels in one operand only and not in the output are summed away there first.
  const alone = (self: { x: V; labels: string[] }, other: { labels: string[] }): { x: V; labels: string[] } => {
    const gone = self.labels.map((l, k) => (!other.labels.includes(l) && !output.includes(l) ? k : -1)).filter((k) => k >= 0);
    if (gone.length === 0) return self;
    return { x: b.emit('aten.sum.dim_IntList', { self: self.x, dim: gone, keepdim: false }), labels: self.labels.filter((_, k) => !gone.includes(k)) };
  };
  const a = alone(x, y);
  const c = alone(y, x);
  const batch = output.filter((l) => a.labels.includes(l) && c.labels.includes(l));
  const contracted = a.labels.filter((l) => c.labels.includes(l) && !output.includes(l));
  const freeA = output.filter((l) => a.labels.includes(l) && !c.labels.includes(l));
  const freeB = output.filter((l) => c.labels.includes(l) && !a.labels.includes(l));
  const size = (ls: readonly string[]): number[] => ls.map((l) => sizes.get(l)!);
  const laid = (v: { x: V; labels: string[] }, order: readonly string[], shape3: number[]): V => {
    const permuted = order.some((l, k) => l !== v.labels[k]) ? b.emit('aten.permute.default', { self: v.x, dims: order.map((l) => v.labels.indexOf(l)) }) : v.x;
    return b.emit('aten.reshape.default', { self: permuted, shape: shape3 });
  };
  const [nb, ni, nk, nj] = [product(size(batch)), product(size(freeA)), product(size(contracted)), product(size(freeB))];
  const left = laid(a, [...batch, ...freeA, ...contracted], [nb, ni, nk]);
  const right = laid(c, [...batch, ...contracted, ...freeB], [nb, nk, nj]);
  const result = [...batch, ...freeA, ...freeB];
  const product3 = b.emit('aten.matmul.default', { self: left, other: right });
  const unflat = b.emit('aten.reshape.default', { self: product3, shape: size(result) });
  return output.some((l, k) => l !== result[k]) ? b.emit('aten.permute.default', { self: unflat, dims: output.map((l) => result.indexOf(l)) }) : unflat;
}

/** einsum(equation, operands) built from other ops; the result has the operands' dtype. */
export function composeEinsum<V>(b: EinsumBuilder<V>, equation: string, operands: readonly V[]): V {
  if (operands.length === 0) b.bad('einsum needs at least one operand');
  const dtype = b.dtype(operands[0]!);
  if (operands.some((o) => b.dtype(o) !== dtype)) b.bad('the operands must have one element type');
  const { inputs: labelled, output } = einsumLabels(
    equation,
    operands.map((o) => b.shape(o).length),
    (m) => b.bad(m),
  );
  const inputs = operands.map((x, i) => diagonals(b, x, labelled[i]!));
  if (inputs.length === 2 && (dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16' || dtype === 'float64')) {
    const viaProduct = contraction(b, inputs[0]!, inputs[1]!, output);
    if (viaProduct !== null) return viaProduct;
  }
  // Every label in a fixed order: the output's first, then the summed ones.
  const order = [...new Set([...output, ...inputs.flatMap((x) => x.labels)])];
  const laid = inputs.map(({ x, labels }) => {
    const sorted = [...labels].sort((p, q) => order.indexOf(p) - order.indexOf(q));
    let v = sorted.some((l, i) => l !== labels[i]) ? b.emit('aten.permute.default', { self: x, dims: sorted.map((l) => labels.indexOf(l)) }) : x;
    order.forEach((l, i) => {
      if (!labels.includes(l)) v = b.emit('aten.unsqueeze.default', { self: v, dim: i });
    });
    return v;
  });
  const product = laid.slice(1).reduce((acc, v) => b.emit('aten.mul.Tensor', { self: acc, other: v }), laid[0]!);
  const summed = order.map((_, i) => i).filter((i) => i >= output.length);
  // Integer sums widen to int64 (PyTorch's rule); einsum keeps the operands' type.
  return summed.length === 0 ? product : b.cast(b.emit('aten.sum.dim_IntList', { self: product, dim: summed, keepdim: false }), dtype);
}
