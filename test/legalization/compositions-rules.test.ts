/**
 * The compositions of lib/legalization/variants.ts (constant_pad_nd / pad, repeat, roll,
 * split / split_with_sizes: ops with no `_dyn` op of their own) in-process, where mutation
 * testing sees them: which arguments need a shape tensor, the refusals and their reasons,
 * the nodes a rewrite makes, and what the legalized graph computes at two sizes, against the
 * reference loops of ./references.ts and the unlegalized graph (compositions.test.ts runs the
 * same ops through compile(), on the worker).
 */
import '../../lib/conversion/converters';
import type { Graph, Node, Value } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { classify, partitionDynamic } from '../../lib/legalization';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { compileAndRun, DynGraph } from './helpers';
import { iota, needs, nodeOf, refuse, runBoth, type Build } from './in-process';
import { narrowRef, padRef, repeatRef, rollRef } from './references';

const SIZES = [2, 5];
const count = (targets: readonly string[], target: string): number => targets.filter((t) => t === target).length;

/** runBoth at every size of SIZES, each output checked against `reference(x, n)`; the targets of the last run. */
function expectComputes(build: Build, shape: (n: number) => number[], reference: (x: Tensor, n: number) => Tensor[]): string[] {
  let targets: string[] = [];
  for (const n of SIZES) {
    const x = iota(shape(n));
    const run = runBoth(build, [x]);
    targets = run.targets;
    reference(x, n).forEach((e, i) => expectTensor(run.outputs[i]!, 'float32', e.shape, e.toArray(), `n = ${n}, output ${i}`));
  }
  return targets;
}

/** A node on x: float32[s, 3] (or `shape`), given n = sym_size(x, 0). */
const on = (make: (b: DynGraph, x: Value, n: Value) => Node, shape: Array<number | string> = ['s', 3], dtype: 'float32' | 'int8' = 'float32'): Node =>
  nodeOf((b) => {
    const x = b.input('x', dtype, shape);
    return make(b, x, b.size(b.input('y', 'float32', ['s']), 0));
  });

/** `graph` compiled once (reference backend) and run at each of `runs`: nothing falls back, and every output equals the interpreter's. */
async function expectCompiledMatches(graph: Graph, runs: Tensor[][]): Promise<void> {
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(program.report.ops.filter((o) => !o.converted)).toEqual([]);
  for (const [r, inputs] of runs.entries()) {
    const [want] = interpret(graph, inputs);
    expectTensor(outputs[r]![0]!, 'float32', want!.shape, want!.toArray(), `run ${r}`);
  }
}

