/**
 * Whole networks lowered by the cuda backend (instantiate → lowerInstance with the real
 * lowerings) and run on the CPU kernel emulator, with and without pointwise fusion, against
 * the reference backend.
 */
import { instantiate } from '../../../lib/backends/cuda/instantiate';
import { lowerInstance, byteSize } from '../../../lib/backends/cuda/lower-instance';
import { layoutWeights, packWeights, weightLocator } from '../../../lib/backends/cuda/weights';
import { ReferenceRunner } from '../../../lib/backends/reference/runner';
import { dtypeInfo } from '../../../lib/ir/dtype';
import type { Network } from '../../../lib/network';
import { Tensor } from '../../../lib/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { runSteps } from '../../helpers/cuda-emulator';

export interface Emulated {
  outputs: Record<string, Tensor>;
  launches: number;
  /** The layer name of each step (fused steps are named `producer+consumer`). */
  names: string[];
  /** The kind of each step that is left after assembly drops copies onto themselves. */
  steps: string[];
  /** Tensor ids that share another tensor's bytes (memory-plan aliases). */
  aliases: ReadonlyMap<number, number>;
}

/** Lowers `net` at the inputs' shapes, runs it on the emulator; returns the outputs and the step count. */
export function emulate(net: Network, inputs: Record<string, Tensor>, fuse: boolean): Emulated {
  const shapes = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, [...t.shape]]));
  const layout = layoutWeights(net);
  const lowered = lowerInstance(net, instantiate(net, shapes), weightLocator(layout), undefined, { fuse });
  const buffers: Uint8Array[] = [new Uint8Array(Math.max(lowered.arenaBytes, 1)), packWeights(layout), lowered.values];
  for (const input of net.inputs) {
    const t = inputs[input.name]!;
    buffers[lowered.inputBuffers.get(input.name)!] = new Uint8Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.byteLength));
  }
  const instance = instantiate(net, shapes);
  for (const output of net.outputs) buffers[lowered.outputBuffers.get(output.name)!] = new Uint8Array(byteSize(instance.tensors[output.tensor]!)).fill(0x5a);
  runSteps(lowered.steps, buffers);
  const outputs: Record<string, Tensor> = {};
  for (const output of net.outputs) {
    const t = instance.tensors[output.tensor]!;
    const info = dtypeInfo(t.dtype);
    const bytes = buffers[lowered.outputBuffers.get(output.name)!]!.slice();
    outputs[output.name] = new Tensor(t.dtype, t.shape, new info.storage(bytes.buffer, 0, bytes.byteLength / (info.itemBytes / info.lanes)));
  }
  return { outputs, launches: lowered.steps.filter((s) => s.kind === 'launch').length, names: lowered.stepLayers.map((s) => s.name), aliases: lowered.aliases, steps: lowered.steps.filter((s) => !(s.kind === 'copy' && s.src.buffer === s.dst.buffer && (s.src.offset ?? 0) === (s.dst.offset ?? 0))).map((s) => s.kind) };
}

const bits = (t: Tensor): number[] => Array.from(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));

/** Runs `net` fused and unfused: the two must agree bit for bit, and match the reference backend within `tol`. */
export function expectEmulatedMatches(net: Network, inputs: Record<string, Tensor>, tol: Tolerance): { fused: Emulated; plain: Emulated } {
  const fused = emulate(net, inputs, true);
  const plain = emulate(net, inputs, false);
  const reference = new ReferenceRunner(net).run(inputs);
  for (const o of net.outputs) {
    expect(bits(fused.outputs[o.name]!)).toEqual(bits(plain.outputs[o.name]!));
    expectClose(fused.outputs[o.name]!, reference[o.name]!, tol, `${net.name} ${o.name}`);
  }
  return { fused, plain };
}

