/**
 * Where the Q/DQ pairs go: for each node of a chosen op type (not excluded), which inputs are
 * activations (observed over the calibration batches, then given a QuantizeLinear →
 * DequantizeLinear pair), which are weights (constants, stored quantized behind a
 * DequantizeLinear) and which stay float (biases: TensorRT adds them in float after its int8
 * convolution or GEMM).
 *
 * Weights are quantized per output channel along the axis that holds it as each op lays its
 * weight out: Conv's W is [M, C/group, k...] (axis 0); ConvTranspose's is [C, M/group, k...]
 * (axis 1, which with groups > 1 shares a scale between the groups' channels of the same
 * index); Gemm's B is [K, N] (axis 1), or [N, K] with transB (axis 0); MatMul's B is
 * [..., K, N] (its last axis). A constant in an activation's place (MatMul's A, Gemm's A) gets
 * one scale.
 */
import type { onnx } from 'onnx-proto';

import { intAttribute, isOnnxDomain, nodeLabel, type FloatModel, type GraphConstant } from './onnx-model';
import type { SkippedReport } from './types';

/** The op types quantized by default: those TensorRT fuses Q/DQ into. */
export const DEFAULT_QUANTIZED_OPS: readonly string[] = ['Conv', 'ConvTranspose', 'MatMul', 'Gemm'];

/** An input slot of a node. */
export interface Use {
  readonly node: number;
  readonly input: number;
}

/** A constant weight to store quantized, with one scale (axis null) or one per channel along `axis`. */
export interface WeightPoint {
  readonly tensor: string;
  readonly axis: number | null;
  readonly constant: GraphConstant;
  readonly uses: Use[];
}

export interface QuantizationPlan {
  /** Activation tensors to observe, with the node inputs that will read their DequantizeLinear. */
  readonly activations: Map<string, Use[]>;
  /** Keyed by tensor and axis: one weight read along two axes is stored twice. */
  readonly weights: Map<string, WeightPoint>;
  readonly skipped: SkippedReport[];
  readonly warnings: string[];
}

type Role = { kind: 'activation' } | { kind: 'weight'; axis: number | null } | { kind: 'float' };

const ACTIVATION: Role = { kind: 'activation' };
const FLOAT: Role = { kind: 'float' };

/** The role of input `index` of `node`; `rank` is the rank of the constant there, if one is. */
function roleOf(node: onnx.INodeProto, index: number, rank: number | undefined, perChannel: boolean): Role {
  const weight = (axis: number | null): Role => ({ kind: 'weight', axis: perChannel ? axis : null });
  const constant = rank !== undefined;
  switch (node.opType) {
    case 'Conv':
    case 'ConvTranspose':
      if (index === 2) return FLOAT;
      if (index === 1 && constant && rank >= 2) return weight(node.opType === 'Conv' ? 0 : 1);
      break;
    case 'Gemm':
      if (index === 2) return FLOAT;
      if (index === 1 && constant && rank === 2) return weight(intAttribute(node, 'transB', 0) !== 0 ? 0 : 1);
      break;
    case 'MatMul':
      if (index === 1 && constant && rank >= 2) return weight(rank - 1);
      break;
    default:
      // Another op type asked for: its non-constant inputs only (its constants are not weights we know the layout of).
      return constant ? FLOAT : ACTIVATION;
  }
  return constant ? weight(null) : ACTIVATION;
}

/** The nodes of `graph`'s subgraphs (If, Loop, Scan bodies), recursively. */
function subgraphNodes(graph: onnx.IGraphProto): onnx.INodeProto[] {
  const found: onnx.INodeProto[] = [];
  for (const node of graph.node ?? []) {
    for (const a of node.attribute ?? []) {
      for (const g of [...(a.g ? [a.g] : []), ...(a.graphs ?? [])]) {
        found.push(...(g.node ?? []), ...subgraphNodes(g));
      }
    }
  }
  return found;
}

/**
 * Decides the Q/DQ points of `model` for the op types `ops`, leaving the nodes named in
 * `exclude` float. With `opsGiven` (the caller chose `ops`), an op type the model lacks is
 * warned of; the default list is expected to name types a model does not have.
 */
export function planQuantization(model: FloatModel, ops: readonly string[], exclude: readonly string[], perChannel: boolean, opsGiven: boolean): QuantizationPlan {
  const nodes = model.graph.node ?? [];
  const chosen = new Set(ops);
  const excluded = new Set(exclude);
  const plan: QuantizationPlan = { activations: new Map(), weights: new Map(), skipped: [], warnings: [] };
  // What produces each tensor: a DequantizeLinear output is quantized already.
  const producer = new Map<string, onnx.INodeProto>();
  for (const node of nodes) for (const out of node.output ?? []) if (out) producer.set(out, node);

  const present = new Set(nodes.filter((n) => isOnnxDomain(n.domain)).map((n) => n.opType ?? ''));
  for (const op of opsGiven ? chosen : []) {
    if (!present.has(op)) plan.warnings.push(`calibrate: the model has no ${op} node (ops lists it); nothing of that type is quantized`);
  }
  const names = new Set(nodes.map((n) => n.name ?? ''));
  for (const name of excluded) {
    if (!names.has(name)) plan.warnings.push(`calibrate: exclude names node "${name}", which the model does not have`);
  }
  const nested = subgraphNodes(model.graph).filter((n) => isOnnxDomain(n.domain) && chosen.has(n.opType ?? ''));
  if (nested.length > 0) {
    plan.warnings.push(`calibrate: ${nested.length} node(s) of the chosen op types inside If/Loop/Scan bodies stay float (only the main graph is quantized)`);
  }

  nodes.forEach((node, index) => {
    if (!isOnnxDomain(node.domain) || !chosen.has(node.opType ?? '')) return;
    const label = nodeLabel(node, index);
    if (node.name && excluded.has(node.name)) {
      plan.skipped.push({ what: label, reason: 'excluded' });
      return;
    }
    (node.input ?? []).forEach((name, input) => {
      if (!name) return;
      const constant = model.constants.get(name);
      const rank = constant === undefined ? undefined : (constant.proto.dims ?? []).length;
      const role = roleOf(node, input, rank, perChannel);
      if (role.kind === 'float') return;
      const from = producer.get(name);
      if (from !== undefined && from.opType === 'DequantizeLinear' && isOnnxDomain(from.domain)) {
        plan.skipped.push({ what: `${label} input ${input} ("${name}")`, reason: 'it is the output of a DequantizeLinear already' });
        return;
      }
      if (role.kind === 'activation') {
        const uses = plan.activations.get(name) ?? [];
        uses.push({ node: index, input });
        plan.activations.set(name, uses);
        return;
      }
      if (constant!.proto.dataType !== 1) {
        plan.skipped.push({ what: `${label} input ${input} ("${name}")`, reason: 'the weight is not float32' });
        return;
      }
      const key = `${name}\u0000${role.axis ?? ''}`;
      const point = plan.weights.get(key) ?? { tensor: name, axis: role.axis, constant: constant!, uses: [] };
      point.uses.push({ node: index, input });
      plan.weights.set(key, point);
    });
  });
  return plan;
}
