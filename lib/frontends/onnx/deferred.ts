/**
 * ONNX nodes imported at run time (the IR's trt.deferred_node, lib/ir/ops/deferred.ts): an op
 * whose mapper needs an input known at import (a Reshape's shape, a Slice's starts, a TopK's
 * K, a Resize's sizes...) that the model computes from tensor data. Rather than refuse the
 * model, the importer records the node as the file wrote it, typed by the rules below (each
 * output's dtype and rank from the op's definition; sizes data-dependent, or an input's shape
 * where the op keeps it), and every run imports that one node with its inputs as constants
 * and interprets it. Programs run such a node, and whatever reads its outputs, in fallback
 * segments (no converter takes it): the same values as ONNX computes, at the interpreter's
 * speed. A node whose output types the rules cannot tell without the values stays refused.
 */
import { onnx } from 'onnx-proto';

import { BadInputError, BadModelError, ResourceLimitError, UnsupportedOpError } from '../../errors';
import { call } from '../../ir/builder';
import { dtypeInfo, type DType } from '../../ir/dtype';
import type { Graph, Value } from '../../ir/graph';
import { DEFERRED_NODE } from '../../ir/ops/deferred';
import { isStatic } from '../../ir/symbolic';
import type { Tensor } from '../../ir/tensor';
import { interpret } from '../../interpreter';
import type { ControlFlowLimits } from '../../interpreter/registry';
import type { OnnxContext } from './context';
import { dtypeFromOnnx, ONNX_DTYPES } from './tensor-proto';

/**
 * What a node's outputs are: per output, a dtype and either a rank (with `sizes`, those known
 * at import: null for a data-dependent one) or the input whose shape it keeps.
 */
type OutputRule = (ctx: OnnxContext) => Array<{ dtype: DType; rank?: number; sizes?: ReadonlyArray<number | null>; keep?: number }> | null;

/** The static length of 1-D input `i`, or null. */
function lengthOf(ctx: OnnxContext, i: number): number | null {
  if (!ctx.hasInput(i)) return null;
  const shape = ctx.inputType(i).shape;
  return shape.length === 1 && isStatic(shape[0]!) ? shape[0] : null;
}

const rankOf = (ctx: OnnxContext, i: number): number => ctx.inputType(i).shape.length;
const dtypeOf = (ctx: OnnxContext, i: number): DType => ctx.inputType(i).dtype;

/** The dtype of the output_datatype attribute (float32 by default). */
const outputDataType = (ctx: OnnxContext): DType => dtypeFromOnnx(ctx.attrInt('output_datatype', 1), `${ctx.where}: attribute output_datatype`);

/** The dtype of a nonzero output_dtype attribute (Q/DQ from opset 21), else null. */
function outputDType(ctx: OnnxContext): DType | null {
  const code = ctx.has('output_dtype') ? ctx.attrInt('output_dtype') : 0;
  return code === 0 ? null : dtypeFromOnnx(code, `${ctx.where}: attribute output_dtype`);
}

/** The first input's dtype and rank, sizes from the run (Slice, Pad, Resize, Tile...). */
const sameRank: OutputRule = (ctx) => [{ dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) }];
/** The first input's dtype and shape (CumSum's axis, Trilu's k change no size). */
const sameShape: OutputRule = (ctx) => [{ dtype: dtypeOf(ctx, 0), keep: 0 }];

/** keepdims=0 drops one axis per entry of the axes input; none given reduces every axis, unless noop_with_empty_axes. */
const reduce: OutputRule = (ctx) => {
  const x = { dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) };
  if (ctx.attrInt('keepdims', 1) === 1) return [x];
  const axes = lengthOf(ctx, 1);
  if (axes === null) return null;
  if (axes === 0) return [ctx.attrInt('noop_with_empty_axes', 0) === 1 ? x : { ...x, rank: 0 }];
  return [{ ...x, rank: x.rank - axes }];
};

