/**
 * The one object every converter receives: the network under construction, the map from
 * IR values to network tensors, the settings, and naming (layers are named after the IR node
 * that made them, so a TensorRT layer traces back to the model).
 */
import { InternalError } from '../errors';
import type { DType } from '../ir/dtype';
import type { Node, Value } from '../ir/graph';
import { cast as castKernel } from '../kernels/unary';
import type { NetTensor, Network, TrtDType } from '../network';
import { Tensor } from '../ir/tensor';
import type { SelectionSettings } from './types';

const TRT_TYPES = new Set<string>(['float32', 'float16', 'bfloat16', 'int8', 'uint8', 'int32', 'int64', 'bool', 'float8e4m3fn', 'int4']);

/** The TensorRT type that carries an IR dtype, or null when TensorRT has none. */
export function trtType(dtype: DType, truncateDouble = false): TrtDType | null {
  if (TRT_TYPES.has(dtype)) return dtype as TrtDType;
  if (dtype === 'float64' && truncateDouble) return 'float32';
  return null;
}

export class ConversionContext {
  private readonly tensors = new Map<Value, NetTensor>();
  /** The node being converted (for naming and errors). */
  node: Node | null = null;
  /** Names layers when no node is being converted: the network layer being spelled out (expand-layers.ts). */
  layerName: string | null = null;

  constructor(
    readonly network: Network,
    readonly settings: SelectionSettings = {},
    /** Values something reads (later nodes of the segment, or the segment's outputs). */
    private readonly used: ReadonlySet<Value> = new Set(),
  ) {}

  /** True when something reads `value`: a converter may return null for an output that is not. */
  isUsed(value: Value): boolean {
    return this.used.has(value);
  }

  /** A layer name for the current node: `node` or `node/role`. */
  name(role?: string): string {
    const base = this.node?.name ?? this.layerName ?? 'layer';
    return role ? `${base}/${role}` : base;
  }

  /** Binds an IR value to the network tensor that computes it. */
  set(value: Value, tensor: NetTensor): void {
    this.tensors.set(value, tensor);
  }

  has(value: Value): boolean {
    return this.tensors.has(value);
  }

  /**
   * The network tensor of an IR tensor value. Constants become constant layers on first use
   * (bool and uint8 through int32 and a cast, since TensorRT has no such constants).
   */
  tensor(value: Value): NetTensor {
    const hit = this.tensors.get(value);
    if (hit !== undefined) return hit;
    if (value.producer.kind === 'constant') {
      const t = this.constant(value.producer.tensor!, value.name);
      this.tensors.set(value, t);
      return t;
    }
    throw new InternalError(`conversion: %${value.name} has no network tensor (used before it was converted, or from outside the segment)`);
  }

  /** A constant layer holding `data` (converted to a TensorRT type when needed). */
  constant(data: Tensor, name: string): NetTensor {
    const net = this.network;
    if (data.dtype === 'bool' || data.dtype === 'uint8') {
      const asInt = net.add1({ kind: 'constant', weights: castKernel(data, 'int32') }, [], `${name}/int32`);
      return net.add1({ kind: 'cast', to: data.dtype }, [asInt], `${name}/cast`);
    }
    const type = trtType(data.dtype, this.settings.truncateDouble);
    if (type === null) throw new InternalError(`constant ${name} is ${data.dtype}, which TensorRT cannot hold`);
    const weights = type === data.dtype ? data : castKernel(data, type);
    return net.add1({ kind: 'constant', weights }, [], name);
  }

  /** A constant of `rank` ones-shaped dims holding one value (for broadcasting scalars). */
  scalar(value: number, dtype: DType, rank: number, role = 'scalar'): NetTensor {
    const shape = new Array<number>(rank).fill(1);
    return this.constant(Tensor.from(dtype, shape, [dtype === 'int64' ? Math.trunc(value) : value]), this.name(role));
  }

  /** Adds a single-output layer named after the current node. */
  add(params: Parameters<Network['add1']>[0], inputs: ReadonlyArray<NetTensor | null>, role?: string): NetTensor {
    return this.network.add1(params, inputs, this.name(role));
  }
}
