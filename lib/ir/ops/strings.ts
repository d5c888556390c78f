/**
 * ONNX's string ops on tensors of strings (lib/ir/values.ts StringTensor): only the CPU
 * interpreter computes them (lib/interpreter/ops/strings.ts); no converter takes them, so a
 * compiled model runs them in fallback segments. Output sizes that the strings decide (how many
 * pieces a split gives, how many words a normalizer keeps) are data-dependent symbols named
 * after the node's `key`.
 */
import { stringTensorType, tensorType, Value, type StringTensorType, type ValueType } from '../graph';
import type { DType } from '../dtype';
import type { Dim } from '../symbolic';
import { keyedDataDependentSymbol } from './data-dependent';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';
import { broadcastDims } from './shape-rules';

/** Argument `name` as a string tensor's type. */
export function stringsArg(ctx: InferContext, name: string): StringTensorType {
  const a = ctx.arg(name);
  if (!(a instanceof Value) || a.type.kind !== 'strings') return ctx.fail(`argument ${name} must be a string tensor`);
  return a.type;
}

/** The value of `key`'s data-dependent size `suffix`, at most `max`. */
function dataSize(ctx: InferContext, suffix: string, max: Dim): Dim {
  return keyedDataDependentSymbol(ctx, `${ctx.str('key')}_${suffix}`, max);
}

// x + y elementwise, broadcast.
defineOp('trt.string_concat(Any x, Any y) -> Any', (ctx): ValueType[] => [stringTensorType(broadcastDims(ctx, stringsArg(ctx, 'x').shape, stringsArg(ctx, 'y').shape))]);

// Whether x and y are equal elementwise, broadcast (ONNX Equal on strings).
defineOp('trt.string_equal(Any x, Any y) -> Tensor', (ctx) => [tensorType('bool', broadcastDims(ctx, stringsArg(ctx, 'x').shape, stringsArg(ctx, 'y').shape))]);

// Whether each whole string matches `pattern` (RE2 syntax, as ONNX has it).
defineOp('trt.regex_full_match(Any x, str pattern) -> Tensor', (ctx) => {
  const x = stringsArg(ctx, 'x');
  ctx.str('pattern');
  return [tensorType('bool', x.shape)];
});

// Each string split at `delimiter` (runs of whitespace when null), at most maxsplit times (-1:
// no limit); pieces padded with '' to the longest count, which is the last dim. Also the counts.
defineOp('trt.string_split(Any x, str? delimiter, int maxsplit, str key) -> (Any, Tensor)', (ctx): ValueType[] => {
  const x = stringsArg(ctx, 'x');
  const maxsplit = ctx.int('maxsplit');
  if (maxsplit < -1) ctx.fail(`maxsplit must be -1 (no limit) or at least 0, got ${maxsplit}`);
  if (ctx.optStr('delimiter') === '') ctx.fail('delimiter must not be empty (leave it out to split at whitespace)');
  return [stringTensorType([...x.shape, dataSize(ctx, 'pieces', maxsplit >= 0 ? maxsplit + 1 : Infinity)]), tensorType('int64', x.shape)];
});

// ONNX StringNormalizer: stop words removed (case-sensitively or not), then case changed (A–Z
// only when ascii_case, the C locale's mapping; else Unicode's default);
// [C] → [C'] or [1, C] → [1, C'] (one '' when every word is removed).
defineOp('trt.string_normalizer(Any x, str case_change_action, bool is_case_sensitive, str[] stopwords, bool ascii_case, str key) -> Any', (ctx): ValueType[] => {
  const x = stringsArg(ctx, 'x');
  const action = ctx.str('case_change_action');
  if (!['NONE', 'LOWER', 'UPPER'].includes(action)) ctx.fail(`case_change_action must be NONE, LOWER or UPPER, got ${JSON.stringify(action)}`);
  ctx.bool('is_case_sensitive');
  const rank2 = x.shape.length === 2;
  if (!(x.shape.length === 1 || (rank2 && x.shape[0] === 1))) ctx.fail(`x must have shape [C] or [1, C], got rank ${x.shape.length}${rank2 ? ` [${String(x.shape[0])}, …]` : ''}`);
  const kept = dataSize(ctx, 'kept', typeof x.shape[x.shape.length - 1] === 'number' ? Math.max(1, x.shape[x.shape.length - 1] as number) : Infinity);
  return [stringTensorType(rank2 ? [1, kept] : [kept])];
});

// A string tensor written in the model (ONNX's STRING initializers and Constant values).
defineOp('trt.string_constant(str[] values, int[] shape) -> Any', (ctx): ValueType[] => {
  const shape = ctx.ints('shape');
  const values = ctx.arg('values') as readonly unknown[];
  const size = shape.reduce((a, b) => a * b, 1);
  if (shape.some((d) => d < 0) || values.length !== size) ctx.fail(`shape [${shape.join(', ')}] needs ${size} strings, got ${values.length}`);
  return [stringTensorType(shape)];
});

/** A graph value's element kind and shape: a tensor's dtype, or 'string'. */
function itemOf(ctx: InferContext, name: string): { elem: string; shape: readonly Dim[] } {
  const a = ctx.arg(name);
  if (!(a instanceof Value) || (a.type.kind !== 'tensor' && a.type.kind !== 'strings')) return ctx.fail(`argument ${name} must be a tensor or string tensor`);
  return { elem: a.type.kind === 'strings' ? 'string' : a.type.dtype, shape: a.type.shape };
}

// ONNX-ML LabelEncoder: each element of x looked up among `keys` (a 1-D list of x's element
// type) and replaced by the value at the same position (`values`, as long), or `default_value`
// (one element) where it is none of them.
defineOp('trt.label_encoder(Any x, Any keys, Any values, Any default_value) -> Any', (ctx): ValueType[] => {
  const x = itemOf(ctx, 'x');
  const keys = itemOf(ctx, 'keys');
  const values = itemOf(ctx, 'values');
  const fallback = itemOf(ctx, 'default_value');
  if (keys.shape.length !== 1 || values.shape.length !== 1) ctx.fail('keys and values must be 1-D');
  if (typeof keys.shape[0] === 'number' && typeof values.shape[0] === 'number' && keys.shape[0] !== values.shape[0]) ctx.fail(`${keys.shape[0]} keys and ${values.shape[0]} values: they map one to one`);
  if (keys.elem !== x.elem) ctx.fail(`the keys are ${keys.elem}, the input ${x.elem}`);
  if (fallback.elem !== values.elem || fallback.shape.some((d) => d !== 1)) ctx.fail(`the default must be one ${values.elem} element`);
  return [values.elem === 'string' ? stringTensorType(x.shape) : tensorType(values.elem as DType, x.shape)];
});
