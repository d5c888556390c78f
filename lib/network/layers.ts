/**
 * TensorRT 10.x layers as data. Each kind carries the parameters the matching
 * INetworkDefinition::add* call and its setters take; inputs and outputs are tensor ids of
 * the owning Network. Semantics follow TensorRT, not PyTorch: elementwise inputs must have
 * equal rank (a 1 broadcasts), slice takes sizes not ends, shuffle's reshape treats 0
 * literally unless `zeroIsPlaceholder`, there are no bool or uint8 constants, and a shape
 * layer yields int64. Converters (lib/conversion) bridge the difference.
 */
import type { Tensor } from '../ir/tensor';

/**
 * TensorRT's DataType values this project uses. `float8e4m3fn` (kFP8) and `int4` (kINT4) are
 * the quantized types: a quantize layer produces them and a dequantize layer consumes them.
 */
export type TrtDType = 'float32' | 'float16' | 'bfloat16' | 'int8' | 'uint8' | 'int32' | 'int64' | 'bool' | 'float8e4m3fn' | 'int4';

export const TRT_DTYPES: readonly TrtDType[] = ['float32', 'float16', 'bfloat16', 'int8', 'uint8', 'int32', 'int64', 'bool', 'float8e4m3fn', 'int4'];

/** What a quantize layer produces (TensorRT's IQuantizeLayer takes int8, FP8 and INT4; uint8 is ONNX's own). */
export type QuantizedDType = 'int8' | 'uint8' | 'float8e4m3fn' | 'int4';

/** TensorRT's Dims::MAX_DIMS. */
export const MAX_RANK = 8;

export type ElementWiseOp =
  | 'sum'
  | 'prod'
  | 'max'
  | 'min'
  | 'sub'
  | 'div'
  | 'pow'
  | 'floor_div'
  | 'and'
  | 'or'
  | 'xor'
  | 'equal'
  | 'greater'
  | 'less';

export type UnaryOp =
  | 'exp'
  | 'log'
  | 'sqrt'
  | 'recip'
  | 'abs'
  | 'neg'
  | 'sin'
  | 'cos'
  | 'tan'
  | 'sinh'
  | 'cosh'
  | 'asin'
  | 'acos'
  | 'atan'
  | 'asinh'
  | 'acosh'
  | 'atanh'
  | 'ceil'
  | 'floor'
  | 'erf'
  | 'not'
  | 'sign'
  | 'round'
  | 'isinf'
  | 'isnan';

export type ActivationType =
  | 'relu'
  | 'sigmoid'
  | 'tanh'
  | 'leaky_relu'
  | 'elu'
  | 'selu'
  | 'softsign'
  | 'softplus'
  | 'clip'
  | 'hard_sigmoid'
  | 'scaled_tanh'
  | 'thresholded_relu'
  | 'gelu_erf'
  | 'gelu_tanh';

export type ReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';
export type MatrixOp = 'none' | 'transpose' | 'vector';
export type SampleMode = 'strict_bounds' | 'wrap' | 'clamp' | 'fill' | 'reflect';
export type GatherMode = 'default' | 'element' | 'nd';
export type ScatterMode = 'element' | 'nd';
export type PoolingType = 'max' | 'average';
export type ResizeMode = 'nearest' | 'linear' | 'cubic';
export type ResizeCoordinateTransformation = 'align_corners' | 'asymmetric' | 'half_pixel';
export type ResizeSelector = 'formula' | 'upper';
export type ResizeRoundMode = 'half_up' | 'half_down' | 'floor' | 'ceil';

/** The parameters convolution and deconvolution layers share (IConvolutionLayer / IDeconvolutionLayer). */
export interface ConvolutionParams {
  nbOutputMaps: number;
  kernelSize: number[];
  stride: number[];
  prePadding: number[];
  postPadding: number[];
  dilation: number[];
  groups: number;
  kernel: Tensor;
  bias: Tensor | null;
  /**
   * Convolution only, made by the cuda backend's layout pass (never by a frontend): the input
   * and output are [N, spatial..., C] and the kernel is [K, spatial..., C / groups]
   * (channels-last, what cuDNN's tensor-core kernels read fastest in fp16/bf16).
   */
  channelsLast?: boolean;
  /**
   * Convolution only, made by the cuda backend's epilogue pass: applied to
   * conv + bias (+ the residual, input 3, of the output's shape) before the output is stored.
   */
  activation?: 'relu';
}

