/**
 * What compile() needs from an execution backend: turn a Network (lib/network) into engine
 * bytes, and turn engine bytes into something that runs. One backend implements it today:
 * the CPU reference one (lib/backends/reference; engine bytes are the serialized Network),
 * the default where TensorRT is absent and the oracle converter tests compare against. The
 * TensorRT one (in the native addon; engine bytes a TensorRT plan) is not written yet.
 *
 * Engine bytes are self-contained: a Runner can be created from them in another process or
 * on a worker thread, without the Network they came from.
 */
import type { Network } from '../network';
import type { RunLimits } from '../runtime/resource-limits';
import type { Tensor } from '../tensor';

/**
 * Options of {@link Backend.build}. Reserved: precision flags, workspace size, timing cache
 * and such belong here once a backend uses them; the reference backend takes none.
 */
export interface BuildConfig {}

/** A loaded engine, ready to run. */
export interface Runner {
  /** The engine's input names, in network order. */
  readonly inputNames: readonly string[];
  /** The engine's output names, in network order. */
  readonly outputNames: readonly string[];
  /**
   * Runs the engine on one set of inputs (by name; every input exactly once) and returns
   * every output by name. Synchronous: the runtime calls it on a worker thread. Bad inputs
   * (a missing or unknown name, a wrong dtype or rank) throw BadInputError, a dim outside
   * every optimization profile ShapeOutOfRangeError; the returned tensors belong to the caller.
   * A tensor larger than `limits.maxTensorBytes` is refused before it is allocated
   * (ResourceLimitError naming the layer).
   */
  run(inputs: Readonly<Record<string, Tensor>>, limits?: RunLimits): Record<string, Tensor>;
  /** Releases what the runner holds; it must not be used afterwards. */
  dispose(): void;
}

/** An execution backend. */
export interface Backend {
  /** 'tensorrt' or 'reference'. */
  readonly name: string;
  /** The backend's version (TensorRT's for the native one, this package's for the reference one). */
  readonly version: string;
  /**
   * Validates `network` and builds an engine from it. A network that breaks a layer's rules
   * is a converter bug (InternalError); a layer the backend cannot run is
   * UnsupportedOpError.
   */
  build(network: Network, config: BuildConfig): Promise<Uint8Array>;
  /** Loads engine bytes from build() (malformed bytes: BadModelError). */
  createRunner(engine: Uint8Array): Runner;
}
