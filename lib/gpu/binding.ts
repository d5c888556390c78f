/**
 * The GPU runtime's part of the native addon (native/gpu/bindings.cc): what each function takes
 * and returns. Everything that waits on the GPU returns a Promise settled from a worker thread.
 * @internal
 */
import { NativeAddonLoadError } from '../errors';
import { getAddon } from '../native';

/** One device allocation from the device's stream-ordered pool (native DeviceBuffer). */
export interface NativeDeviceBuffer {
  readonly byteLength: number;
  readonly device: number;
  readonly disposed: boolean;
  /** The device pointer (for TensorRT's setTensorAddress); throws once disposed. */
  readonly address: bigint;
  dispose(): void;
}

/** A loaded cubin and its resolved kernels (native Module). */
export interface NativeModule {
  readonly kernels: string[];
  dispose(): void;
}

/** A decoded, prepared plan (native Plan). */
export interface NativePlan {
  readonly steps: number;
  readonly workspaceBytes: number;
  readonly captured: boolean;
  run(times?: number): Promise<void>;
  capture(): Promise<void>;
  replay(times?: number): Promise<void>;
  /** Enqueues on the calling thread; the device's completion thread settles the Promise (or this thread, when the work is done within `pollMicros`). */
  submit(times: number, replay: boolean, pollMicros?: number): Promise<void>;
  /**
   * One replay of the captured graph with its copies, enqueued on the calling thread: each
   * input pair's source copied into the plan's buffer, the replay, then each output pair's plan
   * buffer copied into the destination (null: a fresh allocation, in stream order). Resolves
   * with the destinations once the device is done; given `status` (a buffer of the plan), its
   * first uint32, read after the output copies, is the array's `status` property.
   */
  execute(
    inputs: ReadonlyArray<readonly [NativeDeviceBuffer, NativeDeviceBuffer]>,
    outputs: ReadonlyArray<readonly [NativeDeviceBuffer, NativeDeviceBuffer | null]>,
    pollMicros?: number,
    status?: NativeDeviceBuffer,
  ): Promise<NativeDeviceBuffer[] & { status?: number }>;
  dispose(): void;
}

export interface NativeDeviceInfo {
  ordinal: number;
  computeCapabilityMajor: number;
  computeCapabilityMinor: number;
  freeBytes: number;
  totalBytes: number;
}

export interface NativeLibraryInfo {
  libraryPath: string;
  /** NVRTC: 1000 * major + 10 * minor; cuBLASLt: cublasLtGetVersion(); cuDNN: cudnnGetVersion(). */
  version: number;
}

export interface NativeGpuStats {
  liveBuffers: number;
  liveBytes: number;
  /** Buffers freed by their finalizer because dispose() never ran. */
  finalizedBuffers: number;
  pinnedBytes: number;
  /** External memory of the calling thread's V8 isolate (DeviceTensors count their bytes there). */
  isolateExternalBytes: number;
}

type HostRange = ArrayBuffer | ArrayBufferView;

/** A decoded plan step as the native decoder sees it (gpuDescribePlan). */
export interface DescribedStep {
  kind: 'launch' | 'copy' | 'memset' | 'gemm' | 'conv';
  ptrs: bigint[];
  bytes: number;
  value: number;
  kernel?: string;
  grid?: number[];
  block?: number[];
  sharedBytes?: number;
  params?: Uint8Array;
  gemm?: {
    m: number; n: number; k: number; dtype: string; transA: boolean; transB: boolean; tf32: boolean;
    batch: number; strideA: number; strideB: number; strideD: number; alpha: number; beta: number;
  };
  conv?: {
    spatial: number; dtype: string; transposed: boolean; tf32: boolean; n: number; c: number; k: number; groups: number;
    input: number[]; kernel: number[]; pads: number[]; postPads: number[]; strides: number[]; dilations: number[]; output: number[];
  };
  hasBias?: boolean;
}

