/**
 * GPU plans as plain data, and their binary encoding for the addon. A plan is an ordered list
 * of steps over numbered device buffers and loaded modules: kernel launches, device copies,
 * memsets, cuBLASLt GEMMs and cuDNN convolutions. The native side decodes it once (checking
 * every operand against its buffer's size) and runs it as one call, or as a CUDA graph.
 *
 * Binary layout (little-endian): u32 magic "TRNP", u32 version, u32 step count, then each step
 * as a u32 kind and its fields. An operand is (u32 buffer, u64 byte offset). See native/gpu/plan.cc.
 */
import { InvalidArgumentError, UnsupportedOpError } from '../errors';
import { ByteWriter } from '../io/byte-writer';

/**
 * 2: GEMM dtypes, transposes, strided batches, alpha/beta, TF32; N-d, fp16/bf16, asymmetric and transposed convolutions.
 * 3: convolutions take a residual operand, a ReLU and the channels-last layout.
 * 4: GEMMs take a C of their own, a bias and ReLU epilogue, and a count of candidates to time.
 */
export const PLAN_FORMAT_VERSION = 4;
const MAGIC = 0x504e5254;
const NO_BUFFER = 0xffffffff;

/** A byte position in one of the plan's buffers. */
export interface BufferSlice {
  buffer: number;
  /** Bytes from the start of the buffer (default 0). */
  offset?: number;
}

export type ScalarType = 'f32' | 'f64' | 'i32' | 'u32' | 'i64' | 'u64';

/**
 * A kernel argument: a device pointer into a buffer, a scalar passed by value, or a fixed-size
 * array of scalars passed by value (a C struct such as `struct { long long v[8]; }`, aligned
 * as its element type).
 */
export type KernelArg =
  | { pointer: BufferSlice }
  | { scalar: ScalarType; value: number | bigint }
  | { array: ScalarType; values: ReadonlyArray<number | bigint> };

export type Dim3 = readonly [number, number, number] | readonly [number, number] | readonly [number];

export interface LaunchStep {
  kind: 'launch';
  /** Index into the plan's modules. */
  module: number;
  /** Index into that module's kernels. */
  kernel: number;
  grid: Dim3;
  block: Dim3;
  sharedBytes?: number;
  args: KernelArg[];
}

/** A device-to-device copy of `bytes` between two slices. */
export interface CopyStep {
  kind: 'copy';
  dst: BufferSlice;
  src: BufferSlice;
  bytes: number;
}

export interface MemsetStep {
  kind: 'memset';
  dst: BufferSlice;
  bytes: number;
  /** The byte value (0..255). */
  value: number;
}

/** The element types GEMM and convolution steps take (compute is fp32 for every one of them). */
export type LibraryDType = 'float32' | 'float16' | 'bfloat16';

/**
 * Row-major D[m×n] = act(alpha · op(A) · op(B) + beta · C + bias) through cuBLASLt, `batch`
 * times with the given element strides between batches (a stride of 0 broadcasts one matrix
 * over the batch). op(A) is A (stored m×k) or, with `transA`, Aᵀ (stored k×m); likewise B.
 * Accumulation is fp32; `tf32` allows TF32 tensor cores for float32 (off by default: fp32
 * results match the CPU). A batch stride of D must not let two output matrices overlap.
 *
 * Epilogue (one matrix only, batch 1): C is D itself unless `c` names a dense m×n matrix of its
 * own (a residual); `bias` is n elements, one per column, added after beta · C; `relu` clamps the
 * sum at zero (cuBLASLt's RELU_BIAS / BIAS / RELU epilogues). `tune` > 1 times that many of the
 * heuristic's candidates on the plan's own buffers when the plan is prepared and keeps the
 * fastest (not for a GEMM with beta ≠ 0 and no `c`, whose D the timing would accumulate into).
 */
