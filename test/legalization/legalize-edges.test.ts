/**
 * lib/legalization/legalize.ts in-process, the edges its mutation run showed untested: which
 * symbols a rewrite reads (through list arguments, through the dims of its input), which
 * tensors shape tensors are read from (never a float64 one, the segment's own inputs first),
 * the converter the selection names, the shape tensors one engine segment builds (each dim
 * and each static run made once, with the node names the program shows), SymInts recomputed
 * in a fallback segment, and the report of a kept segment whose rewrite died. Every legalized
 * graph is run by the interpreter against the unlegalized graph.
 */
import '../../lib/conversion/converters';
import type { Graph } from '../../lib/ir/graph';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../../lib/ir/serialize';
import { interpret } from '../../lib/interpreter';
import { checkDynamicSupport, classify, dynamicSelector, partitionDynamic } from '../../lib/legalization';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { thrownError } from '../helpers/errors';
import { DynGraph } from './helpers';
import { iota } from './in-process';

const S = { s: { min: 2, max: 8 } };
const copy = (g: Graph): Graph => deserializeGraphFromBuffer(serializeGraphToBuffer(g));

/** Both graphs give the same outputs on `inputs`. */
function expectSame(original: Graph, legal: Graph, inputs: Tensor[], label: string): void {
  const want = interpret(original, inputs);
  interpret(legal, inputs).forEach((t, i) => expectTensor(t, want[i]!.dtype, want[i]!.shape, want[i]!.toArray(), `${label}: output ${i}`));
}

/** name=target(argument names or values) for each call node. */
const calls = (nodes: ReadonlyArray<{ kind: string; name: string; target: string; args: Record<string, unknown> }>): string[] =>
  nodes
    .filter((n) => n.kind === 'call')
    .map((n) => `${n.name}=${n.target}(${Object.values(n.args).flat().map((a) => (a !== null && typeof a === 'object' && 'name' in a ? (a as { name: string }).name : JSON.stringify(a))).join(',')})`);

describe('dynamicSelector: the symbols a rewrite reads', () => {
  /** Symbol t is carried only by a float64 input, which TensorRT cannot read. */
  function graph(): { b: DynGraph; x: ReturnType<DynGraph['input']>; t: ReturnType<DynGraph['size']>; w: ReturnType<DynGraph['input']> } {
    const b = new DynGraph('unreadable', { ...S, t: { min: 2, max: 8 } });
    const x = b.input('x', 'float32', [1, 4]);
    const w = b.input('w', 'float64', ['t', 4]);
    b.input('y', 'float32', ['s']);
    return { b, x, w, t: b.size(w, 0) };
  }

  test('a symbol reached only through a SymInt inside a list argument', () => {
    const { b, x, t } = graph();
    const e = b.call('aten.expand.default', { self: x, size: [t, 4] });
    expect(dynamicSelector(b.outputs(e.output), {})(e, {})).toEqual({ ok: false, reasons: ['symbol t is not the size of a dim of any input TensorRT can read'] });
  });

  test('a symbol reached only through the dims of the tensor the rule rewrites', () => {
    const { b, w } = graph();
    const x = b.call('aten._to_copy.default', { self: w, dtype: 'float32' }).output;
    const p = b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 });
    expect(dynamicSelector(b.outputs(p.output), {})(p, {})).toEqual({ ok: false, reasons: ['symbol t is not the size of a dim of any input TensorRT can read'] });
  });
});

