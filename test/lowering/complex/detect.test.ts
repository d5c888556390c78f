/**
 * Complex subgraph detection on hand-built graphs: backward walks from view_as_real anchors
 * over complex call nodes, merging when subgraphs share nodes (the RFC's Llama example:
 * the freqs view feeds both q and k), the values that never reach a view_as_real, and the
 * complex input/output indices.
 */
import { Graph, tensorType, type Node } from '../../../lib/ir/graph';
import {
  ComplexSubgraphDetector,
  findComplexIndices,
  findComplexOpSubgraphs,
  formatComplexSubgraph,
  type ComplexSubgraph,
} from '../../../lib/lowering/complex';
import { builder, rotaryGraph } from './helpers';

const names = (ns: readonly Node[]): string[] => ns.map((n) => n.name);
const summary = (s: ComplexSubgraph): Record<string, string[]> => ({
  anchors: names(s.anchorNodes),
  subgraph: names(s.subgraphNodes),
  inputs: names(s.inputNodes),
  outputs: s.outputs.map((v) => v.name),
});

describe('findComplexOpSubgraphs', () => {
  test('the Llama rotary: q and k share the freqs view, so their anchors form one subgraph', () => {
    const subgraphs = findComplexOpSubgraphs(rotaryGraph());
    expect(subgraphs.map(summary)).toEqual([
      {
        anchors: ['view_as_real', 'view_as_real_k'],
        subgraph: ['view_as_complex', 'view_as_complex_k', 'freqs_view', 'mul', 'mul_k'],
        inputs: ['freqs_cis', 'reshape', 'reshape_k'],
        outputs: [],
      },
    ]);
    expect(formatComplexSubgraph(subgraphs[0]!)).toBe(
      'ComplexSubgraph(anchors=[view_as_real, view_as_real_k], subgraph=[view_as_complex, view_as_complex_k, freqs_view, mul, mul_k], inputs=[freqs_cis, reshape, reshape_k])',
    );
  });

  test('layers with their own freqs views stay separate subgraphs, sharing only the input node', () => {
    const subgraphs = findComplexOpSubgraphs(rotaryGraph({ layers: 2 }));
    expect(subgraphs.map(summary)).toEqual([
      {
        anchors: ['view_as_real', 'view_as_real_k'],
        subgraph: ['view_as_complex', 'view_as_complex_k', 'freqs_view', 'mul', 'mul_k'],
        inputs: ['freqs_cis', 'reshape', 'reshape_k'],
        outputs: [],
      },
      {
        anchors: ['view_as_real_1', 'view_as_real_k_1'],
        subgraph: ['view_as_complex_1', 'view_as_complex_k_1', 'freqs_view_1', 'mul_1', 'mul_k_1'],
        inputs: ['freqs_cis', 'reshape_1', 'reshape_k_1'],
        outputs: [],
      },
    ]);
  });

  test('subgraphFromAnchor walks from one anchor alone (no merging)', () => {
    const g = rotaryGraph();
    const anchor = g.nodes.find((n) => n.name === 'view_as_real_k')!;
    expect(summary(new ComplexSubgraphDetector().subgraphFromAnchor(anchor))).toEqual({
      anchors: ['view_as_real_k'],
      subgraph: ['view_as_complex_k', 'freqs_view', 'mul_k'],
      inputs: ['freqs_cis', 'reshape_k'],
      outputs: [],
    });
  });

  test('the anchor may be another target or a predicate', () => {
    const g = new Graph('g');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const w = op('aten.mul.Tensor', { self: z, other: z }, 'sq');
    const a = op('aten.abs.default', { self: w }, 'mag');
    const r = op('aten.real.default', { self: w }, 're');
    g.setOutputs([a, r]);
    expect(findComplexOpSubgraphs(g, 'aten.abs.default').map(summary)).toEqual([{ anchors: ['mag'], subgraph: ['sq'], inputs: ['z'], outputs: [] }]);
    expect(findComplexOpSubgraphs(g, (n) => n.target === 'aten.real.default' || n.target === 'aten.abs.default').map(summary)).toEqual([
      { anchors: ['mag', 're'], subgraph: ['sq'], inputs: ['z'], outputs: [] },
    ]);
    // A view_as_real that reads a graph input directly: no subgraph node, the input is its input node.
    const h = new Graph('h');
    const zz = h.addInput('zz', tensorType('complex64', [2]));
    h.setOutputs([builder(h)('aten.view_as_real.default', { self: zz }, 'vr')]);
    expect(findComplexOpSubgraphs(h).map(summary)).toEqual([{ anchors: ['vr'], subgraph: [], inputs: ['zz'], outputs: [] }]);
  });
});

