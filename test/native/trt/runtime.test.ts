/**
 * The runtime half of native/trt against the recording TensorRT double: a plan built from a
 * replay program is deserialized, every input's shape and every I/O tensor's address is set
 * on an execution context from the pool, enqueueV3 runs on the run's stream, and failures of
 * TensorRT (deserialize, shapes outside the profile, enqueue) become typed errors carrying
 * TensorRT's message. Addresses and the stream are opaque numbers: the double never touches
 * device memory.
 */
import * as path from 'node:path';
import { encodeProgram } from '../../../lib/backends/tensorrt/program';
import { Network } from '../../../lib/network';
import { describeWithTensorRT, runDriver, tempFile, type Built, type Call, type TrtContext } from './harness';

let plan: string;
let nonzeroPlan: string;

/** Builds the plan every test runs: y = x + b, x with a dynamic batch in [1, 8]. */
function buildPlan({ built, tmp }: TrtContext): void {
  const net = new Network('rt');
  const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
  const b = net.addInput('b', 'float32', [1, 4]);
  net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [x, b], 'add'), 'y');
  const program = tempFile(tmp, 'rt.program', encodeProgram(net, { precisions: ['fp32'], workspaceBytes: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 }));
  plan = path.join(tmp, 'rt.plan');
  const { result } = runDriver(built, ['build', program, plan, path.join(tmp, 'rt.cache')]);
  if (result.ok !== true) throw new Error(`the plan did not build: ${JSON.stringify(result)}`);
  // y = x + b as above, and idx = nonzero(x): int64 [2, N], N decided by the run.
  const nz = new Network('nz');
  const nx = nz.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
  const nb = nz.addInput('b', 'float32', [1, 4]);
  nz.markOutput(nz.add1({ kind: 'elementwise', op: 'sum' }, [nx, nb], 'add'), 'y');
  nz.markOutput(nz.add1({ kind: 'nonzero' }, [nx], 'nonzero'), 'idx');
  const nzProgram = tempFile(tmp, 'nz.program', encodeProgram(nz, { precisions: ['fp32'], workspaceBytes: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 }));
  nonzeroPlan = path.join(tmp, 'nz.plan');
  const built2 = runDriver(built, ['build', nzProgram, nonzeroPlan, path.join(tmp, 'nz.cache')]).result;
  if (built2.ok !== true) throw new Error(`the nonzero plan did not build: ${JSON.stringify(built2)}`);
}