export interface GemmStep {
  kind: 'gemm';
  a: BufferSlice;
  b: BufferSlice;
  d: BufferSlice;
  m: number;
  n: number;
  k: number;
  dtype?: LibraryDType;
  transA?: boolean;
  transB?: boolean;
  batch?: number;
  /** Elements between consecutive matrices of A, B and D (defaults: dense, m·k, k·n, m·n). */
  strideA?: number;
  strideB?: number;
  strideD?: number;
  alpha?: number;
  beta?: number;
  tf32?: boolean;
  c?: BufferSlice;
  bias?: BufferSlice;
  relu?: boolean;
  tune?: number;
}

/**
 * NC[D]HW convolution (cross-correlation, like PyTorch and ONNX) through cuDNN, with 1, 2 or 3
 * spatial dims (`input.length - 2`); `transposed` makes it a deconvolution (cuDNN's backward
 * data; the weight is then [c, k / groups, r, s], as TensorRT's CKRS). pads/strides/dilations
 * have one entry per spatial dim.
 *
 * Asymmetric padding (`postPads` differing from `pads`): cuDNN pads symmetrically only. A forward
 * convolution then copies the input, zero-padded on both sides, into the plan's workspace and
 * convolves that without padding (costs one copy of the input per run). A transposed one takes
 * `pads[i] - postPads[i]` in [0, stride) as output padding (PyTorch's `output_padding`, exactly
 * what cuDNN's backward data computes); anything else is refused with `E_UNSUPPORTED_OP` at
 * encoding, so the caller can lower that deconvolution another way.
 */
export interface ConvStep {
  kind: 'conv';
  x: BufferSlice;
  w: BufferSlice;
  bias?: BufferSlice | null;
  y: BufferSlice;
  /** Input [n, c, (d,) h, w]. */
  input: readonly number[];
  /** Weight [k, c / groups, (t,) r, s] (transposed: [c, k / groups, ...]). */
  weight: readonly number[];
  pads?: readonly number[];
  /** Padding at the end of each spatial dim when it differs from `pads` (TensorRT's post-padding). */
  postPads?: readonly number[];
  strides?: readonly number[];
  dilations?: readonly number[];
  groups?: number;
  dtype?: LibraryDType;
  transposed?: boolean;
  /** Lets cuDNN use TF32 tensor cores for a float32 convolution (off by default, as for GEMMs). */
  tf32?: boolean;
  /**
   * x, y and `z` are stored [n, (d,) h, w, c] and the weight [k, (t,) r, s, c / groups] (NHWC);
   * `input` and `weight` still list their dims channels-first. Symmetric padding only.
   */
  channelsLast?: boolean;
  /** Added to the convolution and its bias before the activation: a tensor of y's shape (forward convolutions). */
  z?: BufferSlice | null;
  /** y = max(0, conv + bias + z) (forward convolutions), in one cuDNN call. */
  relu?: boolean;
}

export type PlanStep = LaunchStep | CopyStep | MemsetStep | GemmStep | ConvStep;

export interface PlanSpec {
  steps: PlanStep[];
}

/**
 * Output spatial size of a convolution (floor mode), as PyTorch computes it; `postPad` is the
 * padding at the end when it differs from `pad` at the start.
 */
export function convOutputSize(size: number, kernel: number, pad: number, stride: number, dilation: number, postPad = pad): number {
  return Math.floor((size + pad + postPad - dilation * (kernel - 1) - 1) / stride) + 1;
}

/** Output spatial size of a transposed convolution (PyTorch's, with output padding `pad - postPad`). */
export function deconvOutputSize(size: number, kernel: number, pad: number, stride: number, dilation: number, postPad = pad): number {
  return (size - 1) * stride - pad - postPad + dilation * (kernel - 1) + 1;
}

type ConvGeometry = Pick<ConvStep, 'input' | 'weight' | 'pads' | 'postPads' | 'strides' | 'dilations' | 'groups' | 'transposed'>;