describe('constant_pad_nd / pad', () => {
  test('needs: a SymInt pad, or any pad of a tensor with a run-time dim; none on a static tensor', () => {
    expect(needs(on((b, x, n) => b.call('aten.constant_pad_nd.default', { self: x, pad: [0, n], value: 0 })))).toEqual(['pad']);
    expect(needs(on((b, x) => b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 })))).toEqual(['pad']);
    expect(needs(on((b, x) => b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 }), [4, 3]))).toEqual([]);
    expect(needs(on((b, x) => b.call('aten.pad.default', { self: x, pad: [1, 1], mode: 'constant', value: 0 })))).toEqual(['pad']);
  });

  test('refusals: a SymInt fill value, a negative (cropping) pad, int8 data, a mode other than constant', () => {
    expect(refuse(on((b, x, n) => b.call('aten.constant_pad_nd.default', { self: x, pad: [0, 1], value: n })))).toBe('the fill value must be static');
    expect(refuse(on((b, x) => b.call('aten.constant_pad_nd.default', { self: x, pad: [1, -1], value: 0 })))).toBe('negative (cropping) pads with run-time dims are not rewritten');
    expect(refuse(on((b, x) => b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 }), ['s', 3], 'int8'))).toBe('%x is int8, which TensorRT does not move');
    expect(refuse(on((b, x) => b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 })))).toBeNull();
    expect(refuse(on((b, x) => b.call('aten.pad.default', { self: x, pad: [1, 1], mode: 'reflect', value: null })))).toBe('padding mode "reflect" is not rewritten (only "constant")');
    expect(refuse(on((b, x) => b.call('aten.pad.default', { self: x, pad: [1, -1], mode: 'constant', value: 0 })))).toBe('negative (cropping) pads with run-time dims are not rewritten');
    expect(refuse(on((b, x) => b.call('aten.pad.default', { self: x, pad: [1, 1], mode: 'constant', value: 0 })))).toBeNull();
  });

  test('pads [1, n, 0, 2] with 0.5: one fill per nonzero pad, one cat per padded dim', () => {
    const targets = expectComputes(
      (b) => {
        const x = b.input('x', 'float32', ['s', 3]);
        return [b.call('aten.constant_pad_nd.default', { self: x, pad: [1, b.size(x, 0), 0, 2], value: 0.5 }).output];
      },
      (n) => [n, 3],
      (x, n) => [padRef(x, [1, n, 0, 2], 0.5)],
    );
    expect(count(targets, 'trt.full_dyn')).toBe(3);
    expect(count(targets, 'aten.cat.default')).toBe(2);
  });

  test('aten.pad with no value pads zeros; a pad of 0 before (static) makes no fill', () => {
    const targets = expectComputes(
      (b) => [b.call('aten.pad.default', { self: b.input('x', 'float32', ['s', 3]), pad: [0, 0, 0, 2], mode: 'constant', value: null }).output],
      (n) => [n, 3],
      (x) => [padRef(x, [0, 0, 0, 2], 0)],
    );
    expect(count(targets, 'trt.full_dyn')).toBe(1);
    expect(count(targets, 'aten.cat.default')).toBe(1);
  });

  test('all pads zero: no fill and no cat, the tensor reshaped to itself (a node of its own)', () => {
    const targets = expectComputes(
      (b) => [b.call('aten.constant_pad_nd.default', { self: b.input('x', 'float32', ['s', 3]), pad: [0, 0], value: 1 }).output],
      (n) => [n, 3],
      (x) => [x],
    );
    expect(targets).toContain('trt.reshape_dyn');
    expect(targets).not.toContain('trt.full_dyn');
    expect(targets).not.toContain('aten.cat.default');
  });

  test('a SymInt pad n - 2 (0 at the smallest n) is rewritten: it is never negative', () => {
    expectComputes(
      (b) => {
        const x = b.input('x', 'float32', ['s', 3]);
        return [b.call('aten.constant_pad_nd.default', { self: x, pad: [0, 0, b.call('sym.sub', { a: b.size(x, 0), b: 2 }).output, 1], value: -1 }).output];
      },
      (n) => [n, 3],
      (x, n) => [padRef(x, [0, 0, n - 2, 1], -1)],
    );
  });
});

