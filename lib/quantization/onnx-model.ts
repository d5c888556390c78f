/**
 * The float model as calibration reads and rewrites it: an onnx-proto ModelProto, decoded by
 * the ONNX frontend's checked decoder, with every external-data tensor read into the model
 * (the Q/DQ model is written as one self-contained file, and onnxruntime gets the model as
 * bytes, where external paths would mean nothing), plus what the passes need to know of it:
 * its constants, its inputs' declared types, and fresh names that collide with none of its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { onnx } from 'onnx-proto';

import { BadModelError, InvalidArgumentError } from '../errors';
import type { DType } from '../ir/dtype';
import { isSubByteInt } from '../ir/low-precision';
import type { Tensor } from '../ir/tensor';
import { toNumber, type LongLike } from '../frontends/onnx/long';
import { decodeModel } from '../frontends/onnx/proto';
import { ONNX_DTYPES, packSubByte, tensorFromProto } from '../frontends/onnx/tensor-proto';
import { readRegularFile } from '../frontends/regular-file';

/** AttributeProto.AttributeType values used here. */
export const ATTR = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, GRAPH: 5, INTS: 7, GRAPHS: 10 } as const;

/** TensorProto.DataType codes of the types calibration writes. */
export const ONNX_TYPE = { float32: 1, int8: 3, int64: 7, float8e4m3fn: 17 } as const;

/** A graph input the caller feeds (not an initializer), with its declared type. */
export interface ModelInput {
  readonly name: string;
  /** Undefined when the model declares no element type or one tensorrt-node lacks. */
  readonly dtype: DType | undefined;
  /** Dims: a number, or a string for a named (dim_param) or unnamed dim; undefined for an unknown rank. */
  readonly dims: ReadonlyArray<number | string> | undefined;
}

/** A constant tensor of the graph: an initializer, or the `value` of a Constant node. */
export interface GraphConstant {
  readonly proto: onnx.ITensorProto;
  /** The Constant node's index in graph.node, for a Constant's output. */
  readonly constantNode?: number;
}

export interface FloatModel {
  readonly model: onnx.ModelProto;
  readonly graph: onnx.GraphProto;
  /** Names the model in errors: the path, or `ONNX model buffer`. */
  readonly source: string;
  readonly inputs: readonly ModelInput[];
  readonly constants: ReadonlyMap<string, GraphConstant>;
  /** The default ONNX domain's opset. */
  readonly opset: number;
}

/** The model's bytes, or an E_BAD_MODEL error naming the path; `what` names it for messages. */
export function readModelBytes(source: unknown): { bytes: Uint8Array; name: string; baseDir?: string } {
  if (typeof source === 'string') {
    const bytes = readRegularFile(source, (reason, cause) => {
      throw new BadModelError(`cannot read ONNX model ${source}: the file ${reason}`, { cause, details: { file: source } });
    });
    return { bytes, name: source, baseDir: path.dirname(path.resolve(source)) };
  }
  if (source instanceof Uint8Array) return { bytes: source, name: 'ONNX model buffer' };
  throw new InvalidArgumentError('calibrate expects the model as an ONNX file path or a Uint8Array/Buffer of the file');
}

/** Whether `domain` is the default ONNX domain. */
export const isOnnxDomain = (domain: string | null | undefined): boolean => !domain || domain === 'ai.onnx';

/** The name of a node for messages: its own, or `<OpType> node <index>`. */
export function nodeLabel(node: onnx.INodeProto, index: number): string {
  return node.name ? node.name : `${node.opType ?? '?'} node ${index}`;
}

