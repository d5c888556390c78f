/**
 * Depthwise 2-D convolution in channels-last ([N, H, W, C], one filter per channel: groups =
 * C = K) as a generated kernel: each thread takes `vec` neighbouring channels of `R`
 * neighbouring output pixels of one row, walks the window unrolled (its extent is a layer
 * parameter), reads each input position's channels as one aligned access and each tap's
 * weights once for its R pixels, accumulates in fp32, and applies the epilogue the convolution
 * layer carries (bias, residual, ReLU) before one aligned store per pixel.
 *
 * Why not cuDNN: through the legacy API cuDNN ran these in 0.10–0.20 ms where PyTorch's
 * depthwise kernels take 0.012–0.02 ms (ConvNeXt-T's 7×7 at batch 16, MobileNetV3's and
 * EfficientNet-B0's 3×3 and 5×5 at batch 32; H100, 2026-12-07); the layer is memory-bound (a
 * few FLOPs per byte), which a direct kernel reaches.
 */
import { BYTES, DTYPES } from './prelude';
import { i32, kernelSource, launch, ptr, u32, u64 } from './kernel';
import { divisionMagic, magicQuotient } from './map';
import type { LoweredStep } from './types';
import type { BufferSlice } from '../../../gpu/plan';
import type { TrtDType } from '../../../network';

/** Output pixels of one row a thread computes (each tap's weights are read once for them). */
const PIXELS = 4;

/** What the depthwise kernel needs of a convolution, channels-last, described channels-first as the conv step is. */
export interface DepthwiseConv {
  dtype: TrtDType;
  /** [N, C, H, W] and [N, C, OH, OW]. */
  input: readonly number[];
  output: readonly number[];
  kernel: readonly number[];
  stride: readonly number[];
  pre: readonly number[];
  dilation: readonly number[];
  x: BufferSlice;
  /** Weights [C, 1, kh, kw] in `dtype`. */
  w: BufferSlice;
  bias: BufferSlice | null;
  residual: BufferSlice | null;
  relu: boolean;
  y: BufferSlice;
}

/** Channels per thread: the widest of 8, 4, 2 that divides C and keeps every access of x, y and the residual aligned; else 1. */
function vectorWidth(d: DepthwiseConv): number {
  const channels = d.input[1]!;
  const bytes = BYTES[d.dtype];
  const slices = [d.x, d.y, ...(d.residual ? [d.residual] : [])];
  for (const vec of [8, 4, 2]) {
    if (channels % vec === 0 && slices.every((s) => (s.offset ?? 0) % (vec * bytes) === 0)) return vec;
  }
  return 1;
}

