/**
 * A complex input given as a DeviceTensor reaches a device engine as its real carrier without
 * leaving the device (lib/runtime/execute.ts, viewableAsCarrier): complex64 is seen as float32
 * [..., 2] over the same device memory, as toCarrier() does on the host. Before, it was read
 * back to the host and uploaded again (on the H200 about 0.6 ms of a Llama-style run). A
 * complex128 input carried as float32 (truncated) still takes the host. The device is
 * simulated: device memory is host bytes behind the binding.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import type { RunValue } from '../../lib/engine/residency';
import type { Engine } from '../../lib/engine/backend';
import { DeviceTensor, toDevice } from '../../lib/gpu/device-tensor';
import { ProgramExecutor } from '../../lib/runtime/execute';
import type { ProgramData } from '../../lib/runtime/segments';
import { Tensor } from '../../lib/ir/tensor';
import { resetSimulatedGpu, simulatedGpu } from '../helpers/simulated-gpu';

jest.mock('../../lib/gpu/binding', () => require('../helpers/simulated-gpu').bindingModule);
const copies = (): { toHost: number; toDevice: number; rects: number } => simulatedGpu.copies;

/** A stand-in device engine that records what it was fed and returns the carrier's sum per row as a host tensor. */
function recordingEngine(): { engine: Engine; fed: RunValue[] } {
  const fed: RunValue[] = [];
  const engine: Engine = {
    inputNames: ['f'],
    outputNames: ['y'],
    residency: 'device',
    deviceOrdinal: 0,
    upload: async (t) => toDevice(t, 0),
    async run(inputs: Readonly<Record<string, RunValue>>) {
      fed.push(inputs.f!);
      const v = inputs.f as DeviceTensor;
      const host = await v.toHost();
      const values = host.toArray() as number[];
      const rows = v.shape[0]!;
      const per = values.length / rows;
      return { y: Tensor.from('float32', [rows], Array.from({ length: rows }, (_, r) => values.slice(r * per, (r + 1) * per).reduce((a, b) => a + b, 0))) };
    },
    dispose: () => undefined,
  };
  return { engine, fed };
}

const program = (dtype: 'complex64' | 'complex128', carrier: 'float32' | 'float64'): ProgramData => ({
  inputs: [{ name: 'f', value: 'f', dtype, shape: [2, 3], complex: { carrier } }],
  outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [2] }],
  segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: ['f'], outputs: ['y'] }],
  constants: {},
});

afterEach(() => {
  resetSimulatedGpu();
  jest.restoreAllMocks();
});

test('a complex64 DeviceTensor reaches the engine as a float32 [..., 2] view of the same device memory: no copy, and it stays the caller\'s', async () => {
  const { engine, fed } = recordingEngine();
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const executor = new ProgramExecutor(program('complex64', 'float32'));
  const values = [1, -1, 2, 0.5, 3, 0, -4, 2, 5, 1, 6, -2];
  const f = await toDevice(new Tensor('complex64', [2, 3], Float32Array.from(values)), 0);
  simulatedGpu.copies.toDevice = 0;
  try {
    const [y] = await executor.run([f]);
    const view = fed[0] as DeviceTensor;
    expect(view).toBeInstanceOf(DeviceTensor);
    expect([view.dtype, view.shape]).toEqual(['float32', [2, 3, 2]]);
    expect(view.buffer).toBe(f.buffer);
    // The engine's own read-back is the only device→host copy; nothing went up again.
    expect(copies()).toEqual({ toHost: 1, toDevice: 0, rects: 0 });
    expect(y!.toArray()).toEqual([1 - 1 + 2 + 0.5 + 3 + 0, -4 + 2 + 5 + 1 + 6 - 2]);
    expect(f.disposed).toBe(false);
    expect(executor.lastCrossings).toEqual({ hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 });
  } finally {
    executor.dispose();
    f.dispose();
  }
});

test('a complex128 input carried as float32 (truncated) still converts on the host', async () => {
  const { engine, fed } = recordingEngine();
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const executor = new ProgramExecutor(program('complex128', 'float32'));
  const f = await toDevice(new Tensor('complex128', [2, 3], Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])), 0);
  try {
    const [y] = await executor.run([f]);
    expect(fed[0]).not.toBe(f);
    expect((fed[0] as DeviceTensor).dtype).toBe('float32');
    expect(y!.toArray()).toEqual([21, 57]);
    expect(f.disposed).toBe(false);
  } finally {
    executor.dispose();
    f.dispose();
  }
});

test('DeviceTensor.reinterpret refuses a view of another byte length', async () => {
  const f = await toDevice(new Tensor('complex64', [2], Float32Array.from([1, 2, 3, 4])), 0);
  expect(() => DeviceTensor.reinterpret(f, 'float32', [2, 3])).toThrow('cannot view 16 bytes as float32 [2, 3] (24 bytes)');
  expect(DeviceTensor.reinterpret(f, 'float32', [2, 2]).byteLength).toBe(16);
});
