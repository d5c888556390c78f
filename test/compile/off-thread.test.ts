/**
 * compile() runs its pipeline on the compile worker thread (lib/compile/compile-thread.ts):
 * the event loop keeps turning while mobilenet compiles, the logger and onProgress are
 * called here, typed errors keep their class, code and details across the boundary, and a
 * registered user converter makes compile() run in-process (the worker cannot see it).
 */
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { registerConverter, unregisterConverter } from '../../lib/conversion/registry';
import { BadModelError, InvalidArgumentError, TensorRTMissingError } from '../../lib/errors';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { FIXTURES } from '../helpers/fixtures';

const MOBILENET = path.join(FIXTURES, 'mobilenet_v3_small', 'model.onnx');

/** x → relu(x) * 2, as a Graph. */
function reluGraph(): Graph {
  const g = new Graph('relu2');
  const x = g.addInput('x', tensorType('float32', [2, 3]));
  const r = call(g, 'aten.relu.default', { self: x }).output;
  g.setOutputs([call(g, 'aten.mul.Scalar', { self: r, other: 2 }).output], ['y']);
  return g;
}

test('the event loop keeps turning while mobilenet compiles', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  let ticksAtEnd = -1;
  try {
    const program = await compile(MOBILENET, { backend: 'reference', inputs: [{ shape: [1, 3, 96, 96] }] });
    ticksAtEnd = ticks;
    await program.dispose();
  } finally {
    clearInterval(timer);
  }
  // In-process, the pipeline yields only at a handful of awaits: a few ticks at most. On the
  // worker the interval keeps firing through the whole compile (hundreds of ticks).
  expect(ticksAtEnd).toBeGreaterThanOrEqual(25);
});

test('a compiled Graph runs and gives relu(x) * 2; logger and onProgress are called on this thread', async () => {
  const logs: string[] = [];
  const stages: string[] = [];
  const program = await compile(reluGraph(), {
    minBlockSize: 1,
    logger: (_level, message) => logs.push(message),
    onProgress: (e) => stages.push(`${e.stage}:${e.state}`),
  });
  try {
    const [y] = await program.run([Tensor.from('float32', [2, 3], [-1, 0, 1, -2, 2, 3])]);
    expect([...y!.data]).toEqual([0, 0, 2, 0, 4, 6]);
    expect(stages).toEqual(['import:start', 'import:end', 'lowering:start', 'lowering:end', 'partitioning:start', 'partitioning:end', 'build:start', 'build:end']);
    expect(logs.some((m) => m.includes('backend tensorrt is not usable here'))).toBe(true);
    // onnxruntime-node is a devDependency here, so `auto` takes the onnxruntime backend.
    expect(program.backend).toBe('onnxruntime');
    expect(program.backendRefusals.map((r) => r.backend)).toEqual(['tensorrt', 'cuda']);
    expect(program.hostRoundTrips).toEqual({ hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0, total: 0 });
  } finally {
    await program.dispose();
  }
});

test('errors from the worker keep their class, code and details', async () => {
  const missing = path.join(FIXTURES, 'no-such-model.onnx');
  const e = await compile(missing).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(BadModelError);
  expect((e as BadModelError).code).toBe('E_BAD_MODEL');
  expect((e as BadModelError).message).toContain('no-such-model.onnx');

  const t = await compile(reluGraph(), { backend: 'tensorrt' }).catch((x: unknown) => x);
  expect(t).toBeInstanceOf(TensorRTMissingError);
  expect((t as TensorRTMissingError).code).toBe('E_TENSORRT_MISSING');
  expect((t as TensorRTMissingError).details.refusals).toEqual([{ backend: 'tensorrt', reasons: expect.arrayContaining([expect.stringContaining('the native addon was built without TensorRT')]) }]);

  const bad = await compile(reluGraph(), { inputs: [{ shape: [2, 3, 4] }] }).catch((x: unknown) => x);
  expect(bad).toBeInstanceOf(InvalidArgumentError);
});

test('an error thrown by onProgress is the compile error', async () => {
  const boom = new Error('stop here');
  const e = await compile(reluGraph(), {
    onProgress: (ev) => {
      if (ev.stage === 'lowering') throw boom;
    },
  }).catch((x: unknown) => x);
  expect(e).toBe(boom);
});

test('a user converter makes compile() run in-process, and it is used', async () => {
  let used = 0;
  const impl = registerConverter(
    'aten.relu.default',
    (node, ctx) => {
      used++;
      return [ctx.network.add1({ kind: 'activation', type: 'relu' }, [ctx.tensor(node.inputValues()[0]!)], node.name)];
    },
    { priority: 100, name: 'user relu', dynamic: false },
  );
  const logs: string[] = [];
  try {
    const program = await compile(reluGraph(), { backend: 'reference', minBlockSize: 1, logger: (_l, m) => logs.push(m) });
    const [y] = await program.run([Tensor.from('float32', [2, 3], [-1, 0, 1, -2, 2, 3])]);
    expect([...y!.data]).toEqual([0, 0, 2, 0, 4, 6]);
    await program.dispose();
  } finally {
    unregisterConverter(impl);
  }
  expect(used).toBe(1);
  expect(logs).toContain('user converters are registered: compiling on this thread (the compile worker cannot run functions of this thread)');
  // Removed again, the registry is the built-in one: back to the worker.
  const after: string[] = [];
  const program = await compile(reluGraph(), { backend: 'reference', minBlockSize: 1, logger: (_l, m) => after.push(m) });
  await program.dispose();
  expect(after.some((m) => m.includes('compiling on this thread'))).toBe(false);
  expect(used).toBe(1);
});
