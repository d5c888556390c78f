/**
 * The input shapes a program is timed at when it is loaded (ProgramExecutor.preload, for
 * the choice of the thread that runs it): where every input with run-time dims recorded its
 * optimization profiles, the first profile's min shapes; otherwise the declared shapes, with
 * each symbol at the smallest size its range allows (at least 1). Small sizes load and run
 * quickly, and a cost per element measured there overstates larger runs, which sends them to
 * the worker: the safe side for the event loop.
 *
 * The profile's corner comes first because the inputs' symbols can be separate where the
 * model relates them: a KV-cache model's attention mask is as long as its past and new tokens
 * together, three symbols, and each at its own least size (past 1, new 1, mask 1) is a
 * combination the model refuses, so the timed run failed and the program never left its
 * worker; the profile's min corner (past 0, new 1, mask 1) is one a run can give.
 */
import { evaluateDim, type SymbolRange } from '../ir/symbolic';
import type { ProgramIO } from './segments';

/** The shapes to time `inputs` at, or undefined where a symbol has no range or a dim comes out negative. */
export function probeShapes(inputs: readonly ProgramIO[], symbols: ReadonlyMap<string, SymbolRange>): number[][] | undefined {
  const dynamic = inputs.filter((io) => io.shape.some((d) => typeof d !== 'number'));
  if (dynamic.length > 0 && dynamic.every((io) => io.profiles !== undefined && io.profiles.length > 0)) {
    return inputs.map((io) => (io.profiles?.[0] !== undefined ? [...io.profiles[0].min] : (io.shape as number[]).slice()));
  }
  const values = new Map<string, number>();
  for (const [name, range] of symbols) values.set(name, Math.min(Math.max(range.min, 1), range.max));
  try {
    const shapes = inputs.map((io) => io.shape.map((d) => evaluateDim(d, values)));
    return shapes.every((shape) => shape.every((d) => Number.isSafeInteger(d) && d >= 0)) ? shapes : undefined;
  } catch {
    return undefined;
  }
}
