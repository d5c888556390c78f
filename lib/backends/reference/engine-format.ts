/**
 * The reference backend's "engine": the serialized Network (lib/network/serialize.ts) in the
 * container of lib/io/json-blobs.ts under its own magic, so that a reference engine is told
 * apart from a TensorRT plan. Loading is zero-copy and checks everything, including the
 * layer-by-layer consistency of lib/network/check.ts; whatever is wrong is a BadModelError.
 *
 * Version 2 is the backend-neutral description (`format: "tensorrt-node network"`, -0 kept);
 * version 1 engines are refused with a message asking to rebuild them.
 */
import { BadModelError } from '../../errors';
import type { Network } from '../../network';
import { deserializeNetworkFromBuffer, serializeNetworkToBuffer } from '../../network/serialize';
import { checkNetwork } from '../../network/check';

export const ENGINE_MAGIC = 'TRTNREF1';
export const ENGINE_FORMAT_VERSION = 2;

const LABEL = 'reference engine';

/** Serializes a Network (assumed checked) into engine bytes. */
export function serializeEngine(network: Network): Uint8Array {
  return serializeNetworkToBuffer(network, ENGINE_MAGIC, ENGINE_FORMAT_VERSION);
}

/** The engine bytes as a Uint8Array of this realm (Buffers and other views accepted). */
function asBytes(engine: unknown): Uint8Array {
  if (!ArrayBuffer.isView(engine) || engine instanceof DataView || (engine as Uint8Array).BYTES_PER_ELEMENT !== 1) {
    const got = engine === null ? 'null' : typeof engine === 'object' ? ((engine as object).constructor?.name ?? 'an object') : typeof engine;
    throw new BadModelError(`${LABEL}: engine bytes must be a Uint8Array, got ${got}`);
  }
  const view = engine as Uint8Array;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * Loads engine bytes back into a Network (weights viewing the bytes), checking everything:
 * malformed or inconsistent bytes are a BadModelError that names the problem.
 */
export function deserializeEngine(engine: Uint8Array): Network {
  return deserializeNetworkFromBuffer(asBytes(engine), LABEL, checkNetwork, {
    magic: ENGINE_MAGIC,
    versions: [ENGINE_FORMAT_VERSION],
    wrongMagic: (found) =>
      `not a reference engine: the bytes start with ${JSON.stringify(found)}, expected ${JSON.stringify(ENGINE_MAGIC)} (a TensorRT plan needs the tensorrt backend)`,
  });
}
