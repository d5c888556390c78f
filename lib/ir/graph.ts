/**
 * The Graph IR: an FX-like list of nodes in topological order. Values are SSA: each is
 * produced by exactly one node (a placeholder for graph inputs, a constant for weights and
 * buffers, a call for an op) and may be used by many. Call nodes name their arguments by the
 * op's schema (lib/ir/schema.ts), so `node.args.dim` reads the same whichever frontend built it.
 */
import type { Tensor } from './tensor';
import type { DType } from './dtype';
import { formatShape, type Dim, type SymbolRange } from './symbolic';

export interface TensorType {
  readonly kind: 'tensor';
  readonly dtype: DType;
  readonly shape: readonly Dim[];
}

/** A symbolic integer (torch.export's SymInt: `sym_size`, `s0 * 2`...) with its expression. */
export interface SymIntType {
  readonly kind: 'symint';
  readonly expr: Dim;
}

/** A tensor of strings (ONNX's STRING element type). Only the interpreter computes with it. */
export interface StringTensorType {
  readonly kind: 'strings';
  readonly shape: readonly Dim[];
}

/**
 * An ONNX sequence of tensors of one element type. Its length and its elements' sizes are
 * the data's (they may differ from element to element); `rank` is the elements' rank where
 * every element has the same one known at import, else null.
 */
export interface SequenceType {
  readonly kind: 'sequence';
  readonly elem: DType | 'string';
  readonly rank: number | null;
  /**
   * Known at import to hold no element (SequenceEmpty's): it fits wherever a sequence of any
   * rank is taken, and an element joining it gives the sequence that element's rank.
   */
  readonly empty?: true;
}

/** An ONNX optional: `element`'s value, or none. */
export interface OptionalType {
  readonly kind: 'optional';
  readonly element: TensorType | StringTensorType | SequenceType;
}

export type ValueType = TensorType | SymIntType | StringTensorType | SequenceType | OptionalType;

/** Whether values of `type` are numeric tensors or SymInts: what backends and the compiler take. */
export function isNumericType(type: ValueType): type is TensorType | SymIntType {
  return type.kind === 'tensor' || type.kind === 'symint';
}

export function tensorType(dtype: DType, shape: readonly Dim[]): TensorType {
  return { kind: 'tensor', dtype, shape: Object.freeze([...shape]) };
}

export function symIntType(expr: Dim): SymIntType {
  return { kind: 'symint', expr };
}

export function stringTensorType(shape: readonly Dim[]): StringTensorType {
  return { kind: 'strings', shape: Object.freeze([...shape]) };
}

export function sequenceType(elem: DType | 'string', rank: number | null, empty = false): SequenceType {
  return empty ? { kind: 'sequence', elem, rank, empty: true } : { kind: 'sequence', elem, rank };
}

export function optionalType(element: TensorType | StringTensorType | SequenceType): OptionalType {
  return { kind: 'optional', element };
}

/** The dims a type carries (a tensor's shape, a SymInt's expression): what its symbols come from. */
export function dimsOfType(type: ValueType): readonly Dim[] {
  switch (type.kind) {
    case 'tensor':
    case 'strings':
      return type.shape;
    case 'symint':
      return [type.expr];
    case 'sequence':
      return [];
    case 'optional':
      return dimsOfType(type.element);
  }
}

/** `type` with each dim replaced by `f(dim)`. */
export function mapTypeDims<T extends ValueType>(type: T, f: (d: Dim) => Dim): T;
export function mapTypeDims(type: ValueType, f: (d: Dim) => Dim): ValueType {
  switch (type.kind) {
    case 'tensor':
      return tensorType(type.dtype, type.shape.map(f));
    case 'strings':
      return stringTensorType(type.shape.map(f));
    case 'symint':
      return symIntType(f(type.expr));
    case 'sequence':
      return type;
    case 'optional':
      return optionalType(mapTypeDims(type.element, f));
  }
}

