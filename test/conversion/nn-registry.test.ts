/**
 * NN converters as registered: every NN target has a static converter that checks its
 * arguments (some also a dynamic-only one, lib/conversion/converters/dynamic.ts); dynamic
 * nodes without one are refused with a reason; float64 graphs convert under truncateDouble.
 */
import { convertSegment } from '../../lib/conversion/convert';
import { listConverters, selectConverter } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { Tensor } from '../../lib/ir/tensor';
import { referenceBackend } from '../../lib/backends/reference';
import { interpret } from '../../lib/interpreter';
import { cast } from '../../lib/kernels/unary';
import { expectClose } from '../helpers/compare';
import { convolutionArgs } from '../helpers/conv-args';
import { rng } from './nn-helpers';

const NN_TARGETS = [
  'aten.sum.dim_IntList',
  'aten.mean.dim',
  'aten.amax.default',
  'aten.max.dim',
  'aten.argmax.default',
  'aten.logsumexp.default',
  'aten._softmax.default',
  'aten.cumsum.default',
  'aten.matmul.default',
  'aten.linear.default',
  'aten.addmm.default',
  'aten.convolution.default',
  'trt.conv_padded',
  'aten.max_pool2d_with_indices.default',
  'aten.avg_pool2d.default',
  'aten._adaptive_avg_pool2d.default',
  'aten.adaptive_max_pool2d.default',
  'aten.native_layer_norm.default',
  'aten.rms_norm.default',
  'aten._native_batch_norm_legit_no_training.default',
  'aten.native_group_norm.default',
  'aten.scaled_dot_product_attention.default',
  'aten.upsample_bilinear2d.vec',
  'trt.resize',
  'aten.topk.default',
];

test('NN converters have a static converter that checks its arguments', () => {
  const listing = listConverters();
  for (const target of NN_TARGETS) {
    expect(listing.filter((c) => c.target === target && c.static)).toEqual([expect.objectContaining({ target, dynamic: false, static: true, checksArgs: true })]);
  }
});

test('a node with a run-time dim is refused where only static converters exist', () => {
  const g = new Graph('dyn');
  g.symbols.set('s0', { min: 1, max: 8 });
  const x = g.addInput('x', tensorType('float32', [sym('s0'), 4]));
  const node = call(g, 'aten.logsumexp.default', { self: x, dim: [-1], keepdim: false });
  const s = selectConverter(node);
  expect(s.ok).toBe(false);
  if (!s.ok) expect(s.reasons.join('; ')).toMatch(/support only static shapes/);
  // softmax has a dynamic-only converter too.
  const soft = selectConverter(call(g, 'aten._softmax.default', { self: x, dim: -1, half_to_float: false }));
  expect(soft.ok && soft.converter).toMatchObject({ static: false, dynamic: true });
});

test('float64 graphs convert in float32 under truncateDouble', async () => {
  const g = new Graph('f64');
  const x = g.addInput('x', tensorType('float64', [2, 3, 6, 6]));
  const w = g.addConstant('w', rng.tensor([4, 3, 3, 3], 'float64'), 'parameter');
  const b = g.addConstant('b', rng.tensor([4], 'float64'), 'parameter');
  const conv = call(g, 'aten.convolution.default', convolutionArgs({ input: x, weight: w, bias: b, stride: [1, 1], padding: [1, 1] })).output;
  const pooled = call(g, 'aten.avg_pool2d.default', { self: conv, kernel_size: [2, 2], stride: [], padding: [0, 0], ceil_mode: true, count_include_pad: true }).output;
  const out = call(g, 'aten._log_softmax.default', { self: pooled, dim: 1, half_to_float: false }).output;
  g.setOutputs([out]);
  const settings = { truncateDouble: true };
  for (const node of g.calls()) expect(selectConverter(node, settings).ok).toBe(true);
  const network = convertSegment({ name: 'f64', nodes: g.calls(), inputs: g.inputs, outputs: g.outputs }, settings);
  expect(network.tensors[network.outputs[0]!.tensor]!.dtype).toBe('float32');
  const data = rng.tensor([2, 3, 6, 6], 'float64');
  const runner = referenceBackend.createRunner(await referenceBackend.build(network, {}));
  const actual = runner.run({ x: cast(data, 'float32') })[out.name]!;
  runner.dispose();
  const expected = cast(interpret(g, [data])[0]!, 'float32');
  expectClose(actual, expected, { rtol: 1e-4, atol: 1e-4 });
  expect(actual).toBeInstanceOf(Tensor);
});
