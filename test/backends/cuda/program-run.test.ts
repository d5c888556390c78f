/**
 * A program run over a device engine (lib/runtime/execute.ts): host inputs are uploaded
 * through the engine, outputs read back, and every device value the run made (uploads and
 * engine outputs) is freed when the run ends, so that many runs do not hold device memory
 * until finalizers run. The engine is a stand-in on a pretend device 0.
 */
import { cudaBackend } from '../../../lib/backends/cuda';
import type { DeviceValue, RunValue } from '../../../lib/engine/residency';
import type { Engine } from '../../../lib/engine/backend';
import { ProgramExecutor } from '../../../lib/runtime/execute';
import { outputDeviceOf, runsInProcess } from '../../../lib/runtime/in-process';
import type { EngineSegment as EngineSegmentData, ProgramData } from '../../../lib/runtime/segments';
import { Tensor } from '../../../lib/ir/tensor';

/** A device value holding a host tensor, counting disposals. */
function onDevice(t: Tensor, freed: DeviceValue[]): DeviceValue & { dispose(): void } {
  const v = {
    dtype: t.dtype,
    shape: t.shape,
    residency: { kind: 'device', ordinal: 0 } as const,
    toHost: async () => t,
    dispose: () => void freed.push(v),
  };
  return v;
}

/** A doubling engine on pretend device 0 whose outputs are device values, and what it made and freed. */
function doublingEngine(): { engine: Engine; made: DeviceValue[]; freed: DeviceValue[] } {
  const freed: DeviceValue[] = [];
  const made: DeviceValue[] = [];
  const engine: Engine = {
    inputNames: ['x'],
    outputNames: ['y'],
    residency: 'device',
    deviceOrdinal: 0,
    async upload(t) {
      const v = onDevice(t, freed);
      made.push(v);
      return v;
    },
    async run(inputs: Readonly<Record<string, RunValue>>) {
      const x = await (inputs.x as DeviceValue).toHost();
      const y = onDevice(Tensor.from('float32', x.shape, x.toArray().map((v) => 2 * v)), freed);
      made.push(y);
      return { y };
    },
    dispose: () => undefined,
  };
  return { engine, made, freed };
}

test('a run uploads host inputs, reads outputs back, and frees every device value it made', async () => {
  const { engine, made, freed } = doublingEngine();
  const load = jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const data: ProgramData = {
    inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [3] }],
    outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [3] }],
    segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: ['x'], outputs: ['y'] }],
    constants: {},
  };
  const executor = new ProgramExecutor(data);
  try {
    for (let i = 0; i < 3; i++) {
      const [y] = await executor.run([Tensor.from('float32', [3], [1, 2, i])]);
      expect(y!.toArray()).toEqual([2, 4, 2 * i]);
    }
    expect(executor.lastCrossings).toEqual({ hostToDevice: 1, deviceToHost: 1, deviceToDevice: 0 });
    expect(made).toHaveLength(6);
    expect(new Set(freed)).toEqual(new Set(made));
    expect(freed).toHaveLength(6);
  } finally {
    executor.dispose();
    load.mockRestore();
  }
});

describe('device values through a program run', () => {
  const data: ProgramData = {
    inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [3] }],
    outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [3] }],
    segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: ['x'], outputs: ['y'] }],
    constants: {},
  };

  test("a device input is read where it is and left alive; runToDevice hands the engine's output over unfreed", async () => {
    const { engine, made, freed } = doublingEngine();
    const load = jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
    const executor = new ProgramExecutor(data);
    try {
      const callerFreed: DeviceValue[] = [];
      const x = onDevice(Tensor.from('float32', [3], [1, 2, 3]), callerFreed);
      const [y] = await executor.runToDevice([x], 0);
      expect(executor.lastCrossings).toEqual({ hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 });
      expect(y).toBe(made[0]);
      expect((await y!.toHost()).toArray()).toEqual([2, 4, 6]);
      expect(freed).toHaveLength(0);
      expect(callerFreed).toHaveLength(0);
      const [h] = await executor.run([x]);
      expect(h!.toArray()).toEqual([2, 4, 6]);
      expect(freed).toEqual([made[1]]);
      expect(callerFreed).toHaveLength(0);
    } finally {
      executor.dispose();
      load.mockRestore();
    }
  });

  test('only programs whose every segment is a device engine run on the calling thread; outputs go to the last GPU engine\'s device', () => {
    expect(runsInProcess(data)).toBe(true);
    const placed: ProgramData = { ...data, segments: [{ ...(data.segments[0] as EngineSegmentData), placement: { ordinal: 3, name: 'x', reason: 'test' } }] };
    expect(outputDeviceOf(placed)).toBe(3);
    const onCpu: ProgramData = { ...data, segments: [{ ...(data.segments[0] as EngineSegmentData), backend: 'reference' }] };
    expect(runsInProcess(onCpu)).toBe(false);
    expect(outputDeviceOf(onCpu)).toBeNull();
    expect(runsInProcess({ ...data, segments: [] })).toBe(false);
  });
});
