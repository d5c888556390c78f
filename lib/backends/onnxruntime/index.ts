/**
 * The onnxruntime backend (docs/onnxruntime-backend.md): the fast CPU path where there is no
 * NVIDIA GPU. build() lowers the Network to an ONNX model (./lower.ts, TensorRT's layer
 * semantics preserved) and packs it with its description (./engine-format.ts); load()
 * creates one onnxruntime-node InferenceSession from those bytes on the CPU (./engine.ts).
 * onnxruntime-node is an optional peer dependency: without it available() says how to add it
 * and `auto` passes over this backend.
 *
 * Build settings: the BuildConfig knobs are TensorRT's (precisions, workspace, timing cache)
 * and change nothing here; the session's thread counts come from the environment at build
 * time (TENSORRT_NODE_ORT_INTRA_OP_THREADS, TENSORRT_NODE_ORT_INTER_OP_THREADS; 0 or unset:
 * onnxruntime's default) and are stored in the engine.
 */
import { InternalError, InvalidArgumentError, TensorRTMissingError } from '../../errors';
import type { Network } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import type { BuildConfig } from '../../engine/build-config';
import { expandLayers } from '../../conversion/expand-layers';
import { checkNetwork } from '../../network/check';
import type { Availability, Backend, Engine, EngineSignature } from '../../engine/backend';
import { packOrtEngine, unpackOrtEngine, type OrtSessionSettings } from './engine-format';
import { OrtEngine } from './engine';
import { networkToOnnx, ONNX_OPSET } from './lower';
import { loadOrt, ORT_TESTED_VERSION, type OrtModule } from './ort-module';

export { LOWERINGS, networkToOnnx, ONNX_OPSET } from './lower';
export { ORT_ENGINE_MAGIC, unpackOrtEngine } from './engine-format';
export { loadOrt, ORT_INSTALL_HINT, resetOrtLoad } from './ort-module';

export const INTRA_OP_THREADS_ENV = 'TENSORRT_NODE_ORT_INTRA_OP_THREADS';
export const INTER_OP_THREADS_ENV = 'TENSORRT_NODE_ORT_INTER_OP_THREADS';

function threadsFromEnv(name: string, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a thread count (0: onnxruntime's default), got ${JSON.stringify(raw)}`, { details: { variable: name } });
  return n;
}

/** The session settings a build stores in its engine. */
export function ortSessionSettings(env: NodeJS.ProcessEnv = process.env): OrtSessionSettings {
  return { intraOpThreads: threadsFromEnv(INTRA_OP_THREADS_ENV, env), interOpThreads: threadsFromEnv(INTER_OP_THREADS_ENV, env) };
}

function requireOrt(what: string): OrtModule {
  const loaded = loadOrt();
  if (!loaded.ok) throw new TensorRTMissingError(`the onnxruntime backend cannot ${what} here: ${loaded.reason}`, { details: { backend: 'onnxruntime' } });
  return loaded.ort;
}

/** Engine bytes for `network`: its ONNX model and description (no onnxruntime needed to build). */
export function buildOrtEngine(source: Network, session: OrtSessionSettings = ortSessionSettings()): Uint8Array {
  // ONNX opset 18 has no attention or RMS normalization op: those layers are spelled out.
  const network = expandLayers(source).network;
  // The structural checks every backend makes (a converter bug is an InternalError naming
  // the layer); what the reference backend cannot compute (cubic resize) is no concern here.
  checkNetwork(network, (message, cause) => {
    if (cause instanceof InternalError) throw cause;
    throw new InternalError(`network "${network.name}": ${message}`, cause === undefined ? undefined : { cause });
  });
  const model = networkToOnnx(network);
  const inputs = network.inputs.map((input) => {
    const t = network.tensor(input.tensor);
    return { name: input.name, dtype: t.dtype, shape: [...t.shape], profiles: input.profiles };
  });
  const outputs = network.outputs.map((o) => {
    const t = network.tensor(o.tensor);
    return { name: o.name, dtype: t.dtype, shape: [...t.shape] };
  });
  return packOrtEngine({ network: network.name, opset: ONNX_OPSET, inputs, outputs, session }, model);
}

export const onnxruntimeBackend = {
  name: 'onnxruntime',
  priority: 1,
  version: ORT_TESTED_VERSION,
  residency: 'host',
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
    return OrtEngine.create(requireOrt('load engines'), model, description);
  },
  inspect(engine: Uint8Array): EngineSignature {
    const { description } = unpackOrtEngine(engine);
    return { inputNames: description.inputs.map((i) => i.name), outputNames: description.outputs.map((o) => o.name) };
  },
} satisfies Backend<'onnxruntime'>;
