/**
 * The float models the calibration tests quantize, built in memory as ONNX with seeded random
 * weights, and seeded random calibration batches for them:
 * - an MLP: Gemm (transB) → Relu → MatMul → Add, on x [N, 16];
 * - a small conv net: Conv 3→8 (3×3) → Relu → Conv 8→16 (3×3, stride 2) → Relu →
 *   ConvTranspose 16→8 (2×2, stride 2) → Relu → GlobalAveragePool → Flatten → Gemm 8→10, on
 *   images [N, 3, 12, 12].
 * Weights are uniform in ±sqrt(3 / fan-in) so activations keep their size through the layers.
 */
import { Tensor } from '../../lib/ir/tensor';
import { buildSymbolicModel, type SymNode } from '../helpers/onnx-symbolic-model';
import { Random } from '../helpers/random';

function weight(rng: Random, shape: number[], fanIn: number): Tensor {
  const a = Math.sqrt(3 / fanIn);
  return rng.tensor(shape, 'float32', -a, a);
}

export interface TestModel {
  readonly model: Uint8Array;
  readonly input: string;
  /** The input's shape at batch size n. */
  readonly shape: (n: number) => number[];
  /** The float initializers, by name. */
  readonly weights: Readonly<Record<string, Tensor>>;
}

export function mlp(seed = 1, opset = 17): TestModel {
  const rng = new Random(seed);
  const weights = {
    fc1_w: weight(rng, [32, 16], 16), // Gemm with transB: [N, K]
    fc1_b: weight(rng, [32], 16),
    fc2_w: weight(rng, [32, 10], 32), // MatMul: [K, N]
    fc2_b: weight(rng, [10], 32),
  };
  const nodes: SymNode[] = [
    { op: 'Gemm', name: 'fc1', inputs: ['x', 'fc1_w', 'fc1_b'], outputs: ['h1'], attrs: { transB: 1 } },
    { op: 'Relu', name: 'relu1', inputs: ['h1'], outputs: ['a1'] },
    { op: 'MatMul', name: 'fc2', inputs: ['a1', 'fc2_w'], outputs: ['h2'] },
    { op: 'Add', name: 'fc2_bias', inputs: ['h2', 'fc2_b'], outputs: ['y'] },
  ];
  const model = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: ['N', 16] } }, initializers: weights, nodes, outputs: ['y'], opset });
  return { model, input: 'x', shape: (n) => [n, 16], weights };
}

export function convNet(seed = 2, opset = 17): TestModel {
  const rng = new Random(seed);
  const weights = {
    conv1_w: weight(rng, [8, 3, 3, 3], 27),
    conv1_b: weight(rng, [8], 27),
    conv2_w: weight(rng, [16, 8, 3, 3], 72),
    conv2_b: weight(rng, [16], 72),
    up_w: weight(rng, [16, 8, 2, 2], 64), // ConvTranspose: [C_in, C_out, kH, kW]
    up_b: weight(rng, [8], 64),
    fc_w: weight(rng, [8, 10], 8), // Gemm without transB: [K, N]
    fc_b: weight(rng, [10], 8),
  };
  const nodes: SymNode[] = [
    { op: 'Conv', name: 'conv1', inputs: ['x', 'conv1_w', 'conv1_b'], outputs: ['c1'], attrs: { pads: [1, 1, 1, 1] } },
    { op: 'Relu', name: 'relu1', inputs: ['c1'], outputs: ['r1'] },
    { op: 'Conv', name: 'conv2', inputs: ['r1', 'conv2_w', 'conv2_b'], outputs: ['c2'], attrs: { pads: [1, 1, 1, 1], strides: [2, 2] } },
    { op: 'Relu', name: 'relu2', inputs: ['c2'], outputs: ['r2'] },
    { op: 'ConvTranspose', name: 'up', inputs: ['r2', 'up_w', 'up_b'], outputs: ['u'], attrs: { strides: [2, 2] } },
    { op: 'Relu', name: 'relu3', inputs: ['u'], outputs: ['r3'] },
    { op: 'GlobalAveragePool', name: 'pool', inputs: ['r3'], outputs: ['p'] },
    { op: 'Flatten', name: 'flatten', inputs: ['p'], outputs: ['f'] },
    { op: 'Gemm', name: 'fc', inputs: ['f', 'fc_w', 'fc_b'], outputs: ['y'] },
  ];
  const model = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: ['N', 3, 12, 12] } }, initializers: weights, nodes, outputs: ['y'], opset });
  return { model, input: 'x', shape: (n) => [n, 3, 12, 12], weights };
}

/** `count` batches of `n` rows each, uniform in [-1, 1), from `seed`. */
export function batchesFor(m: TestModel, count: number, n: number, seed: number): Record<string, Tensor>[] {
  const rng = new Random(seed);
  return Array.from({ length: count }, () => ({ [m.input]: rng.tensor(m.shape(n)) }));
}
