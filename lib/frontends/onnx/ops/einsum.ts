/**
 * ONNX Einsum composed of IR ops: each operand's repeated labels are reduced to their
 * diagonal, operands are laid out over every label (broadcast dims where a label is absent),
 * multiplied, and the labels missing from the output are summed away. Ellipses broadcast
 * from the right; without "->" the output is the ellipsis dims then the labels that occur
 * once, in alphabetical order (numpy's implicit mode).
 */
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

/** A term's labels, '...' standing for the ellipsis. */
function parseTerm(ctx: OnnxContext, term: string): string[] {
  const labels: string[] = [];
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith('...', i)) {
      if (labels.includes('...')) ctx.bad(`term ${JSON.stringify(term)} has two ellipses`);
      labels.push('...');
      i += 2;
    } else if (/[a-zA-Z]/.test(term[i]!)) {
      labels.push(term[i]!);
    } else {
      ctx.bad(`term ${JSON.stringify(term)} has an invalid character ${JSON.stringify(term[i])}`);
    }
  }
  return labels;
}

/** Labels with the ellipsis replaced by `count` of the `ellipsis` labels, right-aligned. */
function expand(labels: readonly string[], ellipsis: readonly string[], count: number): string[] {
  return labels.flatMap((l) => (l === '...' ? ellipsis.slice(ellipsis.length - count) : [l]));
}

/** `x` (labelled) with each repeated label reduced to its diagonal. */
function diagonals(ctx: OnnxContext, x: Value, labels: string[]): { x: Value; labels: string[] } {
  for (;;) {
    const q = labels.findIndex((l, i) => labels.indexOf(l) !== i);
    if (q < 0) return { x, labels };
    const p = labels.indexOf(labels[q]!);
    const shape = x.tensorType.shape;
    const d = shape[p]!;
    if (!isStatic(d)) ctx.unsupported(`the repeated label ${labels[q]} needs a static size`);
    const n = d as number;
    const maskShape = shape.map((_, i) => (i === p || i === q ? n : 1));
    const values = Array.from({ length: n * n }, (_, k) => (Math.floor(k / n) === k % n ? 1 : 0));
    const mask = ctx.constantValue(Tensor.from('bool', maskShape, values), 'diagonal');
    const kept = ctx.emit('aten.where.ScalarOther', { condition: mask, self: x, other: 0 });
    x = ctx.cast(ctx.emit('aten.sum.dim_IntList', { self: kept, dim: [q], keepdim: false }), x.tensorType.dtype);
    labels = labels.filter((_, i) => i !== q);
  }
}

defineOnnxOp('Einsum', (ctx) => {
  const equation = ctx.attrString('equation').replace(/\s+/g, '');
  const [lhs, rhs] = equation.split('->') as [string, string | undefined];
  const operands = ctx.inputs();
  const terms = lhs.split(',').map((t) => parseTerm(ctx, t));
  if (terms.length !== operands.length) ctx.bad(`equation ${JSON.stringify(equation)} has ${terms.length} terms for ${operands.length} inputs`);
  const dtype = operands[0]!.tensorType.dtype;
  if (operands.some((o) => o.tensorType.dtype !== dtype)) ctx.bad('inputs must have one element type');
  const counts = terms.map((t, i) => {
    const named = t.filter((l) => l !== '...').length;
    const rank = operands[i]!.tensorType.shape.length;
    if (t.includes('...') ? rank < named : rank !== named) ctx.bad(`term ${i} has ${named} labels for an input of rank ${rank}`);
    return rank - named;
  });
  const ellipsis = Array.from({ length: Math.max(0, ...counts) }, (_, i) => `#${i}`);
  const inputs = operands.map((x, i) => diagonals(ctx, x, expand(terms[i]!, ellipsis, counts[i]!)));
  let output: string[];
  if (rhs === undefined) {
    const all = terms.flat().filter((l) => l !== '...');
    output = [...ellipsis, ...[...new Set(all)].filter((l) => all.indexOf(l) === all.lastIndexOf(l)).sort()];
  } else {
    output = expand(parseTerm(ctx, rhs), ellipsis, ellipsis.length);
    const known = new Set(inputs.flatMap((x) => x.labels));
    const missing = output.find((l) => !known.has(l));
    if (missing !== undefined) ctx.bad(`output label ${missing} is not in any input`);
  }
  // Every label in a fixed order: the output's first, then the summed ones.
  const order = [...new Set([...output, ...inputs.flatMap((x) => x.labels)])];
  const laid = inputs.map(({ x, labels }) => {
    const sorted = [...labels].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    let v = sorted.some((l, i) => l !== labels[i]) ? ctx.emit('aten.permute.default', { self: x, dims: sorted.map((l) => labels.indexOf(l)) }) : x;
    order.forEach((l, i) => {
      if (!labels.includes(l)) v = ctx.emit('aten.unsqueeze.default', { self: v, dim: i });
    });
    return v;
  });
  const product = laid.slice(1).reduce((acc, v) => ctx.emit('aten.mul.Tensor', { self: acc, other: v }), laid[0]!);
  const summed = order.map((_, i) => i).filter((i) => i >= output.length);
  // Integer sums widen to int64 (PyTorch's rule); ONNX keeps the input type.
  return [summed.length === 0 ? product : ctx.cast(ctx.emit('aten.sum.dim_IntList', { self: product, dim: summed, keepdim: false }), dtype)];
});
