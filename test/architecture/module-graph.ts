/**
 * Import graphs of the package's modules, and their cycles. The run-time graph is read from
 * the CommonJS output in dist/ rather than lib/ because the compiler erases imports used only
 * as types (with `import type` or without), so only edges that execute at run time remain;
 * ./source-graph.ts reads lib/ itself, types included.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every file under `dir` whose name ends with `extension`, as paths relative to it with forward slashes. */
function filesEndingWith(dir: string, extension: string, base = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesEndingWith(full, extension, base);
    return e.name.endsWith(extension) && !e.name.endsWith('.d.ts') ? [path.relative(base, full).split(path.sep).join('/')] : [];
  });
}

/** How {@link importGraph} reads one kind of module: its file extension and its relative specifiers. */
export interface ModuleSyntax {
  extension: string;
  /** Matches one import; group 1 is a relative specifier. Global. */
  specifier: RegExp;
}

/** The run-time requires of CommonJS output. */
export const COMMONJS: ModuleSyntax = { extension: '.js', specifier: /\brequire\(\s*["'](\.{1,2}\/[^"']*|\.{1,2})["']\s*\)/g };

/** Module → the modules under `dir` it imports, as `syntax` spells imports; a folder specifier resolves to its index. */
export function importGraph(dir: string, syntax: ModuleSyntax): Map<string, string[]> {
  const modules = new Set(filesEndingWith(dir, syntax.extension));
  const graph = new Map<string, string[]>();
  for (const m of [...modules].sort()) {
    const source = fs.readFileSync(path.join(dir, m), 'utf8');
    const deps = new Set<string>();
    for (const match of source.matchAll(syntax.specifier)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(m), match[1]!));
      const dep = [target, `${target}${syntax.extension}`, `${target}/index${syntax.extension}`].find((c) => modules.has(c));
      if (dep !== undefined) deps.add(dep);
    }
    graph.set(m, [...deps].sort());
  }
  return graph;
}

/** Module → the package modules it requires, for every module under `distDir`. */
export function runtimeModuleGraph(distDir: string): Map<string, string[]> {
  return importGraph(distDir, COMMONJS);
}

/**
 * The import cycles of `graph`: one per strongly connected component with more than one
 * module (or a module requiring itself), each given as a closed path of modules starting at
 * its alphabetically first module.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so that a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const deps = graph.get(frame.node) ?? [];
      if (frame.i < deps.length) {
        const dep = deps[frame.i++]!;
        if (!index.has(dep)) {
          index.set(dep, next);
          low.set(dep, next++);
          stack.push(dep);
          onStack.add(dep);
          work.push({ node: dep, i: 0 });
        } else if (onStack.has(dep)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(dep)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let m: string;
        do {
          m = stack.pop()!;
          onStack.delete(m);
          component.push(m);
        } while (m !== frame.node);
        const selfLoop = (graph.get(m) ?? []).includes(m);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  return components.map((c) => cyclePath(graph, new Set(c), c[0]!)).sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A shortest closed path from `start` back to itself inside `component` (breadth first). */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const m = queue.shift()!;
    for (const dep of graph.get(m) ?? []) {
      if (!component.has(dep)) continue;
      if (dep === start) {
        const path = [start];
        for (let at = m; at !== start; at = previous.get(at)!) path.push(at);
        return [start, ...path.slice(1).reverse(), start];
      }
      if (!previous.has(dep)) {
        previous.set(dep, m);
        queue.push(dep);
      }
    }
  }
  return [start, start];
}
