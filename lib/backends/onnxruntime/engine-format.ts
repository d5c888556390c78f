/**
 * The onnxruntime backend's engine bytes: the container of lib/io/json-blobs.ts under the
 * magic `TRTNORT1`, whose JSON describes the inputs (dtype, shape with -1 for run-time dims,
 * optimization profiles), the outputs and the session settings, and whose blob is the ONNX
 * model itself. A program file carries it, and loading it creates the session without
 * converting anything again. Whatever is malformed is a BadModelError naming the problem.
 */
import { BadModelError } from '../../errors';
import { isDType, type DType } from '../../ir/dtype';
import { BlobTable, blobRange, CodecError, MagicError, packContainer, unpackContainer } from '../../io/json-blobs';
import type { ProfileShapes } from '../../network';

export const ORT_ENGINE_MAGIC = 'TRTNORT1';
export const ORT_ENGINE_FORMAT_VERSION = 1;
const FORMAT = 'tensorrt-node onnxruntime engine';
const LABEL = 'onnxruntime engine';

/** Session settings, fixed when the engine is built. */
export interface OrtSessionSettings {
  /** Threads of one operator (onnxruntime's intraOpNumThreads); 0: onnxruntime's default, one per physical core. */
  intraOpThreads: number;
  /** Threads across operators (interOpNumThreads; used by parallel execution only); 0: the default. */
  interOpThreads: number;
  /**
   * onnxruntime's CPU memory arena (enableCpuMemArena); absent: on. Off for a network with a
   * large tensor (./build.ts): the arena keeps every block it freed, so such a run peaks at
   * several times its live tensors.
   */
  memoryArena?: boolean;
}

export interface OrtEngineIO {
  name: string;
  dtype: DType;
  /** -1 for a dim decided at run time. */
  shape: number[];
}

export interface OrtEngineInput extends OrtEngineIO {
  profiles: ProfileShapes[];
}

export interface OrtEngineDescription {
  network: string;
  opset: number;
  inputs: OrtEngineInput[];
  outputs: OrtEngineIO[];
  session: OrtSessionSettings;
}

/** Packs the description and the ONNX model bytes. */
export function packOrtEngine(description: OrtEngineDescription, model: Uint8Array): Uint8Array {
  const blobs = new BlobTable();
  const offset = blobs.add('model', model);
  return packContainer(ORT_ENGINE_MAGIC, ORT_ENGINE_FORMAT_VERSION, { format: FORMAT, ...description, model: { offset, byteLength: model.byteLength } }, blobs);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isDims = (v: unknown, min: number): v is number[] => Array.isArray(v) && v.every((d) => Number.isSafeInteger(d) && d >= min);

function readIO(v: unknown, what: string, withProfiles: boolean): OrtEngineInput {
  if (!isObject(v) || typeof v.name !== 'string' || !isDType(v.dtype) || !isDims(v.shape, -1)) {
    throw new CodecError(`${what} must be {name, dtype, shape}, got ${JSON.stringify(v)?.slice(0, 120)}`);
  }
  const profiles = withProfiles ? v.profiles : [];
  if (!Array.isArray(profiles) || !profiles.every((p) => isObject(p) && ['min', 'opt', 'max'].every((k) => isDims(p[k], 0) && (p[k] as number[]).length === (v.shape as number[]).length))) {
    throw new CodecError(`${what} has malformed optimization profiles`);
  }
  return { name: v.name, dtype: v.dtype, shape: v.shape, profiles: profiles as ProfileShapes[] };
}

const isThreads = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The engine's description and its ONNX model (viewing `engine`, no copy). */
export function unpackOrtEngine(engine: unknown): { description: OrtEngineDescription; model: Uint8Array } {
  if (!ArrayBuffer.isView(engine) || (engine as Uint8Array).BYTES_PER_ELEMENT !== 1 || engine instanceof DataView) {
    throw new BadModelError(`${LABEL}: engine bytes must be a Uint8Array`);
  }
  const bytes = new Uint8Array(engine.buffer, engine.byteOffset, engine.byteLength);
  try {
    const { json, blob } = unpackContainer(bytes, ORT_ENGINE_MAGIC, [ORT_ENGINE_FORMAT_VERSION]);
    if (!isObject(json) || json.format !== FORMAT) throw new CodecError(`its description is not a ${FORMAT}`);
    const { inputs, outputs, session, model, network, opset } = json;
    if (!Array.isArray(inputs) || !Array.isArray(outputs) || outputs.length === 0) throw new CodecError('it lists no inputs or outputs');
    if (!isObject(session) || !isThreads(session.intraOpThreads) || !isThreads(session.interOpThreads)) throw new CodecError('its session settings are malformed');
    if (!isObject(model) || !Number.isSafeInteger(model.byteLength) || (model.byteLength as number) <= 0) throw new CodecError('its model record is malformed');
    const offset = blobRange(model.offset, model.byteLength as number, blob.byteLength, 'the ONNX model');
    return {
      description: {
        network: typeof network === 'string' ? network : 'network',
        opset: typeof opset === 'number' ? opset : 0,
        inputs: inputs.map((v, i) => readIO(v, `input ${i}`, true)),
        outputs: outputs.map((v, i) => readIO(v, `output ${i}`, false)).map(({ name, dtype, shape }) => ({ name, dtype, shape })),
        session: { intraOpThreads: session.intraOpThreads, interOpThreads: session.interOpThreads, ...(session.memoryArena === false ? { memoryArena: false } : {}) },
      },
      model: blob.subarray(offset, offset + (model.byteLength as number)),
    };
  } catch (error) {
    if (error instanceof MagicError) {
      throw new BadModelError(`not an onnxruntime engine: the bytes start with ${JSON.stringify(error.found)}, expected ${JSON.stringify(ORT_ENGINE_MAGIC)} (an engine of another backend needs that backend)`);
    }
    if (error instanceof CodecError) throw new BadModelError(`${LABEL}: ${error.message}`, { cause: error });
    throw error;
  }
}
