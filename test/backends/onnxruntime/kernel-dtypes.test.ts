/**
 * Lowerings that emit an ONNX op onnxruntime's CPU provider has no kernel for at some dtype:
 * Where has none for bool, int8 or bfloat16, Expand none for bfloat16 (the session refuses
 * with "Could not find an implementation for Where(16) node with name ..."). Select, the
 * fill mode of slice and stride-0 slices, static and from shape tensors, at every dtype a
 * network carries, must give the reference backend's answer bit for bit (they only move
 * values). Found by the differential test (test/backends/differential.test.ts): ONNX's
 * Dropout tests with a mask output lower to a select of bools.
 */
import { onnxruntimeBackend } from '../../../lib/backends/onnxruntime';
import { layerOfMessage } from '../../../lib/backends/onnxruntime/run/engine';
import type { DType } from '../../../lib/ir/dtype';
import { Tensor } from '../../../lib/ir/tensor';
import { Network, type LayerParams, type TrtDType } from '../../../lib/network';
import { expectExact } from '../../helpers/compare';
import { runNetwork } from '../reference/helpers';
import { runOrtEngine } from './engine-worker';

const DTYPES: DType[] = ['bool', 'int8', 'uint8', 'int32', 'int64', 'float16', 'bfloat16', 'float32'];

/** Twelve values of `dtype` with both signs (where it has them) and both bools. */
function values(dtype: DType, shape: number[]): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return Tensor.from(dtype, shape, Array.from({ length: n }, (_, i) => (dtype === 'bool' ? (i % 3 === 0 ? 1 : 0) : ((i * 5) % 7) - (dtype === 'uint8' ? 0 : 3))));
}

interface Case {
  label: string;
  /** The network's layer over input `x` (float [3, 4] data of the dtype) and any shape-tensor inputs. */
  params: LayerParams;
  extra?: Record<string, Tensor>;
  condition?: boolean;
}

const shapeTensors = (start: number[], size: number[], stride: number[]): Record<string, Tensor> => ({
  start: Tensor.from('int64', [2], start),
  size: Tensor.from('int64', [2], size),
  stride: Tensor.from('int64', [2], stride),
});

const CASES: Case[] = [
  { label: 'select', params: { kind: 'select' }, condition: true },
  { label: 'slice, fill mode', params: { kind: 'slice', start: [-1, 1], size: [5, 3], stride: [1, 1], mode: 'fill' } },
  { label: 'slice, stride 0', params: { kind: 'slice', start: [1, 0], size: [3, 4], stride: [0, 1], mode: 'strict_bounds' } },
  { label: 'slice from shape tensors, fill mode', params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'fill' }, extra: shapeTensors([-1, 1], [5, 3], [1, 1]) },
  { label: 'slice from shape tensors, stride 0', params: { kind: 'slice', start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'strict_bounds' }, extra: shapeTensors([1, 0], [3, 4], [0, 1]) },
];

/** The network of one case at `dtype`, and its feeds. */
function build(c: Case, dtype: DType): { network: Network; feeds: Record<string, Tensor> } {
  const network = new Network('kernel-dtypes');
  const feeds: Record<string, Tensor> = {};
  const input = (name: string, t: Tensor) => {
    feeds[name] = t;
    return network.addInput(name, t.dtype as TrtDType, t.shape);
  };
  const x = input('x', values(dtype, [3, 4]));
  const inputs = c.condition ? [input('cond', values('bool', [3, 1])), x, input('y', values(dtype, [1, 4]))] : [x];
  for (const [name, t] of Object.entries(c.extra ?? {})) inputs.push(input(name, t));
  network.markOutput(network.add1(c.params, inputs, 'layer'), 'out');
  return { network, feeds };
}

describe('onnxruntime lowerings at dtypes its Where and Expand kernels lack', () => {
  const all = CASES.flatMap((c) => DTYPES.map((d) => [c.label, d, c] as const));
  it.each(all)('%s of %s matches the reference exactly', async (_label, dtype, c) => {
    const { network, feeds } = build(c, dtype);
    const expected = (await runNetwork(network, feeds)).out!;
    const actual = (await runOrtEngine(await onnxruntimeBackend.build(network, {} as never, { type: 'cpu' } as never), feeds)).out!;
    expectExact(actual, expected, `${c.label} ${dtype}`);
  });
});

describe('layerOfMessage', () => {
  it('takes the layer from a missing kernel\'s "node with name" (not the word "with")', () => {
    expect(layerOfMessage("Could not find an implementation for Where(16) node with name 'layer#1'")).toBe('layer');
  });
  it('takes the layer from the "(node:\'x\' ...)" of a kernel missing for a type', () => {
    const message = "Failed to find kernel for Reshape(19) (node:'flatten/reshape#2' ep:'CPUExecutionProvider'). Op with name (flatten/reshape#2) domain () and type (Reshape) kernel is not supported in CPUExecutionProvider. Encountered following errors: ( Version mismatch. node_version: 19 kernel start version: 1 kernel_end_version: 4";
    expect(layerOfMessage(message)).toBe('flatten/reshape');
  });
  it('still reads the "Name:" of a run error and the bare "node x" form', () => {
    expect(layerOfMessage("Non-zero status code returned while running Gather node. Name:'gather#2' Status Message: indices out of range")).toBe('gather');
    expect(layerOfMessage("node 'slice#3' failed")).toBe('slice');
  });
});
