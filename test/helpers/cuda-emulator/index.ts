/**
 * A CPU stand-in for the GPU plan executor in tests: runs lowered steps over host buffers.
 * Kernel launches run compiled CPU executables of the very kernel sources (see compile.ts);
 * copies and memsets are byte operations; GEMM and convolution steps run as plain float64
 * loops rounded once into their dtype (cuBLASLt and cuDNN stand-ins, independent of the
 * lowerings).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { LoweredStep } from '../../../lib/backends/cuda/layers';
import { packKernelArgs, type Dim3, type KernelArg } from '../../../lib/gpu/plan';
import { compileKernel, emulatorDir } from './compile';
import { view } from './buffers';
import { runConv, runGemm } from './library';

export { checkTogether, compileKernel } from './compile';

let counter = 0;

const dim3 = (d: Dim3): [number, number, number] => [d[0], d[1] ?? 1, d[2] ?? 1];

function launch(exe: string, grid: Dim3, block: Dim3, args: readonly KernelArg[], buffers: Uint8Array[]): void {
  const packed = packKernelArgs(args);
  const head = new Uint32Array([...dim3(grid), ...dim3(block), packed.bytes.length, packed.pointers.length]);
  const pointers = new Uint32Array(packed.pointers.length * 4);
  packed.pointers.forEach((p, k) => {
    const offset = p.slice.offset ?? 0;
    pointers.set([p.at, p.slice.buffer, offset % 2 ** 32, Math.floor(offset / 2 ** 32)], 4 * k);
  });
  const parts: Uint8Array[] = [new Uint8Array(head.buffer), packed.bytes, new Uint8Array(pointers.buffer), new Uint8Array(new Uint32Array([buffers.length]).buffer)];
  for (const b of buffers) {
    parts.push(new Uint8Array(new BigUint64Array([BigInt(b.length)]).buffer), b);
  }
  const id = `${process.pid}.${counter++}`;
  const inPath = join(emulatorDir(), `launch.${id}.in`);
  const outPath = join(emulatorDir(), `launch.${id}.out`);
  writeFileSync(inPath, Buffer.concat(parts));
  try {
    // Fake stacks catch a kernel using a local after its function returned; fibers.ts tells ASan of every stack switch.
    execFileSync(exe, [inPath, outPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0:detect_stack_use_after_return=1' } });
    const result = readFileSync(outPath);
    let at = 0;
    for (const b of buffers) {
      b.set(result.subarray(at, at + b.length));
      at += b.length;
    }
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`cuda emulator: launch of ${exe} failed:\n${stderr.slice(0, 3000)}`);
  } finally {
    rmSync(inPath, { force: true });
    rmSync(outPath, { force: true });
  }
}

/** Runs `steps` in order, modifying `buffers` in place. */
export function runSteps(steps: readonly LoweredStep[], buffers: Uint8Array[]): void {
  for (const step of steps) {
    switch (step.kind) {
      case 'launch':
        launch(compileKernel(step.kernel), step.grid, step.block, step.args, buffers);
        break;
      case 'copy':
        view(buffers, step.dst, step.bytes).set(view(buffers, step.src, step.bytes).slice());
        break;
      case 'memset':
        view(buffers, step.dst, step.bytes).fill(step.value);
        break;
      case 'gemm':
        runGemm(step, buffers);
        break;
      case 'conv':
        runConv(step, buffers);
        break;
    }
  }
}
