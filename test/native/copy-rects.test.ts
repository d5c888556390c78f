/**
 * gpuCopyRects (native/gpu/bindings.cc, cuda::FillAndCopyRects): the zero fills and strided
 * copies a bucketed KV cache moves its slots with, against the fake CUDA driver with runtime
 * entry points (fixtures/fake_cuda.c, FAKE_RUNTIME): its memsets complete and its copies fail
 * with CUDA_ERROR_NOT_SUPPORTED, so what is tested here is the argument checks (every row of a
 * rect inside its buffer, before anything is enqueued), the typed errors and the buffer
 * leases (a refusal is thrown at the call, before anything is enqueued); the bytes a copy moves are checked on the GPU (test/gpu/device-copies.check.js) and
 * by the generation tests on the simulated device.
 */
import * as path from 'node:path';

import { DIST_INDEX, runLibScenario } from '../helpers/built-package';
import { useFakeRuntimeDriver } from '../helpers/fake-libs';

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

const fake = useFakeRuntimeDriver('rects');

const scenario = (body: string) =>
  runLibScenario(
    `const { gpuBinding } = require(${JSON.stringify(path.join(path.dirname(DIST_INDEX), 'gpu', 'binding'))});
     const b = gpuBinding();
     const a = await lib.DeviceTensor.allocate('float32', [4, 8], 0);
     const c = await lib.DeviceTensor.allocate('float32', [4, 6], 0);
     const outcome = (call) => Promise.resolve().then(call).then(() => 'ok', (e) => ({ code: e.code, message: e.message, call: e.details && e.details.call }));
     ${body}`,
    { TENSORRT_NODE_CUDA_LIBRARY: fake.driver },
  );

describeOnLinux('gpuCopyRects (fake driver)', () => {
  test('fills run; a copy reaches cuMemcpy3DAsync_v2 (unsupported by the fake: E_CUDA naming it); nothing to do resolves; every lease is released', () => {
    const { status, result, stderr } = scenario(`
      const fill = await outcome(() => b.gpuCopyRects([[a.buffer, 0, 128], [c.buffer, 32, 64]], []));
      const none = await outcome(() => b.gpuCopyRects([], []));
      const copy = await outcome(() => b.gpuCopyRects([], [[a.buffer, 4, 32, c.buffer, 0, 24, 24, 4]]));
      a.dispose(); c.dispose();
      return { fill, none, copy, disposed: a.disposed && c.disposed, stats: lib.gpuAllocationStats() };`);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(result).toMatchObject({ fill: 'ok', none: 'ok', copy: { code: 'E_CUDA', call: 'cuMemcpy3DAsync_v2' }, disposed: true, stats: { liveBuffers: 0, liveBytes: 0 } });
    expect((result.copy as { message: string }).message).toMatch(/^cuMemcpy3DAsync_v2 failed with .*\(4 rows of 24 bytes\)/);
  });

  test('a rect whose last row leaves its buffer, a width over its pitch, a bad entry or a disposed buffer: E_INVALID_ARGUMENT before anything runs', () => {
    const { status, result } = scenario(`
      const d = await lib.DeviceTensor.allocate('float32', [1], 0);
      d.dispose();
      const checks = {
        // 4 rows 32 bytes apart from offset 8, 32 wide: the last ends at 8 + 96 + 32 = 136 > 128.
        pastEnd: await outcome(() => b.gpuCopyRects([], [[a.buffer, 8, 32, a.buffer, 0, 32, 32, 4]])),
        sourcePastEnd: await outcome(() => b.gpuCopyRects([], [[a.buffer, 0, 32, c.buffer, 0, 32, 24, 4]])),
        wide: await outcome(() => b.gpuCopyRects([], [[a.buffer, 0, 16, c.buffer, 0, 24, 24, 2]])),
        fillPastEnd: await outcome(() => b.gpuCopyRects([[c.buffer, 90, 8]], [])),
        shortEntry: await outcome(() => b.gpuCopyRects([], [[a.buffer, 0, 32]])),
        negative: await outcome(() => b.gpuCopyRects([[a.buffer, -4, 8]], [])),
        disposed: await outcome(() => b.gpuCopyRects([[d.buffer, 0, 4]], [])),
        notArrays: await outcome(() => b.gpuCopyRects(null, [])),
      };
      a.dispose(); c.dispose();
      return { checks, stats: lib.gpuAllocationStats() };`);
    expect(status).toBe(0);
    const checks = result.checks as Record<string, { code: string; message: string }>;
    for (const c of Object.values(checks)) expect(c.code).toBe('E_INVALID_ARGUMENT');
    expect(checks.pastEnd!.message).toBe('copyRects() destination: bytes [8, 136) are outside the 128-byte DeviceBuffer');
    expect(checks.sourcePastEnd!.message).toBe('copyRects() source: bytes [0, 120) are outside the 96-byte DeviceBuffer');
    expect(checks.wide!.message).toBe("copyRects(): a rect's width is larger than its pitch");
    expect(checks.fillPastEnd!.message).toBe('copyRects() fill: bytes [90, 98) are outside the 96-byte DeviceBuffer');
    expect(checks.shortEntry!.message).toBe('copyRects(): each of rects must be an array of 8');
    expect(checks.negative!.message).toBe("copyRects(): a fill's offset must be an integer >= 0");
    expect(checks.disposed!.message).toBe('The fill DeviceBuffer was disposed');
    expect(checks.notArrays!.message).toBe('copyRects(fills, rects): both must be arrays');
    // The leases taken before a refusal were released: both tensors were freed at dispose().
    expect(result.stats).toMatchObject({ liveBuffers: 0, liveBytes: 0 });
  });
});