/**
 * Whether two types agree in kind, element type and rank, sizes aside (a subgraph's may be
 * run-time symbols; a sequence known empty is any sequence of its element type).
 */
export function sameKindAndRank(a: ValueType, b: ValueType): boolean {
  switch (a.kind) {
    case 'tensor':
      return b.kind === 'tensor' && a.dtype === b.dtype && a.shape.length === b.shape.length;
    case 'strings':
      return b.kind === 'strings' && a.shape.length === b.shape.length;
    case 'sequence':
      return b.kind === 'sequence' && a.elem === b.elem && a.rank === b.rank;
    case 'optional':
      return b.kind === 'optional' && sameKindAndRank(a.element, b.element);
    case 'symint':
      return false;
  }
}

export function formatType(type: ValueType): string {
  switch (type.kind) {
    case 'tensor':
      return `${type.dtype}${formatShape(type.shape)}`;
    case 'symint':
      return `SymInt(${typeof type.expr === 'number' ? type.expr : formatShape([type.expr]).slice(1, -1)})`;
    case 'strings':
      return `string${formatShape(type.shape)}`;
    case 'sequence':
      return `seq<${type.elem}${type.rank === null ? '' : `, rank ${type.rank}`}${type.empty ? ', empty' : ''}>`;
    case 'optional':
      return `optional<${formatType(type.element)}>`;
  }
}

/** A node argument: a graph value, a literal, or a list of them (e.g. `[s0, 4]` for view). */
export type Arg = Value | number | boolean | string | null | readonly Arg[];

export type NodeKind = 'placeholder' | 'constant' | 'call';

/** Where a constant came from (torch.export's signature kinds; ONNX initializers are parameters). */
export type ConstantOrigin = 'parameter' | 'buffer' | 'constant';

export class Value {
  /** The node that produces this value and which of its outputs it is. */
  constructor(
    readonly id: number,
    public name: string,
    public type: ValueType,
    readonly producer: Node,
    readonly index: number,
  ) {}

  get tensorType(): TensorType {
    if (this.type.kind !== 'tensor') throw new TypeError(`value %${this.name} is a ${this.type.kind}, not a tensor`);
    return this.type;
  }

  toString(): string {
    return `%${this.name}`;
  }
}

export class Node {
  readonly outputs: Value[] = [];
  /** Free-form provenance for messages and layer names (e.g. `{onnxNode: 'Conv_3', onnxOp: 'Conv'}`). */
  readonly meta: Record<string, unknown> = {};
  /**
   * Graphs a control-flow call runs (`trt.if`'s branches, `trt.loop`'s and `trt.scan`'s body),
   * by role. Each is self-contained: the outer values it reads are arguments of the node and
   * inputs of the subgraph, so nothing crosses graph boundaries by reference.
   */
  subgraphs?: Readonly<Record<string, Graph>>;

  constructor(
    readonly id: number,
    public name: string,
    readonly kind: NodeKind,
    /** The op for call nodes (`aten.add.Tensor`), `placeholder` or `constant` otherwise. */
    public target: string,
    public args: Record<string, Arg>,
    /** The data of a constant node. */
    public tensor?: Tensor,
    public origin?: ConstantOrigin,
  ) {}

  get output(): Value {
    if (this.outputs.length !== 1) throw new TypeError(`node ${this.name} (${this.target}) has ${this.outputs.length} outputs`);
    return this.outputs[0]!;
  }

  /** The values this node reads, in argument order (lists flattened). */
  inputValues(): Value[] {
    const found: Value[] = [];
    const visit = (a: Arg): void => {
      if (a instanceof Value) found.push(a);
      else if (Array.isArray(a)) a.forEach(visit);
    };
    Object.values(this.args).forEach(visit);
    return found;
  }

  toString(): string {
    return `${this.name} = ${this.target}`;
  }
}

