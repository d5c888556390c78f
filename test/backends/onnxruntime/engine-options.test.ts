/**
 * The session options an onnxruntime engine is created with (lib/backends/onnxruntime/run/engine.ts),
 * seen through a stand-in for onnxruntime-node's module: the graph optimizers the backend
 * turns off reach onnxruntime as its `optimization.disable_specified_optimizers` entry, next
 * to the settings the engine was built with.
 */
import { DISABLED_OPTIMIZERS, OrtEngine } from '../../../lib/backends/onnxruntime/run/engine';
import type { OrtEngineDescription } from '../../../lib/backends/onnxruntime/engine-format';
import type { OrtModule } from '../../../lib/backends/onnxruntime/ort-module';

test('sessions are created with the backend settings and without MatmulTransposeFusion', async () => {
  const seen: unknown[] = [];
  const session = { run: async () => ({}), release: async () => undefined };
  const ort = { InferenceSession: { create: async (_model: Uint8Array, options: unknown) => (seen.push(options), session) }, Tensor: class {} } as unknown as OrtModule;
  const description: OrtEngineDescription = {
    network: 'n',
    opset: 18,
    inputs: [{ name: 'x', dtype: 'float32', shape: [1], profiles: [] }],
    outputs: [{ name: 'y', dtype: 'float32', shape: [1] }],
    session: { intraOpThreads: 3, interOpThreads: 1 },
  };
  const engine = await OrtEngine.create(ort, new Uint8Array(0), description);
  engine.dispose();
  expect(DISABLED_OPTIMIZERS).toContain('MatmulTransposeFusion');
  expect(seen).toEqual([
    expect.objectContaining({
      graphOptimizationLevel: 'all',
      intraOpNumThreads: 3,
      interOpNumThreads: 1,
      extra: { optimization: { disable_specified_optimizers: DISABLED_OPTIMIZERS.join(',') } },
    }),
  ]);
});
