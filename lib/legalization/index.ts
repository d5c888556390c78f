/**
 * Dynamic shapes in compile() (docs/dynamic-shapes.md): the symbols a plan leaves dynamic keep their
 * (profile-union) ranges in the graph; partitioning knows the `_dyn` variants; TensorRT
 * segments are legalized to shape tensors (./legalize.ts, rules in ./variants.ts); every
 * TensorRT segment input with run-time dims gets one optimization profile per input profile,
 * derived from the symbols' bounds (also for values coming from fallback segments).
 */
import type { InputShapePlan } from '../compile/input-shapes';
import { profilesForShape } from '../compile/input-shapes';
import type { Graph } from '../ir/graph';
import { verifyGraph } from '../ir/verify';
import type { ProfileShapes } from '../network';
import { partition, type Partition, type Segment } from '../partitioning/partition';
import { checkDynamicSupport, dynamicSelector, legalizeSegments, type DynamicSettings } from './legalize';

export { checkDynamicSupport, classify, dynamicSelector, findMissingVariants, legalizeSegments } from './legalize';
export type { Classification, DynamicSettings, MissingVariant } from './legalize';
export { DYNAMIC_RULES, SYMINT_OPS } from './variants';
export type { DynBuilder, DynamicRule } from './variants';

/** Narrows the graph's symbol ranges to the plan's (the union of its profiles). */
export function applySymbolRanges(graph: Graph, plan: InputShapePlan): void {
  for (const [s, r] of plan.ranges) graph.symbols.set(s, { ...r });
}

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

/** The optimization profiles of a TensorRT segment's inputs with run-time dims, by value name. */
export function segmentProfiles(segment: Segment, plan: InputShapePlan): Map<string, ProfileShapes[]> {
  const out = new Map<string, ProfileShapes[]>();
  for (const v of segment.inputs) {
    if (v.type.kind !== 'tensor') continue;
    const p = profilesForShape(v.type.shape, plan);
    if (p.length > 0) out.set(v.name, p);
  }
  return out;
}
