/**
 * Every network layer kind (lib/network/layers.ts) has an executor on the reference backend,
 * so any network the converters can emit runs on the CPU.
 */
import { executors } from '../../../lib/network/evaluate';
import { LAYER_KINDS } from '../../../lib/network';

describe('network layer kinds and the reference backend', () => {
  it('enumerates the layer kinds', () => {
    expect(LAYER_KINDS).toEqual(expect.arrayContaining(['constant', 'convolution', 'elementwise', 'shuffle']));
    expect(new Set(LAYER_KINDS).size).toBe(LAYER_KINDS.length);
  });

  it('has a reference executor for every layer kind', () => {
    const table = executors as Readonly<Record<string, unknown>>;
    expect(LAYER_KINDS.filter((kind) => typeof table[kind] !== 'function')).toEqual([]);
  });

  it('has no executor for a kind the network does not declare', () => {
    const kinds = new Set<string>(LAYER_KINDS);
    expect(Object.keys(executors).filter((kind) => !kinds.has(kind))).toEqual([]);
  });
});