describe('sizes that may be negative at run time fall back, with the reason', () => {
  /** The graph of `build` partitioned and legalized: the op's conversion record, and the outputs at x = iota([5, 3]). */
  function fallback(build: Build, target: string): { reasons: string; outputs: Tensor[] } {
    const b = new DynGraph('negative', { s: { min: 2, max: 8 } });
    const graph = b.outputs(...build(b));
    const { report } = partitionDynamic(graph, { minBlockSize: 1 });
    const op = report.ops.find((o) => o.target === target)!;
    expect(op.converted).toBe(false);
    return { reasons: op.reasons.join('; '), outputs: interpret(graph, [iota([5, 3])]) };
  }

  test('a pad n - 3', () => {
    const { reasons, outputs } = fallback((b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return [b.call('aten.constant_pad_nd.default', { self: x, pad: [0, 0, b.call('sym.sub', { a: b.size(x, 0), b: 3 }).output, 0], value: 0 }).output];
    }, 'aten.constant_pad_nd.default');
    expect(reasons).toContain('pad 2 = s-3 may be negative at run time; only non-negative run-time sizes are rewritten');
    const x = iota([5, 3]);
    expectTensor(outputs[0]!, 'float32', [7, 3], padRef(x, [0, 0, 2, 0], 0).toArray());
  });

  test('the pad after: its index in the reason', () => {
    const { reasons } = fallback((b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return [b.call('aten.constant_pad_nd.default', { self: x, pad: [b.call('sym.sub', { a: b.size(x, 0), b: 1 }).output, b.call('sym.sub', { a: b.size(x, 0), b: 3 }).output], value: 0 }).output];
    }, 'aten.constant_pad_nd.default');
    expect(reasons).toContain('pad 1 = s-3 may be negative at run time');
  });

  test('repeats n - 3', () => {
    const { reasons, outputs } = fallback((b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return [b.call('aten.repeat.default', { self: x, repeats: [1, b.call('sym.sub', { a: b.size(x, 0), b: 3 }).output] }).output];
    }, 'aten.repeat.default');
    expect(reasons).toContain('repeats[1] = s-3 may be negative at run time');
    expectTensor(outputs[0]!, 'float32', [5, 6], repeatRef(iota([5, 3]), [1, 2]).toArray());
  });
});

describe('repeat', () => {
  test('needs: SymInt repeats, or any repeats of a tensor with a run-time dim; refuses int8', () => {
    expect(needs(on((b, x, n) => b.call('aten.repeat.default', { self: x, repeats: [n, 1] }), [4, 3]))).toEqual(['repeats']);
    expect(needs(on((b, x) => b.call('aten.repeat.default', { self: x, repeats: [2, 1] })))).toEqual(['repeats']);
    expect(needs(on((b, x) => b.call('aten.repeat.default', { self: x, repeats: [2, 1] }), [4, 3]))).toEqual([]);
    expect(refuse(on((b, x) => b.call('aten.repeat.default', { self: x, repeats: [2, 1] }), ['s', 3], 'int8'))).toBe('%x is int8, which TensorRT does not move');
  });

  test('repeats [2, n, 1] (a leading repeat) and [3, 2] of x[n, 3]: PyTorch tiling order', () => {
    const targets = expectComputes(
      (b) => {
        const x = b.input('x', 'float32', ['s', 3]);
        return [b.call('aten.repeat.default', { self: x, repeats: [2, b.size(x, 0), 1] }).output, b.call('aten.repeat.default', { self: x, repeats: [3, 2] }).output];
      },
      (n) => [n, 3],
      (x, n) => [repeatRef(x, [2, n, 1]), repeatRef(x, [3, 2])],
    );
    expect(count(targets, 'trt.expand_dyn')).toBe(2);
  });
});

describe('repeat of a rank-5 tensor along one axis (CodeGen\'s TorchScript tile)', () => {
  test('x[1, n, 1, 3, 1] repeated [1, 1, 1, 1, 2] builds (its layers stay within TensorRT\'s rank 8) and computes PyTorch\'s tiling', async () => {
    const g = new DynGraph('tile', { s: { min: 1, max: 16 } });
    const x = g.input('x', 'float32', [1, 's', 1, 3, 1]);
    const graph = g.outputs(g.call('aten.repeat.default', { self: x, repeats: [1, 1, 1, 1, 2] }).output);
    const runs = [[iota([1, 5, 1, 3, 1])], [iota([1, 9, 1, 3, 1])]];
    const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
    expect(program.report.ops.filter((o) => !o.converted)).toEqual([]);
    for (const [r, [input]] of runs.entries()) {
      const want = repeatRef(input!, [1, 1, 1, 1, 2]);
      expectTensor(outputs[r]![0]!, 'float32', want.shape, want.toArray(), `run ${r}`);
    }
  }, 60_000);
});

