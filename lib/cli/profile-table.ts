/**
 * `bench --profile`'s table: a program's per-layer profile (program.profile(),
 * lib/engine/profile.ts) as text, one row per layer in the order they ran, then the total.
 */
import type { ProfileEntry, ProgramProfile, ProfileTiming } from '../engine/profile';

/** How each timing is said in the table's heading. */
const TIMING_WORDS: Record<ProfileTiming, string> = {
  'host-wall-clock': 'wall clock per layer on the CPU',
  'cuda-step': 'each plan step timed alone on the GPU, its launch included',
  'onnxruntime-profiler': "onnxruntime's profiler, per node",
  'segment-wall-clock': 'the whole segment only',
};

/** The widest a name column gets; longer names keep their end (where ONNX names differ). */
const MAX_NAME = 48;

const clip = (s: string): string => (s.length <= MAX_NAME ? s : `…${s.slice(s.length - MAX_NAME + 1)}`);
const fromOf = (e: ProfileEntry): string => (e.from === undefined ? '' : e.from.node === e.name ? e.from.target : `${clip(e.from.node)} (${e.from.target})`);

/** The profile as a table: layer, kind, ms, share, from (and the segment, for programs of several). */
export function formatProfile(profile: ProgramProfile): string {
  const several = profile.segments.length > 1;
  const header = [...(several ? ['seg'] : []), 'layer', 'kind', 'ms', 'share', 'from'];
  const rows = profile.entries.map((e) => [
    ...(several ? [String(e.segment)] : []),
    clip(e.name),
    e.detail === undefined ? e.kind : `${e.kind} (${e.detail})`,
    e.ms.toFixed(3),
    `${(100 * e.share).toFixed(1)}%`,
    fromOf(e),
  ]);
  const total = [...(several ? [''] : []), 'total', '', profile.totalMs.toFixed(3), '100.0%', `(a whole run: ${profile.wallMs.toFixed(3)} ms of wall clock)`];
  const table = [header, ...rows, total];
  const numeric = new Set([header.indexOf('ms'), header.indexOf('share')]);
  const widths = header.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const line = (r: string[]): string =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : numeric.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  const segments = profile.segments.map(
    (s) => `  segment ${s.index} (${s.kind === 'engine' ? `${s.backend} engine` : 'fallback, interpreter'}): ${s.ms.toFixed(3)} ms a run; layers: ${TIMING_WORDS[s.timing]}`,
  );
  return [`per-layer profile (mean of ${profile.runs} run(s)):`, ...segments, '', ...table.map(line)].join('\n');
}
