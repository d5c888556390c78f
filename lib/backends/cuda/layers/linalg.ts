/**
 * Library layers: IMatrixMultiplyLayer as a (batched) GemmStep through cuBLASLt (up to four
 * rows by a transposed fp16/bf16 B as a generated launch instead, gemv.ts), and
 * IConvolutionLayer / IDeconvolutionLayer as a ConvStep through cuDNN, except a channels-last
 * 1×1 stride-1 convolution, which is a GEMM with its bias, residual and ReLU in cuBLASLt's
 * epilogue. Fields at their defaults are left out.
 */
import { GEMM_MAX_TUNE, type BufferSlice, type ConvStep, type GemmStep, type LibraryDType } from '../../../gpu/plan';
import type { LayerParams, TrtDType } from '../../../network';
import { InvalidArgumentError } from '../../../errors';
import { broadcastStrides, checkRank, denseStrides, input, output, paramsOf, unsupported, volume } from './kernel';
import { GEMV_DTYPES, GEMV_MAX_ROWS, gemvLaunch } from './gemv';
import { depthwiseLaunch, isDepthwise } from './depthwise';
import { copySpec, mapLaunch } from './map';
import { castBody } from './pointwise';
import { BYTES } from './prelude';
import type { BoundTensor, LayerLowering, LoweredStep, LoweringContext } from './types';

const LIBRARY_DTYPES = new Set<TrtDType>(['float32', 'float16', 'bfloat16']);

/**
 * How many of cuBLASLt's heuristic candidates a 1×1 convolution's GEMM times when its plan is
 * prepared: for ResNet-50's 1×1 convolutions (H200, 2026-12-03) its first choice was as good as
 * the best of eight on 5 of 13 shapes and up to 46% slower on the others; 584 µs against 520 for
 * all 33 layers, where cuDNN takes 560 (bench/gpu/pointwise_convs.cc).
 * A matmul layer's GEMM keeps the first choice untimed: timing eight candidates gained nothing
 * on the transformer benchmarks (H200, 2026-12-03: Llama 0.54 ms either way, BERT 0.79 against
 * 0.80; docs/cuda-backend.md, "The timing cache and budget, cuDNN's algorithms measured").
 */
export const CONV_GEMM_TUNE = 8;

/**
 * `fallback`, or TENSORRT_NODE_GEMM_TUNE for every GEMM when it is set: 0–16 candidates (0 and 1
 * take cuBLASLt's first choice untimed).
 */
function gemmTune(fallback: number): number {
  const given = process.env.TENSORRT_NODE_GEMM_TUNE;
  if (given === undefined || given === '') return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 0 || n > GEMM_MAX_TUNE) {
    throw new InvalidArgumentError(`TENSORRT_NODE_GEMM_TUNE must be an integer from 0 to ${GEMM_MAX_TUNE} (how many cuBLASLt candidates a GEMM times), got ${JSON.stringify(given)}`, {
      details: { envVar: 'TENSORRT_NODE_GEMM_TUNE', value: given },
    });
  }
  return n;
}

function libraryDtype(ctx: LoweringContext, dtype: TrtDType): LibraryDType {
  if (!LIBRARY_DTYPES.has(dtype)) unsupported(ctx, `${ctx.layer.params.kind} does not take ${dtype}`);
  return dtype as LibraryDType;
}

/** Where operand `t`'s matrices are for a batch of `batch` dims: its own slice (dense or broadcast as one stride) or a broadcast copy in scratch. */
function batchOperand(ctx: LoweringContext, t: BoundTensor, own: readonly number[], matrix: readonly number[], batch: readonly number[], steps: LoweredStep[]): { at: BufferSlice; stride: number } {
  const size = volume(matrix);
  if (volume(own) === 1) return { at: t.at, stride: 0 };
  if (own.every((d, i) => d === batch[i])) return { at: t.at, stride: size };
  const shape = [...own, ...matrix];
  const full = [...batch, ...matrix];
  checkRank(ctx, full.length);
  const at = ctx.scratch(volume(full) * BYTES[t.dtype]);
  steps.push(...mapLaunch(copySpec(t.dtype), full, { at, strides: denseStrides(full) }, [{ at: t.at, strides: broadcastStrides(shape, full) }]));
  return { at, stride: size };
}

