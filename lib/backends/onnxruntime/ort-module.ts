/**
 * onnxruntime-node, loaded on first use. It is an optional peer dependency
 * (docs/onnxruntime-backend.md says why): absent, the backend says so in available() and
 * `doctor` says how to add it, and nothing else changes. The module is required lazily so
 * that importing tensorrt-node never loads onnxruntime's 40+ MB native library.
 */
import type * as Ort from 'onnxruntime-node';

export type OrtModule = typeof Ort;

export const ORT_PACKAGE = 'onnxruntime-node';

/**
 * The onnxruntime-node releases this backend's tests were run against (the repository's
 * devDependency is the first; docs/onnxruntime-backend.md says how the others were run).
 */
export const ORT_VERIFIED_VERSIONS = ['1.30.0', '1.31.1'] as const;

/**
 * The peer dependency range of package.json (a test keeps the two equal): the minors of
 * ORT_VERIFIED_VERSIONS and no further, because the prepared run calls onnxruntime-common's
 * private session handler (./run/session-handler.ts), which a later minor may change
 * (1.31's run() passes it a fourth argument, the active LoRA adapters, which onnxruntime-node's
 * handler does not read). Older releases from 1.17 on still load (the engines use nothing
 * newer); npm just does not offer them.
 */
export const ORT_PEER_RANGE = '>=1.30.0 <1.32.0';
const MIN_MAJOR_MINOR: [number, number] = [1, 17];

/** The command that adds onnxruntime-node; the range is quoted because of its space and `<`. */
export const ORT_INSTALL_COMMAND = `ONNXRUNTIME_NODE_INSTALL=skip npm install "${ORT_PACKAGE}@${ORT_PEER_RANGE}"`;

/** How to add onnxruntime-node, for `doctor` and refusals. */
export const ORT_INSTALL_HINT =
  `install it next to tensorrt-node: \`${ORT_INSTALL_COMMAND}\` ` +
  '(the variable stops its install script from downloading the CUDA provider, which this CPU backend does not use)';

/**
 * What running without onnxruntime-node costs, for the warning of `auto` and `doctor`:
 * measured with `tensorrt-node bench` (docs/onnxruntime-backend.md, "Without it").
 */
export const REFERENCE_FALLBACK_COST =
  'the reference backend, which computes in JavaScript, 50–100× slower (mobilenet_v3_small at 1×3×96×96, median run: 25–45 ms against 0.25–0.7 ms)';

/** Why onnxruntime-node cannot be used: not installed, installed but its native library failed to load, or older than 1.17. */
export type OrtProblem = 'missing' | 'load-failed' | 'too-old';

export type OrtLoad = { ok: true; ort: OrtModule; version: string } | { ok: false; problem: OrtProblem; reason: string };

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
      ? { ok: false, problem: 'too-old', reason: `${ORT_PACKAGE} ${version} is installed, this backend needs ${MIN_MAJOR_MINOR.join('.')} or later: ${ORT_INSTALL_HINT}` }
      : { ok: true, ort, version };
  } catch (error) {
    const e = error as Error & { code?: string };
    cached =
      e.code === 'MODULE_NOT_FOUND' && e.message.includes(ORT_PACKAGE)
        ? { ok: false, problem: 'missing', reason: `${ORT_PACKAGE} is not installed (it is an optional peer dependency): ${ORT_INSTALL_HINT}` }
        : { ok: false, problem: 'load-failed', reason: `${ORT_PACKAGE} is installed but failed to load: ${e.message}` };
  }
  return cached;
}

/** Forgets the cached load (tests that simulate an absent module). */
export function resetOrtLoad(): void {
  cached = undefined;
}
