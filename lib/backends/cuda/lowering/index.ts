/**
 * Layer lowerings by layer kind (the table is filled in by lib/backends/cuda/lowering/*).
 */
import { UnsupportedOpError } from '../../../errors';
import type { LoweredStep, LoweringContext } from './types';

export type { BoundTensor, KernelLaunch, KernelSource, LayerLowering, LoweredStep, LoweringContext } from './types';

/** Lowers one layer of a network instantiated at concrete dims into plan steps. */
export function lowerLayer(ctx: LoweringContext): LoweredStep[] {
  throw new UnsupportedOpError(`the cuda backend has no lowering for layer "${ctx.layer.name}" (${ctx.layer.params.kind}) yet`, {
    details: { layer: ctx.layer.name, kind: ctx.layer.params.kind },
  });
}