export const matmul: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'matmul');
  const a = input(ctx, 0);
  const b = input(ctx, 1);
  const out = output(ctx);
  const dtype = libraryDtype(ctx, a.dtype);
  if (b.dtype !== a.dtype) unsupported(ctx, `input types differ: ${a.dtype} and ${b.dtype}`);
  const vecA = p.opA === 'vector';
  const vecB = p.opB === 'vector';
  const batchA = a.shape.slice(0, a.shape.length - (vecA ? 1 : 2));
  const batchB = b.shape.slice(0, b.shape.length - (vecB ? 1 : 2));
  if (batchA.length !== batchB.length) unsupported(ctx, `batch ranks differ: [${a.shape.join(', ')}] and [${b.shape.join(', ')}]`);
  const batch = batchA.map((d, i) => (d === 1 ? batchB[i]! : d));
  const matA = a.shape.slice(batchA.length);
  const matB = b.shape.slice(batchB.length);
  // Stored A is m×k (k×m with transA); stored B is k×n (n×k with transB); a vector A is 1×k, a vector B k×1.
  const transA = p.opA === 'transpose';
  const transB = p.opB === 'transpose';
  const m = vecA ? 1 : transA ? matA[1]! : matA[0]!;
  const k = vecA ? matA[0]! : transA ? matA[0]! : matA[1]!;
  const n = vecB ? 1 : transB ? matB[0]! : matB[1]!;
  const count = volume(batch);
  if (count * m * n === 0) return [];
  if (k === 0) return [{ kind: 'memset', dst: out.at, bytes: count * m * n * BYTES[dtype], value: 0 }];
  const steps: LoweredStep[] = [];
  const A = batchOperand(ctx, a, batchA, matA, batch, steps);
  const B = batchOperand(ctx, b, batchB, matB, batch, steps);
  // One B for every batch and A's rows stored batch after batch (a linear layer over
  // [batch, seq, k]): one GEMM of count·m rows. cuBLASLt tiles the larger M as it sees fit;
  // as `count` batched products of m rows, BERT-base's projections ran at 128 rows each.
  const rows = count > 1 && B.stride === 0 && !transA && A.stride === m * k;
  const M = rows ? count * m : m;
  // A few rows by a transposed B (a linear layer over one token or image): one generated launch (gemv.ts).
  if ((count === 1 || rows) && transB && !transA && M <= GEMV_MAX_ROWS && GEMV_DTYPES.has(dtype) && k < 2 ** 31 && n < 2 ** 31) {
    steps.push(...gemvLaunch(dtype, out.at, A.at, B.at, M, n, k));
    return steps;
  }
  const gemm: GemmStep = { kind: 'gemm', a: A.at, b: B.at, d: out.at, m: M, n, k };
  const tune = gemmTune(0);
  if (tune > 1) gemm.tune = tune;
  if (dtype !== 'float32') gemm.dtype = dtype;
  else if (ctx.tf32 === true) gemm.tf32 = true;
  if (transA) gemm.transA = true;
  if (transB) gemm.transB = true;
  if (count > 1 && !rows) {
    gemm.batch = count;
    gemm.strideA = A.stride;
    gemm.strideB = B.stride;
    gemm.strideD = m * n;
  }
  steps.push(gemm);
  return steps;
};

/** `t` (elements of `from`) in `to`: itself, or a cast into scratch. */
function castedTo(ctx: LoweringContext, at: BufferSlice, from: TrtDType, to: TrtDType, count: number, steps: LoweredStep[]): BufferSlice {
  if (from === to) return at;
  const dst = ctx.scratch(Math.max(1, count * BYTES[to]));
  const spec = { key: `cast.${from}.${to}`, inputs: [from], output: to, body: castBody(from, to) };
  steps.push(...mapLaunch(spec, [count], { at: dst, strides: [1] }, [{ at, strides: [1] }]));
  return dst;
}

