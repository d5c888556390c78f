/**
 * The decomposition pass (lib/lowering/decompositions.ts) on small IR graphs: each table
 * entry rewrites to the canonical op (or removes the node), keeps shapes (symbolic ones too,
 * through sym_size values), keeps the old value names, and computes the same values as the
 * original op (checked against hand-derived numbers). Also the size-expression parser.
 */
import * as path from 'node:path';

import { loadPt2, parseSymExpr } from '../../../lib/frontends/pt2';
import { interpret } from '../../../lib/interpreter';
import { call } from '../../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Value } from '../../../lib/ir/graph';
import { printGraph } from '../../../lib/ir/printer';
import { formatDim, sym, type Dim } from '../../../lib/ir/symbolic';
import { findProblems } from '../../../lib/ir/verify';
import { decompose, DECOMPOSITIONS } from '../../../lib/lowering/decompositions';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose } from '../../helpers/compare';
import { FIXTURES, PT2_FIXTURES } from '../../helpers/fixtures';

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);
const iota = (n: number): number[] => [...Array(n).keys()];

interface Built {
  graph: Graph;
  before: string[];
}

/** One op on graph inputs of the given shapes; returns the graph after decomposition. */
function single(target: string, inputs: Array<[string, 'float32' | 'int64', Dim[]]>, args: (vs: Value[]) => Record<string, Arg>): Built {
  const graph = new Graph('t');
  const vs = inputs.map(([name, dtype, shape]) => graph.addInput(name, tensorType(dtype, shape)));
  for (const [, , shape] of inputs) for (const d of shape) if (typeof d !== 'number') graph.symbols.set(formatDim(d), { min: 1, max: 64 });
  const node = call(graph, target, args(vs), { name: 'out' });
  graph.setOutputs([node.outputs[0]!]);
  const before = graph.calls().map((n) => n.target);
  decompose(graph);
  expect(findProblems(graph)).toEqual([]);
  return { graph, before };
}

const targets = (g: Graph): string[] => g.calls().map((n) => n.target);

describe('casts → _to_copy', () => {
  test('to.dtype / type_as / _to_copy to the same dtype disappear', () => {
    for (const [target, args] of [
      ['aten.to.dtype', (v: Value[]) => ({ self: v[0]!, dtype: 'float32' })],
      ['aten.type_as.default', (v: Value[]) => ({ self: v[0]!, other: v[1]! })],
      ['aten._to_copy.default', (v: Value[]) => ({ self: v[0]!, dtype: null })],
    ] as const) {
      const { graph } = single(target, [['x', 'float32', [2]], ['y', 'float32', [1]]], args);
      expect(targets(graph)).toEqual([]);
      expect(graph.outputs[0]).toBe(graph.inputs[0]);
    }
  });

  test('to.dtype and type_as to another dtype become _to_copy(dtype)', () => {
    const a = single('aten.to.dtype', [['x', 'float32', [3]]], (v) => ({ self: v[0]!, dtype: 'int64', copy: true }));
    expect(targets(a.graph)).toEqual(['aten._to_copy.default']);
    expect(a.graph.calls()[0]!.args.dtype).toBe('int64');
    expect(interpret(a.graph, [f32([3], [1.7, -2.5, 3])])[0]!.toArray()).toEqual([1, -2, 3]);
    const b = single('aten.type_as.default', [['x', 'int64', [2]], ['y', 'float32', [1]]], (v) => ({ self: v[0]!, other: v[1]! }));
    expect(targets(b.graph)).toEqual(['aten._to_copy.default']);
    expect(b.graph.outputs[0]!.tensorType.dtype).toBe('float32');
  });
});

