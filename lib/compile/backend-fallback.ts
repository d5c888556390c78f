/**
 * The warning of `auto` landing on the reference backend because the onnxruntime backend is
 * not usable here (onnxruntime-node not installed, most often). The refusals are logged at
 * `info` with every compile; this one is at `warn` because its cost is large and otherwise
 * invisible: the program works, 50–100× slower.
 */
import type { BackendName, BackendRefusal } from '../backends';
import { REFERENCE_FALLBACK_COST } from '../backends/onnxruntime';
import { isSilentLogger, type Logger } from '../logger';
import type { BackendChoice } from './settings';

let warned = false;

/**
 * Warns, once per process, when `choice` was `auto`, the compile chose the reference backend
 * and onnxruntime was among the backends passed over: the message names the cost and the
 * onnxruntime backend's own reasons (for a missing module, the install command). A server
 * that compiles many models is told once. A compile whose logger is the silent default does
 * not use the warning up: the next compile with a logger (or under DEBUG) still gets it.
 * compile() calls it on the calling thread, after the worker or in-process pipeline alike,
 * so one flag covers both.
 */
export function warnReferenceFallback(choice: BackendChoice, chosen: BackendName, refusals: readonly BackendRefusal[], log: Logger): void {
  if (warned || choice !== 'auto' || chosen !== 'reference') return;
  const ort = refusals.find((r) => r.backend === 'onnxruntime');
  if (ort === undefined || isSilentLogger(log)) return;
  warned = true;
  log('warn', `\`auto\` runs engine segments on ${REFERENCE_FALLBACK_COST}, because ${ort.reasons.join('; ')}. This warning is given once per process.`);
}

/** Lets the next fallback warn again (tests). */
export function resetReferenceFallbackWarning(): void {
  warned = false;
}
