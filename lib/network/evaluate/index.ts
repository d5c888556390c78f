/** The reference backend's executor for every layer kind, and what it cannot run. */
import type { Layer, LayerKind, LayerParams } from '..';
import type { Tensor } from '../../ir/tensor';
import { attentionLayer } from './attention';
import type { Executor } from './common';
import { concat, constant, fill, identity, shape, shuffle, slice } from './data';
import { gather, nms, nonzero, resize, scatter, topk, unique } from './indexing';
import { convolution, cumulative, deconvolution, matmul, normalization, pooling, reduce, softmax } from './nn';
import { activation, cast, elementwise, select, unary } from './pointwise';
import { dequantize, quantize } from './quantize';

export type { Executor, LayerContext } from './common';

/** One executor per layer kind (a mutable table, looked up at each call, so tests can stub one). */
export const executors: { [K in LayerKind]: Executor<K> } = {
  constant,
  identity,
  cast,
  elementwise,
  unary,
  activation,
  matmul,
  attention: attentionLayer,
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

/** Runs `layer` on its concrete inputs. */
export function executeLayer(layer: Layer, inputs: ReadonlyArray<Tensor | null>): Tensor[] {
  const run = executors[layer.params.kind] as Executor<LayerKind>;
  return run(layer.params as never, inputs, { name: layer.name, kind: layer.params.kind });
}

/** Why the reference backend cannot run a layer with these parameters, or null when it can. */
export function unsupportedReason(params: LayerParams): string | null {
  if (params.kind === 'resize' && params.mode === 'cubic') return 'cubic resize is not implemented';
  if (params.kind === 'gather' && params.mode === 'default' && (params.nbElementWiseDims ?? 0) !== 0) {
    return 'default-mode gather with nbElementWiseDims is not implemented';
  }
  return null;
}
