/**
 * Converter selection on the dynamic path (where dynamic legalization meets the converter
 * registry): a node legalization rewrites into a `_dyn` variant is judged by its rewrite, and
 * every candidate's `checkArgs` runs for it, as on the static path. A variant whose converter
 * refuses the node sends it to a fallback segment with the reason (rather than reaching
 * conversion and failing with E_INTERNAL); the report names the converter that converts each
 * node.
 */
import '../../lib/conversion/converters';
import { registerConverter, registeredConverters, selectConverter, unregisterConverter, type ConverterCandidate } from '../../lib/conversion/registry';
import type { Graph, Node } from '../../lib/ir/graph';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../../lib/ir/serialize';
import { partitionDynamic } from '../../lib/legalization';
import type { DynamicSettings } from '../../lib/legalization';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { DynGraph, compileAndRun } from './helpers';

const copy = (g: Graph): Graph => deserializeGraphFromBuffer(serializeGraphToBuffer(g));
const x23 = Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6]);

/** full(size=[s, 3], 1.5, float64) and x * s, with x: float32[s, 3]. */
function fullFloat64(): Graph {
  const b = new DynGraph('full64', { s: { min: 1, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3]);
  const n = b.size(x, 0);
  const full = b.call('aten.full.default', { size: [n, 3], fill_value: 1.5, dtype: 'float64' }).output;
  return b.outputs(full, b.call('aten.mul.Scalar', { self: x, other: n }).output);
}

/**
 * Ops of several rules, with a static operand where the variant's converter is the static one:
 * y: float32[2, 3] is static, so y * s (→ aten.mul.Tensor with a 0-D shape tensor) converts
 * with the static aten.mul.Tensor converter, not its "(dynamic)" sibling.
 */
function mixed(): Graph {
  const b = new DynGraph('mixed', { s: { min: 2, max: 8 } });
  const x = b.input('x', 'float32', ['s', 3]);
  const y = b.input('y', 'float32', [2, 3]);
  const n = b.size(x, 0);
  const scaled = b.call('aten.mul.Scalar', { self: y, other: n }).output;
  const full = b.call('aten.full.default', { size: [n, 3], fill_value: 2, dtype: 'float32' }).output;
  const sum = b.call('aten.add.Tensor', { self: x, other: full }).output;
  const flat = b.call('aten.view.default', { self: sum, size: [b.call('sym.mul', { a: n, b: 3 }).output] }).output;
  const head = b.call('aten.slice.Tensor', { self: x, dim: 0, start: 1, end: 9223372036854775807, step: 1 }).output;
  return b.outputs(scaled, flat, head);
}

/**
 * The node of a legalized segment that replaced op `name`: the producer of the value of that
 * name (rewrites keep the old value names), or for a SymInt op (whose value becomes a shape
 * tensor) a node of its variant.
 */
function replacementOf(nodes: readonly Node[], name: string, variant: string | undefined): Node {
  const n = nodes.find((m) => m.outputs.some((v) => v.name === name)) ?? nodes.find((m) => m.target === variant);
  if (n === undefined) throw new Error(`nothing in the segment replaced ${name}`);
  return n;
}

/** For every converted op in an engine segment: the converter the report names is the one conversion selects. */
function expectReportNamesTheConverterUsed(graph: Graph, settings: DynamicSettings): Record<string, string> {
  const legal = copy(graph);
  const { segments, report } = partitionDynamic(legal, settings);
  const named: Record<string, string> = {};
  for (const op of report.ops) {
    if (!op.converted || op.segment < 0 || segments[op.segment]!.kind !== 'engine') continue;
    const used = selectConverter(replacementOf(segments[op.segment]!.nodes, op.node, op.dynamicVariant), settings);
    expect([op.node, used.ok && used.converter.name]).toEqual([op.node, op.converter]);
    named[op.node] = op.converter!;
  }
  return named;
}

describe('a _dyn variant whose converter refuses the node', () => {
  test('aten.full with a SymInt size and dtype float64 under truncateDouble: fallback with the reason, not E_INTERNAL', async () => {
    const { program, outputs } = await compileAndRun(fullFloat64(), { minBlockSize: 1, truncateDouble: true }, [[x23]]);
    const full = program.report.ops.find((o) => o.target === 'aten.full.default')!;
    expect(full).toMatchObject({ converted: false, reasons: ['its trt.full_dyn rewrite: trt.full_dyn: TensorRT cannot produce float64 here'] });
    expect(program.report.segments.map((s) => s.kind)).toEqual(['fallback', 'engine']);
    // By hand: a [2, 3] float64 fill of 1.5; x * 2.
    expectTensor(outputs[0]![0]!, 'float64', [2, 3], [1.5, 1.5, 1.5, 1.5, 1.5, 1.5]);
    expectTensor(outputs[0]![1]!, 'float32', [2, 3], [2, 4, 6, 8, 10, 12]);
  });

  test('the same graph with requireFullCompilation: a typed E_UNSUPPORTED_OP naming the node and the reason', async () => {
    const error = (await compileAndRun(fullFloat64(), { truncateDouble: true, requireFullCompilation: true }, []).catch((e: unknown) => e)) as Error & { code: string };
    expect(error.code).toBe('E_UNSUPPORTED_OP');
    expect(error.message).toContain('node full (aten.full.default): its trt.full_dyn rewrite: trt.full_dyn: TensorRT cannot produce float64 here');
  });

  test('the report of a dry partition agrees with what conversion selects', () => {
    expect(expectReportNamesTheConverterUsed(fullFloat64(), { minBlockSize: 1, truncateDouble: true })).toEqual({ mul: 'aten.mul.Tensor (dynamic)' });
  });
});

describe('the report names the converter that converts each node', () => {
  test('a static operand times a SymInt converts with the static aten.mul.Tensor converter, and the report says so', () => {
    const named = expectReportNamesTheConverterUsed(mixed(), { minBlockSize: 1 });
    expect(named).toEqual({
      sym_size: 'trt.size_dyn',
      mul: 'aten.mul.Tensor',
      full: 'trt.full_dyn',
      add: 'aten.add.Tensor (dynamic)',
      view: 'trt.reshape_dyn',
      slice: 'trt.slice_dyn',
      mul_1: 'trt.sym_mul_dyn',
    });
  });

  test('compiled and run, the mixed graph gives the hand-computed values', async () => {
    const y = Tensor.from('float32', [2, 3], [1, -1, 0.5, 2, 0, -3]);
    const { outputs } = await compileAndRun(mixed(), { minBlockSize: 1 }, [[x23, y]]);
    expectTensor(outputs[0]![0]!, 'float32', [2, 3], [2, -2, 1, 4, 0, -6]);
    expectTensor(outputs[0]![1]!, 'float32', [6], [3, 4, 5, 6, 7, 8]);
    expectTensor(outputs[0]![2]!, 'float32', [1, 3], [4, 5, 6]);
  });
});

describe('every candidate of a variant is tried, with its checkArgs', () => {
  const added: ConverterCandidate[] = [];
  afterEach(() => added.splice(0).forEach(unregisterConverter));

  test('a higher-priority trt.full_dyn converter that refuses falls through to the built-in one', async () => {
    const builtIn = registeredConverters('trt.full_dyn')[0]!;
    const seen: string[] = [];
    added.push(
      registerConverter('trt.full_dyn', () => [], {
        name: 'picky full_dyn',
        priority: 10,
        checkArgs: (node) => (seen.push(node.target), 'refuses everything'),
      }),
    );
    const named = expectReportNamesTheConverterUsed(mixed(), { minBlockSize: 1 });
    expect(named.full).toBe(builtIn.name);
    expect(seen).toContain('trt.full_dyn');
    const { outputs } = await compileAndRun(mixed(), { minBlockSize: 1 }, [[x23, x23]]);
    expectTensor(outputs[0]![1]!, 'float32', [6], [3, 4, 5, 6, 7, 8]);
  });

  test('one that accepts is the converter reported and used', async () => {
    const builtIn = registeredConverters('trt.full_dyn')[0]!;
    let calls = 0;
    added.push(
      registerConverter('trt.full_dyn', (node, ctx) => (calls++, builtIn.impl(node, ctx)), { name: 'eager full_dyn', priority: 10, checkArgs: () => true }),
    );
    expect(expectReportNamesTheConverterUsed(mixed(), { minBlockSize: 1 }).full).toBe('eager full_dyn');
    await compileAndRun(mixed(), { minBlockSize: 1 }, [[x23, x23]]);
    expect(calls).toBe(1);
  });

  test('when every candidate refuses, the node falls back with every reason', () => {
    added.push(registerConverter('trt.full_dyn', () => [], { name: 'picky full_dyn', priority: 10, checkArgs: () => 'refuses everything' }));
    const builtIn = registeredConverters('trt.full_dyn')[0]!;
    unregisterConverter(builtIn);
    try {
      const { report } = partitionDynamic(copy(mixed()), { minBlockSize: 1 });
      expect(report.ops.find((o) => o.node === 'full')).toMatchObject({
        converted: false,
        reasons: ['its trt.full_dyn rewrite: picky full_dyn: refuses everything'],
      });
    } finally {
      added.push(registerConverter('trt.full_dyn', builtIn.impl, { name: builtIn.name, checkArgs: builtIn.checkArgs, priority: builtIn.priority }));
    }
  });
});
