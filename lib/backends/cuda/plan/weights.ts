/**
 * The engine's weights in device memory: every Tensor in the parameters of the layers the
 * outputs need, packed at 256-byte aligned offsets into one buffer uploaded once at load
 * (lowerings find theirs through LoweringContext.weight). A tensor used by several layers is
 * stored once.
 */
import { InternalError } from '../../../errors';
import type { BufferSlice } from '../../../gpu/plan';
import { liveLayers, type Layer, type Network } from '../../../network';
import { Tensor } from '../../../ir/tensor';
import { WEIGHTS_BUFFER, type WeightLocator } from './lower-instance';
import { alignUp } from './memory-plan';

export interface WeightLayout {
  /** Byte offset of each weight tensor in the weights buffer. */
  readonly offsets: ReadonlyMap<Tensor, number>;
  /** The buffer's size (at least one alignment unit, so that it can always be allocated). */
  readonly bytes: number;
}

function collect(value: unknown, out: Tensor[]): Tensor[] {
  if (value instanceof Tensor) out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => collect(v, out));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => collect(v, out));
  return out;
}

/** Where each weight of `network` goes. */
export function layoutWeights(network: Network): WeightLayout {
  const offsets = new Map<Tensor, number>();
  let bytes = 0;
  for (const layer of liveLayers(network)) {
    for (const t of collect(layer.params, [])) {
      if (offsets.has(t)) continue;
      offsets.set(t, bytes);
      bytes = alignUp(bytes + Math.max(t.data.byteLength, 1));
    }
  }
  return { offsets, bytes: Math.max(bytes, alignUp(1)) };
}

/** The host bytes of the weights buffer. */
export function packWeights(layout: WeightLayout): Uint8Array {
  const out = new Uint8Array(layout.bytes);
  for (const [t, offset] of layout.offsets) out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), offset);
  return out;
}

/** LoweringContext.weight over `layout`. */
export function weightLocator(layout: WeightLayout): WeightLocator {
  return (tensor: Tensor, layer: Layer): BufferSlice => {
    const offset = layout.offsets.get(tensor);
    if (offset === undefined) throw new InternalError(`cuda backend: layer "${layer.name}" asked for a weight tensor that is not one of its parameters`);
    return { buffer: WEIGHTS_BUFFER, offset };
  };
}
