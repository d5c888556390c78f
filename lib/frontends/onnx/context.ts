/**
 * What an ONNX mapper sees: the node (inputs, attributes), the opset, typed accessors that
 * fail with messages naming the ONNX node, and `call()` to emit IR nodes.
 */
import type { onnx } from 'onnx-proto';

import { BadModelError, UnsupportedOpError } from '../../errors';
import { call } from '../../ir/builder';
import type { DType } from '../../ir/dtype';
import { Value, type Arg, type Graph, type Node, type TensorType, type ValueType } from '../../ir/graph';
import type { SymMaterializer } from '../../ir/sym-values';
import { isStatic, type Dim } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import type { StringTensor } from '../../ir/values';
import { toNumber, type LongLike } from './long';
import { tensorFromProto, type TensorProtoOptions } from './tensor-proto';
import { ONNX_STRING, stringTensorFromProto } from './value-proto';

/**
 * A small integer tensor whose elements are known at import time, possibly as symbolic
 * expressions (the output of Shape and the arithmetic on it). Mostly rank 0 or 1; exporters
 * also pass such lists through rank-2 forms (TorchScript's pads: Reshape to [-1, 2], flip,
 * Transpose, Reshape back), which `shape` describes.
 */
export interface Known {
  readonly kind: 'known';
  /** bool for comparisons of shapes (Equal), folded like the integers. */
  readonly dtype: 'int64' | 'int32' | 'bool';
  /** True for a rank-0 tensor (one element). */
  readonly scalar: boolean;
  /** The elements, row-major. */
  readonly dims: readonly Dim[];
  /** The tensor's shape when its rank is 2 or more (absent for rank 0 and 1). */
  readonly shape?: readonly number[];
}

export function known(dims: readonly Dim[], scalar = false, dtype: Known['dtype'] = 'int64'): Known {
  return { kind: 'known', dtype, scalar, dims: [...dims] };
}

/** A known tensor of any rank; rank 0 and 1 get the plain form every folder reads. */
export function knownOfShape(dims: readonly Dim[], shape: readonly number[], dtype: Known['dtype']): Known {
  if (shape.length <= 1) return known(dims, shape.length === 0, dtype);
  return { kind: 'known', dtype, scalar: false, dims: [...dims], shape: [...shape] };
}

/** The tensor shape of a known value. */
export function shapeOfKnown(k: Known): number[] {
  return k.shape !== undefined ? [...k.shape] : k.scalar ? [] : [k.dims.length];
}

/**
 * Known lists are shape-like; bigger constants stay tensors, and a folder's result longer than
 * this is discarded for the op's mapper (import.ts): without the bound, a chain of
 * `Concat(s, s)` doubles a folded list per node, gigabytes from a file of a kilobyte.
 */
export const KNOWN_LIMIT = 64;

/** A mapper's result for one output. */
export type OnnxResult = Value | Known;

/** A graph attribute (If's branches, Loop's and Scan's body): imported by the mapper that reads it. */
export class OnnxGraphAttribute {
  constructor(readonly proto: onnx.IGraphProto) {}
}

/** A type attribute (Optional's `type`): the TypeProto, read by the mapper. */
export class OnnxTypeAttribute {
  constructor(readonly proto: onnx.ITypeProto) {}
}

export type AttrValue = number | string | Tensor | StringTensor | number[] | string[] | Tensor[] | OnnxGraphAttribute | OnnxTypeAttribute;

/** An ONNX node's view, with attributes decoded. */
export interface OnnxNodeView {
  readonly name: string;
  readonly opType: string;
  readonly domain: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes: ReadonlyMap<string, AttrValue>;
}

/** How the importer resolves and materializes values; implemented in import.ts. */
export interface ValueResolver {
  lookup(name: string): OnnxResult;
  materialize(value: OnnxResult, hint: string): Value;
  readonly sym: SymMaterializer;
  /** `proto` as a graph of its own taking `inputs`, then the outer values it reads (`captured`, its trailing inputs). */
  importSubgraph(proto: onnx.IGraphProto, inputs: readonly ValueType[], name: string, opset: number): { graph: Graph; captured: Value[] };
  /** `proto`'s outputs with its nodes imported into the current graph (its declared inputs bound to `inputs`, where given). */
  inlineSubgraph(proto: onnx.IGraphProto, opset: number, inputs?: readonly Value[]): OnnxResult[];
}

const ATTR = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, GRAPH: 5, FLOATS: 6, INTS: 7, STRINGS: 8, TENSORS: 9, TYPE_PROTO: 13 } as const;

