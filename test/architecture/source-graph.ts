/**
 * The source module graph of lib/: which modules each `.ts` file imports, type-only imports
 * included (`import type`, `export ... from`, `import('...')` types). The run-time graph
 * (./module-graph.ts) misses those, but a type-level circle ties modules together just as
 * firmly for a reader: neither can be understood, moved or tested without the other.
 */
import { importGraph, type ModuleSyntax } from './module-graph';

/** Relative specifiers in `from '…'`, side-effect `import '…'`, `import('…')` and `require('…')`. */
const TYPESCRIPT: ModuleSyntax = { extension: '.ts', specifier: /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\(\s*)'(\.{1,2}(?:\/[^']*)?)'/g };

/** Module → the lib/ modules it imports (values and types), for every module under `libDir`. */
export function sourceModuleGraph(libDir: string): Map<string, string[]> {
  return importGraph(libDir, TYPESCRIPT);
}

/**
 * The rooms of lib/, lowest first: a module may import its own room and the rooms of lower
 * layers, never a room of its own layer or above. A room is a top-level folder or file of
 * lib/ (without `.ts`). docs/architecture.md states the same rule in words.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['errors'],
  ['native', 'logger', 'io'],
  ['version'],
  ['ir'],
  ['kernels'],
  ['interpreter', 'network'],
  ['lowering', 'conversion', 'devices', 'tensorrt'],
  ['frontends', 'partitioning'],
  ['legalization'],
  ['engine'],
  ['gpu'],
  ['collectives'],
  ['backends'],
  ['runtime'],
  ['compile'],
  ['doctor', 'generate', 'quantization'],
  ['cli', 'index', 'ir-entry'],
];

/** The room of a module path relative to lib/: its top-level folder, or its file name without `.ts`. */
export function roomOf(module: string): string {
  const [first, ...rest] = module.split('/');
  return rest.length === 0 ? first!.replace(/\.ts$/, '') : first!;
}

/** An import that breaks the layering: `from` (in room `fromRoom`) imports `to` (in `toRoom`). */
export interface LayerViolation {
  from: string;
  to: string;
  why: string;
}

/**
 * Every import of `graph` that goes against `layers`: to a room of the same layer or a higher
 * one, to a room the layers do not list, or from one backend into another (backends share
 * code only through lib/engine, lib/network and the other rooms below them; only the
 * backends' own registry, lib/backends/registry.ts and index.ts, names each backend).
 */
export function layerViolations(graph: ReadonlyMap<string, readonly string[]>, layers: readonly (readonly string[])[] = LAYERS): LayerViolation[] {
  const rank = new Map<string, number>();
  layers.forEach((rooms, i) => rooms.forEach((r) => rank.set(r, i)));
  const found: LayerViolation[] = [];
  for (const [from, deps] of graph) {
    const fromRoom = roomOf(from);
    for (const to of deps) {
      const toRoom = roomOf(to);
      const rf = rank.get(fromRoom);
      const rt = rank.get(toRoom);
      if (rf === undefined || rt === undefined) {
        found.push({ from, to, why: `room ${rf === undefined ? fromRoom : toRoom} is in no layer` });
      } else if (fromRoom !== toRoom && rt >= rf) {
        found.push({ from, to, why: `${fromRoom} (layer ${rf}) may not import ${toRoom} (layer ${rt})` });
      } else if (fromRoom === 'backends' && toRoom === 'backends') {
        const backendOf = (m: string): string | undefined => (m.split('/').length > 2 ? m.split('/')[1] : undefined);
        const a = backendOf(from);
        const b = backendOf(to);
        if (a !== undefined && b !== undefined && a !== b) found.push({ from, to, why: `backend ${a} may not import backend ${b}` });
      }
    }
  }
  return found;
}
