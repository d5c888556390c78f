/**
 * The public shapes of post-training calibration (`calibrate()`, ./index.ts): its options, the
 * progress it reports and the report it returns.
 */
import type { Logger } from '../logger';
import type { Tensor } from '../ir/tensor';

/**
 * How an activation's clipping range (amax, the largest |x| kept) is read from the values the
 * calibration batches produced:
 * - `minmax`: the largest |x| seen;
 * - `percentile`: the given percentile of |x| over every value seen (nearest rank);
 * - `entropy`: TensorRT's entropy calibration (IInt8EntropyCalibrator2's method): the clip of a
 *   2048-bin histogram of |x| whose 128-level quantization loses the least information
 *   (KL divergence), which cuts off a heavy tail.
 */
export type CalibrationMethod = 'minmax' | 'entropy' | 'percentile';

/** `int8`: symmetric int8 (scale = amax / 127, zero point 0). `fp8`: float8e4m3fn (scale = amax / 448; opset 19). */
export type CalibrationPrecision = 'int8' | 'fp8';

/** One batch of calibration data: a tensor for every input of the model, by input name. */
export type CalibrationBatch = Readonly<Record<string, Tensor>>;

/** What runs the float model to observe its activations. */
export type CalibrationRunner = 'auto' | 'onnxruntime' | 'interpreter';

/** Progress of a calibration, told after each batch. */
export interface CalibrationProgress {
  /** Batches run so far. */
  readonly batches: number;
}

export interface CalibrateOptions {
  /** Default `minmax`. */
  method?: CalibrationMethod;
  /** The percentile of |x| that `percentile` keeps, in (0, 100]; default 99.99. */
  percentile?: number;
  /** Default `int8`. */
  precision?: CalibrationPrecision;
  /**
   * Weights of Conv, ConvTranspose, MatMul and Gemm quantized with a scale per output channel
   * (default true; needs opset 13, to which the model is raised); false: one scale a weight.
   */
  perChannelWeights?: boolean;
  /**
   * The op types whose inputs get QuantizeLinear→DequantizeLinear pairs (default Conv,
   * ConvTranspose, MatMul, Gemm: those TensorRT fuses Q/DQ into). Of the four, constant weights
   * are stored quantized and biases stay float; any other op type listed gets a pair on each
   * input that is not a constant.
   */
  ops?: readonly string[];
  /** Names of nodes to leave in float. */
  exclude?: readonly string[];
  /** Also write the Q/DQ model to this path. */
  output?: string;
  /** External-data files of a model given as bytes are relative to this folder (a path's own folder by default). */
  baseDir?: string;
  /**
   * What runs the float model: `onnxruntime` (onnxruntime-node, on a worker thread), or our
   * `interpreter` (JavaScript, 50-100× slower). `auto` (the default): onnxruntime where it is
   * installed.
   */
  runner?: CalibrationRunner;
  /** Told after each batch. */
  onProgress?: (progress: CalibrationProgress) => void;
  /** Stops the calibration: it rejects with AbortedError (`E_ABORTED`). */
  signal?: AbortSignal;
  /** Warnings (an op type of `ops` the model lacks...) and info lines; DEBUG=tensorrt-node prints them otherwise. */
  logger?: Logger;
}

/** An activation's calibration result: a QuantizeLinear→DequantizeLinear pair on this tensor. */
export interface ActivationReport {
  /** The tensor's name in the float model. */
  readonly tensor: string;
  /** The nodes whose input it is quantized for. */
  readonly consumers: readonly string[];
  /** The clipping range chosen by the method. */
  readonly amax: number;
  /** The largest |x| seen (equal to amax for minmax). */
  readonly max: number;
  /** The scale written (amax / 127 for int8, amax / 448 for fp8, as float32). */
  readonly scale: number;
  readonly method: CalibrationMethod;
  /** Values seen over every batch. */
  readonly count: number;
}

/** A weight stored quantized, with a DequantizeLinear in front of its consumers. */
export interface WeightReport {
  /** The float weight's name (an initializer or a Constant's output). */
  readonly tensor: string;
  readonly consumers: readonly string[];
  /** The axis of the per-channel scales; null for one scale. */
  readonly axis: number | null;
  /** max |w| per channel along `axis` (one entry for one scale). */
  readonly amax: readonly number[];
  readonly scale: readonly number[];
}

/** Something of the model left in float, and why. */
export interface SkippedReport {
  /** The node (or `tensor "name"`) concerned. */
  readonly what: string;
  readonly reason: string;
}

export interface CalibrationReport {
  readonly method: CalibrationMethod;
  /** The percentile used (for `percentile`). */
  readonly percentile?: number;
  readonly precision: CalibrationPrecision;
  readonly perChannelWeights: boolean;
  /** Batches run. */
  readonly batches: number;
  /** What ran the float model (`none`: every observed tensor was a model input, read from the batches). */
  readonly runner: 'onnxruntime' | 'interpreter' | 'none';
  /** The default-domain opset before and after (raised where Q/DQ needs it). */
  readonly opset: { readonly from: number; readonly to: number };
  readonly activations: readonly ActivationReport[];
  readonly weights: readonly WeightReport[];
  /** Nodes that got at least one quantized input, and their count. */
  readonly quantizedNodes: number;
  readonly quantizedNodeNames: readonly string[];
  readonly skipped: readonly SkippedReport[];
  /** Everything the logger was warned of. */
  readonly warnings: readonly string[];
  /** Seconds spent running batches, and in all. */
  readonly seconds: { readonly observe: number; readonly total: number };
}

export interface CalibrationResult {
  /** The Q/DQ model, serialized. */
  readonly model: Uint8Array;
  readonly report: CalibrationReport;
}
