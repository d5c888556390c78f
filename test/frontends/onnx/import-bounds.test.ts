/**
 * What an ONNX import builds from sizes and values a model declares: nothing proportional to
 * them at import (Hardmax's positions, EyeLike, the cosine windows come out as nodes when
 * large), and no shape arithmetic folded past what float64 holds exactly (an int64 value past
 * 2^53 is computed at run time, as int64). Found by the fuzzer: a Hardmax over a declared axis
 * of 2^31 grew the heap to 1.6 GB; 3 × 3002399751580331 folded to ...992.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { buildSymbolicModel, constantNode, i64 } from '../../helpers/onnx-symbolic-model';

const quickly = <T>(f: () => T): T => {
  const started = Date.now();
  const out = f();
  expect(Date.now() - started).toBeLessThan(2000);
  return out;
};

test('Hardmax over a declared axis of 2^31 imports as nodes, at once', () => {
  const model = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2, 2 ** 31] } }, nodes: [{ op: 'Hardmax', inputs: ['x'], outputs: ['y'], attrs: { axis: 1 } }], outputs: ['y'], opset: 13 });
  const graph = quickly(() => loadOnnx(model));
  expect(graph.calls().some((n) => n.target.startsWith('aten.arange'))).toBe(true);
  expect(graph.nodes.filter((n) => n.kind === 'constant').every((n) => n.tensor!.size < 1024)).toBe(true);
});

test('Hardmax still picks the first maximum along the axis', () => {
  const model = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2, 4] } }, nodes: [{ op: 'Hardmax', inputs: ['x'], outputs: ['y'], attrs: { axis: 1 } }], outputs: ['y'], opset: 13 });
  const [y] = interpret(loadOnnx(model), [Tensor.from('float32', [2, 4], [1, 3, 3, 2, -1, -5, 0, -2])]);
  expect(Array.from(y!.data as Float32Array)).toEqual([0, 1, 0, 0, 0, 0, 1, 0]);
});

test('EyeLike of a declared [2^20, 2^20] imports as nodes; a small one is the identity shifted by k', () => {
  const big = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2 ** 20, 2 ** 20] } }, nodes: [{ op: 'EyeLike', inputs: ['x'], outputs: ['y'] }], outputs: ['y'] });
  quickly(() => loadOnnx(big));
  const small = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [3, 4] } }, nodes: [{ op: 'EyeLike', inputs: ['x'], outputs: ['y'], attrs: { k: 1 } }], outputs: ['y'] });
  const [y] = interpret(loadOnnx(small), [new Tensor('float32', [3, 4])]);
  expect(Array.from(y!.data as Float32Array)).toEqual([0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
});

test('a Hann window of 2^30 imports as nodes; one past the constant bound matches the formula', () => {
  const window = (size: number): Uint8Array =>
    buildSymbolicModel({ inputs: {}, nodes: [constantNode('n', Tensor.scalar('int64', size)), { op: 'HannWindow', inputs: ['n'], outputs: ['y'] }], outputs: ['y'] });
  quickly(() => loadOnnx(window(2 ** 30)));
  const size = 70_000;
  const [y] = interpret(loadOnnx(window(size)), []);
  const values = y!.data as Float32Array;
  expect(values.length).toBe(size);
  for (const i of [0, 1, 12_345, 35_000, 69_999]) expect(values[i]).toBeCloseTo(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size), 6);
});

test('shape arithmetic past 2^53 is computed exactly at run time, not folded in float64', () => {
  const model = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['s'] },
      constantNode('k', i64([3002399751580331])),
      { op: 'Mul', inputs: ['s', 'k'], outputs: ['y'] },
    ],
    outputs: ['y'],
  });
  const [y] = interpret(loadOnnx(model), [new Tensor('float32', [3, 4])]);
  // 3 · 3002399751580331 = 9007199254740993 (2^53 + 1, which float64 cannot hold), 4 · it exactly.
  expect(Array.from(y!.data as BigInt64Array)).toEqual([9007199254740993n, 12009599006321324n]);
});

test('a shape value folded past 2^53 is E_BAD_MODEL naming the node; slice bounds of ±INT64_MAX still mean "to the end"', () => {
  const tiled = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['s'] },
      { op: 'Tile', inputs: ['s', 'r'], outputs: ['t'] },
      { op: 'Expand', inputs: ['x', 't'], outputs: ['y'] },
    ],
    initializers: { r: i64([2 ** 53]) },
    outputs: ['y'],
  });
  expect(() => loadOnnx(tiled)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('"Tile_1" (Tile): repeats (input 1) holds 9007199254740992') }));
  const sliced = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    nodes: [{ op: 'Slice', inputs: ['x', 'starts', 'ends'], outputs: ['y'] }],
    initializers: { starts: i64([1]), ends: Tensor.from('int64', [1], [9223372036854775807n]) },
    outputs: ['y'],
  });
  const [y] = interpret(loadOnnx(sliced), [Tensor.from('float32', [3, 4], Array.from({ length: 12 }, (_, i) => i))]);
  expect(y!.shape).toEqual([2, 4]);
});

test('a folded list holding INT64_MAX (a "to the end" bound) is stored exactly when it becomes a tensor', () => {
  const model = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['s'] },
      { op: 'Concat', inputs: ['s', 'end'], outputs: ['y'], attrs: { axis: 0 } },
    ],
    initializers: { end: Tensor.from('int64', [1], [9223372036854775807n]) },
    outputs: ['y'],
  });
  const [y] = interpret(loadOnnx(model), [new Tensor('float32', [3, 4])]);
  expect(Array.from(y!.data as BigInt64Array)).toEqual([3n, 4n, 9223372036854775807n]);
});
