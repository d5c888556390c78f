/**
 * lib/legalization/legalize.ts in-process (compile() runs it on its worker, from dist/): the
 * `_dyn`-aware converter selection and its reasons, which ops E_DYNAMIC_UNSUPPORTED lists, and
 * the partition report after legalization (segments that disappear, renumbering, SymInts
 * recomputed in fallback segments). Legalized graphs are run by the interpreter against the
 * unlegalized graph at several sizes.
 */
import '../../lib/conversion/converters';
import { DynamicUnsupportedError } from '../../lib/errors';
import { selectConverter } from '../../lib/conversion/registry';
import type { Graph, Node } from '../../lib/ir/graph';
import { deserializeGraphFromBuffer, serializeGraphToBuffer } from '../../lib/ir/serialize';
import { interpret } from '../../lib/interpreter';
import { checkDynamicSupport, dynamicSelector, findMissingVariants, partitionDynamic } from '../../lib/legalization';
import { expectTensor } from '../helpers/compare';
import { thrownError } from '../helpers/errors';
import { DynGraph } from './helpers';
import { iota } from './in-process';

const copy = (g: Graph): Graph => deserializeGraphFromBuffer(serializeGraphToBuffer(g));

/** The legalized graph computes what `original` computes, on x = iota(shape(n)) for each n. */
function expectSameResults(original: Graph, legal: Graph, shapes: number[][]): void {
  for (const shape of shapes) {
    const inputs = [iota(shape)];
    const want = interpret(original, inputs);
    interpret(legal, inputs).forEach((t, i) => expectTensor(t, want[i]!.dtype, want[i]!.shape, want[i]!.toArray(), `x${JSON.stringify(shape)} output ${i}`));
  }
}

describe('a SymInt used only by a fallback segment', () => {
  /** n = sym_size(x, 0); view(x, [n*4]) forced to fallback; relu; view to [n, 4]. */
  function build(): { graph: Graph; forced: string } {
    const b = new DynGraph('crossing', { s: { min: 2, max: 8 } });
    const x = b.input('x', 'float32', ['s', 4]);
    const n = b.size(x, 0);
    const flat = b.call('aten.view.default', { self: x, size: [b.call('sym.mul', { a: n, b: 4 }).output] });
    const relu = b.call('aten.relu.default', { self: flat.output }).output;
    return { graph: b.outputs(b.call('aten.view.default', { self: relu, size: [n, 4] }).output), forced: flat.name };
  }

  test('its engine segment disappears: the report renumbers the segments and says where the value went', () => {
    const { graph, forced } = build();
    const legal = copy(graph);
    const { segments, report } = partitionDynamic(legal, { minBlockSize: 1, torchExecutedOps: new Set([forced]) });
    expect(segments.map((s) => s.kind)).toEqual(['fallback', 'engine']);
    expect(segments.map((s) => s.index)).toEqual([0, 1]);
    // The fallback segment recomputes n*4 from the dims of x.
    expect(segments[0]!.nodes.map((n) => n.target)).toEqual(['aten.sym_size.int', 'sym.mul', 'aten.view.default']);
    expect(segments[1]!.nodes.map((n) => n.target)).toEqual(['aten.relu.default', 'trt.size_dyn', 'trt.sym_list_dyn', 'trt.reshape_dyn']);
    const recomputed = 'its value is recomputed where it is used (shape-tensor legalization)';
    expect(report.ops.map((o) => [o.node, o.segment, o.converted, o.reasons.join('; '), o.dynamicVariant])).toEqual([
      ['sym_size', -1, true, recomputed, undefined],
      ['mul', -1, true, recomputed, undefined],
      [forced, 0, false, 'forced to a fallback segment by torchExecutedOps', undefined],
      ['relu', 1, true, '', undefined],
      ['view_1', 1, true, '', 'trt.reshape_dyn'],
    ]);
    expect(report.segments.map((s) => [s.index, s.kind, s.ops, s.inputs, s.outputs])).toEqual([
      [0, 'fallback', 1, ['x'], [forced]],
      [1, 'engine', 2, [forced, 'x'], ['view_1']],
    ]);
    expect('dynamicOps' in report.segments[0]!).toBe(false);
    expect(report.segments[1]!.dynamicOps).toEqual([{ node: 'view_1', target: 'aten.view.default', variant: 'trt.reshape_dyn' }]);
    expectSameResults(graph, legal, [
      [2, 4],
      [5, 4],
    ]);
  });
});

