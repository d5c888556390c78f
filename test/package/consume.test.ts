/**
 * Pack and consume: the tarball `npm pack` makes, installed into a fresh project the way a
 * user installs it, must work there: require and import (the main entry and the `/ir`
 * subpath), type-check with skipLibCheck off under node16 and bundler resolution, run its
 * CLI, find its prebuilt addon, run a model on its worker thread (the outputs compared with PyTorch's), and load program
 * files saved here whose engines cannot run there (onnxruntime and cuda engines: rebuilt with a warning). The install is offline (npm's
 * cache, which the repository's `npm ci` filled) and must run no script of tensorrt-node.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { cudaBackend } from '../../lib/backends/cuda';
import { buildCudaEngine } from '../../lib/backends/cuda/build';
import { compile } from '../../lib/compile';
import { DEFAULT_BUILD_CONFIG } from '../../lib/engine/build-config';
import { serializeNetworkToBuffer } from '../../lib/network/serialize';
import type { PartitionReport } from '../../lib/partitioning/partition';
import { saveProgramBuffer } from '../../lib/runtime/program-file';
import type { ProgramData } from '../../lib/runtime/segments';
import { fakeCompiler, fakeLowering, staticNetwork } from '../backends/cuda/helpers';
import { childEnv, makeTempDir, mlpReference, mlpRunScript, npmPack, removeTempDir, REPO_ROOT, type MlpRunOutcome } from '../helpers/built-package';
import { h200EngineDevice } from '../helpers/devices';
import { FIXTURES } from '../helpers/fixtures';

const TSC = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const MLP_DIR = path.join(FIXTURES, 'mlp');

/**
 * A program file of one cuda engine (exp of x [2, 3], built here with the test lowering and
 * compiler, as test/backends/cuda/program-file.test.ts does) for an H200, with its Network kept.
 */
async function expCudaProgram(): Promise<Uint8Array> {
  const engine = await buildCudaEngine(staticNetwork(), DEFAULT_BUILD_CONFIG, { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } }, { lower: fakeLowering(), compile: fakeCompiler() });
  const { timingCache: _none, ...build } = DEFAULT_BUILD_CONFIG;
  const data: ProgramData = {
    inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [2, 3] }],
    outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [2, 3] }],
    segments: [{ kind: 'engine', backend: 'cuda', engine, inputs: ['x'], outputs: ['y'], device: h200EngineDevice('cuda', cudaBackend.version), source: { network: serializeNetworkToBuffer(staticNetwork()), build } }],
    constants: {},
  };
  return saveProgramBuffer({ data, report: { ops: [], segments: [] } as unknown as PartitionReport, backend: 'cuda', symbolRanges: new Map() });
}
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };

