/**
 * trt.deferred_node (lib/ir/ops/deferred.ts): the node goes back to the frontend that wrote
 * it, with its inputs as this run computed them. Frontends register their runner here at load
 * (lib/frontends/onnx/deferred.ts): the interpreter sits below them and names none.
 */
import { UnsupportedOpError } from '../../errors';
import type { Tensor } from '../../ir/tensor';
import { DEFAULT_CONTROL_FLOW_LIMITS } from '../interpret';
import { defineImpl, type ControlFlowLimits } from '../registry';

/** Imports `node` with `inputs` known and runs it under `limits`: its outputs. */
export type DeferredRunner = (node: string, opset: number, inputs: ReadonlyArray<Tensor | null>, limits: ControlFlowLimits) => Tensor[];

const runners = new Map<string, DeferredRunner>();

/** Registers how `frontend`'s deferred nodes run (once per frontend). */
export function registerDeferredRunner(frontend: string, runner: DeferredRunner): void {
  runners.set(frontend, runner);
}

defineImpl('trt.deferred_node', (a, ctx) => {
  const frontend = a.frontend as string;
  const runner = runners.get(frontend);
  if (runner === undefined) {
    throw new UnsupportedOpError(`node "${ctx.node.name}": it is a ${frontend} node imported at run time, and the ${frontend} frontend is not loaded in this process`, { details: { frontend } });
  }
  return runner(a.node as string, a.opset as number, a.inputs as ReadonlyArray<Tensor | null>, ctx.limits ?? DEFAULT_CONTROL_FLOW_LIMITS);
});
