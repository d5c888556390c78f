/**
 * ONNX's string ops on {@link StringTensor}s, as ONNX's reference implementation computes them
 * (onnx/reference/ops: Python's str.split, str.lower/upper, re.fullmatch).
 */
import { BadInputError, BadModelError, UnsupportedOpError } from '../errors';
import { Tensor } from '../ir/tensor';
import { StringTensor } from '../ir/values';
import { broadcastPair } from './access';

/** `f(a, b)` elementwise over broadcast string tensors. */
function zipStrings<T>(op: string, a: StringTensor, b: StringTensor, f: (x: string, y: string) => T): { shape: number[]; out: T[] } {
  let pair: ReturnType<typeof broadcastPair>;
  try {
    pair = broadcastPair(op, a.shape, b.shape);
  } catch (e) {
    throw new BadInputError((e as Error).message);
  }
  const out = new Array<T>(pair.ia.length);
  for (let i = 0; i < out.length; i++) out[i] = f(a.data[pair.ia[i]!]!, b.data[pair.ib[i]!]!);
  return { shape: pair.shape, out };
}

export function stringConcat(a: StringTensor, b: StringTensor): StringTensor {
  const { shape, out } = zipStrings('StringConcat', a, b, (x, y) => x + y);
  return new StringTensor(shape, out);
}

export function stringEqual(a: StringTensor, b: StringTensor): Tensor {
  const { shape, out } = zipStrings('Equal', a, b, (x, y) => (x === y ? 1 : 0));
  return new Tensor('bool', shape, Uint8Array.from(out));
}

/** Python's `s.split(delimiter, maxsplit)`; `delimiter` null splits at runs of whitespace (leading and trailing ignored). */
export function splitString(s: string, delimiter: string | null, maxsplit: number): string[] {
  const limit = maxsplit < 0 ? Infinity : maxsplit;
  const pieces: string[] = [];
  if (delimiter !== null) {
    let from = 0;
    while (pieces.length < limit) {
      const at = s.indexOf(delimiter, from);
      if (at < 0) break;
      pieces.push(s.slice(from, at));
      from = at + delimiter.length;
    }
    pieces.push(s.slice(from));
    return pieces;
  }
  // Python's whitespace split: runs of whitespace separate; the rest after maxsplit splits keeps
  // its inner and trailing whitespace, not its leading.
  const ws = /\s+/y;
  let i = 0;
  const skip = (): void => {
    ws.lastIndex = i;
    if (ws.test(s)) i = ws.lastIndex;
  };
  skip();
  while (i < s.length) {
    if (pieces.length === limit) {
      pieces.push(s.slice(i));
      break;
    }
    const m = /\s/.exec(s.slice(i));
    const end = m === null ? s.length : i + m.index;
    pieces.push(s.slice(i, end));
    i = end;
    skip();
  }
  return pieces;
}

/** ONNX StringSplit: the pieces of each string, padded with '' to the longest count (the last dim), and the counts. */
export function stringSplit(x: StringTensor, delimiter: string | null, maxsplit: number): [StringTensor, Tensor] {
  const split = x.data.map((s) => splitString(s, delimiter, maxsplit));
  const width = split.reduce((m, p) => Math.max(m, p.length), 0);
  const out: string[] = [];
  for (const p of split) for (let k = 0; k < width; k++) out.push(p[k] ?? '');
  const counts = new BigInt64Array(split.map((p) => BigInt(p.length)));
  return [new StringTensor([...x.shape, width], out), new Tensor('int64', x.shape, counts)];
}

export type CaseChange = 'NONE' | 'LOWER' | 'UPPER';

const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
const asciiUpper = (s: string): string => s.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 32));

/**
 * ONNX StringNormalizer: stop words dropped, then the case changed; [C] → [C'], [1, C] → [1, C'],
 * one '' when none is left. `asciiOnly`: the C locale's case mapping (A–Z only), else Unicode's
 * default one (an English locale's).
 */
export function stringNormalize(x: StringTensor, caseChange: CaseChange, caseSensitive: boolean, stopwords: readonly string[], asciiOnly = false): StringTensor {
  const lower = asciiOnly ? asciiLower : (s: string): string => s.toLowerCase();
  const upper = asciiOnly ? asciiUpper : (s: string): string => s.toUpperCase();
  // Case-insensitive matching compares lower-cased forms, as the reference does.
  const fold = (s: string): string => (caseSensitive ? s : lower(s));
  const stop = new Set(stopwords.map(fold));
  let kept = x.data.filter((s) => !stop.has(fold(s)));
  if (caseChange === 'LOWER') kept = kept.map(lower);
  else if (caseChange === 'UPPER') kept = kept.map(upper);
  if (kept.length === 0) kept = [''];
  return new StringTensor(x.rank === 2 ? [1, kept.length] : [kept.length], kept);
}

