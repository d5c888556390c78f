/**
 * The contract between the `cuda` backend (which plans memory and instantiates a network for
 * concrete input dims) and the layer lowerings (which turn one layer, with concrete dims and
 * device addresses, into plan steps). See docs/cuda-backend.md.
 *
 * Rules every lowering keeps:
 * - Kernel source text depends on the layer's parameters and dtypes only, never on concrete
 *   dims: dims, strides and counts are kernel arguments. build() can then compile every
 *   kernel a network needs once (at the profile's shapes) and a run at any other shape in
 *   the profile reuses the same cubins.
 * - Tensors are dense and row-major; a lowering that needs another layout makes it in scratch.
 * - A lowering never reads device memory on the host: values it needs on the host (shape
 *   tensors such as a dynamic slice's start/size) arrive in `values`, computed by the backend.
 */
import type { ConvStep, CopyStep, Dim3, GemmStep, KernelArg, MemsetStep, BufferSlice } from '../../../gpu/plan';
import type { Layer, TrtDType } from '../../../network';
import type { Tensor } from '../../../ir/tensor';

/** A tensor as a lowering sees it: concrete dims and where its bytes are. */
export interface BoundTensor {
  readonly dtype: TrtDType;
  readonly shape: readonly number[];
  readonly at: BufferSlice;
}

/** CUDA C++ source defining one `extern "C" __global__` kernel named `entry`. */
export interface KernelSource {
  /** Stable identity of the source (e.g. `unary.exp.float32`); equal keys mean equal source. */
  readonly key: string;
  readonly entry: string;
  readonly source: string;
}

/** A kernel launch whose kernel is named by source rather than by module index (the backend assigns modules). */
export interface KernelLaunch {
  readonly kind: 'launch';
  readonly kernel: KernelSource;
  readonly grid: Dim3;
  readonly block: Dim3;
  readonly sharedBytes?: number;
  readonly args: readonly KernelArg[];
}

export type LoweredStep = KernelLaunch | CopyStep | MemsetStep | GemmStep | ConvStep;

export interface LoweringContext {
  readonly layer: Layer;
  /** Null for an omitted optional input. */
  readonly inputs: ReadonlyArray<BoundTensor | null>;
  readonly outputs: readonly BoundTensor[];
  /** Host-known values of small integer inputs (shape tensors), by input position. */
  readonly values: ReadonlyArray<readonly number[] | undefined>;
  /**
   * Whether float32 matmuls and convolutions may use TF32 tensor cores (the `tf32` precision of the build
   * settings). Off by default, so fp32 results match the CPU; it changes no kernel source.
   */
  readonly tf32?: boolean;
  /** Device scratch owned by this layer until its last step has run (fresh per call, 256-byte aligned). */
  scratch(bytes: number): BufferSlice;
  /** Where a weight tensor of the layer's parameters lives on the device (uploaded once at load). */
  weight(tensor: Tensor): BufferSlice;
  /**
   * The elements of inputs that are constants of the network (weights), by input position
   * (absent: none known): what a lowering may check on the host when it plans, instead of on
   * the device at every run.
   */
  readonly constants?: ReadonlyArray<Tensor | undefined>;
  /**
   * Registers a run-time check of this layer's data and returns its two kernel arguments,
   * `u32* status, u32 code`: a kernel that meets data it cannot process (an index out of range)
   * stores `code` at `status`, and the run then fails with `E_BAD_INPUT` naming the layer and
   * `what` (../plan/run-checks.ts). A plan with checks zeroes the word before every run and
   * reads it back after.
   */
  check(what: string): KernelArg[];
  /**
   * A pointwise producer of input `input` the lowering may compute while loading it (a row
   * prologue, ./prologue.ts); a lowering that does sets `taken`, and the producer's own
   * launch never runs. With `store`, later layers read the producer's output too: a lowering
   * takes it only if its kernel also writes that output where the producer would have.
   */
  readonly prologue?: { readonly producer: MapLaunchInfo; readonly input: number; readonly store?: boolean; taken: boolean };
}

/** Lowers one layer; throws UnsupportedOpError (naming the layer) for a form it cannot run. */
export type LayerLowering = (ctx: LoweringContext) => LoweredStep[];

/** A strided map's per-element work (./map.ts). */
export interface MapSpec {
  /** Stable key (dtypes and op included). */
  key: string;
  inputs: readonly TrtDType[];
  output: TrtDType;
  /**
   * The body of `op(x0, x1, ..., extra...)` returning the output's compute type; inputs come
   * in their compute types. With `raw`, inputs and result are the storage types, unconverted.
   */
  body: string;
  /** Extra by-value parameters of op and the kernel (e.g. `float alpha`). */
  extra?: readonly string[];
  raw?: boolean;
}

/** One tensor of a strided map: where it is and its strides over the output box. */
export interface MapOperand {
  at: BufferSlice;
  /** Element strides over the output box (same length as `dims`). */
  strides: readonly number[];
}

/** What a map launch computes, kept beside it so that a later pass can fuse two (lib/backends/cuda/plan/fuse-pointwise.ts). */
export interface MapLaunchInfo {
  readonly spec: MapSpec;
  /** The output box, before coalescing. */
  readonly dims: readonly number[];
  readonly out: MapOperand;
  readonly inputs: readonly MapOperand[];
  readonly extra: readonly KernelArg[];
}