const RULES: Readonly<Record<string, OutputRule>> = {
  Reshape: (ctx) => {
    const n = lengthOf(ctx, 1);
    return n === null ? null : [{ dtype: dtypeOf(ctx, 0), rank: n }];
  },
  // Broadcasting keeps every static size of x above 1 (the shape's entry there is 1 or that size).
  Expand: (ctx) => {
    const n = lengthOf(ctx, 1);
    if (n === null) return null;
    const x = ctx.inputType(0).shape;
    const rank = Math.max(n, x.length);
    const sizes = Array.from({ length: rank }, (_, i) => {
      const d = x[i - (rank - x.length)];
      return d !== undefined && isStatic(d) && d > 1 ? d : null;
    });
    return [{ dtype: dtypeOf(ctx, 0), rank, sizes }];
  },
  ConstantOfShape: (ctx) => {
    const n = lengthOf(ctx, 0);
    const value = ctx.attrTensor('value');
    return n === null ? null : [{ dtype: value?.dtype ?? 'float32', rank: n }];
  },
  Tile: sameRank,
  Slice: sameRank,
  Pad: sameRank,
  Resize: sameRank,
  Upsample: sameRank,
  CenterCropPad: sameRank,
  Range: (ctx) => [{ dtype: dtypeOf(ctx, 0), rank: 1 }],
  TopK: (ctx) => [
    { dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) },
    { dtype: 'int64', rank: rankOf(ctx, 0) },
  ],
  Split: (ctx) => {
    const outputs = ctx.node.outputs.length;
    return Array.from({ length: outputs }, () => ({ dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) }));
  },
  Squeeze: (ctx) => {
    const n = lengthOf(ctx, 1);
    return n === null ? null : [{ dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) - n }];
  },
  Unsqueeze: (ctx) => {
    const n = lengthOf(ctx, 1);
    return n === null ? null : [{ dtype: dtypeOf(ctx, 0), rank: rankOf(ctx, 0) + n }];
  },
  OneHot: (ctx) => [{ dtype: dtypeOf(ctx, 2), rank: rankOf(ctx, 0) + 1 }],
  CumSum: sameShape,
  CumProd: sameShape,
  Trilu: sameShape,
  MaxUnpool: sameRank,
  DFT: sameRank,
  // [batch, frames, bins, 2].
  STFT: (ctx) => [{ dtype: dtypeOf(ctx, 0), rank: 4 }],
  // [N, H, W, 2] for a size [N, C, H, W]; [N, D, H, W, 3] for [N, C, D, H, W].
  AffineGrid: (ctx) => {
    const n = lengthOf(ctx, 1);
    return n === null ? null : [{ dtype: dtypeOf(ctx, 0), rank: n }];
  },
  // [N, C, ...image_shape].
  Col2Im: (ctx) => {
    const n = lengthOf(ctx, 1);
    return n === null ? null : [{ dtype: dtypeOf(ctx, 0), rank: 2 + n }];
  },
  // [selected, 3]: batch, class, box.
  NonMaxSuppression: () => [{ dtype: 'int64', rank: 2 }],
  MelWeightMatrix: (ctx) => [{ dtype: outputDataType(ctx), rank: 2 }],
  // The scales' values set the arithmetic, not the sizes: the data's shape; the type of the
  // zero point (float8/float4 ones must be 0, which only the values can show).
  QuantizeLinear: (ctx) => [{ dtype: outputDType(ctx) ?? (ctx.hasInput(2) ? dtypeOf(ctx, 2) : 'uint8'), keep: 0 }],
  DequantizeLinear: (ctx) => [{ dtype: outputDType(ctx) ?? dtypeOf(ctx, 1), keep: 0 }],
  // Matrix product broadcasting: the larger rank (a 1-D operand drops an axis: not taken); the type of y's zero point.
  QLinearMatMul: (ctx) => (rankOf(ctx, 0) < 2 || rankOf(ctx, 3) < 2 ? null : [{ dtype: dtypeOf(ctx, 7), rank: Math.max(rankOf(ctx, 0), rankOf(ctx, 3)) }]),
  HannWindow: (ctx) => [{ dtype: outputDataType(ctx), rank: 1 }],
  HammingWindow: (ctx) => [{ dtype: outputDataType(ctx), rank: 1 }],
  BlackmanWindow: (ctx) => [{ dtype: outputDataType(ctx), rank: 1 }],
  ...Object.fromEntries(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare'].map((op) => [op, reduce])),
};

/** The ONNX TensorProto.DataType of each dtype. */
const ONNX_CODE = new Map<DType, number>(Object.entries(ONNX_DTYPES).flatMap(([code, dtype]) => (dtype === undefined ? [] : [[dtype, Number(code)] as const])));

/** Whether an import refusal is a mapper asking for an input known at import that the model computes. */
export function needsKnownInput(error: unknown): boolean {
  return error instanceof UnsupportedOpError && (error.details as { needsKnownInput?: boolean } | undefined)?.needsKnownInput === true;
}

/**
 * The node as a trt.deferred_node, or null when its op has no rule (or the rule cannot tell
 * its outputs' ranks: an input of unknown length). `ctx` sees the node as the mapper did (an
 * older opset's form upgraded: Upsample as Resize); `node` is the node as the file wrote it,
 * imported again at every run at the model's opset `opset`, with its own inputs (`valueOf`
 * gives each by name).
 */
