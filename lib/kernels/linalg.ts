/**
 * Matrix products: torch.matmul (batched, broadcasting), linear, addmm and ONNX Gemm.
 *
 * Products accumulate in float64 and round once to the result type (the promotion of the
 * operand types); int64, uint32 and uint64 products (which float64 would round past 2^53)
 * accumulate exactly, as bigints wrapping in two's complement, then wrap to the result type. Complex operands are supported (interleaved pairs).
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, promoteTypes, type DType } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';
import { broadcastIndex, broadcastShapes, fromNumbers, readNumbers } from './access';
import { add, mul } from './elementwise';
import { int64Values } from './int64';
import { permute } from './shape';
import { cast } from './unary';

const fmt = (shape: Shape): string => `[${shape.join(', ')}]`;

/** The values of `t` as float64 with `lanes` slots per element (a real tensor read as complex gets zero imaginary parts). */
function readLanes(t: Tensor, lanes: 1 | 2): Float64Array {
  const values = readNumbers(t);
  if (dtypeInfo(t.dtype).lanes === lanes) return values;
  const out = new Float64Array(values.length * 2);
  for (let i = 0; i < values.length; i++) out[2 * i] = values[i]!;
  return out;
}

/** The promoted result type of several operands. */
function resultType(tensors: readonly Tensor[]): DType {
  return tensors.map((t) => t.dtype).reduce((a, b) => promoteTypes(a, b));
}

/**
 * out[oOff..] += A[M,K] @ B[K,N] (row-major, `lanes` slots per element). The i-k-j order
 * keeps the innermost loop contiguous in both B and out.
 */
function accumulateProduct(
  out: Float64Array,
  oOff: number,
  A: Float64Array,
  aOff: number,
  B: Float64Array,
  bOff: number,
  M: number,
  K: number,
  N: number,
  lanes: 1 | 2,
): void {
  if (lanes === 1) {
    for (let i = 0; i < M; i++) {
      const oRow = oOff + i * N;
      const aRow = aOff + i * K;
      for (let k = 0; k < K; k++) {
        const av = A[aRow + k]!;
        const bRow = bOff + k * N;
        for (let j = 0; j < N; j++) out[oRow + j]! += av * B[bRow + j]!;
      }
    }
    return;
  }
  for (let i = 0; i < M; i++) {
    const oRow = oOff + 2 * i * N;
    const aRow = aOff + 2 * i * K;
    for (let k = 0; k < K; k++) {
      const ar = A[aRow + 2 * k]!;
      const ai = A[aRow + 2 * k + 1]!;
      const bRow = bOff + 2 * k * N;
      for (let j = 0; j < N; j++) {
        const br = B[bRow + 2 * j]!;
        const bi = B[bRow + 2 * j + 1]!;
        out[oRow + 2 * j]! += ar * br - ai * bi;
        out[oRow + 2 * j + 1]! += ar * bi + ai * br;
      }
    }
  }
}

/** A rows×cols matrix (lanes slots per element) transposed into a new array. */
function transposeMatrix(m: Float64Array, off: number, rows: number, cols: number, lanes: 1 | 2): Float64Array {
  const out = new Float64Array(rows * cols * lanes);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      for (let l = 0; l < lanes; l++) out[(c * rows + r) * lanes + l] = m[off + (r * cols + c) * lanes + l]!;
    }
  }
  return out;
}

interface Product {
  values: Float64Array;
  shape: number[];
}

/** The geometry of torch.matmul: matrix sizes, broadcast batch and where each batch reads. */
interface MatmulPlan {
  readonly M: number;
  readonly K: number;
  readonly N: number;
  /** Per output batch, the batch of a and of b that it multiplies. */
  readonly mapA: Int32Array;
  readonly mapB: Int32Array;
  readonly shape: number[];
}

