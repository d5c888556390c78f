/**
 * program.run(inputs, { outputs: [DeviceTensor, ...] }): the outputs written into the caller's
 * own device tensors, through the program's direct path (one device engine fed device inputs)
 * and its general one (host inputs), whether the engine writes into the targets itself
 * (Engine.run's `into`) or returns fresh values the program copies over; and the typed errors
 * for targets that do not fit. The device is simulated (device memory is host bytes behind the
 * binding) and the engine is a stand-in computing y = 2x, so the expected values are exact.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import type { Engine } from '../../lib/engine/backend';
import type { DeviceValue, RunValue } from '../../lib/engine/residency';
import { outputTargetError } from '../../lib/engine/output-targets';
import { DeviceTensor, toDevice } from '../../lib/gpu/device-tensor';
import { Tensor } from '../../lib/ir/tensor';
import { ProgramExecutor } from '../../lib/runtime/execute';
import { Program } from '../../lib/runtime/program';
import type { ProgramData } from '../../lib/runtime/segments';
import { resetSimulatedGpu, simulatedGpu } from '../helpers/simulated-gpu';

jest.mock('../../lib/gpu/binding', () => require('../helpers/simulated-gpu').bindingModule);

const X = [1, -2, 3, 4, -5, 6];

/** A stand-in device engine: y = 2x as a float32 DeviceTensor; with `honoursInto`, written into the caller's target. */
function doublingEngine(honoursInto: boolean): { engine: Engine; calls: Array<{ fed: RunValue; into?: Readonly<Record<string, DeviceValue>> }> } {
  const calls: Array<{ fed: RunValue; into?: Readonly<Record<string, DeviceValue>> }> = [];
  const engine: Engine = {
    inputNames: ['x'],
    outputNames: ['y'],
    residency: 'device',
    deviceOrdinal: 0,
    upload: async (t) => toDevice(t, 0),
    async run(inputs, _limits, into) {
      calls.push({ fed: inputs.x!, into });
      const x = inputs.x instanceof Tensor ? inputs.x : await inputs.x!.toHost();
      const y = Tensor.from('float32', [...x.shape], (x.toArray() as number[]).map((v) => 2 * v));
      const target = into?.y;
      if (honoursInto && target instanceof DeviceTensor) {
        await target.write(y);
        return { y: target };
      }
      return { y: await toDevice(y, 0) };
    },
    dispose: () => undefined,
  };
  return { engine, calls };
}

const data = (): ProgramData => ({
  inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [2, 3] }],
  outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [2, 3] }],
  segments: [{ kind: 'engine', backend: 'cuda', engine: new Uint8Array(0), inputs: ['x'], outputs: ['y'] }],
  constants: {},
});

const report = { segments: [], fallbackNodes: [], supportedNodes: 0, totalNodes: 0 } as never;

afterEach(() => {
  resetSimulatedGpu();
  jest.restoreAllMocks();
});

describe.each([
  ['writes into the targets itself', true],
  ['returns fresh outputs (the program copies them over)', false],
])('an engine that %s', (_what, honoursInto) => {
  test.each([
    ['device inputs (the direct path)', true],
    ['host inputs (the general path)', false],
  ])('%s: run() resolves with the caller\'s own tensors holding the outputs, and leaves no other allocation', async (_path, onDevice) => {
    const { engine, calls } = doublingEngine(honoursInto);
    jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
    const program = new Program(data(), report, 'cuda');
    const x = Tensor.from('float32', [2, 3], X);
    const input = onDevice ? await toDevice(x, 0) : x;
    const target = await DeviceTensor.allocate('float32', [2, 3], 0);
    const live = simulatedGpu.live.size;
    try {
      const [y] = await program.run([input], { outputs: [target] });
      expect(y).toBe(target);
      expect((await target.toHost()).toArray()).toEqual(X.map((v) => 2 * v));
      expect(simulatedGpu.live.size).toBe(live);
      // The direct path offers the engine the targets; the general one copies into them after.
      expect(calls[0]!.into?.y).toBe(onDevice ? target : undefined);
    } finally {
      await program.dispose();
      target.dispose();
      if (input instanceof DeviceTensor) input.dispose();
    }
  });
});