describe('dynamicSelector: the converter it names', () => {
  test('a sym_size of a float64 tensor reads its symbol from a float32 input instead, and converts', () => {
    const b = new DynGraph('wide', S);
    const x = b.input('x', 'float64', ['s', 4]);
    b.input('y', 'float32', ['s']);
    const n = b.size(x, 0);
    expect(dynamicSelector(b.outputs(n), {})(n.producer, {})).toMatchObject({ ok: true, converter: { name: 'trt.size_dyn' } });
  });

  test("the variant's converter, not the converter of the node that gives the value (a pad ends in a cat)", () => {
    const b = new DynGraph('pad', S);
    const x = b.input('x', 'float32', ['s', 3]);
    const p = b.call('aten.constant_pad_nd.default', { self: x, pad: [1, 1], value: 0 });
    expect(dynamicSelector(b.outputs(p.output), {})(p, {})).toMatchObject({ ok: true, converter: { name: 'trt.full_dyn' } });
  });

  test('without a node of the variant, the converter of the node that gives the value (n*1 is a trt.size_dyn)', () => {
    const b = new DynGraph('mul1', S);
    const n = b.size(b.input('x', 'float32', ['s']), 0);
    const m = b.call('sym.mul', { a: n, b: 1 }).output;
    expect(dynamicSelector(b.outputs(m), {})(m.producer, {})).toMatchObject({ ok: true, converter: { name: 'trt.size_dyn' } });
  });

  test('every node of the rewrite is selected: trt.size_dyn forced to fallback refuses the sym_size it replaces', () => {
    const b = new DynGraph('forced', S);
    const n = b.size(b.input('x', 'float32', ['s']), 0);
    expect(dynamicSelector(b.outputs(n), {})(n.producer, { torchExecutedOps: new Set(['trt.size_dyn']) })).toEqual({
      ok: false,
      reasons: ['its trt.size_dyn rewrite: forced to a fallback segment by torchExecutedOps'],
    });
  });

  test('a rule op whose arguments need no shape tensor is plain (a view of a static tensor)', () => {
    const b = new DynGraph('static', S);
    const v = b.call('aten.view.default', { self: b.input('x', 'float32', [3, 4]), size: [12] });
    expect(classify(v)).toEqual({ kind: 'plain' });
  });
});

describe('ops with no variant, listed with every argument', () => {
  /** A slice of int8 data by [s//2, s) (int8 is refused) and a repeat_interleave by s (no variant). */
  function build(): { graph: Graph; slice: ReturnType<DynGraph['call']> } {
    const b = new DynGraph('two', S);
    const x = b.input('x', 'int8', ['s', 3]);
    const y = b.input('y', 'float32', ['s', 3]);
    const n = b.size(x, 0);
    const slice = b.call('aten.slice.Tensor', { self: x, dim: 0, start: b.call('sym.floordiv', { a: n, b: 2 }).output, end: n, step: 1 });
    const tiled = b.call('aten.repeat_interleave.self_int', { self: y, repeats: n, dim: 1 });
    return { graph: b.outputs(slice.output, tiled.output), slice };
  }

  test('the selector names both arguments of a refused slice', () => {
    const { graph, slice } = build();
    expect(dynamicSelector(graph, {})(slice, {})).toEqual({
      ok: false,
      reasons: ['argument start = s//2, argument end = s depends on a dynamic dim and needs a shape tensor: %x is int8, which TensorRT does not move'],
    });
  });

  test('E_DYNAMIC_UNSUPPORTED has one line per op', () => {
    expect(thrownError(() => checkDynamicSupport(build().graph, {})).message.split('\n')).toEqual([
      '2 op(s) take an int argument that depends on a dynamic dim, and have no shape-tensor (_dyn) variant for it (set dynamicFallback to run them in fallback segments, or give static shapes):',
      '  - node slice (aten.slice.Tensor): argument start = s//2, argument end = s (%x is int8, which TensorRT does not move)',
      '  - node repeat_interleave (aten.repeat_interleave.self_int): argument repeats = s (aten.repeat_interleave.self_int has no _dyn variant taking a shape tensor there)',
    ]);
  });
});