/**
 * Where a group that is itself repeated (`(…)+`, `(…)*`, `(…){2,}`) holds a repetition or an
 * alternation: the shapes that make a backtracking engine take time exponential in the input's
 * length (`(a+)+b`, `(a|a)*b`) on a string that almost matches. Null when there is none.
 */
export function nestedRepetition(pattern: string): string | null {
  const stack: Array<{ start: number; risky: boolean }> = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') stack.push({ start: i, risky: false });
    else if (c === '|' && stack.length > 0) stack.at(-1)!.risky = true;
    else if ((c === '+' || c === '*' || (c === '{' && /^\{\d+,\d*\}/.test(pattern.slice(i)))) && stack.length > 0) stack.at(-1)!.risky = true;
    else if (c === ')') {
      const group = stack.pop();
      if (group === undefined) continue;
      const next = pattern.slice(i + 1);
      const repeated = /^(?:[+*]|\{\d+,\d*\})/.test(next);
      if (repeated && group.risky) return pattern.slice(group.start, i + 1 + (/^\{[^}]*\}/.exec(next)?.[0].length ?? 1));
      // A repetition inside makes every enclosing group risky too.
      if (stack.length > 0 && (group.risky || repeated)) stack.at(-1)!.risky = true;
    }
  }
  return null;
}

/**
 * An RE2 pattern as a JavaScript regular expression matching whole strings. RE2's named groups
 * `(?P<name>…)` are rewritten; what JavaScript cannot read (or RE2 would refuse) is E_BAD_MODEL.
 * JavaScript's engine backtracks where RE2 does not, so a repeated group holding a repetition or
 * an alternation ({@link nestedRepetition}) is refused (E_UNSUPPORTED_OP): on a hostile string it
 * could run for hours where RE2 takes linear time.
 */
export function fullMatchRegex(pattern: string): RegExp {
  const nested = nestedRepetition(pattern);
  if (nested !== null) {
    throw new UnsupportedOpError(
      `pattern ${JSON.stringify(pattern)} repeats a group that itself repeats or alternates (${nested}): JavaScript's backtracking regular expressions can take exponential time on such a pattern, where RE2 takes linear time, so it is refused`,
    );
  }
  const js = pattern.replace(/\(\?P</g, '(?<');
  try {
    return new RegExp(`^(?:${js})$`, 'u');
  } catch (e) {
    throw new BadModelError(`pattern ${JSON.stringify(pattern)} is not a regular expression this runtime reads: ${(e as Error).message}`);
  }
}

export function regexFullMatch(x: StringTensor, pattern: string): Tensor {
  const re = fullMatchRegex(pattern);
  return new Tensor('bool', x.shape, Uint8Array.from(x.data, (s) => (re.test(s) ? 1 : 0)));
}

/** A lookup key for an element (one table holds keys of one kind): the string itself, a number's value (a NaN key matches NaN; -0 and 0 are one key), an int64's exact digits. */
function lookupKey(v: string | number | bigint): string | number {
  if (typeof v === 'bigint') return `${v}n`;
  return typeof v === 'number' && Number.isNaN(v) ? 'NaN' : typeof v === 'number' ? v + 0 : v;
}

function elements(t: Tensor | StringTensor): ReadonlyArray<string | number | bigint> {
  if (t instanceof StringTensor) return t.data;
  return t.data instanceof BigInt64Array || t.data instanceof BigUint64Array ? Array.from(t.data) : t.toArray();
}

/** ONNX-ML LabelEncoder: each element of x replaced by the value of the first equal key, or the default. */
export function labelEncode(x: Tensor | StringTensor, keys: Tensor | StringTensor, values: Tensor | StringTensor, fallback: Tensor | StringTensor): Tensor | StringTensor {
  const index = new Map<string | number, number>();
  elements(keys).forEach((k, i) => {
    const key = lookupKey(k);
    if (!index.has(key)) index.set(key, i);
  });
  const positions = elements(x).map((v) => index.get(lookupKey(v)) ?? -1);
  if (values instanceof StringTensor) {
    const d = (fallback as StringTensor).data[0]!;
    return new StringTensor(x.shape, positions.map((i) => (i < 0 ? d : values.data[i]!)));
  }
  const f = fallback as Tensor;
  // Element slots copied as stored: float16 bits, int64 bigints and all stay exact.
  const out = new (values.data.constructor as new (n: number) => Tensor['data'])(positions.length);
  positions.forEach((i, k) => {
    (out as unknown as Array<number | bigint>)[k] = i < 0 ? f.data[0]! : values.data[i]!;
  });
  return new Tensor(values.dtype, x.shape, out);
}