/**
 * An attention layer as the cuda backend's attention pass leaves it
 * (lib/backends/cuda/passes/fuse-attention.ts): its inputs are the sources of query, key and
 * value (and the mask), read through the views that stood before them (transposes, a GQA
 * repeat's stride-0 slice and reshapes), and its output is written through the transpose after
 * it, so every operand is given as element strides into its input's dense bytes.
 * `denseAttention` (lib/network/attention.ts) gives the plain layer's own.
 */
export interface AttentionParams {
  /** The batch box, outer first (batch and heads, split where a GQA repeat walks its groups). */
  batch: number[];
  seqQ: number;
  seqKV: number;
  /** The head dim of Q, K and V (the output's too); contiguous in every operand. */
  headDim: number;
  /** Multiplies Q·Kᵀ before the mask. */
  scale: number;
  /** Query i attends to key j only where j ≤ i (top-left aligned, PyTorch's is_causal). */
  causal: boolean;
  /** Strides over [...batch, row] of query, key, value and the output. */
  query: number[];
  key: number[];
  value: number[];
  output: number[];
  /**
   * Where query, key and value start, in elements, inside their inputs' dense bytes (0 when
   * absent): an operand read from a column slice of a wider tensor, as
   * lib/backends/cuda/passes/merge-matmuls.ts leaves the projections of one wide Q/K/V GEMM.
   */
  offsets?: number[];
  /** Strides over [...batch, query row, key column] of input 3: a bool mask (−∞ where false) or a float one (added). */
  mask?: number[];
  /** The output tensor's dims (the attention writes through the transpose after it). */
  outputShape: number[];
}

/**
 * Parameters per layer kind. Optional tensor inputs (shape tensors) are documented per kind;
 * an input given as a tensor overrides the static parameter of the same role.
 */