export function deferNode(ctx: OnnxContext, node: onnx.INodeProto, opset: number, valueOf: (name: string) => Value): Value[] | null {
  if (ctx.node.domain !== '' && ctx.node.domain !== 'ai.onnx') return null;
  const rule = RULES[ctx.node.opType];
  const outputs = rule?.(ctx) ?? null;
  if (outputs === null || outputs.some((o) => (o.rank ?? 0) < 0)) return null;
  const inputs = (node.input ?? []).map((name) => (name === '' ? null : valueOf(name)));
  const encoded = Buffer.from(onnx.NodeProto.encode(onnx.NodeProto.fromObject(node)).finish()).toString('base64');
  const n = call(
    ctx.graph,
    DEFERRED_NODE,
    {
      inputs,
      frontend: 'onnx',
      node: encoded,
      opset,
      key: ctx.sizeKey('deferred'),
      dtypes: outputs.map((o) => o.dtype),
      ranks: outputs.map((o) => o.rank ?? 0),
      keep: outputs.map((o) => o.keep ?? -1),
      sizes: outputs.flatMap((o) => (o.keep !== undefined ? [] : Array.from({ length: o.rank ?? 0 }, (_, d) => o.sizes?.[d] ?? -1))),
    },
    { name: ctx.node.name, where: ctx.where },
  );
  return n.outputs;
}

/** The importer of a decoded model (import.ts's importModel, passed in: import.ts imports this module). */
export type ModelImporter = (model: onnx.ModelProto, options: { source: string; constantInputs: Readonly<Record<string, Tensor>> }) => Graph;

/**
 * Runs a deferred node: a model of that one node, every input a graph input fixed at import
 * (`constantInputs`), so the node's mapper sees them as the constants it needs. The frontend's
 * index.ts registers it as the interpreter's runner of ONNX's deferred nodes.
 */
export function runDeferred(importModel: ModelImporter, encoded: string, opset: number, inputs: ReadonlyArray<Tensor | null>, limits: ControlFlowLimits): Tensor[] {
  let node: onnx.NodeProto;
  try {
    node = onnx.NodeProto.decode(Buffer.from(encoded, 'base64'));
  } catch (error) {
    // Only a damaged or forged program file holds such bytes: the importer wrote them.
    throw new BadModelError(`a node imported at run time holds no ONNX node (${(error as Error).message})`, { cause: error });
  }
  if (!node.opType) throw new BadModelError('a node imported at run time holds an ONNX node without an op type');
  const name = (i: number): string => `input_${i}`;
  const constants: Record<string, Tensor> = {};
  const graphInputs: onnx.IValueInfoProto[] = [];
  inputs.forEach((t, i) => {
    if (t === null) return;
    constants[name(i)] = t;
    graphInputs.push({ name: name(i), type: { tensorType: { elemType: ONNX_CODE.get(t.dtype), shape: { dim: t.shape.map((d) => ({ dimValue: d })) } } } });
  });
  const outputs = node.output.map((_, k) => `output_${k}`);
  const model = onnx.ModelProto.create({
    irVersion: 10,
    opsetImport: [{ domain: '', version: opset }],
    graph: {
      name: 'deferred',
      node: [{ ...node, input: inputs.map((t, i) => (t === null ? '' : name(i))), output: outputs }],
      input: graphInputs,
      output: outputs.map((o) => ({ name: o })),
    },
  });
  let graph: Graph;
  try {
    graph = importModel(model, { source: `ONNX node "${node.name || node.opType}" (${node.opType}) at run time`, constantInputs: constants });
  } catch (error) {
    // The values this run computed make no valid node (a shape whose sizes do not fit the
    // data, a K above the axis): the run's fault, as onnxruntime fails that run.
    if (error instanceof BadModelError) throw new BadInputError(`with the values this run computed for its inputs: ${error.message}`, { cause: error, details: error.details });
    throw error;
  }
  // Sizes only this run's values tell, checked before anything is allocated: every value of
  // the imported node is typed with static sizes now.
  for (const n of graph.nodes) {
    for (const v of n.outputs) {
      if (v.type.kind !== 'tensor' || !v.type.shape.every(isStatic)) continue;
      const bytes = (v.type.shape as number[]).reduce((p, d) => p * d, dtypeInfo(v.type.dtype).itemBytes);
      if (bytes > limits.maxTensorBytes) {
        throw new ResourceLimitError(`ONNX node "${node.name || node.opType}" (${node.opType}): with this run's values it makes a ${v.type.dtype} tensor of shape [${v.type.shape.join(', ')}] (${bytes} bytes), more than maxTensorBytes (${limits.maxTensorBytes})`, {
          details: { bytes, maxTensorBytes: limits.maxTensorBytes },
        });
      }
    }
  }
  return interpret(graph, [], { limits });
}
