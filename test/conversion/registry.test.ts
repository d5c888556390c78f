/**
 * The converter registry: candidate order, static/dynamic filtering, checkArgs
 * fall-through with every reason collected, forced fallback. Converters are registered here
 * for test purposes only (jest gives this file its own module registry).
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Node } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import '../../lib/ir/ops';
import {
  candidatesFor,
  listConverters,
  registerConverter,
  selectConverter,
  unregisterConverter,
  type ConverterImpl,
} from '../../lib/conversion/registry';

const impl: ConverterImpl = () => [];

function node(target: string, dynamic: boolean, args: (g: Graph) => Record<string, unknown>): Node {
  const g = new Graph('t');
  if (dynamic) g.symbols.set('s0', { min: 1, max: 8 });
  g.addInput('x', tensorType('float32', [dynamic ? sym('s0') : 2, 3]));
  return call(g, target, args(g) as never);
}
const relu = (dynamic = false): Node => node('aten.relu.default', dynamic, (g) => ({ self: g.inputs[0]! }));
const toCopy = (dtype: string): Node => node('aten._to_copy.default', false, (g) => ({ self: g.inputs[0]!, dtype }));

describe('selection order', () => {
  const registered: ReturnType<typeof registerConverter>[] = [];
  afterEach(() => registered.splice(0).forEach(unregisterConverter));
  const reg = (...args: Parameters<typeof registerConverter>): void => void registered.push(registerConverter(...args));

  test('a converter registered with the target alone supports static and dynamic shapes', () => {
    reg('aten.relu.default', impl);
    expect(listConverters()).toEqual([{ target: 'aten.relu.default', name: 'aten.relu.default', dynamic: true, static: true, priority: 0, checksArgs: false }]);
    expect(selectConverter(relu(false)).ok).toBe(true);
    expect(selectConverter(relu(true)).ok).toBe(true);
  });

  test('strictest first: static-only before both for static nodes, dynamic-only before both for dynamic ones', () => {
    reg('aten.relu.default', impl, { name: 'both' });
    reg('aten.relu.default', impl, { name: 'static-only', dynamic: false });
    reg('aten.relu.default', impl, { name: 'dynamic-only', static: false });
    expect(candidatesFor(relu(false)).map((c) => c.name)).toEqual(['static-only', 'both']);
    expect(candidatesFor(relu(true)).map((c) => c.name)).toEqual(['dynamic-only', 'both']);
  });

  test('higher priority first within the same strictness, then registration order', () => {
    reg('aten.relu.default', impl, { name: 'a' });
    reg('aten.relu.default', impl, { name: 'b', priority: 5 });
    reg('aten.relu.default', impl, { name: 'c' });
    expect(candidatesFor(relu()).map((c) => c.name)).toEqual(['b', 'a', 'c']);
    const select = selectConverter(relu());
    expect(select.ok && select.converter.name).toBe('b');
  });

  test('a dynamic node with only static converters is unsupported, saying why', () => {
    reg('aten.relu.default', impl, { name: 'static', dynamic: false });
    const s = selectConverter(relu(true));
    expect(s).toEqual({ ok: false, reasons: ['the 1 converter(s) for aten.relu.default support only static shapes'] });
  });

  test("checkArgs falls through to the next candidate (_to_copy to int64 refused by one, accepted by another)", () => {
    reg('aten._to_copy.default', impl, {
      name: 'float-casts',
      priority: 1,
      checkArgs: (n) => (n.args.dtype === 'int64' ? 'casts to int64 are not handled by this converter' : true),
    });
    reg('aten._to_copy.default', impl, { name: 'int-casts', checkArgs: (n) => (n.args.dtype === 'int64' ? true : 'only int64') });
    const f = selectConverter(toCopy('float16'));
    expect(f.ok && f.converter.name).toBe('float-casts');
    const i = selectConverter(toCopy('int64'));
    expect(i.ok && i.converter.name).toBe('int-casts');
  });

  test('when every candidate refuses, every reason is collected', () => {
    reg('aten._to_copy.default', impl, { name: 'one', checkArgs: () => 'reason one' });
    reg('aten._to_copy.default', impl, { name: 'two', checkArgs: () => 'reason two' });
    expect(selectConverter(toCopy('int64'))).toEqual({ ok: false, reasons: ['one: reason one', 'two: reason two'] });
  });

  test('torchExecutedOps forces fallback by target or node name', () => {
    reg('aten.relu.default', impl);
    const n = relu();
    expect(selectConverter(n, { torchExecutedOps: new Set(['aten.relu.default']) })).toEqual({
      ok: false,
      reasons: ['forced to a fallback segment by torchExecutedOps'],
    });
    expect(selectConverter(n, { torchExecutedOps: new Set([n.name]) }).ok).toBe(false);
    expect(selectConverter(n, { torchExecutedOps: new Set(['aten.gelu.default']) }).ok).toBe(true);
  });

  test('an op without converters, and types TensorRT cannot hold, are reasons', () => {
    expect(selectConverter(relu())).toEqual({ ok: false, reasons: ['no converter is registered for aten.relu.default'] });
    reg('aten._to_copy.default', impl);
    const s = selectConverter(toCopy('float64'));
    expect(s.ok).toBe(false);
    expect(!s.ok && s.reasons[0]).toMatch(/float64: TensorRT has no float64/);
    expect(selectConverter(toCopy('float64'), { truncateDouble: true }).ok).toBe(true);
  });

  test('a converter supporting neither static nor dynamic shapes is refused at registration', () => {
    expect(() => registerConverter('aten.relu.default', impl, { static: false, dynamic: false })).toThrow(/neither static nor dynamic/);
  });
});
