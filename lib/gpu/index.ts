/** The GPU runtime: device tensors, kernels, plans and the NVIDIA libraries behind them. */
export { DeviceTensor, toDevice } from './device-tensor';
export {
  allocatePinnedBuffer,
  deviceMemoryInfo,
  freePinnedBuffer,
  gpuAllocationStats,
  setPoolReleaseThreshold,
  synchronizeDevice,
  trimDevicePool,
} from './device';
export type { DeviceLike, DeviceMemoryInfo } from './device';
export { compileModule, loadModule, GpuModule } from './module';
export type { CompileModuleOptions } from './module';
export { currentDevice, setCurrentDevice } from './current-device';
export { GpuPlan } from './gpu-plan';
export type { PlanExecution, PlanRunOptions } from './gpu-plan';
export { convOutputShape, encodePlan, packKernelArgs, PLAN_FORMAT_VERSION } from './plan';
export type { BufferSlice, ConvStep, CopyStep, Dim3, GemmStep, KernelArg, LaunchStep, MemsetStep, PlanSpec, PlanStep, ScalarType } from './plan';
export { compileWithCache, defaultCacheDir, kernelCacheKey } from './kernel-cache';
export type { CompiledKernel, CompileFunction, CompileRequest, KernelCacheOptions } from './kernel-cache';
export { cudaLibraries, formatLibraryVersion } from './libraries';
export type { CudaLibraryName, CudaLibraryStatus } from './libraries';
