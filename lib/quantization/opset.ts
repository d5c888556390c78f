/**
 * Raising a model's ONNX opset to the one its Q/DQ nodes need: 10 for QuantizeLinear and
 * DequantizeLinear, 13 for per-axis scales, 19 for float8e4m3fn. The model imports one version
 * of the ONNX domain, so every node of it (subgraphs included) is then read by the newer
 * version's rules: the nodes whose form or meaning changed on the way are rewritten into the
 * newer form with the same result.
 *
 * - 12: Dropout's `ratio` attribute became an input.
 * - 13: Squeeze's, Unsqueeze's and ReduceSum's `axes`, and Split's `split`, became inputs;
 *   Softmax, LogSoftmax and Hardmax stopped flattening their input to 2-D at `axis` (default 1)
 *   and now work along that one axis: the old meaning is written out as
 *   Reshape(op(Flatten(x, axis), axis=1), Shape(x)), unless axis is -1, where both agree.
 * - 16: RoiAlign gained coordinate_transformation_mode, whose default, half_pixel, is not what
 *   it did before (output_half_pixel, now written explicitly).
 * - 18: the other reductions' `axes` became inputs, and a Split without a `split` input must
 *   say how many outputs it has (num_outputs).
 *
 * Only models at opset 11 or later are raised: from older opsets many more ops changed
 * (Upsample, Pad, Slice, Clip, TopK, Resize...), and such a model is refused with a message
 * saying to re-export it.
 */
import type { onnx } from 'onnx-proto';

import { UnsupportedOpError } from '../errors';
import { toNumber, type LongLike } from '../frontends/onnx/long';
import { attribute, floatProto, int64Proto, intAttr, intAttribute, intsAttribute, isOnnxDomain, makeNode, stringAttr, type FloatModel, type Names } from './onnx-model';

/** The oldest opset calibrate raises from. */
export const MIN_RAISE_FROM = 11;

/** The ONNX IR version that came with an opset (7 with 13, 9 with 19), which a model raised to it declares at least. */
export function irVersionFor(opset: number): number {
  if (opset >= 19) return 9;
  if (opset >= 15) return 8;
  if (opset >= 13) return 7;
  if (opset >= 11) return 6;
  return 5;
}

