/**
 * Graph serialization: a {@link Graph} as plain JSON data plus one binary blob of constant
 * data, and back. Compiled programs keep their fallback segments (sub-graphs the CPU
 * interpreter runs) this way, both to send them to a worker thread and to save them in a
 * program file. Deserialized data comes from files, so it is validated throughout: every
 * problem is an `E_BAD_MODEL` error that names what is wrong.
 *
 * ## Format, version 2
 *
 * `serializeGraph` returns `{ json, weights }`. `json` (a {@link SerializedGraph}) holds only
 * JSON data (objects, arrays, strings, finite numbers, booleans, null), so `JSON.stringify`
 * and `JSON.parse` give it back unchanged:
 *
 * ```text
 * {
 *   version: 1,
 *   name: string,                         // Graph.name
 *   symbols: [{ name, min, max }],        // Graph.symbols, in order; min/max are a
 *                                         // SerializedBound: a finite number, or the
 *                                         // strings "Infinity" / "-Infinity"
 *   nodes: [ node ],                      // Graph.nodes, in order
 *   inputs: [ valueId ],                  // Graph.inputs (placeholder values)
 *   outputs: [ valueId ],                 // Graph.outputs
 *   outputNames: [ string ],              // Graph.outputNames
 * }
 * node = { kind: "placeholder", name, outputs: [value], meta? }
 *      | { kind: "constant", name, constant: { dtype, shape, origin, offset, byteLength },
 *          outputs: [value], meta? }
 *      | { kind: "call", name, target, args: { argName: arg }, outputs: [value...], meta?,
 *          subgraphs?: { role: graph } }     // control-flow ops (Node.subgraphs): graphs of this
 *                                         // same form, their constants in the same weights
 * value = { name, type }                  // one per node output, in output order
 * type  = { kind: "tensor", dtype, shape: [dim] } | { kind: "symint", expr: dim }
 * dim   = integer | { op: "sym", name } | { op: "add"|"sub"|"mul"|"floordiv"|"mod"|"max"|"min", a: dim, b: dim }
 * arg   = { value: valueId }              // a graph value
 *       | number                          // a finite number other than -0, exactly as in memory
 *                                         // (also beyond 2^53: a double survives JSON)
 *       | { $number: "Infinity" | "-Infinity" | "NaN" | "-0" }   // lib/io/json-blobs.ts's encoding
 *       | string | boolean | null | [arg...]
 * meta  = the node's meta entries whose values are JSON data (others are left out)
 * ```
 *
 * Version 1 wrote `{ number: ... }` for the special numbers; it is still read. Version 2 uses
 * the one encoding of lib/io/json-blobs.ts, shared with engines and program files.
 *
 * Value ids are implicit: values are numbered from 0 in the order they are defined, i.e. node
 * by node and, within a node, output by output. An argument may only name a value defined by
 * an earlier node.
 *
 * A constant's data is `byteLength` bytes at `offset` in `weights`: the tensor's storage
 * (lib/ir/tensor.ts: float16 as raw bits, bool as 0/1 bytes, int64 as 64-bit integers, complex
 * interleaved) in the host byte order, little-endian on every platform tensorrt-node
 * supports. Offsets are multiples of 8, so when `weights` itself starts 8-byte aligned the
 * deserialized constants view it without copying. Constant nodes that share one Tensor object
 * share one range of `weights` (distinct tensors never share an offset, even empty ones), and
 * constants with the same dtype, shape, offset and byteLength come back sharing one Tensor.
 *
 * ## One buffer
 *
 * `serializeGraphToBuffer` packs both parts into one Uint8Array (whose ArrayBuffer it owns
 * entirely, ready for `postMessage(bytes.buffer, [bytes.buffer])`), the container of
 * lib/io/json-blobs.ts:
 *
 * ```text
 * offset 0   8 bytes   magic "TRTNGRAF" (ASCII)
 *        8   uint32 LE buffer version (1)
 *       12   uint32 LE J, the byte length of the JSON text
 *       16   uint64 LE W, the byte length of the weights
 *       24   J bytes   JSON.stringify(json), UTF-8
 *            zero padding to a multiple of 8
 *            W bytes   weights
 * ```
 */