describe('identities', () => {
  test('contiguous, clone, alias, detach, eval dropout', () => {
    for (const [target, args] of [
      ['aten.contiguous.default', (v: Value[]) => ({ self: v[0]! })],
      ['aten.clone.default', (v: Value[]) => ({ self: v[0]! })],
      ['aten.alias.default', (v: Value[]) => ({ self: v[0]! })],
      ['aten.detach.default', (v: Value[]) => ({ self: v[0]! })],
      ['aten.dropout.default', (v: Value[]) => ({ input: v[0]!, p: 0.5, train: false })],
      ['aten.dropout.default', (v: Value[]) => ({ input: v[0]!, p: 0, train: true })],
    ] as const) {
      const { graph } = single(target, [['x', 'float32', [2]]], args);
      expect(targets(graph)).toEqual([]);
    }
  });

  test('training-mode dropout with p > 0 is not an identity (the op table rejects it)', () => {
    expect(() => single('aten.dropout.default', [['x', 'float32', [2]]], (v) => ({ input: v[0]!, p: 0.5, train: true }))).toThrow(/training mode/);
    expect(DECOMPOSITIONS['aten.dropout.default']).toBeDefined();
  });

  test('a slice covering its dim and a same-shape expand disappear; a real slice stays', () => {
    expect(targets(single('aten.slice.Tensor', [['x', 'float32', [4, 3]]], (v) => ({ self: v[0]!, dim: 0, start: 0, end: 9223372036854775807 })).graph)).toEqual([]);
    expect(targets(single('aten.expand.default', [['x', 'float32', [4, 3]]], (v) => ({ self: v[0]!, size: [4, -1] })).graph)).toEqual([]);
    expect(targets(single('aten.slice.Tensor', [['x', 'float32', [4, 3]]], (v) => ({ self: v[0]!, dim: 0, start: 1, end: 3 })).graph)).toEqual(['aten.slice.Tensor']);
  });
});

describe('reshapes → view.default', () => {
  test('reshape with -1 on a symbolic shape: view with a sym_size value, same output name', () => {
    const s = sym('s0');
    const { graph } = single('aten.reshape.default', [['x', 'float32', [s, 4, 2]]], (v) => ({ self: v[0]!, shape: [-1, 8] }));
    expect(targets(graph)).toEqual(['aten.sym_size.int', 'aten.view.default']);
    expect(graph.outputs[0]!.name).toBe('out');
    expect(printGraph(graph)).toContain('%out: float32[s0, 8] = aten.view.default(self=%x, size=[%');
    expect(interpret(graph, [f32([3, 4, 2], iota(24))])[0]!.shape).toEqual([3, 8]);
  });

  test('flatten, unflatten, squeeze, unsqueeze become views; a no-op view disappears', () => {
    const s = sym('s0');
    const cases: Array<[string, (v: Value[]) => Record<string, Arg>, Dim[], string]> = [
      ['aten.flatten.using_ints', (v) => ({ self: v[0]!, start_dim: 1 }), [s, 6], '[s0, 6]'],
      ['aten.unflatten.int', (v) => ({ self: v[0]!, dim: -1, sizes: [3, 1] }), [s, 2, 3, 1], '[s0, 2, 3, 1]'],
      ['aten.unsqueeze.default', (v) => ({ self: v[0]!, dim: 1 }), [s, 1, 2, 3], '[s0, 1, 2, 3]'],
      ['aten.squeeze.dim', (v) => ({ self: v[0]!, dim: 0 }), [s, 2, 3], '[s0, 2, 3]'],
    ];
    for (const [target, args, , shape] of cases) {
      const { graph } = single(target, [['x', 'float32', [s, 2, 3]]], args);
      const t = targets(graph);
      expect(t.filter((x) => x !== 'aten.sym_size.int')).toEqual(target === 'aten.squeeze.dim' ? [] : ['aten.view.default']);
      expect(printGraph(graph)).toContain(target === 'aten.squeeze.dim' ? 'return (out=%x)' : `%out: float32${shape}`);
      const x = f32([2, 2, 3], iota(12));
      expect(interpret(graph, [x])[0]!.toArray()).toEqual(iota(12));
    }
  });

  test('a view with explicit sizes stays as it is', () => {
    const { graph } = single('aten.view.default', [['x', 'float32', [2, 3]]], (v) => ({ self: v[0]!, size: [3, 2] }));
    expect(targets(graph)).toEqual(['aten.view.default']);
    expect(graph.calls()[0]!.name).toBe('out');
  });
});

