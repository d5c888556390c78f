/**
 * GemmStep and ConvStep on the CPU, straight from their definitions in lib/gpu/plan.ts:
 * float64 accumulation, one rounding into the step's dtype.
 */
import type { BufferSlice, ConvStep, GemmStep, LibraryDType } from '../../../lib/gpu/plan';
import { fromFloat16Bits, toFloat16Bits } from '../../../lib/ir/half';
import { view } from './buffers';

const SIZE: Record<LibraryDType, number> = { float32: 4, float16: 2, bfloat16: 2 };

function reader(buffers: Uint8Array[], slice: BufferSlice, dtype: LibraryDType, count: number): (i: number) => number {
  const bytes = view(buffers, slice, count * SIZE[dtype]);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'float32') return (i) => dv.getFloat32(i * 4, true);
  if (dtype === 'float16') return (i) => fromFloat16Bits(dv.getUint16(i * 2, true));
  return (i) => new Float32Array(new Uint32Array([dv.getUint16(i * 2, true) << 16]).buffer)[0]!;
}

function bf16Bits(v: number): number {
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0]!;
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

function writer(buffers: Uint8Array[], slice: BufferSlice, dtype: LibraryDType, count: number): (i: number, v: number) => void {
  const bytes = view(buffers, slice, count * SIZE[dtype]);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'float32') return (i, v) => dv.setFloat32(i * 4, v, true);
  if (dtype === 'float16') return (i, v) => dv.setUint16(i * 2, toFloat16Bits(v), true);
  return (i, v) => dv.setUint16(i * 2, bf16Bits(v), true);
}

export function runGemm(step: GemmStep, buffers: Uint8Array[]): void {
  const dtype = step.dtype ?? 'float32';
  const { m, n, k } = step;
  const batch = step.batch ?? 1;
  const sa = step.strideA ?? m * k;
  const sb = step.strideB ?? k * n;
  const sd = step.strideD ?? m * n;
  const span = (stride: number, size: number): number => (batch - 1) * stride + size;
  const A = reader(buffers, step.a, dtype, span(sa, m * k));
  const B = reader(buffers, step.b, dtype, span(sb, k * n));
  const Dr = reader(buffers, step.d, dtype, span(sd, m * n));
  const D = writer(buffers, step.d, dtype, span(sd, m * n));
  const alpha = step.alpha ?? 1;
  const beta = step.beta ?? 0;
  // The epilogue (batch 1): C is D unless the step names its own; bias per column; ReLU last.
  const C = step.c ? reader(buffers, step.c, dtype, m * n) : Dr;
  const bias = step.bias ? reader(buffers, step.bias, dtype, n) : null;
  const act = step.relu ? (v: number): number => (v > 0 ? v : v === v ? 0 : v) : (v: number): number => v;
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) {
          const a = A(b * sa + (step.transA ? p * m + i : i * k + p));
          const bb = B(b * sb + (step.transB ? j * k + p : p * n + j));
          s += a * bb;
        }
        const at = b * sd + i * n + j;
        D(at, act(alpha * s + (beta !== 0 ? beta * C(at) : 0) + (bias ? bias(j) : 0)));
      }
    }
  }
}

const prod = (v: readonly number[]): number => v.reduce((a, d) => a * d, 1);

/** Calls f with every multi-index of `dims` (row-major). */
function each(dims: readonly number[], f: (c: number[]) => void): void {
  const total = prod(dims);
  const c = new Array<number>(dims.length).fill(0);
  for (let t = 0; t < total; t++) {
    f(c);
    for (let d = dims.length - 1; d >= 0; d--) {
      if (++c[d]! < dims[d]!) break;
      c[d] = 0;
    }
  }
}

const flat = (c: readonly number[], dims: readonly number[]): number => c.reduce((a, v, i) => a * dims[i]! + v, 0);

