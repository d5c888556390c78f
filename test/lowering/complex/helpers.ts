/**
 * Shared pieces of the complex-lowering tests: hand-built rotary graphs (the RFC's Llama
 * subgraph), running a rewritten graph on the carriers of complex inputs, and a deep copy of
 * a graph (the rewrite works in place).
 */
import { call } from '../../../lib/ir/builder';
import type { DType } from '../../../lib/ir/dtype';
import { Graph, tensorType, type Arg, type Value } from '../../../lib/ir/graph';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../../../lib/ir/serialize';
import type { Dim } from '../../../lib/ir/symbolic';
import { Tensor } from '../../../lib/ir/tensor';

/** A deep copy of a graph (constants, names, symbols included). */
export function copyGraph(graph: Graph): Graph {
  return deserializeGraphFromBuffer(serializeGraphToBuffer(graph));
}

/** A builder bound to one graph: `op(target, args)` appends a node and returns its (first) output. */
export function builder(graph: Graph): (target: string, args: Record<string, Arg>, name?: string) => Value {
  return (target, args, name) => call(graph, target, args, name === undefined ? {} : { name }).output;
}

export interface RotaryOptions {
  seq?: Dim;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  freqsDType?: DType;
  /** One freqs view per layer (false: the view is shared by q and k, as in Llama). */
  layers?: number;
}

/**
 * apply_rotary_emb as torch.export writes it: q and k reshaped to pairs and viewed as
 * complex, multiplied by a view of the complex freqs_cis input, viewed as real and flattened.
 */
export function rotaryGraph(options: RotaryOptions = {}): Graph {
  const { seq = 8, heads = 4, kvHeads = 2, headDim = 16, freqsDType = 'complex64', layers = 1 } = options;
  const g = new Graph('rotary');
  const op = builder(g);
  const freqs = g.addInput('freqs_cis', tensorType(freqsDType, [seq, headDim / 2]));
  // A symbolic sequence length is read from freqs_cis at run time, as torch.export does.
  const s: Arg = typeof seq === 'number' ? seq : op('aten.sym_size.int', { self: freqs, dim: 0 }, 'sym_size_seq');
  const outs: Value[] = [];
  for (let l = 0; l < layers; l++) {
    const sfx = l === 0 ? '' : `_${l}`;
    const xq = g.addInput(`xq${sfx}`, tensorType('float32', [1, seq, heads, headDim]));
    const xk = g.addInput(`xk${sfx}`, tensorType('float32', [1, seq, kvHeads, headDim]));
    const rq = op('aten.view.default', { self: xq, size: [1, s, heads, headDim / 2, 2] }, `reshape${sfx}`);
    const cq = op('aten.view_as_complex.default', { self: rq }, `view_as_complex${sfx}`);
    const rk = op('aten.view.default', { self: xk, size: [1, s, kvHeads, headDim / 2, 2] }, `reshape_k${sfx}`);
    const ck = op('aten.view_as_complex.default', { self: rk }, `view_as_complex_k${sfx}`);
    const f = op('aten.view.default', { self: freqs, size: [1, s, 1, headDim / 2] }, `freqs_view${sfx}`);
    const mq = op('aten.mul.Tensor', { self: cq, other: f }, `mul${sfx}`);
    const mk = op('aten.mul.Tensor', { self: ck, other: f }, `mul_k${sfx}`);
    const vq = op('aten.view_as_real.default', { self: mq }, `view_as_real${sfx}`);
    const vk = op('aten.view_as_real.default', { self: mk }, `view_as_real_k${sfx}`);
    outs.push(op('aten.view.default', { self: vq, size: [1, s, heads, headDim] }, `flatten${sfx}`));
    outs.push(op('aten.view.default', { self: vk, size: [1, s, kvHeads, headDim] }, `flatten_k${sfx}`));
  }
  g.setOutputs(outs);
  return g;
}

/** A complex tensor seen as its real carrier [..., 2] (float32 or float64), sharing the data. */
export function carrierOf(t: Tensor): Tensor {
  if (t.dtype === 'complex64') return new Tensor('float32', [...t.shape, 2], t.data);
  if (t.dtype === 'complex128') return new Tensor('float64', [...t.shape, 2], t.data);
  return t;
}

/** A carrier [..., 2] seen as the complex tensor it carries. */
export function complexOf(t: Tensor, dtype: 'complex64' | 'complex128' = t.dtype === 'float64' ? 'complex128' : 'complex64'): Tensor {
  const data = dtype === 'complex64' ? (t.data instanceof Float32Array ? t.data : Float32Array.from(t.data as Float64Array)) : Float64Array.from(t.data as Float32Array);
  return new Tensor(dtype, t.shape.slice(0, -1), data);
}

/** Lines of printGraph without the header and symbols line (one per node, and the return). */
export function bodyLines(text: string): string[] {
  return text
    .split('\n')
    .slice(1)
    .filter((l) => !l.startsWith('  symbols:'))
    .map((l) => l.trim());
}
