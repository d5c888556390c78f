/**
 * The ops the complex rewrite produces: `trt.complex_mul` on carriers and `aten.atan2`. Their
 * interpreter implementations and their converters (run on the reference backend) are
 * checked against the formulas computed here directly: (a+bi)(c+di) = (ac−bd) + (ad+bc)i and
 * Math.atan2. The dynamic variant of the complex_mul converter runs one engine at two sizes.
 */
import { referenceBackend } from '../../../lib/backends/reference';
import { convertSegment } from '../../../lib/conversion/convert';
import { selectConverter } from '../../../lib/conversion/registry';
import '../../../lib/conversion/converters';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType } from '../../../lib/ir/graph';
import { sym } from '../../../lib/ir/symbolic';
import { interpret } from '../../../lib/interpreter';
import { broadcastIndex, broadcastShapes } from '../../../lib/kernels/access';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { runConverted } from '../../helpers/convert-compare';
import { Random } from '../../helpers/random';

const rng = new Random(6006);

/** The complex product of two carriers, broadcasting the leading dims, computed here in float64. */
function expectedProduct(a: Tensor, b: Tensor): Tensor {
  const lead = broadcastShapes(a.shape.slice(0, -1), b.shape.slice(0, -1));
  const ia = broadcastIndex(a.shape.slice(0, -1), lead);
  const ib = broadcastIndex(b.shape.slice(0, -1), lead);
  const x = a.toArray();
  const y = b.toArray();
  const out: number[] = [];
  for (let k = 0; k < ia.length; k++) {
    const [ar, ai, br, bi] = [x[2 * ia[k]!]!, x[2 * ia[k]! + 1]!, y[2 * ib[k]!]!, y[2 * ib[k]! + 1]!];
    out.push(ar * br - ai * bi, ar * bi + ai * br);
  }
  return Tensor.from('float32', [...lead, 2], out);
}

function productGraph(a: number[], b: number[]): Graph {
  const g = new Graph('complex_mul');
  const x = g.addInput('a', tensorType('float32', a));
  const y = g.addInput('b', tensorType('float32', b));
  g.setOutputs([call(g, 'trt.complex_mul', { self: x, other: y }).output]);
  return g;
}

describe('trt.complex_mul', () => {
  test.each([
    [[3, 2], [3, 2]],
    [[2, 4, 3, 2], [4, 1, 2]],
    [[1, 8, 1, 8, 2], [1, 8, 4, 8, 2]],
    [[2], [5, 2]],
  ])('%j × %j: interpreter and converter match the formula', async (sa, sb) => {
    const g = productGraph(sa, sb);
    const inputs = [rng.tensor(sa), rng.tensor(sb)];
    const expected = expectedProduct(inputs[0]!, inputs[1]!);
    expect(g.outputs[0]!.tensorType.shape).toEqual(expected.shape);
    expectClose(interpret(g, inputs)[0]!, expected, FP32, 'interpreter');
    expectClose((await runConverted(g, inputs))[0]!, expected, FP32, 'reference backend');
  });

  test('run-time dims: the dynamic variant (gathers on the last axis) runs at two sizes of one engine', async () => {
    const g = new Graph('complex_mul_dyn');
    g.symbols.set('s0', { min: 1, max: 8 });
    const x = g.addInput('a', tensorType('float32', [sym('s0'), 1, 3, 2]));
    const y = g.addInput('b', tensorType('float32', [4, 1, 2]));
    const node = call(g, 'trt.complex_mul', { self: x, other: y });
    g.setOutputs([node.output]);
    expect(selectConverter(node)).toMatchObject({ ok: true, converter: { name: expect.stringContaining('dynamic') } });
    const network = convertSegment({
      name: g.name,
      nodes: g.calls(),
      inputs: g.inputs,
      outputs: g.outputs,
      profiles: new Map([['a', [{ min: [1, 1, 3, 2], opt: [2, 1, 3, 2], max: [8, 1, 3, 2] }]]]),
    });
    const runner = referenceBackend.createRunner(await referenceBackend.build(network, {}));
    try {
      for (const n of [2, 5]) {
        const inputs = [rng.tensor([n, 1, 3, 2]), rng.tensor([4, 1, 2])];
        const out = runner.run({ a: inputs[0]!, b: inputs[1]! })[node.output.name]!;
        expectClose(out, expectedProduct(inputs[0]!, inputs[1]!), FP32, `s0 = ${n}`);
      }
    } finally {
      runner.dispose();
    }
  });

  test('operands must be float carriers with a last dim of 2', () => {
    const g = new Graph('bad');
    const x = g.addInput('x', tensorType('float32', [3, 3]));
    const i = g.addInput('i', tensorType('int32', [3, 2]));
    expect(() => call(g, 'trt.complex_mul', { self: x, other: x })).toThrow('must have a last dimension of 2');
    expect(() => call(g, 'trt.complex_mul', { self: i, other: i })).toThrow('float32 or float64 carrier');
  });

  test('float64 carriers convert only with truncateDouble', () => {
    const g = new Graph('wide');
    const x = g.addInput('x', tensorType('float64', [3, 2]));
    const node = call(g, 'trt.complex_mul', { self: x, other: x });
    expect(selectConverter(node).ok).toBe(false);
    expect(selectConverter(node, { truncateDouble: true }).ok).toBe(true);
  });
});

