/**
 * Writing the Q/DQ model: the float graph with
 * - a QuantizeLinear → DequantizeLinear pair on each calibrated activation, read by the chosen
 *   nodes' inputs in its place (other readers keep the float tensor), with a scalar scale and a
 *   zero point of 0 (int8, or float8e4m3fn whose 0 is +0);
 * - each weight stored quantized (an int8 or float8e4m3fn initializer) behind a
 *   DequantizeLinear with its scales (per channel: a 1-D scale along `axis`), read by the chosen
 *   nodes; the float weight is dropped when nothing else reads it.
 * New nodes go right before the first node that reads them, so the node list stays in
 * topological order. Symmetric quantization: scale = amax / 127 (int8; values rounded half to
 * even and kept within ±127) or amax / 448 (float8e4m3fn's largest finite value; rounded to
 * nearest even, saturating).
 */
import type { onnx } from 'onnx-proto';

import type { Tensor } from '../ir/tensor';
import { toMiniFloatBits } from '../ir/low-precision';
import { tensorFromProto } from '../frontends/onnx/tensor-proto';
import { floatProto, intAttr, makeNode, nodeLabel, ONNX_TYPE, tensorProto, type FloatModel, type Names } from './onnx-model';
import type { Use, WeightPoint } from './targets';
import type { CalibrationPrecision, WeightReport } from './types';

/** The largest magnitude a quantized value takes: int8's symmetric 127, float8e4m3fn's 448. */
export const QUANT_MAX: Readonly<Record<CalibrationPrecision, number>> = { int8: 127, fp8: 448 };

/** The float32 scale of a range `amax` (1 for a tensor that was 0 throughout, whose values all quantize to 0 with any scale). */
export function scaleOf(amax: number, precision: CalibrationPrecision): number {
  return amax > 0 && Number.isFinite(amax) ? Math.fround(amax / QUANT_MAX[precision]) : 1;
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** One value quantized with `scale`, as the stored byte. */
function quantizeValue(x: number, scale: number, precision: CalibrationPrecision): number {
  if (precision === 'fp8') return toMiniFloatBits(x / scale, 'float8e4m3fn', true);
  const q = roundHalfEven(x / scale);
  return (q > 127 ? 127 : q < -127 ? -127 : q) & 0xff;
}

export interface QuantizedWeight {
  /** The stored bytes (int8 two's complement, or float8e4m3fn bits). */
  readonly bytes: Uint8Array;
  readonly amax: number[];
  readonly scale: number[];
}

/**
 * Symmetric quantization of a float32 weight: one scale (axis null) or one per index along
 * `axis`, each max |w| over its slice / QUANT_MAX.
 */
export function quantizeWeight(w: Tensor, axis: number | null, precision: CalibrationPrecision): QuantizedWeight {
  const data = w.data as Float32Array;
  const channels = axis === null ? 1 : w.shape[axis]!;
  let inner = 1;
  if (axis !== null) for (let d = axis + 1; d < w.rank; d++) inner *= w.shape[d]!;
  const channelOf = axis === null ? () => 0 : (i: number) => Math.floor(i / inner) % channels;
  const amax = new Array<number>(channels).fill(0);
  for (let i = 0; i < data.length; i++) {
    const a = Math.abs(data[i]!);
    const c = channelOf(i);
    if (a > amax[c]!) amax[c] = a;
  }
  const scale = amax.map((a) => scaleOf(a, precision));
  const bytes = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) bytes[i] = quantizeValue(data[i]!, scale[channelOf(i)]!, precision);
  return { bytes, amax, scale };
}

/** An activation to quantize: its scale and the node inputs that read the pair's output. */
export interface ActivationQdq {
  readonly tensor: string;
  readonly scale: number;
  readonly uses: readonly Use[];
}

/** Every name the nodes of `graph` (subgraphs included) read, and its outputs. */
function namesRead(graph: onnx.IGraphProto, into = new Set<string>()): Set<string> {
  for (const node of graph.node ?? []) {
    for (const n of node.input ?? []) if (n) into.add(n);
    for (const a of node.attribute ?? []) {
      if (a.g) namesRead(a.g, into);
      for (const g of a.graphs ?? []) namesRead(g, into);
    }
  }
  for (const o of graph.output ?? []) if (o.name) into.add(o.name);
  return into;
}

