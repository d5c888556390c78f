/**
 * tensorrt-node: compile model graphs into NVIDIA TensorRT engines and run them from Node.js.
 */
// onnx-proto's declarations, which ours import, name protobufjs's global `Long` type
// (@types/long, a dependency of protobufjs): referenced here so consumers whose tsconfig
// narrows `types` still compile with skipLibCheck off.
/// <reference types="long" preserve="true" />
export * from './errors';
export { devices, probeDevices, formatCudaVersion, formatGpuUuid, parsePciBusId } from './devices';
export type { CudaDevice, CudaDriver, ComputeCapability, DeviceProbe, DeviceReport, PciAddress } from './devices';
export { findTensorRTLibrary, isTensorRTAvailable, tensorrtStatus, formatTensorRTVersion } from './tensorrt';
export type { TensorRTLibrary, TensorRTStatus } from './tensorrt';
export { doctor, formatDoctorReport } from './doctor';
export type { DoctorReport } from './doctor';
export type { AddonSource } from './native';
export { VERSION } from './version';

// Graph IR, tensors and the CPU interpreter.
export { Tensor, shapeSize } from './tensor';
export type { Shape } from './tensor';
export type { DType, TypedArray } from './ir/dtype';
export { DTYPES, promoteTypes } from './ir/dtype';
export { Graph, Node, Value, tensorType } from './ir/graph';
export type { Arg, TensorType, ValueType } from './ir/graph';
export { formatDim, formatShape, sym } from './ir/symbolic';
export type { Dim, SymbolRange } from './ir/symbolic';
export { printGraph } from './ir/printer';
export { verifyGraph } from './ir/verify';
export { call } from './ir/builder';
export { opNames } from './ir/ops';
export { interpret } from './interpreter';
export { readNpy, writeNpy } from './kernels/npy';

// Frontends.
export { loadOnnx, mappedOnnxOps } from './frontends/onnx';
export type { LoadOnnxOptions } from './frontends/onnx';
export { loadPt2 } from './frontends/pt2';
export type { LoadPt2Options } from './frontends/pt2';

// The compiler.
export { compile, dryRun } from './compile';
export type { CompileProgressEvent, CompileSettings, CompileStage, InputSpec, ModelSource, ProgressCallback } from './compile';
export { Program } from './runtime/program';
export { loadProgram, loadProgramBuffer, readProgramFile, selectDevice, PROGRAM_FORMAT_VERSION } from './runtime/program-file';
export type { LoadProgramOptions, ProgramManifest, DeviceSelection, DeviceTarget, EngineDevice, HardwareCompatibilityLevel } from './runtime/program-file';
export type { ProgramIO } from './runtime/segments';
export { TensorParallelProgram, TensorParallelRank } from './runtime/tensor-parallel/program';
export type { RankDevice } from './runtime/tensor-parallel/program';
export type { TensorParallelSettings } from './compile/settings';
export { shardGraph } from './lowering/sharding';
export type { BlockSharding, ShardedGraph, ShardedWeight } from './lowering/sharding';
export { formatPartitionReport } from './partitioning/partition';
export type { OpReport, PartitionReport, ReportIO } from './partitioning/partition';
export { listConverters, registerConverter, unregisterConverter } from './conversion/registry';
export type { CheckArgs, ConverterImpl, ConverterOptions, ConverterListing } from './conversion/registry';
export { Network, printNetwork } from './network';
export type { Logger, LogLevel } from './logger';

// GPU runtime (device memory, NVRTC kernels, plans, cuBLASLt and cuDNN steps).
export * from './gpu';
