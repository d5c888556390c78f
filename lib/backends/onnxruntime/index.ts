/**
 * The onnxruntime backend (docs/onnxruntime-backend.md): the fast CPU path where there is no
 * NVIDIA GPU. The rooms: this entry; build.ts (the Network as an ONNX model, TensorRT's layer
 * semantics preserved, packed with its description); engine-format.ts; layers/ (one ONNX
 * lowering per layer kind); run/ (one onnxruntime-node InferenceSession per engine on the
 * CPU, the prepared fast path of short runs, and profile.ts: per-node times from
 * onnxruntime's profiler for program.profile()).
 * onnxruntime-node is an optional peer dependency: without it available() says how to add it
 * and `auto` passes over this backend.
 *
 * Build settings: the BuildConfig knobs are TensorRT's (precisions, workspace, timing cache)
 * and change nothing here (compile() warns when one is set); the session's thread counts come from the environment at build
 * time (TENSORRT_NODE_ORT_INTRA_OP_THREADS, TENSORRT_NODE_ORT_INTER_OP_THREADS; 0 or unset:
 * onnxruntime's default) and are stored in the engine.
 */
import { BackendUnavailableError, InvalidArgumentError } from '../../errors';
import type { Network } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import type { BuildConfig } from '../../engine/build-config';
import type { Availability, Backend, Engine, EngineSignature } from '../../engine/backend';
import { buildOrtEngine } from './build';
import { unpackOrtEngine, type OrtEngineDescription } from './engine-format';
import { OrtEngine } from './run/engine';
import { profileOrtModel } from './run/profile';
import type { EngineProfile } from '../../engine/profile';
import type { RunValue } from '../../engine/residency';
import { loadOrt, type OrtModule } from './ort-module';

export { buildOrtEngine, INTER_OP_THREADS_ENV, INTRA_OP_THREADS_ENV, ortSessionSettings } from './build';
export { LOWERINGS, networkToOnnx, ONNX_OPSET } from './layers';
export { ORT_ENGINE_MAGIC, unpackOrtEngine } from './engine-format';
export { loadOrt, ORT_INSTALL_COMMAND, ORT_INSTALL_HINT, ORT_PEER_RANGE, ORT_VERIFIED_VERSIONS, REFERENCE_FALLBACK_COST, resetOrtLoad } from './ort-module';
export type { OrtLoad, OrtProblem } from './ort-module';

function requireOrt(what: string): OrtModule {
  const loaded = loadOrt();
  if (!loaded.ok) throw new BackendUnavailableError(`the onnxruntime backend cannot ${what} here: ${loaded.reason}`, { details: { backend: 'onnxruntime', reasons: [loaded.reason] } });
  return loaded.ort;
}

/** The model and description behind each engine load() made, for profileEngine (a profiling session is a session of its own). */
const loadedModels = new WeakMap<Engine, { model: Uint8Array; description: OrtEngineDescription }>();

/**
 * Backend.profileEngine of the onnxruntime backend: per node, from onnxruntime's profiler (./run/profile.ts).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: `engine` was not loaded by this backend.
 */
async function profileOrtEngine(engine: Engine, inputs: Readonly<Record<string, RunValue>>, options: { runs: number }): Promise<EngineProfile> {
  const loaded = loadedModels.get(engine);
  if (loaded === undefined) throw new InvalidArgumentError('profileEngine(): the engine was not loaded by the onnxruntime backend');
  return profileOrtModel(requireOrt('profile engines'), loaded.model, loaded.description, inputs, options.runs);
}

export const onnxruntimeBackend = {
  name: 'onnxruntime',
  priority: 1,
  /** The installed onnxruntime-node's version (what engines record as backendVersion); `none` without a usable one. */
  get version(): string {
    const loaded = loadOrt();
    return loaded.ok ? loaded.version : 'none';
  },
  residency: 'host',
  // A NonZero's output is sized by onnxruntime when it runs, inside a session or at its outputs.
  dataDependentSizes: 'anywhere',
  buildSettings: { uses: [], instead: "onnxruntime computes every layer in the network's own dtypes with its CPU kernels (docs/backends.md, \"Build configuration\")" },
  implemented: true,
  async available(): Promise<Availability> {
    const loaded = loadOrt();
    return loaded.ok ? { ok: true } : { ok: false, reasons: [loaded.reason] };
  },
  async build(network: Network, _config: BuildConfig, _device: EngineDevice): Promise<Uint8Array> {
    requireOrt('build engines');
    return buildOrtEngine(network);
  },
  async load(engine: Uint8Array, _device: EngineDevice | null): Promise<Engine> {
    const { description, model } = unpackOrtEngine(engine);
    const loaded = await OrtEngine.create(requireOrt('load engines'), model, description);
    loadedModels.set(loaded, { model, description });
    return loaded;
  },
  profileEngine: profileOrtEngine,
  inspect(engine: Uint8Array): EngineSignature {
    const { description } = unpackOrtEngine(engine);
    return { inputNames: description.inputs.map((i) => i.name), outputNames: description.outputs.map((o) => o.name) };
  },
} satisfies Backend<'onnxruntime'>;
