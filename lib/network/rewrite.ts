/**
 * A Network → Network rewrite's bookkeeping: the new network with the source's inputs (and
 * their optimization profiles), each source tensor's counterpart, layers copied as they are,
 * and the outputs marked at the end. The backend passes (lib/backends/cuda: fold-affine,
 * channels-last, conv-epilogue) walk the source's layers and decide per layer; this keeps the
 * rest of each pass to what it changes.
 */
import { InternalError } from '../errors';
import type { Layer, LayerParams } from './layers';
import { Network, type NetTensor } from './network';

export class NetworkRewrite {
  readonly out: Network;
  private readonly map = new Map<number, NetTensor>();

  /** `pass` names the rewrite in errors. */
  constructor(
    readonly source: Network,
    private readonly pass: string,
  ) {
    this.out = new Network(source.name);
    for (const input of source.inputs) {
      const t = source.tensor(input.tensor);
      this.map.set(input.tensor, this.out.addInput(input.name, t.dtype, t.shape, input.profiles));
    }
  }

  /** Whether source tensor `id` has its counterpart yet. */
  has(id: number): boolean {
    return this.map.has(id);
  }

  /** The counterpart of source tensor `id` (null for an absent optional input). */
  get(id: number | null | undefined): NetTensor | null {
    if (id === null || id === undefined) return null;
    const t = this.map.get(id);
    if (t === undefined) throw new InternalError(`${this.pass}: tensor "${this.source.tensor(id).name}" of network ${this.source.name} is read before it is produced`);
    return t;
  }

  /** Records `t` as the counterpart of source tensor `id`. */
  set(id: number, t: NetTensor): void {
    this.map.set(id, t);
  }

  /** Adds a layer over rewritten inputs; its outputs (not mapped: the caller says what they stand for). */
  add(params: LayerParams, inputs: ReadonlyArray<NetTensor | null>, name: string): NetTensor[] {
    return this.out.add(params, inputs, name);
  }

  /** `layer` as it is (or with `params`), over the counterparts of its inputs; its outputs mapped. */
  copy(layer: Layer, params: LayerParams = layer.params): void {
    const outputs = this.out.add(params, layer.inputs.map((id) => this.get(id)), layer.name);
    layer.outputs.forEach((id, i) => this.map.set(id, outputs[i]!));
  }

  /** The rewritten network, its outputs marked (each through `output`, default get()). */
  finish(output: (id: number) => NetTensor = (id) => this.get(id)!): Network {
    for (const o of this.source.outputs) this.out.markOutput(output(o.tensor), o.name);
    return this.out;
  }
}
