/**
 * TensorRT has no int16, uint16, uint32 or uint64: an op that reads or writes one is refused
 * by the converter registry with the value and its type, so compile() runs it in a fallback
 * segment (the interpreter), or, under requireFullCompilation, refuses naming the node. The
 * graph: x uint16 → add x x (wraps at 2^16) → cast float32 → relu; only relu converts.
 */
import { compile } from '../../lib/compile';
import { selectConverter } from '../../lib/conversion/registry';
import '../../lib/conversion/converters';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { rejection } from '../helpers/errors';

function uint16Graph(): Graph {
  const g = new Graph('uint16_chain');
  const x = g.addInput('x', tensorType('uint16', [4]));
  const doubled = call(g, 'aten.add.Tensor', { self: x, other: x }, { name: 'double' }).output;
  const wide = call(g, 'aten._to_copy.default', { self: doubled, dtype: 'float32' }, { name: 'widen' }).output;
  const y = call(g, 'aten.relu.default', { self: wide }, { name: 'relu' }).output;
  g.setOutputs([y], ['y']);
  return g;
}

test('the registry refuses the uint16 ops, naming the value and its type', () => {
  const g = uint16Graph();
  const [double, widen, relu] = g.nodes.filter((n) => n.kind === 'call');
  for (const node of [double!, widen!]) {
    const s = selectConverter(node);
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.reasons.join('; ')).toMatch(/^%\w+ is uint16: TensorRT has no uint16$/);
  }
  expect(selectConverter(relu!).ok).toBe(true);
});

test('compile() runs the uint16 ops in a fallback segment and the program computes them exactly', async () => {
  const program = await compile(uint16Graph(), { backend: 'reference', minBlockSize: 1 });
  try {
    expect(program.data.segments.map((s) => s.kind)).toEqual(['fallback', 'engine']);
    expect(program.inputs.map((io) => io.dtype)).toEqual(['uint16']);
    const [y] = await program.run([Tensor.from('uint16', [4], [1, 40000, 65535, 0])]);
    // 2·40000 = 80000 ≡ 14464 and 2·65535 = 131070 ≡ 65534 (mod 2^16).
    expect(y!.toArray()).toEqual([2, 14464, 65534, 0]);
  } finally {
    await program.dispose();
  }
});

test('under requireFullCompilation compile() refuses with E_UNSUPPORTED_OP naming the nodes and the type', async () => {
  const e = await rejection(compile(uint16Graph(), { backend: 'reference', requireFullCompilation: true }));
  expect(e.code).toBe('E_UNSUPPORTED_OP');
  expect(e.message).toMatch(/node double \(aten\.add\.Tensor\): %\w+ is uint16: TensorRT has no uint16/);
  expect(e.message).toMatch(/node widen \(aten\._to_copy\.default\): %\w+ is uint16/);
});
