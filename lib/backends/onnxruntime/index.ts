/**
 * The onnxruntime backend (docs/onnxruntime-backend.md): the fast CPU path where there is no
 * NVIDIA GPU. The rooms: this entry; build.ts (the Network as an ONNX model, TensorRT's layer
 * semantics preserved, packed with its description); engine-format.ts; layers/ (one ONNX
 * lowering per layer kind); run/ (one onnxruntime-node InferenceSession per engine on the
 * CPU, and the prepared fast path of short runs).
 * onnxruntime-node is an optional peer dependency: without it available() says how to add it
 * and `auto` passes over this backend.
 *
 * Build settings: the BuildConfig knobs are TensorRT's (precisions, workspace, timing cache)
 * and change nothing here; the session's thread counts come from the environment at build
 * time (TENSORRT_NODE_ORT_INTRA_OP_THREADS, TENSORRT_NODE_ORT_INTER_OP_THREADS; 0 or unset:
 * onnxruntime's default) and are stored in the engine.
 */
import { TensorRTMissingError } from '../../errors';
import type { Network } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import type { BuildConfig } from '../../engine/build-config';
import type { Availability, Backend, Engine, EngineSignature } from '../../engine/backend';
import { buildOrtEngine } from './build';
import { unpackOrtEngine } from './engine-format';
import { OrtEngine } from './run/engine';
import { loadOrt, ORT_TESTED_VERSION, type OrtModule } from './ort-module';

export { buildOrtEngine, INTER_OP_THREADS_ENV, INTRA_OP_THREADS_ENV, ortSessionSettings } from './build';
export { LOWERINGS, networkToOnnx, ONNX_OPSET } from './layers';
export { ORT_ENGINE_MAGIC, unpackOrtEngine } from './engine-format';
export { loadOrt, ORT_INSTALL_HINT, resetOrtLoad } from './ort-module';

function requireOrt(what: string): OrtModule {
  const loaded = loadOrt();
  if (!loaded.ok) throw new TensorRTMissingError(`the onnxruntime backend cannot ${what} here: ${loaded.reason}`, { details: { backend: 'onnxruntime' } });
  return loaded.ort;
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