import { BadModelError, InternalError, InvalidArgumentError } from '../errors';
import {
  BlobTable,
  CodecError,
  decodeNumber,
  defineEntry,
  encodeBound,
  encodeNumber,
  MagicError,
  packContainer,
  specialNumber,
  unpackContainer,
  type EncodedBound,
  type SpecialNumber,
} from '../io/json-blobs';
import { Tensor } from './tensor';
import { dtypeInfo, isDType, type DType } from './dtype';
import { Graph, optionalType, sequenceType, stringTensorType, symIntType, tensorType, Value, type Arg, type ConstantOrigin, type Node, type NodeKind, type ValueType } from './graph';
import { getOp } from './ops';
import { describeJson, JsonReader } from './json-reader';
import type { Dim, SymOp } from './symbolic';
import { verifyGraph } from './verify';

/** The version of the JSON format written by {@link serializeGraph}. */
export const GRAPH_FORMAT_VERSION = 2;
/** The JSON format versions {@link deserializeGraph} reads (1: special numbers as `{number}`). */
const READ_VERSIONS: readonly number[] = [1, 2];
/** The version of the one-buffer container written by {@link serializeGraphToBuffer}. */
export const GRAPH_BUFFER_VERSION = 1;
export const GRAPH_BUFFER_MAGIC = 'TRTNGRAF';

// ---------------------------------------------------------------------------------------
// The JSON types

/** JSON data (what `JSON.parse` can return). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type { SpecialNumber } from '../io/json-blobs';

/** A symbol range bound: a finite number, or "Infinity" / "-Infinity". */
export type SerializedBound = EncodedBound;

export type SerializedDim = number | { op: 'sym'; name: string } | { op: SymOp; a: SerializedDim; b: SerializedDim };

export type SerializedType =
  | { kind: 'tensor'; dtype: DType; shape: SerializedDim[] }
  | { kind: 'symint'; expr: SerializedDim }
  | { kind: 'strings'; shape: SerializedDim[] }
  | { kind: 'sequence'; elem: DType | 'string'; rank: number | null; empty?: true }
  | { kind: 'optional'; element: SerializedType };

export type SerializedArg = null | boolean | number | string | { value: number } | { $number: SpecialNumber } | SerializedArg[];

export interface SerializedValue {
  name: string;
  type: SerializedType;
}

export interface SerializedConstant {
  dtype: DType;
  shape: number[];
  origin: ConstantOrigin;
  /** Byte offset of the data in the weights blob (a multiple of 8). */
  offset: number;
  byteLength: number;
}

interface SerializedNodeBase {
  name: string;
  outputs: SerializedValue[];
  /** JSON-able meta entries; absent when there are none. */
  meta?: Record<string, JsonValue>;
}

export interface SerializedPlaceholderNode extends SerializedNodeBase {
  kind: 'placeholder';
}

export interface SerializedConstantNode extends SerializedNodeBase {
  kind: 'constant';
  constant: SerializedConstant;
}

export interface SerializedCallNode extends SerializedNodeBase {
  kind: 'call';
  target: string;
  args: Record<string, SerializedArg>;
  /** A control-flow node's graphs by role; absent for other nodes. */
  subgraphs?: Record<string, SerializedGraph>;
}

export type SerializedNode = SerializedPlaceholderNode | SerializedConstantNode | SerializedCallNode;

export interface SerializedGraph {
  version: typeof GRAPH_FORMAT_VERSION;
  name: string;
  symbols: { name: string; min: SerializedBound; max: SerializedBound }[];
  nodes: SerializedNode[];
  inputs: number[];
  outputs: number[];
  outputNames: string[];
}

// ---------------------------------------------------------------------------------------
// Writing

