/**
 * Complex products over whole pairs (lib/backends/cuda/passes/complex-pairs.ts): the complex rewrite's
 * slices, four products, difference, sum and concat become one pointwise expression, which
 * fusion runs as one launch. The same bits as the rewrite's form (both on the CPU emulator), and
 * the reference backend's values; and what the pass leaves alone.
 */
import { interleaveComplexProducts } from '../../../../lib/backends/cuda/passes/complex-pairs';
import { Network, type NetTensor } from '../../../../lib/network';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { expectClose, FP32, type Tolerance } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { emulate } from '../emulated-network';

const FP16: Tolerance = { rtol: 1e-2, atol: 1e-2 };

/** a [2, s, h, p, 2] times b [1, s, 1, p, 2] as the complex rewrite gives it (static slices). */
function rewriteForm(dtype: 'float32' | 'float16', s = 5, h = 3, p = 4): Network {
  const net = new Network(`complex_${dtype}`);
  const a = net.addInput('a', dtype, [2, s, h, p, 2]);
  const b = net.addInput('b', dtype, [1, s, 1, p, 2]);
  const part = (t: NetTensor, k: number, name: string): NetTensor =>
    net.add1({ kind: 'slice', start: [0, 0, 0, 0, k], size: [...t.shape.slice(0, 4), 1], stride: [1, 1, 1, 1, 1], mode: 'strict_bounds' }, [t], name);
  const [ar, ai, br, bi] = [part(a, 0, 'a_re'), part(a, 1, 'a_im'), part(b, 0, 'b_re'), part(b, 1, 'b_im')];
  const ew = (x: NetTensor, y: NetTensor, op: 'prod' | 'sub' | 'sum', name: string): NetTensor => net.add1({ kind: 'elementwise', op }, [x, y], name);
  const re = ew(ew(ar, br, 'prod', 'ar_br'), ew(ai, bi, 'prod', 'ai_bi'), 'sub', 're');
  const im = ew(ew(ar, bi, 'prod', 'ar_bi'), ew(ai, br, 'prod', 'ai_br'), 'sum', 'im');
  const pair = net.add1({ kind: 'concat', axis: 4 }, [re, im], 'pair');
  net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [pair], 'after'), 'y');
  return net;
}

describe('interleaveComplexProducts', () => {
  test.each([
    ['float32', FP32],
    ['float16', FP16],
  ] as const)('%s: one launch over whole pairs, the same bits as the rewrite form', (dtype, tol) => {
    const source = rewriteForm(dtype);
    const { network, products } = interleaveComplexProducts(source);
    expect(products).toBe(1);
    expect(network.layers.some((l) => l.params.kind === 'concat')).toBe(false);
    const r = new Random(31);
    const feeds = { a: r.tensor([2, 5, 3, 4, 2], dtype), b: r.tensor([1, 5, 1, 4, 2], dtype) };
    const before = emulate(source, feeds, true);
    const after = emulate(network, feeds, true);
    expect(Buffer.from(after.outputs.y!.data.buffer).equals(Buffer.from(before.outputs.y!.data.buffer))).toBe(true);
    expectClose(after.outputs.y!, new ReferenceRunner(source).run(feeds).y!, tol, 'pairs vs reference');
    // One launch for the product with the abs fused into it; the rewrite form ran one launch per
    // block of the concat, then the abs.
    expect([before.launches, after.launches]).toEqual([3, 1]);
  });

  test('left alone: a part read elsewhere, a concat of other layers, parts from one carrier', () => {
    const shared = rewriteForm('float32');
    const ar = shared.layers.find((l) => l.name === 'a_re')!;
    shared.markOutput(shared.tensor(ar.outputs[0]!), 'also');
    expect(interleaveComplexProducts(shared).products).toBe(0);

    const other = new Network('other');
    const x = other.addInput('x', 'float32', [3, 1]);
    other.markOutput(other.add1({ kind: 'concat', axis: 1 }, [other.add1({ kind: 'unary', op: 'exp' }, [x], 'e'), other.add1({ kind: 'unary', op: 'neg' }, [x], 'n')], 'c'), 'y');
    expect(interleaveComplexProducts(other).products).toBe(0);

    const square = new Network('square');
    const a = square.addInput('a', 'float32', [4, 2]);
    const part = (k: number, name: string): NetTensor => square.add1({ kind: 'slice', start: [0, k], size: [4, 1], stride: [1, 1], mode: 'strict_bounds' }, [a], name);
    const [r0, i0, r1, i1] = [part(0, 'ar'), part(1, 'ai'), part(0, 'br'), part(1, 'bi')];
    const ew = (x: NetTensor, y: NetTensor, op: 'prod' | 'sub' | 'sum', name: string): NetTensor => square.add1({ kind: 'elementwise', op }, [x, y], name);
    const re = ew(ew(r0, r1, 'prod', 'p1'), ew(i0, i1, 'prod', 'p2'), 'sub', 're');
    const im = ew(ew(r0, i1, 'prod', 'p3'), ew(i0, r1, 'prod', 'p4'), 'sum', 'im');
    square.markOutput(square.add1({ kind: 'concat', axis: 1 }, [re, im], 'pair'), 'y');
    expect(interleaveComplexProducts(square).products).toBe(0);
  });
});
