/**
 * RMSNorm as one normalization layer (single-pass normalization), a pass of the cuda
 * backend. PyTorch and ONNX spell Llama's RMSNorm out:
 *
 *   xf = x [→ float32]; r = mean(xf·xf, last axis, keepdim); inv = 1/sqrt(r + eps)
 *   y = xf·inv [→ cast to x's dtype] [· weight]
 *
 * which the backend ran as a row reduction (the square as its prologue) and a map that reads
 * the row again: two launches and the row read twice, 12.5 µs of the Llama-style model's
 * 0.7 ms per norm (H200, 2026-12-02; bench/gpu/results/2026-12-02-fused-attention). As a
 * normalization layer with `rms` (../layers/nn.ts) the row is read once into registers,
 * squared, summed, scaled and written. The layer computes in fp32 and rounds once on store,
 * where the unfused form rounds xf·inv to x's dtype before the weight multiplies it: the fused
 * result is as close to the exact one or closer.
 *
 * Matched: the square as a product of one tensor with itself, the mean over the last axis with
 * kept dims, a scalar eps added, the inverse square root as sqrt then recip or 1/sqrt, the
 * product with x (or another cast of it to the same dtype) in either order, an optional cast
 * back to x's dtype and an optional product with a constant weight (or a reshape of one) that
 * varies along the last axis only. The output must have x's dtype (float16, bfloat16 or
 * float32: a norm over a float32 network input written as float16 stays unfused), and every
 * tensor of the chain must be read only by the next. Pure: Network → Network.
 */
import type { Layer, Network, NetTensor, TrtDType } from '../../../network';
import { NetworkRewrite } from '../../../network/rewrite';
import { passGraph, type PassGraph as Graph } from './pass-graph';
import { readNumbers } from '../../../kernels/access';
import { Tensor } from '../../../ir/tensor';

export interface FuseRmsNormResult {
  network: Network;
  /** RMSNorms now one layer. */
  norms: number;
}

interface Found {
  /** Source tensor ids: x, and the weight (null: none). */
  x: number;
  weight: number | null;
  epsilon: number;
  /** The tensor the normalization's output stands for. */
  output: number;
  absorbed: Layer[];
}

const NORM_DTYPES: ReadonlySet<TrtDType> = new Set(['float16', 'bfloat16', 'float32']);

/** The single value of a constant layer (or a reshape of one), or null. */
function scalarConstant(g: Graph, id: number): number | null {
  const layer = g.producer(id);
  if (layer?.params.kind !== 'constant') return null;
  const values = readNumbers(layer.params.weights);
  return values.length === 1 ? values[0]! : null;
}

/** Whether `id` is a constant (or a shuffle of one) whose values vary only along the last of `rank` axes. */
function lastAxisConstant(g: Graph, id: number, rank: number): boolean {
  const t = g.network.tensor(id);
  if (t.shape.length > rank || t.shape.slice(0, -1).some((d) => d !== 1)) return false;
  let layer = g.producer(id);
  while (layer?.params.kind === 'shuffle' && layer.inputs.length === 1) layer = g.producer(layer.inputs[0]!);
  return layer?.params.kind === 'constant';
}

/** `id` with one widening float cast stepped over (the `to(float32)` before the statistics). */
function castSource(g: Graph, id: number): number {
  const layer = g.producer(id);
  if (layer?.params.kind !== 'cast' || layer.inputs.length !== 1) return id;
  const from = g.network.tensor(layer.inputs[0]!);
  return NORM_DTYPES.has(from.dtype) ? layer.inputs[0]! : id;
}

/** The other operand of a two-input elementwise `op` layer whose operand `id` is one, or null. */
function otherOperand(layer: Layer, op: string, id: number): number | null {
  if (layer.params.kind !== 'elementwise' || layer.params.op !== op || layer.inputs.length !== 2) return null;
  const [a, b] = layer.inputs as [number, number];
  return a === id ? b : b === id ? a : null;
}

/** The one reader of `id` when only it reads `id`, else undefined. */
function soleReader(g: Graph, id: number): Layer | undefined {
  const r = g.readers(id);
  return r.length === 1 && g.only(id, r[0]!) ? r[0] : undefined;
}

