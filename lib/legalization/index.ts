/**
 * Dynamic shapes after partitioning (docs/dynamic-shapes.md): partitioning knows the `_dyn`
 * variants, and engine segments are legalized to shape tensors (./legalize.ts, rules in
 * ./variants.ts). The plan of input shapes and the segments' optimization profiles are
 * compile's (lib/compile/input-shapes.ts).
 */
import type { Graph } from '../ir/graph';
import { verifyGraph } from '../ir/verify';
import { partition, type Partition } from '../partitioning/partition';
import { checkDynamicSupport, dynamicSelector, legalizeSegments, type DynamicSettings } from './legalize';

export { checkDynamicSupport, classify, dynamicSelector, findMissingVariants, legalizeSegments } from './legalize';
export type { Classification, DynamicSettings, MissingVariant } from './legalize';
export { DYNAMIC_RULES, SYMINT_OPS } from './variants';
export type { DynBuilder, DynamicRule } from './variants';

/**
 * Partitions a dynamic graph: first one E_DYNAMIC_UNSUPPORTED for ops with no `_dyn`
 * variant (unless `dynamicFallback`), then partitioning with the `_dyn`-aware selection, then
 * legalization of the segments. Mutates `graph`.
 */
export function partitionDynamic(graph: Graph, settings: DynamicSettings): Partition {
  checkDynamicSupport(graph, settings);
  const part = partition(graph, { ...settings, select: dynamicSelector(graph, settings) });
  const legal = legalizeSegments(graph, part, settings);
  verifyGraph(graph, 'legalized graph');
  return legal;
}
