/**
 * Run-time checks of a cuda plan: data only the run sees that a kernel cannot process, which
 * TensorRT leaves undefined and the reference backend refuses (an index outside its axis).
 *
 * A plan with checks has one more buffer, the status word (4 bytes, after the I/O buffers): its
 * first step zeroes it, a kernel that meets bad data stores its check's code there (1-based,
 * the check's position in the plan's list; when several fail, one of them wins), and the runner
 * reads it back after the run in the same wait as the outputs (GpuPlan.execute's `status`). A
 * nonzero word fails the run with E_BAD_INPUT naming the layer, as the reference backend's
 * run fails; the outputs of that run are freed, never handed out.
 */
import { BadInputError, InternalError } from '../../../errors';
import type { MemsetStep } from '../../../gpu/plan';

/** One check: the layer whose kernel may report, and what its report means. */
export interface RunCheck {
  readonly layer: string;
  readonly kind: string;
  /** What the data broke, e.g. "an index is outside [0, d) of the axis it addresses". */
  readonly what: string;
}

/** The plan step that zeroes the status word in buffer `buffer` before the plan's kernels run. */
export const clearStatus = (buffer: number): MemsetStep => ({ kind: 'memset', dst: { buffer, offset: 0 }, bytes: 4, value: 0 });

/**
 * The error of a run whose status word came back `status` (nonzero), naming the check's layer,
 * or naming the word itself when it matches no check (a kernel wrote past its code: a bug).
 */
export function runCheckError(engine: string, checks: readonly RunCheck[], status: number): BadInputError | InternalError {
  const check = checks[status - 1];
  if (check === undefined) {
    return new InternalError(`cuda engine "${engine}": the run reported bad data with status ${status}, which names none of its ${checks.length} checks`, { details: { status } });
  }
  return new BadInputError(`cuda engine "${engine}": layer "${check.layer}" (${check.kind}): ${check.what}; the run's outputs were discarded`, {
    details: { layer: check.layer, status },
  });
}
