/**
 * Instantiation: a Network at concrete input dims → the concrete shape of every tensor the
 * outputs need, the host values of its shape tensors, and which layers run on the device.
 *
 * Shapes come from inferLayer (the same rules every backend follows) fed with concrete
 * inputs. Small integer tensors (rank ≤ 1, ≤ 64 elements: TensorRT's shape tensors) are
 * evaluated on the host: from inferLayer's `value` where it gives one, else by running the
 * layer's reference executor on host inputs. A layer whose outputs are all host-known never
 * reaches the device; a host value that a device layer reads as data, or that is a network
 * output, is uploaded (`uploads`). Pure: the executor is a parameter so tests can fake it.
 */
import { InternalError, UnsupportedOpError } from '../../../errors';
import { inferLayer, liveLayers, shapesDoNotFit, type Layer, type Network, type TensorInfo, type TrtDType } from '../../../network';
import { Tensor } from '../../../ir/tensor';
import { executeLayer } from '../../../network/evaluate';

/** Runs one layer on host tensors (the reference executor by default). */
export type HostEvaluator = (layer: Layer, inputs: ReadonlyArray<Tensor | null>) => Tensor[];

/** One tensor at concrete dims; `value` when the host knows its elements. */
export interface ConcreteTensor {
  readonly dtype: TrtDType;
  readonly shape: readonly number[];
  readonly value?: readonly number[];
}

export interface Instance {
  /** By tensor id; undefined for tensors no output needs. */
  readonly tensors: ReadonlyArray<ConcreteTensor | undefined>;
  /** The layers that run on the device, in network order. */
  readonly deviceLayers: readonly Layer[];
  /** Layers evaluated on the host (their outputs are all host-known), in network order. */
  readonly hostLayers: readonly Layer[];
  /** Host-known tensors the device needs (read by a device layer, or a network output), by id, ascending. */
  readonly uploads: readonly number[];
}

/**
 * Shape tensors: what TensorRT evaluates on the host. Bool ones too: the `_dyn` expand
 * compares a size list with -1 and selects between two shape lists on the result.
 */
export const isShapeTensor = (t: { dtype: TrtDType; shape: readonly number[] }): boolean =>
  (t.dtype === 'int32' || t.dtype === 'int64' || t.dtype === 'bool') && t.shape.length <= 1 && t.shape.every((d) => d >= 0) && t.shape.reduce((a, d) => a * d, 1) <= 64;

const hostTensor = (t: ConcreteTensor): Tensor => Tensor.from(t.dtype, t.shape, t.value!);

/**
 * Instantiates `network` for `inputShapes` (by input name; inputs are assumed checked
 * against the network and its profiles).
 *
 * @throws {UnsupportedOpError} a tensor whose dims depend on device data (not known on the host).
 * @throws {InternalError} a layer inferLayer or the host evaluation refuses at these dims.
 */
export function instantiate(network: Network, inputShapes: Readonly<Record<string, readonly number[]>>, evaluate: HostEvaluator = executeLayer): Instance {
  const tensors = new Array<ConcreteTensor | undefined>(network.tensors.length);
  for (const input of network.inputs) {
    const shape = inputShapes[input.name];
    if (shape === undefined) throw new InternalError(`cuda backend: no shape given for input "${input.name}"`);
    tensors[input.tensor] = { dtype: network.tensors[input.tensor]!.dtype, shape: [...shape] };
  }
  const deviceLayers: Layer[] = [];
  const hostLayers: Layer[] = [];
  const uploads = new Set<number>();
  const known = (id: number): boolean => tensors[id]?.value !== undefined;
  for (const layer of liveLayers(network)) {
    const label = `layer "${layer.name}" (${layer.params.kind})`;
    const ins = layer.inputs.map((id) => {
      if (id === null) return null;
      const t = tensors[id];
      if (t === undefined) throw new InternalError(`cuda backend: ${label} reads tensor "${network.tensors[id]!.name}" before it is computed`);
      return t;
    });
    let inferred: TensorInfo[];
    try {
      inferred = inferLayer(layer.params, ins as ReadonlyArray<TensorInfo | null>, layer.name);
    } catch (cause) {
      // The network passed these rules at its symbolic shapes: the inputs contradict each other.
      throw shapesDoNotFit('cuda', layer.name, cause);
    }
    let outs: ConcreteTensor[] = inferred.map((o) => ({
      dtype: o.dtype,
      shape: o.shape,
      ...(o.value !== undefined && isShapeTensor(o) ? { value: o.value } : {}),
    }));
    outs.forEach((o, k) => {
      if (o.shape.some((d) => d < 0)) {
        throw new UnsupportedOpError(
          `the cuda backend cannot run ${label}: output ${k} has dims [${o.shape.join(', ')}] that depend on values computed on the device`,
          { details: { layer: layer.name, kind: layer.params.kind } },
        );
      }
    });
    const hostInputs = layer.inputs.every((id) => id === null || known(id));
    if (!outs.every((o) => o.value !== undefined) && hostInputs && outs.every(isShapeTensor)) {
      let values: Tensor[];
      try {
        values = evaluate(layer, ins.map((t) => (t === null ? null : hostTensor(t))));
      } catch (cause) {
        throw new InternalError(`cuda backend: ${label} failed on the host at these dims: ${(cause as Error).message}`, { cause, details: { layer: layer.name } });
      }
      outs = outs.map((o, k) => ({ ...o, value: values[k]!.toArray() }));
    }
    layer.outputs.forEach((id, k) => (tensors[id] = outs[k]));
    if (outs.every((o) => o.value !== undefined)) {
      hostLayers.push(layer);
    } else {
      deviceLayers.push(layer);
      for (const id of layer.inputs) if (id !== null && known(id)) uploads.add(id);
    }
  }
  for (const o of network.outputs) if (known(o.tensor)) uploads.add(o.tensor);
  return { tensors, deviceLayers, hostLayers, uploads: [...uploads].sort((a, b) => a - b) };
}

/** The input shapes of every profile at min, opt and max (one set for a static network), deduplicated. */
export function profileShapeSets(network: Network): Array<Record<string, number[]>> {
  const count = Math.max(1, ...network.inputs.map((i) => i.profiles.length));
  const seen = new Set<string>();
  const sets: Array<Record<string, number[]>> = [];
  for (let p = 0; p < count; p++) {
    for (const key of ['min', 'opt', 'max'] as const) {
      const set: Record<string, number[]> = Object.create(null);
      for (const input of network.inputs) {
        const profile = input.profiles[p];
        set[input.name] = profile === undefined ? [...network.tensors[input.tensor]!.shape] : [...profile[key]];
      }
      const id = JSON.stringify(network.inputs.map((i) => set[i.name]));
      if (!seen.has(id)) {
        seen.add(id);
        sets.push(set);
      }
    }
  }
  return sets;
}
