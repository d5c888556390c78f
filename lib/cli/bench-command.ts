/**
 * `tensorrt-node bench PROGRAM|MODEL`: latency percentiles and throughput of `run()` after
 * warm-up runs, on the inputs `run` would use (`--input`, `--random-inputs`).
 */
import type { ProgramProfile } from '../engine/profile';
import { opCountSummary, wrapText } from '../partitioning/report-format';
import { prepareRun, type RunOptions } from './model-commands';
import { formatProfile } from './profile-table';
import { createProgress } from './progress';
import { parseInteger, parseSeconds } from './usage';

export interface BenchOptions extends RunOptions {
  iterations?: string;
  warmup?: string;
  duration?: string;
  profile?: boolean;
}

/**
 * Defaults: at most 100 measured runs or 10 s of them, whichever ends first, after 5 warm-up
 * runs; `--profile` times layers over 10 runs (or --iterations, if fewer).
 */
export const BENCH_DEFAULTS = { iterations: 100, warmup: 5, durationS: 10, profileRuns: 10 } as const;

export interface LatencyStats {
  runs: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The `p`th percentile (0 < p <= 100) of ascending `sorted` by the nearest-rank method. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Min, mean, p50/p90/p99 (nearest rank) and max of latencies in ms. */
export function latencyStats(samples: readonly number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    min: sorted[0]!,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
  };
}

export interface BenchResult {
  backend: string;
  warmupRuns: number;
  /** Why measuring stopped: the iteration count or the duration was reached. */
  stoppedBy: 'iterations' | 'duration';
  totalMs: number;
  latencyMs: LatencyStats;
  /** Measured runs per second of wall time (one run = one call of run() on the whole batch). */
  runsPerSecond: number;
  summary: string;
  /** With `--profile`: program.profile()'s per-layer times (lib/engine/profile.ts). */
  profile?: ProgramProfile;
}

/** The human-readable form of a {@link BenchResult}. */
export function formatBench(r: BenchResult): string {
  const l = r.latencyMs;
  const f = (x: number): string => x.toFixed(2);
  return [
    ...wrapText(`${r.backend} backend; ${r.summary}`),
    `warm-up: ${r.warmupRuns} run(s); measured: ${l.runs} run(s) in ${(r.totalMs / 1000).toFixed(2)} s (stopped by ${r.stoppedBy === 'iterations' ? '--iterations' : '--duration'})`,
    `latency (ms): p50 ${f(l.p50)}  p90 ${f(l.p90)}  p99 ${f(l.p99)}  (min ${f(l.min)}, mean ${f(l.mean)}, max ${f(l.max)})`,
    `throughput: ${r.runsPerSecond.toFixed(2)} runs/s`,
    ...(r.profile === undefined ? [] : ['', formatProfile(r.profile)]),
  ].join('\n');
}

/** `bench PROGRAM|MODEL [--iterations n] [--warmup n] [--duration s] [--profile] [--json]`. */
export async function benchCommand(file: string, options: BenchOptions, print: (s: string) => void): Promise<void> {
  const iterations = options.iterations === undefined ? BENCH_DEFAULTS.iterations : parseInteger('--iterations', options.iterations, 1);
  const warmup = options.warmup === undefined ? BENCH_DEFAULTS.warmup : parseInteger('--warmup', options.warmup, 0);
  const durationMs = 1000 * (options.duration === undefined ? BENCH_DEFAULTS.durationS : parseSeconds('--duration', options.duration));
  const progress = createProgress(options);
  const { program, inputs } = await prepareRun(file, options, progress);
  try {
    progress.task('warm-up', warmup);
    for (let i = 0; i < warmup; i++) {
      await program.run(inputs);
      progress.tick();
    }
    progress.task('measuring (until --iterations or --duration)', iterations);
    const samples: number[] = [];
    const started = performance.now();
    while (samples.length < iterations && (samples.length === 0 || performance.now() - started < durationMs)) {
      const t0 = performance.now();
      await program.run(inputs);
      samples.push(performance.now() - t0);
      progress.tick();
    }
    const totalMs = performance.now() - started;
    let profile: ProgramProfile | undefined;
    if (options.profile) {
      const runs = Math.min(iterations, BENCH_DEFAULTS.profileRuns);
      progress.note(`timing each layer (${runs} run(s))`);
      // Warm already: the measured runs came first.
      profile = await program.profile(inputs, { runs, warmup: 0 });
    }
    progress.stop();
    const result: BenchResult = {
      backend: program.backend,
      warmupRuns: warmup,
      stoppedBy: samples.length >= iterations ? 'iterations' : 'duration',
      totalMs,
      latencyMs: latencyStats(samples),
      runsPerSecond: (samples.length * 1000) / totalMs,
      summary: opCountSummary(program.report),
      ...(profile === undefined ? {} : { profile }),
    };
    print(options.json ? JSON.stringify(result, null, 2) : formatBench(result));
  } finally {
    await program.dispose();
  }
}