describe('aten.atan2', () => {
  // Every quadrant, both axes, zeros, NaN, infinities against finite values, tiny and huge magnitudes.
  const ys = [1, 1, -1, -1, 0, 0, 3, -3, 0, 1e-4, -1e-4, 5, NaN, 1, Infinity, -2, 1e30, 1e-30];
  const xs = [1, -1, -1, 1, 2, -2, 0, 0, 0, -1, -1, 1e-6, 1, NaN, 3, -Infinity, 1, -1e-30];

  function atan2Graph(shape: number[], dtype: 'float32' | 'float16' = 'float32'): Graph {
    const g = new Graph('atan2');
    const y = g.addInput('y', tensorType(dtype, shape));
    const x = g.addInput('x', tensorType(dtype, shape));
    g.setOutputs([call(g, 'aten.atan2.default', { self: y, other: x }).output]);
    return g;
  }

  test('interpreter and converter match Math.atan2 on special values', async () => {
    const g = atan2Graph([ys.length]);
    const inputs = [Tensor.from('float32', [ys.length], ys), Tensor.from('float32', [xs.length], xs)];
    const f32 = (v: number): number => Math.fround(v);
    const expected = Tensor.from('float32', [ys.length], ys.map((y, i) => Math.atan2(f32(y), f32(xs[i]!))));
    expectClose(interpret(g, inputs)[0]!, expected, FP32, 'interpreter');
    expectClose((await runConverted(g, inputs))[0]!, expected, FP32, 'reference backend');
  });

  test('random operands with broadcasting', async () => {
    const g = new Graph('atan2_bcast');
    const y = g.addInput('y', tensorType('float32', [4, 5]));
    const x = g.addInput('x', tensorType('float32', [5]));
    g.setOutputs([call(g, 'aten.atan2.default', { self: y, other: x }).output]);
    const inputs = [rng.tensor([4, 5], 'float32', -3, 3), rng.tensor([5], 'float32', -3, 3)];
    const yv = inputs[0]!.toArray();
    const xv = inputs[1]!.toArray();
    const expected = Tensor.from('float32', [4, 5], yv.map((v, k) => Math.atan2(v, xv[k % 5]!)));
    expectClose((await runConverted(g, inputs))[0]!, expected, FP32);
  });

  test('integer operands give float32 (as torch.atan2)', () => {
    const g = new Graph('int');
    const a = g.addInput('a', tensorType('int64', [2]));
    expect(call(g, 'aten.atan2.default', { self: a, other: a }).output.tensorType.dtype).toBe('float32');
  });
});
