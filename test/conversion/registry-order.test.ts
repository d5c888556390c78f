/**
 * The registry's selection order as a property (a second reference next to registry.test.ts's
 * hand-picked cases): for random sets of candidates (static-only, dynamic-only or both; random
 * priorities; checkArgs that accept or refuse), on a static and on a dynamic node, the
 * candidates come strictest first (the ones supporting only this kind of shapes), then by
 * priority, then by registration, and selection takes the first that accepts, with every
 * earlier refusal as a reason. The expected order is computed here by brute force (a
 * stable sort on an explicit key), not by the registry's comparator.
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Node } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import '../../lib/ir/ops';
import { candidatesFor, listConverters, registerConverter, selectConverter, unregisterConverter, type ConverterCandidate } from '../../lib/conversion/registry';
import { Random } from '../helpers/random';

const rng = new Random(0x5e1ec7);

function reluNode(dynamic: boolean): Node {
  const g = new Graph('t');
  if (dynamic) g.symbols.set('s0', { min: 1, max: 8 });
  const x = g.addInput('x', tensorType('float32', [dynamic ? sym('s0') : 2, 3]));
  return call(g, 'aten.relu.default', { self: x });
}

interface Spec {
  name: string;
  kind: 'static' | 'dynamic' | 'both';
  priority: number;
  /** undefined: no checkArgs; true: accepts; a string: refuses with it. */
  verdict: true | string | undefined;
}

function randomSpecs(): Spec[] {
  const n = rng.int(1, 7);
  return Array.from({ length: n }, (_, i) => ({
    name: `c${i}`,
    kind: (['static', 'dynamic', 'both'] as const)[rng.int(0, 2)]!,
    priority: rng.int(-2, 2),
    verdict: [undefined, true, `refused by c${i}`, `refused by c${i}`][rng.int(0, 3)] as Spec['verdict'],
  }));
}

/** The expected candidate names for a node: fitting ones, sorted by (not strict, −priority, registration). */
function expectedOrder(specs: Spec[], dynamic: boolean): Spec[] {
  const fits = specs.filter((s) => s.kind === 'both' || s.kind === (dynamic ? 'dynamic' : 'static'));
  const key = (s: Spec): [number, number, number] => [s.kind === 'both' ? 1 : 0, -s.priority, specs.indexOf(s)];
  return [...fits].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
}

describe('selection order, property', () => {
  const registered: ConverterCandidate[] = [];
  afterEach(() => registered.splice(0).forEach(unregisterConverter));

  test('300 random candidate sets: order, the chosen converter and the reasons', () => {
    for (let trial = 0; trial < 300; trial++) {
      const specs = randomSpecs();
      for (const s of specs) {
        registered.push(
          registerConverter('aten.relu.default', () => [], {
            name: s.name,
            static: s.kind !== 'dynamic',
            dynamic: s.kind !== 'static',
            priority: s.priority,
            checkArgs: s.verdict === undefined ? undefined : () => s.verdict!,
          }),
        );
      }
      const label = `trial ${trial}: ${JSON.stringify(specs)}`;
      for (const dynamic of [false, true]) {
        const node = reluNode(dynamic);
        const order = expectedOrder(specs, dynamic);
        expect([label, dynamic, candidatesFor(node).map((c) => c.name)]).toEqual([label, dynamic, order.map((s) => s.name)]);
        const chosen = order.find((s) => typeof s.verdict !== 'string');
        const selection = selectConverter(node);
        if (chosen !== undefined) {
          expect([label, dynamic, selection]).toEqual([label, dynamic, { ok: true, converter: registered[specs.indexOf(chosen)] }]);
        } else {
          const reasons =
            order.length === 0
              ? [`the ${specs.length} converter(s) for aten.relu.default support only ${dynamic ? 'static' : 'dynamic'} shapes`]
              : order.map((s) => `${s.name}: ${String(s.verdict)}`);
          expect([label, dynamic, selection]).toEqual([label, dynamic, { ok: false, reasons }]);
        }
      }
      // Listings ignore strictness: priority, then registration.
      const listed = listConverters().map((l) => l.name);
      const byPriority = [...specs].sort((a, b) => b.priority - a.priority || specs.indexOf(a) - specs.indexOf(b)).map((s) => s.name);
      expect([label, listed]).toEqual([label, byPriority]);
      registered.splice(0).forEach(unregisterConverter);
    }
  });
});
