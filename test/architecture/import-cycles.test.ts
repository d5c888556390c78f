/**
 * The shape of lib/'s imports. No import cycle among the package's modules at run time: a
 * cycle makes one module of it see another half-initialized (an `undefined` export) depending
 * on which is loaded first (read from dist/, ./module-graph.ts). No cycle among the sources
 * either, type imports included, and the layering of docs/architecture.md: each room of lib/
 * imports only rooms below it (./source-graph.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, requireBuild } from '../helpers/built-package';
import { findCycles, runtimeModuleGraph } from './module-graph';
import { LAYERS, layerViolations, roomOf, sourceModuleGraph, type LayerViolation } from './source-graph';

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

const LIB = path.join(REPO_ROOT, 'lib');
const formatViolation = (v: LayerViolation): string => `${v.from} -> ${v.to}: ${v.why}`;

describe('the source module graph of lib/ (type imports included)', () => {
  const graph = sourceModuleGraph(LIB);

  it('reads every module and its imports, types included', () => {
    expect(graph.size).toBeGreaterThan(250);
    // A type-only import survives in this graph (it is erased from dist/).
    expect(fs.readFileSync(path.join(LIB, 'engine', 'backend.ts'), 'utf8')).toMatch(/import type \{ [^}]*\bNetwork\b[^}]*\} from '\.\.\/network'/);
    expect(graph.get('engine/backend.ts')).toContain('network/index.ts');
  });

  it('has no import cycle, not even of types', () => {
    expect(findCycles(graph).map(format)).toEqual([]);
  });

  it('keeps the layering: no import runs up or across a layer, no backend imports another', () => {
    expect(layerViolations(graph).map(formatViolation)).toEqual([]);
  });

  it('lists every room of lib/ in a layer', () => {
    const rooms = new Set([...graph.keys()].map(roomOf));
    expect([...rooms].filter((r) => !LAYERS.some((layer) => layer.includes(r)))).toEqual([]);
  });
});

describe('layerViolations', () => {
  const layers = [['base'], ['engine'], ['backends', 'gpu'], ['runtime']];
  const graph = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));

  it('accepts imports of lower layers and of the own room', () => {
    const g = graph({ 'runtime/a.ts': ['backends/x/b.ts', 'base.ts', 'runtime/c.ts'], 'backends/x/b.ts': ['engine/e.ts', 'backends/x/d.ts'], 'backends/registry.ts': ['backends/x/b.ts', 'backends/y/b.ts'] });
    expect(layerViolations(g, layers)).toEqual([]);
  });

  it('names an import up a layer, across one, into an unlisted room, and between backends', () => {
    const g = graph({
      'engine/e.ts': ['runtime/a.ts'],
      'gpu/t.ts': ['backends/x/b.ts'],
      'base.ts': ['stray/z.ts'],
      'backends/x/b.ts': ['backends/y/c.ts'],
    });
    expect(layerViolations(g, layers).map(formatViolation)).toEqual([
      'engine/e.ts -> runtime/a.ts: engine (layer 1) may not import runtime (layer 3)',
      'gpu/t.ts -> backends/x/b.ts: gpu (layer 2) may not import backends (layer 2)',
      'base.ts -> stray/z.ts: room stray is in no layer',
      'backends/x/b.ts -> backends/y/c.ts: backend x may not import backend y',
    ]);
  });
});
