/**
 * ONNX's sequence and optional ops (lib/ir/values.ts TensorSequence, OptionalValue): only the
 * CPU interpreter computes them (lib/interpreter/ops/sequences.ts). A sequence's length and its
 * elements' sizes are the data's: an element taken out of one (SequenceAt, OptionalGetElement,
 * ConcatFromSequence) has data-dependent sizes named after the node's `key`, and its rank must
 * be known at import.
 */
import { UnsupportedOpError } from '../../errors';
import { isComplex, isDType, type DType } from '../dtype';
import {
  formatType,
  optionalType,
  sameKindAndRank,
  sequenceType,
  stringTensorType,
  tensorType,
  Value,
  type OptionalType,
  type SequenceType,
  type StringTensorType,
  type TensorType,
  type ValueType,
} from '../graph';
import { dimEquals, type Dim } from '../symbolic';
import { keyedDataDependentSymbol } from './data-dependent';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';


type Item = TensorType | StringTensorType;

function elemOf(t: Item): DType | 'string' {
  return t.kind === 'strings' ? 'string' : t.dtype;
}

function value(ctx: InferContext, name: string): ValueType {
  const a = ctx.arg(name);
  if (!(a instanceof Value)) return ctx.fail(`argument ${name} must be a value`);
  return a.type;
}

function seqArg(ctx: InferContext, name: string): SequenceType {
  const t = value(ctx, name);
  if (t.kind !== 'sequence') return ctx.fail(`argument ${name} must be a sequence, got a ${t.kind}`);
  return t;
}

function itemOf(ctx: InferContext, t: ValueType, what: string): Item {
  if (t.kind !== 'tensor' && t.kind !== 'strings') return ctx.fail(`${what} must be a tensor or string tensor, got a ${t.kind}`);
  if (t.kind === 'tensor' && isComplex(t.dtype)) complexRefused(ctx, t.dtype);
  return t;
}

