/**
 * The tensorrt engine (lib/backends/tensorrt/run.ts) with an output whose size the run decides
 * (a nonzero's: -1 in the shapes TensorRT gives before the run), over a fake native engine and
 * the simulated device: no memory is allocated or bound for it before the run, the program's
 * maxTensorBytes reaches the native run, and the output comes back as a DeviceTensor of the
 * notified shape holding the bytes the run's memory held; failures leave nothing allocated.
 */
import { tensorrtEngine } from '../../../lib/backends/tensorrt/run';
import type { NativeDecidedOutputs, NativeTensorRTEngine } from '../../../lib/backends/tensorrt/binding';
import { DeviceTensor, toDevice } from '../../../lib/gpu/device-tensor';
import { Tensor } from '../../../lib/ir/tensor';
import { ResourceLimitError, TensorRTNodeError } from '../../../lib/errors';
import { resetSimulatedGpu, simulatedBufferAt, simulatedGpu } from '../../helpers/simulated-gpu';

jest.mock('../../../lib/gpu/binding', () => require('../../helpers/simulated-gpu').bindingModule);

const SIGNATURE = { inputNames: ['x'], outputNames: ['y', 'idx'] };

interface Seen {
  addresses?: Record<string, bigint>;
  maxTensorBytes?: number;
  moved?: Record<string, readonly [bigint, number]>;
  disposed: number;
}

/**
 * A native engine: y float32 [2] (fixed, filled with 7s) and idx int64 [2, -1]; its run
 * "decides" `positions` (2 rows of N), or rejects with `fail`.
 */
function fakeNative(seen: Seen, positions: bigint[][] | undefined, fail?: Error): NativeTensorRTEngine {
  return {
    io: () => [
      { name: 'x', input: true, dataType: 0, dims: [2] },
      { name: 'y', input: false, dataType: 0, dims: [2] },
      { name: 'idx', input: false, dataType: 8, dims: [2, -1] },
    ],
    outputShapes: () => ({ y: [2], idx: [2, -1] }),
    run: async (_shapes: unknown, addresses: Record<string, bigint>, _ordinal: number, maxTensorBytes: number): Promise<NativeDecidedOutputs | undefined> => {
      seen.addresses = { ...addresses };
      seen.maxTensorBytes = maxTensorBytes;
      if (fail !== undefined) throw fail;
      new Float32Array(simulatedBufferAt(addresses.y!).data.buffer).fill(7);
      const n = positions?.[0]?.length ?? 0;
      return {
        shapes: positions === undefined ? {} : { idx: [2, n] },
        allocatedBytes: { idx: Math.max(16 * n, 1) },
        moveInto: async (into) => {
          seen.moved = into;
          for (const [name, [address, bytes]] of Object.entries(into)) {
            if (name !== 'idx' || bytes === 0) continue;
            new BigInt64Array(simulatedBufferAt(address).data.buffer).set(positions!.flat());
          }
        },
        dispose: () => {
          seen.disposed++;
        },
      };
    },
    dispose: () => undefined,
  } as unknown as NativeTensorRTEngine;
}

describe('the tensorrt engine with an output sized by the run', () => {
  beforeEach(() => resetSimulatedGpu());

  test('binds no memory for it, passes maxTensorBytes, and returns a DeviceTensor of the notified shape with the run’s bytes', async () => {
    const x = await toDevice(Tensor.from('float32', [2], [0, 3]), 0);
    const live = simulatedGpu.live.size;
    const seen: Seen = { disposed: 0 };
    const out = await tensorrtEngine(fakeNative(seen, [[0n, 1n, 1n], [1n, 0n, 1n]]), SIGNATURE, 0).run({ x }, { maxTensorBytes: 4096 });
    expect(Object.keys(seen.addresses!).sort()).toEqual(['x', 'y']);
    expect(seen.maxTensorBytes).toBe(4096);
    const idx = out.idx as DeviceTensor;
    expect(idx).toBeInstanceOf(DeviceTensor);
    expect([idx.dtype, [...idx.shape]]).toEqual(['int64', [2, 3]]);
    expect(seen.moved).toEqual({ idx: [(idx.buffer as { address: bigint }).address, 48] });
    expect(Array.from((await idx.toHost()).data as BigInt64Array)).toEqual([0n, 1n, 1n, 1n, 0n, 1n]);
    expect(Array.from((await (out.y as DeviceTensor).toHost()).data as Float32Array)).toEqual([7, 7]);
    expect(simulatedGpu.live.size).toBe(live + 2);
    // Without limits the run has no bound (0).
    await tensorrtEngine(fakeNative(seen, [[0n], [0n]]), SIGNATURE, 0).run({ x });
    expect(seen.maxTensorBytes).toBe(0);
  });

  test('a count of 0 is an empty [2, 0] tensor', async () => {
    const x = await toDevice(Tensor.from('float32', [2], [0, 0]), 0);
    const seen: Seen = { disposed: 0 };
    const out = await tensorrtEngine(fakeNative(seen, [[], []]), SIGNATURE, 0).run({ x });
    const idx = out.idx as DeviceTensor;
    expect([idx.dtype, [...idx.shape], idx.byteLength]).toEqual(['int64', [2, 0], 0]);
    expect(seen.moved).toEqual({ idx: [expect.any(BigInt), 0] });
  });

  test('a run refused for the output’s size (E_RESOURCE_LIMIT) frees the outputs allocated before it', async () => {
    const x = await toDevice(Tensor.from('float32', [2], [1, 1]), 0);
    const live = simulatedGpu.live.size;
    const seen: Seen = { disposed: 0 };
    const refusal = new ResourceLimitError('output "idx" of the TensorRT engine needs 80 bytes this run, more than maxTensorBytes (64)', { details: { output: 'idx' } });
    await expect(tensorrtEngine(fakeNative(seen, undefined, refusal), SIGNATURE, 0).run({ x }, { maxTensorBytes: 64 })).rejects.toMatchObject({ code: 'E_RESOURCE_LIMIT', details: { output: 'idx' } });
    expect(simulatedGpu.live.size).toBe(live);
  });

  test('a run that reports no shape for it is E_INTERNAL, and the run’s memory is freed with the outputs', async () => {
    const x = await toDevice(Tensor.from('float32', [2], [1, 1]), 0);
    const live = simulatedGpu.live.size;
    const seen: Seen = { disposed: 0 };
    const run = tensorrtEngine(fakeNative(seen, undefined), SIGNATURE, 0).run({ x });
    await expect(run).rejects.toThrow(TensorRTNodeError);
    await expect(run).rejects.toMatchObject({ code: 'E_INTERNAL', message: expect.stringContaining('no shape for output "idx"') });
    expect(seen.disposed).toBe(1);
    expect(simulatedGpu.live.size).toBe(live);
  });
});
