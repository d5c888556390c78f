/**
 * Graphs of the fixtures' model.pt2 files, imported once per test file and shared by its
 * tests (tests that change a graph copy it first).
 */
import * as path from 'node:path';

import { loadPt2 } from '../../lib/frontends/pt2';
import type { Graph } from '../../lib/ir/graph';
import { FIXTURES } from './fixtures';

const graphs = new Map<string, Graph>();

/** The graph of fixture `name`'s model.pt2, imported on first use. */
export function pt2Graph(name: string): Graph {
  let g = graphs.get(name);
  if (g === undefined) {
    g = loadPt2(path.join(FIXTURES, name, 'model.pt2'));
    graphs.set(name, g);
  }
  return g;
}
