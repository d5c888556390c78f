/**
 * What converter selection and the conversion context share: the settings selection depends
 * on and the argument-check signature. A leaf module, so `context` and `registry` both
 * depend on it and not on each other's values or types in a loop.
 */
import type { Node } from '../ir/graph';

/**
 * Where a backend's engines can hold a size that only a run tells (a data-dependent symbol of
 * the IR, lib/ir/ops/data-dependent.ts; a nonzero layer's count in the Network), and so which
 * nodes with such sizes go into engine segments: `anywhere`, inside an engine and at its
 * outputs; `inside`, inside an engine only, so such a value never leaves one (its producer
 * runs in a fallback segment instead); `none`, never: a node reading or writing such a size
 * runs in a fallback segment. Such a value never enters an engine from outside it in any
 * case: an engine's run-time inputs are planned from the program's inputs, which a
 * data-dependent size is not.
 */
export type DataDependentSizes = 'anywhere' | 'inside' | 'none';

/**
 * A quantize or dequantize as a backend's build rules see it, made from a Network layer or
 * from an IR node at selection (so one rule set answers both).
 */
export interface QuantizeDescription {
  readonly kind: 'quantize' | 'dequantize';
  /** The quantized type and the float type on the other side. */
  readonly qType: string;
  readonly floatType: string;
  /** The data's shape (-1 for a run-time size). */
  readonly shape: readonly number[];
  readonly scaleDType: string;
  readonly scaleRank: number;
  /** The scale's values when it is a build-time constant, else null. */
  readonly scaleValues: readonly number[] | null;
  /** Absent: no zero point; null: one computed at run time. */
  readonly zeroPointValues?: readonly number[] | null;
  /** Whether the data is a build-time constant. */
  readonly constantData: boolean;
  /** A dequantize whose data a quantize of a constant makes: that quantize (weights, when it is taken whole). */
  readonly quantizedFrom?: QuantizeDescription;
  readonly axis: number;
  readonly blockSize?: number;
}

/** What selection depends on besides the node. */
export interface SelectionSettings {
  /** What the backend's engines can hold of sizes only a run tells (default `none`; compile() gives the chosen backend's). */
  dataDependentSizes?: DataDependentSizes;
  /**
   * Network layer kinds the backend refuses to build, each with why (Backend.refusedLayers):
   * a converter that would emit one refuses the node instead, so it runs in a fallback segment.
   */
  refusedLayers?: Readonly<Partial<Record<string, string>>>;
  /**
   * The quantized types the backend's engines hold over run-time values, between a quantize
   * and a dequantize layer (Backend.activationQuantizedTypes; default: every type the layers
   * take): a Q/DQ node of another type over a run-time value runs in a fallback segment.
   */
  activationQuantizedTypes?: readonly string[];
  /**
   * Why the backend cannot build a quantize or dequantize of this form at all, or null
   * (Backend.quantizeRefusal: the tensorrt backend's FP8/INT4 forms TensorRT takes neither
   * whole nor spelled out): a Q/DQ node it refuses runs in a fallback segment.
   */
  quantizeRefusal?: (d: QuantizeDescription) => string | null;
  /** Ops (targets like `aten.mul.Tensor`) or node names forced to run in a fallback segment. */
  torchExecutedOps?: ReadonlySet<string>;
  /** Allow float64 tensors by computing them in float32 (TensorRT has no float64). */
  truncateDouble?: boolean;
}

/** `true` when the converter can handle the node, otherwise the reason it cannot. */
export type CheckArgs = (node: Node, settings: SelectionSettings) => true | string;
