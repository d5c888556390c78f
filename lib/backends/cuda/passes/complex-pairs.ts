/**
 * Complex products as one pointwise expression over the pairs, a pass of the cuda backend
 * (so that RoPE fuses with its neighbours). The complex rewrite gives a product of
 * two carriers [..., 2] as slices of each part, four products, a difference, a sum and a concat
 * of the two halves (lib/conversion/converters/complex.ts): after fusion that is still one
 * launch per half, each writing every other element. Over the whole pair it is
 *
 *   out[..., c] = a[..., c]·b[..., 0] + a[..., 1 − c]·b[..., 1]·(−1, +1)[c]
 *
 * with a[..., 1 − c] a reversed slice of a, and b's parts repeated along the pair (stride-0
 * slices): views that fusion reads through, so the product is one launch writing whole pairs.
 * The arithmetic is the same as the rewrite's, operation for operation: each product rounds as
 * it did, x − y is x + (−y), and the imaginary sum only changes its order (exact in IEEE), so the
 * result is the same bits.
 *
 * Static shapes only (the rewrite's dynamic form gathers its parts). Pure: Network → Network.
 */
import type { Layer, Network, NetTensor } from '../../../network';
import { tensorReaders } from '../../../network/live-layers';
import { NetworkRewrite } from '../../../network/rewrite';
import { Tensor } from '../../../ir/tensor';

interface ComplexProduct {
  concat: Layer;
  /** The two carriers. */
  a: number;
  b: number;
  /** Every layer the product replaces. */
  absorbed: Layer[];
}

export interface ComplexPairsResult {
  network: Network;
  /** Complex products now one pointwise expression. */
  products: number;
}

/** Which part (0 or 1) of its input's last axis `layer` slices, whole elsewhere; or null. */
function partOf(network: Network, layer: Layer | undefined): { part: 0 | 1; carrier: number } | null {
  if (layer === undefined || layer.params.kind !== 'slice' || layer.inputs.length !== 1 || layer.params.mode !== 'strict_bounds') return null;
  const x = network.tensor(layer.inputs[0]!);
  const { start, size, stride } = layer.params;
  const last = x.shape.length - 1;
  if (last < 0 || x.shape[last] !== 2 || x.shape.some((d) => d < 0)) return null;
  const whole = x.shape.every((d, i) => i === last || (start[i] === 0 && size[i] === d && stride[i] === 1));
  if (!whole || size[last] !== 1 || (start[last] !== 0 && start[last] !== 1)) return null;
  return { part: start[last] as 0 | 1, carrier: layer.inputs[0]! };
}

function findProduct(network: Network, concat: Layer, producer: (id: number) => Layer | undefined, only: (id: number, reader: Layer, within?: ReadonlySet<number>) => boolean): ComplexProduct | null {
  const p = concat.params;
  if (p.kind !== 'concat' || concat.inputs.length !== 2) return null;
  const out = network.tensor(concat.outputs[0]!);
  if (out.shape.some((d) => d < 0) || (p.axis !== out.shape.length - 1 && p.axis !== -1) || out.shape.at(-1) !== 2) return null;
  const [re, im] = concat.inputs as number[];
  const reL = producer(re!);
  const imL = producer(im!);
  const isOp = (l: Layer | undefined, op: string): l is Layer => l !== undefined && l.params.kind === 'elementwise' && l.params.op === op && l.inputs.length === 2;
  if (!isOp(reL, 'sub') || !isOp(imL, 'sum') || !only(re!, concat) || !only(im!, concat)) return null;
  const products = [...reL.inputs, ...imL.inputs].map((id) => producer(id!));
  if (!products.every((l) => isOp(l, 'prod'))) return null;
  const [p1, p2, p3, p4] = products as Layer[];
  // Each product's parts: [carrier a's part, carrier b's part].
  const parts = (l: Layer) => l.inputs.map((id) => partOf(network, producer(id!)));
  const want: Array<[0 | 1, 0 | 1]> = [[0, 0], [1, 1], [0, 1], [1, 0]]; // ar·br, ai·bi, ar·bi, ai·br
  const seen = [p1!, p2!, p3!, p4!].map(parts);
  if (seen.some((s) => s[0] === null || s[1] === null)) return null;
  const a = seen[0]![0]!.carrier;
  const b = seen[0]![1]!.carrier;
  const matches = seen.every((s, k) => s[0]!.carrier === a && s[1]!.carrier === b && s[0]!.part === want[k]![0] && s[1]!.part === want[k]![1]);
  if (!matches || a === b) return null;
  // Nothing outside the product reads its pieces, so all of them go.
  const slices = [...new Set([p1!, p2!, p3!, p4!].flatMap((l) => l.inputs.map((id) => producer(id!)!)))];
  const dtype = out.dtype;
  const pieces = [reL, imL, p1!, p2!, p3!, p4!, ...slices];
  const inside = new Set(pieces.map((l) => l.index).concat(concat.index));
  const ok = pieces.every((l) => l.outputs.every((id) => network.tensor(id).dtype === dtype && only(id, concat, inside)));
  return ok ? { concat, a, b, absorbed: pieces } : null;
}