/** Output shape [n, k, ...spatial] of a {@link ConvStep} (1, 2 or 3 spatial dims). */
export function convOutputShape(step: ConvGeometry): number[] {
  const spatial = step.input.length - 2;
  const at = (list: readonly number[] | undefined, i: number, fallback: number): number => list?.[i] ?? fallback;
  const k = step.transposed ? step.weight[1]! * (step.groups ?? 1) : step.weight[0]!;
  const out = [step.input[0]!, k];
  for (let i = 0; i < spatial; i++) {
    const pad = at(step.pads, i, 0);
    const args = [step.input[i + 2]!, step.weight[i + 2]!, pad, at(step.strides, i, 1), at(step.dilations, i, 1), at(step.postPads, i, pad)] as const;
    out.push(step.transposed ? deconvOutputSize(...args) : convOutputSize(...args));
  }
  return out;
}

const SCALARS: Record<ScalarType, { bytes: 4 | 8; write: (view: DataView, at: number, value: number | bigint) => void }> = {
  f32: { bytes: 4, write: (v, at, x) => v.setFloat32(at, Number(x), true) },
  f64: { bytes: 8, write: (v, at, x) => v.setFloat64(at, Number(x), true) },
  i32: { bytes: 4, write: (v, at, x) => v.setInt32(at, Number(x), true) },
  u32: { bytes: 4, write: (v, at, x) => v.setUint32(at, Number(x), true) },
  i64: { bytes: 8, write: (v, at, x) => v.setBigInt64(at, BigInt(x), true) },
  u64: { bytes: 8, write: (v, at, x) => v.setBigUint64(at, BigInt(x), true) },
};

export interface PackedArgs {
  /** The argument buffer with pointer slots left zero, laid out as the C ABI lays out parameters. */
  bytes: Uint8Array;
  /** Where each pointer goes: (byte offset in `bytes`, the slice it points to). */
  pointers: { at: number; slice: BufferSlice }[];
}

/** Lays kernel arguments out with natural alignment (what cuLaunchKernel's packed form expects). */
export function packKernelArgs(args: readonly KernelArg[], where = 'kernel'): PackedArgs {
  const layout: { at: number; arg: KernelArg; bytes: number }[] = [];
  let size = 0;
  args.forEach((arg, i) => {
    let align: number;
    let bytes: number;
    if (arg && 'pointer' in arg) align = bytes = 8;
    else if (arg && 'scalar' in arg && Object.hasOwn(SCALARS, arg.scalar)) align = bytes = SCALARS[arg.scalar].bytes;
    else if (arg && 'array' in arg && Object.hasOwn(SCALARS, arg.array) && Array.isArray(arg.values) && arg.values.length > 0) {
      align = SCALARS[arg.array].bytes;
      bytes = align * arg.values.length;
    } else {
      throw new InvalidArgumentError(`${where}: argument ${i} must be {pointer}, {scalar: f32|f64|i32|u32|i64|u64, value} or {array: <scalar type>, values: [...]}`);
    }
    size = Math.ceil(size / align) * align;
    layout.push({ at: size, arg, bytes });
    size += bytes;
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const pointers: PackedArgs['pointers'] = [];
  for (const { at, arg } of layout) {
    if ('pointer' in arg) pointers.push({ at, slice: arg.pointer });
    else if ('scalar' in arg) SCALARS[arg.scalar].write(view, at, arg.value);
    else {
      const { bytes, write } = SCALARS[arg.array];
      arg.values.forEach((v, j) => write(view, at + j * bytes, v));
    }
  }
  return { bytes: out, pointers };
}


function checkCount(value: unknown, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

const U32_MAX = 0xffffffff;

const I32_MAX = 0x7fffffff;

function slice(w: ByteWriter, s: BufferSlice | null | undefined, what: string, optional = false): void {
  if (s === null || s === undefined) {
    if (!optional) throw new InvalidArgumentError(`${what} is missing`);
    w.u32(NO_BUFFER);
    w.u64(0);
    return;
  }
  w.u32(checkCount(s.buffer, `${what}.buffer`, 0, U32_MAX - 1));
  w.u64(checkCount(s.offset ?? 0, `${what}.offset`));
}

function dim3(value: Dim3, what: string): [number, number, number] {
  if (!Array.isArray(value) || value.length < 1 || value.length > 3) throw new InvalidArgumentError(`${what} must be 1 to 3 sizes`);
  const out: [number, number, number] = [1, 1, 1];
  value.forEach((v, i) => (out[i] = checkCount(v, `${what}[${i}]`, 1, U32_MAX)));
  return out;
}

const DTYPE_CODES: Record<LibraryDType, number> = { float32: 0, float16: 1, bfloat16: 2 };

function libraryDType(value: unknown, at: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !Object.hasOwn(DTYPE_CODES, value)) {
    throw new InvalidArgumentError(`${at}: dtype must be float32, float16 or bfloat16, got ${String(value)}`);
  }
  return DTYPE_CODES[value as LibraryDType];
}

function flag(value: unknown, what: string): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new InvalidArgumentError(`${what} must be a boolean, got ${String(value)}`);
  return value === true;
}

/** A float32 scale factor (cuBLASLt's scale type for every dtype here). */
function scale(value: unknown, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || !Number.isFinite(Math.fround(v))) {
    throw new InvalidArgumentError(`${what} must be a finite float32 number, got ${String(v)}`);
  }
  return v;
}

