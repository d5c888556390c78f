'use strict';
// cuBLASLt and cuDNN as plan steps against the CPU kernels of lib/kernels (float64 arithmetic):
// an fp32 GEMM (TF32 off) and a grouped, strided, padded convolution with bias, run plainly and
// replayed from a CUDA graph; then every form of plan format 2 (formats2 below): transposed,
// strided-batch and broadcast GEMMs with alpha/beta in fp32, fp16 and bf16, TF32 on request;
// 1-D and 3-D convolutions, asymmetric padding, fp16/bf16, transposed convolutions with bias.
// fp16/bf16 inputs are rounded to the dtype first and the reference computed from the rounded
// values, so the tolerance covers only the output's rounding (2^-11 fp16, 2^-8 bf16, relative to
// the sum of |terms|) and fp32 accumulation.
const path = require('node:path');
const { gpuCheck, assert, randomFloats } = require('./check-util');

const { matmul } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'linalg.js'));
const { conv, convTranspose } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'conv.js'));
const { fromNumbers, readNumbers } = require(path.join(__dirname, '..', '..', 'dist', 'kernels', 'access.js'));

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
  summary.format2 = await formats2(lib);
  const failed = Object.entries(summary.format2).filter(([, r]) => !r.ok);
  assert(failed.length === 0, `plan format 2 forms that failed: ${failed.map(([name, r]) => `${name} (${r.error ? `${r.error.code}: ${r.error.message}` : `error ${r.maxScaledError} > ${r.tolerance}`})`).join('; ')}`);
  return summary;
});

// Output rounding of each dtype, as a fraction of the sum of |terms| (fp32 accumulation adds ~1e-7).
const TOLERANCE = { float32: 1e-5, float16: 1.5e-3, bfloat16: 1e-2 };

/** Random values of `dtype` (rounded to it) and the same values as an exact float32 tensor. */
function inputs(dtype, shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const typed = fromNumbers(dtype, shape, randomFloats(n, seed));
  return { typed, exact: fromNumbers('float32', shape, readNumbers(typed)) };
}

/** A float32 matrix's transpose (rows × cols → cols × rows). */
function transpose2d(t) {
  const [rows, cols] = t.shape;
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = t.data[i * cols + j];
  return fromNumbers('float32', [cols, rows], out);
}

/** Matrix `index` of a strided batch held in a flat float32 tensor. */
function matrixAt(t, index, stride, rows, cols) {
  return fromNumbers('float32', [rows, cols], t.data.subarray(index * stride, index * stride + rows * cols));
}