/** Every TensorProto of a graph and its subgraphs: initializers and tensor attributes. */
function forEachTensor(graph: onnx.IGraphProto, visit: (t: onnx.ITensorProto, what: string) => void): void {
  for (const t of graph.initializer ?? []) visit(t, `initializer "${t.name ?? ''}"`);
  for (const node of graph.node ?? []) {
    for (const a of node.attribute ?? []) {
      const where = `attribute ${a.name ?? ''} of node ${node.name || node.opType || '?'}`;
      if (a.t) visit(a.t, where);
      for (const t of a.tensors ?? []) visit(t, where);
      if (a.g) forEachTensor(a.g, visit);
      for (const g of a.graphs ?? []) forEachTensor(g, visit);
    }
  }
}

/** The tensor's bytes as ONNX raw_data lays them out (sub-byte integers packed two or four a byte). */
export function rawBytes(t: Tensor): Uint8Array {
  if (isSubByteInt(t.dtype) || t.dtype === 'float4e2m1') return packSubByte(t.dtype, t.data as ArrayLike<number>);
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/**
 * Reads every external-data tensor into its proto (raw_data), so the model is self-contained.
 * Paths are confined to `baseDir` by the frontend's reader; a model from bytes with external
 * data and no `baseDir` is E_BAD_MODEL naming the tensor.
 */
function inlineExternalData(graph: onnx.IGraphProto, source: string, baseDir: string | undefined): void {
  const externalFiles = new Map<string, number>();
  try {
    forEachTensor(graph, (t, what) => {
      if (t.dataLocation !== 1) return;
      if (baseDir === undefined) {
        throw new BadModelError(`${source}: ${what} keeps its data in an external file; give calibrate a path to the model, or baseDir`, { details: { file: source, tensor: t.name } });
      }
      const tensor = tensorFromProto(t, `${source}: ${what}`, { baseDir, externalFiles });
      t.rawData = rawBytes(tensor).slice();
      t.dataLocation = 0;
      t.externalData = [];
    });
  } finally {
    for (const fd of externalFiles.values()) fs.closeSync(fd);
  }
}

function inputOf(info: onnx.IValueInfoProto): ModelInput {
  const tt = info.type?.tensorType;
  const dtype = tt?.elemType ? ONNX_DTYPES[tt.elemType] : undefined;
  const dimOf = (d: onnx.TensorShapeProto.IDimension): number | string => {
    if (d.dimParam) return d.dimParam;
    if (d.dimValue !== null && d.dimValue !== undefined) return toNumber(d.dimValue as number | LongLike);
    return '?';
  };
  const dims = tt?.shape ? (tt.shape.dim ?? []).map(dimOf) : undefined;
  return { name: info.name ?? '', dtype, dims };
}

/** Decodes the model, inlines its external data, and gathers its inputs, constants and opset. */
export function openFloatModel(bytes: Uint8Array, source: string, baseDir: string | undefined): FloatModel {
  const model = decodeModel(bytes, source);
  const graph = model.graph as onnx.GraphProto;
  inlineExternalData(graph, source, baseDir);
  const constants = new Map<string, GraphConstant>();
  for (const t of graph.initializer ?? []) if (t.name) constants.set(t.name, { proto: t });
  (graph.node ?? []).forEach((node, i) => {
    if (node.opType !== 'Constant' || !isOnnxDomain(node.domain) || node.output?.length !== 1) return;
    const value = (node.attribute ?? []).find((a) => a.name === 'value' && a.t);
    if (value?.t) constants.set(node.output[0]!, { proto: value.t, constantNode: i });
  });
  const inputs = (graph.input ?? []).filter((i) => !constants.has(i.name ?? '')).map(inputOf);
  const entry = (model.opsetImport ?? []).find((o) => isOnnxDomain(o.domain));
  if (entry === undefined) throw new BadModelError(`${source}: the model imports no opset of the ONNX domain`, { details: { file: source } });
  return { model, graph, source, inputs, constants, opset: toNumber(entry.version as number | LongLike) };
}

/** The names of the inputs a model's caller feeds (graph inputs that are not initializers), without reading its weights. */
export function feedNames(bytes: Uint8Array, source: string): string[] {
  const graph = decodeModel(bytes, source).graph!;
  const initializers = new Set((graph.initializer ?? []).map((t) => t.name ?? ''));
  return (graph.input ?? []).map((i) => i.name ?? '').filter((n) => !initializers.has(n));
}

/** The model's serialized bytes. */
export function encodeModel(model: onnx.IModelProto): Uint8Array {
  return onnx.ModelProto.encode(model).finish();
}

/**
 * Fresh names for tensors and nodes: `base`, else `base_2`, `base_3`...; never one the model
 * uses anywhere (its subgraphs included) or one handed out before.
 */
export class Names {
  private readonly taken = new Set<string>();

  constructor(graph: onnx.IGraphProto) {
    this.collect(graph);
  }

  private collect(graph: onnx.IGraphProto): void {
    for (const list of [graph.input, graph.output, graph.valueInfo]) for (const v of list ?? []) if (v.name) this.taken.add(v.name);
    for (const t of graph.initializer ?? []) if (t.name) this.taken.add(t.name);
    for (const node of graph.node ?? []) {
      if (node.name) this.taken.add(node.name);
      for (const n of [...(node.input ?? []), ...(node.output ?? [])]) if (n) this.taken.add(n);
      for (const a of node.attribute ?? []) {
        if (a.g) this.collect(a.g);
        for (const g of a.graphs ?? []) this.collect(g);
      }
    }
  }

  fresh(base: string): string {
    let name = base;
    for (let k = 2; this.taken.has(name); k++) name = `${base}_${k}`;
    this.taken.add(name);
    return name;
  }
}

/** An attribute of `node` by name. */
export function attribute(node: onnx.INodeProto, name: string): onnx.IAttributeProto | undefined {
  return (node.attribute ?? []).find((a) => a.name === name);
}

/** An INT attribute's value, or `fallback`. */
export function intAttribute(node: onnx.INodeProto, name: string, fallback: number): number {
  const a = attribute(node, name);
  return a === undefined ? fallback : toNumber(a.i as number | LongLike);
}

/** An INTS attribute's values, or undefined. */
export function intsAttribute(node: onnx.INodeProto, name: string): number[] | undefined {
  const a = attribute(node, name);
  return a === undefined ? undefined : (a.ints ?? []).map((v) => toNumber(v as number | LongLike));
}

/** A TensorProto of `dtype` with these raw bytes. */
export function tensorProto(name: string, dims: readonly number[], dataType: number, rawData: Uint8Array): onnx.ITensorProto {
  return onnx.TensorProto.create({ name, dims: [...dims], dataType, rawData });
}

/** A float32 TensorProto. */
export function floatProto(name: string, dims: readonly number[], values: readonly number[]): onnx.ITensorProto {
  return tensorProto(name, dims, ONNX_TYPE.float32, new Uint8Array(new Float32Array(values).buffer));
}

/** An int64 TensorProto. */
export function int64Proto(name: string, values: readonly number[]): onnx.ITensorProto {
  return tensorProto(name, [values.length], ONNX_TYPE.int64, new Uint8Array(new BigInt64Array(values.map((v) => BigInt(v))).buffer));
}

/** A NodeProto of the ONNX domain. */
export function makeNode(opType: string, name: string, inputs: readonly string[], outputs: readonly string[], attributes: onnx.IAttributeProto[] = []): onnx.NodeProto {
  return onnx.NodeProto.create({ opType, name, input: [...inputs], output: [...outputs], attribute: attributes });
}

export const intAttr = (name: string, i: number): onnx.IAttributeProto => ({ name, type: ATTR.INT, i });
export const intsAttr = (name: string, ints: readonly number[]): onnx.IAttributeProto => ({ name, type: ATTR.INTS, ints: [...ints] });
export const stringAttr = (name: string, s: string): onnx.IAttributeProto => ({ name, type: ATTR.STRING, s: new TextEncoder().encode(s) });
