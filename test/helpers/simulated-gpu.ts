/**
 * A simulated GPU behind the addon's binding (lib/gpu/binding.ts) for tests without a device:
 * device memory is host bytes, copies are byte copies, and the state says what happened
 * (live allocations, copies each way) and what should fail next. A test replaces the binding
 * with `jest.mock('<path>/lib/gpu/binding', () => require('<path>/test/helpers/simulated-gpu').bindingModule)`
 * and reads or sets `simulatedGpu`; `resetSimulatedGpu()` between tests.
 */

/** One allocation of the simulated device. */
export interface SimulatedBuffer {
  /** A made-up device address, unique in the process (what TensorRT's bindings take). */
  address: bigint;
  byteLength: number;
  device: number;
  disposed: boolean;
  data: Uint8Array;
  dispose(): void;
}

export const simulatedGpu = {
  cc: { major: 9, minor: 0 },
  /** Allocations not yet disposed. */
  live: new Set<SimulatedBuffer>(),
  /** An allocation of exactly this many bytes fails (-1: none). */
  failAllocOf: -1,
  /** New allocations hold 0xff bytes (NaN as floats), as a real device's may hold anything; else zeros. */
  dirtyAllocs: false,
  /** Device-to-device copies fail. */
  failCopies: false,
  /** Copies each way, and the strided device-to-device copies (gpuCopyRects' rects). */
  copies: { toHost: 0, toDevice: 0, rects: 0 },
  /**
   * The process's GEMM algorithm choices per device (native/cublaslt's memo: problem → 64 bytes)
   * and its counts; a test's fake GpuPlan.create updates them as the native Prepare would.
   */
  tuning: { choices: new Map<number, Map<string, Uint8Array>>(), timed: 0, reused: 0, overBudget: 0 },
  cublasLtVersion: 130100,
};

export function resetSimulatedGpu(): void {
  simulatedGpu.cc = { major: 9, minor: 0 };
  simulatedGpu.failAllocOf = -1;
  simulatedGpu.failCopies = false;
  simulatedGpu.dirtyAllocs = false;
  simulatedGpu.copies = { toHost: 0, toDevice: 0, rects: 0 };
  simulatedGpu.tuning = { choices: new Map(), timed: 0, reused: 0, overBudget: 0 };
  simulatedGpu.cublasLtVersion = 130100;
}

/** The simulated process's GEMM choices on `ordinal`. */
export function simulatedChoices(ordinal: number): Map<string, Uint8Array> {
  let choices = simulatedGpu.tuning.choices.get(ordinal);
  if (choices === undefined) simulatedGpu.tuning.choices.set(ordinal, (choices = new Map()));
  return choices;
}

let nextAddress = 0x7f0000000000n;

/** The live allocation at device address `address` (a fake native engine writes its outputs there). */
export function simulatedBufferAt(address: bigint): SimulatedBuffer {
  for (const b of simulatedGpu.live) if (b.address === address) return b;
  throw new Error(`no live simulated allocation at 0x${address.toString(16)}`);
}

const bytes = (v: ArrayBuffer | ArrayBufferView): Uint8Array => (v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength));

const binding = {
  gpuDevice: async (ordinal: number) => ({
    ordinal,
    computeCapabilityMajor: simulatedGpu.cc.major,
    computeCapabilityMinor: simulatedGpu.cc.minor,
    freeBytes: 1 << 30,
    totalBytes: 1 << 30,
  }),
  gpuAlloc: async (ordinal: number, n: number) => {
    if (n === simulatedGpu.failAllocOf) throw new Error(`out of memory (simulated) allocating ${n} bytes`);
    nextAddress += 1n << 20n;
    const b: SimulatedBuffer = {
      address: nextAddress,
      byteLength: n,
      device: ordinal,
      disposed: false,
      data: new Uint8Array(n).fill(simulatedGpu.dirtyAllocs ? 0xff : 0),
      dispose() {
        b.disposed = true;
        simulatedGpu.live.delete(b);
      },
    };
    simulatedGpu.live.add(b);
    return b;
  },
  gpuCopyHtoD: async (dst: SimulatedBuffer, at: number, src: ArrayBuffer | ArrayBufferView) => {
    simulatedGpu.copies.toDevice++;
    dst.data.set(bytes(src), at);
  },
  gpuCopyDtoH: async (src: SimulatedBuffer, at: number, dst: ArrayBuffer | ArrayBufferView) => {
    simulatedGpu.copies.toHost++;
    const out = bytes(dst);
    out.set(src.data.subarray(at, at + out.byteLength));
  },
  gpuCopyDtoD: async (dst: SimulatedBuffer, dAt: number, src: SimulatedBuffer, sAt: number, n: number) => {
    if (simulatedGpu.failCopies) throw new Error('copy failed (simulated)');
    dst.data.set(src.data.subarray(sAt, sAt + n), dAt);
  },
  gpuCopyRects: async (fills: Array<[SimulatedBuffer, number, number]>, rects: Array<[SimulatedBuffer, number, number, SimulatedBuffer, number, number, number, number]>) => {
    if (simulatedGpu.failCopies) throw new Error('copy failed (simulated)');
    for (const [b, at, n] of fills) b.data.fill(0, at, at + n);
    for (const [dst, dAt, dPitch, src, sAt, sPitch, width, height] of rects) {
      simulatedGpu.copies.rects++;
      for (let row = 0; row < height; row++) dst.data.set(src.data.subarray(sAt + row * sPitch, sAt + row * sPitch + width), dAt + row * dPitch);
    }
  },
  gpuLoadModule: async (_ordinal: number, image: Uint8Array, kernels: string[]) => ({ kernels, image: new TextDecoder().decode(image), dispose: () => undefined }),
  cublasLtInfo: async () => ({ libraryPath: 'libcublasLt.so.13 (simulated)', version: simulatedGpu.cublasLtVersion }),
  gpuTunedGemms: (ordinal: number) => [...simulatedChoices(ordinal)].map(([problem, algo]) => ({ problem, algo })),
  gpuSeedTunedGemms: (ordinal: number, entries: Array<{ problem: string; algo: Uint8Array }>) => {
    const choices = simulatedChoices(ordinal);
    let taken = 0;
    for (const e of entries) {
      if (choices.has(e.problem)) continue;
      choices.set(e.problem, e.algo);
      taken++;
    }
    return taken;
  },
  gpuTuningCounts: () => ({ timed: simulatedGpu.tuning.timed, reused: simulatedGpu.tuning.reused, overBudget: simulatedGpu.tuning.overBudget }),
};

/** What jest.mock returns for lib/gpu/binding. */
export const bindingModule = { gpuBinding: () => binding };