function convolutionLike(ctx: LoweringContext, transposed: boolean): LoweredStep[] {
  const p = ctx.layer.params as Extract<LayerParams, { kind: 'convolution' | 'deconvolution' }>;
  const given = input(ctx, 0);
  const out = output(ctx);
  const dtype = libraryDtype(ctx, given.dtype);
  const spatial = p.kernelSize.length;
  if (given.shape.length !== spatial + 2) unsupported(ctx, `input rank ${given.shape.length} does not fit ${spatial}-D kernels`);
  // Channels-last tensors ([N, spatial..., C], the layout pass) are described to the step channels-first.
  const last = p.channelsLast === true;
  const x = last ? { ...given, shape: [given.shape[0]!, given.shape[spatial + 1]!, ...given.shape.slice(1, spatial + 1)] } : given;
  const channels = x.shape[1]!;
  if (p.groups < 1 || channels % p.groups !== 0 || p.nbOutputMaps % p.groups !== 0) {
    unsupported(ctx, `${channels} input channels and ${p.nbOutputMaps} output maps do not split into ${p.groups} groups`);
  }
  const weight = transposed ? [channels, p.nbOutputMaps / p.groups, ...p.kernelSize] : [p.nbOutputMaps, channels / p.groups, ...p.kernelSize];
  if (volume(out.shape) === 0) return [];
  if (volume(x.shape) === 0) return [];
  const steps: LoweredStep[] = [];
  const kernelIn = ctx.inputs[1];
  const kernelCount = volume(weight);
  const kernelSrc = kernelIn ? { at: kernelIn.at, dtype: kernelIn.dtype, size: volume(kernelIn.shape) } : { at: ctx.weight(p.kernel), dtype: p.kernel.dtype as TrtDType, size: p.kernel.size };
  if (kernelSrc.size !== kernelCount) unsupported(ctx, `the kernel has ${kernelSrc.size} elements, layout [${weight.join(', ')}] needs ${kernelCount}`);
  const w = castedTo(ctx, kernelSrc.at, kernelSrc.dtype, dtype, kernelCount, steps);
  const biasIn = ctx.inputs[2];
  const biasSrc = biasIn ? { at: biasIn.at, dtype: biasIn.dtype, size: volume(biasIn.shape) } : p.bias && p.bias.size > 0 ? { at: ctx.weight(p.bias), dtype: p.bias.dtype as TrtDType, size: p.bias.size } : null;
  if (biasSrc && biasSrc.size !== p.nbOutputMaps) unsupported(ctx, `the bias has ${biasSrc.size} elements for ${p.nbOutputMaps} output maps`);
  const bias = biasSrc ? castedTo(ctx, biasSrc.at, biasSrc.dtype, dtype, biasSrc.size, steps) : null;
  const residual = ctx.inputs[3];
  if (residual && (residual.dtype !== out.dtype || residual.shape.join() !== out.shape.join())) {
    unsupported(ctx, `the residual ${residual.dtype} [${residual.shape.join(', ')}] is not the output's ${out.dtype} [${out.shape.join(', ')}]`);
  }
  if (isDepthwise(p, channels, dtype, last, transposed) && out.dtype === dtype) {
    const [n, oh, ow, k] = out.shape as [number, number, number, number];
    const kernel = depthwiseLaunch({
      dtype,
      input: x.shape,
      output: [n, k, oh, ow],
      kernel: p.kernelSize,
      stride: p.stride,
      pre: p.prePadding,
      dilation: p.dilation,
      x: x.at,
      w,
      bias,
      residual: residual?.at ?? null,
      relu: p.activation === 'relu',
      y: out.at,
    });
    if (kernel !== null) return [...steps, ...kernel];
  }
  if (!transposed && last && isPointwise(p) && volume(out.shape) < 2 ** 31) {
    // Channels-last and 1×1 with stride 1: Y[N·H·W, K] = X[N·H·W, C] · W[K, C]ᵀ, exactly.
    const gemm: GemmStep = { kind: 'gemm', a: x.at, b: w, d: out.at, m: volume(out.shape) / p.nbOutputMaps, n: p.nbOutputMaps, k: channels, transB: true, dtype, tune: gemmTune(CONV_GEMM_TUNE) };
    if (bias) gemm.bias = bias;
    if (residual) {
      gemm.c = residual.at;
      gemm.beta = 1;
    }
    if (p.activation === 'relu') gemm.relu = true;
    steps.push(gemm);
    return steps;
  }
  const step: ConvStep = { kind: 'conv', x: x.at, w, y: out.at, input: [...x.shape], weight };
  if (bias) step.bias = bias;
  if (p.prePadding.some((v) => v !== 0)) step.pads = [...p.prePadding];
  if (p.postPadding.some((v, i) => v !== p.prePadding[i])) {
    step.pads = [...p.prePadding];
    step.postPads = [...p.postPadding];
  }
  if (p.stride.some((v) => v !== 1)) step.strides = [...p.stride];
  if (p.dilation.some((v) => v !== 1)) step.dilations = [...p.dilation];
  if (p.groups !== 1) step.groups = p.groups;
  if (dtype !== 'float32') step.dtype = dtype;
  else if (ctx.tf32 === true) step.tf32 = true;
  if (transposed) step.transposed = true;
  if (last) step.channelsLast = true;
  if (p.activation === 'relu') step.relu = true;
  if (residual) step.z = residual.at;
  steps.push(step);
  return steps;
}

/** One group, 1×1 kernel, stride 1 and no padding: every output pixel reads its own input pixel. */
function isPointwise(p: Extract<LayerParams, { kind: 'convolution' | 'deconvolution' }>): boolean {
  return p.groups === 1 && p.kernelSize.every((v) => v === 1) && p.stride.every((v) => v === 1) && p.prePadding.every((v) => v === 0) && p.postPadding.every((v) => v === 0);
}

export const convolution: LayerLowering = (ctx) => convolutionLike(ctx, false);
export const deconvolution: LayerLowering = (ctx) => convolutionLike(ctx, true);