// Sequences hold real tensors: complex values are lowered to real pairs before anything runs.
function complexRefused(ctx: InferContext, dtype: DType): never {
  throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): a sequence of ${dtype} tensors is not supported`);
}

/** A sequence element's type: `elem` at `rank`, each size a data-dependent symbol of `key`. */
export function elementType(ctx: InferContext, elem: DType | 'string', rank: number | null, key: string): Item {
  if (rank === null) return ctx.fail('the sequence\'s elements have no rank known at import');
  const dims: Dim[] = Array.from({ length: rank }, (_, d) => keyedDataDependentSymbol(ctx, `${key}_d${d}`, Infinity));
  return elem === 'string' ? stringTensorType(dims) : tensorType(elem, dims);
}

function position(ctx: InferContext, name: string): void {
  if (!ctx.has(name)) return;
  const p = ctx.tensor(name);
  // ONNX asks for a scalar; exporters (and ONNX's own test data) also write a one-element list.
  if ((p.dtype !== 'int64' && p.dtype !== 'int32') || p.shape.length > 1 || (p.shape.length === 1 && p.shape[0] !== 1)) ctx.fail(`${name} must be an int32 or int64 scalar, got ${p.dtype}[${p.shape.join(', ')}]`);
}

/** The rank the sequence keeps after `t` joins it: the same rank (`t`'s when the sequence is known empty), or unknown. */
function joinedRank(seq: SequenceType, t: Item): number | null {
  return seq.empty || seq.rank === t.shape.length ? t.shape.length : null;
}

function checkElem(ctx: InferContext, seq: SequenceType, t: Item, what: string): void {
  if (elemOf(t) !== seq.elem) ctx.fail(`${what} is ${elemOf(t)}, the sequence holds ${seq.elem}`);
}

defineOp('trt.sequence_empty(str elem) -> Any', (ctx) => {
  const elem = ctx.str('elem');
  if (elem !== 'string' && !isDType(elem)) ctx.fail(`elem ${JSON.stringify(elem)} is not an element type`);
  return [sequenceType(elem as DType | 'string', null, true)];
});

defineOp('trt.sequence_construct(Any[] items) -> Any', (ctx) => {
  const items = ctx.arg('items');
  if (!Array.isArray(items) || items.length === 0) return ctx.fail('items must be a non-empty list of tensors');
  const types = items.map((v, i) => itemOf(ctx, v instanceof Value ? v.type : ctx.fail(`items[${i}] must be a value`), `items[${i}]`));
  const elem = elemOf(types[0]!);
  types.forEach((t, i) => {
    if (elemOf(t) !== elem) ctx.fail(`items[${i}] is ${elemOf(t)}, items[0] is ${elem}: a sequence holds one element type`);
  });
  const rank = types.every((t) => t.shape.length === types[0]!.shape.length) ? types[0]!.shape.length : null;
  return [sequenceType(elem, rank)];
});

defineOp('trt.sequence_insert(Any seq, Any item, Tensor? position) -> Any', (ctx) => {
  const seq = seqArg(ctx, 'seq');
  const item = itemOf(ctx, value(ctx, 'item'), 'item');
  checkElem(ctx, seq, item, 'item');
  position(ctx, 'position');
  return [sequenceType(seq.elem, joinedRank(seq, item))];
});

defineOp('trt.sequence_erase(Any seq, Tensor? position) -> Any', (ctx) => {
  const seq = seqArg(ctx, 'seq');
  position(ctx, 'position');
  return [seq];
});

defineOp('trt.sequence_at(Any seq, Tensor position, str key) -> Any', (ctx): ValueType[] => {
  const seq = seqArg(ctx, 'seq');
  position(ctx, 'position');
  return [elementType(ctx, seq.elem, seq.rank, ctx.str('key'))];
});

defineOp('trt.sequence_length(Any seq) -> Tensor', (ctx) => {
  seqArg(ctx, 'seq');
  return [tensorType('int64', [])];
});

// ONNX SplitToSequence: `split` a scalar (pieces of that size, the last shorter), a list of
// sizes, or absent (pieces of size 1, squeezed away unless keepdims).
defineOp('trt.split_to_sequence(Tensor self, Tensor? split, int axis, bool keepdims) -> Any', (ctx) => {
  const self = ctx.tensor('self');
  if (self.shape.length === 0) ctx.fail('self must have rank 1 or more');
  if (isComplex(self.dtype)) complexRefused(ctx, self.dtype);
  normAxis(ctx, ctx.int('axis'), self.shape.length, 'axis');
  const split = ctx.optTensor('split');
  if (split !== null && ((split.dtype !== 'int64' && split.dtype !== 'int32') || split.shape.length > 1)) ctx.fail(`split must be an int32 or int64 scalar or list, got ${split.dtype}[${split.shape.join(', ')}]`);
  const squeezed = split === null && !ctx.bool('keepdims');
  return [sequenceType(self.dtype, self.shape.length - (squeezed ? 1 : 0))];
});

// ONNX ConcatFromSequence: the elements joined along `axis`, or stacked on a new one.
defineOp('trt.concat_from_sequence(Any seq, int axis, bool new_axis, str key) -> Any', (ctx): ValueType[] => {
  const seq = seqArg(ctx, 'seq');
  if (seq.rank === null) return ctx.fail('the sequence\'s elements have no rank known at import');
  const rank = seq.rank + (ctx.bool('new_axis') ? 1 : 0);
  normAxis(ctx, ctx.int('axis'), rank, 'axis');
  return [elementType(ctx, seq.elem, rank, ctx.str('key'))];
});

// ONNX SequenceMap: `body` run once per element; inputs are sequences (one element each run) or
// tensors (the same each run), then the values the body reads from outside (`captured`).
defineOp('trt.sequence_map(Any[] inputs, Any[] captured) -> Any[]', (ctx): ValueType[] => {
  const body = ctx.subgraph('body');
  const inputs = ctx.arg('inputs');
  const capturedArg = ctx.arg('captured');
  if (!Array.isArray(capturedArg)) return ctx.fail('captured must be a list');
  const captured = capturedArg.map((v, i) => (v instanceof Value && v.type.kind !== 'symint' ? v.type : ctx.fail(`captured[${i}] must be a value`)));
  if (!Array.isArray(inputs) || inputs.length === 0) return ctx.fail('inputs must be a non-empty list');
  const types = inputs.map((v, i) => (v instanceof Value ? v.type : ctx.fail(`inputs[${i}] must be a value`)));
  if (types[0]!.kind !== 'sequence') ctx.fail('inputs[0] must be a sequence');
  if (body.inputs.length !== types.length + captured.length) ctx.fail(`body takes ${body.inputs.length} inputs, the node gives it ${types.length + captured.length}`);
  types.forEach((t, i) => {
    const b = itemOf(ctx, body.inputs[i]!.type, `body input ${i}`);
    const given = t.kind === 'sequence' ? { elem: t.elem, rank: t.rank } : t.kind === 'tensor' || t.kind === 'strings' ? { elem: elemOf(t), rank: t.shape.length } : ctx.fail(`inputs[${i}] must be a sequence or tensor`);
    if (given.elem !== elemOf(b) || (given.rank !== null && given.rank !== b.shape.length)) {
      ctx.fail(`body input ${i} is ${elemOf(b)} of rank ${b.shape.length}, the node gives it ${given.elem}${given.rank === null ? '' : ` of rank ${given.rank}`}`);
    }
  });
  // A captured value enters the body with its own type (the importer's capture): a tensor's static dims must agree, any other kind be the same.
  captured.forEach((t, k) => {
    const b = body.inputs[types.length + k]!.type;
    const fits =
      t.kind === 'tensor'
        ? b.kind === 'tensor' && b.dtype === t.dtype && b.shape.length === t.shape.length && b.shape.every((d, j) => typeof d !== 'number' || typeof t.shape[j] !== 'number' || dimEquals(d, t.shape[j]!))
        : sameKindAndRank(b, t);
    if (!fits) ctx.fail(`body input ${types.length + k} is ${formatType(b)}, the captured value given it ${formatType(t)}`);
  });
  return body.outputs.map((v, i) => {
    const t = itemOf(ctx, v.type, `body output ${i}`);
    return sequenceType(elemOf(t), t.shape.length);
  });
});

// ONNX Optional with a value.
defineOp('trt.optional(Any value) -> Any', (ctx): ValueType[] => {
  const t = value(ctx, 'value');
  if (t.kind === 'optional' || t.kind === 'symint') return ctx.fail(`value must be a tensor or sequence, got a ${t.kind}`);
  return [optionalType(t)];
});

// ONNX Optional without a value: empty, of the type `elem`, `container` and `rank` (-1: unknown) tell.
defineOp('trt.optional_none(str elem, str container, int rank, str key) -> Any', (ctx): ValueType[] => {
  const elem = ctx.str('elem');
  if (elem !== 'string' && !isDType(elem)) ctx.fail(`elem ${JSON.stringify(elem)} is not an element type`);
  const rank = ctx.int('rank');
  const known = rank < 0 ? null : rank;
  const container = ctx.str('container');
  if (container === 'sequence') return [optionalType(sequenceType(elem as DType | 'string', known))];
  if (container !== 'tensor') ctx.fail(`container must be tensor or sequence, got ${JSON.stringify(container)}`);
  return [optionalType(elementType(ctx, elem as DType | 'string', known, ctx.str('key')))];
});

// ONNX OptionalHasElement: false for an absent input or an empty optional.
defineOp('trt.optional_has_element(Any? input) -> Tensor', (ctx) => {
  if (ctx.has('input')) value(ctx, 'input');
  return [tensorType('bool', [])];
});

// ONNX OptionalGetElement: an optional's value (an error when empty); a tensor or sequence as it is.
defineOp('trt.optional_get_element(Any input) -> Any', (ctx): ValueType[] => {
  const t = value(ctx, 'input');
  if (t.kind === 'symint') return ctx.fail('input must be an optional, tensor or sequence');
  return [t.kind === 'optional' ? (t as OptionalType).element : t];
});
