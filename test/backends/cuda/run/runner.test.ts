/**
 * The cuda Engine (lib/backends/cuda/run/runner.ts) over a simulated device: the addon's GPU
 * binding is replaced by host memory, and GpuPlan.create by an interpreter of the plan's
 * steps whose kernels (those of the fake lowering in ../helpers.ts) are written in JS. What
 * this checks is the runner's plumbing: plans per shape and their cache, input copies from
 * the host and from devices, outputs owned by the caller, the run queue, run-time compiles,
 * the compute-capability check, and that dispose() frees every allocation. Results are
 * compared with the reference backend on the same networks. The real device is
 * test/gpu/cuda-backend.check.js's.
 */
import { buildCudaEngine } from '../../../../lib/backends/cuda/build';
import { deserializeCudaEngine } from '../../../../lib/backends/cuda/engine-format';
import type { LoweringContext } from '../../../../lib/backends/cuda/layers';
import { CudaRunner, stepFlops } from '../../../../lib/backends/cuda/run/runner';
import { DEFAULT_BUILD_CONFIG } from '../../../../lib/engine/build-config';
import { referenceBackend } from '../../../../lib/backends/reference';
import type { DeviceValue, RunValue } from '../../../../lib/engine/residency';
import { BadInputError, NoCompatibleDeviceError, ShapeOutOfRangeError } from '../../../../lib/errors';
import { DeviceTensor, toDevice } from '../../../../lib/gpu/device-tensor';
import { GpuPlan, type PlanExecution } from '../../../../lib/gpu/gpu-plan';
import type { GpuModule } from '../../../../lib/gpu/module';
import { encodePlan, type BufferSlice, type PlanSpec } from '../../../../lib/gpu/plan';
import type { Network } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { resetSimulatedGpu, simulatedGpu, type SimulatedBuffer } from '../../../helpers/simulated-gpu';
import { dynamicBatchNetwork, fakeCompiler, fakeLowering, shapeTensorNetwork, weightedNetwork } from '../helpers';

// The simulated device (test/helpers/simulated-gpu.ts): host bytes behind the addon's binding.
jest.mock('../../../../lib/gpu/binding', () => require('../../../helpers/simulated-gpu').bindingModule);
const device = simulatedGpu;
type FakeBuffer = SimulatedBuffer;

/** The JS "kernels" of the fake lowering's keys (`kind.dtypes`), read from the fake cubin's text. */
function runKernel(key: string, views: Uint8Array[], count: number): void {
  const f32 = (v: Uint8Array): Float32Array => new Float32Array(v.buffer, v.byteOffset, count);
  const [kind] = key.split('.');
  if (kind === 'unary') f32(views[1]!).set(f32(views[0]!).map(Math.exp));
  else if (kind === 'activation') f32(views[1]!).set(f32(views[0]!).map((x) => Math.max(0, x)));
  else if (kind === 'elementwise') f32(views[2]!).set(f32(views[0]!).map((x, i) => x + f32(views[1]!)[i]!));
  else if (kind === 'cast') f32(views[1]!).set(Float32Array.from(new BigInt64Array(views[0]!.buffer, views[0]!.byteOffset, count), Number));
  // guardedLowering's check: code 1 into the status word when an input element is negative.
  else if (kind === 'guard') {
    if (f32(views[0]!).some((x) => x < 0)) new DataView(views[1]!.buffer, views[1]!.byteOffset, 4).setUint32(0, 1, true);
  }
  else throw new Error(`the simulated device has no kernel ${key}`);
}

let planCount = 0;
/** The step count of every plan created, in order. */
const planSteps: number[] = [];
/** Plans captured into a (simulated) CUDA graph, and runs made by replaying one. */
const graphs = { captures: 0, replays: 0, executes: 0, inFlight: 0, maxInFlight: 0 };
const resetGraphs = (): void => void Object.assign(graphs, { captures: 0, replays: 0, executes: 0, inFlight: 0, maxInFlight: 0 });
const SPACING = { yieldBetweenSteps: false };

