/**
 * The input shapes a program is timed at when it is loaded (ProgramExecutor.preload, for
 * the choice of the thread that runs it): the declared shapes, with each symbol at the
 * smallest size its range allows (at least 1). Small sizes load and run quickly, and a cost
 * per element measured there overstates larger runs, which sends them to the worker: the
 * safe side for the event loop.
 */
import { evaluateDim, type SymbolRange } from '../ir/symbolic';
import type { ProgramIO } from './segments';

/** The shapes to time `inputs` at, or undefined where a symbol has no range or a dim comes out negative. */
export function probeShapes(inputs: readonly ProgramIO[], symbols: ReadonlyMap<string, SymbolRange>): number[][] | undefined {
  const values = new Map<string, number>();
  for (const [name, range] of symbols) values.set(name, Math.min(Math.max(range.min, 1), range.max));
  try {
    const shapes = inputs.map((io) => io.shape.map((d) => evaluateDim(d, values)));
    return shapes.every((shape) => shape.every((d) => Number.isSafeInteger(d) && d >= 0)) ? shapes : undefined;
  } catch {
    return undefined;
  }
}
