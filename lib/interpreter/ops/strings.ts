/** Interpreter implementations of lib/ir/ops/strings.ts. */
import { InternalError } from '../../errors';
import { StringTensor } from '../../ir/values';
import type { Tensor } from '../../ir/tensor';
import { labelEncode, regexFullMatch, stringConcat, stringEqual, stringNormalize, stringSplit, type CaseChange } from '../../kernels/strings';
import { defineImpl, type RuntimeArg } from '../registry';

function strings(a: RuntimeArg | undefined, name: string): StringTensor {
  if (!(a instanceof StringTensor)) throw new InternalError(`string op: ${name} is not a string tensor`);
  return a;
}

defineImpl('trt.string_concat', (a) => [stringConcat(strings(a.x, 'x'), strings(a.y, 'y'))]);
defineImpl('trt.string_equal', (a) => [stringEqual(strings(a.x, 'x'), strings(a.y, 'y'))]);
defineImpl('trt.regex_full_match', (a) => [regexFullMatch(strings(a.x, 'x'), a.pattern as string)]);
defineImpl('trt.string_split', (a) => stringSplit(strings(a.x, 'x'), (a.delimiter as string | null) ?? null, a.maxsplit as number));
defineImpl('trt.string_normalizer', (a) => [
  stringNormalize(strings(a.x, 'x'), a.case_change_action as CaseChange, a.is_case_sensitive as boolean, a.stopwords as readonly string[], a.ascii_case as boolean),
]);
defineImpl('trt.string_constant', (a) => [new StringTensor(a.shape as readonly number[], a.values as readonly string[])]);
defineImpl('trt.label_encoder', (a) => [labelEncode(a.x as Tensor | StringTensor, a.keys as Tensor | StringTensor, a.values as Tensor | StringTensor, a.default_value as Tensor | StringTensor)]);