describe('other aliases', () => {
  test('transpose and t → permute', () => {
    const a = single('aten.transpose.int', [['x', 'float32', [2, 3, 4]]], (v) => ({ self: v[0]!, dim0: 0, dim1: -1 }));
    expect(targets(a.graph)).toEqual(['aten.permute.default']);
    expect(a.graph.calls()[0]!.args.dims).toEqual([2, 1, 0]);
    const b = single('aten.t.default', [['x', 'float32', [2, 3]]], (v) => ({ self: v[0]! }));
    expect(targets(b.graph)).toEqual(['aten.permute.default']);
    expect(interpret(b.graph, [f32([2, 3], iota(6))])[0]!.toArray()).toEqual([0, 3, 1, 4, 2, 5]);
  });

  test('expand_as → expand with the other tensor’s (symbolic) size', () => {
    const s = sym('s0');
    const { graph } = single('aten.expand_as.default', [['x', 'float32', [1, 3]], ['y', 'float32', [s, 3]]], (v) => ({ self: v[0]!, other: v[1]! }));
    expect(targets(graph)).toEqual(['aten.sym_size.int', 'aten.expand.default']);
    expect(interpret(graph, [f32([1, 3], [1, 2, 3]), f32([2, 3], iota(6))])[0]!.toArray()).toEqual([1, 2, 3, 1, 2, 3]);
  });

  test('softmax.int with a dtype → _to_copy + _softmax', () => {
    const { graph } = single('aten.softmax.int', [['x', 'int64', [2]]], (v) => ({ self: v[0]!, dim: 0, dtype: 'float32' }));
    expect(targets(graph)).toEqual(['aten._to_copy.default', 'aten._softmax.default']);
    const [out] = interpret(graph, [Tensor.from('int64', [2], [0n, 0n])]);
    expect(out!.toArray()).toEqual([0.5, 0.5]);
  });

  test('conv2d (single-int stride) → convolution; max_pool2d → max_pool2d_with_indices', () => {
    const c = single('aten.conv2d.default', [['x', 'float32', [1, 1, 3, 3]], ['w', 'float32', [1, 1, 2, 2]]], (v) => ({ input: v[0]!, weight: v[1]!, stride: 1 }));
    expect(targets(c.graph)).toEqual(['aten.convolution.default']);
    expect(c.graph.calls()[0]!.args.stride).toEqual([1, 1]);
    const [conv] = interpret(c.graph, [f32([1, 1, 3, 3], iota(9)), f32([1, 1, 2, 2], [1, 0, 0, 1])]);
    expect(conv!.toArray()).toEqual([4, 6, 10, 12]);
    const p = single('aten.max_pool2d.default', [['x', 'float32', [1, 1, 2, 2]]], (v) => ({ self: v[0]!, kernel_size: [2, 2] }));
    expect(targets(p.graph)).toEqual(['aten.max_pool2d_with_indices.default']);
    expect(interpret(p.graph, [f32([1, 1, 2, 2], [1, 4, 2, 3])])[0]!.toArray()).toEqual([4]);
  });

  test('unbatched conv2d stays (convolution takes batched input)', () => {
    const { graph } = single('aten.conv2d.default', [['x', 'float32', [1, 3, 3]], ['w', 'float32', [1, 1, 2, 2]]], (v) => ({ input: v[0]!, weight: v[1]! }));
    expect(targets(graph)).toEqual(['aten.conv2d.default']);
  });

  test('conv2d padding="same" → convolution when symmetric, kept otherwise', () => {
    const odd = single('aten.conv2d.padding', [['x', 'float32', [1, 1, 4, 4]], ['w', 'float32', [1, 1, 3, 3]]], (v) => ({ input: v[0]!, weight: v[1]!, padding: 'same' }));
    expect(targets(odd.graph)).toEqual(['aten.convolution.default']);
    expect(odd.graph.calls()[0]!.args.padding).toEqual([1, 1]);
    const even = single('aten.conv2d.padding', [['x', 'float32', [1, 1, 4, 4]], ['w', 'float32', [1, 1, 2, 2]]], (v) => ({ input: v[0]!, weight: v[1]!, padding: 'same' }));
    expect(targets(even.graph)).toEqual(['aten.conv2d.padding']);
  });

  test('batch_norm (eval) and layer_norm → their native forms, eps included', () => {
    const bn = single(
      'aten.batch_norm.default',
      [['x', 'float32', [1, 2, 1, 1]], ['m', 'float32', [2]], ['v', 'float32', [2]]],
      (v) => ({ input: v[0]!, weight: null, bias: null, running_mean: v[1]!, running_var: v[2]!, training: false, momentum: 0.1, eps: 5, cudnn_enabled: false }),
    );
    expect(targets(bn.graph)).toEqual(['aten._native_batch_norm_legit_no_training.default']);
    expect(bn.graph.calls()[0]!.args.eps).toBe(5);
    // (x − mean)/sqrt(var + eps): (7 − 1)/sqrt(4 + 5) = 2, (5 − 1)/sqrt(11 + 5) = 1 (without eps: 3 and 1.206).
    expectClose(interpret(bn.graph, [f32([1, 2, 1, 1], [7, 5]), f32([2], [1, 1]), f32([2], [4, 11])])[0]!, f32([1, 2, 1, 1], [2, 1]));
    const ln = single('aten.layer_norm.default', [['x', 'float32', [1, 2]]], (v) => ({ input: v[0]!, normalized_shape: [2], eps: 3 }));
    expect(targets(ln.graph)).toEqual(['aten.native_layer_norm.default']);
    // mean 2, biased variance 1: (x − 2)/sqrt(1 + 3) = ∓0.5 (without eps: ∓1).
    expectClose(interpret(ln.graph, [f32([1, 2], [1, 3])])[0]!, f32([1, 2], [-0.5, 0.5]));
  });

  test('zeros → full with the default float dtype; clamp_min → clamp; narrow → slice', () => {
    const z = single('aten.zeros.default', [['x', 'float32', [1]]], () => ({ size: [2] }));
    expect(targets(z.graph)).toEqual(['aten.full.default']);
    expect(z.graph.outputs[0]!.tensorType.dtype).toBe('float32');
    const c = single('aten.clamp_min.default', [['x', 'float32', [3]]], (v) => ({ self: v[0]!, min: 0 }));
    expect(targets(c.graph)).toEqual(['aten.clamp.default']);
    expect(interpret(c.graph, [f32([3], [-1, 0.5, 2])])[0]!.toArray()).toEqual([0, 0.5, 2]);
    const n = single('aten.narrow.default', [['x', 'float32', [5]]], (v) => ({ self: v[0]!, dim: 0, start: 1, length: 3 }));
    expect(targets(n.graph)).toEqual(['aten.slice.Tensor']);
    expect(interpret(n.graph, [f32([5], iota(5))])[0]!.toArray()).toEqual([1, 2, 3]);
  });
});