/** Most heuristic candidates a GEMM may ask to have timed (the addon's limit). */
export const GEMM_MAX_TUNE = 16;

/**
 * GEMM, format 4: a, b, d, c (optional), bias (optional); u32 m, n, k, dtype, flags (1 transA,
 * 2 transB, 4 tf32, 8 ReLU), batch, tune; u64 strideA, strideB, strideD (elements); f32 alpha, beta.
 */
function encodeGemm(w: ByteWriter, step: GemmStep, at: string): void {
  const m = checkCount(step.m, `${at}: m`, 1, I32_MAX);
  const n = checkCount(step.n, `${at}: n`, 1, I32_MAX);
  const k = checkCount(step.k, `${at}: k`, 1, I32_MAX);
  const dtype = libraryDType(step.dtype, at);
  const tf32 = flag(step.tf32, `${at}: tf32`);
  if (tf32 && dtype !== 0) throw new InvalidArgumentError(`${at}: tf32 applies to float32 GEMMs only, not ${step.dtype}`);
  const batch = checkCount(step.batch ?? 1, `${at}: batch`, 1, I32_MAX);
  const strideA = checkCount(step.strideA ?? m * k, `${at}: strideA`);
  const strideB = checkCount(step.strideB ?? k * n, `${at}: strideB`);
  const strideD = checkCount(step.strideD ?? m * n, `${at}: strideD`);
  if (batch > 1 && strideD < m * n) {
    throw new InvalidArgumentError(`${at}: strideD ${strideD} would make the ${batch} output matrices of ${m}×${n} overlap (it must be at least ${m * n})`);
  }
  const relu = flag(step.relu, `${at}: relu`);
  const hasC = step.c !== undefined && step.c !== null;
  const hasBias = step.bias !== undefined && step.bias !== null;
  if ((relu || hasC || hasBias) && batch > 1) throw new InvalidArgumentError(`${at}: c, bias and relu take one matrix (batch 1), not ${batch}`);
  const tune = checkCount(step.tune ?? 0, `${at}: tune`, 0, GEMM_MAX_TUNE);
  const flags = (flag(step.transA, `${at}: transA`) ? 1 : 0) | (flag(step.transB, `${at}: transB`) ? 2 : 0) | (tf32 ? 4 : 0) | (relu ? 8 : 0);
  w.u32(4);
  slice(w, step.a, `${at}: a`);
  slice(w, step.b, `${at}: b`);
  slice(w, step.d, `${at}: d`);
  slice(w, step.c, `${at}: c`, true);
  slice(w, step.bias, `${at}: bias`, true);
  for (const v of [m, n, k, dtype, flags, batch, tune]) w.u32(v);
  for (const v of [strideA, strideB, strideD]) w.u64(v);
  w.f32(scale(step.alpha, 1, `${at}: alpha`));
  w.f32(scale(step.beta, 0, `${at}: beta`));
}

