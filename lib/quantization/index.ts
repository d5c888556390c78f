/**
 * Post-training quantization: `calibrate()` turns a float ONNX model and calibration batches
 * into a Q/DQ ONNX model for TensorRT's explicit INT8 and FP8 quantization (docs/quantization.md).
 */
export { calibrate } from './calibrate';
export { DEFAULT_PERCENTILE, ENTROPY_BINS, ENTROPY_LEVELS } from './methods';
export { DEFAULT_QUANTIZED_OPS } from './targets';
export type {
  ActivationReport,
  CalibrateOptions,
  CalibrationBatch,
  CalibrationMethod,
  CalibrationPrecision,
  CalibrationProgress,
  CalibrationReport,
  CalibrationResult,
  CalibrationRunner,
  SkippedReport,
  WeightReport,
} from './types';