describe('the pass', () => {
  test('runs to a fixpoint and is idempotent; existing SymInt values are reused', () => {
    const graph = new Graph('t');
    graph.symbols.set('s0', { min: 1, max: 8 });
    const x = graph.addInput('x', tensorType('float32', [sym('s0'), 4]));
    const n = call(graph, 'aten.sym_size.int', { self: x, dim: 0 }, { name: 'n' }).output;
    const r = call(graph, 'aten.reshape.default', { self: x, shape: [n, 2, -1] }, { name: 'r' }).output;
    const t = call(graph, 'aten.to.dtype', { self: r, dtype: 'float32' }, { name: 'to' }).output;
    const f = call(graph, 'aten.flatten.using_ints', { self: t, start_dim: 1 }, { name: 'f' }).output;
    graph.setOutputs([f]);
    expect(decompose(graph)).toBeGreaterThan(0);
    expect(decompose(graph)).toBe(0);
    expect(targets(graph)).toEqual(['aten.sym_size.int', 'aten.view.default', 'aten.view.default']);
    expect(printGraph(graph)).toContain('%f: float32[s0, 4] = aten.view.default(self=%r, size=[%n, 4])');
    expect(interpret(graph, [f32([3, 4], iota(12))])[0]!.toArray()).toEqual(iota(12));
  });

  test('the table covers the default-IR forms the fixtures use: each is rewritten; only canonical forms stay', () => {
    const used = new Set<string>();
    for (const name of PT2_FIXTURES) {
      const graph = loadPt2(path.join(FIXTURES, name, 'model.pt2'), { decompose: false });
      for (const n of graph.calls()) if (n.target in DECOMPOSITIONS) used.add(n.target);
      decompose(graph);
      for (const n of graph.calls()) {
        if (!(n.target in DECOMPOSITIONS)) continue;
        // What stays is already canonical: a view, a slice that drops elements, an expand that broadcasts.
        const self = (n.args.self as Value).tensorType.shape;
        const out = n.output.tensorType.shape;
        if (n.target === 'aten.view.default') continue;
        expect([`${name}: ${n.target}`, ['aten.slice.Tensor', 'aten.expand.default'].includes(n.target)]).toEqual([`${name}: ${n.target}`, true]);
        const sameShape = self.length === out.length && self.every((d, i) => formatDim(d) === formatDim(out[i]!));
        const noOp = sameShape && (n.target !== 'aten.slice.Tensor' || n.args.step === 1);
        expect([`${name}: ${n.name} is a no-op`, noOp]).toEqual([`${name}: ${n.name} is a no-op`, false]);
      }
    }
    for (const t of ['aten.to.dtype', 'aten.type_as.default', 'aten.flatten.using_ints', 'aten.reshape.default', 'aten.dropout.default', 'aten.transpose.int', 'aten.conv2d.default', 'aten.batch_norm.default', 'aten.layer_norm.default', 'aten.softmax.int', 'aten.adaptive_avg_pool2d.default', 'aten.max_pool2d.default', 'aten.contiguous.default', 'aten.unsqueeze.default']) {
      expect([t, used.has(t)]).toEqual([t, true]);
    }
  });
});

