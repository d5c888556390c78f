'use strict';
// NVRTC kernels and plans: y = a*x + b over 10^7 elements matches the host; the graph replay
// matches the plain run; a compile error carries NVRTC's log; the disk cache is hit the second
// time; a bad launch and a wrong argument list are typed errors and the device stays usable.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { gpuCheck, assert, rejection, randomFloats } = require('./check-util');

const SOURCE = `
extern "C" __global__ void axpb(const float* x, float* y, float a, float b, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void fill(float* y, float value, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}
`;

gpuCheck('kernels', async (lib) => {
  const { Tensor, toDevice, DeviceTensor, compileModule, GpuPlan } = lib;
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-kcache-'));
  const summary = {};
  try {
    const t0 = process.hrtime.bigint();
    const module = await compileModule(SOURCE, ['axpb', 'fill'], 0, { cacheDir, name: 'axpb.cu' });
    summary.compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
    assert(!module.cached, 'the first compile is not cached');
    const t1 = process.hrtime.bigint();
    const again = await compileModule(SOURCE, ['axpb', 'fill'], 0, { cacheDir, name: 'axpb.cu' });
    summary.cachedLoadMs = Number(process.hrtime.bigint() - t1) / 1e6;
    assert(again.cached, 'the second compile comes from the disk cache');
    again.dispose();

    const n = 10_000_000;
    const a = 1.75, b = -0.5;
    const x = randomFloats(n, 3);
    const dx = await toDevice(new Tensor('float32', [n], x), 0);
    const dy = await DeviceTensor.allocate('float32', [n], 0);
    const launch = (kernel) => ({
      kind: 'launch', module: 0, kernel, grid: [Math.ceil(n / 256)], block: [256],
      args: [{ pointer: { buffer: 0 } }, { pointer: { buffer: 1 } }, { scalar: 'f32', value: a }, { scalar: 'f32', value: b }, { scalar: 'u64', value: n }],
    });
    const plan = await GpuPlan.create({ steps: [launch(module.kernelIndex('axpb'))] }, [dx, dy], [module]);
    await plan.run();
    const y = (await dy.toHost()).data;
    let exact = 0, maxUlps = 0;
    for (let i = 0; i < n; i++) {
      // The device computes fma(a, x, b) with one rounding; a*x is exact in float64, so the host
      // value rounded once from float64 is the same number except in rare double-rounding cases.
      const want = Math.fround(a * x[i] + b);
      if (y[i] === want) exact++;
      else maxUlps = Math.max(maxUlps, Math.abs(y[i] - want) / (Math.abs(want) * 2 ** -23 || 2 ** -149));
    }
    summary.axpb = { n, exact, maxUlps };
    assert(exact >= n - 10 && maxUlps <= 1, `y = a*x + b matches the host (${exact}/${n} exact, max ${maxUlps} ulp)`);

    // Graph capture and replay give the same bytes.
    const fillPlan = await GpuPlan.create(
      { steps: [{ kind: 'memset', dst: { buffer: 1 }, bytes: n * 4, value: 0 }, launch(module.kernelIndex('axpb'))] },
      [dx, dy], [module],
    );
    await fillPlan.capture();
    assert(fillPlan.captured, 'captured');
    await fillPlan.replay(3);
    const replayed = (await dy.toHost()).data;
    assert(Buffer.compare(Buffer.from(replayed.buffer), Buffer.from(y.buffer)) === 0, 'graph replay gives the same bytes as the run');
    fillPlan.dispose();

    // A compile error carries the log.
    const broken = await rejection(compileModule('extern "C" __global__ void k(float* y) { y[0] = undefined_name; }', ['k'], 0, { cacheDir, name: 'broken.cu' }), 'a broken kernel');
    assert(broken.code === 'E_NVRTC_COMPILE', `compile error code (${broken.code})`);
    assert(/undefined_name/.test(broken.details.log) && /broken\.cu/.test(broken.message), 'the NVRTC log names the error and the file');
    summary.compileErrorLog = broken.details.log;

    // A bad launch (too many threads per block) is E_CUDA; the next run works.
    const badLaunch = await GpuPlan.create({ steps: [{ ...launch(0), block: [4096] }] }, [dx, dy], [module]);
    const launchError = await rejection(badLaunch.run(), 'a launch of 4096 threads per block');
    assert(launchError.code === 'E_CUDA' && launchError.details.call === 'cuLaunchKernel', `bad launch is E_CUDA from cuLaunchKernel (${launchError.code}: ${launchError.message})`);
    summary.badLaunch = launchError.message;
    badLaunch.dispose();
    // Wrong arguments (one missing) are refused before launching.
    const wrongArgs = await rejection(
      GpuPlan.create({ steps: [{ ...launch(0), args: launch(0).args.slice(0, 4) }] }, [dx, dy], [module]),
      'a launch with a missing argument',
    );
    assert(wrongArgs.code === 'E_INVALID_ARGUMENT', `missing argument is E_INVALID_ARGUMENT (${wrongArgs.code}: ${wrongArgs.message})`);
    summary.wrongArgs = wrongArgs.message;
    // Out-of-range operand is refused when the plan is decoded.
    const outOfRange = await rejection(
      GpuPlan.create({ steps: [{ kind: 'copy', dst: { buffer: 1, offset: 8 }, src: { buffer: 0 }, bytes: n * 4 }] }, [dx, dy], [module]),
      'a copy past the end of a buffer',
    );
    assert(outOfRange.code === 'E_INVALID_ARGUMENT', 'out-of-range copy is E_INVALID_ARGUMENT');
    await plan.run();
    const y2 = (await dy.toHost()).data;
    assert(y2[12345] === y[12345], 'the device still works after the faults');
    plan.dispose();
    dx.dispose();
    dy.dispose();
    module.dispose();
    return summary;
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
});
