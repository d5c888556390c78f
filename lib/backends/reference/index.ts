/**
 * The CPU reference backend: runs a Network layer by layer with the CPU kernels, following
 * TensorRT's layer semantics as lib/network/layers.ts documents them (not PyTorch's or
 * ONNX's). It is the embedded default where TensorRT is absent and the oracle converter
 * tests compare against.
 *
 * build() checks the network (a converter bug is an InternalError naming the layer; a layer
 * this backend cannot run is an UnsupportedOpError) and serializes it (engine-format.ts).
 * It records the BuildConfig it was given but ignores it: it computes every layer in the
 * network's own dtypes (fp16/bf16/tf32 allowances change nothing), needs no workspace, and
 * has no kernels to time. load() reads engine bytes (malformed bytes: BadModelError) into
 * a ReferenceRunner on the host; it accepts float64 for a float32 network input
 * (truncateDouble) and converts it.
 */
import { InternalError, InvalidArgumentError, UnsupportedOpError } from '../../errors';
import { TRT_DTYPES, type Layer, type Network } from '../../network';
import type { EngineDevice } from '../../engine/device-selection';
import type { RunLimits } from '../../engine/resource-limits';
import { Tensor } from '../../ir/tensor';
import { VERSION } from '../../version';
import type { BuildConfig } from '../../engine/build-config';
import { floatWidthAs } from '../../engine/float-width';
import type { RunValue } from '../../engine/residency';
import type { Availability, Backend, Engine } from '../../engine/backend';
import type { EngineProfile } from '../../engine/profile';
import { checkNetwork } from '../../network/check';
import { deserializeEngine, serializeEngine } from './engine-format';
import { unsupportedReason } from '../../network/evaluate';
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

/** Host inputs at the network's float widths (a device value is a bug of the caller: this backend keeps values on the host). */
function hostFeeds(inputs: Readonly<Record<string, RunValue>>, inputDTypes: ReadonlyMap<string, Tensor['dtype']>): Record<string, Tensor> {
  // Null prototype: an input named "__proto__" is an ordinary key.
  const feeds: Record<string, Tensor> = Object.create(null);
  for (const [name, v] of Object.entries(inputs)) {
    if (!(v instanceof Tensor)) throw new InternalError(`the reference backend runs on the host, but input "${name}" is on device ${v.residency.ordinal}`);
    const dtype = inputDTypes.get(name);
    feeds[name] = dtype === undefined ? v : floatWidthAs(v, dtype);
  }
  return feeds;
}

/** The runner behind each engine load() made, for profileEngine (the Engine contract does not expose it). */
const runners = new WeakMap<Engine, { runner: ReferenceRunner; inputDTypes: ReadonlyMap<string, Tensor['dtype']> }>();

/** A ReferenceRunner behind the async Engine contract; inputs are converted to the network's float widths. */
function referenceEngine(runner: ReferenceRunner, inputDTypes: ReadonlyMap<string, Tensor['dtype']>): Engine {
  const engine: Engine = {
    inputNames: runner.inputNames,
    outputNames: runner.outputNames,
    residency: 'host',
    async run(inputs: Readonly<Record<string, RunValue>>, limits?: RunLimits): Promise<Record<string, RunValue>> {
      return runner.run(hostFeeds(inputs, inputDTypes), limits);
    },
    dispose: () => runner.dispose(),
  };
  runners.set(engine, { runner, inputDTypes });
  return engine;
}

/**
 * Wall clock of each layer over `runs` runs of a reference engine, in ms per run, in the
 * order the layers run (every layer that reaches an output, each once).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: `engine` was not loaded by this backend.
 */
export async function profileReferenceEngine(engine: Engine, inputs: Readonly<Record<string, RunValue>>, options: { runs: number; limits?: RunLimits }): Promise<EngineProfile> {
  const loaded = runners.get(engine);
  if (loaded === undefined) throw new InvalidArgumentError('profileEngine(): the engine was not loaded by the reference backend');
  const { runner } = loaded;
  const feeds = hostFeeds(inputs, loaded.inputDTypes);
  const totals = new Map<Layer, number>(runner.liveLayers.map((layer) => [layer, 0]));
  for (let r = 0; r < options.runs; r++) runner.run(feeds, options.limits, (layer, ms) => totals.set(layer, totals.get(layer)! + ms));
  return {
    timing: 'host-wall-clock',
    layers: [...totals].map(([layer, ms]) => ({ name: layer.name, kind: layer.params.kind, ms: ms / options.runs })),
  };
}

/**
 * The reference backend. Beyond the Backend contract it has createRunner(): the engine as a
 * synchronous host runner, for the converter tests and oracles that call it directly.
 */
export const referenceBackend = {
  name: 'reference',
  priority: 0,
  version: VERSION,
  residency: 'host',
  // Every layer's output is made when the layer runs, at whatever size its data gives.
  dataDependentSizes: 'anywhere',
  buildSettings: { uses: [], instead: "it computes every layer in the network's own dtypes, with no workspace and no kernels to time (docs/backends.md, \"Build configuration\")" },
  implemented: true,
  async available(): Promise<Availability> {
    return { ok: true };
  },
  async build(network: Network, config: Partial<BuildConfig> = {}, _device?: EngineDevice): Promise<Uint8Array> {
    checkNetworkForReference(network);
    return serializeEngine(network);
  },
  async load(engine: Uint8Array, _device: EngineDevice | null): Promise<Engine> {
    const network = deserializeEngine(engine);
    const dtypes = new Map(network.inputs.map((i) => [i.name, network.tensors[i.tensor]!.dtype as Tensor['dtype']]));
    return referenceEngine(new ReferenceRunner(network), dtypes);
  },
  inspect(engine: Uint8Array) {
    const network = deserializeEngine(engine);
    return { inputNames: network.inputs.map((i) => i.name), outputNames: network.outputs.map((o) => o.name) };
  },
  profileEngine: profileReferenceEngine,
  createRunner(engine: Uint8Array): ReferenceRunner {
    return new ReferenceRunner(deserializeEngine(engine));
  },
} satisfies Backend<'reference'> & { createRunner(engine: Uint8Array): ReferenceRunner };