/** Complex products of static carriers rewritten as one pointwise expression over the pairs (see the module comment). */
export function interleaveComplexProducts(source: Network): ComplexPairsResult {
  const readers = tensorReaders(source.layers);
  const outputs = new Set(source.outputs.map((o) => o.tensor));
  const producer = (id: number): Layer | undefined => {
    const p = source.tensor(id).producer;
    return p >= 0 ? source.layers[p] : undefined;
  };
  /** `id` is read only by layers of `within` (or by `reader` alone), and is not a network output. */
  const only = (id: number, reader: Layer, within?: ReadonlySet<number>): boolean => {
    const r = new Set(readers.get(id) ?? []);
    return !outputs.has(id) && r.size > 0 && [...r].every((j) => (within ? within.has(j) : j === reader.index));
  };
  const found = new Map<number, ComplexProduct>();
  const absorbed = new Set<number>();
  for (const layer of source.layers) {
    const f = findProduct(source, layer, producer, only);
    if (f === null || f.absorbed.some((l) => absorbed.has(l.index))) continue;
    found.set(layer.index, f);
    for (const l of f.absorbed) absorbed.add(l.index);
  }
  if (found.size === 0) return { network: source, products: 0 };
  const rw = new NetworkRewrite(source, 'complex-pairs');
  for (const layer of source.layers) {
    const f = found.get(layer.index);
    if (f !== undefined) rw.set(layer.outputs[0]!, pairProduct(rw, source, f));
    else if (!absorbed.has(layer.index)) rw.copy(layer);
  }
  return { network: rw.finish(), products: found.size };
}

/** out = a·b_re + swap(a)·b_im·(−1, +1), over whole pairs. */
function pairProduct(rw: NetworkRewrite, source: Network, f: ComplexProduct): NetTensor {
  const name = f.concat.name;
  const a = rw.get(f.a)!;
  const b = rw.get(f.b)!;
  const last = a.shape.length - 1;
  const dtype = source.tensor(f.concat.outputs[0]!).dtype;
  const view = (t: NetTensor, start: number, step: number, role: string): NetTensor =>
    rw.add({ kind: 'slice', start: t.shape.map((_, i) => (i === last ? start : 0)), size: [...t.shape], stride: t.shape.map((_, i) => (i === last ? step : 1)), mode: 'strict_bounds' }, [t], `${name}/${role}`)[0]!;
  const ew = (x: NetTensor, y: NetTensor, op: 'prod' | 'sum', role: string): NetTensor => rw.add({ kind: 'elementwise', op }, [x, y], role)[0]!;
  const swapped = view(a, 1, -1, 'a_swapped');
  const bRe = view(b, 0, 0, 'b_re_pairs');
  const bIm = view(b, 1, 0, 'b_im_pairs');
  const sign = rw.add({ kind: 'constant', weights: Tensor.from(dtype, [...a.shape.map(() => 1).slice(0, last), 2], [-1, 1]) }, [], `${name}/sign`)[0]!;
  const signed = ew(ew(swapped, bIm, 'prod', `${name}/a_swapped_b_im`), sign, 'prod', `${name}/signed`);
  return ew(ew(a, bRe, 'prod', `${name}/a_b_re`), signed, 'sum', name);
}
