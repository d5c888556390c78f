/**
 * Detection of complex subgraphs (docs/complex-numbers.md, "Detection"): which nodes compute complex
 * values, where those values leave complex arithmetic, and what they read from outside.
 *
 * A complex subgraph is found by a backward walk from an anchor, a node that reads complex
 * values and produces none (`aten.view_as_real`, the anchor of Torch-TensorRT's complex lowering; also `real`, `imag`,
 * `abs`, `angle`, `sym_size`...). The walk goes over call nodes with a complex output and
 * stops at anything else (graph inputs, constants, real-valued producers), which become the
 * subgraph's input nodes. Subgraphs that share nodes are merged: in Llama the reshaped
 * `freqs_cis` feeds the rotations of both q and k, so both `view_as_real` anchors end up in
 * one subgraph. Complex graph outputs play the role of anchors too, so every live complex
 * value belongs to exactly one subgraph (dead ones are not looked at).
 */
import { isComplex } from '../../ir/dtype';
import type { Graph, Node, Value } from '../../ir/graph';

/** One connected piece of complex arithmetic (Torch-TensorRT's ComplexSubGraphInfo). */
export interface ComplexSubgraph {
  /** The nodes the backward walk started from, in graph order: they read complex values and produce none. */
  readonly anchorNodes: Node[];
  /** Call nodes with a complex output reached from the anchors (or the outputs), in graph order. */
  readonly subgraphNodes: Node[];
  /**
   * Nodes outside the subgraph whose outputs it reads, in graph order: complex placeholders
   * and constants, and the producers of real values fed into it (`view_as_complex`'s input).
   */
  readonly inputNodes: Node[];
  /** Complex graph outputs this subgraph computes or passes through (anchors of their own). */
  readonly outputs: Value[];
}

/** Which graph inputs and outputs are complex, by position (the runtime converts those). */
export interface ComplexIndices {
  inputs: number[];
  outputs: number[];
}

/** True for a complex tensor value. */
export function isComplexValue(v: Value): boolean {
  return v.type.kind === 'tensor' && isComplex(v.type.dtype);
}

/**
 * The positions of complex graph inputs and outputs (Torch-TensorRT's find_complex_indices), read
 * from the graph before the complex lowering pass rewrites them into real carriers.
 */
export function findComplexIndices(graph: Graph): ComplexIndices {
  const indices = (values: readonly Value[]): number[] => values.flatMap((v, i) => (isComplexValue(v) ? [i] : []));
  return { inputs: indices(graph.inputs), outputs: indices(graph.outputs) };
}

/** A filter for anchors: a target name, or a predicate on nodes. */
export type AnchorFilter = string | ((node: Node) => boolean);

/** Finds complex subgraphs by backward walks from anchor nodes (see the file comment). */
export class ComplexSubgraphDetector {
  private position = new Map<Node, number>();

  /** True when the node's outputs include a complex tensor. */
  isComplexNode(node: Node): boolean {
    return node.outputs.some(isComplexValue);
  }

  /** True when the node reads a complex tensor. */
  readsComplex(node: Node): boolean {
    return node.inputValues().some(isComplexValue);
  }

  /** The walk goes through a node when it is a call with a complex output. */
  includeInSubgraph(node: Node): boolean {
    return node.kind === 'call' && this.isComplexNode(node);
  }

  /**
   * A boundary node: a call that reads complex values and produces none, i.e. where complex
   * values turn real (`view_as_real`, `real`, `abs`, `sym_size`...).
   */
  isBoundary(node: Node): boolean {
    return node.kind === 'call' && !this.isComplexNode(node) && this.readsComplex(node);
  }

  /**
   * The subgraph one anchor reaches by itself (no merging): a backward depth-first walk over
   * complex call nodes from the anchor's complex inputs.
   */
  subgraphFromAnchor(anchor: Node): ComplexSubgraph {
    const nodes = new Set<Node>();
    const inputs = new Set<Node>();
    const stack: Value[] = anchor.inputValues().filter(isComplexValue);
    while (stack.length > 0) {
      const producer = stack.pop()!.producer;
      if (nodes.has(producer) || inputs.has(producer)) continue;
      if (!this.includeInSubgraph(producer)) {
        inputs.add(producer);
        continue;
      }
      nodes.add(producer);
      stack.push(...producer.inputValues());
    }
    return { anchorNodes: [anchor], subgraphNodes: this.ordered(nodes), inputNodes: this.ordered(inputs), outputs: [] };
  }

  /**
   * The complex subgraphs anchored at nodes matching `anchorTarget` (default: every
   * `aten.view_as_real`), subgraphs sharing nodes merged, in graph order of their first anchor.
   */
  findComplexOpSubgraphs(graph: Graph, anchorTarget: AnchorFilter = 'aten.view_as_real.default'): ComplexSubgraph[] {
    const match = typeof anchorTarget === 'string' ? (n: Node): boolean => n.target === anchorTarget : anchorTarget;
    return this.walk(graph, graph.nodes.filter((n) => n.kind === 'call' && match(n) && this.readsComplex(n)), []);
  }

  /**
   * What never reaches a `view_as_real`: the subgraphs anchored at the other boundary nodes
   * (complex ops feeding real ones through `real`, `imag`, `abs`, `angle`, `sym_size`...) and
   * at complex graph outputs. Merged among themselves; a node may also belong to a
   * `view_as_real` subgraph (see {@link findAllComplexSubgraphs} for the merged whole).
   */
  findUnanchoredComplex(graph: Graph, anchorTarget: AnchorFilter = 'aten.view_as_real.default'): ComplexSubgraph[] {
    const match = typeof anchorTarget === 'string' ? (n: Node): boolean => n.target === anchorTarget : anchorTarget;
    const anchors = graph.nodes.filter((n) => this.isBoundary(n) && !match(n));
    return this.walk(graph, anchors, graph.outputs.filter(isComplexValue));
  }

