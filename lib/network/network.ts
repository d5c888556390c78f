/**
 * A TensorRT network description as plain data: what a converter builds and a backend
 * consumes (the reference backend runs it on the CPU; the TensorRT backend,
 * lib/backends/tensorrt, replays it into an INetworkDefinition, so far tested only against a
 * recording fake libnvinfer, never a real TensorRT).
 */
import { InternalError } from '../errors';
import type { Layer, LayerParams, TrtDType } from './layers';
import { inferLayer, type TensorInfo } from './shape-inference';

/** A tensor of a Network (ITensor): produced by an input or a layer output. */
export interface NetTensor extends TensorInfo {
  readonly id: number;
  name: string;
  /** Layer index that produces it, or -1 for a network input. */
  readonly producer: number;
}

/** Min/opt/max shapes of one input in one optimization profile. */
export interface ProfileShapes {
  min: number[];
  opt: number[];
  max: number[];
}

export interface NetworkInput {
  readonly tensor: number;
  readonly name: string;
  /** One entry per optimization profile (empty when every dim is static). */
  readonly profiles: ProfileShapes[];
}

export interface NetworkOutput {
  readonly tensor: number;
  readonly name: string;
}

export class Network {
  readonly tensors: NetTensor[] = [];
  readonly layers: Layer[] = [];
  readonly inputs: NetworkInput[] = [];
  readonly outputs: NetworkOutput[] = [];
  private readonly names = new Set<string>();

  constructor(readonly name = 'network') {}

  private unique(base: string): string {
    let name = base;
    for (let i = 1; this.names.has(name); i++) name = `${base}_${i}`;
    this.names.add(name);
    return name;
  }

  tensor(id: number): NetTensor {
    const t = this.tensors[id];
    if (t === undefined) throw new InternalError(`network ${this.name}: no tensor ${id}`);
    return t;
  }

  /** Declares an input; -1 marks a run-time dim, which needs a profile per dim. */
  addInput(name: string, dtype: TrtDType, shape: readonly number[], profiles: ProfileShapes[] = []): NetTensor {
    if (shape.some((d) => d < 0) && profiles.length === 0) {
      throw new InternalError(`network input "${name}" has dynamic dims [${shape}] but no optimization profile`);
    }
    for (const p of profiles) {
      for (const key of ['min', 'opt', 'max'] as const) {
        if (p[key].length !== shape.length) throw new InternalError(`network input "${name}": profile ${key} has the wrong rank`);
      }
      shape.forEach((d, i) => {
        const [mn, op, mx] = [p.min[i]!, p.opt[i]!, p.max[i]!];
        if (!(0 <= mn && mn <= op && op <= mx) || (d >= 0 && (mn !== d || mx !== d))) {
          throw new InternalError(`network input "${name}" dim ${i}: profile [${mn}, ${op}, ${mx}] does not fit ${d}`);
        }
      });
    }
    const t: NetTensor = { id: this.tensors.length, name: this.unique(name), dtype, shape: [...shape], producer: -1 };
    this.tensors.push(t);
    this.inputs.push({ tensor: t.id, name: t.name, profiles: profiles.map((p) => ({ min: [...p.min], opt: [...p.opt], max: [...p.max] })) });
    return t;
  }

  /**
   * Adds a layer; its outputs' dtypes and shapes are inferred (errors name the layer).
   * `inputs` may hold null for omitted optional inputs.
   */
  add(params: LayerParams, inputs: ReadonlyArray<NetTensor | null>, name: string): NetTensor[] {
    for (const t of inputs) if (t !== null && this.tensors[t.id] !== t) throw new InternalError(`layer "${name}": input ${t.name} belongs to another network`);
    const layerName = this.unique(name);
    const infos = inferLayer(params, inputs, layerName);
    const index = this.layers.length;
    const outputs = infos.map((info, i) => {
      const t: NetTensor = {
        ...info,
        id: this.tensors.length,
        name: this.unique(infos.length === 1 ? `${layerName}:out` : `${layerName}:out${i}`),
        producer: index,
      };
      this.tensors.push(t);
      return t;
    });
    this.layers.push({ index, name: layerName, params, inputs: inputs.map((t) => (t === null ? null : t.id)), outputs: outputs.map((t) => t.id) });
    return outputs;
  }

  /** Adds a single-output layer and returns its output. */
  add1(params: LayerParams, inputs: ReadonlyArray<NetTensor | null>, name: string): NetTensor {
    const outs = this.add(params, inputs, name);
    if (outs.length !== 1) throw new InternalError(`layer "${name}" has ${outs.length} outputs`);
    return outs[0]!;
  }

  markOutput(t: NetTensor, name: string): void {
    if (this.tensors[t.id] !== t) throw new InternalError(`output ${name} is not a tensor of network ${this.name}`);
    this.outputs.push({ tensor: t.id, name });
  }
}
