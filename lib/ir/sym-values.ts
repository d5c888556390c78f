/**
 * Turns symbolic dims into graph values: a symbol becomes `aten.sym_size.int` on a tensor
 * that carries it, an expression becomes `sym.*` arithmetic. Each distinct dim is built once.
 */
import { InternalError } from '../errors';
import { call } from './builder';
import type { Graph, Value } from './graph';
import { formatDim, type Dim } from './symbolic';

export interface SymbolSource {
  value: Value;
  axis: number;
}

export class SymMaterializer {
  private readonly sources = new Map<string, SymbolSource>();
  private readonly cache = new Map<string, Value>();

  constructor(private readonly graph: Graph) {}

  /** Records the tensors whose dims define symbols (the first source of each symbol wins). */
  addSources(value: Value): void {
    if (value.type.kind !== 'tensor') return;
    value.type.shape.forEach((d, axis) => {
      if (typeof d !== 'number' && d.op === 'sym' && !this.sources.has(d.name)) this.sources.set(d.name, { value, axis });
    });
  }

  /** A number for a static dim, else a SymInt value computing it. */
  arg(dim: Dim): number | Value {
    if (typeof dim === 'number') return dim;
    const key = formatDim(dim);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let value: Value;
    if (dim.op === 'sym') {
      const source = this.sources.get(dim.name);
      if (source === undefined) throw new InternalError(`no tensor carries symbol ${dim.name}, so its value cannot be read at run time`);
      value = call(this.graph, 'aten.sym_size.int', { self: source.value, dim: source.axis }, { name: `sym_size_${dim.name}` }).output;
    } else {
      value = call(this.graph, `sym.${dim.op}`, { a: this.arg(dim.a), b: this.arg(dim.b) }, { name: `sym_${dim.op}` }).output;
    }
    this.cache.set(key, value);
    return value;
  }
}
