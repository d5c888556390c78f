/**
 * Converts an engine segment of the graph (whichever backend builds it) into a Network: its
 * inputs become network inputs, each node goes through its selected converter, its outputs
 * are marked. Every converter's outputs are checked against the IR types, so a converter bug
 * is caught here, named.
 */
import { InternalError, TensorRTNodeError } from '../errors';
import type { Node, Value } from '../ir/graph';
import { formatShape } from '../ir/symbolic';
import { Network, type NetTensor, type ProfileShapes } from '../network';
import { ConversionContext, trtType } from './context';
import { selectConverter, type SelectionSettings } from './registry';

export interface SegmentSpec {
  name: string;
  nodes: readonly Node[];
  inputs: readonly Value[];
  outputs: readonly Value[];
  /** Optimization profiles per input value name (dynamic inputs only). */
  profiles?: ReadonlyMap<string, ProfileShapes[]>;
}

function checkOutput(node: Node, value: Value, t: NetTensor): void {
  const type = value.tensorType;
  const shapeOk =
    t.shape.length === type.shape.length && type.shape.every((d, i) => (typeof d === 'number' ? t.shape[i] === d || t.shape[i] === -1 : true));
  if (t.dtype !== trtType(type.dtype, true) || !shapeOk) {
    throw new InternalError(
      `converter for node ${node.name} (${node.target}) produced ${t.dtype}[${t.shape.join(', ')}] for %${value.name}, ` +
        `which the graph types as ${type.dtype}${formatShape(type.shape)}`,
    );
  }
}

export function convertSegment(spec: SegmentSpec, settings: SelectionSettings = {}): Network {
  const network = new Network(spec.name);
  const used = new Set<Value>([...spec.outputs, ...spec.nodes.flatMap((n) => n.inputValues())]);
  const ctx = new ConversionContext(network, settings, used);
  for (const v of spec.inputs) {
    const type = v.tensorType;
    const dtype = trtType(type.dtype, settings.truncateDouble);
    if (dtype === null) throw new InternalError(`segment ${spec.name} input %${v.name} is ${type.dtype}, which TensorRT cannot hold`);
    const shape = type.shape.map((d) => (typeof d === 'number' ? d : -1));
    ctx.set(v, network.addInput(v.name, dtype, shape, spec.profiles?.get(v.name) ?? []));
  }
  for (const node of spec.nodes) {
    const selection = selectConverter(node, settings);
    if (!selection.ok) throw new InternalError(`node ${node.name} (${node.target}) reached conversion without a converter: ${selection.reasons.join('; ')}`);
    ctx.node = node;
    let outs: ReadonlyArray<NetTensor | null>;
    try {
      outs = selection.converter.impl(node, ctx);
    } catch (error) {
      // A layer the converter built wrong (inferLayer's InternalError) is named with the node it came from.
      if (error instanceof InternalError) throw new InternalError(`converter ${selection.converter.name} on node ${node.name} (${node.target}): ${error.message}`, { cause: error, details: { ...error.details, node: node.name } });
      if (error instanceof TensorRTNodeError) throw error;
      throw new InternalError(`converter ${selection.converter.name} failed on node ${node.name}: ${(error as Error).message}`, { cause: error });
    }
    if (outs.length !== node.outputs.length) {
      throw new InternalError(`converter ${selection.converter.name} returned ${outs.length} outputs for node ${node.name}, which has ${node.outputs.length}`);
    }
    node.outputs.forEach((v, i) => {
      const t = outs[i]!;
      if (t === null) {
        if (used.has(v)) throw new InternalError(`converter ${selection.converter.name} skipped output %${v.name} of node ${node.name}, which is read`);
        return;
      }
      checkOutput(node, v, t);
      ctx.set(v, t);
    });
  }
  for (const v of spec.outputs) {
    let t = ctx.tensor(v);
    // A network output must be produced by a layer of this network (not an input passed through).
    if (t.producer === -1) t = network.add1({ kind: 'identity' }, [t], `${v.name}/identity`);
    network.markOutput(t, v.name);
  }
  return network;
}