function depthwiseKernel(dtype: TrtDType, vec: number, pixels: number, kh: number, kw: number, bias: boolean, residual: boolean, relu: boolean) {
  const c = DTYPES[dtype];
  const S = c.storage;
  const taps: string[] = [];
  for (let a = 0; a < kh; a++) {
    const row: string[] = [];
    for (let b = 0; b < kw; b++) {
      row.push(`
      {
        float wv[${vec}];
#pragma unroll
        for (int k = 0; k < ${vec}; ++k) wv[k] = ${c.load(`w[(c0 + k) * ${kh * kw} + ${a * kw + b}]`)};
#pragma unroll
        for (int p = 0; p < ${pixels}; ++p) {
          const i32 iw = (ow0 + p) * sw - pw + ${b} * dw;
          if (ow0 + p < OW && iw >= 0 && iw < W) {
            const VecN<${S}, ${vec}> xv = *reinterpret_cast<const VecN<${S}, ${vec}>*>(xrow + (u64)(u32)iw * C);
#pragma unroll
            for (int k = 0; k < ${vec}; ++k) acc[p][k] += ${c.load('xv.v[k]')} * wv[k];
          }
        }
      }`);
    }
    taps.push(`
    {
      const i32 ih = h0 + ${a} * dh;
      if (ih >= 0 && ih < H) {
        const ${S}* xrow = x + ((u64)b * (u32)H + (u32)ih) * (u64)(u32)W * C + c0;${row.join('')}
      }
    }`);
  }
  const epilogue = [
    bias ? `v += ${c.load('bias[c0 + k]')};` : '',
    residual ? `v += ${c.load('z[o + k]')};` : '',
    relu ? 'v = v > 0.0f ? v : 0.0f;' : '',
  ].join(' ');
  const key = `dwconv2d.${dtype}.v${vec}.p${pixels}.${kh}x${kw}${bias ? '.bias' : ''}${residual ? '.residual' : ''}${relu ? '.relu' : ''}`;
  return kernelSource(key, (entry) => `
extern "C" __global__ void ${entry}(${S}* y, const ${S}* x, const ${S}* w, const ${S}* bias, const ${S}* z, u32 n, u32 CG, u64 mCG, u32 OWB, u64 mOWB, u32 OH, u64 mOH, i32 H, i32 W, u32 C, i32 OW, i32 sh, i32 sw, i32 ph, i32 pw, i32 dh, i32 dw) {
  (void)bias;
  (void)z;
  for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
    const u32 r = ${magicQuotient('t', 'mCG')};
    const u32 c0 = (t - r * CG) * ${vec};
    const u32 q = ${magicQuotient('r', 'mOWB')};
    const i32 ow0 = (i32)(r - q * OWB) * ${pixels};
    const u32 b = ${magicQuotient('q', 'mOH')};
    const i32 oh = (i32)(q - b * OH);
    const i32 h0 = oh * sh - ph;
    float acc[${pixels}][${vec}];
#pragma unroll
    for (int p = 0; p < ${pixels}; ++p) {
#pragma unroll
      for (int k = 0; k < ${vec}; ++k) acc[p][k] = 0.0f;
    }${taps.join('')}
#pragma unroll
    for (int p = 0; p < ${pixels}; ++p) {
      if (ow0 + p < OW) {
        const u64 o = (((u64)b * OH + (u32)oh) * (u64)(u32)OW + (u32)(ow0 + p)) * C + c0;
        VecN<${S}, ${vec}> out;
#pragma unroll
        for (int k = 0; k < ${vec}; ++k) {
          float v = acc[p][k];
          ${epilogue}
          out.v[k] = ${c.store('v')};
        }
        *reinterpret_cast<VecN<${S}, ${vec}>*>(y + o) = out;
      }
    }
  }
}`);
}

/** Whether a convolution of these parameters is one the kernel takes: 2-D, forward, channels-last, groups = C = K, float data. */
export function isDepthwise(p: { groups: number; nbOutputMaps: number; kernelSize: readonly number[] }, channels: number, dtype: TrtDType, channelsLast: boolean, transposed: boolean): boolean {
  return !transposed && channelsLast && p.kernelSize.length === 2 && p.groups === channels && p.nbOutputMaps === channels && DTYPES[dtype].compute === 'float';
}

/**
 * The launch of a depthwise convolution; null where its index arithmetic would leave 32 bits
 * (a tensor of 2^31 elements or more), which the caller leaves to cuDNN.
 */
export function depthwiseLaunch(d: DepthwiseConv): LoweredStep[] | null {
  const [N, C, H, W] = d.input as [number, number, number, number];
  const [, , OH, OW] = d.output as [number, number, number, number];
  if (N * C * H * W >= 2 ** 31 || N * C * OH * OW >= 2 ** 31) return null;
  const vec = vectorWidth(d);
  const pixels = Math.min(PIXELS, OW);
  const owBlocks = Math.ceil(OW / pixels);
  const CG = C / vec;
  const n = N * OH * owBlocks * CG;
  if (n === 0) return [];
  const [kh, kw] = d.kernel as [number, number];
  const kernel = depthwiseKernel(d.dtype, vec, pixels, kh, kw, d.bias !== null, d.residual !== null, d.relu);
  // Pointers the kernel never reads (no bias, no residual) are given as x: any valid address.
  return launch(kernel, n, [
    ptr(d.y),
    ptr(d.x),
    ptr(d.w),
    ptr(d.bias ?? d.x),
    ptr(d.residual ?? d.x),
    u32(n),
    u32(CG),
    u64(divisionMagic(CG)),
    u32(owBlocks),
    u64(divisionMagic(owBlocks)),
    u32(OH),
    u64(divisionMagic(OH)),
    i32(H),
    i32(W),
    u32(C),
    i32(OW),
    i32(d.stride[0]!),
    i32(d.stride[1]!),
    i32(d.pre[0]!),
    i32(d.pre[1]!),
    i32(d.dilation[0]!),
    i32(d.dilation[1]!),
  ]);
}
