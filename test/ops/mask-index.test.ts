/**
 * Boolean-mask indexing as .pt2 exports it: aten.index.Tensor with a bool mask as its one index
 * tensor (`x[mask]`, `x[:, mask]`) and aten.masked_select. Their output dim is the count of true
 * elements, a data-dependent symbol; the interpreter computes them, and they compile into a
 * nonzero of the mask and a gather on the reference and onnxruntime backends (fallback on cuda).
 * Compared with hand-computed values: masks with some, no and every element true; a mask whose
 * shape does not match self is refused at import, naming the node.
 */
import { compile, dryRun } from '../../lib/compile';
import '../../lib/interpreter/ops';
import { interpret } from '../../lib/interpreter';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { isDataDependentDim } from '../../lib/ir/ops/data-dependent';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';

const X = Tensor.from('float32', [2, 3, 4], Array.from({ length: 24 }, (_, i) => i));
const mask = (shape: number[], values: number[]): Tensor => Tensor.from('bool', shape, values);

/**
 * x [2, 3, 4] and three masks: m2 [2, 3] for x[m2] → [N, 4]; m1 [4] for x[:, :, m1] → [2, 3, N];
 * m3 [3, 4] for x[:, m3] → [2, N]; and masked_select(x, m1) (m1 broadcast over x) → [N].
 */
function maskGraph(): Graph {
  const g = new Graph('masks');
  const x = g.addInput('x', tensorType('float32', [2, 3, 4]));
  const m2 = g.addInput('m2', tensorType('bool', [2, 3]));
  const m1 = g.addInput('m1', tensorType('bool', [4]));
  const m3 = g.addInput('m3', tensorType('bool', [3, 4]));
  const rows = call(g, 'aten.index.Tensor', { self: x, indices: [m2] }, { name: 'rows' }).output;
  const cols = call(g, 'aten.index.Tensor', { self: x, indices: [null, null, m1] }, { name: 'cols' }).output;
  const middle = call(g, 'aten.index.Tensor', { self: x, indices: [null, m3] }, { name: 'middle' }).output;
  const selected = call(g, 'aten.masked_select.default', { self: x, mask: m1 }, { name: 'selected' }).output;
  g.setOutputs([rows, cols, middle, selected]);
  return g;
}

/** x's elements by hand: x[b, r, c] = 12b + 4r + c. */
const at = (b: number, r: number, c: number): number => 12 * b + 4 * r + c;
const CASES = {
  some: {
    m2: mask([2, 3], [1, 0, 1, 0, 0, 1]),
    m1: mask([4], [0, 1, 0, 1]),
    m3: mask([3, 4], [1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0]),
    rows: { shape: [3, 4], values: [0, 2, 5].flatMap((k) => [0, 1, 2, 3].map((c) => at(Math.floor(k / 3), k % 3, c))) },
    cols: { shape: [2, 3, 2], values: [0, 1].flatMap((b) => [0, 1, 2].flatMap((r) => [at(b, r, 1), at(b, r, 3)])) },
    middle: { shape: [2, 3], values: [0, 1].flatMap((b) => [at(b, 0, 0), at(b, 1, 3), at(b, 2, 2)]) },
    selected: { shape: [12], values: [0, 1].flatMap((b) => [0, 1, 2].flatMap((r) => [at(b, r, 1), at(b, r, 3)])) },
  },
  none: {
    m2: mask([2, 3], new Array<number>(6).fill(0)),
    m1: mask([4], [0, 0, 0, 0]),
    m3: mask([3, 4], new Array<number>(12).fill(0)),
    rows: { shape: [0, 4], values: [] },
    cols: { shape: [2, 3, 0], values: [] },
    middle: { shape: [2, 0], values: [] },
    selected: { shape: [0], values: [] },
  },
  all: {
    m2: mask([2, 3], new Array<number>(6).fill(1)),
    m1: mask([4], [1, 1, 1, 1]),
    m3: mask([3, 4], new Array<number>(12).fill(1)),
    rows: { shape: [6, 4], values: Array.from({ length: 24 }, (_, i) => i) },
    cols: { shape: [2, 3, 4], values: Array.from({ length: 24 }, (_, i) => i) },
    middle: { shape: [2, 12], values: Array.from({ length: 24 }, (_, i) => i) },
    selected: { shape: [24], values: Array.from({ length: 24 }, (_, i) => i) },
  },
};
const OUTPUTS = ['rows', 'cols', 'middle', 'selected'] as const;