const ORIGINS: readonly ConstantOrigin[] = ['parameter', 'buffer', 'constant'];
const NODE_KINDS: readonly NodeKind[] = ['placeholder', 'constant', 'call'];
/** How deep lists, dims and meta may nest (deeper input is rejected, not overflowed). */
const MAX_DEPTH = 500;
/** How deep subgraphs may nest (a loop in a branch in a loop...); deeper files are refused. */
const MAX_GRAPH_DEPTH = 32;

/** A deep copy of `v` when it is JSON data that JSON gives back exactly, else undefined. */
function jsonCopy(v: unknown, depth = 0): JsonValue | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return specialNumber(v) === undefined ? v : undefined;
  if (Array.isArray(v)) {
    const out: JsonValue[] = [];
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return undefined;
      const c = jsonCopy(v[i], depth + 1);
      if (c === undefined) return undefined;
      out.push(c);
    }
    return out;
  }
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v)) {
      const c = jsonCopy(x, depth + 1);
      if (c === undefined) return undefined;
      defineEntry(out, k, c);
    }
    return out;
  }
  return undefined;
}

/** A dim as serialized (SerializedDim); `bad` makes the error for a non-integer dim, which no valid graph holds. */
export function serializeDim(d: Dim, bad: (dim: number) => Error): SerializedDim {
  if (typeof d === 'number') {
    if (!Number.isInteger(d)) throw bad(d);
    return d;
  }
  if (d.op === 'sym') return { op: 'sym', name: d.name };
  return { op: d.op, a: serializeDim(d.a, bad), b: serializeDim(d.b, bad) };
}

const writeDim = (d: Dim, where: string): SerializedDim => serializeDim(d, (x) => new InternalError(`serializeGraph: ${where} has the non-integer dim ${x}`));

function writeType(t: ValueType, where: string): SerializedType {
  switch (t.kind) {
    case 'tensor':
      return { kind: 'tensor', dtype: t.dtype, shape: t.shape.map((d) => writeDim(d, where)) };
    case 'symint':
      return { kind: 'symint', expr: writeDim(t.expr, where) };
    case 'strings':
      return { kind: 'strings', shape: t.shape.map((d) => writeDim(d, where)) };
    case 'sequence':
      return t.empty ? { kind: 'sequence', elem: t.elem, rank: t.rank, empty: true } : { kind: 'sequence', elem: t.elem, rank: t.rank };
    case 'optional':
      return { kind: 'optional', element: writeType(t.element, where) };
  }
}

function writeBound(x: number, where: string): SerializedBound {
  const b = encodeBound(x);
  if (b === undefined) throw new InternalError(`serializeGraph: ${where} is ${x}`);
  return b;
}

interface Plan {
  json: SerializedGraph;
  /** Each distinct tensor's bytes, at aligned offsets. */
  blobs: BlobTable<Tensor>;
}

function plan(graph: Graph): Plan {
  const blobs = new BlobTable<Tensor>();
  return { json: planGraph(graph, blobs), blobs };
}

