/**
 * What an op's inference rule sees: the node's bound arguments, read through typed accessors
 * that fail with a message naming the node, the op and the argument.
 */
import { BadModelError, InternalError } from '../../errors';
import type { DType } from '../dtype';
import { isDType } from '../dtype';
import { Value, type Arg, type Graph, type TensorType } from '../graph';
import { sym, type Dim, type SymbolRange } from '../symbolic';

export class InferContext {
  constructor(
    readonly target: string,
    readonly args: Readonly<Record<string, Arg>>,
    /** How to name the node in messages, e.g. `node "linear_3"` or `ONNX node "Gemm_0" (Gemm)`. */
    readonly where: string,
    /** The graph's symbol ranges (to decide clamps such as min(s0, 2048) exactly); empty when unknown. */
    readonly symbols: ReadonlyMap<string, SymbolRange> = new Map(),
    /** The node's subgraphs (control-flow ops; lib/ir/graph.ts Node.subgraphs). */
    readonly subgraphs: Readonly<Record<string, Graph>> = {},
  ) {}

  /** The subgraph of role `name`; a control-flow node without it is a bug of whoever built it. */
  subgraph(name: string): Graph {
    const g = this.subgraphs[name];
    if (g === undefined) throw new InternalError(`${this.where} (${this.target}): subgraph ${name} is missing`);
    return g;
  }

  /**
   * A symbol for a size only a run can tell (a loop's trip count, a branch's shape), declared
   * in the graph with the range [0, ∞) when the graph's symbols can be added to. The name is
   * the caller's, derived from the node's subgraphs, so inferring the node again (a pass
   * copying it) gives the same symbol. It carries the `data_dependent_` prefix of the symbols
   * that data-dependent ops declare (lib/ir/ops/data-dependent.ts), so whatever treats those
   * (a size only a run tells: engines take one only from a layer that computes it) treats
   * these alike.
   */
  runtimeSymbol(name: string): Dim {
    const clean = `data_dependent_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
    if (this.symbols instanceof Map && !this.symbols.has(clean)) this.symbols.set(clean, { min: 0, max: Infinity });
    return sym(clean);
  }

  /** Throws E_BAD_MODEL naming the node and op. */
  fail(message: string): never {
    throw new BadModelError(`${this.where} (${this.target}): ${message}`, { details: { op: this.target } });
  }

  arg(name: string): Arg {
    if (!(name in this.args)) this.fail(`argument ${name} is missing`);
    return this.args[name]!;
  }

  has(name: string): boolean {
    return this.args[name] !== undefined && this.args[name] !== null;
  }

  tensor(name: string): TensorType {
    const a = this.arg(name);
    if (!(a instanceof Value) || a.type.kind !== 'tensor') this.fail(`argument ${name} must be a tensor`);
    return a.type;
  }

  optTensor(name: string): TensorType | null {
    return this.has(name) ? this.tensor(name) : null;
  }

  tensors(name: string): TensorType[] {
    const a = this.arg(name);
    if (!Array.isArray(a)) this.fail(`argument ${name} must be a list of tensors`);
    return a.map((v, i) => {
      if (!(v instanceof Value) || v.type.kind !== 'tensor') this.fail(`argument ${name}[${i}] must be a tensor`);
      return v.type;
    });
  }

  int(name: string): number {
    const a = this.arg(name);
    if (typeof a !== 'number' || !Number.isInteger(a)) this.fail(`argument ${name} must be an integer`);
    return a;
  }

  optInt(name: string): number | null {
    return this.has(name) ? this.int(name) : null;
  }

  ints(name: string): number[] {
    const a = this.arg(name);
    const list = Array.isArray(a) ? a : [a];
    return list.map((x, i) => {
      if (typeof x !== 'number' || !Number.isInteger(x)) this.fail(`argument ${name}[${i}] must be an integer`);
      return x;
    });
  }

  /** A SymInt: an integer or a symint value's expression. */
  dim(name: string): Dim {
    return this.toDim(this.arg(name), name);
  }

  /** A SymInt[] (a single SymInt is accepted as a one-element list). */
  dims(name: string): Dim[] {
    const a = this.arg(name);
    const list = Array.isArray(a) ? a : [a];
    return list.map((x, i) => this.toDim(x, `${name}[${i}]`));
  }

  private toDim(a: Arg, label: string): Dim {
    if (typeof a === 'number' && Number.isInteger(a)) return a;
    if (a instanceof Value && a.type.kind === 'symint') return a.type.expr;
    return this.fail(`argument ${label} must be an integer or a SymInt`);
  }

  float(name: string): number {
    const a = this.arg(name);
    if (typeof a !== 'number') this.fail(`argument ${name} must be a number`);
    return a;
  }

  optFloat(name: string): number | null {
    return this.has(name) ? this.float(name) : null;
  }

  bool(name: string): boolean {
    const a = this.arg(name);
    if (typeof a !== 'boolean') this.fail(`argument ${name} must be a boolean`);
    return a;
  }

  str(name: string): string {
    const a = this.arg(name);
    if (typeof a !== 'string') this.fail(`argument ${name} must be a string`);
    return a;
  }

  optStr(name: string): string | null {
    return this.has(name) ? this.str(name) : null;
  }

  /** A ScalarType argument (null when absent). */
  dtype(name: string): DType | null {
    if (!this.has(name)) return null;
    const a = this.arg(name);
    if (!isDType(a)) this.fail(`argument ${name} must be a dtype, got ${JSON.stringify(a)}`);
    return a;
  }
}