describe('the shape tensors of one engine segment', () => {
  /** Views of x: f32[s, 12] by [s, 12], [1, 2, s, 6] and (of relu(x)) [s, 12]; z: f32[2, 3] repeated [s, 1]; arange(-2, s). */
  function build(): Graph {
    const b = new DynGraph('lists', S);
    const x = b.input('x', 'float32', ['s', 12]);
    const z = b.input('z', 'float32', [2, 3]);
    const n = b.size(x, 0);
    const v1 = b.call('aten.view.default', { self: x, size: [n, 12] }).output;
    const v2 = b.call('aten.view.default', { self: x, size: [1, 2, n, 6] }).output;
    const v3 = b.call('aten.view.default', { self: b.call('aten.relu.default', { self: x }).output, size: [n, 12] }).output;
    const r = b.call('aten.repeat.default', { self: z, repeats: [n, 1] }).output;
    return b.outputs(v1, v2, v3, r, b.call('aten.arange.start', { start: -2, end: n }).output);
  }

  test('each dim and each static run is made once; runs of static dims are one constant each', () => {
    const graph = build();
    const legal = copy(graph);
    const part = partitionDynamic(legal, { minBlockSize: 1 });
    expect(part.segments.map((s) => s.kind)).toEqual(['engine']);
    // Node names come from the variant's target (trt.size_dyn → size_dyn); one trt.size_dyn
    // for every read of s; an all-static list ([1, 2, 3] for the repeat: a size-1 dim before the repeated axis only) is its constant.
    expect(calls(part.segments[0]!.nodes)).toEqual([
      'size_dyn=trt.size_dyn(x,0)',
      'sym_list_dyn=trt.sym_list_dyn(size_dyn,dims)',
      'reshape_dyn=trt.reshape_dyn(x,sym_list_dyn)',
      'sym_list_dyn_1=trt.sym_list_dyn(dims_1,size_dyn,dims_2)',
      'reshape_dyn_1=trt.reshape_dyn(x,sym_list_dyn_1)',
      'relu=aten.relu.default(x)',
      'sym_list_dyn_2=trt.sym_list_dyn(size_dyn,dims)',
      'reshape_dyn_2=trt.reshape_dyn(relu,sym_list_dyn_2)',
      'reshape_dyn_3=trt.reshape_dyn(z,dims_3)',
      'sym_list_dyn_3=trt.sym_list_dyn(size_dyn,dims_4)',
      'expand_dyn=trt.expand_dyn(reshape_dyn_3,sym_list_dyn_3)',
      'sym_mul_dyn=trt.sym_mul_dyn(size_dyn,size_2)',
      'sym_list_dyn_4=trt.sym_list_dyn(sym_mul_dyn,dims_5)',
      'reshape_dyn_4=trt.reshape_dyn(expand_dyn,sym_list_dyn_4)',
      'sym_add_dyn=trt.sym_add_dyn(size_dyn,size_2)',
      'arange_dyn=trt.arange_dyn(size_m2,sym_add_dyn,1,"int64")',
    ]);
    const constants = legal.nodes.filter((n) => n.kind === 'constant').map((n) => [n.name, n.tensor!.dtype, n.tensor!.shape, Array.from(n.tensor!.toArray(), Number)]);
    expect(constants).toEqual([
      ['dims', 'int64', [1], [12]],
      ['dims_1', 'int64', [2], [1, 2]],
      ['dims_2', 'int64', [1], [6]],
      ['dims_3', 'int64', [3], [1, 2, 3]],
      ['dims_4', 'int64', [2], [2, 3]],
      ['size_2', 'int64', [], [2]],
      ['dims_5', 'int64', [1], [3]],
      ['size_m2', 'int64', [], [-2]],
    ]);
    for (const s of [2, 5]) expectSame(graph, legal, [iota([s, 12]), iota([2, 3])], `s = ${s}`);
  });
});

