/**
 * The session options an onnxruntime engine is created with (lib/backends/onnxruntime/run/engine.ts),
 * seen through a stand-in for onnxruntime-node's module: the graph optimizers the backend
 * turns off reach onnxruntime as its `optimization.disable_specified_optimizers` entry (a
 * list onnxruntime splits at semicolons), its Q/DQ rewrites as `session.disable_quant_qdq` and
 * `session.disable_double_qdq_remover`, next to the settings the engine was built with.
 */
import { DISABLED_OPTIMIZERS, OrtEngine, SESSION_CONFIG } from '../../../lib/backends/onnxruntime/run/engine';
import type { OrtEngineDescription } from '../../../lib/backends/onnxruntime/engine-format';
import type { OrtModule } from '../../../lib/backends/onnxruntime/ort-module';

test('sessions are created with the backend settings, without MatmulTransposeFusion and the Q/DQ rewrites', async () => {
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
  expect(DISABLED_OPTIMIZERS).toEqual(['MatmulTransposeFusion', 'ReluQuantRewrite']);
  expect(SESSION_CONFIG).toEqual({ session: { disable_quant_qdq: '1', disable_double_qdq_remover: '1' } });
  expect(seen).toEqual([
    expect.objectContaining({
      graphOptimizationLevel: 'all',
      intraOpNumThreads: 3,
      interOpNumThreads: 1,
      extra: {
        session: { disable_quant_qdq: '1', disable_double_qdq_remover: '1' },
        optimization: { disable_specified_optimizers: 'MatmulTransposeFusion;ReluQuantRewrite' },
      },
    }),
  ]);
});