/** Decodes an AttributeProto's value (a graph is kept undecoded for the mapper to import). */
export function decodeAttribute(attr: onnx.IAttributeProto, where: string, options: TensorProtoOptions): AttrValue {
  const name = attr.name ?? '';
  const text = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');
  switch (attr.type) {
    case ATTR.FLOAT:
      return attr.f ?? 0;
    case ATTR.INT:
      return toNumber(attr.i as number | LongLike);
    case ATTR.STRING:
      return text(attr.s);
    case ATTR.TENSOR:
      if (attr.t?.dataType === ONNX_STRING) return stringTensorFromProto(attr.t, `${where} attribute ${name}`);
      return tensorFromProto(attr.t ?? {}, `${where} attribute ${name}`, options);
    case ATTR.TYPE_PROTO:
      if (!attr.tp) throw new BadModelError(`${where}: type attribute ${name} holds no type`);
      return new OnnxTypeAttribute(attr.tp);
    case ATTR.FLOATS:
      return [...(attr.floats ?? [])];
    case ATTR.INTS:
      return (attr.ints ?? []).map((v) => toNumber(v as number | LongLike));
    case ATTR.STRINGS:
      return (attr.strings ?? []).map(text);
    case ATTR.TENSORS:
      return (attr.tensors ?? []).map((t, i) => tensorFromProto(t, `${where} attribute ${name}[${i}]`, options));
    case ATTR.GRAPH:
      if (!attr.g) throw new BadModelError(`${where}: graph attribute ${name} holds no graph`);
      return new OnnxGraphAttribute(attr.g);
    default:
      throw new BadModelError(`${where}: attribute ${name} has unsupported type ${attr.type ?? 'UNDEFINED'}`);
  }
}

/**
 * A node's attributes that remember which ones were asked for (get, has; iterating asks for
 * all): an attribute no mapper asked for is one whose meaning the import would ignore.
 */
class ReadTrackingAttributes implements ReadonlyMap<string, AttrValue> {
  readonly read = new Set<string>();
  constructor(private readonly inner: ReadonlyMap<string, AttrValue>) {}
  get size(): number {
    return this.inner.size;
  }
  get(name: string): AttrValue | undefined {
    this.read.add(name);
    return this.inner.get(name);
  }
  has(name: string): boolean {
    this.read.add(name);
    return this.inner.has(name);
  }
  private all(): void {
    for (const name of this.inner.keys()) this.read.add(name);
  }
  forEach(f: (value: AttrValue, key: string, map: ReadonlyMap<string, AttrValue>) => void): void {
    this.all();
    this.inner.forEach((v, k) => f(v, k, this));
  }
  entries(): MapIterator<[string, AttrValue]> {
    this.all();
    return this.inner.entries();
  }
  keys(): MapIterator<string> {
    this.all();
    return this.inner.keys();
  }
  values(): MapIterator<AttrValue> {
    this.all();
    return this.inner.values();
  }
  [Symbol.iterator](): MapIterator<[string, AttrValue]> {
    return this.entries();
  }
  /** The attributes nothing asked for (listing them does not mark them read). */
  unread(): string[] {
    return [...this.inner.keys()].filter((name) => !this.read.has(name));
  }
}

export class OnnxContext {
  /** `ONNX node "name" (OpType)`: how messages name this node. */
  readonly where: string;
  /** The node as the mapper sees it; its attributes remember which were read (unreadAttributes()). */
  readonly node: OnnxNodeView;
  private readonly attributes: ReadTrackingAttributes;

  constructor(
    readonly graph: Graph,
    node: OnnxNodeView,
    /** Version of the default ONNX domain the model imports. */
    readonly opset: number,
    private readonly resolver: ValueResolver,
  ) {
    this.attributes = new ReadTrackingAttributes(node.attributes);
    this.node = { ...node, attributes: this.attributes };
    this.where = `ONNX node "${node.name}" (${node.opType})`;
  }

  /** The node's attributes nothing has read so far (after mapping: attributes the import ignored). */
  unreadAttributes(): string[] {
    return this.attributes.unread();
  }

  /**
   * Says that these attributes, where given, cannot change what this node computes (the
   * caller's comment says why), so the import may leave them unread without refusing the node.
   */
  ignoreAttributes(...names: string[]): void {
    for (const name of names) this.attributes.has(name);
  }

  /** ignoreAttributes() for inputs, by index. */
  ignoreInputs(...indices: number[]): void {
    for (const i of indices) this.inputsAsked.add(i);
  }

