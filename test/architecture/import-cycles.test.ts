/**
 * No import cycle among the package's modules at run time: a cycle makes one module of it see
 * another half-initialized (an `undefined` export) depending on which is loaded first, and
 * ties stages together that the folder layout says are independent. The graph is read from
 * dist/ (type-only imports are erased there); see ./module-graph.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, requireBuild } from '../helpers/built-package';
import { findCycles, runtimeModuleGraph } from './module-graph';

const format = (cycle: readonly string[]): string => cycle.join(' -> ');

describe('run-time import cycles among dist/ modules', () => {
  beforeAll(() => requireBuild());

  it('finds none', () => {
    const cycles = findCycles(runtimeModuleGraph(path.join(REPO_ROOT, 'dist'))).map(format);
    expect(cycles).toEqual([]);
  });
});

describe('findCycles', () => {
  const graph = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));

  it('reports nothing for a graph without cycles', () => {
    expect(findCycles(graph({ 'a.js': ['b.js', 'c.js'], 'b.js': ['c.js'], 'c.js': [] }))).toEqual([]);
  });

  it('reports each cycle once, as a closed path from its first module', () => {
    const cycles = findCycles(
      graph({
        'a.js': ['b.js'],
        'b.js': ['c.js'],
        'c.js': ['a.js', 'd.js'],
        'd.js': [],
        'x.js': ['y.js'],
        'y.js': ['x.js'],
        'z.js': ['z.js'],
      }),
    ).map(format);
    expect(cycles).toEqual(['a.js -> b.js -> c.js -> a.js', 'x.js -> y.js -> x.js', 'z.js -> z.js']);
  });
});

describe('runtimeModuleGraph', () => {
  it('reads a known run-time edge and resolves folder requires to their index', () => {
    const g = runtimeModuleGraph(path.join(REPO_ROOT, 'dist'));
    // lib/index.ts re-exports lib/errors.ts (a value export, so it survives compilation).
    expect(g.get('index.js')).toContain('errors.js');
    // A folder import ('./compile') resolves to its index module.
    expect(g.get('index.js')).toContain('compile/index.js');
  });
});

/** Every `from '...'` or side-effect `import '...'` specifier of the .ts files under lib/`folder`, resolved to a path under lib/. */
function sourceImports(folder: string): Array<{ file: string; target: string }> {
  const lib = path.join(REPO_ROOT, 'lib');
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  return walk(path.join(lib, folder)).flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(/\b(?:from|import)\s+'(\.{1,2}\/[^']*)'/g)].map((m) => ({
      file: path.relative(lib, file),
      target: path.relative(lib, path.resolve(path.dirname(file), m[1]!)),
    })),
  );
}

describe('stage boundaries in lib/ (type imports included)', () => {
  it.each([
    ['ir', 'kernels'],
    ['lowering', 'runtime'],
  ])('lib/%s/ imports nothing from lib/%s/', (folder, forbidden) => {
    const found = sourceImports(folder).filter((i) => i.target === forbidden || i.target.startsWith(`${forbidden}${path.sep}`));
    expect(found).toEqual([]);
    // The scan does read imports (an empty scan would pass vacuously).
    expect(sourceImports(folder).length).toBeGreaterThan(10);
  });
});