export class Graph {
  readonly nodes: Node[] = [];
  readonly inputs: Value[] = [];
  outputs: Value[] = [];
  /** Output names (frontends keep the model's names; defaults to the values' names). */
  outputNames: string[] = [];
  /** Every symbol used by a shape, with its range. */
  readonly symbols = new Map<string, SymbolRange>();
  private nextId = 0;
  private readonly usedNames = new Set<string>();

  constructor(public name = 'graph') {}

  /** A name not used yet in this graph, derived from `base`. */
  uniqueName(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_.]/g, '_') || 'v';
    let name = clean;
    for (let i = 1; this.usedNames.has(name); i++) name = `${clean}_${i}`;
    this.usedNames.add(name);
    return name;
  }

  private makeNode(name: string, kind: NodeKind, target: string, args: Record<string, Arg>): Node {
    return new Node(this.nextId++, this.uniqueName(name), kind, target, args);
  }

  private addOutput(node: Node, type: ValueType): Value {
    // The first output shares its node's name (already unique); others get a suffix.
    const name = node.outputs.length === 0 ? node.name : this.uniqueName(`${node.name}_${node.outputs.length}`);
    const value = new Value(this.nextId++, name, type, node, node.outputs.length);
    node.outputs.push(value);
    return value;
  }

  /** Declares a graph input. */
  addInput(name: string, type: ValueType): Value {
    const node = this.makeNode(name, 'placeholder', 'placeholder', {});
    this.nodes.push(node);
    const value = this.addOutput(node, type);
    this.inputs.push(value);
    return value;
  }

  /** Adds a constant (weight, buffer or literal tensor). */
  addConstant(name: string, tensor: Tensor, origin: ConstantOrigin = 'constant'): Value {
    const node = this.makeNode(name, 'constant', 'constant', {});
    node.tensor = tensor;
    node.origin = origin;
    this.nodes.push(node);
    return this.addOutput(node, tensorType(tensor.dtype, tensor.shape));
  }

  /**
   * Appends a call node with the given output types. Most code should use `call()` from
   * lib/ir/builder.ts, which checks the arguments and infers the types from the op's schema.
   */
  addCall(target: string, args: Record<string, Arg>, outputTypes: readonly ValueType[], name?: string): Node {
    const node = this.makeNode(name ?? target.split('.')[1] ?? target, 'call', target, args);
    this.nodes.push(node);
    for (const type of outputTypes) this.addOutput(node, type);
    return node;
  }

  setOutputs(values: readonly Value[], names?: readonly string[]): void {
    this.outputs = [...values];
    this.outputNames = names ? [...names] : values.map((v) => v.name);
  }

  /** Nodes that read `value`. */
  users(value: Value): Node[] {
    return this.nodes.filter((n) => n.inputValues().includes(value));
  }

  /** Makes every reader of `from` (and the graph outputs) read `to` instead. */
  replaceAllUses(from: Value, to: Value): void {
    const swap = (a: Arg): Arg => (a === from ? to : Array.isArray(a) ? a.map(swap) : a);
    for (const node of this.nodes) {
      for (const key of Object.keys(node.args)) node.args[key] = swap(node.args[key]!);
    }
    this.outputs = this.outputs.map((v) => (v === from ? to : v));
  }

  /** Removes call and constant nodes whose outputs nothing reads. Returns how many went. */
  eliminateDeadCode(): number {
    const live = new Set<Value>(this.outputs);
    const keep: Node[] = [];
    for (let i = this.nodes.length - 1; i >= 0; i--) {
      const node = this.nodes[i]!;
      const used = node.kind === 'placeholder' || node.outputs.some((v) => live.has(v));
      if (!used) continue;
      keep.push(node);
      for (const v of node.inputValues()) live.add(v);
    }
    const removed = this.nodes.length - keep.length;
    this.nodes.splice(0, this.nodes.length, ...keep.reverse());
    return removed;
  }

  /** Call nodes only. */
  calls(): Node[] {
    return this.nodes.filter((n) => n.kind === 'call');
  }
}
