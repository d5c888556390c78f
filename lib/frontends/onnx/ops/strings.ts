/**
 * ONNX's string ops (lib/ir/ops/strings.ts): StringConcat, StringSplit, StringNormalizer,
 * RegexFullMatch, and string Constants. Equal on strings is in ./pointwise.ts.
 */
import { UnsupportedOpError } from '../../../errors';
import { StringTensor } from '../../../ir/values';
import { fullMatchRegex } from '../../../kernels/strings';
import type { OnnxContext } from '../context';
import { defineOnnxOp, takesAnyValues } from '../registry';

function stringInput(ctx: OnnxContext, i: number): ReturnType<OnnxContext['input']> {
  const v = ctx.input(i);
  if (v.type.kind !== 'strings') ctx.bad(`input ${i} must be a string tensor, got ${v.type.kind === 'tensor' ? v.type.dtype : v.type.kind}`);
  return v;
}

defineOnnxOp('StringConcat', (ctx) => [ctx.emit('trt.string_concat', { x: stringInput(ctx, 0), y: stringInput(ctx, 1) })]);

defineOnnxOp('StringSplit', (ctx) => {
  const x = stringInput(ctx, 0);
  // An empty delimiter is the same as none: split at runs of whitespace.
  const delimiter = ctx.attrString('delimiter', '');
  const maxsplit = ctx.node.attributes.has('maxsplit') ? ctx.attrInt('maxsplit') : -1;
  if (maxsplit < 0 && ctx.node.attributes.has('maxsplit')) ctx.bad(`maxsplit must be at least 0, got ${maxsplit}`);
  return ctx.call('trt.string_split', { x, delimiter: delimiter === '' ? null : delimiter, maxsplit, key: ctx.sizeKey('strings') }).outputs;
});

defineOnnxOp('StringNormalizer', (ctx) => {
  const x = stringInput(ctx, 0);
  const locale = ctx.attrString('locale', '');
  // Case changes and case-insensitive matching: Unicode's default mapping (JavaScript's
  // toLowerCase), what an English locale (ONNX's default, en_US) gives; the C locale's maps A–Z
  // only. Other locales' rules differ (Turkish dotted i) and are refused.
  const ascii = locale === 'C' || locale === 'POSIX';
  if (locale !== '' && !ascii && !/^en([_-]|$)/i.test(locale)) ctx.unsupported(`locale ${JSON.stringify(locale)}: only English locales, C and POSIX are supported`);
  return [
    ctx.emit('trt.string_normalizer', {
      x,
      case_change_action: ctx.attrString('case_change_action', 'NONE'),
      is_case_sensitive: ctx.attrInt('is_case_sensitive', 0) !== 0,
      stopwords: ctx.attrStrings('stopwords', []),
      ascii_case: ascii,
      key: ctx.sizeKey('strings'),
    }),
  ];
});

defineOnnxOp('RegexFullMatch', (ctx) => {
  const x = stringInput(ctx, 0);
  const pattern = ctx.attrString('pattern');
  try {
    fullMatchRegex(pattern);
  } catch (e) {
    if (e instanceof UnsupportedOpError) ctx.unsupported(e.message);
    ctx.bad((e as Error).message);
  }
  return [ctx.emit('trt.regex_full_match', { x, pattern })];
});

/** A string Constant (`value` a STRING tensor, or `value_string(s)`): a trt.string_constant node. */
export function stringConstant(ctx: OnnxContext): ReturnType<OnnxContext['input']> | null {
  const a = ctx.node.attributes;
  let t: StringTensor | null = null;
  const value = a.get('value');
  if (value instanceof StringTensor) t = value;
  else if (a.has('value_string')) t = new StringTensor([], [ctx.attrString('value_string')]);
  else if (a.has('value_strings')) t = new StringTensor([ctx.attrStrings('value_strings').length], ctx.attrStrings('value_strings'));
  if (t === null) return null;
  return ctx.stringConstant(t);
}

takesAnyValues(['StringConcat', 'StringSplit', 'StringNormalizer', 'RegexFullMatch']);
