/**
 * The onnxruntime backend's build: a Network as an ONNX model (./layers/, opset 18, or 19/21
 * for quantization) packed with its description and the session settings
 * (./engine-format.ts). Big layers ONNX opset 18 has no op for (attention, RMS normalization)
 * are spelled out first (lib/conversion/expand-layers.ts); quantize and dequantize layers stay
 * whole, as QuantizeLinear and DequantizeLinear. No onnxruntime is needed to build.
 */
import { InternalError, InvalidArgumentError } from '../../errors';
import type { Network } from '../../network';
import { dtypeInfo } from '../../ir/dtype';
import { expandLayers, isQuantizationLayer } from '../../conversion/expand-layers';
import { checkNetwork } from '../../network/check';
import { packOrtEngine, type OrtSessionSettings } from './engine-format';
import { networkToOnnx, onnxOpset } from './layers';

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

/**
 * A tensor at least this large turns onnxruntime's CPU memory arena off for its session. The
 * arena keeps the blocks it frees for later allocations: right for the many small tensors of a
 * usual network (a malloc per tensor per run costs a tiny model about a tenth of its run), but
 * a network of a few tensors of hundreds of MiB then holds all of them at once (a 256 MiB
 * constant carried through four ops: 1.49 GB peak RSS with the arena, 0.93 GB without, against
 * 0.54 GB of live tensors; 2-core x86, 2026-12-07).
 */
export const ARENA_OFF_TENSOR_BYTES = 64 * 2 ** 20;

/** The bytes of `network`'s largest tensor of known size (dims decided at run time are not counted). */
function largestTensorBytes(network: Network): number {
  let largest = 0;
  for (const t of network.tensors) {
    if (t.shape.some((d) => d < 0)) continue;
    largest = Math.max(largest, t.shape.reduce((n, d) => n * d, dtypeInfo(t.dtype).itemBytes));
  }
  return largest;
}

/** Engine bytes for `network`: its ONNX model and description (no onnxruntime needed to build). */
export function buildOrtEngine(source: Network, session: OrtSessionSettings = ortSessionSettings()): Uint8Array {
  // ONNX has QuantizeLinear and DequantizeLinear: quantization stays whole.
  const network = expandLayers(source, (l) => !isQuantizationLayer(l)).network;
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
  const settings = largestTensorBytes(network) >= ARENA_OFF_TENSOR_BYTES ? { ...session, memoryArena: false } : session;
  return packOrtEngine({ network: network.name, opset: onnxOpset(network), inputs, outputs, session: settings }, model);
}
