/**
 * Dynamic legalization: ops whose int arguments depend on a symbol become `_dyn`
 * shape-tensor variants in engine segments (fallback segments keep the original ops), no
 * SymInt crosses a segment boundary, ops with no variant are reported in one
 * E_DYNAMIC_UNSUPPORTED (or sent to fallback with dynamicFallback). Converted programs are
 * checked against the interpreter at the profile bounds and between them.
 */
import '../../lib/conversion/converters';
import { DynamicUnsupportedError, ShapeOutOfRangeError, TensorRTNodeError } from '../../lib/errors';
import { interpret } from '../../lib/interpreter';
import type { Graph, Node } from '../../lib/ir/graph';
import { shapeTensorDims } from '../../lib/ir/ops/dynamic';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../../lib/ir/serialize';
import { sym, symMul } from '../../lib/ir/symbolic';
import { checkDynamicSupport, partitionDynamic } from '../../lib/legalization';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { Random } from '../helpers/random';
import { DynGraph, compileAndRun, valuesOf } from './helpers';

const rng = new Random(2002);
const copy = (g: Graph): Graph => deserializeGraphFromBuffer(serializeGraphToBuffer(g));
const targets = (nodes: readonly Node[]): string[] => nodes.map((n) => n.target);

/** Compiles once (minBlockSize 1) and checks the program against the interpreter on every input set. */
async function expectMatchesInterpreter(graph: Graph, runs: ReadonlyArray<readonly Tensor[]>, settings = {}): Promise<Awaited<ReturnType<typeof compileAndRun>>['program']> {
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1, ...settings }, runs);
  runs.forEach((inputs, r) => {
    const expected = interpret(graph, inputs);
    outputs[r]!.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${graph.name} run ${r} output ${i}`));
  });
  return program;
}

describe('a dynamic reshape', () => {
  const build = (): Graph => {
    const b = new DynGraph('reshape', { s0: { min: 1, max: 8 } });
    const x = b.input('x', 'float32', ['s0', 4, 16]);
    const v = b.call('aten.view.default', { self: x, size: [b.size(x, 0), 64] }).output;
    return b.outputs(b.call('aten.relu.default', { self: v }).output);
  };

  test('becomes trt.reshape_dyn fed by trt.size_dyn; no SymInt is left in the engine segment', () => {
    const g = build();
    const { segments, report } = partitionDynamic(g, { minBlockSize: 1 });
    expect(segments.map((s) => s.kind)).toEqual(['engine']);
    const nodes = segments[0]!.nodes;
    expect(targets(nodes)).toEqual(['trt.size_dyn', 'trt.sym_list_dyn', 'trt.reshape_dyn', 'aten.relu.default']);
    expect(valuesOf(nodes).filter((v) => v.type.kind === 'symint')).toEqual([]);
    const reshape = nodes[2]!;
    // The shape tensor traces to exact symbolic sizes; the output keeps its type.
    expect(shapeTensorDims(reshape.args.shape as never)).toEqual([sym('s0'), 64]);
    expect(reshape.output.tensorType.shape).toEqual([sym('s0'), 64]);
    expect(reshape.output.name).toBe('view');
    expect(report.segments[0]!.dynamicOps).toEqual([
      { node: 'sym_size', target: 'aten.sym_size.int', variant: 'trt.size_dyn' },
      { node: 'view', target: 'aten.view.default', variant: 'trt.reshape_dyn' },
    ]);
    expect(report.ops.find((o) => o.node === 'view')).toMatchObject({ converted: true, dynamicVariant: 'trt.reshape_dyn' });
  });

  test('the legalized graph computes what the original does', () => {
    const original = build();
    const legal = copy(original);
    partitionDynamic(legal, { minBlockSize: 1 });
    for (const n of [1, 5, 8]) {
      const x = rng.tensor([n, 4, 16]);
      expectClose(interpret(legal, [x])[0]!, interpret(original, [x])[0]!, FP32, `s0 = ${n}`);
    }
  });

  test('compiled once, it runs at the profile bounds and between them', async () => {
    const program = await expectMatchesInterpreter(build(), [1, 3, 8].map((n) => [rng.tensor([n, 4, 16])]));
    expect(program.report.segments).toHaveLength(1);
  });
});

describe('_dyn variants and shape arithmetic', () => {
  test('slice with the INT64_MAX sentinel and negative bounds on a run-time dim: normalized start and length', async () => {
    const b = new DynGraph('slices', { s0: { min: 4, max: 16 } });
    const x = b.input('x', 'float32', ['s0', 6]);
    const tail = b.call('aten.slice.Tensor', { self: x, dim: 0, start: 1, end: 9223372036854775807, step: 2 }).output;
    const last3 = b.call('aten.slice.Tensor', { self: x, dim: 0, start: -3, end: -1, step: 1 }).output;
    const n = b.size(x, 0);
    const half = b.call('sym.floordiv', { a: n, b: 2 }).output;
    const front = b.call('aten.slice.Tensor', { self: x, dim: 0, start: 0, end: half, step: 1 }).output;
    const g = b.outputs(tail, last3, front);
    const legal = copy(g);
    const { segments } = partitionDynamic(legal, { minBlockSize: 1 });
    const nodes = segments.flatMap((s) => s.nodes);
    expect(targets(nodes).filter((t) => t === 'trt.slice_dyn')).toHaveLength(3);
    expect(targets(nodes)).toEqual(expect.arrayContaining(['trt.sym_sub_dyn', 'trt.sym_floordiv_dyn']));
    expect(targets(nodes)).not.toContain('aten.slice.Tensor');
    await expectMatchesInterpreter(g, [4, 7, 16].map((k) => [rng.tensor([k, 6])]));
  });

  test('expand, full, arange, select, narrow, sym_tensor and a SymInt operand', async () => {
    const b = new DynGraph('variants', { s: { min: 2, max: 12 } });
    const x = b.input('x', 'float32', ['s', 1, 4]);
    const n = b.size(x, 0);
    const expanded = b.call('aten.expand.default', { self: x, size: [n, 3, 4] }).output;
    const zeros = b.call('aten.zeros.default', { size: [n, 3, 4], dtype: 'float32' }).output;
    const sum = b.call('aten.add.Tensor', { self: expanded, other: zeros }).output;
    const iota = b.call('aten.arange.start', { start: 1, end: n, dtype: 'float32' }).output;
    const lastRow = b.call('aten.select.int', { self: x, dim: 0, index: -1 }).output;
    const m = b.call('sym.sub', { a: n, b: 1 }).output;
    const narrowed = b.call('aten.narrow.default', { self: x, dim: 0, start: 1, length: m }).output;
    const shape = b.call('trt.sym_tensor', { values: [n, 4] }).output;
    const scaled = b.call('aten.mul.Scalar', { self: x, other: n }).output;
    const g = b.outputs(sum, iota, lastRow, narrowed, shape, scaled);
    const program = await expectMatchesInterpreter(g, [2, 5, 12].map((k) => [rng.tensor([k, 1, 4])]));
    const variants = program.report.segments.flatMap((s) => s.dynamicOps ?? []).map((d) => d.variant);
    expect(variants).toEqual(
      expect.arrayContaining([
        'trt.size_dyn',
        'trt.expand_dyn',
        'trt.full_dyn',
        'trt.arange_dyn',
        'trt.select_dyn',
        'trt.slice_dyn',
        'trt.sym_sub_dyn',
        'trt.sym_list_dyn',
        'aten.mul.Tensor',
      ]),
    );
    expect(program.report.ops.every((o) => o.converted)).toBe(true);
  });
});

describe('segments', () => {
  test('SymInts never cross a boundary: a fallback segment recomputes them with sym_size, an engine segment with size_dyn', async () => {
    const b = new DynGraph('crossing', { s0: { min: 1, max: 8 } });
    const x = b.input('x', 'float32', ['s0', 4]);
    const n = b.size(x, 0);
    const flat = b.call('aten.view.default', { self: b.call('aten.relu.default', { self: x }).output, size: [b.call('sym.mul', { a: n, b: 4 }).output] }).output;
    const neg = b.call('aten.neg.default', { self: flat }).output;
    const back = b.call('aten.view.default', { self: neg, size: [n, 4] });
    const again = b.call('aten.view.default', { self: back.output, size: [n, 2, 2] }).output;
    const g = b.outputs(b.call('aten.sigmoid.default', { self: again }).output);
    const settings = { minBlockSize: 1, torchExecutedOps: ['aten.neg.default', back.name] };
    const legal = copy(g);
    const { segments } = partitionDynamic(legal, { ...settings, torchExecutedOps: new Set(settings.torchExecutedOps) });
    expect(segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
    for (const s of segments) {
      expect([...s.inputs, ...s.outputs].filter((v) => v.type.kind !== 'tensor')).toEqual([]);
    }
    expect(targets(segments[1]!.nodes)).toEqual(['aten.sym_size.int', 'aten.neg.default', 'aten.view.default']);
    expect(segments[1]!.inputs.map((v) => v.name)).toEqual(['x', 'view']);
    expect(targets(segments[2]!.nodes)).toEqual(['trt.size_dyn', 'trt.sym_list_dyn', 'trt.reshape_dyn', 'aten.sigmoid.default']);
    await expectMatchesInterpreter(g, [1, 6, 8].map((k) => [rng.tensor([k, 4])]), settings);
  });
});

describe('ops with no _dyn variant', () => {
  const build = (): Graph => {
    const b = new DynGraph('unsupported', { s0: { min: 1, max: 8 } });
    const x = b.input('x', 'float32', ['s0', 8]);
    const n = b.size(x, 0);
    // repeat, constant_pad_nd and roll by SymInts have rewrites (test/legalization/compositions.test.ts); these forms do not.
    const tiled = b.call('aten.repeat_interleave.self_int', { self: x, repeats: n, dim: 1 }).output;
    const padded = b.call('aten.constant_pad_nd.default', { self: x, pad: [-1, n] }).output;
    const rolled = b.call('aten.roll.default', { self: x, shifts: [n], dims: [] }).output;
    const viewed = b.call('aten.view.default', { self: x, size: [n, 2, 4] }).output;
    return b.outputs(tiled, padded, rolled, viewed);
  };

  test('yield exactly one E_DYNAMIC_UNSUPPORTED naming every such op and argument', () => {
    let error: unknown;
    try {
      checkDynamicSupport(build(), {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DynamicUnsupportedError);
    const e = error as DynamicUnsupportedError;
    expect(e.code).toBe('E_DYNAMIC_UNSUPPORTED');
    expect(e.message).toMatch(/^3 op\(s\) take an int argument that depends on a dynamic dim/);
    expect(e.message).toContain('node repeat_interleave (aten.repeat_interleave.self_int): argument repeats = s0');
    expect(e.message).toContain('node constant_pad_nd (aten.constant_pad_nd.default): argument pad = [-1, s0]');
    expect(e.message).toContain('negative (cropping) pads with run-time dims are not rewritten');
    expect(e.message).toContain('node roll (aten.roll.default): argument shifts = [s0]');
    expect(e.message).toContain('roll over the flattened tensor (no dims) is not rewritten');
    expect(e.message).not.toContain('aten.view.default');
    expect((e.details.ops as Array<{ node: string }>).map((o) => o.node)).toEqual(['repeat_interleave', 'constant_pad_nd', 'roll']);
  });

  test('compile() fails with that one error', async () => {
    await expect(compileAndRun(build(), {}, [])).rejects.toMatchObject({ code: 'E_DYNAMIC_UNSUPPORTED' });
  });

  test('with dynamicFallback they run in fallback segments, the report says why, and results are right', async () => {
    const g = build();
    const program = await expectMatchesInterpreter(g, [1, 4, 8].map((k) => [rng.tensor([k, 8])]), { dynamicFallback: true });
    const refused = program.report.ops.filter((o) => !o.converted);
    expect(refused.map((o) => o.node).sort()).toEqual(['constant_pad_nd', 'repeat_interleave', 'roll']);
    for (const o of refused) expect(o.reasons.join()).toMatch(/depends on a dynamic dim and needs a shape tensor.*dynamicFallback/);
    expect(program.report.ops.find((o) => o.node === 'view')).toMatchObject({ converted: true, dynamicVariant: 'trt.reshape_dyn' });
  });
});

describe('run-time shapes outside the compiled range', () => {
  test('the interpreter (fallback segments) refuses them with E_SHAPE_OUT_OF_RANGE naming the input, dim and range', () => {
    const b = new DynGraph('range', { s0: { min: 2, max: 8 } });
    const x = b.input('x', 'float32', ['s0', 3]);
    const g = b.outputs(b.call('aten.relu.default', { self: x }).output);
    let error: unknown;
    try {
      interpret(g, [rng.tensor([9, 3])]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShapeOutOfRangeError);
    expect((error as TensorRTNodeError).code).toBe('E_SHAPE_OUT_OF_RANGE');
    expect((error as Error).message).toBe('input "x" dim 0 (s0) must be in [2, 8], got 9');
    expect((error as TensorRTNodeError).details).toEqual({ input: 'x', dim: 0, symbol: 's0', value: 9, min: 2, max: 8 });
  });
});

test('shapeTensorDims traces sizes through constants and _dyn arithmetic exactly', () => {
  const b = new DynGraph('trace', { s0: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s0', 4]);
  const n = b.call('trt.size_dyn', { self: x, dim: 0 }).output;
  const four = b.graph.addConstant('four', rng.intTensor([], 4, 4));
  const product = b.call('trt.sym_mul_dyn', { a: n, b: four }).output;
  const list = b.call('trt.sym_list_dyn', { items: [product, n] }).output;
  expect(shapeTensorDims(list)).toEqual([symMul(sym('s0'), 4), sym('s0')]);
  const reshaped = b.call('trt.reshape_dyn', { self: x, shape: b.call('trt.sym_list_dyn', { items: [product] }).output }).output;
  expect(reshaped.tensorType.shape).toEqual([symMul(sym('s0'), 4)]);
});
