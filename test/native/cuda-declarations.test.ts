/**
 * native/cuda/driver_api.h declares the CUDA driver entry points by hand (the addon must build
 * without the CUDA toolkit). native/cuda/check_declarations.cc static_asserts that they match
 * NVIDIA's cuda.h; this test compiles it. A mismatch (a wrong attribute number, a changed
 * signature) would otherwise surface only as wrong answers or a crash on a GPU machine.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { makeTempDir, removeTempDir } from '../helpers/built-package';

const ROOT = path.resolve(__dirname, '..', '..');
const CUDA_DIR = path.join(ROOT, 'native', 'cuda');
const CUDA_HOME = process.env.CUDA_HOME ?? '/usr/local/cuda';
const CUDA_INCLUDE = path.join(CUDA_HOME, 'include');
const haveCudaHeader = fs.existsSync(path.join(CUDA_INCLUDE, 'cuda.h'));

function syntaxCheck(file: string): { status: number | null; stderr: string } {
  const includes = [`-I${CUDA_INCLUDE}`, '-I/usr/include/x86_64-linux-gnu'];
  const result = spawnSync('g++', ['-std=c++17', '-fsyntax-only', ...includes, file], { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { status: result.status, stderr: result.stderr };
}

// CI installs the CUDA headers, so this runs there; a developer machine without them skips.
const describeWithCuda = haveCudaHeader ? describe : describe.skip;
const title = haveCudaHeader
  ? `driver_api.h against ${CUDA_INCLUDE}/cuda.h`
  : `driver_api.h against cuda.h (SKIPPED: no cuda.h in ${CUDA_INCLUDE}; set CUDA_HOME to a CUDA toolkit)`;

describeWithCuda(title, () => {
  test('check_declarations.cc compiles: our declarations match cuda.h', () => {
    const { status, stderr } = syntaxCheck(path.join(CUDA_DIR, 'check_declarations.cc'));
    expect(stderr).toBe('');
    expect(status).toBe(0);
  }, 60_000);

  test('the check catches a wrong constant (the static_asserts are really evaluated)', () => {
    // Negative control: the same check against a copy of driver_api.h with one wrong value.
    const tmp = makeTempDir('cuda-decl');
    try {
      fs.copyFileSync(path.join(CUDA_DIR, 'check_declarations.cc'), path.join(tmp, 'check_declarations.cc'));
      const header = fs.readFileSync(path.join(CUDA_DIR, 'driver_api.h'), 'utf8');
      const broken = header.replace('kAttrMultiprocessorCount = 16;', 'kAttrMultiprocessorCount = 17;');
      expect(broken).not.toBe(header);
      fs.writeFileSync(path.join(tmp, 'driver_api.h'), broken);
      const { status, stderr } = syntaxCheck(path.join(tmp, 'check_declarations.cc'));
      expect(status).not.toBe(0);
      expect(stderr).toContain('multiprocessor count');
    } finally {
      removeTempDir(tmp);
    }
  }, 60_000);
});

describeWithCuda(`runtime_api.h (memory, streams, modules, launches, graphs) against ${CUDA_INCLUDE}/cuda.h`, () => {
  test('check_runtime_declarations.cc compiles: signatures, constants and versioned symbol names match', () => {
    const { status, stderr } = syntaxCheck(path.join(CUDA_DIR, 'check_runtime_declarations.cc'));
    expect(stderr).toBe('');
    expect(status).toBe(0);
  }, 60_000);

  test.each([
    ['a wrong signature', 'size_t bytes, CUstream stream);\nusing PFN_cuMemFreeAsync', 'int bytes, CUstream stream);\nusing PFN_cuMemFreeAsync', 'cuMemAllocAsync'],
    ['an unversioned symbol name', 'X(cuMemGetInfo_v2, "cuMemGetInfo_v2")', 'X(cuMemGetInfo_v2, "cuMemGetInfo")', 'symbol cuMemGetInfo_v2'],
    ['a wrong constant', 'kStreamCaptureModeThreadLocal = 1;', 'kStreamCaptureModeThreadLocal = 0;', 'capture mode'],
  ])('the check catches %s', (_what, from, to, message) => {
    const tmp = makeTempDir('cuda-runtime-decl');
    try {
      fs.mkdirSync(path.join(tmp, 'common'));
      fs.mkdirSync(path.join(tmp, 'cuda'));
      fs.copyFileSync(path.join(ROOT, 'native', 'common', 'signature_check.h'), path.join(tmp, 'common', 'signature_check.h'));
      for (const f of ['check_runtime_declarations.cc', 'driver_api.h']) fs.copyFileSync(path.join(CUDA_DIR, f), path.join(tmp, 'cuda', f));
      const header = fs.readFileSync(path.join(CUDA_DIR, 'runtime_api.h'), 'utf8');
      const broken = header.replace(from, to);
      expect(broken).not.toBe(header);
      fs.writeFileSync(path.join(tmp, 'cuda', 'runtime_api.h'), broken);
      const { status, stderr } = syntaxCheck(path.join(tmp, 'cuda', 'check_runtime_declarations.cc'));
      expect(status).not.toBe(0);
      expect(stderr).toContain(message);
    } finally {
      removeTempDir(tmp);
    }
  }, 60_000);
});

// NVRTC, cuBLASLt and cuDNN headers exist on the GPU machine (scripts/gpu-run.sh compiles
// these checks there) and wherever the toolkit and cuDNN are installed; elsewhere they skip.
const LIBRARY_CHECKS = [
  { header: path.join(CUDA_INCLUDE, 'nvrtc.h'), check: path.join(ROOT, 'native', 'nvrtc', 'check_declarations.cc') },
  { header: path.join(CUDA_INCLUDE, 'cublasLt.h'), check: path.join(ROOT, 'native', 'cublaslt', 'check_declarations.cc') },
  { header: '/usr/include/x86_64-linux-gnu/cudnn.h', check: path.join(ROOT, 'native', 'cudnn', 'check_declarations.cc') },
];
describe.each(LIBRARY_CHECKS)('declarations against $header', ({ header, check }) => {
  const run = fs.existsSync(header) ? test : test.skip;
  run(`${path.relative(ROOT, check)} compiles`, () => {
    const { status, stderr } = syntaxCheck(check);
    expect(stderr).toBe('');
    expect(status).toBe(0);
  }, 60_000);
});