function planMatmul(a: Tensor, b: Tensor, op: string): MatmulPlan {
  if (a.rank === 0 || b.rank === 0) {
    throw new InvalidArgumentError(`${op}: both operands need at least 1 dim, got ${fmt(a.shape)} and ${fmt(b.shape)}`);
  }
  const aShape = a.rank === 1 ? [1, a.shape[0]!] : a.shape;
  const bShape = b.rank === 1 ? [b.shape[0]!, 1] : b.shape;
  const M = aShape[aShape.length - 2]!;
  const K = aShape[aShape.length - 1]!;
  const N = bShape[bShape.length - 1]!;
  if (bShape[bShape.length - 2] !== K) {
    throw new InvalidArgumentError(`${op}: shapes ${fmt(a.shape)} and ${fmt(b.shape)} cannot be multiplied (${K} vs ${bShape[bShape.length - 2]})`);
  }
  const batchA = aShape.slice(0, -2);
  const batchB = bShape.slice(0, -2);
  let batch: number[];
  try {
    batch = broadcastShapes(batchA, batchB);
  } catch {
    throw new InvalidArgumentError(`${op}: batch dims of ${fmt(a.shape)} and ${fmt(b.shape)} cannot be broadcast`);
  }
  const shape = [...batch, ...(a.rank === 1 ? [] : [M]), ...(b.rank === 1 ? [] : [N])];
  return { M, K, N, mapA: broadcastIndex(batchA, batch), mapB: broadcastIndex(batchB, batch), shape };
}

/** torch.matmul in float64, before rounding. */
function matmulNumbers(a: Tensor, b: Tensor, lanes: 1 | 2, op: string): Product {
  const { M, K, N, mapA, mapB, shape } = planMatmul(a, b, op);
  const A = readLanes(a, lanes);
  const B = readLanes(b, lanes);
  const values = new Float64Array(mapA.length * M * N * lanes);
  for (let i = 0; i < mapA.length; i++) {
    accumulateProduct(values, i * M * N * lanes, A, mapA[i]! * M * K * lanes, B, mapB[i]! * K * N * lanes, M, K, N, lanes);
  }
  return { values, shape };
}

/** torch.matmul of int64 (or smaller integer) operands, exactly: bigint sums wrapped to int64 as they go. */
function matmulInt64(a: Tensor, b: Tensor, op: string): Tensor {
  const { M, K, N, mapA, mapB, shape } = planMatmul(a, b, op);
  const A = int64Values(a);
  const B = int64Values(b);
  const out = new BigInt64Array(mapA.length * M * N);
  for (let batch = 0; batch < mapA.length; batch++) {
    const aOff = mapA[batch]! * M * K;
    const bOff = mapB[batch]! * K * N;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let acc = 0n;
        for (let k = 0; k < K; k++) acc = BigInt.asIntN(64, acc + A[aOff + i * K + k]! * B[bOff + k * N + j]!);
        out[(batch * M + i) * N + j] = acc;
      }
    }
  }
  return new Tensor('int64', shape, out);
}

/** beta·c + alpha·product in int64 (alpha and beta integers; beta 0 ignores c, as PyTorch). */
function addScaledInt64(product: Tensor, c: Tensor | undefined | null, alpha: number, beta: number, op: string): Tensor {
  if (!Number.isInteger(alpha) || !Number.isInteger(beta)) throw new InvalidArgumentError(`${op}: alpha ${alpha} and beta ${beta} must be integers for int64 operands`);
  const scaled = alpha === 1 ? product : mul(product, alpha);
  if (c === undefined || c === null || beta === 0) return scaled;
  const fits = c.rank <= product.rank && broadcastShapes(c.shape, product.shape).every((d, i) => d === product.shape[i]);
  if (!fits) throw new InvalidArgumentError(`${op}: bias of shape ${fmt(c.shape)} does not broadcast to the result ${fmt(product.shape)}`);
  return add(scaled, beta === 1 ? c : mul(c, beta));
}