export function runConv(step: ConvStep, buffers: Uint8Array[]): void {
  const dtype = step.dtype ?? 'float32';
  const sr = step.input.length - 2;
  const [N, C] = step.input as [number, number];
  const inSp = step.input.slice(2);
  const ks = step.weight.slice(2);
  const groups = step.groups ?? 1;
  const pre = step.pads ?? new Array<number>(sr).fill(0);
  const post = step.postPads ?? pre;
  const stride = step.strides ?? new Array<number>(sr).fill(1);
  const dil = step.dilations ?? new Array<number>(sr).fill(1);
  const K = step.transposed ? step.weight[1]! * groups : step.weight[0]!;
  const outSp = inSp.map((size, i) =>
    step.transposed
      ? (size - 1) * stride[i]! - pre[i]! - post[i]! + dil[i]! * (ks[i]! - 1) + 1
      : Math.floor((size + pre[i]! + post[i]! - dil[i]! * (ks[i]! - 1) - 1) / stride[i]!) + 1,
  );
  const xr = reader(buffers, step.x, dtype, prod(step.input));
  const wr = reader(buffers, step.w, dtype, prod(step.weight));
  const br = step.bias ? reader(buffers, step.bias, dtype, K) : null;
  const outDims = [N, K, ...outSp];
  const y = new Float64Array(prod(outDims));
  const cg = C / groups;
  const kg = K / groups;
  // Channels-last steps store x, y and z as [N, spatial..., C] and the weight as [K, spatial..., C / groups].
  const last = step.channelsLast === true;
  const xAt = (n: number, c: number, pos: number[]): number => (last ? flat([n, ...pos, c], [N, ...inSp, C]) : flat([n, c, ...pos], step.input));
  const wAt = (k: number, ci: number, r: number[]): number => (last ? flat([k, ...r, ci], [K, ...ks, cg]) : flat([k, ci, ...r], step.weight));
  if (!step.transposed) {
    each(outDims, ([n, k, ...o]) => {
      const g = Math.floor(k! / kg);
      let s = 0;
      for (let ci = 0; ci < cg; ci++) {
        each(ks, (r) => {
          const pos = o.map((v, i) => v * stride[i]! - pre[i]! + r[i]! * dil[i]!);
          if (pos.some((p, i) => p < 0 || p >= inSp[i]!)) return;
          s += xr(xAt(n!, g * cg + ci, pos)) * wr(wAt(k!, ci, r));
        });
      }
      y[flat([n!, k!, ...o], outDims)] = s;
    });
  } else {
    each(step.input, ([n, c, ...i]) => {
      const g = Math.floor(c! / cg);
      const xv = xr(flat([n!, c!, ...i], step.input));
      for (let kk = 0; kk < kg; kk++) {
        each(ks, (r) => {
          const pos = i.map((v, d) => v * stride[d]! - pre[d]! + r[d]! * dil[d]!);
          if (pos.some((p, d) => p < 0 || p >= outSp[d]!)) return;
          y[flat([n!, g * kg + kk, ...pos], outDims)] += xv * wr(flat([c!, kk, ...r], step.weight));
        });
      }
    });
  }
  // Where element t of y (channels-first order) is stored.
  const plane = prod(outSp);
  const yAt = (t: number): number => (last ? Math.floor(t / (K * plane)) * K * plane + (t % plane) * K + (Math.floor(t / plane) % K) : t);
  const out = writer(buffers, step.y, dtype, y.length);
  const stored = reader(buffers, step.y, dtype, y.length);
  const zr = step.z ? reader(buffers, step.z, dtype, y.length) : null;
  const relu = (v: number): number => (v > 0 || Number.isNaN(v) ? v : 0);
  if (step.relu === true && br !== null) {
    // cudnnConvolutionBiasActivationForward: conv + z + bias, then the ReLU, in float, stored once.
    for (let t = 0; t < y.length; t++) out(yAt(t), relu(y[t]! + (zr ? zr(yAt(t)) : 0) + br(Math.floor(t / plane) % K)));
    return;
  }
  for (let t = 0; t < y.length; t++) out(yAt(t), y[t]!);
  // As cuDNN: the convolution is stored in its dtype first, then cudnnAddTensor adds the bias
  // (in float) and stores again; so do the residual and the ReLU, each its own call.
  if (br !== null) for (let t = 0; t < y.length; t++) out(yAt(t), stored(yAt(t)) + br(Math.floor(t / plane) % K));
  if (zr !== null) for (let t = 0; t < y.length; t++) out(t, stored(t) + zr(t));
  if (step.relu === true) for (let t = 0; t < y.length; t++) out(t, relu(stored(t)));
}
