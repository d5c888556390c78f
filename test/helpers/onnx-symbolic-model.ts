/**
 * Builds small ONNX models whose inputs have symbolic dims (dim_param), the way exporters
 * write dynamic batch/sequence axes, so import-time shape folding can be tested on the
 * exact node idioms an exporter emits. Attributes: integers → INT, other numbers → FLOAT,
 * number[] → INTS, strings → STRING, Tensors → TENSOR.
 */
import { ONNX_DTYPES } from '../../lib/backends/onnxruntime/layers/onnx-graph';
import type { DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

export type SymAttr = number | string | readonly number[] | Tensor | SymGraphAttr;

/** A typed value of a subgraph's signature (dims: a string is a dim_param; null: rank unknown). */
export interface SymValueInfo {
  readonly name: string;
  readonly dtype: DType;
  readonly dims?: ReadonlyArray<number | string> | null;
}

/** A GRAPH attribute (If's branches, Loop's and Scan's body). */
export interface SymGraphAttr {
  readonly graph: {
    readonly inputs: readonly SymValueInfo[];
    readonly nodes: readonly SymNode[];
    readonly outputs: readonly SymValueInfo[];
    readonly initializers?: Readonly<Record<string, Tensor>>;
  };
}

export interface SymNode {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attrs?: Readonly<Record<string, SymAttr>>;
  readonly name?: string;
}

export interface SymModelSpec {
  /** Graph inputs: dtype and dims (a string is a dim_param). */
  readonly inputs: Readonly<Record<string, { dtype: DType; dims: ReadonlyArray<number | string> }>>;
  readonly initializers?: Readonly<Record<string, Tensor>>;
  readonly nodes: readonly SymNode[];
  readonly outputs: readonly string[];
  /** Default 17 (what the TorchScript exporter wrote for the zoo). */
  readonly opset?: number;
}

function elemType(dtype: DType): number {
  const t = ONNX_DTYPES[dtype];
  if (t === undefined) throw new Error(`onnx-symbolic-model: no ONNX type for ${dtype}`);
  return t;
}

function tensorProto(name: string, t: Tensor): unknown {
  const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();
  return onnx.TensorProto.create({ name, dims: [...t.shape], dataType: elemType(t.dtype), rawData: bytes });
}

function valueInfo(v: SymValueInfo): unknown {
  const shape = v.dims === null || v.dims === undefined ? undefined : { dim: v.dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) };
  return { name: v.name, type: { tensorType: { elemType: elemType(v.dtype), ...(shape === undefined ? {} : { shape }) } } };
}

function nodeProto(n: SymNode, i: number): unknown {
  return onnx.NodeProto.create({
    opType: n.op,
    name: n.name ?? `${n.op}_${i}`,
    input: n.inputs,
    output: n.outputs,
    attribute: Object.entries(n.attrs ?? {}).map(([k, v]) => attribute(k, v)),
  });
}

function attribute(name: string, v: SymAttr): unknown {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'object' && 'graph' in v) {
    const g = v.graph;
    return {
      name,
      type: T.GRAPH,
      g: onnx.GraphProto.create({
        name,
        node: g.nodes.map((n, i) => nodeProto(n, i)),
        input: g.inputs.map(valueInfo),
        output: g.outputs.map(valueInfo),
        initializer: Object.entries(g.initializers ?? {}).map(([k, t]) => tensorProto(k, t)),
      }),
    };
  }
  if (v instanceof Tensor) return { name, type: T.TENSOR, t: tensorProto(name, v) };
  if (typeof v === 'string') return { name, type: T.STRING, s: Buffer.from(v, 'utf8') };
  if (typeof v === 'number') return Number.isInteger(v) ? { name, type: T.INT, i: v } : { name, type: T.FLOAT, f: v };
  return { name, type: T.INTS, ints: [...v] };
}

/** The serialized model. Nodes without a name are named `<op>_<index>`. */
export function buildSymbolicModel(spec: SymModelSpec): Uint8Array {
  const graph = onnx.GraphProto.create({
    name: 'symbolic',
    node: spec.nodes.map((n, i) =>
      onnx.NodeProto.create({
        opType: n.op,
        name: n.name ?? `${n.op}_${i}`,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attrs ?? {}).map(([k, v]) => attribute(k, v)),
      }),
    ),
    input: Object.entries(spec.inputs).map(([name, { dtype, dims }]) => ({
      name,
      type: { tensorType: { elemType: elemType(dtype), shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
    })),
    initializer: Object.entries(spec.initializers ?? {}).map(([name, t]) => tensorProto(name, t)),
    output: spec.outputs.map((name) => ({ name })),
  });
  const model = onnx.ModelProto.create({ irVersion: 8, producerName: 'tensorrt-node-tests', opsetImport: [{ domain: '', version: spec.opset ?? 17 }], graph });
  return onnx.ModelProto.encode(model).finish();
}

/** A Constant node holding `t`. */
export function constantNode(output: string, t: Tensor): SymNode {
  return { op: 'Constant', inputs: [], outputs: [output], attrs: { value: t } };
}

export const i64 = (values: readonly number[]): Tensor => Tensor.from('int64', [values.length], [...values]);
export const i64Scalar = (value: number): Tensor => Tensor.scalar('int64', value);
