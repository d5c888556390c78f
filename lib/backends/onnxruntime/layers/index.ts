/**
 * Network → ONNX ModelProto bytes. Opset: the model imports ONNX opset {@link ONNX_OPSET}
 * (the ops and attribute forms ./lower-*.ts emit are those of opsets 13-18; onnxruntime
 * 1.14 and later run it), 19 or 21 where its quantization needs them ({@link onnxOpset}), and, for the fused GELU kernels only, onnxruntime's com.microsoft
 * domain version 1. Weights become initializers, shape tensors int64 values, and every node
 * is named after its layer (`layer`, `layer#1`, ...), so that an onnxruntime error naming a
 * node names the layer. Only the layers that reach an output are lowered (TensorRT prunes
 * the rest too).
 */
import { InternalError, TensorRTNodeError } from '../../../errors';
import type { DType } from '../../../ir/dtype';
import { liveLayers, type LayerKind, type Network } from '../../../network';
import { VERSION } from '../../../version';
import { unsupportedError, type LowerContext, type Lowering } from './context';
import { concat, constant, fill, shape, shuffle, slice } from './data';
import { gather, nms, nonzero, resize, scatter, topk, unique } from './indexing';
import { attention, convolution, cumulative, deconvolution, matmul, normalization, pooling, reduce, softmax } from './nn';
import { activation, cast, elementwise, identity, select, unary } from './pointwise';
import { dequantize, quantize } from './quantize';
import { onnxDType, OnnxGraph } from './onnx-graph';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto') as typeof import('onnx-proto');

export const ONNX_OPSET = 18;
/** The ONNX IR version that goes with opset 18. */
export const ONNX_IR_VERSION = 8;

/**
 * The opset a network's model imports: {@link ONNX_OPSET}, or the one its quantization needs
 * (QuantizeLinear/DequantizeLinear and Cast of float8e4m3fn: 19; of int4, and blocked scales: 21).
 */
export function onnxOpset(network: Network): number {
  let opset = ONNX_OPSET;
  for (const t of network.tensors) if (t.dtype === 'float8e4m3fn') opset = Math.max(opset, 19);
  for (const t of network.tensors) if (t.dtype === 'int4') opset = Math.max(opset, 21);
  for (const l of network.layers) if ((l.params.kind === 'quantize' || l.params.kind === 'dequantize') && l.params.blockSize !== undefined) opset = Math.max(opset, 21);
  return opset;
}

/** The ONNX IR version that goes with `opset` (float8 types came with IR 9, int4 with IR 10). */
export const irVersionOf = (opset: number): number => (opset >= 21 ? 10 : opset >= 19 ? 9 : ONNX_IR_VERSION);

/** One lowering per layer kind; the mapped type makes a kind without one a compile error. */
export const LOWERINGS: { [K in LayerKind]: Lowering<K> } = {
  constant,
  identity,
  cast,
  elementwise,
  unary,
  activation,
  matmul,
  attention,
  shuffle,
  slice,
  concat,
  gather,
  scatter,
  reduce,
  softmax,
  shape,
  fill,
  select,
  convolution,
  deconvolution,
  pooling,
  normalization,
  resize,
  topk,
  cumulative,
  nonzero,
  nms,
  unique,
  quantize,
  dequantize,
};

/**
 * The element type a network input or output has at the session's boundary: onnxruntime-node
 * has no bfloat16 or float8 tensors, so bfloat16 and float8e4m3fn cross as float32, and int4
 * (which it holds packed) as int8, all exact both ways, and are cast inside.
 */
export const boundaryDType = (dtype: DType): DType => (dtype === 'bfloat16' || dtype === 'float8e4m3fn' ? 'float32' : dtype === 'int4' ? 'int8' : dtype);

function valueInfo(name: string, dtype: DType, shape: readonly number[]): object {
  const dim = shape.map((d, i) => (d >= 0 ? { dimValue: d } : { dimParam: `${name}_dim${i}` }));
  return { name, type: { tensorType: { elemType: onnxDType(dtype), shape: { dim } } } };
}

/** Lowers `network` into a GraphProto-shaped object and the graph writer that holds its nodes. */
export function lowerNetwork(network: Network): { graph: object; usesMicrosoftDomain: boolean } {
  const g = new OnnxGraph();
  const names = new Map<number, string>();
  const inputs = network.inputs.map((input) => {
    const t = network.tensor(input.tensor);
    const outside = boundaryDType(t.dtype);
    g.setOwner(`input ${input.name}`);
    names.set(input.tensor, g.cast(input.name, outside, t.dtype));
    return valueInfo(input.name, outside, t.shape);
  });
  for (const layer of liveLayers(network)) {
    g.setOwner(layer.name);
    const context: LowerContext = {
      g,
      layer,
      has: (i) => layer.inputs[i] !== undefined && layer.inputs[i] !== null,
      input: (i) => {
        const id = layer.inputs[i];
        const name = id === undefined || id === null ? undefined : names.get(id);
        if (name === undefined) throw new InternalError(`onnxruntime backend: layer "${layer.name}" input ${i} is missing or not computed`);
        return name;
      },
      inputDType: (i) => network.tensor(layer.inputs[i]!).dtype,
      inputShape: (i) => network.tensor(layer.inputs[i]!).shape,
      outputDType: (k) => network.tensor(layer.outputs[k]!).dtype,
      outputShape: (k) => network.tensor(layer.outputs[k]!).shape,
      unsupported: (why) => {
        throw unsupportedError(layer, why);
      },
    };
    let outs: string[];
    try {
      outs = (LOWERINGS[layer.params.kind] as Lowering<LayerKind>)(layer.params, context);
    } catch (error) {
      if (error instanceof TensorRTNodeError) throw error;
      throw new InternalError(`onnxruntime backend: lowering layer "${layer.name}" (${layer.params.kind}) failed: ${(error as Error).message}`, { cause: error });
    }
    if (outs.length !== layer.outputs.length) throw new InternalError(`onnxruntime backend: layer "${layer.name}" lowered to ${outs.length} outputs, it has ${layer.outputs.length}`);
    layer.outputs.forEach((id, k) => names.set(id, outs[k]!));
  }
  const outputs = network.outputs.map((o) => {
    const t = network.tensor(o.tensor);
    const outside = boundaryDType(t.dtype);
    g.setOwner(`output ${o.name}`);
    const value = names.get(o.tensor);
    if (value === undefined) throw new InternalError(`onnxruntime backend: output "${o.name}" is not computed`);
    const cast = g.cast(value, t.dtype, outside);
    g.node('Identity', [cast], {}, [o.name]);
    return valueInfo(o.name, outside, t.shape);
  });
  const initializer = g.usedInitializers(network.outputs.map((o) => o.name));
  return { graph: { name: network.name, node: g.nodes, initializer, input: inputs, output: outputs }, usesMicrosoftDomain: g.usesMicrosoftDomain };
}

/** The ONNX model of `network`, serialized. */
export function networkToOnnx(network: Network): Uint8Array {
  const { graph, usesMicrosoftDomain } = lowerNetwork(network);
  const opset = onnxOpset(network);
  const opsetImport = [{ domain: '', version: opset }, ...(usesMicrosoftDomain ? [{ domain: 'com.microsoft', version: 1 }] : [])];
  const model = { irVersion: irVersionOf(opset), opsetImport, producerName: 'tensorrt-node', producerVersion: VERSION, graph };
  return onnx.ModelProto.encode(model as never).finish();
}