describeWithTensorRT('TensorRT runtime against the recording double', (ctx) => {
  const built = (): Built => ctx.built;

  const ADDRESSES = ['addr:x=4096', 'addr:b=8192', 'addr:y=12288'];

  it('deserializes the plan, sets shapes and addresses for every I/O tensor and enqueues on the run’s stream', () => {
    const { result, calls } = runDriver(built(), ['run', plan, 'shape:x=3,4', 'shape:b=1,4', ...ADDRESSES, 'stream=48879']);
    expect(result).toEqual({
      ok: true,
      io: [
        { name: 'x', input: true, dataType: 0, dims: [-1, 4] },
        { name: 'b', input: true, dataType: 0, dims: [1, 4] },
        { name: 'y', input: false, dataType: 0, dims: [] },
      ],
      outputs: { y: [3, 4] },
      decided: {},
    });
    const m = (name: string): Call[] => calls.filter((c) => c.m === name);
    expect(calls[0]).toMatchObject({ m: 'createInferRuntime_INTERNAL', args: ['logger', 101600] });
    expect(m('VRuntime::deserializeCudaEngine')).toHaveLength(1);
    expect(m('VCudaEngine::createExecutionContext')).toHaveLength(1);
    expect(m('VExecutionContext::setInputShape').map((c) => c.args)).toEqual([['x', [3, 4]], ['b', [1, 4]]]);
    expect(m('VExecutionContext::setTensorAddress').map((c) => c.args)).toEqual([['x', '0x1000'], ['b', '0x2000'], ['y', '0x3000']]);
    expect(m('VExecutionContext::enqueueV3')).toEqual([expect.objectContaining({ args: ['0xbeef'], ret: true })]);
    // Contexts, then the engine, then the runtime are released.
    const destroyed = calls.filter((c) => c.m === '~').map((c) => String(c.obj).replace(/#\d+$/, ''));
    expect(destroyed).toEqual(['IExecutionContext', 'ICudaEngine', 'IRuntime']);
  });

  it('gives concurrent runs a context each and reuses pooled contexts afterwards', () => {
    const { result, calls } = runDriver(built(), ['run', plan, 'shape:x=2,4', 'shape:b=1,4', ...ADDRESSES, 'runs=3']);
    expect(result).toMatchObject({ ok: true });
    expect(calls.filter((c) => c.m === 'VCudaEngine::createExecutionContext')).toHaveLength(2);
    expect(calls.filter((c) => c.m === 'VExecutionContext::enqueueV3')).toHaveLength(6);
    expect(new Set(calls.filter((c) => c.m === 'VExecutionContext::enqueueV3').map((c) => c.obj)).size).toBe(2);
  });

  it('a shape outside the optimization profile is E_SHAPE_OUT_OF_RANGE with TensorRT’s message, and nothing is enqueued', () => {
    const { result, calls } = runDriver(built(), ['run', plan, 'shape:x=9,4', 'shape:b=1,4', ...ADDRESSES]);
    expect(result).toMatchObject({ ok: false, code: 'E_SHAPE_OUT_OF_RANGE', details: { input: 'x' } });
    expect(result.message).toBe(
      'TensorRT refused shape [9, 4] for input "x": IExecutionContext::setInputShape: Error Code 3: API Usage Error (Parameter check failed, condition: x dimensions [9,4] are outside the optimization profile)',
    );
    expect(calls.some((c) => c.m === 'VExecutionContext::enqueueV3')).toBe(false);
  });

  it('a missing input or address is E_BAD_INPUT naming the tensor', () => {
    expect(runDriver(built(), ['run', plan, 'shape:x=2,4', ...ADDRESSES]).result).toMatchObject({ ok: false, code: 'E_BAD_INPUT', details: { input: 'b' } });
    expect(runDriver(built(), ['run', plan, 'shape:x=2,4', 'shape:b=1,4', 'addr:x=1', 'addr:b=2']).result).toMatchObject({ ok: false, code: 'E_BAD_INPUT', details: { tensor: 'y' } });
  });

  it('an enqueue failure is E_TENSORRT with TensorRT’s message', () => {
    const { result } = runDriver(built(), ['run', plan, 'shape:x=2,4', 'shape:b=1,4', ...ADDRESSES], { FAKE_TRT_FAIL: 'VExecutionContext::enqueueV3' });
    expect(result).toEqual({
      ok: false,
      code: 'E_TENSORRT',
      message: 'TensorRT enqueueV3 failed: fake failure injected in VExecutionContext::enqueueV3',
      details: { tensorrtMessage: 'fake failure injected in VExecutionContext::enqueueV3' },
    });
  });

  it('a plan TensorRT cannot read is E_TENSORRT with its serialization message', () => {
    const foreign = tempFile(ctx.tmp, 'foreign.plan', new TextEncoder().encode('not a plan'));
    const { result } = runDriver(built(), ['run', foreign]);
    expect(result).toMatchObject({ ok: false, code: 'E_TENSORRT' });
    expect(result.message).toBe(
      'TensorRT could not deserialize the engine (10 bytes): Error Code 1: Serialization (Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match.)',
    );
  });

  describe('an output whose size the run decides (a nonzero’s), through IOutputAllocator', () => {
    const NZ = ['run', '', 'shape:x=3,4', 'shape:b=1,4', 'addr:x=4096', 'addr:b=8192', 'addr:y=12288', 'stream=48879'];
    const args = (...more: string[]): string[] => [NZ[0]!, nonzeroPlan, ...NZ.slice(2), ...more];
    const m = (calls: Call[], name: string): Call[] => calls.filter((c) => c.m === name);

    it('registers an allocator for it alone, gets memory of the asked size on the run’s stream, and reports the notified shape', () => {
      const { result, events, calls } = runDriver(built(), args('alloc=1048576'), { FAKE_TRT_NONZERO_COUNT: '5' });
      // -1 before the run: what run.ts reads as "sized by the run".
      expect(result).toMatchObject({ ok: true, outputs: { y: [3, 4], idx: [2, -1] } });
      expect(result.io).toContainEqual({ name: 'idx', input: false, dataType: 8, dims: [2, -1] });
      // int64 [2, 5]: 80 bytes, from the pool on the run's stream (0xbeef), handed over with the shape.
      expect(result.decided).toEqual({ idx: { shape: [2, 5], address: 1048576, bytes: 80 } });
      expect(events).toEqual([
        { event: 'allocate', bytes: 80, stream: 48879, address: 1048576 },
        { event: 'free', address: 1048576 },
      ]);
      expect(m(calls, 'VExecutionContext::setOutputAllocator').map((c) => c.args[0])).toEqual(['idx', 'idx']);
      // No address for it; the fixed-size output keeps the caller's.
      expect(m(calls, 'VExecutionContext::setTensorAddress').map((c) => c.args[0])).toEqual(['x', 'b', 'y']);
      expect(m(calls, 'IOutputAllocator::reallocateOutputAsync').map((c) => c.args)).toEqual([['idx', null, 80, 256, '0xbeef']]);
      expect(m(calls, 'IOutputAllocator::notifyShape').map((c) => c.args)).toEqual([['idx', [2, 5]]]);
      // Set before enqueueV3; unset when the run ends, so the pooled context keeps no pointer to it.
      expect(m(calls, 'VExecutionContext::setOutputAllocator').map((c) => c.args[1])).toEqual([expect.stringMatching(/^0x/), null]);
      expect(m(calls, 'VExecutionContext::setOutputAllocator')[1]!.seq).toBeGreaterThan(m(calls, 'VExecutionContext::enqueueV3')[0]!.seq);
    });

    it('a count of 0 is shape [2, 0]: TensorRT still asks for a positive size', () => {
      const { result, events } = runDriver(built(), args('alloc=1048576'), { FAKE_TRT_NONZERO_COUNT: '0' });
      expect(result).toMatchObject({ ok: true, decided: { idx: { shape: [2, 0], address: 1048576, bytes: 1 } } });
      expect(events).toEqual([
        { event: 'allocate', bytes: 1, stream: 48879, address: 1048576 },
        { event: 'free', address: 1048576 },
      ]);
    });

    it('memory the pool cannot give fails the run with the pool’s error, naming the output', () => {
      const { result, events, calls } = runDriver(built(), args('alloc=fail'));
      expect(result).toEqual({
        ok: false,
        code: 'E_OUT_OF_DEVICE_MEMORY',
        message: 'output "idx" of the TensorRT engine (48 bytes, sized by this run): out of device memory: 48 bytes were asked',
        details: { output: 'idx' },
      });
      expect(events).toEqual([]);
      expect(m(calls, 'VExecutionContext::enqueueV3')).toEqual([expect.objectContaining({ ret: false })]);
      expect(m(calls, 'IOutputAllocator::notifyShape')).toEqual([]);
    });

    it('a size over maxTensorBytes is E_RESOURCE_LIMIT naming the output, and nothing is allocated', () => {
      const { result, events } = runDriver(built(), args('alloc=1048576', 'max=64'), { FAKE_TRT_NONZERO_COUNT: '5' });
      expect(result).toEqual({
        ok: false,
        code: 'E_RESOURCE_LIMIT',
        message: 'output "idx" of the TensorRT engine needs 80 bytes this run, more than maxTensorBytes (64)',
        details: { output: 'idx' },
      });
      expect(events).toEqual([]);
      // At the bound exactly, it is granted.
      expect(runDriver(built(), args('alloc=1048576', 'max=80'), { FAKE_TRT_NONZERO_COUNT: '5' }).result).toMatchObject({ ok: true });
    });

    it('pooled contexts take a fresh allocator each run, and every grant is freed once', () => {
      const { result, events, calls } = runDriver(built(), args('alloc=1048576', 'runs=2'), { FAKE_TRT_NONZERO_COUNT: '2' });
      expect(result).toMatchObject({ ok: true, decided: { idx: { shape: [2, 2], bytes: 32 } } });
      const granted = events.filter((e) => e.event === 'allocate').map((e) => e.address);
      expect(granted).toEqual([1048576, 1048832, 1049088, 1049344]);
      expect(events.filter((e) => e.event === 'free').map((e) => e.address).sort()).toEqual([...granted].sort());
      expect(m(calls, 'IOutputAllocator::reallocateOutputAsync')).toHaveLength(4);
    });
  });
}, buildPlan);
