/**
 * The knobs of an engine build (docs/backends.md "Build configuration"), as compile
 * settings give them (`precisions`, `workspaceBytes`, `timingCache`,
 * `hardwareCompatibility`, `optimizationLevel`) and validated once. Optimization profiles
 * are not here: they belong to the network (Network.profiles), one set per segment.
 */
import { InvalidArgumentError } from '../errors';

/** Kernel precisions a builder may choose from (TensorRT's BuilderFlag FP16/BF16/TF32; fp32 is always allowed). */
export const PRECISIONS = ['fp32', 'tf32', 'fp16', 'bf16'] as const;
export type Precision = (typeof PRECISIONS)[number];

/** TensorRT's HardwareCompatibilityLevel: `none` (this GPU's architecture only) or `ampere+` (any Ampere or later). */
export const HARDWARE_COMPATIBILITY = ['none', 'ampere+'] as const;
export type HardwareCompatibility = (typeof HARDWARE_COMPATIBILITY)[number];

/** Where a timing cache is read from and written back to: a file path, or bytes (read only). */
export type TimingCacheSetting = string | Uint8Array;

/** What a backend's build() receives. */
export interface BuildConfig {
  /** Allowed kernel precisions; always includes fp32. */
  precisions: readonly Precision[];
  /** Builder workspace limit in bytes (TensorRT's MemoryPoolType.WORKSPACE); undefined: the backend's default. */
  workspaceBytes: number | undefined;
  /** Timing cache to start from (and, for a path, to write back); undefined: none. */
  timingCache: TimingCacheSetting | undefined;
  hardwareCompatibility: HardwareCompatibility;
  /** Builder optimization level 0-5 (TensorRT's default is 3). */
  optimizationLevel: number;
}

/** The build knobs of compile settings (lib/compile/settings.ts documents them). */
export interface BuildSettings {
  precisions?: Precision[];
  workspaceBytes?: number;
  timingCache?: TimingCacheSetting;
  hardwareCompatibility?: HardwareCompatibility;
  optimizationLevel?: number;
}

export const BUILD_SETTING_KEYS = ['precisions', 'workspaceBytes', 'timingCache', 'hardwareCompatibility', 'optimizationLevel'] as const;
/** One of the build settings. */
export type BuildSettingKey = (typeof BUILD_SETTING_KEYS)[number];

export const DEFAULT_BUILD_CONFIG: BuildConfig = Object.freeze({
  precisions: Object.freeze(['fp32'] as Precision[]),
  workspaceBytes: undefined,
  timingCache: undefined,
  hardwareCompatibility: 'none',
  optimizationLevel: 3,
});

const quote = (v: unknown): string => (v instanceof Uint8Array ? `<${v.byteLength} bytes>` : JSON.stringify(v));

/**
 * Validates the build knobs of `settings` and fills defaults.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming the setting and the value at fault.
 */
export function resolveBuildConfig(settings: BuildSettings, where = 'compile settings'): BuildConfig {
  const bad = (message: string): never => {
    throw new InvalidArgumentError(`${where}: ${message}`);
  };
  const s = settings as Record<string, unknown>;
  let precisions: Precision[] = ['fp32'];
  if (s.precisions !== undefined) {
    if (!Array.isArray(s.precisions) || s.precisions.length === 0) bad(`precisions must be a non-empty array of ${PRECISIONS.map((p) => `"${p}"`).join(', ')}, got ${quote(s.precisions)}`);
    for (const p of s.precisions as unknown[]) {
      if (!(PRECISIONS as readonly unknown[]).includes(p)) bad(`precisions: unknown precision ${quote(p)} (known: ${PRECISIONS.join(', ')})`);
    }
    // fp32 stays allowed: a layer with no reduced-precision kernel must still build.
    precisions = PRECISIONS.filter((p) => p === 'fp32' || (s.precisions as unknown[]).includes(p));
  }
  if (s.workspaceBytes !== undefined && !(Number.isSafeInteger(s.workspaceBytes) && (s.workspaceBytes as number) > 0)) {
    bad(`workspaceBytes must be a positive integer, got ${quote(s.workspaceBytes)}`);
  }
  if (s.timingCache !== undefined && !(typeof s.timingCache === 'string' && s.timingCache.length > 0) && !(s.timingCache instanceof Uint8Array)) {
    bad(`timingCache must be a file path or the bytes of a timing cache, got ${quote(s.timingCache)}`);
  }
  if (s.hardwareCompatibility !== undefined && !(HARDWARE_COMPATIBILITY as readonly unknown[]).includes(s.hardwareCompatibility)) {
    bad(`hardwareCompatibility must be one of ${HARDWARE_COMPATIBILITY.map((h) => `"${h}"`).join(', ')}, got ${quote(s.hardwareCompatibility)}`);
  }
  if (s.optimizationLevel !== undefined && !(Number.isInteger(s.optimizationLevel) && (s.optimizationLevel as number) >= 0 && (s.optimizationLevel as number) <= 5)) {
    bad(`optimizationLevel must be an integer from 0 to 5, got ${quote(s.optimizationLevel)}`);
  }
  return {
    precisions,
    workspaceBytes: s.workspaceBytes as number | undefined,
    timingCache: s.timingCache as TimingCacheSetting | undefined,
    hardwareCompatibility: (s.hardwareCompatibility as HardwareCompatibility | undefined) ?? 'none',
    optimizationLevel: (s.optimizationLevel as number | undefined) ?? 3,
  };
}