describe('slice_scatter with run-time dims (BART\'s shifted decoder inputs)', () => {
  test.each([
    ['[:, 1:] = src', 1, null],
    ['[:, :-1] = src', 0, -1],
    ['[:, 2:5] = src', 2, 5],
  ] as const)('%s over [b, s] is computed; nothing falls back', async (_label, start, end) => {
    const g = new DynGraph('shift', { b: { min: 1, max: 4 }, s: { min: 6, max: 16 } });
    const x = g.input('x', 'float32', ['b', 's']);
    const src = g.call('aten.slice.Tensor', { self: g.call('aten.neg.default', { self: x }).output, dim: 1, start, end, step: 1 }).output;
    const graph = g.outputs(g.call('aten.slice_scatter.default', { self: x, src, dim: 1, start, end, step: 1 }).output);
    const runs = [[iota([2, 7])], [iota([3, 11])]];
    await expectCompiledMatches(graph, runs);
  }, 60_000);
});

describe('select_scatter with run-time dims (BART\'s start token)', () => {
  test.each([0, 2, -1])('[:, %d] = src over [b, s] is computed; nothing falls back', async (index) => {
    const g = new DynGraph('start_token', { b: { min: 1, max: 4 }, s: { min: 3, max: 16 } });
    const x = g.input('x', 'float32', ['b', 's']);
    const src = g.input('src', 'float32', ['b']);
    const graph = g.outputs(g.call('aten.select_scatter.default', { self: x, src, dim: 1, index }).output);
    const runs = [[iota([2, 5]), Tensor.from('float32', [2], [-1, -2])], [iota([3, 9]), Tensor.from('float32', [3], [-3, -4, -5])]];
    await expectCompiledMatches(graph, runs);
  }, 60_000);
});

describe('roll', () => {
  test('needs: SymInt shifts, or any shift of a tensor with a run-time dim', () => {
    expect(needs(on((b, x, n) => b.call('aten.roll.default', { self: x, shifts: [n], dims: [1] }), [4, 3]))).toEqual(['shifts']);
    expect(needs(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1], dims: [1] })))).toEqual(['shifts']);
    expect(needs(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1], dims: [1] }), [4, 3]))).toEqual([]);
  });

  test('refusals: no dims (the flattened tensor), int8 data', () => {
    const flat = 'roll over the flattened tensor (no dims) is not rewritten';
    expect(refuse(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1], dims: [] })))).toBe(flat);
    expect(refuse(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1] })))).toBe(flat);
    expect(refuse(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1], dims: [0] }), ['s', 3], 'int8'))).toBe('%x is int8, which TensorRT does not move');
    expect(refuse(on((b, x) => b.call('aten.roll.default', { self: x, shifts: [1], dims: [0] })))).toBeNull();
  });

  test('shifts [n, -1] along dims [1, 0] and 7 along dim -1: two slices and a cat per dim', () => {
    const targets = expectComputes(
      (b) => {
        const x = b.input('x', 'float32', ['s', 3]);
        return [b.call('aten.roll.default', { self: x, shifts: [b.size(x, 0), -1], dims: [1, 0] }).output, b.call('aten.roll.default', { self: x, shifts: [7], dims: [-1] }).output];
      },
      (n) => [n, 3],
      (x, n) => [rollRef(x, [n, -1], [1, 0]), rollRef(x, [7], [1])],
    );
    expect(count(targets, 'trt.slice_dyn')).toBe(6);
    expect(count(targets, 'aten.cat.default')).toBe(3);
  });
});

