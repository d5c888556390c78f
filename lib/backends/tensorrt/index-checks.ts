/**
 * Index checks for TensorRT. A gather or scatter index outside its axis is undefined behaviour in
 * TensorRT (it may read or write outside the tensor), where the reference, onnxruntime and cuda
 * backends refuse the run with E_BAD_INPUT. Before the network reaches TensorRT, every gather and
 * scatter whose indices are not constants known to be in range gets, as ordinary layers:
 *
 *   clamped = max(min(indices, d - 1), 0)      the layer reads these: never outside the tensor
 *   flag    = max over all of (indices ≠ clamped), as float32 [] — an extra network output
 *
 * where d is the size of the axis each index addresses (read from the data's shape at run time
 * when it is dynamic). The flag outputs are named `CHECK_OUTPUT_PREFIX + layer name`; the engine
 * (./run.ts) reads them after each run, refuses the run with E_BAD_INPUT naming the layer when a
 * flag is set, and never hands them to the caller. Pure: Network → Network.
 */
import { readNumbers } from '../../kernels/access';
import type { Layer, Network, NetTensor } from '../../network';
import { NetworkRewrite } from '../../network/rewrite';
import { Tensor } from '../../ir/tensor';

/** The prefix of the check outputs' names (what follows is the checked layer's name). */
export const CHECK_OUTPUT_PREFIX = '__tensorrt_node_index_check/';

/** Whether an engine output is an index check rather than one of the network's own. */
export const isCheckOutput = (name: string): boolean => name.startsWith(CHECK_OUTPUT_PREFIX);

/** The layer an index-check output checks. */
export const checkedLayer = (output: string): string => output.slice(CHECK_OUTPUT_PREFIX.length);

const ones = (n: number): number[] => new Array<number>(Math.max(n, 0)).fill(1);

/** The axes of the data that the index values address: one for default/element, the tuple's for nd. */
function addressedAxes(network: Network, layer: Layer): number[] | null {
  const p = layer.params;
  if (p.kind !== 'gather' && p.kind !== 'scatter') return null;
  if (p.mode === 'default' || p.mode === 'element') return [p.axis];
  const indices = network.tensor(layer.inputs[1]!).shape;
  const last = indices[indices.length - 1]!;
  if (!(last >= 1)) return null;
  const b = p.kind === 'gather' ? (p.nbElementWiseDims ?? 0) : 0;
  return Array.from({ length: last }, (_, j) => b + j);
}

/** Whether `id` is a constant of the network whose values all lie in their axes (static ones). */
function constantInRange(network: Network, id: number, data: readonly number[], axes: readonly number[]): boolean {
  const producer = network.layers.find((l) => l.outputs.includes(id));
  if (producer === undefined || producer.params.kind !== 'constant') return false;
  const values = readNumbers(producer.params.weights);
  for (let k = 0; k < values.length; k++) {
    const d = data[axes[k % axes.length]!]!;
    if (!(d >= 0) || !(values[k]! >= 0 && values[k]! < d)) return false;
  }
  return true;
}

/**
 * The sizes of `axes` of `data` as a tensor of `dtype` shaped to broadcast over indices of rank
 * `rank`: [1, ..., 1, k] (k = axes.length; rank 0 gives []). Constants where the dims are static,
 * else read from the data's shape at run time.
 */
function axisSizes(rw: NetworkRewrite, data: NetTensor, axes: readonly number[], dtype: 'int32' | 'int64', rank: number, name: string): NetTensor {
  const shape = rank === 0 ? [] : [...ones(rank - 1), axes.length];
  const dims = axes.map((a) => data.shape[a]!);
  if (dims.every((d) => d >= 0)) return rw.add({ kind: 'constant', weights: Tensor.from(dtype, shape, dims) }, [], `${name}/axis_sizes`)[0]!;
  const all = rw.add({ kind: 'shape' }, [data], `${name}/data_shape`)[0]!;
  const which = rw.add({ kind: 'constant', weights: Tensor.from('int32', [axes.length], [...axes]) }, [], `${name}/axes`)[0]!;
  let sizes = rw.add({ kind: 'gather', mode: 'default', axis: 0 }, [all, which], `${name}/axis_sizes_int64`)[0]!;
  if (dtype === 'int32') sizes = rw.add({ kind: 'cast', to: 'int32' }, [sizes], `${name}/axis_sizes_int32`)[0]!;
  return rw.add({ kind: 'shuffle', reshape: shape, zeroIsPlaceholder: false }, [sizes], `${name}/axis_sizes`)[0]!;
}

/**
 * `network` with every gather and scatter whose indices are not known in range reading clamped
 * indices, and one check output per such layer (see the module comment). The network itself when
 * no layer needs a check.
 */
export function withIndexChecks(network: Network): Network {
  const needs = (layer: Layer): number[] | null => {
    const axes = addressedAxes(network, layer);
    if (axes === null) return null;
    return constantInRange(network, layer.inputs[1]!, network.tensor(layer.inputs[0]!).shape, axes) ? null : axes;
  };
  if (!network.layers.some((l) => needs(l) !== null)) return network;
  const rw = new NetworkRewrite(network, 'tensorrt index checks');
  const checks: Array<{ layer: string; flag: NetTensor }> = [];
  for (const layer of network.layers) {
    const axes = needs(layer);
    if (axes === null) {
      rw.copy(layer);
      continue;
    }
    const name = layer.name;
    const [data, indices, ...rest] = layer.inputs.map((id) => rw.get(id));
    const dtype = indices!.dtype === 'int32' ? 'int32' : 'int64';
    const rank = indices!.shape.length;
    const constant = (value: number, what: string): NetTensor => rw.add({ kind: 'constant', weights: Tensor.from(dtype, ones(rank), [value]) }, [], `${name}/${what}`)[0]!;
    const sizes = axisSizes(rw, data!, axes, dtype, rank, name);
    const last = rw.add({ kind: 'elementwise', op: 'sub' }, [sizes, constant(1, 'one')], `${name}/last_index`)[0]!;
    const below = rw.add({ kind: 'elementwise', op: 'min' }, [indices!, last], `${name}/indices_at_most_last`)[0]!;
    const clamped = rw.add({ kind: 'elementwise', op: 'max' }, [below, constant(0, 'zero')], `${name}/indices_clamped`)[0]!;
    const same = rw.add({ kind: 'elementwise', op: 'equal' }, [indices!, clamped], `${name}/indices_in_range`)[0]!;
    const outside = rw.add({ kind: 'unary', op: 'not' }, [same], `${name}/indices_outside`)[0]!;
    let flag = rw.add({ kind: 'cast', to: 'float32' }, [outside], `${name}/indices_outside_float`)[0]!;
    if (rank > 0) flag = rw.add({ kind: 'reduce', op: 'max', axes: Array.from({ length: rank }, (_, i) => i), keepDims: false }, [flag], `${name}/index_check`)[0]!;
    const outputs = rw.add(layer.params, [data!, clamped, ...rest], name);
    layer.outputs.forEach((id, i) => rw.set(id, outputs[i]!));
    checks.push({ layer: name, flag });
  }
  const out = rw.finish();
  for (const c of checks) out.markOutput(c.flag, `${CHECK_OUTPUT_PREFIX}${c.layer}`);
  return out;
}
