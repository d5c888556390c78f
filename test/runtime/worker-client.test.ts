/**
 * Where a program's worker script is started from: beside the module, in the package's dist/,
 * in Electron's app.asar.unpacked, or where TENSORRT_NODE_WORKER_DIR says (bundlers).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { InternalError, InvalidArgumentError } from '../../lib/errors';
import { resolveWorkerScript, WORKER_DIR_ENV } from '../../lib/runtime/worker/worker-client';
import { DIST_INDEX, makeTempDir, mlpReference, mlpRunScript, removeTempDir, REPO_ROOT, runNode, type MlpRunOutcome } from '../helpers/built-package';

const APP = path.join(path.sep, 'opt', 'MyApp', 'resources');
const IN_ASAR = path.join(APP, 'app.asar', 'node_modules', 'tensorrt-node');
const UNPACKED = path.join(APP, 'app.asar.unpacked', 'node_modules', 'tensorrt-node');

/** An `exists` that knows exactly `files`. */
const only =
  (...files: string[]) =>
  (file: string): boolean =>
    files.includes(file);

describe('resolveWorkerScript', () => {
  test('a build finds the script beside the module', () => {
    const here = path.join(REPO_ROOT, 'dist', 'runtime', 'worker');
    const script = path.join(here, 'worker.js');
    expect(resolveWorkerScript('worker.js', 'program worker', { here, packageRoot: REPO_ROOT }, only(script))).toBe(script);
  });

  test('sources run directly (lib/runtime/worker) use the built copy in dist/runtime/worker', () => {
    const built = path.join(REPO_ROOT, 'dist', 'runtime', 'worker', 'worker.js');
    const places = { here: path.join(REPO_ROOT, 'lib', 'runtime', 'worker'), packageRoot: REPO_ROOT };
    expect(resolveWorkerScript('worker.js', 'program worker', places, only(built))).toBe(built);
  });

  test('inside app.asar, the unpacked copy is preferred: a worker cannot start from the archive', () => {
    const places = { here: path.join(IN_ASAR, 'dist', 'runtime', 'worker'), packageRoot: IN_ASAR };
    const unpacked = path.join(UNPACKED, 'dist', 'runtime', 'worker', 'worker.js');
    const archived = path.join(IN_ASAR, 'dist', 'runtime', 'worker', 'worker.js');
    expect(resolveWorkerScript('worker.js', 'program worker', places, only(unpacked, archived))).toBe(unpacked);
    // Not unpacked: the archive path is still tried (Electron's fs reads inside app.asar).
    expect(resolveWorkerScript('worker.js', 'program worker', places, only(archived))).toBe(archived);
  });

  test(`${WORKER_DIR_ENV} replaces the default places, with the asar rule applied to it too`, () => {
    const places = { here: path.join(REPO_ROOT, 'dist', 'runtime', 'worker'), packageRoot: REPO_ROOT };
    const bundled = path.join(path.sep, 'srv', 'bundle', 'runtime');
    const both = only(path.join(bundled, 'worker.js'), path.join(places.here, 'worker.js'));
    expect(resolveWorkerScript('worker.js', 'program worker', { ...places, override: bundled }, both)).toBe(path.join(bundled, 'worker.js'));
    const asarDir = path.join(IN_ASAR, 'dist', 'runtime', 'worker');
    const unpacked = path.join(UNPACKED, 'dist', 'runtime', 'worker', 'worker.js');
    expect(resolveWorkerScript('worker.js', 'program worker', { ...places, override: asarDir }, only(unpacked))).toBe(unpacked);
  });

  test('a script of another folder (the compile worker) is looked up in its own folder, and relative to the override', () => {
    const folder = path.join('compile', 'worker');
    const built = path.join(REPO_ROOT, 'dist', 'compile', 'worker', 'compile-worker.js');
    const places = { here: path.join(REPO_ROOT, 'lib', 'compile', 'worker'), packageRoot: REPO_ROOT, folder };
    expect(resolveWorkerScript('compile-worker.js', 'compile worker', places, only(built))).toBe(built);
    // The override names a copy's dist/runtime/worker; the compile worker is two folders up, in compile/worker.
    const copy = path.join(path.sep, 'srv', 'copy', 'dist');
    const copied = path.join(copy, 'compile', 'worker', 'compile-worker.js');
    const overridden = { ...places, override: path.join(copy, 'runtime', 'worker') };
    expect(resolveWorkerScript('compile-worker.js', 'compile worker', overridden, only(copied, built))).toBe(copied);
  });

  test(`an ${WORKER_DIR_ENV} without the script is an E_INVALID_ARGUMENT naming the variable and the paths`, () => {
    const places = { here: path.join(REPO_ROOT, 'dist', 'runtime', 'worker'), packageRoot: REPO_ROOT, override: '/srv/empty' };
    const call = (): string => resolveWorkerScript('tensor-parallel-worker.js', 'tensor-parallel worker', places, only(path.join(places.here, 'tensor-parallel-worker.js')));
    expect(call).toThrow(InvalidArgumentError);
    expect(call).toThrow(`${WORKER_DIR_ENV} is /srv/empty, but the tensor-parallel worker script tensor-parallel-worker.js is not there`);
    expect(call).toThrow(path.join('/srv/empty', 'tensor-parallel-worker.js'));
  });

  test('an unbuilt package is an E_INTERNAL that says to build', () => {
    const call = (): string => resolveWorkerScript('worker.js', 'program worker', { here: '/x/lib/runtime', packageRoot: '/x' }, only());
    expect(call).toThrow(InternalError);
    expect(call).toThrow('run `npm run build`');
  });
});

describe(`${WORKER_DIR_ENV} in a running program (child process, built package)`, () => {
  let tmp: string | undefined;
  const script = mlpRunScript(DIST_INDEX);

  beforeAll(() => {
    if (!fs.existsSync(DIST_INDEX)) throw new Error('dist/ is missing: run `npm run build:ts` first');
    tmp = makeTempDir('worker-dir');
  });
  afterAll(() => removeTempDir(tmp));

  test('a copy of dist/ elsewhere runs the model, with the outputs PyTorch computed', () => {
    // As an app would ship it: the package's dist/ and package.json copied, its dependencies
    // resolvable beside them.
    const copy = path.join(tmp!, 'app');
    fs.cpSync(path.join(REPO_ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(copy, 'package.json'));
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    const result = runNode(['-e', script], { [WORKER_DIR_ENV]: path.join(copy, 'dist', 'runtime', 'worker') });
    const out = JSON.parse(result.stdout) as MlpRunOutcome;
    if (!out.ok) throw new Error(`the run failed: ${out.code}: ${out.message}`);
    const reference = mlpReference();
    expect(out.shape).toEqual([4, 10]);
    expect(out.data).toHaveLength(reference.length);
    out.data.forEach((v, i) => expect(Math.abs(v - reference[i]!)).toBeLessThan(1e-5));
  });

  test('a directory without the worker rejects the run with E_INVALID_ARGUMENT naming the variable', () => {
    const empty = path.join(tmp!, 'empty');
    fs.mkdirSync(empty);
    const result = runNode(['-e', script], { [WORKER_DIR_ENV]: empty });
    expect(JSON.parse(result.stdout)).toEqual({
      ok: false,
      code: 'E_INVALID_ARGUMENT',
      message: expect.stringContaining(`${WORKER_DIR_ENV} is ${empty}, but the program worker script worker.js is not there`),
    });
  });
});
