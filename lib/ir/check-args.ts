/**
 * Binding and checking node arguments against an op schema. Shared by the builder (which
 * rejects bad nodes as they are made) and the verifier (which re-checks whole graphs after
 * passes have rewritten them).
 */
import { isDType } from './dtype';
import { Value, type Arg } from './graph';
import type { ArgSchema, ArgType, OpSchema } from './schema';

function checkScalarBase(type: ArgType, a: Arg): string | null {
  switch (type.base) {
    case 'Tensor':
      return a instanceof Value && a.type.kind === 'tensor' ? null : 'a tensor value';
    case 'Any':
      return a instanceof Value && a.type.kind !== 'symint' ? null : 'a tensor, string tensor, sequence or optional value';
    case 'int':
      return typeof a === 'number' && Number.isInteger(a) ? null : 'an integer';
    case 'SymInt':
      return (typeof a === 'number' && Number.isInteger(a)) || (a instanceof Value && a.type.kind === 'symint')
        ? null
        : 'an integer or SymInt value';
    case 'float':
      return typeof a === 'number' || (a instanceof Value && a.type.kind === 'symint') ? null : 'a number';
    case 'Scalar':
      return typeof a === 'number' || typeof a === 'boolean' || (a instanceof Value && a.type.kind === 'symint')
        ? null
        : 'a number or boolean';
    case 'bool':
      return typeof a === 'boolean' ? null : 'a boolean';
    case 'str':
      return typeof a === 'string' ? null : 'a string';
    case 'ScalarType':
      return isDType(a) ? null : 'a dtype name';
    case 'Layout':
    case 'Device':
    case 'MemoryFormat':
      return typeof a === 'string' ? null : 'a string';
    case 'Generator':
      return 'nothing (generators are not supported)';
  }
}

function describe(a: Arg): string {
  if (a instanceof Value) return `${a.type.kind} value %${a.name}`;
  if (Array.isArray(a)) return `list of ${a.length}`;
  return JSON.stringify(a);
}

/** Null when `a` fits `type`, else what was expected and what was found. */
export function checkArg(type: ArgType, a: Arg | undefined): string | null {
  if (a === undefined) return 'missing';
  if (a === null) return type.optional ? null : `expected ${type.base}${type.list ? '[]' : ''}, got null`;
  if (type.list) {
    if (!Array.isArray(a)) {
      // ATen accepts a single value for fixed-length lists (`int[2] stride=1`).
      if (type.fixedLength !== undefined) {
        const r = checkScalarBase(type, a);
        return r === null ? null : `expected ${r} or a list of them, got ${describe(a)}`;
      }
      return `expected a list of ${type.base}, got ${describe(a)}`;
    }
    for (let i = 0; i < a.length; i++) {
      const el = a[i]!;
      if (el === null && type.elementOptional) continue;
      const r = checkScalarBase(type, el);
      if (r !== null) return `element ${i}: expected ${r}, got ${describe(el)}`;
    }
    return null;
  }
  if (Array.isArray(a)) return `expected one ${type.base}, got ${describe(a)}`;
  const r = checkScalarBase(type, a);
  return r === null ? null : `expected ${r}, got ${describe(a)}`;
}

export interface BindResult {
  args: Record<string, Arg>;
  problems: string[];
}

/**
 * Binds positional or named arguments to the schema's names, filling defaults, and checks
 * each. Problems are returned (not thrown) so callers can word the error for their context.
 */
export function bindArgs(schema: OpSchema, given: Readonly<Record<string, Arg>> | readonly Arg[]): BindResult {
  const args: Record<string, Arg> = {};
  const problems: string[] = [];
  const byName = new Map<string, ArgSchema>(schema.args.map((a) => [a.name, a]));
  if (Array.isArray(given)) {
    given.forEach((value, i) => {
      const spec = schema.args[i];
      if (spec === undefined || spec.kwargOnly) problems.push(`too many positional arguments (${given.length})`);
      else args[spec.name] = value;
    });
  } else {
    for (const [name, value] of Object.entries(given)) {
      if (!byName.has(name)) problems.push(`unknown argument ${name}`);
      else args[name] = value;
    }
  }
  for (const spec of schema.args) {
    if (!(spec.name in args)) {
      if (spec.hasDefault) args[spec.name] = spec.default as Arg;
      else if (spec.type.optional) args[spec.name] = null;
      else {
        problems.push(`argument ${spec.name} is missing`);
        continue;
      }
    }
    const r = checkArg(spec.type, args[spec.name]);
    if (r !== null) problems.push(`argument ${spec.name}: ${r}`);
  }
  return { args, problems };
}
