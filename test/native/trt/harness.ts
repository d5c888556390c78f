/**
 * Builds and drives the TensorRT part of the addon against the recording TensorRT double
 * (scripts/fake-nvinfer): the double is generated from the TensorRT headers and compiled, and
 * native/trt is compiled with -Wall -Wextra -Werror into a small driver (driver.cc), both
 * cached in the temp directory by a hash of their sources. Needs the TensorRT 10 headers:
 * TENSORRT_INCLUDE_DIR, or ../shared/third_party/tensorrt-10.16/include beside the repository.
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
const SHARED_HEADERS = path.join(ROOT, '..', 'shared', 'third_party', 'tensorrt-10.16', 'include');

/** The TensorRT include directory to test against, or why there is none. */
export function tensorrtHeaders(): { dir: string } | { skip: string } {
  const named = process.env.TENSORRT_INCLUDE_DIR;
  const dir = named !== undefined && named !== '' ? named : SHARED_HEADERS;
  if (fs.existsSync(path.join(dir, 'NvInferImpl.h'))) return { dir };
  return {
    skip:
      `TensorRT headers not found (TENSORRT_INCLUDE_DIR ${named === undefined ? 'unset' : `= ${named}`}, and no ${SHARED_HEADERS}): ` +
      'the TensorRT replay and runtime tests are skipped',
  };
}

const NATIVE = ['native/trt/build.cc', 'native/trt/runtime.cc', 'native/trt/library.cc', 'native/common/dynlib.cc'];
const DRIVER = 'test/native/trt/driver.cc';
const FAKE = ['scripts/fake-nvinfer/generate.js', 'scripts/fake-nvinfer/fake_support.cc', 'scripts/fake-nvinfer/fake_support.h', 'scripts/fake-nvinfer/behaviour.inc', 'scripts/fake-nvinfer/exports.map'];

function hashOf(files: string[], extra: string): string {
  const h = createHash('sha256').update(extra);
  for (const f of files) h.update(f).update(fs.readFileSync(path.join(ROOT, f)));
  for (const f of fs.readdirSync(path.join(ROOT, 'native', 'trt')).sort()) {
    const p = path.join(ROOT, 'native', 'trt', f);
    if (fs.statSync(p).isFile()) h.update(f).update(fs.readFileSync(p));
  }
  return h.digest('hex').slice(0, 16);
}

/** Compiler flags of the TensorRT part: its headers as system headers (their own warnings are not ours). */
export const tensorrtFlags = (include: string): string[] => ['-std=c++17', '-DTRTN_WITH_TENSORRT', '-isystem', path.join(ROOT, 'native/trt/cuda_stub'), '-isystem', include];

/** Runs `build` into a fresh temp directory unless `out` exists; concurrent test files race safely. */
function cached(out: string, build: (tmp: string) => void): string {
  if (fs.existsSync(out)) return out;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-build-'));
  build(tmp);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.renameSync(path.join(tmp, path.basename(out)), out);
  return out;
}

export interface Built {
  /** The fake libnvinfer.so.10. */
  library: string;
  /** The test driver (native/trt without N-API). */
  driver: string;
  /** What the generator reported: { classes, methods, shells }. */
  generated: { classes: number; methods: number; shells: number };
}

