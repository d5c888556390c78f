/**
 * The directory where backends keep what makes a second build cheap: TensorRT's engine and
 * timing caches (lib/backends/tensorrt/engine-cache.ts) and the cuda backend's GEMM timings
 * (lib/backends/cuda/run/timing-cache.ts). One variable names it for every backend.
 */
export const ENGINE_CACHE_ENV = 'TENSORRT_NODE_ENGINE_CACHE';

/** The cache directory named by `env`, or null when caching is off (unset or empty). */
export const engineCacheDir = (env: NodeJS.ProcessEnv = process.env): string | null => {
  const dir = env[ENGINE_CACHE_ENV];
  return dir === undefined || dir === '' ? null : dir;
};
