/**
 * What converter selection and the conversion context share: the settings selection depends
 * on and the argument-check signature. A leaf module, so `context` and `registry` both
 * depend on it and not on each other's values or types in a loop.
 */
import type { Node } from '../ir/graph';

/** What selection depends on besides the node. */
export interface SelectionSettings {
  /** Ops (targets like `aten.mul.Tensor`) or node names forced to run in a fallback segment. */
  torchExecutedOps?: ReadonlySet<string>;
  /** Allow float64 tensors by computing them in float32 (TensorRT has no float64). */
  truncateDouble?: boolean;
}

/** `true` when the converter can handle the node, otherwise the reason it cannot. */
export type CheckArgs = (node: Node, settings: SelectionSettings) => true | string;
