/**
 * Lowered steps → a PlanSpec (lib/gpu/plan.ts) and the kernel sources it launches, grouped
 * into modules. Each distinct source (by key) is a module of its own: sources are compiled
 * and cached one by one, so a run at a new shape that needs one more kernel compiles only
 * that one, and two sources can never clash over a helper's name. A copy onto itself (what an
 * in-place reshape lowers to), a launch of no blocks and a copy or memset of no bytes are
 * dropped. Pure.
 */
import { createHash } from 'node:crypto';

import { InternalError } from '../../../errors';
import type { PlanSpec, PlanStep } from '../../../gpu/plan';
import type { KernelSource, LoweredStep } from '../layers';
import { sameSlice } from '../layers/kernel';

/** One module of the plan: one kernel source. */
export interface PlanModule {
  readonly key: string;
  readonly entry: string;
  readonly source: string;
  /** sha256 of the source text (engine bytes keep it, to tell a stale cubin). */
  readonly sourceHash: string;
}

export interface AssembledPlan {
  readonly spec: PlanSpec;
  /** `spec`'s module i is `modules[i]`. */
  readonly modules: readonly PlanModule[];
}

export const sourceHash = (source: string): string => createHash('sha256').update(source, 'utf8').digest('hex');

/** The distinct kernel sources of `steps`, in first-use order (InternalError if one key has two sources). */
export function kernelSources(steps: readonly LoweredStep[]): PlanModule[] {
  const byKey = new Map<string, PlanModule>();
  for (const step of steps) {
    if (step.kind !== 'launch') continue;
    const k: KernelSource = step.kernel;
    const known = byKey.get(k.key);
    if (known === undefined) {
      byKey.set(k.key, { key: k.key, entry: k.entry, source: k.source, sourceHash: sourceHash(k.source) });
    } else if (known.source !== k.source || known.entry !== k.entry) {
      throw new InternalError(`cuda backend: two different kernels share the key "${k.key}" (a lowering must give each source its own key)`);
    }
  }
  return [...byKey.values()];
}

/**
 * Assembles `steps` into a plan whose module i is the i-th distinct kernel source; `labels`
 * (parallel to `steps`, e.g. their layers) come back for the steps kept, as `stepLabels`.
 */
export function assemble<L = never>(steps: readonly LoweredStep[], labels: readonly L[] = []): AssembledPlan & { stepLabels: L[] } {
  const modules = kernelSources(steps);
  const index = new Map(modules.map((m, i) => [m.key, i]));
  const out: PlanStep[] = [];
  const stepLabels: L[] = [];
  steps.forEach((step, i) => {
    const keep = (planStep: PlanStep): void => {
      out.push(planStep);
      if (i < labels.length) stepLabels.push(labels[i]!);
    };
    if (step.kind === 'launch') {
      // A grid with no blocks launches nothing (and the driver refuses it): a size-0 tensor.
      if (step.grid.some((d) => d === 0)) return;
      const { kernel, ...launch } = step;
      keep({ ...launch, module: index.get(kernel.key)!, kernel: 0, args: [...step.args] });
    } else if (step.kind === 'copy' && sameSlice(step.dst, step.src)) {
      return;
    } else if (!(step.kind === 'copy' || step.kind === 'memset') || step.bytes > 0) {
      keep(step);
    }
  });
  return { spec: { steps: out }, modules, stepLabels };
}
