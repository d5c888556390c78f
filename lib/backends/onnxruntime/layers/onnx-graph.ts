/**
 * A small writer of ONNX graphs as onnx-proto (protobufjs) plain objects: nodes named after
 * the Network layer they come from (so an onnxruntime error that names a node names the
 * layer), initializers from Tensors, and int64 constants for shape arithmetic. It knows
 * nothing of TensorRT's semantics; ./lower-*.ts do.
 */
import { InternalError } from '../../../errors';
import type { DType } from '../../../ir/dtype';
import { Tensor } from '../../../ir/tensor';

/** TensorProto.DataType codes of the dtypes a Network holds (and float64, for exact arithmetic). */
export const ONNX_DTYPES: Readonly<Partial<Record<DType, number>>> = {
  float32: 1,
  uint8: 2,
  int8: 3,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
  bfloat16: 16,
};

/**
 * The quantized types a Network holds between its quantize and dequantize layers (and as
 * their weights): FLOAT8E4M3FN (opset 19) and INT4 (opset 21).
 */
const QUANTIZED_ONNX_DTYPES: Readonly<Partial<Record<DType, number>>> = { float8e4m3fn: 17, int4: 22 };

export function onnxDType(dtype: DType): number {
  const code = ONNX_DTYPES[dtype] ?? QUANTIZED_ONNX_DTYPES[dtype];
  if (code === undefined) throw new InternalError(`onnxruntime backend: ${dtype} has no ONNX element type here`);
  return code;
}

/** An attribute value: integers → INT, other numbers → FLOAT, number[] → INTS, string → STRING; `{ float }` forces FLOAT. */
export type Attr = number | string | readonly number[] | { float: number };

// AttributeProto.AttributeType values.
const FLOAT = 1;
const INT = 2;
const STRING = 3;
const INTS = 7;

function attribute(name: string, value: Attr): object {
  if (typeof value === 'number') return Number.isInteger(value) ? { name, type: INT, i: value } : { name, type: FLOAT, f: value };
  if (typeof value === 'string') return { name, type: STRING, s: new TextEncoder().encode(value) };
  if ('float' in value) return { name, type: FLOAT, f: value.float };
  return { name, type: INTS, ints: [...value] };
}

/**
 * A TensorProto over the tensor's bytes (typed arrays are little-endian on every platform Node
 * runs on). int4, held one value a byte, is packed as ONNX stores it: two values a byte, the
 * first in the low four bits.
 */
export function tensorProto(name: string, t: Tensor): object {
  if (t.dtype === 'int4') {
    const values = t.data as Int8Array;
    const packed = new Uint8Array(Math.ceil(values.length / 2));
    for (let i = 0; i < values.length; i++) packed[i >> 1]! |= (values[i]! & 0x0f) << ((i & 1) * 4);
    return { name, dims: [...t.shape], dataType: onnxDType(t.dtype), rawData: packed };
  }
  const rawData = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return { name, dims: [...t.shape], dataType: onnxDType(t.dtype), rawData };
}

export class OnnxGraph {
  readonly nodes: object[] = [];
  readonly initializers: object[] = [];
  /** Whether a node of the com.microsoft domain was used (the model then imports it). */
  usesMicrosoftDomain = false;
  private count = 0;
  private owner = 'graph';
  private perOwner = 0;
  private readonly int64Cache = new Map<string, string>();
  /** The value of every initializer, by name (lowerings fold what is constant: ./data.ts, ./pointwise.ts). */
  private readonly constants = new Map<string, Tensor>();

  /** Names the nodes that follow after `layer` (the first `layer`, then `layer#1`, ...). */
  setOwner(layer: string): void {
    this.owner = layer;
    this.perOwner = 0;
  }

  /** A value name nothing else uses. */
  fresh(hint = 'v'): string {
    return `${hint}__${this.count++}`;
  }

  /** Adds a node; returns its output names (fresh unless given). */
  node(op: string, inputs: readonly string[], attrs: Readonly<Record<string, Attr | undefined>> = {}, outputs: number | readonly string[] = 1, domain = ''): string[] {
    const outs = typeof outputs === 'number' ? Array.from({ length: outputs }, () => this.fresh(op)) : [...outputs];
    const name = this.perOwner === 0 ? this.owner : `${this.owner}#${this.perOwner}`;
    this.perOwner++;
    const attribute_ = Object.entries(attrs)
      .filter((e): e is [string, Attr] => e[1] !== undefined)
      .map(([k, v]) => attribute(k, v));
    if (domain === 'com.microsoft') this.usesMicrosoftDomain = true;
    this.nodes.push({ name, opType: op, domain, input: [...inputs], output: outs, attribute: attribute_ });
    return outs;
  }

  /** A single-output node. */
  op(op: string, inputs: readonly string[], attrs: Readonly<Record<string, Attr | undefined>> = {}, domain = ''): string {
    return this.node(op, inputs, attrs, 1, domain)[0]!;
  }

  /** An initializer holding `t` (its bytes are viewed, not copied, until the model is encoded). */
  initializer(t: Tensor, name = this.fresh('w')): string {
    this.initializers.push(tensorProto(name, t));
    this.constants.set(name, t);
    return name;
  }

  /** The value of `name` when it is an initializer. */
  constantValue(name: string): Tensor | undefined {
    return this.constants.get(name);
  }

  /**
   * The initializers some node or `outputs` read: a folded constant leaves the one it was
   * folded from unread, and a model should not carry its weights twice.
   */
  usedInitializers(outputs: readonly string[]): object[] {
    const read = new Set(outputs);
    for (const n of this.nodes as Array<{ input: string[] }>) for (const x of n.input) read.add(x);
    return this.initializers.filter((i) => read.has((i as { name: string }).name));
  }

  /** An int64 constant (1-D unless `shape` says otherwise), shared between uses. */
  int64(values: ReadonlyArray<number | bigint>, shape: readonly number[] = [values.length]): string {
    const key = `${shape.join('x')}:${values.join(',')}`;
    let name = this.int64Cache.get(key);
    if (name === undefined) {
      name = this.initializer(new Tensor('int64', shape, BigInt64Array.from(values, (v) => BigInt(v))), this.fresh('i64'));
      this.int64Cache.set(key, name);
    }
    return name;
  }

  /** A scalar constant of `dtype`. */
  scalar(dtype: DType, value: number | bigint): string {
    if (dtype === 'int64') return this.int64([value], []);
    return this.initializer(Tensor.scalar(dtype, value), this.fresh('c'));
  }

  /** `x` cast from `from` to `to` (itself when they are equal). */
  cast(x: string, from: DType, to: DType): string {
    return from === to ? x : this.op('Cast', [x], { to: onnxDType(to) });
  }
}