/** GpuPlan.create on the simulated device: the spec must encode, then run() interprets it. */
async function fakePlan(spec: PlanSpec, buffers: readonly DeviceTensor[], modules: readonly GpuModule[] = []): Promise<GpuPlan> {
  encodePlan(spec);
  planCount++;
  planSteps.push(spec.steps.length);
  const mem = (s: BufferSlice, n: number): Uint8Array => {
    const b = buffers[s.buffer]!.buffer as unknown as FakeBuffer;
    if (b.disposed) throw new Error(`plan buffer ${s.buffer} was freed`);
    if ((s.offset ?? 0) + n > b.byteLength) throw new Error(`plan buffer ${s.buffer}: ${n} bytes at ${s.offset} overrun ${b.byteLength}`);
    return b.data.subarray(s.offset ?? 0, (s.offset ?? 0) + n);
  };
  const run = async (): Promise<void> => {
    for (const step of spec.steps) {
      if (SPACING.yieldBetweenSteps) await new Promise((r) => setImmediate(r));
      if (step.kind === 'copy') mem(step.dst, step.bytes).set(mem(step.src, step.bytes).slice());
      else if (step.kind === 'memset') mem(step.dst, step.bytes).fill(step.value);
      else if (step.kind === 'launch') {
        const image = (modules[step.module]!.native as unknown as { image: string }).image;
        const count = Number((step.args.at(-1) as { value: number }).value);
        const views = step.args
          .filter((a): a is { pointer: BufferSlice } => 'pointer' in a)
          .map((a) => (buffers[a.pointer.buffer]!.buffer as unknown as FakeBuffer).data.subarray(a.pointer.offset ?? 0));
        runKernel(image.split(' ')[1]!, views, count);
      } else throw new Error(`the simulated device cannot run ${step.kind}`);
    }
  };
  let captured = false;
  // As on the device: capture() runs the steps once, then records them; replay() runs the record.
  const capture = async (): Promise<void> => {
    await run();
    captured = true;
    graphs.captures++;
  };
  const replay = async (): Promise<void> => {
    if (!captured) throw new Error('replay() before capture()');
    graphs.replays++;
    await run();
  };
  // As GpuPlan.execute on the device: enqueued at the call on the plan's stream (here a chain of
  // Promises), so calls made back to back run in order; input copies, replay, output copies.
  let stream: Promise<unknown> = Promise.resolve();
  const bytesOf = (t: DeviceTensor): Uint8Array => (t.buffer as unknown as FakeBuffer).data;
  const execute = (inputs: Array<[DeviceTensor, DeviceTensor]>, outputs: Array<[DeviceTensor, DeviceTensor | null]>, options: { status?: DeviceTensor } = {}): Promise<PlanExecution> => {
    graphs.inFlight++;
    graphs.maxInFlight = Math.max(graphs.maxInFlight, graphs.inFlight);
    graphs.executes++;
    const work = stream
      .then(async () => {
        if (!captured) throw new Error('execute() before capture()');
        const fresh: DeviceTensor[] = [];
        try {
          const targets: DeviceTensor[] = [];
          for (const [ours, given] of outputs) {
            const t = given ?? (await DeviceTensor.allocate(ours.dtype, ours.shape, ours.device));
            if (given === null) fresh.push(t);
            targets.push(t);
          }
          for (const [ours, source] of inputs) {
            if (device.failCopies) throw new Error('copy failed (simulated)');
            bytesOf(ours).set(bytesOf(source));
          }
          graphs.replays++;
          await run();
          outputs.forEach(([ours], i) => {
            if (device.failCopies) throw new Error('copy failed (simulated)');
            bytesOf(targets[i]!).set(bytesOf(ours));
          });
          const word = options.status === undefined ? undefined : bytesOf(options.status);
          return { outputs: targets, status: word === undefined ? 0 : new DataView(word.buffer, word.byteOffset, 4).getUint32(0, true) };
        } catch (error) {
          for (const t of fresh) t.dispose();
          throw error;
        }
      })
      .finally(() => graphs.inFlight--);
    stream = work.catch(() => undefined);
    return work;
  };
  return { run, capture, replay, execute, dispose: () => undefined, steps: spec.steps.length } as unknown as GpuPlan;
}

