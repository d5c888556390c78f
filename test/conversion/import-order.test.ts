/**
 * Converter modules register independently (lib/conversion/define.ts): importing them in any
 * order gives the same converters and the same selection for every op of the fixtures. Each
 * order is loaded into a fresh module registry (so a fresh converter table).
 */
import * as path from 'node:path';

import type { CompileSettings } from '../../lib/compile';
import type { ConverterListing } from '../../lib/conversion/registry';
import { loadFixture } from '../helpers/fixtures';

const MODULES = ['pointwise', 'nn', 'shape', 'dynamic', 'complex'];

interface Loaded {
  listing: ConverterListing[];
  dryRun: typeof import('../../lib/compile').dryRun;
}

function loadInOrder(order: readonly string[]): Loaded {
  let loaded: Loaded | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    for (const m of order) require(`../../lib/conversion/converters/${m}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const registry = require('../../lib/conversion/registry') as typeof import('../../lib/conversion/registry');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const compile = require('../../lib/compile') as typeof import('../../lib/compile');
    loaded = { listing: registry.listConverters(), dryRun: compile.dryRun };
  });
  return loaded!;
}

/**
 * Within a target, listings keep registration order among equal priorities: a static-only and
 * a dynamic-only converter of one target defined in two modules may swap places. No node
 * sees both, so the order that matters is per target and per kind of node.
 */
function canonical(listing: ConverterListing[]): string[] {
  const kind = (l: ConverterListing): string => (l.static && l.dynamic ? 'both' : l.static ? 'static' : 'dynamic');
  const byGroup = new Map<string, string[]>();
  for (const l of listing) {
    const key = `${l.target} [${kind(l)}]`;
    byGroup.set(key, [...(byGroup.get(key) ?? []), `${l.name} p${l.priority} ${l.checksArgs ? 'checks' : 'no checks'}`]);
  }
  return [...byGroup.entries()].map(([k, names]) => `${k}: ${names.join(' | ')}`).sort();
}

const CASES: Array<[string, 'pt2' | 'onnx', CompileSettings]> = [
  ['encoder', 'pt2', {}],
  ['llama_rotary_complex_input_dynamic', 'pt2', {}],
  ['mobilenet_v3_small', 'pt2', {}],
  ['mobilenet_v3_small', 'onnx', { inputs: [{ shape: [2, 3, 96, 96] }] }],
  ['rotary_only', 'pt2', { inputs: [{ shape: [1, 8, 4, 16] }, { shape: [1, 8, 2, 16] }, { shape: [8, 8] }] }],
];

async function selections(load: Loaded): Promise<string[]> {
  const out: string[] = [];
  for (const [name, format, settings] of CASES) {
    const fixture = loadFixture(name);
    const report = await load.dryRun(path.join(fixture.dir, fixture.files[format]!), { backend: 'reference', ...settings });
    out.push(...report.ops.map((o) => `${name}.${format} ${o.node} -> ${o.converted ? o.converter : o.reasons.join('; ')}`));
  }
  return out;
}

describe('converter modules in any import order', () => {
  const reference = loadInOrder(MODULES);
  const orders = [[...MODULES].reverse(), ['complex', 'dynamic', 'pointwise', 'shape', 'nn'], ['dynamic', 'complex', 'nn', 'pointwise', 'shape']];

  test.each(orders.map((o) => [o.join(', '), o] as const))('%s: same converters, same selection for every fixture op', async (_label, order) => {
    const other = loadInOrder(order);
    expect(other.listing.length).toBe(reference.listing.length);
    expect(canonical(other.listing)).toEqual(canonical(reference.listing));
    const [expected, actual] = [await selections(reference), await selections(other)];
    expect(expected.length).toBeGreaterThan(400);
    expect(actual).toEqual(expected);
  }, 60_000);
});