function findRmsNorm(g: Graph, reduce: Layer): Found | null {
  const { network, producer } = g;
  const p = reduce.params;
  if (p.kind !== 'reduce' || p.op !== 'avg' || !p.keepDims || reduce.inputs.length !== 1) return null;
  const squares = reduce.inputs[0]!;
  const rank = network.tensor(squares).shape.length;
  if (rank === 0 || p.axes.length !== 1 || (p.axes[0] !== rank - 1 && p.axes[0] !== -1)) return null;
  const square = producer(squares);
  if (square?.params.kind !== 'elementwise' || square.params.op !== 'prod' || square.inputs[0] !== square.inputs[1] || !g.only(squares, reduce)) return null;
  const xf = square.inputs[0]!;
  const x = castSource(g, xf);
  const statsDtype = network.tensor(xf).dtype;
  if (statsDtype !== 'float32' && statsDtype !== network.tensor(x).dtype) return null;
  const absorbed: Layer[] = [square, reduce];
  // + eps
  const mean = reduce.outputs[0]!;
  const add = soleReader(g, mean);
  const epsId = add ? otherOperand(add, 'sum', mean) : null;
  const epsilon = epsId === null ? null : scalarConstant(g, epsId);
  if (add === undefined || epsilon === null || !(epsilon >= 0) || !Number.isFinite(epsilon)) return null;
  absorbed.push(add);
  // 1/sqrt
  const variance = add.outputs[0]!;
  const sqrt = soleReader(g, variance);
  if (sqrt?.params.kind !== 'unary' || sqrt.params.op !== 'sqrt') return null;
  absorbed.push(sqrt);
  const root = sqrt.outputs[0]!;
  const invert = soleReader(g, root);
  if (invert === undefined) return null;
  const isRecip = invert.params.kind === 'unary' && invert.params.op === 'recip';
  const isOneOver = invert.params.kind === 'elementwise' && invert.params.op === 'div' && invert.inputs[1] === root && scalarConstant(g, invert.inputs[0]!) === 1;
  if (!isRecip && !isOneOver) return null;
  absorbed.push(invert);
  // · x
  const inv = invert.outputs[0]!;
  const scaleBy = soleReader(g, inv);
  const xb = scaleBy ? otherOperand(scaleBy, 'prod', inv) : null;
  if (scaleBy === undefined || xb === null || castSource(g, xb) !== x || network.tensor(xb).dtype !== statsDtype) return null;
  if (!sameShape(network.tensor(xb), network.tensor(x))) return null;
  absorbed.push(scaleBy);
  let output = scaleBy.outputs[0]!;
  // [→ x's dtype]
  const next = soleReader(g, output);
  if (next?.params.kind === 'cast' && next.params.to === network.tensor(x).dtype) {
    absorbed.push(next);
    output = next.outputs[0]!;
  }
  // [· weight]
  let weight: number | null = null;
  const weigh = soleReader(g, output);
  const w = weigh ? otherOperand(weigh, 'prod', output) : null;
  if (weigh !== undefined && w !== null && w !== output && lastAxisConstant(g, w, rank) && sameShape(network.tensor(weigh.outputs[0]!), network.tensor(output))) {
    absorbed.push(weigh);
    weight = w;
    output = weigh.outputs[0]!;
  }
  const xt = network.tensor(x);
  if (!NORM_DTYPES.has(xt.dtype) || network.tensor(output).dtype !== xt.dtype || !sameShape(network.tensor(output), xt)) return null;
  if (network.outputs.some((o) => absorbed.some((l) => l.outputs.includes(o.tensor) && o.tensor !== output))) return null;
  return { x, weight, epsilon, output, absorbed };
}

const sameShape = (a: NetTensor, b: NetTensor): boolean => a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);

/** Every RMSNorm of `source` in the form above as one normalization layer (see the module comment). */
export function fuseRmsNorm(source: Network): FuseRmsNormResult {
  const g = passGraph(source);
  // Keyed by the last layer of the chain: the new layer takes its place, after the weight's producer.
  const found = new Map<number, Found>();
  const absorbed = new Set<number>();
  for (const layer of source.layers) {
    const f = findRmsNorm(g, layer);
    if (f === null || f.absorbed.some((l) => absorbed.has(l.index))) continue;
    found.set(f.absorbed.at(-1)!.index, f);
    for (const l of f.absorbed) absorbed.add(l.index);
  }
  if (found.size === 0) return { network: source, norms: 0 };
  const rw = new NetworkRewrite(source, 'fuse-rmsnorm');
  for (const layer of source.layers) {
    const f = found.get(layer.index);
    if (f !== undefined) {
      const x = rw.get(f.x)!;
      const rank = x.shape.length;
      const ones = new Array<number>(rank).fill(1);
      const constant = (value: number, name: string): NetTensor => rw.add({ kind: 'constant', weights: Tensor.from(x.dtype, ones, [value]) }, [], name)[0]!;
      const scale = f.weight === null ? constant(1, `${layer.name}/rms_scale`) : rw.get(f.weight)!;
      const bias = constant(0, `${layer.name}/rms_bias`);
      const out = rw.add({ kind: 'normalization', axes: [rank - 1], epsilon: f.epsilon, nbGroups: 1, rms: true }, [x, scale, bias], `${layer.name}/rmsnorm`)[0]!;
      rw.set(f.output, out);
    } else if (!absorbed.has(layer.index)) rw.copy(layer);
  }
  return { network: rw.finish(), norms: found.size };
}