const H200 = { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } };

/**
 * The fake lowering, plus a run-time check on the relu layer: a "guard" kernel that reports a
 * negative input element through the layer's status word (as the index kernels report an index
 * out of range).
 */
function guardedLowering(): (ctx: LoweringContext) => ReturnType<ReturnType<typeof fakeLowering>> {
  const plain = fakeLowering();
  return (ctx) => {
    const steps = plain(ctx);
    if (ctx.layer.params.kind !== 'activation') return steps;
    const count = ctx.inputs[0]!.shape.reduce((a, d) => a * d, 1);
    const args = [{ pointer: ctx.inputs[0]!.at }, ...ctx.check('an input element is negative'), { scalar: 'u64' as const, value: count }];
    return [{ kind: 'launch', kernel: { key: 'guard.float32', entry: 'k_guard', source: 'extern "C" __global__ void k_guard() {} // guard.float32' }, grid: [1], block: [256], args }, ...steps];
  };
}

async function engineFor(network: Network, lower = fakeLowering()): Promise<ReturnType<typeof deserializeCudaEngine>> {
  return deserializeCudaEngine(await buildCudaEngine(network, DEFAULT_BUILD_CONFIG, H200, { lower, compile: fakeCompiler() }));
}

/** A runner of `network` on the simulated device, built and lowered with the fake lowering and compiler. */
async function fakeRunner(network: Network): Promise<CudaRunner> {
  return CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(), lower: fakeLowering() });
}

async function reference(network: Network, inputs: Record<string, Tensor>): Promise<Record<string, Tensor>> {
  return referenceBackend.createRunner(await referenceBackend.build(network, {})).run(inputs);
}

const host = async (v: RunValue): Promise<Tensor> => (v instanceof Tensor ? v : v.toHost());

const rng = new Random(2017);

beforeEach(() => {
  resetSimulatedGpu();
  planCount = 0;
  resetGraphs();
  SPACING.yieldBetweenSteps = false;
  jest.spyOn(GpuPlan, 'create').mockImplementation(fakePlan as typeof GpuPlan.create);
});
afterEach(() => jest.restoreAllMocks());

