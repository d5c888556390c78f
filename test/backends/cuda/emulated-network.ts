/**
 * A whole Network through the cuda backend's own path, on the CPU: instantiate at the feeds'
 * shapes, lower every layer with the real lowerings (lib/backends/cuda/plan/lower-instance.ts
 * binds buffers exactly as the runner does), and run the steps on the CPU emulator
 * (test/helpers/cuda-emulator).
 * What a GPU run would do, minus the GPU; for tests of whole models, and of the plan-level
 * optimizations (pointwise fusion, views) against the reference backend.
 */
import { instantiate } from '../../../lib/backends/cuda/plan/instantiate';
import { ARENA_BUFFER, byteSize, lowerInstance, VALUES_BUFFER, WEIGHTS_BUFFER, type LayerLowerer, type LoweredInstance } from '../../../lib/backends/cuda/plan/lower-instance';
import type { LoweredStep } from '../../../lib/backends/cuda/layers';
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { layoutWeights, packWeights, weightLocator } from '../../../lib/backends/cuda/plan/weights';
import { dtypeInfo } from '../../../lib/ir/dtype';
import type { Network } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { runSteps } from '../../helpers/cuda-emulator';

/** Bytes no correct plan reads before writing: the arena starts as this pattern. */
const GARBAGE = 0xa5;

const bytesOf = (t: Tensor): Uint8Array => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();

/**
 * Runs `network` on `feeds` (by input name, in the network's input dtypes): every output by
 * name, the lowered plan, and the status word of its run-time checks after the run (0 when it
 * has none; the word starts as garbage, so the plan's own zeroing is tested too).
 */
export function emulateLowered(
  network: Network,
  feeds: Readonly<Record<string, Tensor>>,
  options: { tf32?: boolean; fuse?: boolean; lower?: LayerLowerer } = {},
): { outputs: Record<string, Tensor>; lowered: LoweredInstance; status: number } {
  const shapes = Object.fromEntries(network.inputs.map((i) => [i.name, feeds[i.name]!.shape]));
  const instance = instantiate(network, shapes);
  const layout = layoutWeights(network);
  const lowered = lowerInstance(network, instance, weightLocator(layout), options.lower, options);
  const buffers: Uint8Array[] = [];
  buffers[ARENA_BUFFER] = new Uint8Array(lowered.arenaBytes).fill(GARBAGE);
  buffers[WEIGHTS_BUFFER] = packWeights(layout);
  buffers[VALUES_BUFFER] = lowered.values.slice();
  for (const input of network.inputs) buffers[lowered.inputBuffers.get(input.name)!] = bytesOf(feeds[input.name]!);
  for (const output of network.outputs) buffers[lowered.outputBuffers.get(output.name)!] = new Uint8Array(byteSize(instance.tensors[output.tensor]!)).fill(GARBAGE);
  if (lowered.checks.length > 0) buffers[lowered.statusBuffer] = new Uint8Array(4).fill(GARBAGE);
  runSteps(lowered.steps, buffers);
  const outputs: Record<string, Tensor> = {};
  for (const output of network.outputs) {
    const t = instance.tensors[output.tensor]!;
    const info = dtypeInfo(t.dtype);
    const bytes = buffers[lowered.outputBuffers.get(output.name)!]!.slice();
    outputs[output.name] = new Tensor(t.dtype, t.shape, new info.storage(bytes.buffer, 0, bytes.byteLength / (info.itemBytes / info.lanes)));
  }
  const word = buffers[lowered.statusBuffer];
  const status = lowered.checks.length > 0 && word !== undefined ? new DataView(word.buffer, word.byteOffset, 4).getUint32(0, true) : 0;
  return { outputs, lowered, status };
}

/** Runs `network` on `feeds` and returns every output by name. */
export function runOnEmulator(network: Network, feeds: Readonly<Record<string, Tensor>>, options: { tf32?: boolean } = {}): Record<string, Tensor> {
  return emulateLowered(network, feeds, options).outputs;
}

export interface Emulated {
  outputs: Record<string, Tensor>;
  launches: number;
  /** The layer name of each step (fused steps are named `producer+consumer`). */
  names: string[];
  /** The bytes each step's layers read and write at least (undefined where a layer took several steps). */
  bytes: Array<number | undefined>;
  /** The kind of each step that is left after assembly drops copies onto themselves. */
  steps: string[];
  /** Tensor ids that share another tensor's bytes (memory-plan aliases). */
  aliases: ReadonlyMap<number, number>;
}

/** `network` on the emulator, with or without pointwise fusion. */
export function emulate(network: Network, feeds: Readonly<Record<string, Tensor>>, fuse: boolean): Emulated {
  const { outputs, lowered } = emulateLowered(network, feeds, { fuse });
  const ontoItself = (s: LoweredStep): boolean => s.kind === 'copy' && s.src.buffer === s.dst.buffer && (s.src.offset ?? 0) === (s.dst.offset ?? 0);
  return {
    outputs,
    launches: lowered.steps.filter((s) => s.kind === 'launch').length,
    names: lowered.stepLayers.map((s) => s.name),
    bytes: lowered.stepLayers.map((s) => s.bytes),
    steps: lowered.steps.filter((s) => !ontoItself(s)).map((s) => s.kind),
    aliases: lowered.aliases,
  };
}

const bits = (t: Tensor): number[] => Array.from(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));

/** Runs `network` fused and unfused: the two must agree bit for bit, and match the reference backend within `tol`. */
export function expectEmulatedMatches(network: Network, feeds: Record<string, Tensor>, tol: Tolerance): { fused: Emulated; plain: Emulated } {
  const fused = emulate(network, feeds, true);
  const plain = emulate(network, feeds, false);
  const reference = new ReferenceRunner(network).run(feeds);
  for (const o of network.outputs) {
    expect(bits(fused.outputs[o.name]!)).toEqual(bits(plain.outputs[o.name]!));
    expectClose(fused.outputs[o.name]!, reference[o.name]!, tol, `${network.name} ${o.name}`);
  }
  return { fused, plain };
}