describe('bool-mask indexing in the IR', () => {
  it('the output dims: a data-dependent symbol where the mask dims were, one per mask', () => {
    const g = maskGraph();
    const shapes = g.outputs.map((v) => v.tensorType.shape);
    expect(shapes.map((s) => s.map((d) => (isDataDependentDim(d) ? 'N' : d)))).toEqual([['N', 4], [2, 3, 'N'], [2, 'N'], ['N']]);
    // x[m2] and x[:, :, m1] count different masks; masked_select(x, m1) counts m1 broadcast over x.
    const names = shapes.map((s) => (s.find(isDataDependentDim) as { name: string }).name);
    expect(new Set(names).size).toBe(4);
    // Each declared in the graph as at least 0 and at most the mask's (broadcast) element count.
    expect(names.map((n) => g.symbols.get(n))).toEqual([6, 4, 12, 24].map((max) => ({ min: 0, max })));
  });

  it.each(Object.keys(CASES) as Array<keyof typeof CASES>)('interprets them exactly (%s true)', (name) => {
    const k = CASES[name];
    const results = interpret(maskGraph(), [X, k.m2, k.m1, k.m3]);
    OUTPUTS.forEach((o, i) => expectTensor(results[i]!, 'float32', k[o].shape, k[o].values));
  });

  it('a mask that does not match self: E_BAD_MODEL naming the node and the dim', () => {
    const g = new Graph('bad');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    const m = g.addInput('m', tensorType('bool', [2, 4]));
    expect(() => call(g, 'aten.index.Tensor', { self: x, indices: [m] }, { name: 'pick' })).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(/node "pick" \(aten\.index\.Tensor\): mask \[2, 4\] does not match self \[2, 3\] at dim 1/) }),
    );
    const long = g.addInput('long', tensorType('bool', [3]));
    expect(() => call(g, 'aten.index.Tensor', { self: x, indices: [null, null, long] }, { name: 'past' })).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(/node "past".*more dims than self/) }));
    const wide = g.addInput('wide', tensorType('bool', [4]));
    expect(() => call(g, 'aten.masked_select.default', { self: x, mask: wide }, { name: 'sel' })).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(/node "sel"/) }));
  });

  it('a mask with other index tensors stays refused as data-dependent (E_UNSUPPORTED_OP)', () => {
    const g = new Graph('mixed');
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    const m = g.addInput('m', tensorType('bool', [2]));
    const i = g.addInput('i', tensorType('int64', [1]));
    expect(() => call(g, 'aten.index.Tensor', { self: x, indices: [m, i] }, { name: 'mixed' })).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });
});

describe.each(['reference', 'onnxruntime'] as const)('bool-mask indexing compiled on the %s backend', (backend) => {
  it('every mask node converts (nonzero + gather) into one engine segment, with the hand-computed values', async () => {
    const program = await compile(maskGraph(), { backend, minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      expect(program.report.ops.every((o) => o.converted)).toBe(true);
      for (const k of Object.values(CASES)) {
        const out = Object.values(await program.run({ x: X, m2: k.m2, m1: k.m1, m3: k.m3 }));
        OUTPUTS.forEach((o, i) => expectTensor(out[i]!, 'float32', k[o].shape, k[o].values));
      }
    } finally {
      await program.dispose();
    }
  });
});

it('on cuda (no data-dependent sizes in its engines) the mask nodes run in a fallback segment', async () => {
  const report = await dryRun(maskGraph(), { backend: 'cuda', minBlockSize: 1 });
  expect(report.ops.filter((o) => o.target === 'aten.index.Tensor' || o.target === 'aten.masked_select.default').map((o) => o.converted)).toEqual([false, false, false, false]);
});
