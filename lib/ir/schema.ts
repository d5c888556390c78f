/**
 * The op-schema table. Ops are declared with ATen's own schema syntax, e.g.
 *
 *   defineOp('aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', inferFn)
 *
 * so a declaration can be checked against PyTorch's native_functions.yaml by eye, and the
 * .pt2 frontend can bind positional arguments by the same order torch.export used. The
 * verifier checks every node against its schema; `inferFn` gives output types (symbolic
 * shapes) from the argument types.
 */
import { InternalError } from '../errors';

/** Base argument types (the `?` and `[]` suffixes are parsed into flags). */
export type BaseType =
  | 'Tensor'
  /** A graph value of any kind: a tensor, a string tensor, a sequence or an optional (ONNX's non-tensor ops). */
  | 'Any'
  | 'int'
  | 'SymInt'
  | 'float'
  | 'bool'
  | 'str'
  | 'Scalar'
  | 'ScalarType'
  | 'Layout'
  | 'Device'
  | 'MemoryFormat'
  | 'Generator';

export interface ArgType {
  base: BaseType;
  /** `T[]` or `T[N]`. */
  list: boolean;
  /** N of `T[N]` (a single value is then accepted and repeated, as ATen does). */
  fixedLength?: number;
  /** `T?`: may be null. */
  optional: boolean;
  /** `T?[]`: list elements may be null. */
  elementOptional: boolean;
}

export interface ArgSchema {
  name: string;
  type: ArgType;
  /** Present when the schema gives a default (already parsed: numbers, booleans, null, lists, strings). */
  default?: unknown;
  hasDefault: boolean;
  kwargOnly: boolean;
}

export interface OpSchema {
  /** Full target name, e.g. `aten.add.Tensor`. */
  name: string;
  args: ArgSchema[];
  returns: ArgType[];
  /** The declaration as written. */
  signature: string;
}

const BASE_TYPES = new Set<string>([
  'Tensor',
  'Any',
  'int',
  'SymInt',
  'float',
  'bool',
  'str',
  'Scalar',
  'ScalarType',
  'Layout',
  'Device',
  'MemoryFormat',
  'Generator',
]);

/** Parses one type such as `Tensor?`, `int[2]`, `SymInt[]?`, `Tensor?[]`, `Tensor(a!)`. */
export function parseType(text: string): ArgType {
  let t = text.trim().replace(/\([a-z]!?(\s*->\s*\*)?\)/g, ''); // alias annotations: Tensor(a!), Tensor(a -> *) -> Tensor
  let optional = false;
  if (t.endsWith('?')) {
    optional = true;
    t = t.slice(0, -1);
  }
  let list = false;
  let fixedLength: number | undefined;
  const listMatch = /^(.*)\[(\d*)\]$/.exec(t);
  if (listMatch) {
    list = true;
    t = listMatch[1]!;
    if (listMatch[2]) fixedLength = Number(listMatch[2]);
  }
  let elementOptional = false;
  if (list && t.endsWith('?')) {
    elementOptional = true;
    t = t.slice(0, -1);
  }
  if (!BASE_TYPES.has(t)) throw new InternalError(`op schema: unknown type ${JSON.stringify(text)}`);
  return { base: t as BaseType, list, fixedLength, optional, elementOptional };
}

function parseDefault(text: string): unknown {
  const t = text.trim();
  if (t === 'None') return null;
  if (t === 'True') return true;
  if (t === 'False') return false;
  if (/^-?\d+$/.test(t)) return Number(t);
  if (/^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(t)) return Number(t);
  if (t.startsWith('[') && t.endsWith(']')) {
    const inner = t.slice(1, -1).trim();
    return inner === '' ? [] : inner.split(',').map(parseDefault);
  }
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t; // enum-like defaults: contiguous_format, Mean...
}

/** Splits on commas not nested in brackets or parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  const last = text.slice(start);
  if (last.trim() !== '') parts.push(last);
  return parts.map((p) => p.trim());
}

/** Parses a full declaration `name(args) -> returns`. */
export function parseSchema(signature: string): OpSchema {
  const match = /^([\w.]+)\((.*)\)\s*->\s*(.+)$/.exec(signature.trim());
  if (!match) throw new InternalError(`op schema: cannot parse ${JSON.stringify(signature)}`);
  const [, name, argText, returnText] = match;
  const args: ArgSchema[] = [];
  let kwargOnly = false;
  for (const part of splitTopLevel(argText!)) {
    if (part === '*') {
      kwargOnly = true;
      continue;
    }
    const eq = part.indexOf('=');
    const decl = eq >= 0 ? part.slice(0, eq).trim() : part;
    const space = decl.lastIndexOf(' ');
    if (space < 0) throw new InternalError(`op schema ${name}: bad argument ${JSON.stringify(part)}`);
    const type = parseType(decl.slice(0, space));
    const argName = decl.slice(space + 1).trim();
    const hasDefault = eq >= 0;
    args.push({ name: argName, type, hasDefault, default: hasDefault ? parseDefault(part.slice(eq + 1)) : undefined, kwargOnly });
  }
  let r = returnText!.trim();
  if (r.startsWith('(') && r.endsWith(')')) r = r.slice(1, -1);
  const returns = r === '()' || r === '' ? [] : splitTopLevel(r).map((x) => parseType(x.split(' ')[0]!));
  return { name: name!, args, returns, signature };
}

/** True when the returns are a variable-length list (`Tensor[]`): output count comes from inference. */
export function hasVariadicReturn(schema: OpSchema): boolean {
  return schema.returns.length === 1 && schema.returns[0]!.list;
}
