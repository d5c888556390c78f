/**
 * Shape rules shared by many ops' inference (symbolic: dims may be expressions).
 */
import { dimEquals, symMax, type Dim } from '../symbolic';
import type { InferContext } from './infer-context';

const fmt = (s: readonly Dim[]): string => `[${s.map((d) => (typeof d === 'number' ? d : JSON.stringify(d))).join(', ')}]`;

/**
 * NumPy broadcasting of symbolic shapes. Equal dims stay; a static 1 yields to the other;
 * two different static sizes clash; a symbol against another dim gives max(a, b), which is
 * exact whenever broadcasting is legal (one of them is then 1 or both are equal).
 */
export function broadcastDims(ctx: InferContext, ...shapes: ReadonlyArray<readonly Dim[]>): Dim[] {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out: Dim[] = new Array<Dim>(rank).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const o = rank - s.length + i;
      const a = out[o]!;
      const b = s[i]!;
      if (dimEquals(a, b) || b === 1) continue;
      if (a === 1) out[o] = b;
      else if (typeof a === 'number' && typeof b === 'number') ctx.fail(`shapes ${shapes.map(fmt).join(' and ')} cannot be broadcast together`);
      else if (typeof a === 'number') out[o] = a; // a static non-1 size fixes the dim
      else if (typeof b === 'number') out[o] = b;
      else out[o] = symMax(a, b);
    }
  }
  return out;
}

/** A possibly negative axis against `rank`, failing with the node's name when out of range. */
export function normAxis(ctx: InferContext, axis: number, rank: number, what = 'dim'): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= Math.max(rank, 1)) ctx.fail(`${what} ${axis} is out of range for rank ${rank}`);
  return rank === 0 ? 0 : a;
}