  /** E_UNSUPPORTED_OP naming the node. */
  unsupported(reason: string): never {
    throw new UnsupportedOpError(`${this.where}: ${reason}`, { details: { node: this.node.name, op: this.node.opType, opset: this.opset } });
  }

  /**
   * E_UNSUPPORTED_OP naming the node, marked as a mapper that needs an input known at import
   * which the model computes at run time: the importer then imports the node at run time
   * instead where it can (./deferred.ts).
   */
  needsKnown(reason: string): never {
    throw new UnsupportedOpError(`${this.where}: ${reason}`, { details: { node: this.node.name, op: this.node.opType, opset: this.opset, needsKnownInput: true } });
  }

  /** E_BAD_MODEL naming the node. */
  bad(reason: string): never {
    throw new BadModelError(`${this.where}: ${reason}`, { details: { node: this.node.name, op: this.node.opType } });
  }

  /** True when input `i` is given (ONNX marks omitted optional inputs with an empty name). */
  hasInput(i: number): boolean {
    this.inputsAsked.add(i);
    return i < this.node.inputs.length && this.node.inputs[i] !== '';
  }

  /** Inputs hasInput() or raw() was asked about: a given input never asked about is one the import would ignore. */
  private readonly inputsAsked = new Set<number>();

  /** The node's given inputs nothing has asked about so far, by index (after mapping: inputs the import ignored). */
  unreadInputs(): number[] {
    return this.node.inputs.map((name, i) => (name !== '' && !this.inputsAsked.has(i) ? i : -1)).filter((i) => i >= 0);
  }

  /** Input `i` as a result (value or known list). */
  raw(i: number): OnnxResult {
    if (!this.hasInput(i)) this.bad(`input ${i} is required`);
    return this.resolver.lookup(this.node.inputs[i]!);
  }

  /** Input `i` as a graph value (known lists are materialized). */
  input(i: number): Value {
    return this.resolver.materialize(this.raw(i), this.node.inputs[i]!);
  }

  optInput(i: number): Value | null {
    return this.hasInput(i) ? this.input(i) : null;
  }

  /** Every given input as values (variadic ops). */
  inputs(): Value[] {
    return this.node.inputs.map((_, i) => i).filter((i) => this.hasInput(i)).map((i) => this.input(i));
  }

  inputType(i: number): TensorType {
    const r = this.raw(i);
    if (r instanceof Value) return r.tensorType;
    return { kind: 'tensor', dtype: r.dtype, shape: shapeOfKnown(r) };
  }

  /** Input `i` as a known rank-0 or rank-1 integer list (symbolic allowed), or null when only known at run time. */
  known(i: number): Known | null {
    const k = this.knownAnyRank(i);
    return k === null || k.shape !== undefined ? null : k;
  }

  /** Input `i` as a known integer tensor of any rank (folders that handle rank 2+), or null. */
  knownAnyRank(i: number): Known | null {
    const r = this.raw(i);
    if (!(r instanceof Value)) return r;
    const t = this.constant(i);
    if (t === null || (t.dtype !== 'int64' && t.dtype !== 'int32' && t.dtype !== 'bool') || t.size > KNOWN_LIMIT) return null;
    return knownOfShape(t.toArray(), t.shape, t.dtype);
  }

  /** Input `i`'s data when it is a constant (initializer or Constant node), else null. */
  constant(i: number): Tensor | null {
    const r = this.raw(i);
    if (r instanceof Value) return r.producer.kind === 'constant' ? r.producer.tensor! : null;
    if (!r.dims.every(isStatic)) return null;
    return Tensor.from(r.dtype, shapeOfKnown(r), r.dims as number[]);
  }

  /** Input `i` as static integers; unsupported when it is computed at run time. */
  staticInts(i: number, what: string): number[] {
    const k = this.known(i);
    if (k === null || !k.dims.every(isStatic)) this.needsKnown(`${what} (input ${i}) must be a constant`);
    return k.dims as number[];
  }

  /** Input `i` as dims (ints or SymInt values) for ops like view/expand; unsupported when data-dependent. */
  dimArgs(i: number, what: string): Array<number | Value> {
    const k = this.known(i);
    if (k === null) this.needsKnown(`${what} (input ${i}) depends on tensor data, not only on shapes; it cannot be compiled`);
    return k.dims.map((d) => this.resolver.sym.arg(d));
  }

  /** A SymInt argument for one dim. */
  dimArg(d: Dim): number | Value {
    return this.resolver.sym.arg(d);
  }

  has(name: string): boolean {
    return this.node.attributes.has(name);
  }

