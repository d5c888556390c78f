/**
 * Lowers one layer at the concrete shapes of its inputs, runs the steps on the emulator and
 * returns the outputs next to the reference backend's, for the lowering tests.
 */
import { lowerLayer, type LoweredStep } from '../../../lib/backends/cuda/layers';
import { executeLayer } from '../../../lib/network/evaluate';
import { dtypeInfo } from '../../../lib/ir/dtype';
import { readNumbers } from '../../../lib/kernels/access';
import type { Layer, LayerParams, TrtDType } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { runSteps } from './index';

/** Bytes never written by a correct lowering: outputs and scratch start as this pattern. */
const GARBAGE = 0xa5;

const bytesOf = (t: Tensor): Uint8Array => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice();

function tensorFrom(dtype: TrtDType, shape: readonly number[], bytes: Uint8Array): Tensor {
  const info = dtypeInfo(dtype);
  const copy = bytes.slice();
  return new Tensor(dtype, shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes)));
}

/** Host-known values of small integer inputs, as the backend passes shape tensors. */
export function knownValues(inputs: ReadonlyArray<Tensor | null>): Array<number[] | undefined> {
  return inputs.map((t) => (t && (t.dtype === 'int32' || t.dtype === 'int64') && t.rank <= 1 && t.size <= 64 ? Array.from(readNumbers(t)) : undefined));
}

export interface LayerRun {
  expected: Tensor[];
  actual: Tensor[];
  steps: LoweredStep[];
  /** The status word of the layer's run-time checks after the run (0: none reported, or none registered). */
  status: number;
}

export function layerOf(params: LayerParams, inputs: ReadonlyArray<Tensor | null>, outputs: number, name = 'layer'): Layer {
  return { index: 0, name, params, inputs: inputs.map((t, i) => (t ? i : null)), outputs: Array.from({ length: outputs }, (_, i) => inputs.length + i) };
}

/**
 * The steps lowering `layer` gives at these inputs and outputs (buffers numbered inputs first,
 * then outputs, then scratch, weights and the status word of run-time checks, zeroed, whose
 * position in `extra` is pushed to `statusAt`). Input i starts `pads[i]` bytes into its buffer.
 */
export function lowerAt(
  layer: Layer,
  inputs: ReadonlyArray<Tensor | null>,
  outputs: ReadonlyArray<{ dtype: TrtDType; shape: readonly number[] }>,
  extra: Uint8Array[] = [],
  pads: readonly number[] = [],
  statusAt: number[] = [],
): LoweredStep[] {
  const base = inputs.length + outputs.length;
  return lowerLayer({
    layer,
    inputs: inputs.map((t, i) => (t ? { dtype: t.dtype as TrtDType, shape: t.shape, at: pads[i] ? { buffer: i, offset: pads[i] } : { buffer: i } } : null)),
    outputs: outputs.map((o, i) => ({ dtype: o.dtype, shape: o.shape, at: { buffer: inputs.length + i } })),
    values: knownValues(inputs),
    scratch: (bytes) => {
      extra.push(new Uint8Array(bytes).fill(GARBAGE));
      return { buffer: base + extra.length - 1 };
    },
    weight: (t) => {
      extra.push(bytesOf(t));
      return { buffer: base + extra.length - 1 };
    },
    check: () => {
      if (statusAt.length === 0) {
        extra.push(new Uint8Array(4));
        statusAt.push(extra.length - 1);
      }
      return [{ pointer: { buffer: base + statusAt[0]! } }, { scalar: 'u32', value: 1 }];
    },
  });
}

/**
 * `edit` may replace the lowered steps before they run (tests that break a kernel on purpose);
 * `pads` place inputs that many bytes into their buffers (alignment-dependent forms).
 */
export function runLayer(params: LayerParams, inputs: ReadonlyArray<Tensor | null>, name = 'layer', edit = (steps: LoweredStep[]): LoweredStep[] => steps, pads: readonly number[] = []): LayerRun {
  const expected = executeLayer(layerOf(params, inputs, 1, name), inputs);
  const layer = layerOf(params, inputs, expected.length, name);
  const outs = expected.map((t) => ({ dtype: t.dtype as TrtDType, shape: t.shape }));
  const extra: Uint8Array[] = [];
  const statusAt: number[] = [];
  const steps = edit(lowerAt(layer, inputs, outs, extra, pads, statusAt));
  const padded = (bytes: Uint8Array, pad = 0): Uint8Array => {
    const b = new Uint8Array(pad + bytes.length).fill(GARBAGE);
    b.set(bytes, pad);
    return b;
  };
  const buffers = [
    ...inputs.map((t, i) => (t ? padded(bytesOf(t), pads[i]) : new Uint8Array(0))),
    ...expected.map((t) => new Uint8Array(t.data.byteLength).fill(GARBAGE)),
    ...extra,
  ];
  runSteps(steps, buffers);
  const actual = expected.map((t, i) => tensorFrom(t.dtype as TrtDType, t.shape, buffers[inputs.length + i]!));
  const word = statusAt.length === 0 ? undefined : extra[statusAt[0]!]!;
  const status = word === undefined ? 0 : new DataView(word.buffer, word.byteOffset, 4).getUint32(0, true);
  return { expected, actual, steps, status };
}