export type LayerParams =
  /** No inputs; the weights are the output. Dtype must not be bool or uint8. */
  | { kind: 'constant'; weights: Tensor }
  | { kind: 'identity' }
  | { kind: 'cast'; to: TrtDType }
  /** Inputs: a, b (same rank and dtype; 1 broadcasts). Comparisons give bool. */
  | { kind: 'elementwise'; op: ElementWiseOp }
  | { kind: 'unary'; op: UnaryOp }
  | { kind: 'activation'; type: ActivationType; alpha?: number; beta?: number }
  /** Inputs: a, b. Batch dims (all but the last two) must have equal rank; 1 broadcasts. */
  | { kind: 'matmul'; opA: MatrixOp; opB: MatrixOp }
  /**
   * Scaled dot-product attention, whole (TensorRT's IAttention with softmax normalization):
   * softmax(Q·Kᵀ·scale + mask)·V. Inputs: query [..., Hq, L, E], key [..., Hkv, S, E], value
   * [..., Hkv, S, E], [mask]: equal ranks (at least 3), equal leading dims, Hq a multiple of
   * Hkv (grouped-query attention: query head h reads key/value head ⌊h / (Hq/Hkv)⌋). The mask
   * has the same rank, each dim 1 or that of the scores [..., Hq, L, S]: bool (false masks the
   * score out) or the query's dtype (added). `causal`: query i attends to key j only where
   * j ≤ i (top-left aligned, PyTorch's is_causal); never with a mask. Output [..., Hq, L, E].
   * Converters emit it whole; a backend without a kernel for it spells it out through
   * lib/conversion/expand-layers.ts. `strided`: see `AttentionParams` above.
   */
  | { kind: 'attention'; scale: number; causal: boolean; strided?: AttentionParams }
  /**
   * Inputs: data, [reshape dims as a 1-D int64 shape tensor]. Applies firstTranspose, then
   * reshape (static `reshape` or input 1; -1 infers one dim; 0 copies when zeroIsPlaceholder),
   * then secondTranspose.
   */
  | {
      kind: 'shuffle';
      firstTranspose?: number[];
      reshape?: number[];
      secondTranspose?: number[];
      zeroIsPlaceholder: boolean;
    }
  /**
   * Inputs: data, [start], [size], [stride] (1-D int64 shape tensors), [fill value (mode
   * fill)]. Output dim i is size[i]; element j reads start[i] + j*stride[i] (stride 0
   * broadcasts), out-of-bounds handled by `mode`.
   */
  | { kind: 'slice'; start: number[]; size: number[]; stride: number[]; mode: SampleMode }
  | { kind: 'concat'; axis: number }
  /** Inputs: data, indices (int32/int64). */
  | { kind: 'gather'; mode: GatherMode; axis: number; nbElementWiseDims?: number }
  /** Inputs: data, indices, updates. */
  | { kind: 'scatter'; mode: ScatterMode; axis: number }
  | { kind: 'reduce'; op: ReduceOp; axes: number[]; keepDims: boolean }
  | { kind: 'softmax'; axis: number }
  /** Output: 1-D int64 tensor of the input's dims. */
  | { kind: 'shape' }
  /**
   * Linspace fill: out[i...] = alpha + Σ beta[d]·i_d. Inputs: [dims as a shape tensor],
   * [alpha scalar], [beta 1-D]; static `dims`, `alpha`, `beta` otherwise.
   */
  | { kind: 'fill'; dims: number[]; alpha: number; beta: number[]; dtype: TrtDType }
  /** Inputs: condition (bool), then, else; equal ranks, 1 broadcasts. */
  | { kind: 'select' }
  /** Inputs: x, [kernel], [bias], [residual]; static weights otherwise. N-d (2-D or 3-D spatial). */
  | ({ kind: 'convolution' } & ConvolutionParams)
  /** As convolution; the kernel is laid out CKRS instead of KCRS. */
  | ({ kind: 'deconvolution' } & ConvolutionParams)
  | {
      kind: 'pooling';
      type: PoolingType;
      window: number[];
      stride: number[];
      prePadding: number[];
      postPadding: number[];
      /** explicit_round_up is PyTorch's ceil_mode. */
      paddingMode: 'explicit_round_down' | 'explicit_round_up';
      averageCountExcludesPadding: boolean;
      /** Made by the cuda backend's layout pass: input and output are [N, spatial..., C]. */
      channelsLast?: boolean;
    }
  /** Inputs: x, scale, bias (broadcastable to the normalized shape). */
  | {
      kind: 'normalization';
      axes: number[];
      epsilon: number;
      nbGroups: number;
      /**
       * RMSNorm: x / sqrt(mean(x²) + eps)·scale + bias, no mean subtracted. The rms_norm
       * converter emits it; TensorRT 10.16's INormalizationLayer has no such mode, so backends
       * without it spell it out (lib/conversion/expand-layers.ts).
       */
      rms?: boolean;
    }
  /** Inputs: x, [output dims shape tensor]. */
  | {
      kind: 'resize';
      mode: ResizeMode;
      outputDims: number[];
      coordinateTransformation: ResizeCoordinateTransformation;
      selector: ResizeSelector;
      nearestRounding: ResizeRoundMode;
    }
  /** Outputs: values, indices (int32 or int64). */
  | { kind: 'topk'; op: 'max' | 'min'; k: number; axis: number; indicesType: 'int32' | 'int64' }
  | { kind: 'cumulative'; op: 'sum'; axis: number; exclusive: boolean; reverse: boolean }
  /**
   * INonZeroLayer: the positions of the nonzero (true) elements. Input: x (float32, float16,
   * int32 or bool, TensorRT's types; rank 0 to 8). Output: int64 [rank(x), N], one column per
   * nonzero element in row-major order, where N is known only when the layer has run: it is
   * -1 in the Network, and every layer after it sees a run-time dim. A backend declares
   * whether its engines can hold such a size (Backend.dataDependentSizes).
   */
  | { kind: 'nonzero' }
  /**
   * ONNX NonMaxSuppression. Inputs: boxes [B, N, 4], scores [B, C, N] (float32 or float16, one
   * type). Output: int64 [S, 3], rows of (batch, class, box) in ONNX's order: by batch, then
   * class, then descending score (equal scores: lower box index first); S is known only when
   * the layer has run (-1 in the Network, as a nonzero's count). Per batch and class a box is
   * kept unless its IoU with a box kept before it exceeds iouThreshold, up to
   * maxOutputBoxesPerClass boxes; scoreThreshold (absent: none) drops boxes scoring at or below
   * it. Boxes are two diagonal corners [y1, x1, y2, x2] in any order, or [x_center, y_center,
   * width, height] with centerPointBox. TensorRT's INMSLayer orders its rows differently (by
   * descending score across classes, ties unspecified), so that backend refuses this layer.
   */
  | { kind: 'nms'; maxOutputBoxesPerClass: number; iouThreshold: number; scoreThreshold?: number; centerPointBox: boolean }
  /**
   * ONNX Unique. Input: x (any real type). Outputs: Y, the unique elements of x flattened
   * (no axis: [U]) or its unique slices along `axis` (x's shape with U at axis); indices,
   * int64 [U], each one's first occurrence; inverse, int64 [x's element count] or
   * [x.shape[axis]], each element's (slice's) index into Y; counts, int64 [U]. U is known only
   * when the layer has run (-1 in the Network, as a nonzero's count). `sorted`: Y ascending
   * (slices compared lexicographically), else in order of first occurrence. TensorRT has no such
   * layer: its backend refuses it (Backend.refusedLayers).
   */
  | { kind: 'unique'; axis?: number; sorted: boolean }
  /**
   * Inputs: x (float32, float16 or bfloat16), scale (float: 0-d per tensor; 1-D of x.shape[axis]
   * per axis; or x's rank with x.shape[axis] / blockSize at `axis` and x's dims elsewhere, per
   * block), zeroPoint (optional; scale's shape, dtype `to`). Output: `to`, x's shape.
   * y = saturate(roundHalfEven(x / scale) + zeroPoint): integers clamp to their range; float8
   * saturates to ±448 (ONNX's saturate=1, the only mode TensorRT has). The scale has x's type,
   * and x / scale is rounded once to it; a NaN gives the integer type's minimum; a float8e4m3fn
   * quantize takes no zero point.
   */
  | { kind: 'quantize'; to: QuantizedDType; axis: number; blockSize?: number }
  /**
   * Inputs: q (a {@link QuantizedDType}), scale (any float type), zeroPoint (optional) as for
   * quantize. Output: `to`, q's shape. y = (q − zeroPoint) · scale, computed in float32 and
   * rounded once to `to` (as ONNX's reference and onnxruntime compute it).
   */
  | { kind: 'dequantize'; to: 'float32' | 'float16' | 'bfloat16'; axis: number; blockSize?: number };