  attrInt(name: string, fallback?: number): number {
    const v = this.node.attributes.get(name) ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v)) return this.bad(`attribute ${name} must be an integer${fallback === undefined ? ' and is required' : ''}`);
    return v;
  }

  attrFloat(name: string, fallback?: number): number {
    const v = this.node.attributes.get(name) ?? fallback;
    if (typeof v !== 'number') return this.bad(`attribute ${name} must be a number${fallback === undefined ? ' and is required' : ''}`);
    return v;
  }

  attrString(name: string, fallback?: string): string {
    const v = this.node.attributes.get(name) ?? fallback;
    if (typeof v !== 'string') return this.bad(`attribute ${name} must be a string${fallback === undefined ? ' and is required' : ''}`);
    return v;
  }

  attrStrings(name: string, fallback?: string[]): string[] {
    const v = this.node.attributes.get(name) ?? fallback;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return this.bad(`attribute ${name} must be a list of strings${fallback === undefined ? ' and is required' : ''}`);
    return v as string[];
  }

  attrInts(name: string, fallback?: number[]): number[] {
    const v = this.node.attributes.get(name) ?? fallback;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) return this.bad(`attribute ${name} must be a list of integers${fallback === undefined ? ' and is required' : ''}`);
    return v as number[];
  }

  attrFloats(name: string, fallback?: number[]): number[] {
    const v = this.node.attributes.get(name) ?? fallback;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) return this.bad(`attribute ${name} must be a list of numbers`);
    return v as number[];
  }

  attrTensor(name: string): Tensor | null {
    const v = this.node.attributes.get(name);
    if (v === undefined) return null;
    if (!(v instanceof Tensor)) return this.bad(`attribute ${name} must be a tensor`);
    return v;
  }

  /** Emits an IR call node named after this ONNX node (with its subgraphs, for control flow). */
  call(target: string, args: Readonly<Record<string, Arg>>, subgraphs?: Readonly<Record<string, Graph>>): Node {
    return call(this.graph, target, args, {
      name: this.node.name || target.split('.')[1],
      where: this.where,
      meta: { onnxNode: this.node.name, onnxOp: this.node.opType },
      ...(subgraphs === undefined ? {} : { subgraphs }),
    });
  }

  /** Graph attribute `name`'s proto; E_BAD_MODEL when it is absent or not a graph. */
  graphAttribute(name: string): onnx.IGraphProto {
    const v = this.node.attributes.get(name);
    if (!(v instanceof OnnxGraphAttribute)) return this.bad(`attribute ${name} must be a graph${v === undefined ? ' and is required' : ''}`);
    return v.proto;
  }

  /** Graph attribute `name` imported as a graph taking `inputs` then the outer values it reads (`captured`). */
  subgraph(name: string, inputs: readonly ValueType[]): { graph: Graph; captured: Value[] } {
    return this.resolver.importSubgraph(this.graphAttribute(name), inputs, `${this.node.name || this.node.opType}_${name}`, this.opset);
  }

  /** Graph attribute `name`'s outputs, its nodes imported into this graph (its declared inputs bound to `inputs`, where given). */
  inlineSubgraph(name: string, inputs?: readonly Value[]): OnnxResult[] {
    return this.resolver.inlineSubgraph(this.graphAttribute(name), this.opset, inputs);
  }

  /** A name unique in the graph, of this node's, for the data-dependent sizes of its outputs (an IR op's `key`). */
  sizeKey(prefix: string): string {
    return this.graph.uniqueName(`${prefix}_${this.node.name || this.node.opType}`).replace(/[^A-Za-z0-9_]/g, '_');
  }

  /** Emits a call and returns its single output. */
  emit(target: string, args: Readonly<Record<string, Arg>>): Value {
    return this.call(target, args).output;
  }

  /** A constant value (e.g. a scalar operand), named after this node. */
  constantValue(tensor: Tensor, suffix = 'const'): Value {
    return this.graph.addConstant(`${this.node.name || this.node.opType}_${suffix}`, tensor);
  }

  /** A constant string tensor (trt.string_constant: the IR's constant nodes hold numeric tensors). */
  stringConstant(t: StringTensor): Value {
    return this.emit('trt.string_constant', { values: [...t.data], shape: [...t.shape] });
  }

  /** Casts `v` to `dtype` (no node when it already has that type). */
  cast(v: Value, dtype: DType): Value {
    return v.tensorType.dtype === dtype ? v : this.emit('aten._to_copy.default', { self: v, dtype });
  }
}
