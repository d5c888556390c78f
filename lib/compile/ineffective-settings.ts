/**
 * Build settings the chosen backend does not use: compile() accepts every build knob for
 * every backend (a program's settings should not depend on where it happens to compile), and
 * warns once, naming each setting and the backend, where one changes nothing, so that
 * `precisions: ['fp16']` on the reference backend is not mistaken for an fp16 engine.
 */
import type { Backend } from '../engine/backend';
import { DEFAULT_BUILD_CONFIG, type BuildConfig, type BuildSettingKey } from '../engine/build-config';
import type { Logger } from '../logger';

/** What a backend says of the build settings (Backend.buildSettings). */
type SettingsUse = Pick<Backend, 'name' | 'buildSettings'>;

const describe = (v: unknown): string => (v instanceof Uint8Array ? `<${v.byteLength} bytes>` : Array.isArray(v) ? v.join(', ') : String(v));

/**
 * The settings of `build` that differ from the defaults and that `backend` does not use, each
 * as `name (value)`; precisions count only beyond fp32 (always allowed).
 */
export function ineffectiveSettings(build: BuildConfig, backend: SettingsUse): string[] {
  const given: Array<[BuildSettingKey, unknown]> = [];
  const reduced = build.precisions.filter((p) => p !== 'fp32');
  if (reduced.length > 0) given.push(['precisions', reduced]);
  if (build.workspaceBytes !== undefined) given.push(['workspaceBytes', build.workspaceBytes]);
  if (build.timingCache !== undefined) given.push(['timingCache', build.timingCache]);
  if (build.hardwareCompatibility !== DEFAULT_BUILD_CONFIG.hardwareCompatibility) given.push(['hardwareCompatibility', build.hardwareCompatibility]);
  if (build.optimizationLevel !== DEFAULT_BUILD_CONFIG.optimizationLevel) given.push(['optimizationLevel', build.optimizationLevel]);
  const uses = backend.buildSettings.uses;
  return given.filter(([key]) => !uses.includes(key)).map(([key, value]) => `${key} (${describe(value)})`);
}

/** Warns once, at `warn`, when settings of `build` change nothing on `backend` (see {@link ineffectiveSettings}). */
export function warnIneffectiveSettings(build: BuildConfig, backend: SettingsUse, log: Logger): void {
  const unused = ineffectiveSettings(build, backend);
  if (unused.length === 0) return;
  const which = unused.length === 1 ? `the setting ${unused[0]} has` : `the settings ${unused.join(', ')} have`;
  log('warn', `${which} no effect on the ${backend.name} backend, which builds the engine segments: ${backend.buildSettings.instead}`);
}
