/**
 * The onnxruntime backend's build: a Network as an ONNX model (./layers/, opset 18) packed
 * with its description and the session settings (./engine-format.ts). Big layers ONNX opset 18
 * has no op for (attention, RMS normalization) are spelled out first
 * (lib/conversion/expand-layers.ts). No onnxruntime is needed to build.
 */
import { InternalError, InvalidArgumentError } from '../../errors';
import type { Network } from '../../network';
import { expandLayers } from '../../conversion/expand-layers';
import { checkNetwork } from '../../network/check';
import { packOrtEngine, type OrtSessionSettings } from './engine-format';
import { networkToOnnx, ONNX_OPSET } from './layers';

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

/** Engine bytes for `network`: its ONNX model and description (no onnxruntime needed to build). */
export function buildOrtEngine(source: Network, session: OrtSessionSettings = ortSessionSettings()): Uint8Array {
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
