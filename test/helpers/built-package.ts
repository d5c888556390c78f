/**
 * Paths of the built package and child-process runners for tests that must exercise the real
 * addon. The addon caches the CUDA driver and libnvinfer it opens for the life of the process
 * (native/cuda/driver.cc, native/trt/library.cc), so every scenario that depends on which
 * library is loaded runs in a fresh `node` process; the jest worker never loads the addon.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const DIST_INDEX = path.join(REPO_ROOT, 'dist', 'index.js');
export const DIST_NATIVE = path.join(REPO_ROOT, 'dist', 'native.js');
export const DIST_CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
export const BUILT_ADDON = path.join(REPO_ROOT, 'build', 'Release', 'tensorrt_node.node');
/** Where scripts/build.js puts this platform's release binary (the prebuild npm pack ships). */
export const PREBUILDS_DIR = path.join(REPO_ROOT, 'prebuilds', `${process.platform}-${process.arch}`);
/** Runs one scenario against dist/ in a child process and prints its outcome as JSON. */
export const PROBE_SCRIPT = path.join(__dirname, 'native-probe.js');

/**
 * Throws (so that every test of the calling describe fails with this message) when the
 * TypeScript or the addon has not been built: these tests exercise the build outputs.
 */
export function requireBuild(): void {
  const missing: string[] = [];
  if (!fs.existsSync(DIST_INDEX)) missing.push(`${DIST_INDEX} (run \`npm run build:ts\`)`);
  if (!fs.existsSync(BUILT_ADDON)) missing.push(`${BUILT_ADDON} (run \`npm run build:native\`)`);
  if (missing.length > 0) {
    throw new Error(`These tests run the built package; run \`npm run build\` first. Missing:\n  ${missing.join('\n  ')}`);
  }
}

/** Environment variables through which the package can be redirected; never inherited. */
const PACKAGE_ENV = [
  'TENSORRT_NODE_BINARY',
  'TENSORRT_NODE_CUDA_LIBRARY',
  'TENSORRT_NODE_TENSORRT_LIBRARY',
  // The older name of the one above, which the addon still reads.
  'TENSORRT_LIBRARY',
  'TENSORRT_NODE_PREBUILD',
  'TENSORRT_NODE_WORKER_DIR',
];

/** The parent's environment without the package's own variables, plus `overrides`. */
export function childEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of PACKAGE_ENV) delete env[name];
  return { ...env, ...overrides };
}

export interface ChildResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` in the repository root and waits for it (at most `timeout` ms). */
export function runNode(args: string[], env: Record<string, string> = {}, timeout = 30_000): ChildResult {
  const result = spawnSync(process.execPath, args, {
    cwd: REPO_ROOT,
    env: childEnv(env),
    encoding: 'utf8',
    timeout,
  });
  if (result.error) throw result.error;
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `body` (the inside of an async function, with `lib` = the built package) in a child
 * Node process with `env`; `result` is what it returned, as JSON (`{ failed: {code, message,
 * stack} }` when it threw). One process per scenario: the addon keeps the driver it opened.
 */
export function runLibScenario(body: string, env: Record<string, string>, timeout = 60_000): { status: number | null; result: Record<string, unknown>; stderr: string } {
  const script = `
    const lib = require(${JSON.stringify(DIST_INDEX)});
    (async () => { ${body} })().then(
      (value) => console.log(JSON.stringify(value)),
      (e) => { console.log(JSON.stringify({ failed: { code: e.code, message: e.message, stack: e.stack } })); process.exitCode = 1; });`;
  const child = runNode(['-e', script], env, timeout);
  const lines = child.stdout.trim().split('\n');
  return { status: child.status, result: JSON.parse(lines[lines.length - 1] || '{}') as Record<string, unknown>, stderr: child.stderr };
}

/** Runs the built CLI, `node dist/cli/index.js <args>`, like {@link runNode}. */
export function runCli(args: string[], env: Record<string, string> = {}, timeout = 30_000): ChildResult {
  return runNode([DIST_CLI, ...args], env, timeout);
}

/** A thrown value as the probe script serializes it. */
export interface SerializedError {
  name: string;
  code?: string;
  message: string;
  details?: Record<string, unknown>;
  /** `instanceof TensorRTNodeError` of the realm (thread) that caught it. */
  isTensorRTNodeError: boolean;
  hasCause: boolean;
}

export type ProbeOutcome<T = unknown> = { ok: true; value: T } | { ok: false; error: SerializedError };

/**
 * Runs test/helpers/native-probe.js with `mode` and returns what it printed. A crash (signal,
 * non-zero exit, unparsable output) throws with the child's stderr so the failure says why.
 */
export function runProbe<T = unknown>(mode: string, env: Record<string, string> = {}, extra: string[] = []): T {
  const result = runNode([PROBE_SCRIPT, mode, ...extra], env);
  if (result.status !== 0) {
    throw new Error(
      `probe ${mode} exited with status ${result.status} signal ${result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`probe ${mode} printed no JSON:\n${result.stdout}\nstderr: ${result.stderr}`);
  }
}