async function formats2(lib) {
  const { toDevice, DeviceTensor, GpuPlan } = lib;
  const results = {};
  const run = async (name, fn) => {
    try {
      results[name] = await fn();
      results[name].ok = results[name].maxScaledError <= results[name].tolerance && results[name].ok !== false;
    } catch (error) {
      results[name] = { ok: false, error: { code: error.code, message: error.message, stack: error.stack } };
    }
  };

  // GEMMs: D_b = alpha · op(A_b) · op(B_b) + beta · D0_b over the batch, checked matrix by matrix.
  // Plan format 4's epilogue (one matrix): `ownC` reads beta · C from a buffer of its own instead
  // of D, `bias` adds one value per column, `relu` clamps at zero; `tune` times that many candidates.
  const gemmCase = (dtype, o) => async () => {
    const { m, n, k, batch = 1, transA = false, transB = false, alpha = 1, beta = 0, tf32 = false, ownC = false, bias = false, relu = false, tune = 0 } = o;
    const aRows = transA ? k : m, aCols = transA ? m : k, bRows = transB ? n : k, bCols = transB ? k : n;
    const strideA = o.strideA ?? m * k, strideB = o.strideB ?? k * n, strideD = m * n;
    const aCount = strideA === 0 ? m * k : (batch - 1) * strideA + m * k;
    const bCount = strideB === 0 ? k * n : (batch - 1) * strideB + k * n;
    const A = inputs(dtype, [aCount], 41), B = inputs(dtype, [bCount], 42), D0 = inputs(dtype, [batch * m * n], 43);
    const C = ownC ? inputs(dtype, [m * n], 44) : D0;
    const biasValues = bias ? inputs(dtype, [n], 45) : null;
    const devices = [await toDevice(A.typed, 0), await toDevice(B.typed, 0), await toDevice(D0.typed, 0)];
    const [dA, dB, dD] = devices;
    const epilogue = { relu, tune };
    if (ownC) {
      devices.push(await toDevice(C.typed, 0));
      epilogue.c = { buffer: devices.length - 1 };
    }
    if (biasValues) {
      devices.push(await toDevice(biasValues.typed, 0));
      epilogue.bias = { buffer: devices.length - 1 };
    }
    try {
      const plan = await GpuPlan.create(
        { steps: [{ kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, m, n, k, dtype, transA, transB, batch, strideA, strideB, alpha, beta, tf32, ...epilogue }] },
        devices,
      );
      await plan.run();
      const got = readNumbers(await dD.toHost());
      let worst = 0;
      for (let b = 0; b < batch; b++) {
        let a = matrixAt(A.exact, b, strideA, aRows, aCols), bm = matrixAt(B.exact, b, strideB, bRows, bCols);
        if (transA) a = transpose2d(a);
        if (transB) bm = transpose2d(bm);
        const product = matmul(a, bm).data, bound = matmul(abs(a), abs(bm)).data;
        for (let i = 0; i < m * n; i++) {
          const c0 = C.exact.data[b * strideD + i];
          const added = biasValues ? biasValues.exact.data[i % n] : 0;
          const sum = alpha * product[i] + beta * c0 + added;
          const want = relu ? Math.max(sum, 0) : sum;
          const scaleBound = Math.abs(alpha) * bound[i] + Math.abs(beta * c0) + Math.abs(added);
          worst = Math.max(worst, Math.abs(got[b * strideD + i] - want) / (scaleBound || 1));
        }
      }
      const summary = { dtype, ...o, maxScaledError: worst, tolerance: tf32 ? 5e-3 : TOLERANCE[dtype], workspaceBytes: plan.workspaceBytes };
      // A ReLU that did not take effect leaves negative outputs.
      if (relu && got.some((v) => v < 0)) {
        summary.ok = false;
        summary.why = 'negative outputs: the ReLU epilogue did not take effect';
      }
      plan.dispose();
      return summary;
    } finally {
      for (const t of devices) t.dispose();
    }
  };
  await run('gemm fp32 transA transB batch 3, broadcast A, alpha 0.5 beta 2', gemmCase('float32', { m: 33, n: 17, k: 29, batch: 3, transA: true, transB: true, strideA: 0, alpha: 0.5, beta: 2 }));
  await run('gemm fp32 batch 4, padded B stride', gemmCase('float32', { m: 16, n: 24, k: 40, batch: 4, strideB: 40 * 24 + 8 }));
  await run('gemm fp16 batch 2', gemmCase('float16', { m: 64, n: 48, k: 96, batch: 2 }));
  await run('gemm fp16 transA, broadcast B, beta 1', gemmCase('float16', { m: 40, n: 24, k: 72, batch: 3, transA: true, strideB: 0, beta: 1 }));
  await run('gemm bf16 transB batch 2', gemmCase('bfloat16', { m: 56, n: 40, k: 64, batch: 2, transB: true }));
  await run('gemm fp32 tf32', gemmCase('float32', { m: 128, n: 128, k: 256, tf32: true }));
  await run('gemm fp16 epilogue: own C (beta 1), bias, ReLU, 8 candidates timed', gemmCase('float16', { m: 96, n: 40, k: 64, transB: true, beta: 1, ownC: true, bias: true, relu: true, tune: 8 }));
  await run('gemm bf16 epilogue: bias', gemmCase('bfloat16', { m: 50, n: 24, k: 32, transB: true, bias: true }));
  await run('gemm fp32 epilogue: ReLU, 4 candidates timed', gemmCase('float32', { m: 33, n: 17, k: 29, relu: true, tune: 4 }));
  // TF32 rounds inputs to 10-bit mantissas: its error is ~1e-4, fp32's ~1e-7. A TF32 result as
  // exact as fp32 would mean the flag did not reach cuBLASLt.
  const tf32 = results['gemm fp32 tf32'];
  if (tf32.ok && !(tf32.maxScaledError > 1e-6)) {
    tf32.ok = false;
    tf32.why = `TF32 error ${tf32.maxScaledError} is at fp32's level: the tf32 flag did not take effect`;
  }

  // Convolutions: each against conv / convTranspose of lib/kernels on the same (rounded) values.
  const convCase = (dtype, o) => async () => {
    const { input, weight, pads = input.slice(2).map(() => 0), postPads = pads, strides, dilations, groups = 1, transposed = false, bias: withBias = true } = o;
    const X = inputs(dtype, input, 51), W = inputs(dtype, weight, 52);
    const k = transposed ? weight[1] * groups : weight[0];
    const Bias = inputs(dtype, [k], 53);
    const options = { pads: [...pads, ...postPads], stride: strides, dilation: dilations, groups };
    const reference = transposed ? convTranspose : conv;
    const want = reference(X.exact, W.exact, withBias ? Bias.exact : null, options);
    const bound = reference(abs(X.exact), abs(W.exact), withBias ? abs(Bias.exact) : null, options).data;
    const step = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, bias: withBias ? { buffer: 2 } : null, y: { buffer: 3 }, input, weight, pads, postPads, strides, dilations, groups, dtype, transposed };
    const shape = lib.convOutputShape(step);
    if (JSON.stringify(shape) !== JSON.stringify(want.shape)) {
      return { ok: false, maxScaledError: NaN, tolerance: 0, why: `convOutputShape ${shape} but the CPU kernel gives ${want.shape}` };
    }
    const buffers = [await toDevice(X.typed, 0), await toDevice(W.typed, 0), await toDevice(Bias.typed, 0), await DeviceTensor.allocate(dtype, shape, 0)];
    try {
      const plan = await GpuPlan.create({ steps: [step] }, buffers);
      await plan.run();
      const got = readNumbers(await buffers[3].toHost());
      const error = maxScaledError(got, want.data, bound);
      const summary = { dtype, ...o, output: shape, maxScaledError: error, tolerance: TOLERANCE[dtype], workspaceBytes: plan.workspaceBytes };
      if (o.replay) {
        // The padding copy (memset + 3-D copy) is recorded into the graph too.
        await buffers[3].write(fromNumbers(dtype, shape, new Float32Array(got.length)));
        await plan.capture();
        await plan.replay(2);
        summary.replayMaxScaledError = maxScaledError(readNumbers(await buffers[3].toHost()), want.data, bound);
        summary.ok = summary.replayMaxScaledError <= summary.tolerance;
      }
      plan.dispose();
      return summary;
    } finally {
      for (const t of buffers) t.dispose();
    }
  };
  await run('conv1d fp32 bias', convCase('float32', { input: [2, 4, 31], weight: [6, 2, 5], pads: [2], strides: [2], dilations: [1], groups: 2 }));
  await run('conv2d fp32 asymmetric pads (graph replay too)', convCase('float32', { input: [2, 3, 13, 11], weight: [5, 3, 3, 4], pads: [0, 2], postPads: [1, 0], strides: [2, 1], dilations: [1, 2], replay: true }));
  await run('conv1d fp32 asymmetric pads', convCase('float32', { input: [1, 3, 20], weight: [4, 3, 4], pads: [3], postPads: [0], strides: [1], dilations: [1] }));
  await run('conv3d fp32 asymmetric pads', convCase('float32', { input: [1, 2, 6, 7, 8], weight: [3, 2, 3, 2, 3], pads: [1, 0, 2], postPads: [0, 1, 1], strides: [1, 2, 1], dilations: [1, 1, 2] }));
  await run('conv2d fp16 bias', convCase('float16', { input: [2, 8, 15, 15], weight: [16, 8, 3, 3], pads: [1, 1], strides: [1, 1], dilations: [1, 1] }));
  await run('conv2d bf16 asymmetric pads', convCase('bfloat16', { input: [1, 8, 12, 12], weight: [8, 8, 3, 3], pads: [1, 0], postPads: [0, 1], strides: [1, 1], dilations: [1, 1] }));
  await run('conv3d fp16', convCase('float16', { input: [1, 4, 6, 6, 6], weight: [8, 4, 3, 3, 3], pads: [1, 1, 1], strides: [1, 1, 1], dilations: [1, 1, 1] }));
  await run('deconv2d fp32 bias groups 2 stride 2 output padding 1', convCase('float32', { input: [2, 4, 7, 9], weight: [4, 3, 3, 3], pads: [1, 1], postPads: [0, 0], strides: [2, 2], dilations: [1, 1], groups: 2, transposed: true }));
  await run('deconv1d fp32 dilation 2', convCase('float32', { input: [1, 3, 10], weight: [3, 2, 3], pads: [1], strides: [3], dilations: [2], transposed: true }));
  await run('deconv3d fp16 bias', convCase('float16', { input: [1, 8, 4, 5, 6], weight: [8, 8, 2, 2, 2], pads: [0, 0, 0], strides: [2, 2, 2], dilations: [1, 1, 1], transposed: true }));
  await run('deconv2d bf16 bias', convCase('bfloat16', { input: [2, 8, 6, 6], weight: [8, 8, 4, 4], pads: [1, 1], strides: [2, 2], dilations: [1, 1], transposed: true }));
  return results;
}