export interface QdqResult {
  readonly weights: WeightReport[];
  /** Indices (in the float graph) of the nodes given a quantized input. */
  readonly quantizedNodes: Set<number>;
}

/** Rewrites `model`'s graph in place (see the top of this file). */
export function insertQdq(model: FloatModel, names: Names, precision: CalibrationPrecision, activations: readonly ActivationQdq[], weights: readonly WeightPoint[]): QdqResult {
  const graph = model.graph;
  const nodes = graph.node ?? [];
  const before = new Map<number, onnx.NodeProto[]>();
  const insert = (at: number, ...added: onnx.NodeProto[]): void => {
    before.set(at, [...(before.get(at) ?? []), ...added]);
  };
  const initializers: onnx.ITensorProto[] = [];
  const quantizedNodes = new Set<number>();
  const zeroType = precision === 'fp8' ? ONNX_TYPE.float8e4m3fn : ONNX_TYPE.int8;
  const redirect = (uses: readonly Use[], to: string): void => {
    for (const use of uses) {
      nodes[use.node]!.input![use.input] = to;
      quantizedNodes.add(use.node);
    }
  };
  const first = (uses: readonly Use[]): number => Math.min(...uses.map((u) => u.node));

  for (const a of activations) {
    const scale = names.fresh(`${a.tensor}_scale`);
    const zero = names.fresh(`${a.tensor}_zero_point`);
    const quantized = names.fresh(`${a.tensor}_quantized`);
    const dequantized = names.fresh(`${a.tensor}_dequantized`);
    initializers.push(floatProto(scale, [], [a.scale]), tensorProto(zero, [], zeroType, new Uint8Array(1)));
    insert(
      first(a.uses),
      makeNode('QuantizeLinear', names.fresh(`${a.tensor}_QuantizeLinear`), [a.tensor, scale, zero], [quantized]),
      makeNode('DequantizeLinear', names.fresh(`${a.tensor}_DequantizeLinear`), [quantized, scale, zero], [dequantized]),
    );
    redirect(a.uses, dequantized);
  }

  const reports: WeightReport[] = [];
  for (const w of weights) {
    const tensor = tensorFromProto(w.constant.proto, `${model.source}: weight "${w.tensor}"`);
    const q = quantizeWeight(tensor, w.axis, precision);
    const dims = w.axis === null ? [] : [q.scale.length];
    const stored = names.fresh(`${w.tensor}_quantized`);
    const scale = names.fresh(`${w.tensor}_scale`);
    const zero = names.fresh(`${w.tensor}_zero_point`);
    const dequantized = names.fresh(`${w.tensor}_dequantized`);
    initializers.push(
      tensorProto(stored, tensor.shape, zeroType, q.bytes),
      floatProto(scale, dims, q.scale),
      tensorProto(zero, dims, zeroType, new Uint8Array(q.scale.length)),
    );
    insert(first(w.uses), makeNode('DequantizeLinear', names.fresh(`${w.tensor}_DequantizeLinear`), [stored, scale, zero], [dequantized], w.axis === null ? [] : [intAttr('axis', w.axis)]));
    redirect(w.uses, dequantized);
    reports.push({ tensor: w.tensor, consumers: w.uses.map((u) => nodeLabel(nodes[u.node]!, u.node)), axis: w.axis, amax: q.amax, scale: q.scale });
  }

  // Float weights that only the quantized nodes read go; Constant nodes that made them too.
  const read = namesRead({ ...graph, node: nodes });
  const dropped = new Set(weights.map((w) => w.tensor).filter((name) => !read.has(name)));
  const droppedNodes = new Set(weights.filter((w) => dropped.has(w.tensor) && w.constant.constantNode !== undefined).map((w) => w.constant.constantNode!));
  const rebuilt: onnx.NodeProto[] = [];
  nodes.forEach((node, i) => {
    rebuilt.push(...(before.get(i) ?? []));
    if (!droppedNodes.has(i)) rebuilt.push(node as onnx.NodeProto);
  });
  graph.node = rebuilt;
  graph.initializer = [...(graph.initializer ?? []).filter((t) => !dropped.has(t.name ?? '')), ...initializers] as onnx.TensorProto[];
  graph.input = (graph.input ?? []).filter((i) => !dropped.has(i.name ?? '')) as onnx.ValueInfoProto[];
  return { weights: reports, quantizedNodes };
}
