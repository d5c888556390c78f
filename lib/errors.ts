/**
 * Every error the library throws is a {@link TensorRTNodeError} with a stable `code`, a
 * message that names the file, node, input or library concerned, optional structured
 * `details`, and the underlying error (if any) chained as `cause`.
 *
 * Branch on `code` (or `instanceof` a subclass), never on message text: codes are part of
 * the public API and do not change; messages may improve.
 */

/** The stable error codes. */
export type ErrorCode =
  | 'E_ADDON_LOAD'
  | 'E_CUDA_MISSING'
  | 'E_NO_DEVICE'
  | 'E_CUDA'
  | 'E_TENSORRT_MISSING'
  | 'E_BACKEND_UNAVAILABLE'
  | 'E_TENSORRT'
  | 'E_INVALID_ARGUMENT'
  | 'E_BAD_MODEL'
  | 'E_BAD_INPUT'
  | 'E_UNSUPPORTED_OP'
  | 'E_COMPLEX128'
  | 'E_BAD_PROGRAM'
  | 'E_NO_COMPATIBLE_DEVICE'
  | 'E_SHARDING'
  | 'E_SHAPE_OUT_OF_RANGE'
  | 'E_DYNAMIC_UNSUPPORTED'
  | 'E_RESOURCE_LIMIT'
  | 'E_INTERNAL'
  | 'E_OUT_OF_DEVICE_MEMORY'
  | 'E_CUDA_LIBRARY_MISSING'
  | 'E_NVRTC_COMPILE'
  | 'E_NCCL'
  | 'E_ABORTED';

/** Extra, machine-readable facts about an error (library paths tried, CUDA error names...). */
export type ErrorDetails = Record<string, unknown>;

export interface ErrorOptions {
  cause?: unknown;
  details?: ErrorDetails;
}

/** Base class of every error thrown by tensorrt-node. */
export class TensorRTNodeError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/** The native addon could not be found or loaded (`E_ADDON_LOAD`). */
export class NativeAddonLoadError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_ADDON_LOAD', message, options);
  }
}

/** The CUDA driver library (libcuda) is absent or too old (`E_CUDA_MISSING`). */
export class CudaMissingError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_CUDA_MISSING', message, options);
  }
}

/** The CUDA driver is present but reports no device (`E_NO_DEVICE`). */
export class NoDeviceError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_NO_DEVICE', message, options);
  }
}

/** A CUDA driver call failed; `details.call` and `details.cudaError` name it (`E_CUDA`). */
export class CudaError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_CUDA', message, options);
  }
}

/** The TensorRT runtime library (libnvinfer) is absent (`E_TENSORRT_MISSING`). */
export class TensorRTMissingError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_TENSORRT_MISSING', message, options);
  }
}

/**
 * A backend other than tensorrt cannot work here (`E_BACKEND_UNAVAILABLE`): compile() was
 * asked for it by name (`backend: 'cuda'` without a CUDA driver), or a program's engines need
 * it (onnxruntime engines without onnxruntime-node installed). `details.backend` names it,
 * `details.reasons` says why (the backend's own refusals, with how to fix each). TensorRT
 * itself missing stays {@link TensorRTMissingError}.
 */
export class BackendUnavailableError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BACKEND_UNAVAILABLE', message, options);
  }
}

/** A caller passed a bad argument or option (`E_INVALID_ARGUMENT`). */
export class InvalidArgumentError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_INVALID_ARGUMENT', message, options);
  }
}

/** A model file is malformed or inconsistent (`E_BAD_MODEL`). */
export class BadModelError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BAD_MODEL', message, options);
  }
}

/** A run was given inputs of the wrong count, name, dtype or shape (`E_BAD_INPUT`). */
export class BadInputError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BAD_INPUT', message, options);
  }
}

/** A model uses an operator the library cannot handle (`E_UNSUPPORTED_OP`). */
export class UnsupportedOpError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_UNSUPPORTED_OP', message, options);
  }
}

/**
 * A complex128 model input, buffer or constant, which TensorRT can only take as float32
 * (`E_COMPLEX128`); the message names it. Set `truncateDouble` to compute it in float32.
 */
export class ComplexDoubleError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_COMPLEX128', message, options);
  }
}

/** A program file (.trtp) is malformed, corrupt, or of a format version this library does not read (`E_BAD_PROGRAM`). */
export class BadProgramError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BAD_PROGRAM', message, options);
  }
}

/** No available device can run a program's engines (`E_NO_COMPATIBLE_DEVICE`); the message names what was needed and found. */
export class NoCompatibleDeviceError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_NO_COMPATIBLE_DEVICE', message, options);
  }
}

/** A model cannot be split for tensor parallelism (`E_SHARDING`); the message names the layer and why. */
export class ShardingError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_SHARDING', message, options);
  }
}

/**
 * A run-time input shape lies outside the range a program or engine was compiled for
 * (`E_SHAPE_OUT_OF_RANGE`); the message and `details` name the input, the dim and the range.
 */
export class ShapeOutOfRangeError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_SHAPE_OUT_OF_RANGE', message, options);
  }
}

/**
 * Ops whose int arguments depend on a dynamic dim have no shape-tensor (`_dyn`) variant
 * (`E_DYNAMIC_UNSUPPORTED`); one error lists every such op and the argument at fault.
 */
