/**
 * A program input given as a DeviceTensor on another device than the engine that reads it is
 * moved there (through the host) and the caller is told once, at `warn`, per program and
 * input: the copy costs every run, and the fix (give it on the engine's device, or
 * program.to()) is the caller's. The device is simulated (device memory is host bytes behind the
 * binding) and the engine is a stand-in computing y = 2x, so the expected values are exact.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import type { Engine } from '../../lib/engine/backend';
import { DEFAULT_RUN_LIMITS } from '../../lib/engine/resource-limits';
import type { RunValue } from '../../lib/engine/residency';
import { DeviceTensor, toDevice } from '../../lib/gpu/device-tensor';
import { Tensor } from '../../lib/ir/tensor';
import type { LogLevel } from '../../lib/logger';
import { Program } from '../../lib/runtime/program';
import type { ProgramData } from '../../lib/runtime/segments';
import { resetSimulatedGpu } from '../helpers/simulated-gpu';

jest.mock('../../lib/gpu/binding', () => require('../helpers/simulated-gpu').bindingModule);

/** A device engine on device 0 computing y = 2x; records where each fed input was. */
function doublingEngine(fed: RunValue[]): Engine {
  return {
    inputNames: ['x', 'z'],
    outputNames: ['y'],
    residency: 'device',
    deviceOrdinal: 0,
    upload: async (t) => toDevice(t, 0),
    async run(inputs) {
      fed.push(inputs.x!, inputs.z!);
      const x = inputs.x instanceof Tensor ? inputs.x : await inputs.x!.toHost();
      const z = inputs.z instanceof Tensor ? inputs.z : await inputs.z!.toHost();
      const zs = z.toArray() as number[];
      return { y: await toDevice(Tensor.from('float32', [...x.shape], (x.toArray() as number[]).map((v, i) => 2 * v + zs[i]!)), 0) };
    },
    dispose: () => undefined,
  };
}

const data = (): ProgramData => ({
  inputs: [
    { name: 'x', value: 'x', dtype: 'float32', shape: [3] },
    { name: 'z', value: 'z', dtype: 'float32', shape: [3] },
  ],
  outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [3] }],
  segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: ['x', 'z'], outputs: ['y'] }],
  constants: {},
});

const report = { segments: [], fallbackNodes: [], supportedNodes: 0, totalNodes: 0 } as never;

afterEach(() => {
  resetSimulatedGpu();
  jest.restoreAllMocks();
});

test('an input on another device is moved to the engine\'s device with one warning per program and input', async () => {
  const fed: RunValue[] = [];
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(doublingEngine(fed));
  const logs: Array<[LogLevel, string]> = [];
  const program = new Program(data(), report, 'cuda', new Map(), DEFAULT_RUN_LIMITS, [], (level, message) => logs.push([level, message]));
  const x = await toDevice(Tensor.from('float32', [3], [1, 2, 3]), 1);
  const z = await toDevice(Tensor.from('float32', [3], [10, 20, 30]), 0);
  try {
    for (let run = 0; run < 3; run++) {
      const [y] = await program.run([x, z]);
      expect(Array.from(y!.data as Float32Array)).toEqual([12, 24, 36]);
    }
    // The engine always read x on its own device: the program moved it.
    expect(fed.filter((_, i) => i % 2 === 0).every((v) => v instanceof DeviceTensor && v.device === 0 && v !== x)).toBe(true);
    expect(fed.filter((_, i) => i % 2 === 1).every((v) => v === z)).toBe(true);
    const warnings = logs.filter(([level]) => level === 'warn').map(([, m]) => m);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/program input "x" is on device 1, but the engine that reads it runs on device 0/);
  } finally {
    x.dispose();
    z.dispose();
    await program.dispose();
  }
});

test('inputs on the engine\'s device, or on the host, give no warning', async () => {
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(doublingEngine([]));
  const logs: string[] = [];
  const program = new Program(data(), report, 'cuda', new Map(), DEFAULT_RUN_LIMITS, [], (_level, message) => logs.push(message));
  const x = await toDevice(Tensor.from('float32', [3], [1, 2, 3]), 0);
  try {
    const [y] = await program.run([x, Tensor.from('float32', [3], [1, 1, 1])]);
    expect(Array.from(y!.data as Float32Array)).toEqual([3, 5, 7]);
    expect(logs).toEqual([]);
  } finally {
    x.dispose();
    await program.dispose();
  }
});