interface LockEntry {
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

/**
 * The consumer's package-lock: the repository's entries for tensorrt-node's dependency closure
 * (so an offline install finds every version in npm's cache without asking the registry), and
 * none for tensorrt-node itself, which npm reads from the tarball as a first install does.
 */
function consumerLock(tarballSpec: string): object {
  const repoLock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', version: '1.0.0', dependencies: { 'tensorrt-node': tarballSpec } },
  };
  const pending = Object.keys(pkg.dependencies);
  while (pending.length > 0) {
    const name = pending.pop()!;
    const key = `node_modules/${name}`;
    if (packages[key] !== undefined) continue;
    const entry = repoLock.packages[key];
    if (entry === undefined) throw new Error(`package-lock.json has no hoisted ${key}`);
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    packages[key] = kept;
    pending.push(...Object.keys(entry.dependencies ?? {}));
  }
  return { name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeout = 60_000): Run {
  const result = spawnSync(command, args, { cwd, env: childEnv(), encoding: 'utf8', timeout });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs and returns stdout; a non-zero exit fails with the command's output. */
function ok(command: string, args: string[], cwd: string, timeout?: number): string {
  const result = run(command, args, cwd, timeout);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  return result.stdout;
}

const CONSUMER_TS = `
import { compile, isTensorRTAvailable, Program, Tensor, TensorRTNodeError, VERSION, type DoctorReport } from 'tensorrt-node';
import { Graph, printGraph, tensorType, type LayerKind } from 'tensorrt-node/ir';

export async function main(model: string, input: Float32Array): Promise<number[]> {
  const available: boolean = await isTensorRTAvailable();
  const program: Program = await compile(model, { inputs: { input0: { shape: [4, 32] } }, backend: available ? 'tensorrt' : 'reference' });
  try {
    const [out] = await program.run([new Tensor('float32', [4, 32], input)]);
    return Array.from(out!.data as Float32Array);
  } catch (error) {
    if (error instanceof TensorRTNodeError) throw new Error(\`\${error.code}: \${error.message} (\${VERSION})\`);
    throw error;
  } finally {
    await program.dispose();
  }
}
export type Addon = DoctorReport['addon'];
// Proves the declarations were read (an untyped or any-typed package would make this line
// valid, and an unused @ts-expect-error is itself an error).
// @ts-expect-error compile is a function, not a number
export const notANumber: number = compile;

// The /ir subpath's declarations: a graph built with them, printed.
export function listing(): string {
  const graph = new Graph('consumer');
  graph.addInput('x', tensorType('float32', [2]));
  return printGraph(graph);
}
export const kind: LayerKind = 'convolution';
// Program is exported for instanceof (which narrows), not for construction.
export const inputCount = (x: unknown): number => (x instanceof Program ? x.inputs.length : -1);
// @ts-expect-error Program has no public constructor
export const made = (): unknown => new Program();
`;

const TSCONFIG_BASE = { strict: true, noEmit: true, skipLibCheck: false, target: 'ES2022', types: ['node'] };

let dir: string | undefined;
let consumer = '';
let tarball = '';

beforeAll(() => {
  dir = makeTempDir('consume');
  tarball = npmPack(dir).tarball;
  consumer = path.join(dir, 'consumer');
  fs.mkdirSync(consumer);
  const spec = `file:${tarball}`;
  const write = (file: string, content: unknown): void =>
    fs.writeFileSync(path.join(consumer, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  // protobufjs's postinstall only prints a version-scheme hint; denied to keep the log clean.
  write('package.json', { name: 'consumer', version: '1.0.0', private: true, dependencies: { 'tensorrt-node': spec }, allowScripts: { protobufjs: false } });
  write('package-lock.json', consumerLock(spec));
  // Scripts stay enabled: tensorrt-node must have none that run (nothing may compile or download).
  ok('npm', ['install', '--offline', '--no-audit', '--no-fund'], consumer, 120_000);

  write('consumer.ts', CONSUMER_TS);
  write('consumer.mts', CONSUMER_TS);
  write('tsconfig.node16.json', { compilerOptions: { ...TSCONFIG_BASE, module: 'node16', moduleResolution: 'node16' }, files: ['consumer.ts', 'consumer.mts'] });
  write('tsconfig.bundler.json', { compilerOptions: { ...TSCONFIG_BASE, module: 'esnext', moduleResolution: 'bundler' }, files: ['consumer.ts'] });
}, 180_000);

afterAll(() => removeTempDir(dir));

const installed = (): string => path.join(consumer, 'node_modules', 'tensorrt-node');

describe('npm install of the packed tarball', () => {
  test('installs the version packed, ran no install script of it and compiled nothing', () => {
    expect(JSON.parse(fs.readFileSync(path.join(installed(), 'package.json'), 'utf8')).version).toBe(pkg.version);
    // A `node-gyp rebuild` would have left build/; a `prepare` would have failed (no scripts/).
    expect(fs.existsSync(path.join(installed(), 'build'))).toBe(false);
    expect(fs.existsSync(path.join(installed(), 'lib'))).toBe(false);
  });

  test('require() and import() give the same module, with the package version', () => {
    const script = [
      "const cjs = require('tensorrt-node');",
      "import('tensorrt-node').then((esm) => {",
      '  const names = Object.keys(cjs).filter((n) => n !== "__esModule");',
      '  const differing = names.filter((n) => esm[n] !== cjs[n]);',
      '  console.log(JSON.stringify({ version: cjs.VERSION, count: names.length, differing, compile: typeof esm.compile, dflt: esm.default === cjs }));',
      '});',
    ].join('\n');
    const out = JSON.parse(ok(process.execPath, ['-e', script], consumer)) as Record<string, unknown>;
    expect(out).toEqual({ version: pkg.version, count: expect.any(Number), differing: [], compile: 'function', dflt: true });
    expect(out.count as number).toBeGreaterThan(50);
  });

  test('require() and import() of tensorrt-node/ir give the same module, holding the graph IR', () => {
    const script = [
      "const cjs = require('tensorrt-node/ir');",
      "import('tensorrt-node/ir').then((esm) => {",
      '  const names = Object.keys(cjs).filter((n) => n !== "__esModule");',
      '  const differing = names.filter((n) => esm[n] !== cjs[n]);',
      "  const main = require('tensorrt-node');",
      '  console.log(JSON.stringify({ differing, graph: typeof esm.Graph, loadOnnx: typeof esm.loadOnnx, dflt: esm.default === cjs, inMain: names.filter((n) => n in main) }));',
      '});',
    ].join('\n');
    const out = JSON.parse(ok(process.execPath, ['-e', script], consumer)) as Record<string, unknown>;
    expect(out).toEqual({ differing: [], graph: 'function', loadOnnx: 'function', dflt: true, inMain: [] });
  });

  test.each(['node16', 'bundler'])('tsc compiles a consumer with skipLibCheck off under %s resolution', (resolution) => {
    const result = run(process.execPath, [TSC, '-p', `tsconfig.${resolution}.json`], consumer);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  test('the installed CLI runs (npx tensorrt-node doctor --json) and loads the packaged prebuild', () => {
    const report = JSON.parse(ok('npx', ['--offline', '--no', 'tensorrt-node', 'doctor', '--json'], consumer)) as {
      tensorrtNode: { version: string };
      addon: { loaded: boolean; source?: string; path?: string };
    };
    expect(report.tensorrtNode.version).toBe(pkg.version);
    if (process.platform === 'linux' && process.arch === 'x64') {
      expect(report.addon).toMatchObject({
        loaded: true,
        source: 'prebuilds',
        path: path.join(fs.realpathSync(installed()), 'prebuilds', 'linux-x64', 'tensorrt-node.napi.glibc.node'),
      });
    }
  });

  test('programs saved here travel: an onnxruntime program and a cuda one load where neither can run (no onnxruntime-node, no GPU), rebuilt with a warning, and give the right answers', async () => {
    expect(fs.existsSync(path.join(consumer, 'node_modules', 'onnxruntime-node'))).toBe(false);
    const ortFile = path.join(dir!, 'mlp-onnxruntime.trtp');
    const ort = await compile(path.join(MLP_DIR, 'model.onnx'), { backend: 'onnxruntime', inputs: { input0: { shape: [4, 32] } } });
    try {
      await ort.save(ortFile);
    } finally {
      await ort.dispose();
    }
    const cudaFile = path.join(dir!, 'exp-cuda.trtp');
    fs.writeFileSync(cudaFile, await expCudaProgram());
    const script = [
      "const fs = require('node:fs');",
      "const { loadProgram, Tensor } = require('tensorrt-node');",
      '(async () => {',
      '  const out = {};',
      `  const bytes = fs.readFileSync(${JSON.stringify(path.join(MLP_DIR, 'input0.bin'))});`,
      '  const input = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));',
      `  for (const [key, file, x] of [['ort', ${JSON.stringify(ortFile)}, new Tensor('float32', [4, 32], input)], ['cuda', ${JSON.stringify(cudaFile)}, Tensor.from('float32', [2, 3], [0, 1, -1, 0.5, 2, -2])]]) {`,
      '    const warnings = [];',
      "    const program = await loadProgram(file, { logger: (level, m) => level === 'warn' && warnings.push(m) });",
      '    try {',
      '      const [y] = await program.run([x]);',
      '      out[key] = { backend: program.backend, warnings, data: Array.from(y.data) };',
      '    } finally {',
      '      await program.dispose();',
      '    }',
      '  }',
      '  console.log(JSON.stringify(out));',
      '})().catch((e) => console.log(JSON.stringify({ failed: `${e.code}: ${e.message}` })));',
    ].join('\n');
    const out = JSON.parse(ok(process.execPath, ['-e', script], consumer, 120_000));
    expect(out.failed).toBeUndefined();
    expect(out.ort.backend).toBe('reference');
    expect(out.ort.warnings).toEqual([expect.stringMatching(/segment 0: the onnxruntime engine cannot run here: onnxruntime-node is not installed.*rebuilt its onnxruntime engine for the reference backend/)]);
    const reference = mlpReference();
    (out.ort.data as number[]).forEach((v, i) => expect(Math.abs(v - reference[i]!)).toBeLessThan(1e-5));
    expect(out.cuda.backend).toBe('reference');
    expect(out.cuda.warnings).toEqual([expect.stringMatching(/segment 0: .*rebuilt its cuda engine for the reference backend/)]);
    (out.cuda.data as number[]).forEach((v, i) => expect(v).toBeCloseTo(Math.exp([0, 1, -1, 0.5, 2, -2][i]!), 5));
  }, 180_000);

  test('runs a model on the installed worker thread and matches PyTorch', () => {
    const out = JSON.parse(ok(process.execPath, ['-e', mlpRunScript('tensorrt-node')], consumer)) as MlpRunOutcome;
    if (!out.ok) throw new Error(`the run failed: ${out.code}: ${out.message}`);
    const reference = mlpReference();
    expect(out.shape).toEqual([4, 10]);
    expect(out.data).toHaveLength(reference.length);
    out.data.forEach((v, i) => expect(Math.abs(v - reference[i]!)).toBeLessThan(1e-5));
  });
});
