'use strict';
// Device memory: every dtype round-trips host → device → device → host bit-identically (also
// through the staged path, over several 16 MiB staging chunks); an oversized allocation is
// E_OUT_OF_DEVICE_MEMORY and the next call works; 10,000 allocate/copy/dispose cycles leave
// free memory where it started; tensors never disposed are freed by their finalizers.
const v8 = require('node:v8');
const vm = require('node:vm');
const { gpuCheck, assert, rejection, randomBytes } = require('./check-util');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MIB = 1024 * 1024;

async function settleFinalizers() {
  for (let i = 0; i < 10; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

gpuCheck('device-memory', async (lib) => {
  const { Tensor, DTYPES, toDevice, DeviceTensor, deviceMemoryInfo, trimDevicePool, gpuAllocationStats } = lib;
  const summary = { roundTrips: {} };

  // Round trips. Random bytes as every dtype: NaN payloads and denormals must survive too.
  for (const dtype of DTYPES) {
    for (const size of [0, 1, 1_000_003]) {
      const probe = new Tensor(dtype, [size]);
      const bytes = randomBytes(probe.data.byteLength, 11 + size);
      const data = new probe.data.constructor(bytes.buffer, 0, probe.data.length);
      const host = new Tensor(dtype, [size], data);
      const d1 = await toDevice(host, 0);
      const d2 = await d1.clone();
      const back = await d2.toHost();
      const same = Buffer.compare(Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength), Buffer.from(bytes)) === 0;
      assert(same, `${dtype}[${size}] round trip is bit-identical`);
      assert(back.dtype === dtype && back.shape[0] === size, `${dtype} keeps dtype and shape`);
      d1.dispose();
      d2.dispose();
      d2.dispose(); // idempotent
      summary.roundTrips[dtype] = true;
    }
  }
  // The staged path in several chunks (50 MiB + 3 bytes, 16 MiB chunks), both directions.
  const big = randomBytes(50 * MIB + 3, 5);
  const dBig = await toDevice(new Tensor('uint8', [big.length], big), 0);
  const bigBack = await dBig.toHost();
  assert(Buffer.compare(Buffer.from(bigBack.data), Buffer.from(big)) === 0, '50 MiB staged round trip');
  dBig.dispose();
  summary.stagedRoundTripBytes = big.length;

  // Out of memory, then the device still works.
  const before = await deviceMemoryInfo(0);
  const tooBig = before.totalBytes * 2;
  const oom = await rejection(DeviceTensor.allocate('uint8', [tooBig], 0), 'an allocation of twice the device memory');
  assert(oom.code === 'E_OUT_OF_DEVICE_MEMORY', `OOM code is E_OUT_OF_DEVICE_MEMORY, got ${oom.code}: ${oom.message}`);
  assert(oom.details.requestedBytes === tooBig && oom.details.freeBytes > 0, 'OOM details name requested and free bytes');
  summary.oomMessage = oom.message;
  const after = await toDevice(new Tensor('float32', [4], new Float32Array([1, 2, 3, 4])), 0);
  const afterBack = await after.toHost();
  assert(afterBack.data[3] === 4, 'the device works after an OOM');
  after.dispose();

  // 10,000 cycles.
  await trimDevicePool(0, 0);
  const statsBefore = gpuAllocationStats();
  const freeBefore = (await deviceMemoryInfo(0)).freeBytes;
  const payload = new Tensor('float32', [262144]); // 1 MiB
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 10_000; i++) {
    const t = await toDevice(payload, 0);
    t.dispose();
  }
  const cycleMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await trimDevicePool(0, 0);
  const freeAfter = (await deviceMemoryInfo(0)).freeBytes;
  const statsAfter = gpuAllocationStats();
  summary.cycles = { count: 10_000, freeBefore, freeAfter, differenceBytes: freeBefore - freeAfter, msPerCycle: cycleMs / 10_000 };
  assert(statsAfter.liveBuffers === statsBefore.liveBuffers, 'no live buffers left by the cycles');
  assert(Math.abs(freeBefore - freeAfter) <= 2 * MIB, `free memory returns within 2 MiB (difference ${freeBefore - freeAfter} bytes)`);

  // Finalizers: 200 tensors of 4 MiB, never disposed.
  const finalizedBefore = gpuAllocationStats().finalizedBuffers;
  const liveBefore = gpuAllocationStats().liveBuffers;
  let kept = [];
  for (let i = 0; i < 200; i++) kept.push(await DeviceTensor.allocate('uint8', [4 * MIB], 0));
  assert(gpuAllocationStats().liveBuffers === liveBefore + 200, '200 live buffers while referenced');
  kept = null;
  await settleFinalizers();
  const stats = gpuAllocationStats();
  summary.finalizers = { finalized: stats.finalizedBuffers - finalizedBefore, liveAfterGc: stats.liveBuffers - liveBefore };
  assert(stats.finalizedBuffers - finalizedBefore === 200, `all 200 were finalized (got ${stats.finalizedBuffers - finalizedBefore})`);
  assert(stats.liveBuffers === liveBefore, 'no buffer outlives collection');
  await trimDevicePool(0, 0);
  summary.freeAfterFinalizers = (await deviceMemoryInfo(0)).freeBytes;

  // Bad input stays typed.
  const disposed = await toDevice(payload, 0);
  disposed.dispose();
  const useAfterDispose = await rejection(disposed.toHost(), 'toHost on a disposed tensor');
  assert(useAfterDispose.code === 'E_INVALID_ARGUMENT', 'use after dispose is E_INVALID_ARGUMENT');
  const noDevice = await rejection(DeviceTensor.allocate('float32', [1], 64), 'device 64');
  assert(noDevice.code === 'E_INVALID_ARGUMENT', `a missing device is E_INVALID_ARGUMENT, got ${noDevice.code}`);
  return summary;
});
