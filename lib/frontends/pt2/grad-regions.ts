/**
 * `torch.ops.higher_order.wrap_with_set_grad_enabled(enabled, subgraph, *args)`: torch.export
 * wraps a region that ran under `torch.no_grad()` / `torch.enable_grad()` (Hugging Face GPT-2
 * and Llama exports have one around the rotary embedding) in this higher-order op. It is no
 * control flow: the region runs once, and grad mode means nothing to inference. So before
 * import the region's nodes take the op's place: its values renamed apart from the outer
 * graph's, its inputs bound to the op's arguments, its outputs to the op's outputs.
 */
import { BadModelError } from '../../errors';
import type { GraphJson, NodeJson } from './serde';

export const WRAP_WITH_SET_GRAD_ENABLED = 'torch.ops.higher_order.wrap_with_set_grad_enabled';

/** How deep regions may nest (a file nesting deeper is refused, not recursed into without end). */
const MAX_NESTING = 32;

type Json = unknown;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The tensor names an argument or output holds in order (`as_tensor`, `as_tensors`), or null for another kind. */
function tensorNames(arg: unknown): string[] | null {
  if (!isObject(arg)) return null;
  const one = arg.as_tensor;
  if (isObject(one) && typeof one.name === 'string') return [one.name];
  const many = arg.as_tensors;
  if (Array.isArray(many) && many.every((t) => isObject(t) && typeof t.name === 'string')) return many.map((t) => (t as { name: string }).name);
  return null;
}

/** `x` with every value reference (`{name}` objects of one key, `as_name` strings) renamed through `rename`. */
function renamed(x: Json, rename: (name: string) => string, depth = 0): Json {
  if (depth > 200) throw new BadModelError('a wrap_with_set_grad_enabled region nests its arguments too deeply');
  if (Array.isArray(x)) return x.map((e) => renamed(e, rename, depth + 1));
  if (!isObject(x)) return x;
  const keys = Object.keys(x);
  if (keys.length === 1 && typeof x.name === 'string') return { name: rename(x.name) };
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = x[k];
    if (k === 'as_name' && typeof v === 'string') out[k] = rename(v);
    else Object.defineProperty(out, k, { value: renamed(v, rename, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Replaces each region node of `graph` by the region's nodes (recursively), in place. `source` names the file in errors. */
export function inlineGradRegions(graph: GraphJson, source: string, depth = 0): void {
  if (!graph.nodes.some((n) => n?.target === WRAP_WITH_SET_GRAD_ENABLED)) return;
  if (depth >= MAX_NESTING) throw new BadModelError(`${source}: wrap_with_set_grad_enabled regions nest more than ${MAX_NESTING} deep`);
  const taken = new Set<string>([...Object.keys(graph.tensor_values ?? {}), ...Object.keys(graph.sym_int_values ?? {})]);
  for (const n of graph.nodes) for (const o of n?.outputs ?? []) for (const name of tensorNames(o) ?? []) taken.add(name);
  const fresh = (base: string): string => {
    let name = base;
    for (let i = 1; taken.has(name); i++) name = `${base}_${i}`;
    taken.add(name);
    return name;
  };
  const nodes: NodeJson[] = [];
  graph.nodes.forEach((node, index) => {
    if (node?.target !== WRAP_WITH_SET_GRAD_ENABLED) {
      nodes.push(node);
      return;
    }
    const where = `${source}: pt2 node "${node.name ?? index}" (higher_order.wrap_with_set_grad_enabled)`;
    const bad = (why: string): never => {
      throw new BadModelError(`${where}: ${why}`, { details: { node: node.name ?? index } });
    };
    const inputs = Array.isArray(node.inputs) ? node.inputs : bad('its inputs are not a list');
    const graphArg = inputs[1]?.arg;
    const sub = isObject(graphArg) && isObject(graphArg.as_graph) ? (graphArg.as_graph.graph as unknown as GraphJson | undefined) : undefined;
    if (!isObject(sub) || !Array.isArray(sub.nodes) || !Array.isArray(sub.inputs) || !Array.isArray(sub.outputs)) return bad('its second argument is not a subgraph');
    inlineGradRegions(sub, source, depth + 1);
    const args = inputs.slice(2).map((a, i) => tensorNames(a?.arg) ?? bad(`argument ${i + 2} is not a tensor`));
    const params = sub.inputs.map((p, i) => tensorNames(p) ?? bad(`subgraph input ${i} is not a tensor`));
    if (args.length !== params.length || args.some((a, i) => a.length !== 1 || params[i]!.length !== 1)) bad(`passes ${args.length} tensors to a subgraph of ${params.length} inputs`);
    const results = sub.outputs.flatMap((o, i) => tensorNames(o) ?? bad(`subgraph output ${i} is not a tensor`));
    const outs = (Array.isArray(node.outputs) ? node.outputs : bad('its outputs are not a list')).flatMap((o, i) => tensorNames(o) ?? bad(`output ${i} is not a tensor`));
    if (outs.length !== results.length) bad(`names ${outs.length} outputs, its subgraph gives ${results.length}`);

    const names = new Map<string, string>();
    params.forEach((p, i) => names.set(p[0]!, args[i]![0]!));
    // A subgraph result computed inside the region takes the output's name; one that is an input passes through a copy.
    const copies: NodeJson[] = [];
    results.forEach((r, i) => {
      if (names.has(r) || results.indexOf(r) !== i) {
        copies.push({ target: 'torch.ops.aten.clone.default', inputs: [{ name: 'self', arg: { as_tensor: { name: r } } }], outputs: [{ as_tensor: { name: outs[i]! } }], name: outs[i]! });
      } else {
        names.set(r, outs[i]!);
      }
    });
    const rename = (name: string): string => {
      let n = names.get(name);
      if (n === undefined) names.set(name, (n = fresh(name)));
      return n;
    };
    for (const n of sub.nodes) nodes.push(renamed(n, rename) as NodeJson);
    for (const c of copies) nodes.push(renamed(c, (name) => (outs.includes(name) ? name : rename(name))) as NodeJson);
    // The region's value records join the outer graph's under their new names (the outer records of the outputs stay).
    for (const [key, table] of [['tensor_values', sub.tensor_values], ['sym_int_values', sub.sym_int_values]] as const) {
      if (!isObject(table)) continue;
      const into = ((graph as unknown as Record<string, Record<string, unknown>>)[key] ??= {});
      for (const [name, v] of Object.entries(table)) {
        const n = names.get(name);
        if (n !== undefined && !Object.hasOwn(into, n)) Object.defineProperty(into, n, { value: v, enumerable: true, writable: true, configurable: true });
      }
    }
  });
  graph.nodes = nodes;
}
