/**
 * A whole Network through the cuda backend's own path, on the CPU: instantiate at the feeds'
 * shapes, lower every layer with the real lowerings (lower-instance.ts binds buffers exactly
 * as the runner does), and run the steps on the CPU emulator (test/helpers/cuda-emulator).
 * What a GPU run would do, minus the GPU; for tests of whole models.
 */
import { instantiate } from '../../../lib/backends/cuda/instantiate';
import { ARENA_BUFFER, byteSize, lowerInstance, VALUES_BUFFER, WEIGHTS_BUFFER } from '../../../lib/backends/cuda/lower-instance';
import { layoutWeights, packWeights, weightLocator } from '../../../lib/backends/cuda/weights';
import { dtypeInfo } from '../../../lib/ir/dtype';
import type { Network } from '../../../lib/network';
import { Tensor } from '../../../lib/tensor';
import { runSteps } from '../../helpers/cuda-emulator';

/** Bytes no correct plan reads before writing: the arena starts as this pattern. */
const GARBAGE = 0xa5;

const bytesOf = (t: Tensor): Uint8Array => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();

/** Runs `network` on `feeds` (by input name, in the network's input dtypes) and returns every output by name. */
export function runOnEmulator(network: Network, feeds: Readonly<Record<string, Tensor>>, options: { tf32?: boolean } = {}): Record<string, Tensor> {
  const shapes = Object.fromEntries(network.inputs.map((i) => [i.name, feeds[i.name]!.shape]));
  const instance = instantiate(network, shapes);
  const layout = layoutWeights(network);
  const lowered = lowerInstance(network, instance, weightLocator(layout), undefined, options);
  const buffers: Uint8Array[] = [];
  buffers[ARENA_BUFFER] = new Uint8Array(lowered.arenaBytes).fill(GARBAGE);
  buffers[WEIGHTS_BUFFER] = packWeights(layout);
  buffers[VALUES_BUFFER] = lowered.values.slice();
  for (const input of network.inputs) buffers[lowered.inputBuffers.get(input.name)!] = bytesOf(feeds[input.name]!);
  for (const output of network.outputs) buffers[lowered.outputBuffers.get(output.name)!] = new Uint8Array(byteSize(instance.tensors[output.tensor]!)).fill(GARBAGE);
  runSteps(lowered.steps, buffers);
  const out: Record<string, Tensor> = {};
  for (const output of network.outputs) {
    const t = instance.tensors[output.tensor]!;
    const info = dtypeInfo(t.dtype);
    const bytes = buffers[lowered.outputBuffers.get(output.name)!]!.slice();
    out[output.name] = new Tensor(t.dtype, t.shape, new info.storage(bytes.buffer, 0, bytes.byteLength / (info.itemBytes / info.lanes)));
  }
  return out;
}