function planGraph(graph: Graph, blobs: BlobTable<Tensor>): SerializedGraph {
  const ids = new Map<Value, number>();

  const writeArg = (a: Arg, where: string): SerializedArg => {
    if (a instanceof Value) {
      const id = ids.get(a);
      if (id === undefined) throw new InternalError(`serializeGraph: ${where} reads %${a.name}, which no earlier node of the graph defines`);
      return { value: id };
    }
    if (Array.isArray(a)) return (a as readonly Arg[]).map((x) => writeArg(x, where));
    if (typeof a === 'number') return encodeNumber(a);
    if (a === null || typeof a === 'string' || typeof a === 'boolean') return a;
    throw new InternalError(`serializeGraph: ${where} is not a graph argument (${a === undefined ? 'undefined' : typeof a})`);
  };

  const nodes = graph.nodes.map((node): SerializedNode => {
    const where = `node ${node.name}`;
    let base: SerializedNode;
    if (node.kind === 'call') {
      const args: Record<string, SerializedArg> = {};
      for (const [k, a] of Object.entries(node.args)) defineEntry(args, k, writeArg(a, `${where} argument ${k}`));
      base = { kind: 'call', name: node.name, target: node.target, args, outputs: [] };
      if (node.subgraphs !== undefined) {
        const subgraphs: Record<string, SerializedGraph> = {};
        for (const [role, sub] of Object.entries(node.subgraphs)) defineEntry(subgraphs, role, planGraph(sub, blobs));
        base.subgraphs = subgraphs;
      }
    } else if (node.kind === 'constant') {
      const t = node.tensor;
      if (t === undefined) throw new InternalError(`serializeGraph: constant ${where} has no data`);
      // An empty tensor still takes a slot, so distinct tensors never share an offset.
      const offset = blobs.add(t, t.data, true);
      const constant: SerializedConstant = {
        dtype: t.dtype,
        shape: [...t.shape],
        origin: node.origin ?? 'constant',
        offset,
        byteLength: t.data.byteLength,
      };
      base = { kind: 'constant', name: node.name, constant, outputs: [] };
    } else {
      base = { kind: 'placeholder', name: node.name, outputs: [] };
    }
    for (const v of node.outputs) {
      base.outputs.push({ name: v.name, type: writeType(v.type, `value %${v.name}`) });
      ids.set(v, ids.size);
    }
    const meta: Record<string, JsonValue> = {};
    let hasMeta = false;
    for (const [k, v] of Object.entries(node.meta)) {
      const c = jsonCopy(v);
      if (c === undefined) continue;
      defineEntry(meta, k, c);
      hasMeta = true;
    }
    if (hasMeta) base.meta = meta;
    return base;
  });

  const idOf = (v: Value, where: string): number => {
    const id = ids.get(v);
    if (id === undefined) throw new InternalError(`serializeGraph: ${where} %${v.name} is not defined by any node of the graph`);
    return id;
  };
  const json: SerializedGraph = {
    version: GRAPH_FORMAT_VERSION,
    name: graph.name,
    symbols: [...graph.symbols].map(([name, r]) => ({
      name,
      min: writeBound(r.min, `symbol ${name}'s minimum`),
      max: writeBound(r.max, `symbol ${name}'s maximum`),
    })),
    nodes,
    inputs: graph.inputs.map((v) => idOf(v, 'graph input')),
    outputs: graph.outputs.map((v) => idOf(v, 'graph output')),
    outputNames: [...graph.outputNames],
  };
  return json;
}

/**
 * The graph as JSON data and its constants' bytes (see the format at the top of this file).
 * Meta entries that are not JSON data are left out. An inconsistent graph (a node reading a
 * value no earlier node defines, a constant without data...) is an `E_INTERNAL` error.
 */
export function serializeGraph(graph: Graph): { json: SerializedGraph; weights: Uint8Array } {
  const p = plan(graph);
  return { json: p.json, weights: p.blobs.toBytes() };
}

/** The graph in one buffer (the layout at the top of this file), for transfer to a worker. */
export function serializeGraphToBuffer(graph: Graph): Uint8Array<ArrayBuffer> {
  const p = plan(graph);
  return packContainer(GRAPH_BUFFER_MAGIC, GRAPH_BUFFER_VERSION, p.json, p.blobs);
}

// ---------------------------------------------------------------------------------------
// Reading

class Reader extends JsonReader {
  constructor(label = 'serialized graph') {
    super(label, { maxDepth: MAX_DEPTH, quoteLength: 40, strict: false });
  }

  fail(message: string): never {
    throw new BadModelError(`${this.label}: ${message}`);
  }