describe('complex values that never reach a view_as_real', () => {
  function mixed(): Graph {
    const g = new Graph('mixed');
    const op = builder(g);
    const x = g.addInput('x', tensorType('float32', [4, 2]));
    const f = g.addInput('f', tensorType('complex64', [4]));
    const c = op('aten.view_as_complex.default', { self: x }, 'c');
    const p = op('aten.mul.Tensor', { self: c, other: f }, 'p');
    const real = op('aten.view_as_real.default', { self: p }, 'vr');
    const mag = op('aten.abs.default', { self: p }, 'mag');
    const q = op('aten.add.Tensor', { self: f, other: f }, 'q');
    const ph = op('aten.angle.default', { self: q }, 'ph');
    const conj = op('aten._conj.default', { self: f }, 'cj');
    const dead = op('aten.neg.default', { self: f }, 'dead');
    void dead;
    g.setOutputs([real, mag, ph, conj]);
    return g;
  }

  test('findUnanchoredComplex: abs/angle anchors and complex graph outputs', () => {
    const d = new ComplexSubgraphDetector();
    const g = mixed();
    expect(d.findUnanchoredComplex(g).map(summary)).toEqual([
      { anchors: ['mag'], subgraph: ['c', 'p'], inputs: ['x', 'f'], outputs: [] },
      { anchors: ['ph'], subgraph: ['q'], inputs: ['f'], outputs: [] },
      { anchors: [], subgraph: ['cj'], inputs: ['f'], outputs: ['cj'] },
    ]);
    expect(d.findComplexOpSubgraphs(g).map(summary)).toEqual([{ anchors: ['vr'], subgraph: ['c', 'p'], inputs: ['x', 'f'], outputs: [] }]);
  });

  test('findAllComplexSubgraphs merges view_as_real and abs anchors that share nodes; dead nodes are left out', () => {
    const all = new ComplexSubgraphDetector().findAllComplexSubgraphs(mixed());
    expect(all.map(summary)).toEqual([
      { anchors: ['vr', 'mag'], subgraph: ['c', 'p'], inputs: ['x', 'f'], outputs: [] },
      { anchors: ['ph'], subgraph: ['q'], inputs: ['f'], outputs: [] },
      { anchors: [], subgraph: ['cj'], inputs: ['f'], outputs: ['cj'] },
    ]);
    expect(all.flatMap((s) => names(s.subgraphNodes))).not.toContain('dead');
  });

  test('a complex input passed straight to an output is its own subgraph', () => {
    const g = new Graph('pass');
    const z = g.addInput('z', tensorType('complex128', [2]));
    g.setOutputs([z]);
    expect(new ComplexSubgraphDetector().findAllComplexSubgraphs(g).map(summary)).toEqual([{ anchors: [], subgraph: [], inputs: ['z'], outputs: ['z'] }]);
  });
});

test('findComplexIndices names the complex inputs and outputs by position', () => {
  const g = new Graph('g');
  const op = builder(g);
  const a = g.addInput('a', tensorType('float32', [2]));
  const b = g.addInput('b', tensorType('complex64', [2]));
  const c = g.addInput('c', tensorType('complex128', [2]));
  g.setOutputs([a, op('aten.mul.Tensor', { self: b, other: c }), op('aten.abs.default', { self: b })]);
  expect(findComplexIndices(g)).toEqual({ inputs: [1, 2], outputs: [1] });
});