/** values = alpha * values + beta * c (c broadcast to `shape`; beta 0 ignores c, NaNs included, as PyTorch). */
function addScaled(values: Float64Array, shape: Shape, c: Tensor | undefined | null, alpha: number, beta: number, lanes: 1 | 2, op: string): void {
  if (alpha !== 1) for (let i = 0; i < values.length; i++) values[i]! *= alpha;
  if (c === undefined || c === null || beta === 0) return;
  const fits = c.rank <= shape.length && broadcastShapes(c.shape, shape).every((d, i) => d === shape[i]);
  if (!fits) throw new InvalidArgumentError(`${op}: bias of shape ${fmt(c.shape)} does not broadcast to the result ${fmt(shape)}`);
  const C = readLanes(c, lanes);
  const index = broadcastIndex(c.shape, shape);
  for (let k = 0; k < index.length; k++) {
    for (let l = 0; l < lanes; l++) values[k * lanes + l]! += beta * C[index[k]! * lanes + l]!;
  }
}

/**
 * Whether integer products of `dtype` accumulate as bigints: int64, and the unsigned types
 * whose products float64 would round (uint32, uint64). The low 64 bits of sums of products
 * do not depend on signedness, so they are computed in int64 and wrapped to `dtype`.
 */
const exactProducts = (dtype: DType): boolean => dtype === 'int64' || dtype === 'uint32' || dtype === 'uint64';

/** An int64 result as `dtype` (wrapped to its width). */
const asType = (t: Tensor, dtype: DType): Tensor => (t.dtype === dtype ? t : cast(t, dtype));

/**
 * torch.matmul / ONNX MatMul: 1-D × 1-D is a dot product; a 1-D operand is promoted to a
 * matrix and its dim removed from the result; batch dims broadcast.
 */
export function matmul(a: Tensor, b: Tensor): Tensor {
  const dtype = resultType([a, b]);
  if (exactProducts(dtype)) return asType(matmulInt64(a, b, 'matmul'), dtype);
  const { values, shape } = matmulNumbers(a, b, dtypeInfo(dtype).lanes, 'matmul');
  return fromNumbers(dtype, shape, values);
}

/** torch.nn.functional.linear: x[..., in] @ weight[out, in]^T + bias[out] (weight may be 1-D [in]). */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  if (weight.rank !== 1 && weight.rank !== 2) {
    throw new InvalidArgumentError(`linear: weight must be 1-D or 2-D, got ${fmt(weight.shape)}`);
  }
  if (x.rank === 0) throw new InvalidArgumentError('linear: input must have at least 1 dim');
  const inFeatures = weight.shape[weight.rank - 1]!;
  if (x.shape[x.rank - 1] !== inFeatures) {
    throw new InvalidArgumentError(`linear: input ${fmt(x.shape)} does not end in the weight's ${inFeatures} input features (weight ${fmt(weight.shape)})`);
  }
  const dtype = resultType(bias ? [x, weight, bias] : [x, weight]);
  if (dtype === 'int64') {
    const product = matmulInt64(x, weight.rank === 2 ? permute(weight, [1, 0]) : weight, 'linear');
    return addScaledInt64(product, bias, 1, 1, 'linear');
  }
  const lanes = dtypeInfo(dtype).lanes;
  const outFeatures = weight.rank === 2 ? weight.shape[0]! : 1;
  const rows = shapeSize(x.shape.slice(0, -1));
  const Wt = transposeMatrix(readLanes(weight, lanes), 0, outFeatures, inFeatures, lanes);
  const values = new Float64Array(rows * outFeatures * lanes);
  accumulateProduct(values, 0, readLanes(x, lanes), 0, Wt, 0, rows, inFeatures, outFeatures, lanes);
  const shape = [...x.shape.slice(0, -1), ...(weight.rank === 2 ? [outFeatures] : [])];
  addScaled(values, shape, bias, 1, 1, lanes, 'linear');
  return fromNumbers(dtype, shape, values);
}

