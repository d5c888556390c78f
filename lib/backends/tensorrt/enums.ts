/**
 * TensorRT 10 enum values the replay program carries, as NvInfer.h / NvInferRuntimeBase.h
 * (10.16) number them. The native side passes them through unchanged, so the TypeScript side
 * owns every IR → TensorRT decision and the native side stays a dumb replayer.
 */
import type {
  ActivationType,
  ElementWiseOp,
  GatherMode,
  MatrixOp,
  PoolingType,
  ReduceOp,
  ResizeCoordinateTransformation,
  ResizeMode,
  ResizeRoundMode,
  ResizeSelector,
  SampleMode,
  ScatterMode,
  TrtDType,
  UnaryOp,
} from '../../network';

const indexOf = <T extends string>(names: readonly T[]): Record<T, number> => Object.fromEntries(names.map((n, i) => [n, i])) as Record<T, number>;

/** nvinfer1::DataType (kFP8 = 6 is FP8 E4M3, kINT4 = 9 signed 4-bit; kFP4 and kE8M0 are not used). */
export const DATA_TYPE: Record<TrtDType, number> = { float32: 0, float16: 1, int8: 2, int32: 3, bool: 4, uint8: 5, float8e4m3fn: 6, bfloat16: 7, int64: 8, int4: 9 };

/** nvinfer1::ElementWiseOperation (kSUM = 0 … kLESS = 13). */
export const ELEMENTWISE_OP = indexOf<ElementWiseOp>(['sum', 'prod', 'max', 'min', 'sub', 'div', 'pow', 'floor_div', 'and', 'or', 'xor', 'equal', 'greater', 'less']);

/** nvinfer1::UnaryOperation (kEXP = 0 … kISNAN = 24). */
export const UNARY_OP = indexOf<UnaryOp>([
  'exp', 'log', 'sqrt', 'recip', 'abs', 'neg', 'sin', 'cos', 'tan', 'sinh', 'cosh', 'asin', 'acos', 'atan', 'asinh', 'acosh',
  'atanh', 'ceil', 'floor', 'erf', 'not', 'sign', 'round', 'isinf', 'isnan',
]);

/** nvinfer1::ActivationType (kRELU = 0 … kGELU_TANH = 13). */
export const ACTIVATION_TYPE = indexOf<ActivationType>([
  'relu', 'sigmoid', 'tanh', 'leaky_relu', 'elu', 'selu', 'softsign', 'softplus', 'clip', 'hard_sigmoid', 'scaled_tanh',
  'thresholded_relu', 'gelu_erf', 'gelu_tanh',
]);

export const REDUCE_OP = indexOf<ReduceOp>(['sum', 'prod', 'max', 'min', 'avg']);
export const MATRIX_OP = indexOf<MatrixOp>(['none', 'transpose', 'vector']);
export const SAMPLE_MODE = indexOf<SampleMode>(['strict_bounds', 'wrap', 'clamp', 'fill', 'reflect']);
export const GATHER_MODE = indexOf<GatherMode>(['default', 'element', 'nd']);
export const SCATTER_MODE = indexOf<ScatterMode>(['element', 'nd']);
export const POOLING_TYPE = indexOf<PoolingType>(['max', 'average']);
/** nvinfer1::PaddingMode: kEXPLICIT_ROUND_DOWN = 0, kEXPLICIT_ROUND_UP = 1. */
export const PADDING_MODE = indexOf<'explicit_round_down' | 'explicit_round_up'>(['explicit_round_down', 'explicit_round_up']);
/** nvinfer1::InterpolationMode. */
export const INTERPOLATION_MODE = indexOf<ResizeMode>(['nearest', 'linear', 'cubic']);
export const COORDINATE_TRANSFORMATION = indexOf<ResizeCoordinateTransformation>(['align_corners', 'asymmetric', 'half_pixel']);
export const RESIZE_SELECTOR = indexOf<ResizeSelector>(['formula', 'upper']);
export const RESIZE_ROUND_MODE = indexOf<ResizeRoundMode>(['half_up', 'half_down', 'floor', 'ceil']);
export const TOPK_OP = indexOf<'max' | 'min'>(['max', 'min']);
/** nvinfer1::CumulativeOperation. */
export const CUMULATIVE_OP = indexOf<'sum'>(['sum']);
/** nvinfer1::HardwareCompatibilityLevel. */
export const HARDWARE_COMPATIBILITY_LEVEL = { none: 0, 'ampere+': 1, 'same-compute-capability': 2 } as const;
