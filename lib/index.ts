/**
 * tensorrt-node: compile model graphs into NVIDIA TensorRT engines and run them from Node.js.
 *
 * The main entry is what an application uses: compile, load and run programs, tensors, npy
 * files, devices, errors and converter registration (docs/api.md). Graph-building internals
 * (the graph and network IRs, their printers and verifier, the model loaders, the CPU
 * interpreter, sharding) are the `tensorrt-node/ir` subpath (./ir-entry.ts).
 *
 * @module tensorrt-node
 */
// onnx-proto's declarations, which ours import, name protobufjs's global `Long` type
// (@types/long, a dependency of protobufjs): referenced here so consumers whose tsconfig
// narrows `types` still compile with skipLibCheck off.
/// <reference types="long" preserve="true" />
import { Program as ProgramClass } from './runtime/program';
import { TensorParallelProgram as TensorParallelProgramClass, TensorParallelRank as TensorParallelRankClass } from './runtime/tensor-parallel/program';
import { Generator as GeneratorClass } from './generate/generator';

/**
 * A class the library makes and the caller only holds: `instanceof` works and narrows, and
 * `new` is a type error (abstract), so the constructor's parameters are not part of the API.
 */
type MadeByLibrary<T> = abstract new (...args: never) => T;

// Errors: every class and code; `createError` (the addon's factory) stays internal.
export {
  TensorRTNodeError,
  NativeAddonLoadError,
  CudaMissingError,
  NoDeviceError,
  CudaError,
  TensorRTMissingError,
  BackendUnavailableError,
  TensorRTError,
  InvalidArgumentError,
  BadModelError,
  BadInputError,
  UnsupportedOpError,
  ComplexDoubleError,
  BadProgramError,
  NoCompatibleDeviceError,
  ShardingError,
  ShapeOutOfRangeError,
  DynamicUnsupportedError,
  ResourceLimitError,
  InternalError,
  OutOfDeviceMemoryError,
  CudaLibraryMissingError,
  NvrtcCompileError,
  NcclError,
  AbortedError,
  ERROR_CODES,
} from './errors';
export type { ErrorCode, ErrorDetails, ErrorOptions } from './errors';

// Devices, TensorRT and the environment report.
export { devices, probeDevices, formatCudaVersion, formatGpuUuid, parsePciBusId } from './devices';
export type { CudaDevice, CudaDriver, ComputeCapability, DeviceProbe, DeviceReport, PciAddress } from './devices';
export { findTensorRTLibrary, isTensorRTAvailable, tensorrtStatus, formatTensorRTVersion } from './tensorrt';
export type { TensorRTLibrary, TensorRTStatus } from './tensorrt';
export { doctor, formatDoctorReport } from './doctor';
export type { DoctorReport } from './doctor';
export type { AddonSource } from './native';
export { VERSION } from './version';

// Tensors, their dtypes and shapes (a program's inputs and outputs may have symbolic dims), npy files.
export { Tensor, shapeSize } from './ir/tensor';
export type { Shape } from './ir/tensor';
export type { DType, TypedArray } from './ir/dtype';
export { DTYPES } from './ir/dtype';
export { formatDim, formatShape } from './ir/symbolic';
export type { Dim, SymbolRange } from './ir/symbolic';
export { readNpy, writeNpy } from './kernels/npy';

// Compiling, and the programs it makes.
export { compile, dryRun } from './compile';
export type { CompileProgressEvent, CompileSettings, CompileStage, InputSpec, ModelSource, ProgressCallback } from './compile';
export type { BuildPhaseEvent } from './engine/build-context';
/** A compiled program, made by compile() and loadProgram(); see docs/api.md. */
export type Program = ProgramClass;
export const Program: MadeByLibrary<ProgramClass> = ProgramClass;
export { loadProgram, loadProgramBuffer, readProgramFile, selectDevice, PROGRAM_FORMAT_VERSION } from './runtime/program-file';
export type { LoadProgramOptions, ProgramManifest, DeviceSelection, DeviceTarget, EngineDevice, HardwareCompatibilityLevel } from './runtime/program-file';
export type { ProgramIO, ShapeProfile } from './runtime/segments';
// program.profile(): per-layer times of every segment.
export type { ProfileEntry, ProfileOptions, ProfileSource, ProfileTiming, ProgramProfile, SegmentProfile } from './engine/profile';
/** A tensor-parallel program (compile() with `tensorParallel`), one rank per device. */
export type TensorParallelProgram = TensorParallelProgramClass;
export const TensorParallelProgram: MadeByLibrary<TensorParallelProgramClass> = TensorParallelProgramClass;
/** One rank of a {@link TensorParallelProgram}. */
export type TensorParallelRank = TensorParallelRankClass;
export const TensorParallelRank: MadeByLibrary<TensorParallelRankClass> = TensorParallelRankClass;
export type { RankDevice } from './runtime/tensor-parallel/program';
export { loadTensorParallelProgram, loadTensorParallelProgramBuffer } from './runtime/tensor-parallel/file-load';
export type { LoadTensorParallelOptions } from './runtime/tensor-parallel/file-load';
export type { TensorParallelSettings } from './compile/settings';
export type { CollectivesPolicy } from './runtime/tensor-parallel/collectives-policy';
export { formatPartitionReport } from './partitioning/report-format';
export type { OpReport, PartitionReport, ReportIO } from './partitioning/partition';

// Text generation with causal LMs that keep a KV cache (docs/generate.md).
export { compileForGeneration, createGenerator, generate, generationInputs, DEFAULT_MAX_NEW_TOKENS } from './generate';
/** Generation with one program, made by createGenerator(); see docs/generate.md. */
export type Generator = GeneratorClass;
export const Generator: MadeByLibrary<GeneratorClass> = GeneratorClass;
export type {
  CachePlace,
  FinishReason,
  GenerateOptions,
  GenerateResult,
  GenerateStep,
  GenerationCompileSettings,
  GenerationLimits,
  GenerationSizes,
  GeneratorOptions,
  KvCacheLayer,
  KvCacheLayout,
  NamedIO,
  RunSizes,
  SizeRange,
} from './generate';

// Post-training calibration: a float ONNX model and calibration batches → its Q/DQ model (docs/quantization.md).
export { calibrate, DEFAULT_QUANTIZED_OPS } from './quantization';
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
} from './quantization';

// Converter registration (a converter's arguments are IR values: see tensorrt-node/ir).
export { listConverters, registerConverter, unregisterConverter } from './conversion/registry';
export type { CheckArgs, ConverterImpl, ConverterOptions, ConverterListing } from './conversion/registry';
export type { Logger, LogLevel } from './logger';

// GPU runtime (device memory, NVRTC kernels, plans, cuBLASLt and cuDNN steps).
export * from './gpu';
export * from './collectives';