describe('segments around a fallback one', () => {
  test('an engine segment never reads a dim from a float64 tensor (a float32 input with the same symbol instead)', () => {
    const b = new DynGraph('wide', S);
    const x = b.input('x', 'float64', ['s', 4]);
    const y = b.input('y', 'float32', ['s']);
    const graph = b.outputs(b.call('aten.view.default', { self: y, size: [b.size(x, 0)] }).output);
    const legal = copy(graph);
    const { segments } = partitionDynamic(legal, { minBlockSize: 1 });
    expect(segments.map((s) => [s.kind, calls(s.nodes)])).toEqual([['engine', ['size_dyn=trt.size_dyn(y,0)', 'sym_list_dyn=trt.sym_list_dyn(size_dyn)', 'reshape_dyn=trt.reshape_dyn(y,sym_list_dyn)']]]);
    expectSame(graph, legal, [Tensor.from('float64', [3, 4], new Array(12).fill(0.5)), iota([3])], 's = 3');
  });

  test('a fallback segment recomputes s once for s*4 and s, with names of its own; one with no SymInt keeps its nodes', () => {
    const b = new DynGraph('fallback', S);
    const x = b.input('x', 'float32', ['s', 4]);
    const n = b.size(x, 0);
    const m = b.call('sym.mul', { a: n, b: 4 }).output;
    const e = b.call('aten.exp.default', { self: x }).output;
    const flat = b.call('aten.view.default', { self: e, size: [m] });
    const back = b.call('aten.view.default', { self: flat.output, size: [n, 4] });
    const r = b.call('aten.relu.default', { self: back.output });
    const graph = b.outputs(r.output);
    const legal = copy(graph);
    const forced = new Set([flat.name, back.name, r.name]);
    const { segments } = partitionDynamic(legal, { minBlockSize: 1, torchExecutedOps: forced });
    expect(segments.map((s) => s.kind)).toEqual(['engine', 'fallback']);
    expect(calls(segments[1]!.nodes)).toEqual([
      'sym_size_1=aten.sym_size.int(exp,0)',
      'sym_mul=sym.mul(sym_size_1,4)',
      'view=aten.view.default(exp,sym_mul)',
      'view_1=aten.view.default(view,sym_size_1,4)',
      'relu=aten.relu.default(view_1)',
    ]);
    for (const s of [2, 7]) expectSame(graph, legal, [iota([s, 4])], `s = ${s}`);
  });

  test("an engine segment reads its dims from what it reads first (a fallback segment's output), and a kept segment's dead rewrite is not reported", () => {
    const b = new DynGraph('reads', S);
    const x = b.input('x', 'float32', ['s', 4]);
    const n = b.size(x, 0);
    const e = b.call('aten.exp.default', { self: x }).output;
    const f = b.call('aten.relu.default', { self: x });
    const v = b.call('aten.view.default', { self: f.output, size: [n, 2, 2] }).output;
    const graph = b.outputs(e, v);
    const legal = copy(graph);
    const { segments, report } = partitionDynamic(legal, { minBlockSize: 1, torchExecutedOps: new Set([f.name]) });
    expect(segments.map((s) => [s.kind, s.nodes.map((x) => x.target)])).toEqual([
      ['engine', ['aten.exp.default']],
      ['fallback', ['aten.relu.default']],
      ['engine', ['trt.size_dyn', 'trt.sym_list_dyn', 'trt.reshape_dyn']],
    ]);
    expect(calls(segments[2]!.nodes)[0]).toBe('size_dyn_1=trt.size_dyn(relu,0)');
    expect(report.segments.map((s) => [s.index, s.kind, s.inputs, s.dynamicOps?.map((d) => d.node)])).toEqual([
      [0, 'engine', ['x'], []],
      [1, 'fallback', ['x'], undefined],
      [2, 'engine', ['relu'], ['view']],
    ]);
    const exp = report.ops.find((o) => o.node === 'exp')!;
    expect([exp.segment, exp.converted, exp.reasons, 'dynamicVariant' in exp]).toEqual([0, true, [], false]);
    expect('dynamicVariant' in report.ops.find((o) => o.node === 'sym_size')!).toBe(false);
    for (const s of [2, 6]) expectSame(graph, legal, [iota([s, 4])], `s = ${s}`);
  });
});