export class DynamicUnsupportedError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_DYNAMIC_UNSUPPORTED', message, options);
  }
}

/**
 * More memory than allowed (`E_RESOURCE_LIMIT`). At run time: a tensor larger than the
 * `maxTensorBytes` limit, or an allocation the process could not make; the message and
 * `details` name the input, node or layer and the sizes. The program stays usable;
 * `details.workerRestarts` is true when its worker ran out of heap and the next run starts
 * a new one. At compile time: the tensors a run would hold at once exceed `maxProgramBytes`
 * (`details.plannedBytes`, the node at the peak, its largest tensors). At load: a `.pt2`
 * whose weights would make up more bytes than `maxUnbackedWeightBytes` allows.
 */
export class ResourceLimitError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RESOURCE_LIMIT', message, options);
  }
}

/**
 * TensorRT refused a call (`E_TENSORRT`): an engine build, deserializing a plan, creating an
 * execution context or enqueueV3. `details.tensorrtMessage` is the last error TensorRT logged
 * and `details.call` the call that failed, when known.
 */
export class TensorRTError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_TENSORRT', message, options);
  }
}

/** A bug in tensorrt-node itself: please report it (`E_INTERNAL`). */
export class InternalError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_INTERNAL', message, options);
  }
}

/**
 * A device allocation did not fit (`E_OUT_OF_DEVICE_MEMORY`): `details.requestedBytes`,
 * `details.freeBytes`, `details.totalBytes` and `details.device`. The device stays usable.
 */
export class OutOfDeviceMemoryError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_OUT_OF_DEVICE_MEMORY', message, options);
  }
}

/**
 * An NVIDIA library other than the driver (NVRTC, cuBLASLt, cuDNN) is absent or unusable
 * (`E_CUDA_LIBRARY_MISSING`): `details.library`, `details.tried` (every file tried and why it
 * failed) and `details.envVar` (the variable that names an explicit path).
 */
export class CudaLibraryMissingError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_CUDA_LIBRARY_MISSING', message, options);
  }
}

/** NVRTC rejected a kernel's source (`E_NVRTC_COMPILE`); `details.log` is the compiler's log. */
export class NvrtcCompileError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_NVRTC_COMPILE', message, options);
  }
}

/**
 * An NCCL call failed, timed out or met an aborted communicator (`E_NCCL`): `details.call` names
 * the NCCL call, `details.ncclResult` and `details.lastError` are NCCL's code and text, and
 * `details.rank`, `details.nranks` and `details.device` say which rank; `details.reason` is
 * `timeout`, `aborted` or `destroyed` when no NCCL error code applies.
 */
export class NcclError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_NCCL', message, options);
  }
}

/**
 * The caller aborted the operation through its AbortSignal (`E_ABORTED`): e.g. compile()'s
 * `signal` while a TensorRT engine was building. `details.call` names what was stopped, when known.
 */
export class AbortedError extends TensorRTNodeError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_ABORTED', message, options);
  }
}

const classes: Record<ErrorCode, new (message: string, options?: ErrorOptions) => TensorRTNodeError> = {
  E_ADDON_LOAD: NativeAddonLoadError,
  E_CUDA_MISSING: CudaMissingError,
  E_NO_DEVICE: NoDeviceError,
  E_CUDA: CudaError,
  E_TENSORRT_MISSING: TensorRTMissingError,
  E_BACKEND_UNAVAILABLE: BackendUnavailableError,
  E_TENSORRT: TensorRTError,
  E_INVALID_ARGUMENT: InvalidArgumentError,
  E_BAD_MODEL: BadModelError,
  E_BAD_INPUT: BadInputError,
  E_UNSUPPORTED_OP: UnsupportedOpError,
  E_COMPLEX128: ComplexDoubleError,
  E_BAD_PROGRAM: BadProgramError,
  E_NO_COMPATIBLE_DEVICE: NoCompatibleDeviceError,
  E_SHARDING: ShardingError,
  E_SHAPE_OUT_OF_RANGE: ShapeOutOfRangeError,
  E_DYNAMIC_UNSUPPORTED: DynamicUnsupportedError,
  E_RESOURCE_LIMIT: ResourceLimitError,
  E_INTERNAL: InternalError,
  E_OUT_OF_DEVICE_MEMORY: OutOfDeviceMemoryError,
  E_CUDA_LIBRARY_MISSING: CudaLibraryMissingError,
  E_NVRTC_COMPILE: NvrtcCompileError,
  E_NCCL: NcclError,
  E_ABORTED: AbortedError,
};

/** All codes, for documentation and exhaustiveness tests. */
export const ERROR_CODES = Object.freeze(Object.keys(classes) as ErrorCode[]);

/**
 * Builds the typed error for `code`. Used by the native addon (through the factory it is
 * given at load) so that native failures are instances of the same classes; an unknown code
 * becomes an {@link InternalError} that quotes it.
 */
export function createError(code: string, message: string, details?: ErrorDetails): TensorRTNodeError {
  // Own keys only: codes like "constructor" must not reach Object.prototype.
  const ErrorClass = Object.hasOwn(classes, code) ? classes[code as ErrorCode] : undefined;
  if (ErrorClass === undefined) {
    return new InternalError(`${message} (unknown native error code ${JSON.stringify(code)})`, { details });
  }
  return new ErrorClass(message, { details });
}
