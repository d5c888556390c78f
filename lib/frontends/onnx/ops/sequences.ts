/**
 * ONNX's sequence and optional ops (lib/ir/ops/sequences.ts), and Identity on any value. An
 * element taken out of a sequence needs its rank known at import: a sequence whose elements'
 * rank the model leaves open can be passed along, inserted into and measured, not read.
 */
import { stringTensorType, tensorType, Value, type SequenceType, type ValueType } from '../../../ir/graph';
import { OnnxTypeAttribute, type OnnxContext } from '../context';
import { defineOnnxOp, takesAnyValues } from '../registry';
import { elementFromOnnx } from '../value-proto';

function sequenceInput(ctx: OnnxContext, i: number): Value {
  const v = ctx.input(i);
  if (v.type.kind !== 'sequence') ctx.bad(`input ${i} must be a sequence, got a ${v.type.kind === 'tensor' ? `${v.type.dtype} tensor` : v.type.kind}`);
  return v;
}

/** The sequence's element rank, which reading an element out of it needs. */
function knownRank(ctx: OnnxContext, v: Value): number {
  const rank = (v.type as SequenceType).rank;
  if (rank === null) ctx.unsupported(`the elements of sequence "${v.name}" have no rank known at import (the model declares none, or its elements' ranks differ); reading one out is not supported`);
  return rank;
}

defineOnnxOp('SequenceEmpty', (ctx) => [ctx.emit('trt.sequence_empty', { elem: elementFromOnnx(ctx.attrInt('dtype', 1), 'attribute dtype') })]);

defineOnnxOp('SequenceConstruct', (ctx) => [ctx.emit('trt.sequence_construct', { items: ctx.inputs() })]);

defineOnnxOp('SequenceInsert', (ctx) => [ctx.emit('trt.sequence_insert', { seq: sequenceInput(ctx, 0), item: ctx.input(1), position: ctx.optInput(2) })]);

defineOnnxOp('SequenceErase', (ctx) => [ctx.emit('trt.sequence_erase', { seq: sequenceInput(ctx, 0), position: ctx.optInput(1) })]);

defineOnnxOp('SequenceAt', (ctx) => {
  const seq = sequenceInput(ctx, 0);
  knownRank(ctx, seq);
  return [ctx.emit('trt.sequence_at', { seq, position: ctx.input(1), key: ctx.sizeKey('seq') })];
});

defineOnnxOp('SequenceLength', (ctx) => [ctx.emit('trt.sequence_length', { seq: sequenceInput(ctx, 0) })]);

defineOnnxOp('SplitToSequence', (ctx) => [
  ctx.emit('trt.split_to_sequence', { self: ctx.input(0), split: ctx.optInput(1), axis: ctx.attrInt('axis', 0), keepdims: ctx.attrInt('keepdims', 1) !== 0 }),
]);

defineOnnxOp('ConcatFromSequence', (ctx) => {
  const seq = sequenceInput(ctx, 0);
  knownRank(ctx, seq);
  return [ctx.emit('trt.concat_from_sequence', { seq, axis: ctx.attrInt('axis'), new_axis: ctx.attrInt('new_axis', 0) !== 0, key: ctx.sizeKey('seq') })];
});

defineOnnxOp('SequenceMap', (ctx) => {
  const inputs = ctx.inputs();
  if (inputs.length === 0 || inputs[0]!.type.kind !== 'sequence') ctx.bad('input 0 must be a sequence');
  const proto = ctx.graphAttribute('body');
  // The body runs on one element of each sequence input at a time; its declared input types
  // give the elements' sizes as the body's own symbols.
  const declared = proto.input ?? [];
  if (declared.length !== inputs.length) ctx.bad(`body declares ${declared.length} inputs, the node gives it ${inputs.length}`);
  const key = ctx.sizeKey('seq');
  const elementTypes = inputs.map((v, i): ValueType => {
    if (v.type.kind !== 'sequence') return v.type;
    const tt = declared[i]!.type?.tensorType;
    const rank = tt?.shape ? (tt.shape.dim ?? []).length : v.type.rank;
    if (rank === null) return ctx.unsupported(`body input ${i} (an element of sequence input ${i}) has no rank known at import`);
    const dims = Array.from({ length: rank }, (_, d) => `${key}_in${i}_d${d}`);
    const body = dims.map((name) => ({ op: 'sym' as const, name }));
    return v.type.elem === 'string' ? stringTensorType(body) : tensorType(v.type.elem, body);
  });
  const body = ctx.subgraph('body', elementTypes);
  return ctx.call('trt.sequence_map', { inputs, captured: body.captured }, { body: body.graph }).outputs;
});

/** The empty optional of Optional's `type` attribute. */
function emptyOptional(ctx: OnnxContext): Value {
  const attr = ctx.node.attributes.get('type');
  if (!(attr instanceof OnnxTypeAttribute)) return ctx.bad('an Optional without an input needs its type attribute');
  const tp = attr.proto;
  const tensor = tp.tensorType ?? tp.sequenceType?.elemType?.tensorType;
  if (!tensor || (tp.sequenceType && !tp.sequenceType.elemType?.tensorType)) return ctx.unsupported('only optional tensors and sequences of tensors are supported');
  const elem = elementFromOnnx(tensor.elemType ?? 0, 'attribute type');
  const rank = tensor.shape ? (tensor.shape.dim ?? []).length : -1;
  if (tp.tensorType && rank < 0) ctx.unsupported('the optional tensor\'s type has no rank');
  return ctx.emit('trt.optional_none', { elem, container: tp.sequenceType ? 'sequence' : 'tensor', rank, key: ctx.sizeKey('seq') });
}

defineOnnxOp('Optional', (ctx) => {
  if (!ctx.hasInput(0)) return [emptyOptional(ctx)];
  // The input's own type is the optional's; a type attribute beside it only repeats it.
  ctx.node.attributes.get('type');
  return [ctx.emit('trt.optional', { value: ctx.input(0) })];
});

defineOnnxOp('OptionalHasElement', (ctx) => [ctx.emit('trt.optional_has_element', { input: ctx.optInput(0) })]);

defineOnnxOp('OptionalGetElement', (ctx) => {
  const v = ctx.input(0);
  // A tensor or sequence is its own element (opset 18 allows them here).
  if (v.type.kind !== 'optional') return [v];
  return [ctx.emit('trt.optional_get_element', { input: v })];
});

takesAnyValues(['Identity', 'SequenceEmpty', 'SequenceConstruct', 'SequenceInsert', 'SequenceErase', 'SequenceAt', 'SequenceLength', 'ConcatFromSequence', 'SequenceMap', 'Optional', 'OptionalHasElement', 'OptionalGetElement']);
