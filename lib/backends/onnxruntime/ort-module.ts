/**
 * onnxruntime-node, loaded on first use. It is an optional peer dependency
 * (docs/onnxruntime-backend.md says why): absent, the backend says so in available() and
 * `doctor` says how to add it, and nothing else changes. The module is required lazily so
 * that importing tensorrt-node never loads onnxruntime's 40+ MB native library.
 */
import type * as Ort from 'onnxruntime-node';

export type OrtModule = typeof Ort;

/** The package and version this backend is written and tested against; older 1.x releases from 1.17 on work. */
export const ORT_PACKAGE = 'onnxruntime-node';
export const ORT_TESTED_VERSION = '1.30.0';
const MIN_MAJOR_MINOR: [number, number] = [1, 17];

/** How to add onnxruntime-node, for `doctor` and refusals. */
export const ORT_INSTALL_HINT =
  `install it next to tensorrt-node: \`ONNXRUNTIME_NODE_INSTALL=skip npm install ${ORT_PACKAGE}@${ORT_TESTED_VERSION}\` ` +
  '(the variable stops its install script from downloading the CUDA provider, which this CPU backend does not use)';

export type OrtLoad = { ok: true; ort: OrtModule; version: string } | { ok: false; reason: string };

let cached: OrtLoad | undefined;

/** The version a loaded module reports (onnxruntime-common's env.versions). */
function versionOf(ort: OrtModule): string {
  const versions = (ort.env as { versions?: { node?: string; common?: string } }).versions;
  return versions?.node ?? versions?.common ?? 'unknown';
}

function tooOld(version: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (m === null) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major < MIN_MAJOR_MINOR[0] || (major === MIN_MAJOR_MINOR[0] && minor < MIN_MAJOR_MINOR[1]);
}

/** onnxruntime-node, or why it cannot be used (not installed, its native library failed to load, too old). Never throws. */
export function loadOrt(): OrtLoad {
  if (cached !== undefined) return cached;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ort = require(ORT_PACKAGE) as OrtModule;
    const version = versionOf(ort);
    cached = tooOld(version)
      ? { ok: false, reason: `${ORT_PACKAGE} ${version} is installed, this backend needs ${MIN_MAJOR_MINOR.join('.')} or later: ${ORT_INSTALL_HINT}` }
      : { ok: true, ort, version };
  } catch (error) {
    const e = error as Error & { code?: string };
    cached =
      e.code === 'MODULE_NOT_FOUND' && e.message.includes(ORT_PACKAGE)
        ? { ok: false, reason: `${ORT_PACKAGE} is not installed (it is an optional peer dependency): ${ORT_INSTALL_HINT}` }
        : { ok: false, reason: `${ORT_PACKAGE} is installed but failed to load: ${e.message}` };
  }
  return cached;
}

/** Forgets the cached load (tests that simulate an absent module). */
export function resetOrtLoad(): void {
  cached = undefined;
}