describe('CudaRunner on a simulated device', () => {
  test('a static network with weights: outputs are DeviceTensors on the engine\'s device and match the reference backend', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const x = rng.tensor([2, 3]);
    const out = await runner.run({ x });
    expect(out.y).toBeInstanceOf(DeviceTensor);
    expect((out.y as DeviceValue).residency).toEqual({ kind: 'device', ordinal: 0 });
    expectClose(await host(out.y!), (await reference(network, { x })).y!, FP32, 'y');
    runner.dispose();
  });

  test('CUDA graphs: each plan is captured on its first run and replayed after; each run\'s outputs are its own; off when asked', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    for (let i = 0; i < 3; i++) {
      const x = rng.tensor([2, 3]);
      expectClose(await host((await runner.run({ x })).y!), (await reference(network, { x })).y!, FP32, `run ${i}`);
    }
    expect(graphs).toMatchObject({ captures: 1, replays: 3 });
    runner.dispose();
    const stepwise = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(), lower: fakeLowering(), cudaGraphs: false });
    const x = rng.tensor([2, 3]);
    expectClose(await host((await stepwise.run({ x })).y!), (await reference(network, { x })).y!, FP32, 'without graphs');
    expect(graphs).toMatchObject({ captures: 1, replays: 3 });
    stepwise.dispose();
  });

  test('a plan that cannot be captured runs step by step, said once in the log', async () => {
    const network = weightedNetwork();
    const logs: string[] = [];
    jest.spyOn(GpuPlan, 'create').mockImplementation((async (...args: Parameters<typeof fakePlan>) => {
      const plan = await fakePlan(...args);
      Object.assign(plan, { capture: async () => Promise.reject(new Error('operation not permitted when stream is capturing')) });
      return plan;
    }) as typeof GpuPlan.create);
    const runner = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(), lower: fakeLowering(), logger: (_l, m) => logs.push(m) });
    for (let i = 0; i < 2; i++) {
      const x = rng.tensor([2, 3]);
      expectClose(await host((await runner.run({ x })).y!), (await reference(network, { x })).y!, FP32, `run ${i}`);
    }
    expect(logs.filter((m) => /could not be captured into a CUDA graph \(operation not permitted/.test(m))).toHaveLength(1);
    runner.dispose();
  });

  test('dynamic batch: one plan per shape set, cached (LRU), and each batch matches the reference backend', async () => {
    const network = dynamicBatchNetwork();
    const runner = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(), lower: fakeLowering(), planCacheSize: 2 });
    for (const b of [3, 5, 3, 8]) {
      const x = rng.tensor([b, 4]);
      expectClose(await host((await runner.run({ x })).y!), (await reference(network, { x })).y!, FP32, `batch ${b}`);
    }
    expect(planCount).toBe(3);
    expect(runner.cachedShapes).toEqual(['3x4', '8x4']);
    await expect(runner.run({ x: rng.tensor([9, 4]) })).rejects.toThrow(ShapeOutOfRangeError);
    await expect(runner.run({ x: new Tensor('int32', [2, 4]) })).rejects.toThrow(BadInputError);
    runner.dispose();
  });

  test('shape tensors: host values reach the device, and the outputs are right', async () => {
    const { network } = shapeTensorNetwork();
    const runner = await fakeRunner(network);
    const x = rng.tensor([6, 4]);
    const out = await runner.run({ x });
    expect((await host(out.dims!)).toArray()).toEqual([6, 4]);
    expect((await host(out.flat!)).toArray()).toEqual(x.toArray());
    runner.dispose();
  });

  test('float64 host inputs are narrowed; device inputs are copied on the device, from another device with one warning', async () => {
    const network = dynamicBatchNetwork();
    const logs: string[] = [];
    const runner = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(), lower: fakeLowering(), logger: (l, m) => logs.push(`${l}: ${m}`) });
    const x = rng.tensor([2, 4]);
    const want = (await reference(network, { x })).y!;
    const wide = new Tensor('float64', [2, 4], Float64Array.from(x.data as Float32Array));
    expectClose(await host((await runner.run({ x: wide })).y!), want, FP32, 'float64');
    expectClose(await host((await runner.run({ x: (await runner.upload(x)) as never })).y!), want, FP32, 'same device');
    const elsewhere = await toDevice(x, 1);
    await runner.run({ x: elsewhere as never });
    await runner.run({ x: elsewhere as never });
    expect(logs.filter((l) => l.startsWith('warn'))).toEqual([
      'warn: cuda engine on device 0: input "x" is on device 1; copying it (and every later input from device 1) through the host',
    ]);
    runner.dispose();
  });

  test('a run-time check that reports bad data fails the run with E_BAD_INPUT naming the layer, frees that run\'s outputs, and the next run is clean', async () => {
    const network = dynamicBatchNetwork();
    for (const cudaGraphs of [true, false]) {
      const runner = await CudaRunner.load(await engineFor(network, guardedLowering()), 0, { compile: fakeCompiler(), lower: guardedLowering(), cudaGraphs });
      const good = Tensor.from('float32', [2, 4], [1, 2, 3, 4, 5, 6, 7, 8]);
      const bad = Tensor.from('float32', [2, 4], [1, 2, 3, -4, 5, 6, 7, 8]);
      expect((await host((await runner.run({ x: good })).y!)).toArray()).toEqual(good.toArray());
      const live = device.live.size;
      // From the host (the queued path) and from this device (execute() on the fast path, with graphs).
      for (const x of [bad, await toDevice(bad)]) {
        const failed = runner.run({ x: x as never });
        await expect(failed).rejects.toThrow(BadInputError);
        await expect(failed).rejects.toThrow('cuda engine "dynamic": layer "relu" (activation): an input element is negative');
        await expect(failed).rejects.toMatchObject({ code: 'E_BAD_INPUT', details: { layer: 'relu', status: 1 } });
        if (x instanceof DeviceTensor) x.dispose();
      }
      expect(device.live.size).toBe(live);
      // The plan zeroes its word first: a good run after a bad one succeeds.
      expect((await host((await runner.run({ x: good })).y!)).toArray()).toEqual(good.toArray());
      runner.dispose();
    }
    expect(graphs.executes).toBeGreaterThan(0);
  });

  test('concurrent runs are queued: 16 at once equal their sequential results', async () => {
    const network = dynamicBatchNetwork();
    const runner = await fakeRunner(network);
    const inputs = Array.from({ length: 16 }, (_, i) => rng.tensor([1 + (i % 3), 4]));
    const sequential: Tensor[] = [];
    for (const x of inputs) sequential.push(await host((await runner.run({ x })).y!));
    SPACING.yieldBetweenSteps = true;
    const concurrent = await Promise.all(inputs.map(async (x) => host((await runner.run({ x })).y!)));
    concurrent.forEach((t, i) => expect(t.toArray()).toEqual(sequential[i]!.toArray()));
    runner.dispose();
  });

  test('device inputs on a captured plan: each run is one execute() enqueued at the call, so 16 concurrent runs are all in flight at once, each with its own right answer', async () => {
    const network = dynamicBatchNetwork();
    const runner = await fakeRunner(network);
    const xs = Array.from({ length: 16 }, () => rng.tensor([3, 4]));
    const onDevice = await Promise.all(xs.map((x) => toDevice(x, 0)));
    await runner.run({ x: onDevice[0]! });
    resetGraphs();
    SPACING.yieldBetweenSteps = true;
    const outs = await Promise.all(onDevice.map((x) => runner.run({ x })));
    expect(graphs).toMatchObject({ executes: 16, maxInFlight: 16, captures: 0 });
    for (const [i, out] of outs.entries()) expectClose(await host(out.y!), (await reference(network, { x: xs[i]! })).y!, FP32, `run ${i}`);
    runner.dispose();
  });

  test('a host input between device runs waits for them, and later device runs wait for it: every answer stays right', async () => {
    const network = dynamicBatchNetwork();
    const runner = await fakeRunner(network);
    const xs = Array.from({ length: 6 }, () => rng.tensor([2, 4]));
    const given: RunValue[] = await Promise.all(xs.map((x, i) => (i === 2 ? x : toDevice(x, 0))));
    await runner.run({ x: given[0]! });
    SPACING.yieldBetweenSteps = true;
    const outs = await Promise.all(given.map((x) => runner.run({ x })));
    for (const [i, out] of outs.entries()) expectClose(await host(out.y!), (await reference(network, { x: xs[i]! })).y!, FP32, `run ${i}`);
    runner.dispose();
  });

  test("into: outputs are written into the caller's DeviceTensors (the same objects, no allocation), on the first run and on the fast path", async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const x = rng.tensor([2, 3]);
    const want = (await reference(network, { x })).y!;
    const target = await DeviceTensor.allocate(want.dtype, want.shape, 0);
    const first = await runner.run({ x }, undefined, { y: target });
    expect(first.y).toBe(target);
    expectClose(await target.toHost(), want, FP32, 'first run');
    const onDevice = await toDevice(x, 0);
    const live = device.live.size;
    const executes = graphs.executes;
    const again = await runner.run({ x: onDevice }, undefined, { y: target });
    expect(graphs.executes).toBe(executes + 1);
    expect(again.y).toBe(target);
    expect(device.live.size).toBe(live);
    expectClose(await target.toHost(), want, FP32, 'fast path');
    runner.dispose();
  });

  test('into: a target of the wrong shape, dtype or device, a disposed one, or one for no output rejects with E_INVALID_ARGUMENT naming the output, on either path', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const x = rng.tensor([2, 3]);
    const want = (await reference(network, { x })).y!;
    const wrongShape = await DeviceTensor.allocate('float32', [2, 3], 0);
    const message = `run(): output "y" is float32 [${want.shape.join(', ')}] on device 0; the DeviceTensor given for it is float32 [2, 3] on device 0`;
    await expect(runner.run({ x }, undefined, { y: wrongShape })).rejects.toThrow(message);
    const onDevice = await toDevice(x, 0);
    await runner.run({ x: onDevice });
    await expect(runner.run({ x: onDevice }, undefined, { y: wrongShape })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message });
    const wrongDType = await DeviceTensor.allocate('int32', want.shape, 0);
    await expect(runner.run({ x: onDevice }, undefined, { y: wrongDType })).rejects.toThrow(`given for it is int32 [${want.shape.join(', ')}] on device 0`);
    const elsewhere = await DeviceTensor.allocate('float32', want.shape, 1);
    await expect(runner.run({ x: onDevice }, undefined, { y: elsewhere })).rejects.toThrow('on device 1');
    const gone = await DeviceTensor.allocate('float32', want.shape, 0);
    gone.dispose();
    await expect(runner.run({ x: onDevice }, undefined, { y: gone })).rejects.toThrow('given for it is a disposed DeviceTensor');
    await expect(runner.run({ x: onDevice }, undefined, { z: wrongShape })).rejects.toThrow('"z" is not an output of this engine; its outputs are "y"');
    expectClose(await host((await runner.run({ x: onDevice })).y!), want, FP32, 'after the refusals');
    runner.dispose();
  });

  test('a kernel the engine lacks, or stored from other source, is compiled at run time through the compiler, and logged', async () => {
    const network = dynamicBatchNetwork();
    const base = fakeLowering();
    // The engine was built with the kernel "activation.float32_float32"; at run time the lowering asks for other source under that key.
    const renamed = (ctx: LoweringContext) => base(ctx).map((s) => (s.kind === 'launch' ? { ...s, kernel: { ...s.kernel, source: `${s.kernel.source} // v2` } } : s));
    const compiled: string[] = [];
    const logs: string[] = [];
    const runner = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(compiled), lower: renamed, logger: (l, m) => logs.push(`${l}: ${m}`) });
    const x = rng.tensor([2, 4]);
    expectClose(await host((await runner.run({ x })).y!), (await reference(network, { x })).y!, FP32, 'y');
    expect(compiled).toEqual(['activation.float32_float32@90']);
    expect(logs).toContainEqual(expect.stringMatching(/^info: cuda engine: kernel "activation.float32_float32" in the engine was compiled from other source/));
    runner.dispose();
    // A key the engine never had (a shape the profiles did not foresee needs another kernel).
    const unforeseen = (ctx: LoweringContext) => base(ctx).map((s) => (s.kind === 'launch' ? { ...s, kernel: { ...s.kernel, key: `${s.kernel.key}.wide` } } : s));
    const other = await CudaRunner.load(await engineFor(network), 0, { compile: fakeCompiler(compiled), lower: unforeseen, logger: (l, m) => logs.push(`${l}: ${m}`) });
    expectClose(await host((await other.run({ x })).y!), (await reference(network, { x })).y!, FP32, 'y');
    expect(compiled).toEqual(['activation.float32_float32@90', 'activation.float32_float32.wide@90']);
    expect(logs).toContainEqual(expect.stringMatching(/kernel "activation.float32_float32.wide" is not in the engine \(a shape the profiles did not foresee\); compiling it for sm_90/));
    other.dispose();
  });

  test('a device of another compute capability is refused', async () => {
    device.cc = { major: 8, minor: 0 };
    const e = await CudaRunner.load(await engineFor(dynamicBatchNetwork()), 0).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NoCompatibleDeviceError);
    expect((e as Error).message).toBe('Unable to deserialize cuda engine: it was built for compute capability 9.0 ("NVIDIA H200"), but device 0 has compute capability 8.0');
  });

  test('profile(): one entry per plan step, named after its layer; the profile\'s own plan and buffers are freed', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const before = new Set(device.live);
    const created = planCount;
    const profile = await runner.profile({ x: rng.tensor([2, 3]) }, { repeats: 3 });
    expect(profile.map((p) => [p.layer, p.kind, p.stepKind])).toEqual([
      // The reshape reuses exp's bytes and the constant is read in the weights buffer: their
      // copies onto themselves are dropped, and the labels stay aligned.
      ['exp', 'unary', 'launch'],
      ['add', 'elementwise', 'launch'],
    ]);
    expect(profile.every((p) => p.ms >= 0 && Number.isFinite(p.ms))).toBe(true);
    expect(planCount - created).toBe(1 + profile.length);
    expect([...device.live].filter((b) => !before.has(b))).toEqual([]);
    await expect(runner.profile({ x: rng.tensor([2, 3]) }, { repeats: 0 })).rejects.toThrow('repeats must be an integer >= 1');
    runner.dispose();
  });

  test("profile({ mode: 'graph' }): each step captured `repeats` times into one graph and replayed; bytes of single-step layers", async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const before = new Set(device.live);
    const [first, captures] = [planSteps.length, graphs.captures];
    const profile = await runner.profile({ x: rng.tensor([2, 3]) }, { repeats: 4, mode: 'graph' });
    expect(profile.map((p) => [p.layer, p.stepKind])).toEqual([
      ['exp', 'launch'],
      ['add', 'launch'],
    ]);
    // The instance (2 steps), then one plan of 4 copies per step, each captured once.
    expect(planSteps.slice(first)).toEqual([2, 4, 4]);
    expect(graphs.captures - captures).toBe(2);
    // exp reads x [2, 3] and writes [2, 3]; add reads the reshaped [6] and the [6] constant, writes [6]: float32.
    expect(profile.map((p) => p.bytes)).toEqual([4 * (6 + 6), 4 * (6 + 6 + 6)]);
    expect(profile.every((p) => p.flops === undefined && p.ms > 0)).toBe(true);
    expect([...device.live].filter((b) => !before.has(b))).toEqual([]);
    await expect(runner.profile({ x: rng.tensor([2, 3]) }, { mode: 'events' as 'graph' })).rejects.toThrow("profile(): mode must be 'launch' or 'graph', got events");
    runner.dispose();
  });

  test('stepFlops(): 2·m·n·k per GEMM matrix; a convolution counts its output (forward) or input (transposed) elements times the taps they meet', () => {
    const at = { buffer: 0 };
    expect(stepFlops({ kind: 'gemm', a: at, b: at, d: at, m: 3, n: 5, k: 7, batch: 2 })).toBe(2 * 3 * 5 * 7 * 2);
    // [1, 4, 5, 5] with 6 filters of 2 channels (groups 2), 3×3, pad 1: a 5×5 output of 6 channels, 2·3·3 taps each.
    const conv = { kind: 'conv' as const, x: at, w: at, y: at, input: [1, 4, 5, 5], weight: [6, 2, 3, 3], pads: [1, 1], groups: 2 };
    expect(stepFlops(conv)).toBe(2 * (6 * 25) * (2 * 9));
    // Counted the other way, for a strided, dilated one: walk the padded input, placing the
    // window wherever it fits (never through convOutputShape), and count its multiply-adds
    // (padded taps too, as a dense convolution computes them).
    const strided = { ...conv, input: [2, 4, 9, 8], pads: [1, 2], strides: [2, 3], dilations: [2, 1] };
    let macs = 0;
    for (let y0 = -1; y0 + 2 * 2 <= 9 - 1 + 1; y0 += 2) for (let x0 = -2; x0 + 2 <= 8 - 1 + 2; x0 += 3) macs += 2 /* batch */ * 6 /* filters */ * 2 /* channels a group */ * 9 /* taps */;
    expect(stepFlops(strided)).toBe(2 * macs);
    // Transposed: input [1, 4, 3, 3], weight [4, 3, 2, 2] (k / groups = 3, groups 1): each input element meets 3 channels × 4 taps.
    expect(stepFlops({ ...conv, input: [1, 4, 3, 3], weight: [4, 3, 2, 2], groups: 1, pads: [0, 0], strides: [2, 2], transposed: true })).toBe(2 * 36 * 3 * 4);
    expect(stepFlops({ kind: 'copy', dst: at, src: at, bytes: 8 })).toBeUndefined();
  });

  test('timeGraph(): a fresh plan, captured once and replayed; ms per replay; its plan and buffers are freed', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const before = new Set(device.live);
    const [created, captures, replays] = [planCount, graphs.captures, graphs.replays];
    const ms = await runner.timeGraph({ x: rng.tensor([2, 3]) }, { repeats: 5 });
    expect(ms).toBeGreaterThan(0);
    expect(Number.isFinite(ms)).toBe(true);
    // One plan, one capture, the warm-up replay and the timed one (the simulated replay ignores its count).
    expect([planCount - created, graphs.captures - captures, graphs.replays - replays]).toEqual([1, 1, 2]);
    expect([...device.live].filter((b) => !before.has(b))).toEqual([]);
    await expect(runner.timeGraph({ x: rng.tensor([2, 3]) }, { repeats: 1.5 })).rejects.toThrow('timeGraph(): repeats must be an integer >= 1');
    runner.dispose();
  });

  test('a run whose output allocation or output copy fails rejects, frees what it allocated for the caller, and the engine runs on', async () => {
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const x = rng.tensor([2, 3]);
    const first = await runner.run({ x });
    const outputBytes = (first.y as unknown as DeviceTensor).byteLength;
    (first.y as unknown as DeviceTensor).dispose();
    const before = new Set(device.live);
    device.failAllocOf = outputBytes;
    await expect(runner.run({ x })).rejects.toThrow(/out of memory \(simulated\)/);
    device.failAllocOf = -1;
    device.failCopies = true;
    await expect(runner.run({ x: await toDevice(x, 0) })).rejects.toThrow(/copy failed \(simulated\)/);
    device.failCopies = false;
    await new Promise((r) => setImmediate(r));
    // Only the device input made for the second run is left (the caller's).
    expect([...device.live].filter((b) => !before.has(b))).toHaveLength(1);
    expectClose(await host((await runner.run({ x })).y!), (await reference(network, { x })).y!, FP32, 'after the failures');
    runner.dispose();
  });

  test('dispose() frees the weights, every plan\'s buffers; outputs stay the caller\'s; later runs reject', async () => {
    const before = new Set(device.live);
    const network = weightedNetwork();
    const runner = await fakeRunner(network);
    const out = await runner.run({ x: rng.tensor([2, 3]) });
    runner.dispose();
    await new Promise((r) => setImmediate(r));
    const left = [...device.live].filter((b) => !before.has(b));
    const y = out.y as unknown as DeviceTensor;
    expect(left).toEqual([y.buffer]);
    y.dispose();
    await expect(runner.run({ x: rng.tensor([2, 3]) })).rejects.toThrow('this cuda engine was disposed');
  });
});
