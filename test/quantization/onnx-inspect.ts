/**
 * Reading and editing the ONNX models of the calibration tests, independently of
 * lib/quantization: the Q/DQ model's DequantizeLinear in front of a node's input (its stored
 * values, scales and axis), and the float model with activations clipped to given ranges (the
 * Q/DQ model's float twin: what it computes but for rounding).
 */
import { onnx } from 'onnx-proto';

type Node = onnx.INodeProto;

export function decode(model: Uint8Array): onnx.ModelProto {
  return onnx.ModelProto.decode(model);
}

function initializer(m: onnx.ModelProto, name: string): onnx.ITensorProto {
  const t = (m.graph!.initializer ?? []).find((i) => i.name === name);
  if (t === undefined) throw new Error(`no initializer ${name}`);
  return t;
}

// A copy: raw_data may be a Buffer view into the whole decoded model, whose slice() copies nothing.
const bufferOf = (t: onnx.ITensorProto): ArrayBuffer => Uint8Array.from(t.rawData!).buffer;
export const floatsOf = (t: onnx.ITensorProto): number[] => Array.from(new Float32Array(bufferOf(t)));
export const int8sOf = (t: onnx.ITensorProto): number[] => Array.from(new Int8Array(bufferOf(t)));
export const dimsOf = (t: onnx.ITensorProto): number[] => (t.dims ?? []).map(Number);

export function nodeNamed(m: onnx.ModelProto, name: string): Node {
  const n = (m.graph!.node ?? []).find((x) => x.name === name);
  if (n === undefined) throw new Error(`no node ${name}`);
  return n;
}

function producer(m: onnx.ModelProto, tensor: string): Node | undefined {
  return (m.graph!.node ?? []).find((n) => (n.output ?? []).includes(tensor));
}

/** The DequantizeLinear feeding input `input` of node `name`: its stored tensor, scale, zero point and axis. */
export function dequantizeOf(m: onnx.ModelProto, name: string, input: number) {
  const node = nodeNamed(m, name);
  const dq = producer(m, node.input![input]!);
  if (dq?.opType !== 'DequantizeLinear') throw new Error(`input ${input} of ${name} is not read through a DequantizeLinear`);
  const axisAttr = (dq.attribute ?? []).find((a) => a.name === 'axis');
  const stored = producer(m, dq.input![0]!);
  return {
    node: dq,
    /** The QuantizeLinear before it (activations), or undefined (weights: an initializer). */
    quantize: stored?.opType === 'QuantizeLinear' ? stored : undefined,
    stored: stored === undefined ? initializer(m, dq.input![0]!) : undefined,
    scale: initializer(m, dq.input![1]!),
    zeroPoint: initializer(m, dq.input![2]!),
    axis: axisAttr === undefined ? undefined : Number(axisAttr.i),
  };
}

export function opsetOf(m: onnx.ModelProto): number {
  return Number((m.opsetImport ?? []).find((o) => !o.domain)!.version);
}

/**
 * The float model with Clip(x, -amax, amax) on each given tensor, read in its place by the
 * listed nodes' inputs of that tensor.
 */
export function clippedModel(model: Uint8Array, clips: readonly { tensor: string; amax: number; consumers: readonly string[] }[]): Uint8Array {
  const m = decode(model);
  const g = m.graph!;
  const added: onnx.INodeProto[] = [];
  clips.forEach((c, k) => {
    const lo = `clip${k}_min`;
    const hi = `clip${k}_max`;
    const out = `clip${k}_out`;
    g.initializer!.push(
      onnx.TensorProto.create({ name: lo, dims: [], dataType: 1, rawData: new Uint8Array(new Float32Array([-c.amax]).buffer) }),
      onnx.TensorProto.create({ name: hi, dims: [], dataType: 1, rawData: new Uint8Array(new Float32Array([c.amax]).buffer) }),
    );
    added.push(onnx.NodeProto.create({ opType: 'Clip', name: `clip${k}`, input: [c.tensor, lo, hi], output: [out] }));
    for (const name of c.consumers) {
      const n = nodeNamed(m, name);
      n.input = n.input!.map((i) => (i === c.tensor ? out : i));
    }
  });
  // Clips first would read tensors not yet computed: place each right after its tensor's producer.
  const nodes: onnx.INodeProto[] = [];
  const pending = [...added];
  const place = (produced: Set<string>): void => {
    for (let i = pending.length - 1; i >= 0; i--) {
      if (produced.has(pending[i]!.input![0]!)) nodes.push(...pending.splice(i, 1));
    }
  };
  place(new Set((g.input ?? []).map((i) => i.name!)));
  for (const n of g.node ?? []) {
    nodes.push(n);
    place(new Set(n.output ?? []));
  }
  g.node = nodes as onnx.NodeProto[];
  return onnx.ModelProto.encode(m).finish();
}

/** ||a - b|| / ||b|| over the elements. */
export function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num += (a[i]! - b[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return Math.sqrt(num / den);
}
