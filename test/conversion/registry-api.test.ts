/**
 * The registry's bookkeeping around selection: defaults of a registration, removal (twice,
 * or of a stranger), copies handed out, listings sorted by target then priority, the targets
 * with converters, which nodes count as dynamic, and the types TensorRT cannot hold (inputs
 * and outputs, complex never allowed, float64 only under truncateDouble).
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Node } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import '../../lib/ir/ops';
import {
  candidatesFor,
  convertibleTargets,
  hasDynamicInputs,
  listConverters,
  registerConverter,
  registeredConverters,
  selectConverter,
  unregisterConverter,
  type ConverterCandidate,
  type ConverterImpl,
} from '../../lib/conversion/registry';

const impl: ConverterImpl = () => [];

function graphWith(dtype: 'float32' | 'float64' | 'complex64' | 'complex128', dynamic = false): { g: Graph; x: ReturnType<Graph['addInput']> } {
  const g = new Graph('t');
  if (dynamic) g.symbols.set('s0', { min: 1, max: 8 });
  const x = g.addInput('x', tensorType(dtype, [dynamic ? sym('s0') : 2, 3]));
  return { g, x };
}
const unary = (target: string, dtype: 'float32' | 'float64' | 'complex64' | 'complex128' = 'float32', dynamic = false): Node => {
  const { g, x } = graphWith(dtype, dynamic);
  return call(g, target, { self: x });
};
const relu = (dtype: 'float32' | 'float64' = 'float32', dynamic = false): Node => unary('aten.relu.default', dtype, dynamic);
const neg = (dtype: 'complex64' | 'complex128'): Node => unary('aten.neg.default', dtype);

describe('registry bookkeeping', () => {
  const added: ConverterCandidate[] = [];
  afterEach(() => added.splice(0).forEach(unregisterConverter));
  const reg = (...args: Parameters<typeof registerConverter>): ConverterCandidate => {
    const c = registerConverter(...args);
    added.push(c);
    return c;
  };

  test('a registration: defaults, its impl and checkArgs kept, registration order increasing', () => {
    const check = (): true => true;
    const a = reg('aten.relu.default', impl);
    const b = reg('aten.relu.default', impl, { checkArgs: check, name: 'named', priority: -3, static: false });
    expect(a).toMatchObject({ target: 'aten.relu.default', impl, dynamic: true, static: true, priority: 0, name: 'aten.relu.default', checkArgs: undefined });
    expect(b).toMatchObject({ dynamic: true, static: false, priority: -3, name: 'named', checkArgs: check });
    expect(b.order).toBeGreaterThan(a.order);
  });

  test('a converter of neither kind is refused with its name and not registered', () => {
    expect(() => registerConverter('aten.relu.default', impl, { name: 'nothing', static: false, dynamic: false })).toThrow(
      'converter nothing supports neither static nor dynamic shapes',
    );
    expect(registeredConverters('aten.relu.default')).toEqual([]);
  });

  test('removal: the last one removes the target; removing twice, or a stranger, changes nothing', () => {
    const a = reg('aten.relu.default', impl, { name: 'a' });
    const b = reg('aten.relu.default', impl, { name: 'b' });
    const other = reg('aten.gelu.default', impl);
    expect(convertibleTargets()).toEqual(['aten.gelu.default', 'aten.relu.default']);
    unregisterConverter(a);
    unregisterConverter(a);
    expect(registeredConverters('aten.relu.default').map((c) => c.name)).toEqual(['b']);
    unregisterConverter({ ...b, target: 'aten.tanh.default' });
    unregisterConverter({ ...b });
    expect(registeredConverters('aten.relu.default').map((c) => c.name)).toEqual(['b']);
    unregisterConverter(b);
    expect(convertibleTargets()).toEqual(['aten.gelu.default']);
    expect(selectConverter(relu())).toEqual({ ok: false, reasons: ['no converter is registered for aten.relu.default'] });
    unregisterConverter(other);
    expect(convertibleTargets()).toEqual([]);
  });

  test('registeredConverters hands out a copy, in registration order', () => {
    reg('aten.relu.default', impl, { name: 'a', priority: 1 });
    reg('aten.relu.default', impl, { name: 'b', priority: 9 });
    const list = registeredConverters('aten.relu.default') as ConverterCandidate[];
    expect(list.map((c) => c.name)).toEqual(['a', 'b']);
    list.pop();
    expect(registeredConverters('aten.relu.default')).toHaveLength(2);
    expect(registeredConverters('aten.unknown.default')).toEqual([]);
  });

  test('listConverters: by target, then priority, then registration; flags as registered', () => {
    reg('aten.relu.default', impl, { name: 'r-low', priority: -1 });
    reg('aten.relu.default', impl, { name: 'r-high', priority: 2, dynamic: false, checkArgs: () => true });
    reg('aten.relu.default', impl, { name: 'r-zero' });
    reg('aten.gelu.default', impl, { name: 'g', static: false });
    expect(listConverters()).toEqual([
      { target: 'aten.gelu.default', name: 'g', dynamic: true, static: false, priority: 0, checksArgs: false },
      { target: 'aten.relu.default', name: 'r-high', dynamic: false, static: true, priority: 2, checksArgs: true },
      { target: 'aten.relu.default', name: 'r-zero', dynamic: true, static: true, priority: 0, checksArgs: false },
      { target: 'aten.relu.default', name: 'r-low', dynamic: true, static: true, priority: -1, checksArgs: false },
    ]);
  });

  test('hasDynamicInputs: a symbolic dim or a SymInt argument makes a node dynamic', () => {
    expect(hasDynamicInputs(relu('float32', false))).toBe(false);
    expect(hasDynamicInputs(relu('float32', true))).toBe(true);
    const { g, x } = graphWith('float32', true);
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const y = g.addInput('y', tensorType('float32', [2, 3]));
    const view = call(g, 'aten.view.default', { self: y, size: [n, 3] });
    expect(hasDynamicInputs(view)).toBe(true);
    const fixed = call(g, 'aten.view.default', { self: y, size: [3, 2] });
    expect(hasDynamicInputs(fixed)).toBe(false);
  });

  test('types TensorRT cannot hold: complex always, float64 unless truncateDouble, on inputs and outputs', () => {
    reg('aten.relu.default', impl);
    reg('aten.neg.default', impl);
    reg('aten._to_copy.default', impl);
    expect(selectConverter(neg('complex64'))).toEqual({
      ok: false,
      reasons: ['%x is complex64: TensorRT has no complex types (the complex lowering pass rewrites complex subgraphs into real arithmetic)'],
    });
    expect(selectConverter(neg('complex128'), { truncateDouble: true })).toEqual({ ok: false, reasons: ['%x is complex128: TensorRT has no complex types'] });
    expect(selectConverter(relu('float64'))).toEqual({ ok: false, reasons: ['%x is float64: TensorRT has no float64 (set truncateDouble to compute it in float32)'] });
    expect(selectConverter(relu('float64'), { truncateDouble: true }).ok).toBe(true);
    // An output of float64 from a float32 input.
    const { g, x } = graphWith('float32');
    const cast = call(g, 'aten._to_copy.default', { self: x, dtype: 'float64' }, { name: 'wide' });
    expect(selectConverter(cast)).toEqual({ ok: false, reasons: ['%wide is float64: TensorRT has no float64 (set truncateDouble to compute it in float32)'] });
    expect(selectConverter(cast, { truncateDouble: true }).ok).toBe(true);
    // Without settings at all.
    expect(selectConverter(relu()).ok).toBe(true);
  });

  test('a static node with only dynamic converters is unsupported, saying so', () => {
    reg('aten.relu.default', impl, { static: false });
    reg('aten.relu.default', impl, { static: false });
    expect(selectConverter(relu())).toEqual({ ok: false, reasons: ['the 2 converter(s) for aten.relu.default support only dynamic shapes'] });
    expect(selectConverter(relu('float32', true)).ok).toBe(true);
  });

  test('candidatesFor a target with no converters is empty', () => {
    expect(candidatesFor(relu())).toEqual([]);
    expect(candidatesFor(relu('float32', true))).toEqual([]);
  });

  test('checkArgs receives the node and the settings', () => {
    const seen: unknown[] = [];
    reg('aten.relu.default', impl, { checkArgs: (node, settings) => (seen.push([node.target, settings]), true) });
    const settings = { truncateDouble: true };
    selectConverter(relu(), settings);
    expect(seen).toEqual([['aten.relu.default', settings]]);
  });
});