const REDUCTIONS_18 = new Set(['ReduceMax', 'ReduceMin', 'ReduceMean', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare']);
const SOFTMAX_FAMILY = new Set(['Softmax', 'LogSoftmax', 'Hardmax']);

/** Removes attribute `name` from `node`. */
function dropAttribute(node: onnx.INodeProto, name: string): void {
  node.attribute = (node.attribute ?? []).filter((a) => a.name !== name);
}

/** Moves the INTS attribute `name` into an int64 initializer read as input `index`. */
function attributeToInput(graph: onnx.IGraphProto, node: onnx.INodeProto, name: string, index: number, names: Names): void {
  const values = intsAttribute(node, name);
  if (values === undefined) return;
  const tensor = names.fresh(`${node.name || node.output?.[0] || node.opType}_${name}`);
  graph.initializer = [...(graph.initializer ?? []), int64Proto(tensor, values)];
  const inputs = [...(node.input ?? [])];
  while (inputs.length < index) inputs.push('');
  inputs[index] = tensor;
  node.input = inputs;
  dropAttribute(node, name);
}

/** The nodes that replace `node` when crossing to opset `to` (itself, changed in place, or a longer list). */
function rewriteNode(graph: onnx.IGraphProto, node: onnx.INodeProto, to: number, names: Names): onnx.INodeProto[] {
  const op = node.opType ?? '';
  if (to === 12 && op === 'Dropout') {
    const ratio = attribute(node, 'ratio');
    if (ratio !== undefined) {
      const tensor = names.fresh(`${node.name || node.output?.[0] || 'Dropout'}_ratio`);
      graph.initializer = [...(graph.initializer ?? []), floatProto(tensor, [], [ratio.f ?? 0.5])];
      node.input = [node.input?.[0] ?? '', tensor];
      dropAttribute(node, 'ratio');
    }
  } else if (to === 13 && (op === 'Squeeze' || op === 'Unsqueeze' || op === 'ReduceSum')) {
    attributeToInput(graph, node, 'axes', 1, names);
  } else if (to === 13 && op === 'Split') {
    attributeToInput(graph, node, 'split', 1, names);
  } else if (to === 13 && SOFTMAX_FAMILY.has(op)) {
    const axis = intAttribute(node, 'axis', 1);
    if (axis === -1) return [node];
    const x = node.input?.[0] ?? '';
    const y = node.output?.[0] ?? '';
    const base = node.name || y;
    const shape = names.fresh(`${base}_input_shape`);
    const flat = names.fresh(`${base}_flattened`);
    const result = names.fresh(`${base}_2d`);
    node.input = [flat];
    node.output = [result];
    node.attribute = [intAttr('axis', 1)];
    return [
      makeNode('Shape', names.fresh(`${base}_Shape`), [x], [shape]),
      makeNode('Flatten', names.fresh(`${base}_Flatten`), [x], [flat], [intAttr('axis', axis)]),
      node,
      makeNode('Reshape', names.fresh(`${base}_Reshape`), [result, shape], [y]),
    ];
  } else if (to === 16 && op === 'RoiAlign') {
    if (attribute(node, 'coordinate_transformation_mode') === undefined) node.attribute = [...(node.attribute ?? []), stringAttr('coordinate_transformation_mode', 'output_half_pixel')];
  } else if (to === 18 && REDUCTIONS_18.has(op)) {
    attributeToInput(graph, node, 'axes', 1, names);
  } else if (to === 18 && op === 'Split') {
    if (!node.input?.[1] && attribute(node, 'num_outputs') === undefined) node.attribute = [...(node.attribute ?? []), intAttr('num_outputs', node.output?.length ?? 1)];
  }
  return [node];
}

/** Rewrites the ONNX-domain nodes of `graph` and its subgraphs for crossing into opset `to`. */
function rewriteGraph(graph: onnx.IGraphProto, to: number, names: Names): void {
  const out: onnx.INodeProto[] = [];
  for (const node of graph.node ?? []) {
    for (const a of node.attribute ?? []) {
      if (a.g) rewriteGraph(a.g, to, names);
      for (const g of a.graphs ?? []) rewriteGraph(g, to, names);
    }
    out.push(...(isOnnxDomain(node.domain) ? rewriteNode(graph, node, to, names) : [node]));
  }
  graph.node = out as onnx.NodeProto[];
}

/**
 * Raises `model` to opset `target` (nothing when it is there already) and its IR version to
 * the one that came with it; `why` says what needs it, for the refusal.
 *
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP` naming the file: the model is older than opset 11 (see {@link checkRaisable}).
 */
export function raiseOpset(model: FloatModel, target: number, names: Names, why: string): void {
  const from = model.opset;
  if (from >= target) return;
  checkRaisable(model, target, why);
  for (let to = from + 1; to <= target; to++) rewriteGraph(model.graph, to, names);
  for (const entry of model.model.opsetImport ?? []) if (isOnnxDomain(entry.domain)) entry.version = target;
  const ir = toNumber(model.model.irVersion as number | LongLike | null | undefined);
  if (ir < irVersionFor(target)) model.model.irVersion = irVersionFor(target);
}

/**
 * Whether {@link raiseOpset} can raise `model` to `target`, checked before any batch runs.
 *
 * @throws {UnsupportedOpError} `E_UNSUPPORTED_OP` naming the file: it would have to raise a model older than opset 11.
 */
export function checkRaisable(model: FloatModel, target: number, why: string): void {
  const from = model.opset;
  if (from < target && from < MIN_RAISE_FROM) {
    throw new UnsupportedOpError(
      `${model.source}: ${why} needs opset ${target}; the model imports opset ${from}, and calibrate raises opsets from ${MIN_RAISE_FROM} on. ` +
        `Re-export the model at opset ${Math.max(target, 13)} or later (torch.onnx.export(..., opset_version=17))`,
      { details: { file: model.source, opset: from, needed: target } },
    );
  }
}
