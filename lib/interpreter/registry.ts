/**
 * The interpreter's op implementations: one function per op target, computing outputs from
 * resolved arguments (tensors for tensor values, numbers for SymInt values) with lib/kernels.
 */
import { InternalError } from '../errors';
import type { Node } from '../ir/graph';
import type { Tensor } from '../ir/tensor';
import type { OptionalValue, StringTensor, TensorSequence } from '../ir/values';

/** An argument after resolution: values replaced by their runtime tensors (or other graph values) or integers. */
export type RuntimeArg = Tensor | StringTensor | TensorSequence | OptionalValue | number | boolean | string | null | readonly RuntimeArg[];

/** What a node computes: a tensor, a SymInt's integer, or one of ONNX's other values (lib/ir/values.ts). */
export type RuntimeValue = Tensor | number | StringTensor | TensorSequence | OptionalValue;

export interface ImplContext {
  readonly node: Node;
  /** Values of the graph's symbols for this run. */
  readonly symbols: ReadonlyMap<string, number>;
  /** The run's bounds on control flow (absent: the defaults of lib/interpreter/ops/control-flow.ts). */
  readonly limits?: ControlFlowLimits;
}

/** What keeps a control-flow op from running without end or growing without bound. */
export interface ControlFlowLimits {
  /** Iterations one Loop node may run per execution. */
  readonly maxLoopIterations: number;
  /** Bytes a loop-carried or stacked scan output may reach. */
  readonly maxTensorBytes: number;
}

export type ImplFn = (args: Readonly<Record<string, RuntimeArg>>, ctx: ImplContext) => RuntimeValue[];

const impls = new Map<string, ImplFn>();

/** Registers how the interpreter computes `target`. */
export function defineImpl(target: string, fn: ImplFn): void {
  if (impls.has(target)) throw new InternalError(`interpreter: ${target} is implemented twice`);
  impls.set(target, fn);
}

export function getImpl(target: string): ImplFn | undefined {
  return impls.get(target);
}

export function implementedOps(): string[] {
  return [...impls.keys()].sort();
}
