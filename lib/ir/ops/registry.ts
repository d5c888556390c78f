/**
 * The op table: each op's schema (ATen syntax, lib/ir/schema.ts) and its type inference.
 * Families of ops are declared in the sibling files and loaded by ./index.ts.
 */
import { InternalError } from '../../errors';
import type { ValueType } from '../graph';
import { parseSchema, type OpSchema } from '../schema';
import type { InferContext } from './infer-context';

/** Output types (with symbolic shapes) from the argument types; throws via `ctx.fail`. */
export type InferFn = (ctx: InferContext) => ValueType[];

export interface OpDefinition {
  readonly schema: OpSchema;
  readonly infer: InferFn;
}

const table = new Map<string, OpDefinition>();

/** Declares an op. The name (before the parenthesis) must be new. */
export function defineOp(signature: string, infer: InferFn): OpDefinition {
  const schema = parseSchema(signature);
  if (table.has(schema.name)) throw new InternalError(`op ${schema.name} is declared twice`);
  const def = { schema, infer };
  table.set(schema.name, def);
  return def;
}

/** Declares several ops that share one inference rule. */
export function defineOps(signatures: readonly string[], infer: InferFn): void {
  for (const s of signatures) defineOp(s, infer);
}

export function getOp(target: string): OpDefinition | undefined {
  return table.get(target);
}

/** Every declared op name, sorted. */
export function opNames(): string[] {
  return [...table.keys()].sort();
}