/** beta * bias + alpha * (a @ b), the bias broadcast to the product; beta 0 ignores the bias (NaN included). */
function scaledProductPlus(bias: Tensor, a: Tensor, b: Tensor, beta: number, alpha: number, op: string): Tensor {
  const dtype = resultType([bias, a, b]);
  if (dtype === 'int64') return addScaledInt64(matmulInt64(a, b, op), bias, alpha, beta, op);
  const lanes = dtypeInfo(dtype).lanes;
  const { values, shape } = matmulNumbers(a, b, lanes, op);
  addScaled(values, shape, bias, alpha, beta, lanes, op);
  return fromNumbers(dtype, shape, values);
}

/** torch.addmm: beta * bias + alpha * (a @ b) for 2-D a, b; bias broadcasts to the product. */
export function addmm(bias: Tensor, a: Tensor, b: Tensor, beta = 1, alpha = 1): Tensor {
  if (a.rank !== 2 || b.rank !== 2) throw new InvalidArgumentError(`addmm: a and b must be 2-D, got ${fmt(a.shape)} and ${fmt(b.shape)}`);
  return scaledProductPlus(bias, a, b, beta, alpha, 'addmm');
}

/** torch.baddbmm: addmm over a batch of matrices (a [B, n, k], b [B, k, m]). */
export function baddbmm(bias: Tensor, a: Tensor, b: Tensor, beta = 1, alpha = 1): Tensor {
  if (a.rank !== 3 || b.rank !== 3) throw new InvalidArgumentError(`baddbmm: batch1 and batch2 must be 3-D, got ${fmt(a.shape)} and ${fmt(b.shape)}`);
  if (a.shape[0] !== b.shape[0]) throw new InvalidArgumentError(`baddbmm: batch sizes differ: ${fmt(a.shape)} and ${fmt(b.shape)}`);
  return scaledProductPlus(bias, a, b, beta, alpha, 'baddbmm');
}

/** Options of {@link gemm}, as ONNX Gemm's attributes. */
export interface GemmOptions {
  alpha?: number;
  beta?: number;
  transA?: boolean;
  transB?: boolean;
}

/** ONNX Gemm: alpha * A' @ B' + beta * C, A' = transA ? A^T : A (2-D), C broadcasting to [M, N]. */
export function gemm(a: Tensor, b: Tensor, c?: Tensor | null, options: GemmOptions = {}): Tensor {
  const { alpha = 1, beta = 1, transA = false, transB = false } = options;
  if (a.rank !== 2 || b.rank !== 2) throw new InvalidArgumentError(`gemm: A and B must be 2-D, got ${fmt(a.shape)} and ${fmt(b.shape)}`);
  const dtype = resultType(c ? [a, b, c] : [a, b]);
  const lanes = dtypeInfo(dtype).lanes;
  const [ar, ac] = a.shape as [number, number];
  const [br, bc] = b.shape as [number, number];
  const [M, K] = transA ? [ac, ar] : [ar, ac];
  const [K2, N] = transB ? [bc, br] : [br, bc];
  if (K !== K2) {
    throw new InvalidArgumentError(`gemm: A ${fmt(a.shape)}${transA ? '^T' : ''} and B ${fmt(b.shape)}${transB ? '^T' : ''} have inner dims ${K} and ${K2}`);
  }
  if (exactProducts(dtype)) {
    const product = matmulInt64(transA ? permute(a, [1, 0]) : a, transB ? permute(b, [1, 0]) : b, 'gemm');
    // The bias in int64 too: added to the int64 product as uint64 it would promote to float64.
    return asType(addScaledInt64(product, c && asType(c, 'int64'), alpha, beta, 'gemm'), dtype);
  }
  let A = readLanes(a, lanes);
  let B = readLanes(b, lanes);
  if (transA) A = transposeMatrix(A, 0, ar, ac, lanes);
  if (transB) B = transposeMatrix(B, 0, br, bc, lanes);
  const values = new Float64Array(M * N * lanes);
  accumulateProduct(values, 0, A, 0, B, 0, M, K, N, lanes);
  addScaled(values, [M, N], c, alpha, beta, lanes, 'gemm');
  return fromNumbers(dtype, [M, N], values);
}