/** A fresh directory under the OS temp dir; remove it with {@link removeTempDir}. */
export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `trtn-${prefix}-`));
}

export function removeTempDir(dir: string | undefined): void {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
}

/** One file of a packed tarball, as `npm pack --json` lists it. */
export interface PackedFile {
  path: string;
  size: number;
}

export interface PackResult {
  /** Absolute path of the .tgz. */
  tarball: string;
  files: PackedFile[];
}

/**
 * `npm pack` of the built repository into `dest`, without lifecycle scripts: the suite's
 * pretest has built everything, and a rebuild here would race tests that load the addon.
 * Throws when the prebuild is missing, since the tarball would then ship no binary.
 */
export function npmPack(dest: string): PackResult {
  requireBuild();
  const prebuilds = fs.existsSync(PREBUILDS_DIR) ? fs.readdirSync(PREBUILDS_DIR).filter((f) => f.endsWith('.node')) : [];
  if (prebuilds.length === 0) throw new Error(`No prebuild in ${PREBUILDS_DIR}: run \`npm run build\` first`);
  // npm prints warnings on stderr; the JSON is on stdout.
  const result = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`npm pack exited with status ${result.status}:\n${result.stderr}`);
  const [packed] = JSON.parse(result.stdout) as { filename: string; files: PackedFile[] }[];
  return { tarball: path.join(dest, packed!.filename), files: packed!.files };
}

const MLP = path.join(REPO_ROOT, 'test', 'fixtures', 'mlp');

/**
 * A `node -e` script that require()s tensorrt-node as `moduleSpec`, compiles the mlp fixture,
 * runs its input on the program's worker thread and prints `{ ok: true, shape, data }` or
 * `{ ok: false, code, message }`: a run of the installed or copied package, end to end.
 */
export function mlpRunScript(moduleSpec: string): string {
  return [
    "const fs = require('node:fs');",
    `const { compile, Tensor } = require(${JSON.stringify(moduleSpec)});`,
    '(async () => {',
    `  const bytes = fs.readFileSync(${JSON.stringify(path.join(MLP, 'input0.bin'))});`,
    '  const input = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));',
    `  const program = await compile(${JSON.stringify(path.join(MLP, 'model.onnx'))}, { inputs: { input0: { shape: [4, 32] } } });`,
    '  try {',
    "    const [out] = await program.run([new Tensor('float32', [4, 32], input)]);",
    '    console.log(JSON.stringify({ ok: true, shape: out.shape, data: Array.from(out.data) }));',
    '  } catch (e) {',
    '    console.log(JSON.stringify({ ok: false, code: e.code, message: e.message }));',
    '  } finally {',
    '    await program.dispose();',
    '  }',
    '})();',
  ].join('\n');
}

/** What {@link mlpRunScript} printed. */
export type MlpRunOutcome = { ok: true; shape: number[]; data: number[] } | { ok: false; code: string; message: string };

/** The mlp fixture's output as PyTorch computed it (float32 [4, 10]). */
export function mlpReference(): number[] {
  const bytes = fs.readFileSync(path.join(MLP, 'output0.bin'));
  return Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
}