export function buildAll(include: string): Built {
  const dir = path.join(os.tmpdir(), `tensorrt-node-trt-${hashOf([...NATIVE, DRIVER, ...FAKE], include)}`);
  let generated = { classes: 0, methods: 0, shells: 0 };
  const library = cached(path.join(dir, 'fake', 'libnvinfer.so.10'), (tmp) => {
    const source = path.join(tmp, 'fake_nvinfer.gen.cc');
    const report = execFileSync(process.execPath, [path.join(ROOT, FAKE[0]!), include, source], { encoding: 'utf8' });
    fs.writeFileSync(path.join(tmp, 'generated.json'), report);
    const scripts = path.join(ROOT, 'scripts', 'fake-nvinfer');
    execFileSync('g++', [
      ...tensorrtFlags(include), '-I', scripts, '-shared', '-fPIC', '-O0', '-fvisibility=hidden', '-fvisibility-inlines-hidden',
      `-Wl,--version-script=${path.join(scripts, 'exports.map')}`, '-Wl,-soname,libnvinfer.so.10', '-o', path.join(tmp, 'libnvinfer.so.10'),
      source, path.join(scripts, 'fake_support.cc'), '-lpthread',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    fs.mkdirSync(path.join(dir, 'fake'), { recursive: true });
    fs.copyFileSync(path.join(tmp, 'generated.json'), path.join(dir, 'fake', 'generated.json'));
  });
  generated = JSON.parse(fs.readFileSync(path.join(dir, 'fake', 'generated.json'), 'utf8'));
  const driver = cached(path.join(dir, 'driver'), (tmp) => {
    const result = spawnSync('g++', [...tensorrtFlags(include), '-Wall', '-Wextra', '-Werror', '-o', path.join(tmp, 'driver'), path.join(ROOT, DRIVER), ...NATIVE.map((f) => path.join(ROOT, f)), '-ldl', '-lpthread'], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`native/trt does not compile with -Wall -Wextra -Werror:\n${result.stderr}`);
  });
  return { library, driver, generated };
}

/** One recorded TensorRT call. */
export interface Call {
  seq: number;
  obj: string | null;
  m: string;
  args: unknown[];
  ret: unknown;
}

export interface DriverResult {
  /** The final line: {ok: true, ...} or {ok: false, code, message, details}. */
  result: Record<string, unknown>;
  events: Array<Record<string, unknown>>;
  calls: Call[];
}

/** Runs the driver with the double as libnvinfer; FAKE_TRT_FAIL etc. through `env`. */
export function runDriver(built: Built, args: string[], env: Record<string, string> = {}): DriverResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-run-'));
  const log = path.join(dir, 'calls.jsonl');
  try {
    const r = spawnSync(built.driver, args, {
      encoding: 'utf8',
      env: { ...process.env, TENSORRT_NODE_TENSORRT_LIBRARY: built.library, FAKE_TRT_LOG: log, ...env },
      timeout: 60_000,
    });
    const lines = r.stdout.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    if (lines.length === 0) throw new Error(`driver printed nothing (status ${r.status}, signal ${r.signal}): ${r.stderr}`);
    const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Call) : [];
    return { result: lines[lines.length - 1]!, events: lines.slice(0, -1), calls };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A temp file holding `bytes`. */
export function tempFile(dir: string, name: string, bytes: Uint8Array): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** Every file under `dir` (repository-relative), sorted. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)])).sort();
}

/**
 * The addon built with the TensorRT backend (node-gyp with TENSORRT_INCLUDE_DIR, in a temp
 * copy of binding.gyp and native/), cached by a hash of its sources: CI builds the package's
 * own addon without TensorRT, as users without TensorRT get it.
 */
export function buildAddonWithTensorRT(include: string): string {
  const sources = ['binding.gyp', ...filesUnder('native')];
  const h = createHash('sha256').update(include).update(process.version);
  for (const f of sources) h.update(f).update(fs.readFileSync(path.join(ROOT, f)));
  const out = path.join(os.tmpdir(), `tensorrt-node-addon-trt-${h.digest('hex').slice(0, 16)}`, 'tensorrt_node.node');
  return cached(out, (tmp) => {
    const work = path.join(tmp, 'src');
    fs.mkdirSync(work);
    fs.cpSync(path.join(ROOT, 'native'), path.join(work, 'native'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'binding.gyp'), path.join(work, 'binding.gyp'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'));
    const r = spawnSync(process.execPath, [require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] }), 'rebuild'], {
      cwd: work,
      env: { ...process.env, TENSORRT_INCLUDE_DIR: include, TENSORRT_ROOT: '' },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`node-gyp with TENSORRT_INCLUDE_DIR failed:\n${r.stdout}\n${r.stderr}`);
    fs.copyFileSync(path.join(work, 'build', 'Release', 'tensorrt_node.node'), path.join(tmp, 'tensorrt_node.node'));
  });
}

/** What a TensorRT test suite gets once its beforeAll has run. */
export interface TrtContext {
  include: string;
  built: Built;
  /** A temp directory of the suite, removed after it. */
  tmp: string;
}

/**
 * describe() with the double and driver built (and `prepare` run) before the suite; without
 * TensorRT headers the suite is skipped, saying why on stderr.
 */
export function describeWithTensorRT(title: string, body: (ctx: TrtContext) => void, prepare?: (ctx: TrtContext) => void, timeout = 240_000): void {
  const headers = tensorrtHeaders();
  if ('skip' in headers) {
    process.stderr.write(`${headers.skip}\n`);
    describe.skip(title, () => body({ include: '', built: undefined as never, tmp: '' }));
    return;
  }
  describe(title, () => {
    const ctx = { include: headers.dir } as TrtContext;
    beforeAll(() => {
      ctx.built = buildAll(headers.dir);
      ctx.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-test-'));
      prepare?.(ctx);
    }, timeout);
    afterAll(() => {
      if (ctx.tmp) fs.rmSync(ctx.tmp, { recursive: true, force: true });
    });
    body(ctx);
  });
}