/** One entry per spatial dim, each an integer >= min (default `fallback` for every dim). */
function perDim(value: readonly number[] | undefined, spatial: number, fallback: number, min: number, what: string): number[] {
  if (value === undefined) return new Array<number>(spatial).fill(fallback);
  if (!Array.isArray(value) || value.length !== spatial) throw new InvalidArgumentError(`${what} must have ${spatial} entries (one per spatial dim), got ${JSON.stringify(value)}`);
  return value.map((v, i) => checkCount(v, `${what}[${i}]`, min, I32_MAX));
}

/**
 * Convolution, format 3: x, w, bias (optional), z (optional), y; u32 spatial dims, dtype, flags
 * (1 transposed, 2 tf32, 4 channels-last, 8 ReLU);
 * i32 n, c, k, groups; then for each of 3 dims (unused ones 1, 1, 0, 0, 1, 1, 1): input, kernel,
 * pad, postPad, stride, dilation, output.
 */
function encodeConv(w: ByteWriter, step: ConvStep, at: string): void {
  const groups = checkCount(step.groups ?? 1, `${at}: groups`, 1, I32_MAX);
  const input = (Array.isArray(step.input) ? step.input : []).map((v, j) => checkCount(v, `${at}: input[${j}]`, 1, I32_MAX));
  const weight = (Array.isArray(step.weight) ? step.weight : []).map((v, j) => checkCount(v, `${at}: weight[${j}]`, 1, I32_MAX));
  const spatial = input.length - 2;
  if (spatial < 1 || spatial > 3 || weight.length !== input.length) {
    throw new InvalidArgumentError(`${at}: input and weight must both be 3-D, 4-D or 5-D (N, C and 1 to 3 spatial dims), got [${input.join(', ')}] and [${weight.join(', ')}]`);
  }
  const dtype = libraryDType(step.dtype, at);
  const transposed = flag(step.transposed, `${at}: transposed`);
  const tf32 = flag(step.tf32, `${at}: tf32`);
  if (tf32 && dtype !== 0) throw new InvalidArgumentError(`${at}: tf32 applies to float32 convolutions only, not ${step.dtype}`);
  const channelsLast = flag(step.channelsLast, `${at}: channelsLast`);
  const relu = flag(step.relu, `${at}: relu`);
  const hasZ = step.z !== undefined && step.z !== null;
  if (transposed && (channelsLast || relu || hasZ)) throw new InvalidArgumentError(`${at}: channelsLast, relu and z apply to forward convolutions only`);
  const pads = perDim(step.pads, spatial, 0, 0, `${at}: pads`);
  const postPads = perDim(step.postPads ?? pads, spatial, 0, 0, `${at}: postPads`);
  const strides = perDim(step.strides, spatial, 1, 1, `${at}: strides`);
  const dilations = perDim(step.dilations, spatial, 1, 1, `${at}: dilations`);
  const c = input[1]!;
  // Forward: weight [k, c / groups, ...]; transposed: [c, k / groups, ...].
  const weightChannels = transposed ? weight[0]! : weight[1]! * groups;
  if (c !== weightChannels) {
    throw new InvalidArgumentError(`${at}: input has ${c} channels, but weight [${weight.join(', ')}] with ${groups} group(s) takes ${weightChannels}`);
  }
  if (!transposed && weight[0]! % groups !== 0) throw new InvalidArgumentError(`${at}: ${weight[0]} output channels are not divisible by ${groups} groups`);
  if (transposed && c % groups !== 0) throw new InvalidArgumentError(`${at}: ${c} input channels are not divisible by ${groups} groups`);
  if (transposed) {
    pads.forEach((pad, i) => {
      const outputPadding = pad - postPads[i]!;
      if (outputPadding < 0 || outputPadding >= strides[i]!) {
        throw new UnsupportedOpError(
          `${at}: a transposed convolution with pads ${pad} and postPads ${postPads[i]} in spatial dim ${i} (stride ${strides[i]}) needs ` +
            `output padding ${outputPadding}, and cuDNN's backward data can only drop 0 to stride - 1 trailing outputs; lower it another way`,
          { details: { step: at, dim: i, pad, postPad: postPads[i], stride: strides[i] } },
        );
      }
    });
  }
  if (channelsLast && pads.some((p, i) => p !== postPads[i])) throw new InvalidArgumentError(`${at}: a channels-last convolution takes symmetric padding only`);
  const out = convOutputShape({ input, weight, pads, postPads, strides, dilations, groups, transposed });
  if (out.slice(2).some((v) => v < 1)) throw new InvalidArgumentError(`${at}: the output would be empty ([${out.join(', ')}])`);
  w.u32(5);
  slice(w, step.x, `${at}: x`);
  slice(w, step.w, `${at}: w`);
  slice(w, step.bias, `${at}: bias`, true);
  slice(w, step.z, `${at}: z`, true);
  slice(w, step.y, `${at}: y`);
  w.u32(spatial);
  w.u32(dtype);
  w.u32((transposed ? 1 : 0) | (tf32 ? 2 : 0) | (channelsLast ? 4 : 0) | (relu ? 8 : 0));
  for (const v of [input[0]!, c, out[1]!, groups]) w.i32(v);
  for (let i = 0; i < 3; i++) {
    const has = i < spatial;
    const dim = [input[i + 2], weight[i + 2], pads[i], postPads[i], strides[i], dilations[i], out[i + 2]];
    const unused = [1, 1, 0, 0, 1, 1, 1];
    dim.forEach((v, j) => w.i32(has ? v! : unused[j]!));
  }
}

