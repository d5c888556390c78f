/**
 * Builds a CPU executable from one generated kernel source: an emulation prelude defining the
 * CUDA built-ins the kernels use, the source itself, and a main() that reads a launch (grid,
 * block, packed argument bytes, where each pointer argument points, the buffers), runs every
 * thread of every block, and writes the buffers back. A kernel that never synchronizes runs
 * its threads one after another, which is exact for it and fast. A cooperative kernel (one
 * that calls __syncthreads or a warp shuffle) runs each thread of a block as a ucontext fiber
 * (fibers.ts); blocks still run one after another, so `__shared__` is function-static storage.
 * Executables are cached on disk by a hash of their text; AddressSanitizer turns an
 * out-of-bounds access into a failed launch.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { KernelSource } from '../../../lib/backends/cuda/layers';
import { FIBERS, isCooperative } from './fibers';

const EMULATION = String.raw`
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct uint3 { unsigned x, y, z; };
static uint3 threadIdx, blockIdx, blockDim, gridDim;
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
${FIBERS}
`;

/** The kernel's parameter types, in order, from its extern "C" signature. */
export function parameterTypes(kernel: KernelSource): string[] {
  const match = new RegExp(`extern\\s+"C"\\s+__global__\\s+void\\s+${kernel.entry}\\s*\\(([^)]*)\\)`).exec(kernel.source);
  if (!match) throw new Error(`cuda emulator: no extern "C" __global__ ${kernel.entry}(...) in ${kernel.key}`);
  const list = match[1]!.trim();
  if (list === '') return [];
  return list.split(',').map((p) => {
    const param = p.trim();
    const name = /[A-Za-z_][A-Za-z0-9_]*$/.exec(param);
    if (!name) throw new Error(`cuda emulator: cannot read parameter "${param}" of ${kernel.entry}`);
    return param.slice(0, name.index).replace(/__restrict__/g, '').trim();
  });
}

function mainFor(kernel: KernelSource): string {
  const types = parameterTypes(kernel);
  const fields = types.map((t, i) => `  ${t} p${i};`).join('\n');
  const call = `${kernel.entry}(${types.map((_, i) => `emu_args.p${i}`).join(', ')})`;
  const threads = isCooperative(kernel.source)
    ? 'emu_run_block(emu_thread);'
    : `for (unsigned tz = 0; tz < blockDim.z; ++tz)
          for (unsigned ty = 0; ty < blockDim.y; ++ty)
            for (unsigned tx = 0; tx < blockDim.x; ++tx) {
              threadIdx = {tx, ty, tz};
              emu_thread();
            }`;
  return String.raw`
struct EmuArgs {
${fields}
  char pad_;
};
static EmuArgs emu_args;
static void emu_thread() { ${call}; }
static void readAll(FILE* f, void* p, size_t n) { if (n && fread(p, 1, n, f) != n) { fprintf(stderr, "short read\n"); exit(2); } }
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  unsigned head[8];
  readAll(f, head, sizeof head);
  unsigned argBytes = head[6], nPointers = head[7];
  unsigned char* args = (unsigned char*)calloc(argBytes + 64, 1);
  readAll(f, args, argBytes);
  unsigned* pointers = (unsigned*)malloc(sizeof(unsigned) * 4 * (nPointers + 1));
  readAll(f, pointers, sizeof(unsigned) * 4 * nPointers);
  unsigned nBuffers;
  readAll(f, &nBuffers, 4);
  unsigned char** buffers = (unsigned char**)malloc(sizeof(void*) * (nBuffers + 1));
  unsigned long long* sizes = (unsigned long long*)malloc(8 * (nBuffers + 1));
  for (unsigned b = 0; b < nBuffers; ++b) {
    readAll(f, &sizes[b], 8);
    buffers[b] = (unsigned char*)malloc(sizes[b] ? sizes[b] : 1);
    readAll(f, buffers[b], sizes[b]);
  }
  fclose(f);
  for (unsigned k = 0; k < nPointers; ++k) {
    unsigned at = pointers[4 * k], buffer = pointers[4 * k + 1];
    unsigned long long offset = (unsigned long long)pointers[4 * k + 2] | ((unsigned long long)pointers[4 * k + 3] << 32);
    if (buffer >= nBuffers) { fprintf(stderr, "pointer %u names buffer %u of %u\n", k, buffer, nBuffers); return 2; }
    unsigned char* p = buffers[buffer] + offset;
    memcpy(args + at, &p, sizeof p);
  }
  memcpy(&emu_args, args, argBytes < sizeof emu_args ? argBytes : sizeof emu_args);
  gridDim = {head[0], head[1], head[2]};
  blockDim = {head[3], head[4], head[5]};
  for (unsigned bz = 0; bz < gridDim.z; ++bz)
    for (unsigned by = 0; by < gridDim.y; ++by)
      for (unsigned bx = 0; bx < gridDim.x; ++bx) {
        blockIdx = {bx, by, bz};
        ${threads}
      }
  FILE* o = fopen(argv[2], "wb");
  if (!o) return 2;
  for (unsigned b = 0; b < nBuffers; ++b) if (sizes[b] && fwrite(buffers[b], 1, sizes[b], o) != sizes[b]) return 2;
  fclose(o);
  return 0;
}
`;
}

/** Throws g++'s diagnostics unless `sources`, concatenated into one translation unit (as one module), compile. */
export function checkTogether(sources: readonly KernelSource[]): void {
  const text = `${EMULATION}\n${sources.map((k) => k.source).join('\n')}`;
  const dir = emulatorDir();
  mkdirSync(dir, { recursive: true });
  const src = join(dir, `together.${process.pid}.cc`);
  writeFileSync(src, text);
  try {
    execFileSync('g++', ['-std=c++17', '-fsyntax-only', '-w', src], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`cuda emulator: ${sources.length} sources do not compile as one module:\n${stderr.slice(0, 4000)}`);
  } finally {
    rmSync(src, { force: true });
  }
}

export const emulatorDir = (): string => join(tmpdir(), `trn-cuda-emulator-${process.getuid?.() ?? 0}`);

/** The path of the executable for `kernel`, compiling it (with g++) unless cached. */
export function compileKernel(kernel: KernelSource): string {
  const text = `${EMULATION}\n${kernel.source}\n${mainFor(kernel)}`;
  const flags = ['-std=c++17', '-O1', '-g0', '-fsanitize=address', '-fno-omit-frame-pointer', '-w'];
  const hash = createHash('sha256').update(flags.join(' ')).update('\0').update(text).digest('hex').slice(0, 32);
  const dir = emulatorDir();
  const exe = join(dir, `${hash}.bin`);
  if (existsSync(exe)) return exe;
  mkdirSync(dir, { recursive: true });
  const src = join(dir, `${hash}.${process.pid}.cc`);
  writeFileSync(src, text);
  const tmp = `${exe}.${process.pid}.tmp`;
  try {
    execFileSync('g++', [...flags, '-o', tmp, src], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`cuda emulator: g++ rejected ${kernel.key} (${src}):\n${stderr.slice(0, 4000)}`);
  }
  renameSync(tmp, exe);
  rmSync(src, { force: true });
  return exe;
}