  /**
   * Every complex subgraph of the graph: anchored at every boundary node and every complex
   * graph output, merged where they share nodes. Every live node that reads or produces a
   * complex value is an anchor or a subgraph node of exactly one of them.
   */
  findAllComplexSubgraphs(graph: Graph): ComplexSubgraph[] {
    return this.walk(
      graph,
      graph.nodes.filter((n) => this.isBoundary(n)),
      graph.outputs.filter(isComplexValue),
    );
  }

  /** Graph positions, for listing nodes in graph order. */
  private index(graph: Graph): void {
    this.position = new Map(graph.nodes.map((n, i) => [n, i]));
  }

  private ordered(nodes: Iterable<Node>): Node[] {
    const pos = (n: Node): number => this.position.get(n) ?? n.id;
    return [...nodes].sort((a, b) => pos(a) - pos(b));
  }

  /**
   * Walks back from each anchor (and each complex output value); a walk that reaches a node an
   * earlier walk owns stops there and the two merge (union-find), so the whole is linear in
   * the graph size.
   */
  private walk(graph: Graph, anchors: readonly Node[], outputs: readonly Value[]): ComplexSubgraph[] {
    this.index(graph);
    const parent: number[] = [];
    const find = (i: number): number => {
      while (parent[i] !== i) {
        parent[i] = parent[parent[i]!]!;
        i = parent[i]!;
      }
      return i;
    };
    const union = (a: number, b: number): void => {
      const ra = find(a);
      const rb = find(b);
      if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
    };
    const owner = new Map<Node, number>();
    const seeds: Array<{ anchor: Node | null; output: Value | null; values: Value[] }> = [
      ...anchors.map((a) => ({ anchor: a, output: null, values: a.inputValues().filter(isComplexValue) })),
      ...outputs.map((v) => ({ anchor: null, output: v, values: [v] })),
    ];
    seeds.forEach((seed, i) => {
      parent.push(i);
      const stack = [...seed.values];
      while (stack.length > 0) {
        const producer = stack.pop()!.producer;
        if (!this.includeInSubgraph(producer)) continue;
        const o = owner.get(producer);
        if (o !== undefined) {
          union(i, o);
          continue;
        }
        owner.set(producer, i);
        stack.push(...producer.inputValues());
      }
    });
    // Group by root.
    const groups = new Map<number, { anchors: Node[]; outputs: Value[]; nodes: Node[] }>();
    const group = (i: number): { anchors: Node[]; outputs: Value[]; nodes: Node[] } => {
      const r = find(i);
      let g = groups.get(r);
      if (g === undefined) groups.set(r, (g = { anchors: [], outputs: [], nodes: [] }));
      return g;
    };
    seeds.forEach((seed, i) => {
      const g = group(i);
      if (seed.anchor !== null && !g.anchors.includes(seed.anchor)) g.anchors.push(seed.anchor);
      if (seed.output !== null && !g.outputs.includes(seed.output)) g.outputs.push(seed.output);
    });
    for (const [node, i] of owner) group(i).nodes.push(node);
    const result: Array<{ first: number; subgraph: ComplexSubgraph }> = [];
    for (const g of groups.values()) {
      const members = new Set(g.nodes);
      const inputs = new Set<Node>();
      for (const n of g.nodes) for (const v of n.inputValues()) if (!members.has(v.producer)) inputs.add(v.producer);
      for (const a of g.anchors) for (const v of a.inputValues()) if (isComplexValue(v) && !members.has(v.producer)) inputs.add(v.producer);
      for (const v of g.outputs) if (!members.has(v.producer)) inputs.add(v.producer);
      const subgraph: ComplexSubgraph = {
        anchorNodes: this.ordered(g.anchors),
        subgraphNodes: this.ordered(g.nodes),
        inputNodes: this.ordered(inputs),
        outputs: g.outputs,
      };
      let first = Infinity;
      for (const n of [...subgraph.anchorNodes, ...subgraph.subgraphNodes, ...g.outputs.map((v) => v.producer)]) first = Math.min(first, this.position.get(n) ?? Infinity);
      result.push({ first, subgraph });
    }
    return result.sort((a, b) => a.first - b.first).map((r) => r.subgraph);
  }
}

/** `new ComplexSubgraphDetector().findComplexOpSubgraphs(graph, anchorTarget)`. */
export function findComplexOpSubgraphs(graph: Graph, anchorTarget: AnchorFilter = 'aten.view_as_real.default'): ComplexSubgraph[] {
  return new ComplexSubgraphDetector().findComplexOpSubgraphs(graph, anchorTarget);
}

/** Formats a subgraph the way Torch-TensorRT prints ComplexSubGraphInfo. */
export function formatComplexSubgraph(s: ComplexSubgraph): string {
  const names = (ns: readonly Node[]): string => `[${ns.map((n) => n.name).join(', ')}]`;
  const outs = s.outputs.length > 0 ? `, outputs=[${s.outputs.map((v) => v.name).join(', ')}]` : '';
  return `ComplexSubgraph(anchors=${names(s.anchorNodes)}, subgraph=${names(s.subgraphNodes)}, inputs=${names(s.inputNodes)}${outs})`;
}
