/**
 * Runs small Networks on the reference backend for its tests. Every run goes through
 * build() → engine bytes → createRunner(), so every test also round-trips the engine format.
 */
import { referenceBackend } from '../../../lib/backends/reference';
import { Network, type LayerParams, type NetTensor, type TrtDType } from '../../../lib/network';
import type { Tensor } from '../../../lib/ir/tensor';

/** Builds `network` and runs it once on `inputs`. */
export async function runNetwork(network: Network, inputs: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
  const runner = referenceBackend.createRunner(await referenceBackend.build(network, {}));
  try {
    return runner.run(inputs);
  } finally {
    runner.dispose();
  }
}

/**
 * A layer input: a Tensor becomes a network input of its dtype and static shape (fed at run
 * time); `{ constant }` a constant layer (values known at build time, like a static shape
 * tensor); null an omitted optional input.
 */
export type LayerInput = Tensor | { readonly constant: Tensor } | null;

/** A network of one layer of `params` over `inputs`, every output marked (out0, out1...). */
export function layerNetwork(params: LayerParams, inputs: readonly LayerInput[]): { network: Network; feeds: Record<string, Tensor> } {
  const network = new Network('test');
  const feeds: Record<string, Tensor> = {};
  const tensors = inputs.map((input, i): NetTensor | null => {
    if (input === null) return null;
    if ('constant' in input) return network.add1({ kind: 'constant', weights: input.constant }, [], `c${i}`);
    feeds[`in${i}`] = input;
    return network.addInput(`in${i}`, input.dtype as TrtDType, input.shape);
  });
  const outs = network.add(params, tensors, 'layer');
  outs.forEach((t, k) => network.markOutput(t, `out${k}`));
  return { network, feeds };
}

/** Runs one layer of `params` over `inputs` (see {@link LayerInput}) and returns its outputs. */
export async function runLayer(params: LayerParams, inputs: readonly LayerInput[]): Promise<Tensor[]> {
  const { network, feeds } = layerNetwork(params, inputs);
  const out = await runNetwork(network, feeds);
  return network.outputs.map((o) => out[o.name]!);
}

/** runLayer for single-output layers. */
export async function runLayer1(params: LayerParams, inputs: readonly LayerInput[]): Promise<Tensor> {
  return (await runLayer(params, inputs))[0]!;
}
