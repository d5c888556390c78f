/**
 * Complex matrix products, a second reference independent of rewrite.test.ts (which compares
 * the lowered graph with the interpreter's complex kernel): hand-computed products, compiled
 * through the complex lowering and the converters and run on the reference backend; and, on
 * random matrices, the product of the parts computed with real loops, and (iA)·B = i(A·B).
 */
import { compile } from '../../../lib/compile';
import { interpret } from '../../../lib/interpreter';
import { Graph, tensorType } from '../../../lib/ir/graph';
import { lowerComplex } from '../../../lib/lowering/complex';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, expectTensor, FP32 } from '../../helpers/compare';
import { Random } from '../../helpers/random';
import { builder, carrierOf, complexOf } from './helpers';

const rng = new Random(0x6d6d);

/** a @ b for interleaved complex row-major matrices (or real ones: imaginary parts 0). */
function handMatmul(a: number[][][], b: number[][][]): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < b[0]!.length; j++) {
      let re = 0;
      let im = 0;
      for (let k = 0; k < b.length; k++) {
        const [ar, ai] = a[i]![k]!;
        const [br, bi] = b[k]![j]!;
        re += ar! * br! - ai! * bi!;
        im += ar! * bi! + ai! * br!;
      }
      out.push(re, im);
    }
  }
  return out;
}

function matmulGraph(target: 'aten.matmul.default' | 'aten.mm.default', a: Tensor, b: Tensor): Graph {
  const g = new Graph('complex_matmul');
  const op = builder(g);
  const x = g.addInput('a', tensorType(a.dtype, [...a.shape]));
  const y = g.addInput('b', tensorType(b.dtype, [...b.shape]));
  const product = op(target, target === 'aten.mm.default' ? { self: x, mat2: y } : { self: x, other: y }, 'product');
  g.setOutputs([op('aten.view_as_real.default', { self: product }, 'pairs')]);
  return g;
}

// [[1+2i, 3−1i], [0+1i, 2+0i]] @ [[2−1i, 1+1i], [−1+3i, 4+0i]]:
// row 0: (1+2i)(2−i) + (3−i)(−1+3i) = (4+3i) + (0+10i) = 4+13i;  (1+2i)(1+i) + (3−i)·4 = (−1+3i) + (12−4i) = 11−1i
// row 1: i(2−i) + 2(−1+3i) = (1+2i) + (−2+6i) = −1+8i;           i(1+i) + 2·4 = (−1+i) + 8 = 7+1i
const A = [
  [[1, 2], [3, -1]],
  [[0, 1], [2, 0]],
];
const B = [
  [[2, -1], [1, 1]],
  [[-1, 3], [4, 0]],
];
const complex = (m: number[][][]): Tensor => Tensor.from('complex64', [m.length, m[0]!.length], m.flat(2));
const realPart = (m: number[][][]): number[][][] => m.map((row) => row.map(([re]) => [re!, 0]));

describe('complex matmul through compile() (lowering, converters, reference engine)', () => {
  test('the hand-computed product is what the formulas in the comment say', () => {
    expect(handMatmul(A, B)).toEqual([4, 13, 11, -1, -1, 8, 7, 1]);
  });

  test.each([
    ['complex × complex (mm)', 'aten.mm.default', complex(A), complex(B), handMatmul(A, B)],
    ['complex × complex (matmul)', 'aten.matmul.default', complex(A), complex(B), [4, 13, 11, -1, -1, 8, 7, 1]],
    ['complex matrix × complex vector (matmul)', 'aten.matmul.default', complex(A), Tensor.from('complex64', [2], [2, -1, -1, 3]), [4, 13, -1, 8]],
    ['real parts only (imaginary parts zero)', 'aten.mm.default', complex(realPart(A)), complex(realPart(B)), handMatmul(realPart(A), realPart(B))],
  ] as const)('%s', async (_label, target, a, b, expected) => {
    const program = await compile(matmulGraph(target, a, b), { backend: 'reference' });
    try {
      expect(program.report.ops.filter((o) => !o.converted)).toEqual([]);
      const [pairs] = await program.run([a, b]);
      expectTensor(pairs!, 'float32', [...a.shape.slice(0, -1), ...b.shape.slice(1), 2], expected);
    } finally {
      await program.dispose();
    }
  }, 60_000);
});

describe('complex matmul identities on random matrices (lowered graph, interpreter on carriers)', () => {
  /** The lowered product of complex a and b, as a complex tensor. */
  function lowered(a: Tensor, b: Tensor): Tensor {
    const g = new Graph('mm');
    const op = builder(g);
    const x = g.addInput('a', tensorType('complex64', [...a.shape]));
    const y = g.addInput('b', tensorType('complex64', [...b.shape]));
    g.setOutputs([op('aten.matmul.default', { self: x, other: y }, 'p')]);
    lowerComplex(g);
    return complexOf(interpret(g, [carrierOf(a), carrierOf(b)])[0]!);
  }

  /** The real matrix product of the parts (float64, by loops). */
  function parts(t: Tensor): { re: number[]; im: number[] } {
    const v = t.toArray();
    return { re: v.filter((_, i) => i % 2 === 0), im: v.filter((_, i) => i % 2 === 1) };
  }
  function realMm(x: number[], y: number[], n: number, k: number, m: number): number[] {
    return Array.from({ length: n * m }, (_, idx) => {
      const [i, j] = [Math.floor(idx / m), idx % m];
      let s = 0;
      for (let l = 0; l < k; l++) s += x[i * k + l]! * y[l * m + j]!;
      return s;
    });
  }

  test.each([
    [3, 4, 5],
    [1, 7, 2],
    [6, 1, 3],
  ])('n=%i, k=%i, m=%i: re = ReA·ReB − ImA·ImB, im = ReA·ImB + ImA·ReB', (n, k, m) => {
    const a = rng.tensor([n, k], 'complex64');
    const b = rng.tensor([k, m], 'complex64');
    const { re: ar, im: ai } = parts(a);
    const { re: br, im: bi } = parts(b);
    const re = realMm(ar, br, n, k, m).map((v, i) => v - realMm(ai, bi, n, k, m)[i]!);
    const im = realMm(ar, bi, n, k, m).map((v, i) => v + realMm(ai, br, n, k, m)[i]!);
    const expected = Tensor.from('complex64', [n, m], re.flatMap((r, i) => [r, im[i]!]));
    expectClose(lowered(a, b), expected, FP32, `[${n}, ${k}] @ [${k}, ${m}]`);
  });

  test('(iA)·B = i(A·B): multiplying A by i rotates every entry of the product', () => {
    const a = rng.tensor([3, 4], 'complex64');
    const b = rng.tensor([4, 2], 'complex64');
    const v = a.toArray();
    const ia = Tensor.from('complex64', a.shape, v.flatMap((_, i) => (i % 2 === 0 ? [-v[i + 1]!, v[i]!] : [])));
    const p = lowered(a, b).toArray();
    const rotated = Tensor.from('complex64', [3, 2], p.flatMap((_, i) => (i % 2 === 0 ? [-p[i + 1]!, p[i]!] : [])));
    expectClose(lowered(ia, b), rotated, FP32, '(iA)B');
  });
});
