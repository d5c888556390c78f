'use strict';
// cuBLASLt and cuDNN as plan steps against the CPU kernels of lib/kernels (float64 arithmetic):
// an fp32 GEMM (TF32 off) and a grouped, strided, padded convolution with bias, run plainly and
// replayed from a CUDA graph.
const path = require('node:path');
const { gpuCheck, assert, randomFloats } = require('./check-util');

const { matmul } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'linalg.js'));
const { conv } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'conv.js'));

/**
 * Largest |got - want| / bound, where bound is the same computation on absolute values (the
 * sum of |terms|): the scale a floating-point sum's error is proportional to. fp32 accumulation
 * gives ~1e-7 here; TF32 inputs (10-bit mantissas) would give ~5e-4.
 */
function maxScaledError(got, want, bound) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / (bound[i] || 1));
  return worst;
}
const abs = (t) => new t.constructor(t.dtype, t.shape, t.data.map(Math.abs));

gpuCheck('libraries', async (lib) => {
  const { Tensor, toDevice, DeviceTensor, GpuPlan, cudaLibraries, convOutputShape } = lib;
  const summary = { libraries: await cudaLibraries() };
  for (const l of summary.libraries) assert(l.found, `${l.name} loads (${l.error && l.error.message})`);

  // GEMM: row-major D[m×n] = A[m×k]·B[k×n].
  const [m, k, n] = [257, 129, 65];
  const A = new Tensor('float32', [m, k], randomFloats(m * k, 21));
  const B = new Tensor('float32', [k, n], randomFloats(k * n, 22));
  const want = matmul(A, B).data;
  const dA = await toDevice(A, 0);
  const dB = await toDevice(B, 0);
  const dD = await DeviceTensor.allocate('float32', [m, n], 0);
  const gemm = await GpuPlan.create({ steps: [{ kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, m, n, k }] }, [dA, dB, dD]);
  await gemm.run();
  const got = (await dD.toHost()).data;
  const gemmError = maxScaledError(got, want, matmul(abs(A), abs(B)).data);
  summary.gemm = { m, n, k, maxScaledError: gemmError, workspaceBytes: gemm.workspaceBytes };
  assert(gemmError < 1e-5, `cuBLASLt fp32 GEMM matches (max scaled error ${gemmError}; TF32 would be ~5e-4)`);
  await gemm.capture();
  await gemm.replay(2);
  const replayed = (await dD.toHost()).data;
  assert(Buffer.compare(Buffer.from(replayed.buffer), Buffer.from(got.buffer)) === 0, 'GEMM graph replay is bit-identical');
  gemm.dispose();

  // Convolution: N=2, C=6, 17×19, K=8, 3×3, groups 2, pads (1, 2), strides (2, 1), dilations (1, 2), bias.
  const step = { input: [2, 6, 17, 19], weight: [8, 3, 3, 3], pads: [1, 2], strides: [2, 1], dilations: [1, 2], groups: 2 };
  const X = new Tensor('float32', step.input, randomFloats(2 * 6 * 17 * 19, 31));
  const W = new Tensor('float32', step.weight, randomFloats(8 * 3 * 3 * 3, 32));
  const bias = new Tensor('float32', [8], randomFloats(8, 33));
  const wantY = conv(X, W, bias, { padding: step.pads, stride: step.strides, dilation: step.dilations, groups: 2 });
  const outShape = convOutputShape(step);
  assert(JSON.stringify(outShape) === JSON.stringify(wantY.shape), `output shape ${outShape} matches the CPU kernel's ${wantY.shape}`);
  const [dX, dW, dBias] = [await toDevice(X, 0), await toDevice(W, 0), await toDevice(bias, 0)];
  const dY = await DeviceTensor.allocate('float32', outShape, 0);
  const convPlan = await GpuPlan.create(
    { steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, bias: { buffer: 2 }, y: { buffer: 3 }, ...step }] },
    [dX, dW, dBias, dY],
  );
  await convPlan.run();
  const gotY = (await dY.toHost()).data;
  const convOptions = { padding: step.pads, stride: step.strides, dilation: step.dilations, groups: 2 };
  const convBound = conv(abs(X), abs(W), abs(bias), convOptions).data;
  const convError = maxScaledError(gotY, wantY.data, convBound);
  summary.conv = { ...step, output: outShape, maxScaledError: convError, workspaceBytes: convPlan.workspaceBytes };
  assert(convError < 1e-5, `cuDNN fp32 convolution matches (max scaled error ${convError})`);
  await convPlan.capture();
  await convPlan.replay(2);
  const convReplayed = (await dY.toHost()).data;
  summary.conv.replayBitIdentical = Buffer.compare(Buffer.from(convReplayed.buffer), Buffer.from(gotY.buffer)) === 0;
  assert(maxScaledError(convReplayed, wantY.data, convBound) < 1e-5, 'convolution graph replay matches');
  convPlan.dispose();
  for (const t of [dA, dB, dD, dX, dW, dBias, dY]) t.dispose();
  return summary;
});
