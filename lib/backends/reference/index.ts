/**
 * The CPU reference backend: runs a Network layer by layer with the CPU kernels, following
 * TensorRT's layer semantics as lib/network/layers.ts documents them (not PyTorch's or
 * ONNX's). It is the embedded default where TensorRT is absent and the oracle converter
 * tests compare against.
 *
 * build() checks the network (a converter bug is an InternalError naming the layer; a layer
 * this backend cannot run is an UnsupportedOpError) and serializes it (engine-format.ts).
 * createRunner() loads engine bytes (malformed bytes: BadModelError) into a ReferenceRunner.
 */
import { InternalError, UnsupportedOpError } from '../../errors';
import { TRT_DTYPES, type Network } from '../../network';
import { Tensor } from '../../tensor';
import { VERSION } from '../../version';
import type { Backend, BuildConfig, Runner } from '../types';
import { checkNetwork } from './check-network';
import { deserializeEngine, serializeEngine } from './engine-format';
import { unsupportedReason } from './layers';
import { ReferenceRunner } from './runner';

export { ENGINE_FORMAT_VERSION, ENGINE_MAGIC, deserializeEngine, serializeEngine } from './engine-format';
export { ReferenceRunner } from './runner';

/** Throws unless every Tensor in `value` (layer weights) has a TensorRT dtype. */
function checkWeights(value: unknown, where: string): void {
  if (value instanceof Tensor) {
    if (!(TRT_DTYPES as readonly string[]).includes(value.dtype)) throw new InternalError(`${where} holds ${value.dtype} weights, which TensorRT does not have`);
  } else if (Array.isArray(value)) {
    value.forEach((v) => checkWeights(v, where));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) checkWeights(v, `${where} parameter ${k}`);
  }
}

/** The build-time checks: structure and shapes (InternalError), then what this backend can run (UnsupportedOpError). */
export function checkNetworkForReference(network: Network): void {
  checkNetwork(network, (message, cause) => {
    // inferLayer's own errors already name the layer.
    if (cause instanceof InternalError) throw cause;
    throw new InternalError(`network "${network.name}": ${message}`, cause === undefined ? undefined : { cause });
  });
  for (const layer of network.layers) {
    checkWeights(layer.params, `network "${network.name}" layer "${layer.name}" (${layer.params.kind})`);
    const reason = unsupportedReason(layer.params);
    if (reason !== null) {
      throw new UnsupportedOpError(`the reference backend cannot run layer "${layer.name}" (${layer.params.kind}): ${reason}`, {
        details: { layer: layer.name, kind: layer.params.kind },
      });
    }
  }
}

export const referenceBackend: Backend = {
  name: 'reference',
  version: VERSION,
  async build(network: Network, _config: BuildConfig = {}): Promise<Uint8Array> {
    checkNetworkForReference(network);
    return serializeEngine(network);
  },
  createRunner(engine: Uint8Array): Runner {
    return new ReferenceRunner(deserializeEngine(engine));
  },
};
