/**
 * CUDA's current device (lib/gpu/current-device.ts) against the fake driver with runtime entry
 * points: the context current on the calling thread decides it, per thread as in CUDA, and
 * device 0 is what a thread that never chose one gets. Each scenario runs in its own process.
 */
import { DIST_INDEX, runLibScenario, runNode } from '../helpers/built-package';
import { useFakeRuntimeDriver } from '../helpers/fake-libs';

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

const fake = useFakeRuntimeDriver('current');

const scenario = (body: string): Record<string, unknown> => runLibScenario(body, { TENSORRT_NODE_CUDA_LIBRARY: fake.driver }).result;

describeOnLinux('current device (fake driver, two devices)', () => {
  test('device 0 until one is chosen; setCurrentDevice(1) makes it 1 on this thread only; a bad ordinal is refused', () => {
    const result = scenario(`
      const { Worker } = require('node:worker_threads');
      const before = lib.currentDevice();
      await lib.setCurrentDevice(1);
      const after = lib.currentDevice();
      const inWorker = await new Promise((resolve, reject) => {
        const w = new Worker(\`const lib = require(\${JSON.stringify(${JSON.stringify(DIST_INDEX)})});
          require('node:worker_threads').parentPort.postMessage(lib.currentDevice());\`, { eval: true });
        w.once('message', resolve);
        w.once('error', reject);
      });
      const missing = await lib.setCurrentDevice(5).catch((e) => e.code);
      const negative = await lib.setCurrentDevice(-1).catch((e) => e.code);
      await lib.setCurrentDevice({ ordinal: 0 });
      return { before, after, inWorker, missing, negative, back: lib.currentDevice() };`);
    expect(result).toEqual({ before: 0, after: 1, inWorker: 0, missing: 'E_INVALID_ARGUMENT', negative: 'E_INVALID_ARGUMENT', back: 0 });
  });

  test('without a driver the current device is 0 and nothing throws', () => {
    const child = runNode(['-e', `const lib = require(${JSON.stringify(DIST_INDEX)}); console.log(lib.currentDevice());`], {
      TENSORRT_NODE_CUDA_LIBRARY: '/nonexistent/libcuda.so.1',
    }, 30_000);
    expect(child.stdout.trim()).toBe('0');
  });
});