test('the direct path hands a device engine its inputs as they are, and its outputs over as they are', async () => {
  const { engine, calls } = doublingEngine(false);
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const executor = new ProgramExecutor(data());
  const x = await toDevice(Tensor.from('float32', [2, 3], X), 0);
  try {
    const [y] = await executor.runToDevice([x], 0);
    expect(calls[0]!.fed).toBe(x);
    expect(((await y!.toHost()) as Tensor).toArray()).toEqual(X.map((v) => 2 * v));
    expect(executor.lastCrossings).toEqual({ hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 });
  } finally {
    executor.dispose();
    x.dispose();
  }
});

test('targets that do not fit: E_INVALID_ARGUMENT naming the output, from run() whichever path finds it', async () => {
  const { engine } = doublingEngine(false);
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const program = new Program(data(), report, 'cuda');
  const x = await toDevice(Tensor.from('float32', [2, 3], X), 0);
  const flat = await DeviceTensor.allocate('float32', [6], 0);
  try {
    await expect(program.run([x], { outputs: [flat] })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      message: 'run(): output "y" is float32 [2, 3] on device 0; the DeviceTensor given for it is float32 [6] on device 0',
    });
    await expect(program.run([Tensor.from('float32', [2, 3], X)], { outputs: [flat] })).rejects.toThrow('the DeviceTensor given for it is float32 [6] on device 0');
    await expect(program.run([x], { outputs: [] })).rejects.toThrow('run(): outputs has 0 DeviceTensors; the program has 1 outputs ("y")');
    await expect(program.run([x], { outputs: [new Tensor('float32', [2, 3])] as never })).rejects.toThrow('run(): outputs[0] (output "y") must be a DeviceTensor');
  } finally {
    await program.dispose();
    x.dispose();
    flat.dispose();
  }
});

test('outputTargetError(): a fitting target passes; each misfit says what was given', () => {
  const want = { dtype: 'float16' as const, shape: [2, 3], device: 1 };
  const fits = { dtype: 'float16', shape: [2, 3], residency: { kind: 'device', ordinal: 1 }, disposed: false };
  expect(outputTargetError('y', fits, want)).toBeUndefined();
  const said = (target: unknown): string | undefined => outputTargetError('y', target, want)?.message.split('; ')[1];
  expect(said({ ...fits, dtype: 'float32' })).toBe('the DeviceTensor given for it is float32 [2, 3] on device 1');
  expect(said({ ...fits, shape: [3, 2] })).toBe('the DeviceTensor given for it is float16 [3, 2] on device 1');
  expect(said({ ...fits, residency: { kind: 'device', ordinal: 0 } })).toBe('the DeviceTensor given for it is float16 [2, 3] on device 0');
  expect(said({ ...fits, disposed: true })).toBe('the DeviceTensor given for it is a disposed DeviceTensor');
  expect(said(Tensor.from('float16', [2, 3], [0, 0, 0, 0, 0, 0]))).toBe('the DeviceTensor given for it is float16 [2, 3] on the host');
  expect(said(null)).toBe('the DeviceTensor given for it is null');
  expect(said(42)).toBe('the DeviceTensor given for it is number');
  expect(outputTargetError('y', null, want)?.code).toBe('E_INVALID_ARGUMENT');
});

test('a program that runs on the CPU refuses output targets', async () => {
  const cpu: ProgramData = { ...data(), segments: [{ kind: 'engine', backend: 'reference', engine: new Uint8Array(0), inputs: ['x'], outputs: ['y'] }] };
  const program = new Program(cpu, report, 'reference');
  const target = await DeviceTensor.allocate('float32', [2, 3], 0);
  try {
    await expect(program.run([Tensor.from('float32', [2, 3], X)], { outputs: [target] })).rejects.toThrow('run(): outputs: DeviceTensors needs a program with a GPU engine; this one runs on the CPU');
  } finally {
    await program.dispose();
    target.dispose();
  }
});

test('a program whose two outputs are one value hands out two tensors (the direct path does not take it)', async () => {
  const { engine } = doublingEngine(false);
  jest.spyOn(cudaBackend, 'load').mockResolvedValue(engine);
  const twice: ProgramData = { ...data(), outputs: [data().outputs[0]!, { ...data().outputs[0]!, name: 'y2' }] };
  const program = new Program(twice, report, 'cuda');
  const x = await toDevice(Tensor.from('float32', [2, 3], X), 0);
  try {
    const [a, b] = await program.run([x], { outputs: 'device' });
    expect(a).not.toBe(b);
    a!.dispose();
    expect((await b!.toHost()).toArray()).toEqual(X.map((v) => 2 * v));
    b!.dispose();
  } finally {
    await program.dispose();
    x.dispose();
  }
});
