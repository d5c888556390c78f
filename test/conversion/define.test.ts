/**
 * The built-in registration helper (lib/conversion/define.ts): `allOf` keeps the first
 * refusal, `defineConverter` turns a converter's declared shapes and checks into registry
 * candidates. Only the registry is loaded (no built-in converters), so every listing here is
 * what this file registered.
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Node } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import '../../lib/ir/ops';
import { allOf, defineConverter, staticIntArgs } from '../../lib/conversion/define';
import { listConverters, registeredConverters, selectConverter, unregisterConverter, type ConverterImpl } from '../../lib/conversion/registry';

const impl: ConverterImpl = () => [];

function relu(dynamic: boolean, dtype: 'float32' | 'int32' = 'float32'): Node {
  const g = new Graph('t');
  if (dynamic) g.symbols.set('s0', { min: 1, max: 8 });
  const x = g.addInput('x', tensorType(dtype, [dynamic ? sym('s0') : 2, 3]));
  return call(g, 'aten.relu.default', { self: x });
}

const floatsOnly = (node: Node): string | null => (node.outputs[0]!.tensorType.dtype === 'float32' ? null : 'not float32');

afterEach(() => {
  for (const target of ['aten.relu.default', 'aten.gelu.default']) registeredConverters(target).forEach(unregisterConverter);
});

describe('allOf', () => {
  test('accepts when every check accepts (null or true), else returns the first refusal', () => {
    const n = relu(false);
    expect(allOf()(n, {})).toBe(true);
    expect(allOf(() => null, () => true, undefined)(n, {})).toBe(true);
    expect(allOf(() => null, () => 'first', () => 'second')(n, {})).toBe('first');
    expect(allOf((_n, s) => (s.truncateDouble ? 'settings seen' : null))(n, { truncateDouble: true })).toBe('settings seen');
  });
});

describe('defineConverter', () => {
  test('static by default; no checks means the listing says so', () => {
    defineConverter(['aten.relu.default', 'aten.gelu.default'], impl);
    expect(listConverters()).toEqual([
      { target: 'aten.gelu.default', name: 'aten.gelu.default', dynamic: false, static: true, priority: 0, checksArgs: false },
      { target: 'aten.relu.default', name: 'aten.relu.default', dynamic: false, static: true, priority: 0, checksArgs: false },
    ]);
    expect(selectConverter(relu(true))).toEqual({ ok: false, reasons: ['the 1 converter(s) for aten.relu.default support only static shapes'] });
  });

  test('dynamic: true adds a dynamic-only twin, guarded by staticIntArgs, then the extra checks, then its own', () => {
    defineConverter('aten.relu.default', impl, { checks: [floatsOnly], dynamic: [() => 'extra refusal'], priority: 3 });
    expect(listConverters().map((l) => [l.name, l.static, l.dynamic, l.priority])).toEqual([
      ['aten.relu.default', true, false, 3],
      ['aten.relu.default (dynamic)', false, true, 3],
    ]);
    expect(selectConverter(relu(false)).ok).toBe(true);
    expect(selectConverter(relu(false, 'int32'))).toEqual({ ok: false, reasons: ['aten.relu.default: not float32'] });
    expect(selectConverter(relu(true))).toEqual({ ok: false, reasons: ['aten.relu.default (dynamic): extra refusal'] });
  });

  test('the dynamic twin runs the converter own checks after the dynamic ones', () => {
    defineConverter('aten.relu.default', impl, { checks: [floatsOnly], dynamic: true });
    const s = selectConverter(relu(true));
    expect(s.ok && s.converter.name).toBe('aten.relu.default (dynamic)');
    expect(s.ok && s.converter.impl).toBe(impl);
    expect(selectConverter(relu(true, 'int32'))).toEqual({ ok: false, reasons: ['aten.relu.default (dynamic): not float32'] });
  });

  test("shapes: 'dynamic' is named after the target unless named; 'any' is one candidate for both", () => {
    defineConverter('aten.relu.default', impl, { shapes: 'dynamic' });
    defineConverter('aten.gelu.default', impl, { shapes: 'any', name: 'gelu any' });
    expect(listConverters().map((l) => [l.name, l.static, l.dynamic])).toEqual([
      ['gelu any', true, true],
      ['aten.relu.default (dynamic)', false, true],
    ]);
  });

  test('staticIntArgs refuses a SymInt argument, also inside a list', () => {
    const g = new Graph('t');
    g.symbols.set('s0', { min: 1, max: 8 });
    const x = g.addInput('x', tensorType('float32', [sym('s0'), 3]));
    const n = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
    const view = call(g, 'aten.view.default', { self: x, size: [n, 3] });
    expect(staticIntArgs(view)).toMatch(/^argument size holds a run-time SymInt/);
    expect(staticIntArgs(call(g, 'aten.view.default', { self: x, size: [-1, 3] }))).toBeNull();
  });
});