describe('dynamicSelector: why a node is not converted', () => {
  /** x: float64[s, 4] (TensorRT cannot hold float64 without truncateDouble). */
  function wide(): { graph: Graph; sel: ReturnType<typeof dynamicSelector>; nodes: Record<string, Node> } {
    const b = new DynGraph('wide', { s: { min: 2, max: 8 } });
    const x = b.input('x', 'float64', ['s', 4]);
    const n = b.size(x, 0);
    const view = b.call('aten.view.default', { self: x, size: [n, 4] });
    const tiled = b.call('aten.repeat_interleave.self_int', { self: x, repeats: n, dim: 1 });
    const graph = b.outputs(view.output, tiled.output);
    return { graph, sel: dynamicSelector(graph, {}), nodes: { size: n.producer, view, tiled } };
  }

  test('a symbol only a float64 input carries is not readable; a float64 tensor cannot be held; an op with no variant says so', () => {
    const { sel, nodes } = wide();
    expect(sel(nodes.size!, {})).toEqual({ ok: false, reasons: ['symbol s is not the size of a dim of any input TensorRT can read'] });
    expect(sel(nodes.view!, {})).toEqual({ ok: false, reasons: ['%x is float64, which TensorRT cannot hold'] });
    expect(sel(nodes.tiled!, {})).toEqual({
      ok: false,
      reasons: ['argument repeats = s depends on a dynamic dim and needs a shape tensor: aten.repeat_interleave.self_int has no _dyn variant taking a shape tensor there'],
    });
  });

  test('with dynamicFallback the reason says where the op runs', () => {
    const { graph, nodes } = wide();
    expect(dynamicSelector(graph, { dynamicFallback: true })(nodes.tiled!, {}).ok).toBe(false);
    expect((dynamicSelector(graph, { dynamicFallback: true })(nodes.tiled!, {}) as { reasons: string[] }).reasons[0]).toMatch(/has no _dyn variant taking a shape tensor there \(dynamicFallback: it runs in a fallback segment\)$/);
  });

  test('with truncateDouble the same float64 graph is readable and converts', () => {
    const b = new DynGraph('wide', { s: { min: 2, max: 8 } });
    const x = b.input('x', 'float64', ['s', 4]);
    const n = b.size(x, 0);
    const view = b.call('aten.view.default', { self: x, size: [n, 4] });
    const graph = b.outputs(view.output);
    const sel = dynamicSelector(graph, { truncateDouble: true });
    expect(sel(n.producer, { truncateDouble: true })).toMatchObject({ ok: true, converter: { name: 'trt.size_dyn' } });
    expect(sel(view, { truncateDouble: true })).toMatchObject({ ok: true, converter: { name: 'trt.reshape_dyn' } });
  });

  test('a sym_size of a static dim (a constant shape tensor, no node made) is judged by the dynamic converter of its variant', () => {
    const b = new DynGraph('static', { s: { min: 2, max: 8 } });
    const x = b.input('x', 'float32', [3, 4]);
    const n = b.size(x, 0);
    const graph = b.outputs(n);
    expect(dynamicSelector(graph, {})(n.producer, {})).toMatchObject({ ok: true, converter: { name: 'trt.size_dyn', dynamic: true } });
  });

  test('a node forced to fallback by torchExecutedOps is judged as usual (by name or by target)', () => {
    const { graph, nodes } = wide();
    const sel = dynamicSelector(graph, {});
    for (const forced of [nodes.tiled!.name, nodes.tiled!.target]) {
      const settings = { torchExecutedOps: new Set([forced]) };
      const s = sel(nodes.tiled!, settings);
      expect(s).toEqual(selectConverter(nodes.tiled!, settings));
      expect((s as { reasons: string[] }).reasons.join()).not.toContain('_dyn variant');
    }
  });
});

describe('which ops E_DYNAMIC_UNSUPPORTED lists', () => {
  /** repeat_interleave by n (no variant) on a float32 x and on a float64 w. */
  function build(): Graph {
    const b = new DynGraph('missing', { s: { min: 2, max: 8 } });
    const x = b.input('x', 'float32', ['s', 4]);
    const w = b.input('w', 'float64', ['s', 4]);
    const n = b.size(x, 0);
    const a = b.call('aten.repeat_interleave.self_int', { self: x, repeats: n, dim: 1 }).output;
    const c = b.call('aten.repeat_interleave.self_int', { self: w, repeats: n, dim: 1 }).output;
    return b.outputs(a, c);
  }

  test('not ops on data TensorRT cannot hold, nor ops forced to fallback (by target or by name)', () => {
    expect(findMissingVariants(build()).map((m) => m.node)).toEqual(['repeat_interleave']);
    expect(findMissingVariants(build(), { truncateDouble: true }).map((m) => m.node)).toEqual(['repeat_interleave', 'repeat_interleave_1']);
    expect(findMissingVariants(build(), { truncateDouble: true, torchExecutedOps: new Set(['repeat_interleave_1']) }).map((m) => m.node)).toEqual(['repeat_interleave']);
    expect(findMissingVariants(build(), { torchExecutedOps: new Set(['aten.repeat_interleave.self_int']) })).toEqual([]);
  });

  test('the error lists each op on a line with its argument and reason; dynamicFallback returns the list instead', () => {
    const e = thrownError(() => checkDynamicSupport(build(), {}));
    expect(e).toBeInstanceOf(DynamicUnsupportedError);
    expect(e.message.split('\n')).toEqual([
      '1 op(s) take an int argument that depends on a dynamic dim, and have no shape-tensor (_dyn) variant for it (set dynamicFallback to run them in fallback segments, or give static shapes):',
      '  - node repeat_interleave (aten.repeat_interleave.self_int): argument repeats = s (aten.repeat_interleave.self_int has no _dyn variant taking a shape tensor there)',
    ]);
    expect(e.details.ops).toEqual([
      { node: 'repeat_interleave', target: 'aten.repeat_interleave.self_int', args: [{ name: 'repeats', value: 's' }], reason: 'aten.repeat_interleave.self_int has no _dyn variant taking a shape tensor there' },
    ]);
    expect(checkDynamicSupport(build(), { dynamicFallback: true }).map((m) => m.node)).toEqual(['repeat_interleave']);
    const none = new DynGraph('none', { s: { min: 2, max: 8 } });
    const x = none.input('x', 'float32', ['s', 4]);
    expect(checkDynamicSupport(none.outputs(none.call('aten.relu.default', { self: x }).output), {})).toEqual([]);
  });
});
