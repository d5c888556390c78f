/**
 * Layer lowerings by layer kind: a table with one entry per kind of the catalogue (the
 * compiler rejects a table that misses one), and the dispatch the backend calls.
 */
import { InternalError, UnsupportedOpError } from '../../../errors';
import type { LayerKind } from '../../../network';
import { attention } from './attention';
import { concat, constant, fill, identity, shape, shuffle, slice } from './data';
import { gather, resize, scatter, topk } from './indexing';
import { convolution, deconvolution, matmul } from './linalg';
import { cumulative, normalization, pooling, reduce, softmax } from './nn';
import { activation, cast, elementwise, select, unary } from './pointwise';
import { unsupported } from './kernel';
import type { LayerLowering, LoweredStep, LoweringContext } from './types';

export type { BoundTensor, KernelLaunch, KernelSource, LayerLowering, LoweredStep, LoweringContext } from './types';
export { PRELUDE } from './prelude';

/** Never reached: the build refuses a nonzero or nms layer first (its output size is known only after a run; plans are made before). */
const runTimeSized: LayerLowering = (ctx) => unsupported(ctx, 'its output size depends on tensor data, and this backend plans every buffer before a run');

/** Quantize and dequantize layers never reach lowering: the spell-out-quantization pass rewrites every one. */
const spelledOut: LayerLowering = (ctx) => {
  throw new InternalError(`cuda backend: layer "${ctx.layer.name}" (${ctx.layer.params.kind}) reached lowering; the spell-out-quantization pass rewrites these`);
};

export const LOWERINGS: Readonly<Record<LayerKind, LayerLowering>> = {
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
  nonzero: runTimeSized,
  nms: runTimeSized,
  unique: runTimeSized,
  quantize: spelledOut,
  dequantize: spelledOut,
};

/** Lowers one layer of a network instantiated at concrete dims into plan steps. */
export function lowerLayer(ctx: LoweringContext): LoweredStep[] {
  const kind = ctx.layer.params.kind;
  const lower = Object.hasOwn(LOWERINGS, kind) ? LOWERINGS[kind] : undefined;
  if (!lower) {
    throw new UnsupportedOpError(`the cuda backend has no lowering for layer "${ctx.layer.name}" (${String(kind)})`, {
      details: { layer: ctx.layer.name, kind: String(kind) },
    });
  }
  return lower(ctx);
}