describe('size expressions', () => {
  test.each([
    ["Symbol('s25', positive=True, integer=True)", 's25'],
    ['s0', 's0'],
    ['Mul(Integer(4), Symbol(\'s23\', positive=True, integer=True))', 's23*4'],
    ['2*s0', 's0*2'],
    ['s0//4', 's0//4'],
    ['FloorDiv(s0, 4)', 's0//4'],
    ['Add(s0, Integer(-1))', 's0+-1'],
    ['s0 - 1', 's0-1'],
    ['(s0 + 1)*2', '(s0+1)*2'],
    ['Max(2, s0)', 'max(2, s0)'],
    ['Min(s0, s1)', 'min(s0, s1)'],
    ['Mod(s0, 8)', 's0%8'],
    ['PythonMod(s0, 8)', 's0%8'],
    ['Pow(s0, 2)', 's0*s0'],
    ['s0**2', 's0*s0'],
    ['12', '12'],
    ['CleanDiv(Mul(s0, 4), 4)', 's0'],
  ])('%s', (text, expected) => {
    expect(formatDim(parseSymExpr(text))).toBe(expected);
  });

  test.each(['sqrt(s0)', 's0 / 2', 'Symbol()', '(s0', 's0 s1', 'True', 'Pow(s0, s1)'])('rejects %s', (text) => {
    expect(() => parseSymExpr(text)).toThrow(SyntaxError);
  });
});