describe('anchors that also read real values, predicates, and the order of subgraphs', () => {
  /** z → p = z·z → eq(p, r) with a real r: the eq reads a complex and a real value and produces none. */
  function comparison(): { g: Graph; eq: Node } {
    const g = new Graph('cmp');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const r = g.addInput('r', tensorType('float32', [3]));
    const p = op('aten.mul.Tensor', { self: z, other: z }, 'p');
    const e = op('aten.eq.Tensor', { self: p, other: r }, 'e');
    g.setOutputs([e]);
    return { g, eq: e.producer };
  }

  test('a boundary reading complex and real values anchors a subgraph; its real input is not an input node', () => {
    const { g, eq } = comparison();
    const d = new ComplexSubgraphDetector();
    expect(d.isBoundary(eq)).toBe(true);
    expect(d.findAllComplexSubgraphs(g).map(summary)).toEqual([{ anchors: ['e'], subgraph: ['p'], inputs: ['z'], outputs: [] }]);
    const alone = d.subgraphFromAnchor(eq);
    expect(summary(alone)).toEqual({ anchors: ['e'], subgraph: ['p'], inputs: ['z'], outputs: [] });
    // toEqual would take [undefined] for []: the outputs list is checked by its length.
    expect(alone.outputs).toHaveLength(0);
  });

  test('findUnanchoredComplex with a predicate leaves out the anchors it matches', () => {
    const g = new Graph('pred');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const p = op('aten.mul.Tensor', { self: z, other: z }, 'p');
    g.setOutputs([op('aten.view_as_real.default', { self: p }, 'vr'), op('aten.abs.default', { self: z }, 'mag')]);
    const d = new ComplexSubgraphDetector();
    expect(d.findUnanchoredComplex(g, (n) => n.target === 'aten.view_as_real.default').map(summary)).toEqual([{ anchors: ['mag'], subgraph: [], inputs: ['z'], outputs: [] }]);
    expect(d.findUnanchoredComplex(g, (n) => n.target === 'aten.abs.default').map(summary)).toEqual([{ anchors: ['vr'], subgraph: ['p'], inputs: ['z'], outputs: [] }]);
  });

  test('subgraphs come in graph order of their first node, also when output seeds come before anchors in the graph', () => {
    // Graph order: z, w, cj (conj of z), p, mag (abs of p), neg (of cj).
    // The cj/neg group is seeded by the complex output neg (seeds: anchors first), and spans positions 2..5;
    // the mag group spans 3..4; the pass-through output w is at position 1.
    const g = new Graph('order');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const w = g.addInput('w', tensorType('complex64', [3]));
    const cj = op('aten._conj.default', { self: z }, 'cj');
    const p = op('aten.mul.Tensor', { self: z, other: z }, 'p');
    const mag = op('aten.abs.default', { self: p }, 'mag');
    const ng = op('aten.neg.default', { self: cj }, 'ng');
    g.setOutputs([mag, ng, w]);
    expect(new ComplexSubgraphDetector().findAllComplexSubgraphs(g).map(summary)).toEqual([
      { anchors: [], subgraph: [], inputs: ['w'], outputs: ['w'] },
      { anchors: [], subgraph: ['cj', 'ng'], inputs: ['z'], outputs: ['ng'] },
      { anchors: ['mag'], subgraph: ['p'], inputs: ['z'], outputs: [] },
    ]);
  });

  test('nodes are listed in graph order, not creation order', () => {
    // b is created before a but placed after it (both read z only, so either order is valid).
    const g = new Graph('moved');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const b = op('aten.neg.default', { self: z }, 'b');
    const a = op('aten.mul.Tensor', { self: z, other: z }, 'a');
    const s = op('aten.add.Tensor', { self: a, other: b, alpha: 1 }, 's');
    g.setOutputs([op('aten.view_as_real.default', { self: s }, 'vr')]);
    const [bNode, aNode] = [b.producer, a.producer];
    g.nodes.splice(g.nodes.indexOf(bNode), 1);
    g.nodes.splice(g.nodes.indexOf(aNode) + 1, 0, bNode);
    expect(g.nodes.map((n) => n.name)).toEqual(['z', 'a', 'b', 's', 'vr']);
    expect(findComplexOpSubgraphs(g).map(summary)).toEqual([{ anchors: ['vr'], subgraph: ['a', 'b', 's'], inputs: ['z'], outputs: [] }]);
  });

  test('formatComplexSubgraph lists the complex outputs a subgraph computes', () => {
    const g = new Graph('outs');
    const op = builder(g);
    const z = g.addInput('z', tensorType('complex64', [3]));
    const n = op('aten.neg.default', { self: z }, 'n');
    const m = op('aten.mul.Tensor', { self: n, other: z }, 'm');
    g.setOutputs([n, m]);
    const [s] = new ComplexSubgraphDetector().findAllComplexSubgraphs(g);
    expect(formatComplexSubgraph(s!)).toBe('ComplexSubgraph(anchors=[], subgraph=[n, m], inputs=[z], outputs=[n, m])');
  });
});
