/**
 * Interpreter implementations of lib/ir/ops/sequences.ts. Positions and sizes that the data
 * gets wrong (a position past the end, elements that cannot be joined) are E_BAD_INPUT, as
 * onnxruntime fails the run; sequences are bounded by the run's maxTensorBytes like loops.
 */
import { BadInputError, InternalError, ResourceLimitError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import { graphValueBytes, OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../../ir/values';
import { concat, split, squeeze, unsqueeze } from '../../kernels/shape';
import { DEFAULT_CONTROL_FLOW_LIMITS, interpretValues } from '../interpret';
import { defineImpl, type ImplContext, type RuntimeArg } from '../registry';

type Item = Tensor | StringTensor;

function seq(a: RuntimeArg | undefined): TensorSequence {
  if (!(a instanceof TensorSequence)) throw new InternalError('sequence op: expected a sequence');
  return a;
}

function item(a: RuntimeArg | undefined): Item {
  if (!(a instanceof Tensor) && !(a instanceof StringTensor)) throw new InternalError('sequence op: expected a tensor');
  return a;
}

/** A position tensor's value, checked against [-n, n] (`end` true: n is allowed, an insert at the end). */
function positionOf(a: RuntimeArg | undefined, n: number, end: boolean): number {
  const p = Number((a as Tensor).toArray()[0]);
  const max = end ? n : n - 1;
  if (p < -n || p > max) throw new BadInputError(`position ${p} is outside [${-n}, ${max}] for a sequence of ${n} tensors`);
  return p < 0 ? p + n : p;
}

/** A sequence of `items`, refused past the run's maxTensorBytes (a loop that appends without end). */
function bounded(ctx: ImplContext, elem: DType | 'string', items: readonly Item[]): TensorSequence {
  const max = (ctx.limits ?? DEFAULT_CONTROL_FLOW_LIMITS).maxTensorBytes;
  const bytes = items.reduce((b, t) => b + graphValueBytes(t), 0);
  if (bytes > max) {
    throw new ResourceLimitError(`the sequence would hold ${bytes} bytes, more than maxTensorBytes (${max})`, { details: { bytes, maxTensorBytes: max } });
  }
  return new TensorSequence(elem, items);
}

defineImpl('trt.sequence_empty', (a) => [new TensorSequence(a.elem as DType | 'string', [])]);

defineImpl('trt.sequence_construct', (a, ctx) => {
  const items = (a.items as readonly RuntimeArg[]).map(item);
  return [bounded(ctx, items[0] instanceof StringTensor ? 'string' : (items[0] as Tensor).dtype, items)];
});

defineImpl('trt.sequence_insert', (a, ctx) => {
  const s = seq(a.seq);
  const at = a.position === null ? s.length : positionOf(a.position, s.length, true);
  const items = [...s.items];
  items.splice(at, 0, item(a.item));
  return [bounded(ctx, s.elem, items)];
});

defineImpl('trt.sequence_erase', (a) => {
  const s = seq(a.seq);
  if (s.length === 0) throw new BadInputError('SequenceErase of an empty sequence');
  const at = a.position === null ? s.length - 1 : positionOf(a.position, s.length, false);
  return [new TensorSequence(s.elem, s.items.filter((_, i) => i !== at))];
});

defineImpl('trt.sequence_at', (a) => {
  const s = seq(a.seq);
  return [s.items[positionOf(a.position, s.length, false)]!];
});

defineImpl('trt.sequence_length', (a) => [Tensor.scalar('int64', seq(a.seq).length)]);

defineImpl('trt.split_to_sequence', (a) => {
  const self = a.self as Tensor;
  const axis = (a.axis as number) < 0 ? (a.axis as number) + self.rank : (a.axis as number);
  const dim = self.shape[axis]!;
  let sizes: number | number[];
  if (a.split === null) sizes = 1;
  else {
    const split = a.split as Tensor;
    const values = split.toArray();
    if (split.rank === 0) {
      if (!(values[0]! > 0)) throw new BadInputError(`split ${values[0]} must be a positive size`);
      sizes = values[0]!;
    } else {
      if (values.some((v) => v < 0) || values.reduce((x, y) => x + y, 0) !== dim) throw new BadInputError(`split [${values.join(', ')}] must be non-negative sizes adding up to ${dim} (dim ${axis} of [${self.shape.join(', ')}])`);
      sizes = values;
    }
  }
  // An empty axis splits into no pieces (the kernel's chunks of an empty dim).
  let pieces = dim === 0 && typeof sizes === 'number' ? [] : split(self, sizes, axis);
  if (a.split === null && !(a.keepdims as boolean)) pieces = pieces.map((t) => squeeze(t, axis));
  return [new TensorSequence(self.dtype, pieces)];
});

defineImpl('trt.concat_from_sequence', (a) => {
  const s = seq(a.seq);
  if (s.length === 0) throw new BadInputError('ConcatFromSequence of an empty sequence: its result has no shape');
  if (s.elem === 'string') throw new BadInputError('ConcatFromSequence of string tensors is not supported');
  const items = s.items as readonly Tensor[];
  const newAxis = a.new_axis as boolean;
  const rank = items[0]!.rank + (newAxis ? 1 : 0);
  const axis = (a.axis as number) < 0 ? (a.axis as number) + rank : (a.axis as number);
  const mismatch = items.findIndex((t) => t.rank !== items[0]!.rank || t.shape.some((d, k) => (newAxis || k !== axis) && d !== items[0]!.shape[k]));
  if (mismatch >= 0) {
    throw new BadInputError(`element ${mismatch} [${items[mismatch]!.shape.join(', ')}] cannot be ${newAxis ? 'stacked with' : 'joined to'} element 0 [${items[0]!.shape.join(', ')}] along axis ${axis}`);
  }
  return [concat(newAxis ? items.map((t) => unsqueeze(t, axis)) : items, axis)];
});

defineImpl('trt.sequence_map', (a, ctx) => {
  const body = ctx.node.subgraphs?.body;
  if (body === undefined) throw new InternalError(`node ${ctx.node.name} has no body`);
  const inputs = a.inputs as readonly RuntimeArg[];
  const captured = a.captured as readonly GraphValue[];
  const n = seq(inputs[0]).length;
  inputs.forEach((x, i) => {
    if (x instanceof TensorSequence && x.length !== n) throw new BadInputError(`input ${i} is a sequence of ${x.length} tensors, input 0 of ${n}`);
  });
  const outs: Item[][] = body.outputs.map(() => []);
  for (let k = 0; k < n; k++) {
    const given = inputs.map((x) => (x instanceof TensorSequence ? x.items[k]! : item(x)));
    interpretValues(body, [...given, ...captured], { limits: ctx.limits }).forEach((r, j) => outs[j]!.push(item(r)));
  }
  return ctx.node.outputs.map((v, j) => {
    const t = v.type;
    if (t.kind !== 'sequence') throw new InternalError(`sequence_map output ${j} is not a sequence`);
    return bounded(ctx, t.elem, outs[j]!);
  });
});

defineImpl('trt.optional_none', () => [new OptionalValue(null)]);

defineImpl('trt.optional', (a) => {
  const v = a.value;
  if (v instanceof Tensor || v instanceof StringTensor || v instanceof TensorSequence) return [new OptionalValue(v)];
  throw new InternalError('optional: the value is not a tensor or sequence');
});

defineImpl('trt.optional_has_element', (a) => {
  const v = a.input;
  const has = v instanceof OptionalValue ? v.value !== null : v !== null && v !== undefined;
  return [Tensor.from('bool', [], [has ? 1 : 0])];
});

defineImpl('trt.optional_get_element', (a) => {
  const v = a.input;
  if (!(v instanceof OptionalValue)) return [v as Item | TensorSequence];
  if (v.value === null) throw new BadInputError('OptionalGetElement of an empty optional');
  return [v.value];
});
