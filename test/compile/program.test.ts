/**
 * Program behaviour: runs off the main thread, validates inputs, runs concurrently,
 * disposes idempotently, and reports compile-time problems with typed errors.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { FIXTURES } from '../helpers/fixtures';
import { runOrtModel } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const mlp = path.join(FIXTURES, 'mlp', 'model.onnx');
const rng = new Random(99);

test('dynamic inputs need a shape, and the error says how to give one', async () => {
  const e = await rejection(compile(mlp, { backend: 'reference' }));
  expect(e.code).toBe('E_INVALID_ARGUMENT');
  expect(e.message).toContain('input "input0" has dynamic dims [batch, 32]');
  expect(e.message).toContain('settings.inputs');
});

test('input specs are checked against the model', async () => {
  expect((await rejection(compile(mlp, { backend: 'reference', inputs: [{ shape: [4, 31] }] }))).message).toContain('dim 1 must be 32');
  expect((await rejection(compile(mlp, { backend: 'reference', inputs: [{ shape: [4, 32], dtype: 'int64' }] }))).message).toContain(
    'is float32 in the model, not int64',
  );
  expect((await rejection(compile(mlp, { backend: 'reference', inputs: { nope: { shape: [4, 32] } } }))).message).toContain('unknown nope');
});

test('asking for TensorRT where it is not usable is E_TENSORRT_MISSING', async () => {
  const e = await rejection(compile(mlp, { backend: 'tensorrt', inputs: [{ shape: [4, 32] }] }));
  expect(e.code).toBe('E_TENSORRT_MISSING');
});

test('asking for cuda without a CUDA driver is E_BACKEND_UNAVAILABLE naming cuda and why, not a missing TensorRT', async () => {
  // These machines have no CUDA driver (test/backends/registry.test.ts checks that reason).
  const e = await rejection(compile(mlp, { backend: 'cuda', inputs: [{ shape: [4, 32] }] }));
  expect(e.code).toBe('E_BACKEND_UNAVAILABLE');
  expect(e.name).toBe('BackendUnavailableError');
  expect(e.details).toMatchObject({ backend: 'cuda', reasons: [expect.stringMatching(/^no CUDA driver: /)] });
  expect(e.message).toContain('backend "cuda" was asked for, but it is not usable here (cuda: no CUDA driver: ');
});

describe('a compiled mlp', () => {
  let program: Awaited<ReturnType<typeof compile>>;
  beforeAll(async () => {
    program = await compile(mlp, { backend: 'reference', inputs: { input0: { shape: [3, 32] } } });
  });
  afterAll(() => program.dispose());

  test('describes itself', () => {
    expect(String(program)).toMatch(/^Program\(input0: float32\[3, 32\]\) -> \(output0: float32\[3, 10\]\) \[engine\(reference\)\]$/);
  });

  test('wrong inputs are E_BAD_INPUT naming the input', async () => {
    expect((await rejection(program.run([Tensor.from('float32', [4, 32], new Array(128).fill(0))]))).message).toContain('"input0" dim 0 must be 3');
    expect((await rejection(program.run({ x: rng.tensor([3, 32]) }))).code).toBe('E_BAD_INPUT');
    expect((await rejection(program.run([rng.tensor([3, 32], 'float64')]))).message).toContain('must be float32, got float64');
  });

  test('concurrent runs each get their own answer', async () => {
    const inputs = [0, 1, 2, 3].map(() => rng.tensor([3, 32]));
    const results = await Promise.all(inputs.map((x) => program.run([x])));
    // onnxruntime on the same file is the reference.
    const bytes = fs.readFileSync(mlp);
    for (const [i, [y]] of results.entries()) expectClose(y!, (await runOrtModel(bytes, [inputs[i]!]))[0]!);
  });

  test('the event loop keeps turning during a run', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const big = await compile(mlp, { backend: 'reference', inputs: [{ shape: [20000, 32] }] });
    try {
      const started = ticks;
      await big.run([rng.tensor([20000, 32])]);
      expect(ticks).toBeGreaterThan(started);
    } finally {
      clearInterval(timer);
      await big.dispose();
    }
  });
});

test('dispose is idempotent and later runs reject', async () => {
  const program = await compile(mlp, { backend: 'reference', inputs: [{ shape: [1, 32] }] });
  await program.run([rng.tensor([1, 32])]);
  await program.dispose();
  await program.dispose();
  expect((await rejection(program.run([rng.tensor([1, 32])]))).message).toContain('disposed');
});

test('a graph mixing engine and fallback segments runs them in order', async () => {
  // relu and gelu convert; forcing gelu out of TensorRT makes a fallback segment in between.
  const g = new Graph('mixed');
  let v = g.addInput('x', tensorType('float32', [2, 8]));
  for (const [i, target] of ['aten.relu.default', 'aten.gelu.default', 'aten.sigmoid.default'].entries()) {
    v = call(g, target, { self: v }, { name: `op${i}` }).output;
  }
  g.setOutputs([v], ['y']);
  const program = await compile(g, { backend: 'reference', minBlockSize: 1, torchExecutedOps: ['aten.gelu.default'] });
  try {
    expect(program.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
    const x = rng.tensor([2, 8]);
    expectClose((await program.run([x]))[0]!, interpret(g, [x])[0]!);
    expect(g.calls()).toHaveLength(3); // compile() never changes the caller's graph
  } finally {
    await program.dispose();
  }
});
