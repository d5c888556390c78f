/**
 * The build knobs (lib/engine/build-config.ts): compile settings → a validated BuildConfig
 * with defaults; the reference backend accepts any and records it (it ignores precision).
 */
import { DEFAULT_BUILD_CONFIG, resolveBuildConfig } from '../../lib/backends';
import { referenceBackend } from '../../lib/backends/reference';
import { resolveSettings } from '../../lib/compile/settings';
import { Network } from '../../lib/network';
import { Tensor } from '../../lib/ir/tensor';

test('defaults: fp32 only, no workspace limit or timing cache, no hardware compatibility, level 3', () => {
  expect(resolveBuildConfig({})).toEqual(DEFAULT_BUILD_CONFIG);
  expect(resolveSettings({}).build).toEqual({ precisions: ['fp32'], workspaceBytes: undefined, timingCache: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 });
});

test('compile settings carry every knob; fp32 stays allowed and precisions come in a fixed order', () => {
  const cache = new Uint8Array([1, 2, 3]);
  expect(resolveSettings({ precisions: ['bf16', 'fp16'], workspaceBytes: 1 << 30, timingCache: cache, hardwareCompatibility: 'ampere+', optimizationLevel: 5 }).build).toEqual({
    precisions: ['fp32', 'fp16', 'bf16'],
    workspaceBytes: 1 << 30,
    timingCache: cache,
    hardwareCompatibility: 'ampere+',
    optimizationLevel: 5,
  });
  expect(resolveBuildConfig({ timingCache: '/tmp/trt.cache', optimizationLevel: 0 })).toMatchObject({ timingCache: '/tmp/trt.cache', optimizationLevel: 0 });
});

test('the reference backend accepts every knob, builds the same engine with fp16 allowed, and computes in float32', async () => {
  const net = new Network('n');
  const x = net.addInput('x', 'float32', [3]);
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu'), 'y');
  const config = resolveBuildConfig({ precisions: ['fp16'], workspaceBytes: 1024 });
  const bytes = await referenceBackend.build(net, config);
  // The knobs have no effect on this backend: the engine is the one the defaults give.
  expect(Buffer.from(bytes).equals(Buffer.from(await referenceBackend.build(net, DEFAULT_BUILD_CONFIG)))).toBe(true);
  const engine = await referenceBackend.load(bytes, null);
  const out = await engine.run({ x: Tensor.from('float32', [3], [-1, 0.1, 2]) });
  // float32 results, not fp16-rounded ones: 0.1 keeps its float32 bits.
  expect([...(out.y as Tensor).data]).toEqual([0, Math.fround(0.1), 2]);
  engine.dispose();
});

test('the reference engine converts float64 inputs to its float32 network (truncateDouble at the boundary)', async () => {
  const net = new Network('n');
  const x = net.addInput('x', 'float32', [2]);
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu'), 'y');
  const engine = await referenceBackend.load(await referenceBackend.build(net, DEFAULT_BUILD_CONFIG), null);
  const out = (await engine.run({ x: Tensor.from('float64', [2], [-1.5, 1 / 3]) })).y as Tensor;
  expect(out.dtype).toBe('float32');
  expect([...out.data]).toEqual([0, Math.fround(1 / 3)]);
  engine.dispose();
});
