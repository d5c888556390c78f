/**
 * The rules of lib/legalization/variants.ts one by one, in-process (no compile(), whose
 * worker runs dist/): which arguments a rule says need a shape tensor, why it refuses a node,
 * and what its rewrite computes. Each rewrite is checked by running the legalized graph
 * through the interpreter at concrete sizes against values worked out by hand here (and
 * against the unlegalized graph, which the interpreter runs with SymInts).
 */
import '../../lib/conversion/converters';
import type { Node, Value } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { applySymbolRanges, segmentProfiles } from '../../lib/compile/input-shapes';
import { classify } from '../../lib/legalization';
import { dimOfArg, dimsOfArg } from '../../lib/legalization/variants';
import type { InputShapePlan } from '../../lib/compile/input-shapes';
import type { Segment } from '../../lib/partitioning/partition';
import { expectTensor } from '../helpers/compare';
import { DynGraph } from './helpers';
import { iota, legalized, needs, nodeOf, range, refuse, rows, runBoth, type Build } from './in-process';

const END = 9223372036854775807;

describe('dimOfArg / dimsOfArg', () => {
  const b = new DynGraph('d', { s: { min: 2, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3]);
  const n = b.size(x, 0);

  test('ints, booleans (as 0/1) and SymInts become dims', () => {
    expect(dimOfArg(5)).toBe(5);
    expect(dimOfArg(true)).toBe(1);
    expect(dimOfArg(false)).toBe(0);
    expect(dimOfArg(n)).toEqual(sym('s'));
  });

  test('a tensor value or a string is refused with a TypeError naming it', () => {
    expect(() => dimOfArg(x)).toThrow(new TypeError('expected an int or a SymInt, got %x'));
    expect(() => dimOfArg('abc')).toThrow(new TypeError('expected an int or a SymInt, got abc'));
  });

  test('a single int or SymInt is a list of one', () => {
    expect(dimsOfArg(4)).toEqual([4]);
    expect(dimsOfArg(n)).toEqual([sym('s')]);
    expect(dimsOfArg([2, n, true])).toEqual([2, sym('s'), 1]);
  });

  test('String(Value) is its %name (what the TypeError shows)', () => {
    expect(String(x)).toBe('%x');
  });
});

describe('quantized data is refused', () => {
  const view = (dtype: 'int8' | 'uint8' | 'float32'): Node =>
    nodeOf((b) => {
      const x = b.input('x', dtype, ['s', 3]);
      return b.call('aten.view.default', { self: x, size: [b.call('sym.mul', { a: b.size(x, 0), b: 3 }).output] });
    });

  test.each(['int8', 'uint8'] as const)('a view of %s data with a SymInt size: the rule refuses, naming the value', (dtype) => {
    const node = view(dtype);
    expect(needs(node)).toEqual(['size']);
    expect(refuse(node)).toBe(`%x is ${dtype}, which TensorRT does not move`);
    expect(classify(node)).toMatchObject({ kind: 'missing', args: ['size'], reason: `%x is ${dtype}, which TensorRT does not move` });
  });

  test('float32 data (with a SymInt input value) is not refused', () => {
    const node = view('float32');
    expect(refuse(node)).toBeNull();
    expect(classify(node)).toMatchObject({ kind: 'rule', needs: ['size'] });
  });

  test('an int8 output (a uint8 → int8 reshape is not possible, so: an int8 narrow) is refused by name', () => {
    const node = nodeOf((b) => {
      const x = b.input('q', 'int8', ['s', 3]);
      return b.call('aten.narrow.default', { self: x, dim: 0, start: 0, length: b.call('sym.sub', { a: b.size(x, 0), b: 1 }).output });
    });
    expect(refuse(node)).toBe('%q is int8, which TensorRT does not move');
  });
});

describe('view / reshape / unflatten', () => {
  test('only the SymInt argument is reported as needing a shape tensor', () => {
    const node = nodeOf((b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return b.call('aten.view.default', { self: x, size: [b.call('sym.mul', { a: b.size(x, 0), b: 3 }).output] });
    });
    expect(needs(node)).toEqual(['size']);
  });

  test('unflatten with a SymInt size becomes trt.reshape_dyn to the output shape', () => {
    const build: Build = (b) => {
      const x = b.input('x', 'float32', ['s', 6]);
      return [b.call('aten.unflatten.int', { self: x, dim: 1, sizes: [b.call('sym.floordiv', { a: b.call('sym.mul', { a: b.size(x, 0), b: 6 }).output, b: b.size(x, 0) }).output, 1] }).output];
    };
    const { outputs, targets } = runBoth(build, [iota([2, 6])]);
    expect(targets).toContain('trt.reshape_dyn');
    expect(targets).not.toContain('aten.unflatten.int');
    expectTensor(outputs[0]!, 'float32', [2, 6, 1], range(0, 12));
  });
});

describe('expand', () => {
  test('expand of a [1, 3] tensor to a SymInt size [n, 3] becomes trt.expand_dyn', () => {
    const build: Build = (b) => {
      const n = b.size(b.input('x', 'float32', ['s']), 0);
      return [b.call('aten.expand.default', { self: b.input('y', 'float32', [1, 3]), size: [n, 3] }).output];
    };
    const { outputs, targets } = runBoth(build, [iota([3]), iota([1, 3])]);
    expect(targets).toContain('trt.expand_dyn');
    expectTensor(outputs[0]!, 'float32', [3, 3], [0, 1, 2, 0, 1, 2, 0, 1, 2]);
  });
});

describe('slice', () => {
  const slice = (args: (x: Value, n: Value, b: DynGraph) => Record<string, unknown>, shape: Array<number | string> = ['s', 3]): Node =>
    nodeOf((b) => {
      const x = b.input('x', 'float32', shape);
      const y = b.input('y', 'float32', ['s', 3]);
      return b.call('aten.slice.Tensor', { self: x, ...(args(x, b.size(y, 0), b) as object) });
    });

  test('a SymInt end: only end needs a shape tensor', () => {
    expect(needs(slice((x, n, b) => ({ dim: 0, start: 1, end: b.call('sym.sub', { a: n, b: 1 }).output })))).toEqual(['end']);
  });

  test('a SymInt end on a static dim still needs a shape tensor', () => {
    expect(needs(slice((x, n) => ({ dim: 0, start: 0, end: n }), [4, 3]))).toEqual(['end']);
  });

  test('static bounds: on a run-time dim both bounds need shape tensors, on a static dim none', () => {
    expect(needs(slice(() => ({ dim: 0, start: 1, end: END })))).toEqual(['start', 'end']);
    expect(needs(slice(() => ({ dim: -2, start: 1, end: END })))).toEqual(['start', 'end']);
    expect(needs(slice(() => ({ dim: 1, start: 1, end: END })))).toEqual([]);
    expect(needs(slice(() => ({ dim: -1, start: 1, end: END })))).toEqual([]);
  });

  test('a positive static step is accepted', () => {
    expect(refuse(slice(() => ({ dim: 0, start: 1, end: END, step: 2 })))).toBeNull();
  });

  test('an ONNX slice with a negative step on a run-time dim is refused with the step', () => {
    const node = nodeOf((b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return b.call('trt.slice_onnx', { self: x, dim: 0, start: -1, end: -END, step: -1 });
    });
    expect(needs(node)).toEqual(['start', 'end']);
    expect(refuse(node)).toBe('trt.slice_dyn takes a positive step, got -1');
  });

  test('None bounds (the whole dim) on a run-time dim, along dim -2: all rows', () => {
    const build: Build = (b) => [b.call('aten.slice.Tensor', { self: b.input('x', 'float32', ['s', 3]), dim: -2, start: null, end: null, step: 2 }).output];
    const { outputs, targets } = runBoth(build, [iota([5, 3])]);
    expect(targets).toContain('trt.slice_dyn');
    expectTensor(outputs[0]!, 'float32', [3, 3], rows([0, 2, 4]));
  });

  test('negative static bounds along dim -2 of a run-time dim count from the end', () => {
    const build: Build = (b) => [b.call('aten.slice.Tensor', { self: b.input('x', 'float32', ['s', 3]), dim: -2, start: -3, end: -1, step: 1 }).output];
    expectTensor(runBoth(build, [iota([6, 3])]).outputs[0]!, 'float32', [2, 3], rows([3, 4]));
  });
});

describe('narrow', () => {
  const narrow = (start: (n: Value, b: DynGraph) => unknown, length: (n: Value, b: DynGraph) => unknown, shape: Array<number | string> = ['s', 3]): Node =>
    nodeOf((b) => {
      const x = b.input('x', 'float32', shape);
      const n = b.size(b.input('y', 'float32', ['s']), 0);
      return b.call('aten.narrow.default', { self: x, dim: 0, start: start(n, b) as number, length: length(n, b) as number });
    });

  test('needs: SymInt start / length, or a negative static start on a run-time dim; nothing otherwise', () => {
    expect(needs(narrow((n) => n, () => 0, ['s', 3]))).toEqual(['start']);
    expect(needs(narrow(() => 0, (n) => n))).toEqual(['length']);
    expect(needs(narrow(() => -2, () => 1))).toEqual(['start']);
    expect(needs(narrow(() => 0, () => 1))).toEqual([]);
    expect(needs(narrow(() => 1, () => 1))).toEqual([]);
    expect(needs(narrow(() => -2, () => 1, [5, 3]))).toEqual([]);
    expect(needs(narrow(() => 1, () => 1, [5, 3]))).toEqual([]);
  });

  test('start 0 with a SymInt length n - 1: the first n - 1 rows', () => {
    const build: Build = (b) => {
      const x = b.input('x', 'float32', ['s', 3]);
      return [b.call('aten.narrow.default', { self: x, dim: 0, start: 0, length: b.call('sym.sub', { a: b.size(x, 0), b: 1 }).output }).output];
    };
    expectTensor(runBoth(build, [iota([4, 3])]).outputs[0]!, 'float32', [3, 3], rows([0, 1, 2]));
  });

  test('a negative start on a run-time dim, along dim -2: counted from the end (n - 2)', () => {
    const build: Build = (b) => [b.call('aten.narrow.default', { self: b.input('x', 'float32', ['s', 3]), dim: -2, start: -2, length: 1 }).output];
    const { outputs, targets } = runBoth(build, [iota([5, 3])]);
    expect(targets).toContain('trt.slice_dyn');
    expectTensor(outputs[0]!, 'float32', [1, 3], rows([3]));
  });
});

describe('select', () => {
  const select = (index: (n: Value, b: DynGraph) => unknown, shape: Array<number | string> = ['s', 3]): Node =>
    nodeOf((b) => {
      const x = b.input('x', 'float32', shape);
      const n = b.size(b.input('y', 'float32', ['s']), 0);
      return b.call('aten.select.int', { self: x, dim: 0, index: index(n, b) as number });
    });

  test('needs: a SymInt index, or a negative static index on a run-time dim', () => {
    expect(needs(select((n, b) => b.call('sym.sub', { a: n, b: 1 }).output))).toEqual(['index']);
    expect(needs(select(() => -1))).toEqual(['index']);
    expect(needs(select(() => 0))).toEqual([]);
    expect(needs(select(() => -1, [4, 3]))).toEqual([]);
  });

  test('a SymInt index n - 1 along dim 0 of a static tensor: that row', () => {
    const build: Build = (b) => {
      const x = b.input('x', 'float32', ['s']);
      const y = b.input('y', 'float32', [8, 3]);
      return [b.call('aten.select.int', { self: y, dim: 0, index: b.call('sym.sub', { a: b.size(x, 0), b: 1 }).output }).output];
    };
    expectTensor(runBoth(build, [iota([3]), iota([8, 3])]).outputs[0]!, 'float32', [3], rows([2]));
  });

  test('index -1 along dim -2 of a run-time dim: the last row', () => {
    const build: Build = (b) => [b.call('aten.select.int', { self: b.input('x', 'float32', ['s', 3]), dim: -2, index: -1 }).output];
    const { outputs, targets } = runBoth(build, [iota([4, 3])]);
    expect(targets).toContain('trt.select_dyn');
    // The axis -2 of a rank-2 tensor is written normalized (0) into the variant.
    const { graph } = legalized(build);
    expect(graph.calls().find((n) => n.target === 'trt.select_dyn')!.args.dim).toBe(0);
    expectTensor(outputs[0]!, 'float32', [3], rows([3]));
  });
});

describe('full / arange / sym_tensor', () => {
  test('a SymInt fill value is refused', () => {
    const node = nodeOf((b) => {
      const n = b.size(b.input('x', 'float32', ['s']), 0);
      return b.call('aten.full.default', { size: [n], fill_value: n, dtype: 'float32' });
    });
    expect(needs(node)).toEqual(['size']);
    expect(refuse(node)).toBe('trt.full_dyn takes a static fill value');
  });

  test('arange(n) starts at 0; arange(1, 2n, 3) keeps its step', () => {
    const build: Build = (b) => {
      const n = b.size(b.input('x', 'float32', ['s']), 0);
      const twice = b.call('sym.mul', { a: n, b: 2 }).output;
      return [b.call('aten.arange.default', { end: n }).output, b.call('aten.arange.start_step', { start: 1, end: twice, step: 3 }).output];
    };
    const { outputs, targets } = runBoth(build, [iota([5])]);
    expect(targets.filter((t) => t === 'trt.arange_dyn')).toHaveLength(2);
    expectTensor(outputs[0]!, 'int64', [5], [0, 1, 2, 3, 4]);
    expectTensor(outputs[1]!, 'int64', [3], [1, 4, 7]);
  });

  test('sym_tensor: scalar=True gives a 0-D tensor; dtype int32 is a cast (_to_copy) of the int64 shape tensor', () => {
    const build: Build = (b) => {
      const n = b.size(b.input('x', 'float32', ['s']), 0);
      return [
        b.call('trt.sym_tensor', { values: [n], scalar: true }).output,
        b.call('trt.sym_tensor', { values: [n, 4], dtype: 'int32' }).output,
        b.call('trt.sym_tensor', { values: [n, 4] }).output,
      ];
    };
    const { outputs, targets } = runBoth(build, [iota([3])]);
    expectTensor(outputs[0]!, 'int64', [], [3]);
    expectTensor(outputs[1]!, 'int32', [2], [3, 4]);
    expectTensor(outputs[2]!, 'int64', [2], [3, 4]);
    expect(targets.filter((t) => t === 'aten._to_copy.default')).toHaveLength(1);
  });
});

describe('a SymInt Scalar operand', () => {
  test('a SymInt alpha is refused', () => {
    const node = nodeOf((b) => {
      const x = b.input('x', 'float32', ['s']);
      const n = b.size(x, 0);
      return b.call('aten.add.Scalar', { self: x, other: n, alpha: n });
    });
    expect(needs(node)).toEqual(['other']);
    expect(refuse(node)).toBe('alpha must be static');
  });

  test('x + 2·n and x - 3·n keep alpha; x * n has none', () => {
    const build: Build = (b) => {
      const x = b.input('x', 'float32', ['s']);
      const n = b.size(x, 0);
      return [
        b.call('aten.add.Scalar', { self: x, other: n, alpha: 2 }).output,
        b.call('aten.sub.Scalar', { self: x, other: n, alpha: 3 }).output,
        b.call('aten.mul.Scalar', { self: x, other: n }).output,
      ];
    };
    const { outputs, targets } = runBoth(build, [iota([4])]);
    expect(targets).toEqual(expect.arrayContaining(['aten.add.Tensor', 'aten.sub.Tensor', 'aten.mul.Tensor']));
    expectTensor(outputs[0]!, 'float32', [4], [8, 9, 10, 11]);
    expectTensor(outputs[1]!, 'float32', [4], [-12, -11, -10, -9]);
    expectTensor(outputs[2]!, 'float32', [4], [0, 4, 8, 12]);
  });
});

describe('lib/legalization/index.ts', () => {
  const plan = (ranges: Record<string, { min: number; max: number }>, profiles: Array<Record<string, { min: number; opt: number; max: number }>>): InputShapePlan => ({
    staticSymbols: new Map(),
    ranges: new Map(Object.entries(ranges)),
    profiles: profiles.map((p) => new Map(Object.entries(p))),
  });

  test('applySymbolRanges narrows the graph symbols to the plan ranges (copies, not the plan objects)', () => {
    const b = new DynGraph('r', { s: { min: 1, max: 100 }, t: { min: 1, max: 9 } });
    const p = plan({ s: { min: 2, max: 16 } }, []);
    applySymbolRanges(b.graph, p);
    expect(b.graph.symbols.get('s')).toEqual({ min: 2, max: 16 });
    expect(b.graph.symbols.get('s')).not.toBe(p.ranges.get('s'));
    expect(b.graph.symbols.get('t')).toEqual({ min: 1, max: 9 });
  });

  test('segmentProfiles: one profile list per input with run-time dims; static tensors and SymInts get none', () => {
    const b = new DynGraph('p', { s: { min: 2, max: 16 } });
    const x = b.input('x', 'float32', ['s', 3]);
    const y = b.input('y', 'float32', [4, 3]);
    const n = b.size(x, 0);
    const segment = { index: 0, kind: 'engine', nodes: [], inputs: [x, y, n], outputs: [] } as unknown as Segment;
    const profiles = segmentProfiles(segment, plan({ s: { min: 2, max: 16 } }, [{ s: { min: 2, opt: 8, max: 16 } }]));
    expect([...profiles.keys()]).toEqual(['x']);
    expect(profiles.get('x')).toEqual([{ min: [2, 3], opt: [8, 3], max: [16, 3] }]);
  });
});
