/**
 * The tensorrt backend's engine bytes: TensorRT's serialized plan plus what the program needs
 * without deserializing it (inputs and outputs with dtypes and shapes, the TensorRT version
 * that built it, hardware and version compatibility), in the container of
 * lib/io/json-blobs.ts under the magic `TRTNTRT1`. Malformed bytes are a BadModelError.
 */
import { BadModelError } from '../../errors';
import { BlobTable, blobRange, CodecError, packContainer, unpackContainer } from '../../io/json-blobs';
import { TRT_DTYPES, type TrtDType } from '../../network';
import type { HardwareCompatibility } from '../../engine/build-config';

export const TENSORRT_ENGINE_MAGIC = 'TRTNTRT1';
export const TENSORRT_ENGINE_VERSION = 1;
const LABEL = 'tensorrt engine';

export interface EngineTensor {
  name: string;
  dtype: TrtDType;
  /** -1 for a dimension set at run time (within the profiles). */
  shape: number[];
}

export interface TensorRTEngineRecord {
  /** getInferLibVersion() of the library that built the plan. */
  libraryVersion: number;
  hardwareCompatibility: HardwareCompatibility;
  /** Built with kVERSION_COMPATIBLE: loading needs host code allowed. */
  versionCompatible: boolean;
  inputs: EngineTensor[];
  outputs: EngineTensor[];
  /** The serialized TensorRT plan (IHostMemory of buildSerializedNetwork). */
  plan: Uint8Array;
}

export function serializeTensorRTEngine(record: TensorRTEngineRecord): Uint8Array {
  const blobs = new BlobTable();
  const offset = blobs.add('plan', record.plan);
  const { plan, ...json } = record;
  return packContainer(TENSORRT_ENGINE_MAGIC, TENSORRT_ENGINE_VERSION, { ...json, plan: { offset, byteLength: plan.byteLength } }, blobs);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function tensors(value: unknown, what: string): EngineTensor[] {
  if (!Array.isArray(value)) throw new BadModelError(`${LABEL}: ${what} is not a list`);
  return value.map((t: unknown, i) => {
    if (!isObject(t) || typeof t.name !== 'string' || !(TRT_DTYPES as readonly unknown[]).includes(t.dtype) || !Array.isArray(t.shape) || !t.shape.every((d) => Number.isInteger(d) && d >= -1)) {
      throw new BadModelError(`${LABEL}: ${what} ${i} is malformed`);
    }
    return { name: t.name, dtype: t.dtype as TrtDType, shape: [...(t.shape as number[])] };
  });
}

/** Reads engine bytes (the plan views them). @throws {BadModelError} naming what is wrong. */
export function deserializeTensorRTEngine(bytes: Uint8Array): TensorRTEngineRecord {
  let container;
  try {
    container = unpackContainer(bytes, TENSORRT_ENGINE_MAGIC, [TENSORRT_ENGINE_VERSION]);
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    throw new BadModelError(`${LABEL}: ${e.message}`, { cause: e });
  }
  const j = container.json;
  if (!isObject(j) || !Number.isInteger(j.libraryVersion) || typeof j.versionCompatible !== 'boolean' || !['none', 'ampere+'].includes(j.hardwareCompatibility as string) || !isObject(j.plan)) {
    throw new BadModelError(`${LABEL}: the description is malformed`);
  }
  const byteLength = j.plan.byteLength;
  if (!Number.isSafeInteger(byteLength) || (byteLength as number) <= 0) throw new BadModelError(`${LABEL}: the plan length ${JSON.stringify(byteLength)} is invalid`);
  let start: number;
  try {
    start = blobRange(j.plan.offset, byteLength as number, container.blob.byteLength, 'the plan');
  } catch (e) {
    throw new BadModelError(`${LABEL}: ${(e as Error).message}`, { cause: e });
  }
  return {
    libraryVersion: j.libraryVersion as number,
    hardwareCompatibility: j.hardwareCompatibility as HardwareCompatibility,
    versionCompatible: j.versionCompatible,
    inputs: tensors(j.inputs, 'input'),
    outputs: tensors(j.outputs, 'output'),
    plan: container.blob.subarray(start, start + (byteLength as number)),
  };
}