/** Encodes a plan for the addon. Shape errors here are `E_INVALID_ARGUMENT` naming the step. */
export function encodePlan(plan: PlanSpec): Uint8Array {
  if (!plan || !Array.isArray(plan.steps)) throw new InvalidArgumentError('a plan needs a steps array');
  const w = new ByteWriter();
  w.u32(MAGIC);
  w.u32(PLAN_FORMAT_VERSION);
  w.u32(plan.steps.length);
  plan.steps.forEach((step, i) => {
    const at = `plan step ${i} (${step?.kind})`;
    switch (step?.kind) {
      case 'launch': {
        const packed = packKernelArgs(step.args ?? [], at);
        w.u32(1);
        w.u32(checkCount(step.module, `${at}: module`, 0, U32_MAX));
        w.u32(checkCount(step.kernel, `${at}: kernel`, 0, U32_MAX));
        for (const v of dim3(step.grid, `${at}: grid`)) w.u32(v);
        for (const v of dim3(step.block, `${at}: block`)) w.u32(v);
        w.u32(checkCount(step.sharedBytes ?? 0, `${at}: sharedBytes`, 0, U32_MAX));
        w.u32(packed.bytes.length);
        w.u32(packed.pointers.length);
        w.bytes(packed.bytes);
        w.align(4); // the native decoder reads the next field at a 4-byte boundary
        for (const p of packed.pointers) {
          w.u32(p.at);
          slice(w, p.slice, `${at}: pointer argument`);
        }
        break;
      }
      case 'copy':
        w.u32(2);
        slice(w, step.dst, `${at}: dst`);
        slice(w, step.src, `${at}: src`);
        w.u64(checkCount(step.bytes, `${at}: bytes`));
        break;
      case 'memset':
        w.u32(3);
        slice(w, step.dst, `${at}: dst`);
        w.u64(checkCount(step.bytes, `${at}: bytes`));
        w.u32(checkCount(step.value, `${at}: value`, 0, 255));
        break;
      case 'gemm':
        encodeGemm(w, step, at);
        break;
      case 'conv':
        encodeConv(w, step, at);
        break;
      default:
        throw new InvalidArgumentError(`${at}: unknown step kind (launch, copy, memset, gemm or conv)`);
    }
  });
  return w.result();
}
