/**
 * Prints a graph the way torch.fx prints one: a signature, one line per node, a return.
 */
import { Value, formatType, type Arg, type Graph, type Node } from './graph';

function formatArg(a: Arg): string {
  if (a instanceof Value) return `%${a.name}`;
  if (Array.isArray(a)) return `[${a.map(formatArg).join(', ')}]`;
  if (typeof a === 'string') return JSON.stringify(a);
  return String(a);
}

function formatNode(node: Node): string {
  const outs = node.outputs.map((v) => `%${v.name}: ${formatType(v.type)}`).join(', ');
  if (node.kind === 'constant') return `${outs} = constant[${node.origin ?? 'constant'}]()`;
  const args = Object.entries(node.args)
    .map(([k, v]) => `${k}=${formatArg(v)}`)
    .join(', ');
  return `${outs} = ${node.target}(${args})`;
}

export function printGraph(graph: Graph): string {
  const lines: string[] = [];
  const inputs = graph.inputs.map((v) => `%${v.name}: ${formatType(v.type)}`).join(', ');
  lines.push(`graph ${graph.name}(${inputs}):`);
  for (const node of graph.nodes) {
    if (node.kind !== 'placeholder') lines.push(`  ${formatNode(node)}`);
  }
  const outs = graph.outputs.map((v, i) => {
    const name = graph.outputNames[i];
    return name !== undefined && name !== v.name ? `${name}=%${v.name}` : `%${v.name}`;
  });
  lines.push(`  return (${outs.join(', ')})`);
  if (graph.symbols.size > 0) {
    const syms = [...graph.symbols].map(([s, r]) => `${s} ∈ [${r.min}, ${r.max === Infinity ? '∞' : r.max}]`);
    lines.push(`  symbols: ${syms.join(', ')}`);
  }
  return lines.join('\n');
}
