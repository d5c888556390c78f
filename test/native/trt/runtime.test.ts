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
}, buildPlan);