export interface GpuBinding {
  gpuDevice(device: number): Promise<NativeDeviceInfo>;
  /** The ordinal of the context current on this thread, or -1 (none current). */
  gpuCurrentDevice(): number;
  /** Sets the device up, then makes its primary context current on this thread; false if that failed. */
  gpuSetCurrentDevice(device: number): Promise<boolean>;
  gpuMemoryInfo(device: number): Promise<NativeDeviceInfo>;
  gpuSynchronize(device: number): Promise<void>;
  gpuSetPoolReleaseThreshold(device: number, bytes: number): Promise<void>;
  gpuTrimPool(device: number, keepBytes: number): Promise<void>;
  gpuAlloc(device: number, bytes: number): Promise<NativeDeviceBuffer>;
  gpuAllocPinned(device: number, bytes: number): Promise<ArrayBuffer>;
  gpuFreePinned(buffer: ArrayBuffer): boolean;
  gpuCopyHtoD(dst: NativeDeviceBuffer, dstOffset: number, src: HostRange): Promise<void>;
  gpuCopyDtoH(src: NativeDeviceBuffer, srcOffset: number, dst: HostRange): Promise<void>;
  gpuCopyDtoD(dst: NativeDeviceBuffer, dstOffset: number, src: NativeDeviceBuffer, srcOffset: number, bytes: number): Promise<void>;
  /**
   * Zeroes each fill's [offset, offset + bytes), then copies each rect's `height` rows of
   * `widthBytes` (rows `dstPitch` / `srcPitch` bytes apart), in order, on one device; one wait.
   */
  gpuCopyRects(fills: ReadonlyArray<readonly [NativeDeviceBuffer, number, number]>, rects: ReadonlyArray<readonly [NativeDeviceBuffer, number, number, NativeDeviceBuffer, number, number, number, number]>): Promise<void>;
  gpuStats(): NativeGpuStats;
  gpuLoadModule(device: number, image: Uint8Array, kernels: string[]): Promise<NativeModule>;
  /** `tuningBudgetMs`: the most ms preparing may spend timing GEMM candidates (undefined: no limit). */
  gpuCreatePlan(device: number, encoded: Uint8Array, buffers: NativeDeviceBuffer[], modules: NativeModule[], tuningBudgetMs?: number): Promise<NativePlan>;
  /** Decodes a plan against fake buffers (buffer i at (i + 1) << 40) without a GPU: for tests. */
  gpuDescribePlan(encoded: Uint8Array, bufferSizes: number[], kernelCounts: number[]): DescribedStep[];
  /** The cuBLASLt algorithm choices this process made or was seeded with on `device` (plain data; no CUDA call). */
  gpuTunedGemms(device: number): NativeTunedGemm[];
  /** Seeds `device`'s choices from a timing cache file; returns how many entries were taken (the process's own choices win). */
  gpuSeedTunedGemms(device: number, entries: NativeTunedGemm[]): number;
  /** GEMM problems timed by this process, plan GEMMs that took a remembered choice instead, and plan GEMMs left untimed because their plan's timing budget was spent. */
  gpuTuningCounts(): { timed: number; reused: number; overBudget: number };
  nvrtcInfo(): Promise<NativeLibraryInfo>;
  nvrtcCompile(source: string, name: string, arch: number, options: string[]): Promise<{ cubin: Uint8Array; log: string }>;
  cublasLtInfo(): Promise<NativeLibraryInfo>;
  cudnnInfo(): Promise<NativeLibraryInfo>;
}

/** One GEMM timing choice: the problem as text and the algorithm's 64 bytes (cublasLtMatmulAlgo_t). */
export interface NativeTunedGemm {
  problem: string;
  algo: Uint8Array;
}

/** The addon's GPU functions; a binary built before they existed is refused as stale. */
export function gpuBinding(): GpuBinding {
  const loaded = getAddon();
  const binding = loaded.binding as unknown as Partial<GpuBinding>;
  if (typeof binding.gpuCreatePlan !== 'function' || typeof binding.gpuTunedGemms !== 'function') {
    throw new NativeAddonLoadError(
      `The tensorrt-node native addon at ${loaded.path} has no GPU runtime: the binary is stale. ` +
        'Rebuild it with `npm run build:native`, or reinstall tensorrt-node.',
      { details: { tried: [loaded.path] } },
    );
  }
  return binding as GpuBinding;
}