  type(x: unknown, what: string): ValueType {
    const t = this.object(x, what);
    if (t.kind === 'tensor') {
      if (!isDType(t.dtype)) this.fail(`${what} has the unknown dtype ${describe(t.dtype)}`);
      return tensorType(t.dtype, this.array(t.shape, `${what}'s shape`).map((d) => this.dim(d, what)));
    }
    if (t.kind === 'symint') return symIntType(this.dim(t.expr, what));
    if (t.kind === 'strings') return stringTensorType(this.array(t.shape, `${what}'s shape`).map((d) => this.dim(d, what)));
    if (t.kind === 'sequence') {
      const elem = t.elem;
      if (elem !== 'string' && !isDType(elem)) return this.fail(`${what} has the unknown element type ${describe(elem)}`);
      const rank = t.rank === null ? null : this.index(t.rank, `${what}'s rank`);
      if (rank !== null && rank > 64) this.fail(`${what}'s rank ${rank} is more than 64`);
      return sequenceType(elem, rank, t.empty === true);
    }
    if (t.kind === 'optional') {
      const element = this.type(t.element, `${what}'s element`);
      if (element.kind !== 'tensor' && element.kind !== 'strings' && element.kind !== 'sequence') this.fail(`${what} holds a ${element.kind}, not a tensor or sequence`);
      return optionalType(element);
    }
    return this.fail(`${what} has the unknown kind ${describe(t.kind)}`);
  }
}

const describe = (x: unknown): string => describeJson(x, 40);


/**
 * Rebuilds a graph from {@link serializeGraph}'s output. Constants view `weights` without
 * copying where their offset is aligned for their element type (copied otherwise). `json` may
 * come straight from `JSON.parse` of a file: it is validated, and anything wrong (an unknown
 * version or op, a reference to a missing value, data outside `weights`, a dtype, shape and
 * byte length that disagree, a graph the verifier rejects) is an `E_BAD_MODEL` error naming it.
 */
export function deserializeGraph(json: unknown, weights: Uint8Array): Graph {
  if (!(weights instanceof Uint8Array)) throw new InvalidArgumentError('deserializeGraph: weights must be a Uint8Array');
  const graph = readGraph(json, weights, 0, 'serialized graph');
  try {
    verifyGraph(graph, 'serialized graph');
  } catch (error) {
    if (error instanceof InternalError) throw new BadModelError(error.message, { cause: error, details: error.details });
    throw error;
  }
  return graph;
}