export type LayerKind = LayerParams['kind'];

/**
 * Every layer kind, as a run-time list (tests enumerate it: each kind needs a reference
 * executor). The two checks below make the compiler reject a list that misses a kind of
 * {@link LayerParams} or names one it does not have.
 */
export const LAYER_KINDS = [
  'constant',
  'identity',
  'cast',
  'elementwise',
  'unary',
  'activation',
  'matmul',
  'attention',
  'shuffle',
  'slice',
  'concat',
  'gather',
  'scatter',
  'reduce',
  'softmax',
  'shape',
  'fill',
  'select',
  'convolution',
  'deconvolution',
  'pooling',
  'normalization',
  'resize',
  'topk',
  'cumulative',
  'nonzero',
  'nms',
  'unique',
  'quantize',
  'dequantize',
] as const satisfies readonly LayerKind[];
const layerKindsComplete: [Exclude<LayerKind, (typeof LAYER_KINDS)[number]>] extends [never] ? true : never = true;
void layerKindsComplete;

export interface Layer {
  readonly index: number;
  /** Named after the IR node that produced it (`node/role`), so engine layers trace back to the model. */
  readonly name: string;
  readonly params: LayerParams;
  /** Tensor ids; null for an omitted optional input. */
  readonly inputs: ReadonlyArray<number | null>;
  readonly outputs: readonly number[];
}