describe('split / split_with_sizes', () => {
  test('needs: SymInt sizes, or a split along a run-time dim (named after the op\'s argument); none along a static dim', () => {
    expect(needs(on((b, x, n) => b.call('aten.split.Tensor', { self: x, split_size: n, dim: 1 }), [4, 's']))).toEqual(['split_size']);
    // A static split_size at least the largest size (s ≤ 8): one piece, along the run-time dim.
    expect(needs(on((b, x) => b.call('aten.split.Tensor', { self: x, split_size: 8, dim: 0 })))).toEqual(['split_size']);
    expect(needs(on((b, x) => b.call('aten.split.Tensor', { self: x, split_size: 8, dim: -2 })))).toEqual(['split_size']);
    expect(needs(on((b, x) => b.call('aten.split.Tensor', { self: x, split_size: 2, dim: 1 }), ['s', 4]))).toEqual([]);
    expect(needs(on((b, x) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [1, 2], dim: 1 })))).toEqual([]);
    expect(needs(on((b, x) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [1, 2], dim: -1 })))).toEqual([]);
    expect(needs(on((b, x, n) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [n, 0], dim: 0 })))).toEqual(['split_sizes']);
    const along = on((b, x) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [3, 5], dim: 0 }), ['s', 3]);
    expect(needs(along)).toEqual(['split_sizes']);
    expect(refuse(on((b, x, n) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [n, 0], dim: 0 }), ['s', 3], 'int8'))).toBe('%x is int8, which TensorRT does not move');
    expect(classify(along)).toMatchObject({ kind: 'rule', needs: ['split_sizes'] });
  });

  test('sizes [1, n - 1] along dim -2: the first row and the rest, one slice each', () => {
    const targets = expectComputes(
      (b) => {
        const x = b.input('x', 'float32', ['s', 3]);
        const rest = b.call('sym.sub', { a: b.size(x, 0), b: 1 }).output;
        return b.call('aten.split_with_sizes.default', { self: x, split_sizes: [1, rest], dim: -2 }).outputs;
      },
      (n) => [n, 3],
      (x, n) => [narrowRef(x, 0, 0, 1), narrowRef(x, 0, 1, n - 1)],
    );
    expect(count(targets, 'trt.slice_dyn')).toBe(2);
  });
});

describe('a SymInt pad or split of a tensor whose dims are all static', () => {
  // x: float32[8, 3] static; the symbol comes from y: float32[s]. The SymInt argument alone
  // triggers the rewrite (no run-time dim of x does).
  const onStatic = (make: (b: DynGraph, x: Value, n: Value) => Node): Build => (b) => {
    const x = b.input('x', 'float32', [8, 3]);
    return make(b, x, b.size(b.input('y', 'float32', ['s']), 0)).outputs;
  };
  const padded = onStatic((b, x, n) => b.call('aten.constant_pad_nd.default', { self: x, pad: [n, 1, 0, n], value: 0.5 }));
  const split = onStatic((b, x, n) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [n, b.call('sym.sub', { a: 8, b: n }).output], dim: 0 }));

  test('needs: the SymInt argument', () => {
    expect(needs(on((b, x, n) => b.call('aten.constant_pad_nd.default', { self: x, pad: [n, 0], value: 0 }), [8, 3]))).toEqual(['pad']);
    expect(needs(on((b, x, n) => b.call('aten.split_with_sizes.default', { self: x, split_sizes: [n, b.call('sym.sub', { a: 8, b: n }).output], dim: 0 }), [8, 3]))).toEqual(['split_sizes']);
  });

  test('pad [n, 1, 0, n] and split [n, 8 - n] of x match the reference at two sizes', () => {
    for (const n of SIZES) {
      const x = iota([8, 3]);
      const y = iota([n]);
      const p = runBoth(padded, [x, y]);
      expect(count(p.targets, 'trt.full_dyn')).toBe(3);
      expectTensor(p.outputs[0]!, 'float32', [8 + n, 3 + n + 1], padRef(x, [n, 1, 0, n], 0.5).toArray(), `pad, n = ${n}`);
      const s = runBoth(split, [x, y]);
      expect(count(s.targets, 'trt.slice_dyn')).toBe(2);
      [narrowRef(x, 0, 0, n), narrowRef(x, 0, n, 8 - n)].forEach((e, i) => expectTensor(s.outputs[i]!, 'float32', e.shape, e.toArray(), `split, n = ${n}, piece ${i}`));
    }
  });
});