/** One graph of a serialized graph (the whole, or a control-flow node's subgraph at `depth`). */
function readGraph(json: unknown, weights: Uint8Array, depth: number, label: string): Graph {
  const r: Reader = new Reader(label);
  const g = r.object(json, 'the serialized graph');
  if (g.version === undefined) r.fail('no format version (not a serialized graph?)');
  if (!READ_VERSIONS.includes(g.version as number)) {
    r.fail(`format version ${describe(g.version)} is not supported (this tensorrt-node reads versions ${READ_VERSIONS.join(' and ')})`);
  }
  const numberTag = g.version === 1 ? 'number' : '$number';
  const name = r.string(g.name, 'the graph name');
  r.label = `${label} "${name}"`;
  const graph = new Graph(name);

  for (const [i, s] of r.array(g.symbols, 'symbols').entries()) {
    const o = r.object(s, `symbol ${i}`);
    const sname = r.string(o.name, `symbol ${i}'s name`);
    if (graph.symbols.has(sname)) r.fail(`symbol ${sname} is declared twice`);
    graph.symbols.set(sname, { min: r.bound(o.min, `symbol ${sname}'s minimum`), max: r.bound(o.max, `symbol ${sname}'s maximum`) });
  }

  const values: Value[] = [];
  const tensors = new Map<string, Tensor>();
  /** Makes sure `name` is reserved in the graph, so later uniqueName() calls avoid it. */
  const reserve = (got: string, wanted: string): void => {
    if (got !== wanted) graph.uniqueName(wanted);
  };

  const readArg = (x: unknown, where: string, depth: number): Arg => {
    if (depth > MAX_DEPTH) r.fail(`${where} nests too deeply`);
    if (x === null || typeof x === 'boolean' || typeof x === 'string') return x;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) r.fail(`${where} is ${x}, which JSON cannot hold`);
      return x;
    }
    if (Array.isArray(x)) return x.map((a) => readArg(a, where, depth + 1));
    const o = r.object(x, where);
    if (Object.hasOwn(o, 'value')) {
      const id = o.value;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0 || id >= values.length) {
        r.fail(`${where} reads value ${describe(id)}, which no earlier node defines (${values.length} values are defined before it)`);
      }
      return values[id]!;
    }
    if (Object.hasOwn(o, numberTag)) {
      try {
        return decodeNumber(o[numberTag]);
      } catch (e) {
        if (e instanceof CodecError) r.fail(`${where} is ${e.message}`);
        throw e;
      }
    }
    return r.fail(`${where} is an object that is neither {value} nor {${numberTag}}`);
  };

  const readConstant = (x: unknown, where: string): { tensor: Tensor; origin: ConstantOrigin } => {
    const c = r.object(x, `${where}'s constant`);
    if (!isDType(c.dtype)) r.fail(`${where}: unknown dtype ${describe(c.dtype)}`);
    const dtype = c.dtype;
    if (!ORIGINS.includes(c.origin as ConstantOrigin)) r.fail(`${where}: unknown origin ${describe(c.origin)}`);
    const origin = c.origin as ConstantOrigin;
    const shape = r.array(c.shape, `${where}'s shape`).map((d) => r.index(d, `${where}: a dim of its shape`));
    const offset = r.index(c.offset, `${where}'s offset`);
    const byteLength = r.index(c.byteLength, `${where}'s byteLength`);
    const info = dtypeInfo(dtype);
    const size = shape.reduce((a, b) => a * b, 1);
    if (size * info.itemBytes !== byteLength) {
      r.fail(`${where}: a ${dtype}[${shape.join(', ')}] constant needs ${size * info.itemBytes} bytes, its byteLength says ${byteLength}`);
    }
    if (offset + byteLength > weights.byteLength) {
      r.fail(`${where}: its data (bytes ${offset} to ${offset + byteLength}) lies past the end of the weights (${weights.byteLength} bytes)`);
    }
    const key = `${dtype}:${shape.join(',')}:${offset}:${byteLength}`;
    let tensor = tensors.get(key);
    if (tensor === undefined) {
      const start = weights.byteOffset + offset;
      const length = size * info.lanes;
      const data =
        start % info.storage.BYTES_PER_ELEMENT === 0
          ? new info.storage(weights.buffer as ArrayBuffer, start, length)
          : new info.storage(weights.slice(offset, offset + byteLength).buffer, 0, length);
      tensor = new Tensor(dtype, shape, data);
      tensors.set(key, tensor);
    }
    return { tensor, origin };
  };

  for (const [i, x] of r.array(g.nodes, 'nodes').entries()) {
    const n = r.object(x, `node ${i}`);
    const nodeName = r.string(n.name, `node ${i}'s name`);
    const where = `node ${i} (${nodeName})`;
    if (!NODE_KINDS.includes(n.kind as NodeKind)) r.fail(`${where} has the unknown kind ${describe(n.kind)}`);
    const kind = n.kind as NodeKind;
    const outs = r.array(n.outputs, `${where}'s outputs`).map((o, k) => {
      const v = r.object(o, `${where} output ${k}`);
      return { name: r.string(v.name, `${where} output ${k}'s name`), type: r.type(v.type, `${where} output ${k}'s type`) };
    });
    if (kind !== 'call' && outs.length !== 1) r.fail(`${where}: a ${kind} has one output, not ${outs.length}`);
    let node: Node;
    if (kind === 'placeholder') {
      node = graph.addInput(nodeName, outs[0]!.type).producer;
    } else if (kind === 'constant') {
      const { tensor, origin } = readConstant(n.constant, where);
      const t = outs[0]!.type;
      const matches = t.kind === 'tensor' && t.dtype === tensor.dtype && t.shape.length === tensor.shape.length && t.shape.every((d, k) => d === tensor.shape[k]);
      if (!matches) {
        r.fail(`${where}: its value's type does not match its ${tensor.dtype}[${tensor.shape.join(', ')}] data`);
      }
      node = graph.addConstant(nodeName, tensor, origin).producer;
    } else {
      const target = r.string(n.target, `${where}'s target`);
      const op = getOp(target);
      if (op === undefined) r.fail(`${where} calls the unknown op ${target}`);
      const given = r.object(n.args, `${where}'s args`);
      const args: Record<string, Arg> = {};
      for (const [k, a] of Object.entries(given)) {
        if (!op.schema.args.some((s) => s.name === k)) r.fail(`${where} (${target}) has the unknown argument ${k}`);
        args[k] = readArg(a, `${where} argument ${k}`, 0);
      }
      node = graph.addCall(target, args, outs.map((o) => o.type), nodeName);
      if (n.subgraphs !== undefined) {
        if (depth >= MAX_GRAPH_DEPTH) r.fail(`${where}: subgraphs nest more than ${MAX_GRAPH_DEPTH} deep`);
        const subgraphs: Record<string, Graph> = {};
        for (const [role, sub] of Object.entries(r.object(n.subgraphs, `${where}'s subgraphs`))) {
          defineEntry(subgraphs, role, readGraph(sub, weights, depth + 1, `${r.label} ${where} subgraph ${role}`));
        }
        node.subgraphs = subgraphs;
      }
    }
    reserve(node.name, nodeName);
    node.name = nodeName;
    node.outputs.forEach((v, k) => {
      const wanted = outs[k]!.name;
      reserve(v.name, wanted);
      v.name = wanted;
      values.push(v);
    });
    if (n.meta !== undefined) {
      for (const [k, v] of Object.entries(r.object(n.meta, `${where}'s meta`))) {
        const copy = jsonCopy(v);
        if (copy === undefined) r.fail(`${where}: meta entry ${k} is not JSON data`);
        defineEntry(node.meta, k, copy);
      }
    }
  }

  const valueAt = (x: unknown, what: string): Value => {
    const id = r.index(x, what);
    if (id >= values.length) r.fail(`${what} is value ${id}, but the graph defines only ${values.length}`);
    return values[id]!;
  };
  const inputs = r.array(g.inputs, 'inputs').map((x, i) => {
    const v = valueAt(x, `input ${i}`);
    if (v.producer.kind !== 'placeholder') r.fail(`input ${i} (%${v.name}) is not a placeholder`);
    return v;
  });
  graph.inputs.splice(0, graph.inputs.length, ...inputs);
  const outputs = r.array(g.outputs, 'outputs').map((x, i) => valueAt(x, `output ${i}`));
  const outputNames = r.array(g.outputNames, 'outputNames').map((x, i) => r.string(x, `output name ${i}`));
  if (outputNames.length !== outputs.length) r.fail(`${outputs.length} outputs but ${outputNames.length} output names`);
  graph.setOutputs(outputs, outputNames);
  return graph;
}

/** Rebuilds a graph from {@link serializeGraphToBuffer}'s bytes (validated like {@link deserializeGraph}). */
export function deserializeGraphFromBuffer(source: Uint8Array | ArrayBufferLike): Graph {
  const bytes = source instanceof ArrayBuffer || source instanceof SharedArrayBuffer ? new Uint8Array(source) : source;
  if (!(bytes instanceof Uint8Array)) throw new InvalidArgumentError('deserializeGraphFromBuffer expects a Uint8Array or an ArrayBuffer');
  let container;
  try {
    container = unpackContainer(bytes, GRAPH_BUFFER_MAGIC, [GRAPH_BUFFER_VERSION]);
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    const what = e instanceof MagicError ? `${e.message}: not a serialized graph` : e.message;
    throw new BadModelError(`graph buffer: ${what}`, { cause: e });
  }
  return deserializeGraph(container.json, container.blob);
}
