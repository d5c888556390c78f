/**
 * Output dtype and shape of each layer kind, as TensorRT computes them (-1 for a dim only
 * known at run time). A violation of a layer's rules is a converter bug: it throws an
 * InternalError naming the layer, before anything reaches a builder.
 *
 * Shape tensors: small int64 tensors whose values TensorRT computes at build time when it
 * can. `value` below mirrors that: known for constants, shapes of static tensors and simple
 * arithmetic on them, so static reshapes and slices stay static.
 */
import { BadInputError, InternalError } from '../errors';
import { attentionShapeError } from './attention';
import { scaleShapeError } from '../ir/quantization';
import { sym, type Dim } from '../ir/symbolic';
import type { LayerParams, QuantizedDType, TrtDType } from './layers';
import { MAX_RANK } from './layers';

export interface TensorInfo {
  dtype: TrtDType;
  shape: readonly number[];
  /** The values of a rank-0/1 integer tensor when known at build time. */
  value?: readonly number[];
  /**
   * What is known of a rank-0/1 integer tensor when only some elements are (a shape tensor
   * mixing constants and dims of dynamic tensors, as TensorRT tracks them): each element's
   * build-time value, or null for one known only at run time. Absent when `value` is set or
   * nothing is known.
   */
  known?: readonly (number | null)[];
}

/** Per element of a rank-0/1 integer tensor: its build-time value or null; undefined when not even the length is known. */
export function knownElements(t: TensorInfo): Array<number | null> | undefined {
  if (t.value) return [...t.value];
  if (t.known) return [...t.known];
  if (t.dtype !== 'int32' && t.dtype !== 'int64') return undefined;
  if (t.shape.length === 0) return [null];
  if (t.shape.length === 1 && t.shape[0]! >= 0 && t.shape[0]! <= 64) return new Array<number | null>(t.shape[0]!).fill(null);
  return undefined;
}

/** `value` when every element is known, `known` when some are, nothing otherwise. */
function withKnown(info: TensorInfo, known: ReadonlyArray<number | null> | undefined): TensorInfo {
  if (info.value || known === undefined || known.length > 64) return info;
  if (known.every((k) => k !== null)) return { ...info, value: known as number[] };
  return known.some((k) => k !== null) ? { ...info, known: [...known] } : info;
}

/** Dims from a shape tensor's known elements: run-time ones are -1. */
const dimsFromKnown = (known: ReadonlyArray<number | null>): number[] => known.map((k) => (k === null ? -1 : k));

const isFloat = (d: TrtDType): boolean => d === 'float32' || d === 'float16' || d === 'bfloat16';
/** What INonZeroLayer takes (NvInfer.h: kFLOAT, kHALF, kINT32, kBOOL). */
export const NONZERO_TYPES: readonly TrtDType[] = ['float32', 'float16', 'int32', 'bool'];
const isInt = (d: TrtDType): boolean => d === 'int32' || d === 'int64' || d === 'int8';

function volume(shape: readonly number[]): number {
  return shape.reduce((a, d) => (a < 0 || d < 0 ? -1 : a * d), 1);
}

function broadcastEqualRank(fail: (m: string) => never, shapes: Array<readonly number[]>): number[] {
  const rank = shapes[0]!.length;
  if (shapes.some((s) => s.length !== rank)) fail(`inputs must have equal rank, got ${shapes.map((s) => `[${s}]`).join(', ')}`);
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    const dims = shapes.map((s) => s[i]!);
    const big = dims.filter((d) => d !== 1);
    if (big.length === 0) out.push(1);
    else if (big.some((d) => d === -1)) out.push(big.every((d) => d === -1 || d === big.find((x) => x !== -1)) ? (big.find((x) => x !== -1) ?? -1) : -1);
    else if (big.every((d) => d === big[0])) out.push(big[0]!);
    else fail(`dim ${i} cannot broadcast: ${dims.join(' vs ')}`);
  }
  return out;
}

function normAxis(fail: (m: string) => never, axis: number, rank: number): number {
  if (axis < 0 || axis >= Math.max(rank, 1)) fail(`axis ${axis} is out of range for rank ${rank}`);
  return axis;
}

function foldElementwise(op: string, a: readonly number[], b: readonly number[]): number[] | undefined {
  const n = Math.max(a.length, b.length);
  if (!((a.length === n || a.length === 1) && (b.length === n || b.length === 1))) return undefined;
  const f: Record<string, (x: number, y: number) => number> = {
    sum: (x, y) => x + y,
    sub: (x, y) => x - y,
    prod: (x, y) => x * y,
    max: Math.max,
    min: Math.min,
    floor_div: (x, y) => Math.floor(x / y),
    div: (x, y) => Math.trunc(x / y),
  };
  const fn = f[op];
  if (!fn) return undefined;
  return Array.from({ length: n }, (_, i) => fn(a[a.length === 1 ? 0 : i]!, b[b.length === 1 ? 0 : i]!));
}

/** foldElementwise per element on partially known operands (an unknown operand gives an unknown result). */
function foldKnown(op: string, a: ReadonlyArray<number | null> | undefined, b: ReadonlyArray<number | null> | undefined): Array<number | null> | undefined {
  if (!a || !b) return undefined;
  const n = Math.max(a.length, b.length);
  if (!((a.length === n || a.length === 1) && (b.length === n || b.length === 1))) return undefined;
  return Array.from({ length: n }, (_, i) => {
    const x = a[a.length === 1 ? 0 : i]!;
    const y = b[b.length === 1 ? 0 : i]!;
    if (x === null || y === null) return null;
    return foldElementwise(op, [x], [y])?.[0] ?? null;
  });
}

/** Reshape dims with -1 (infer) and, if allowed, 0 (copy; the copied dim may itself be -1 = dynamic). */
function reshapeDims(fail: (m: string) => never, input: readonly number[], dims: readonly number[], zeroIsPlaceholder: boolean): number[] {
  const out = dims.map((d, i) => (d === 0 && zeroIsPlaceholder ? (input[i] ?? fail(`reshape 0 at ${i} has no input dim to copy`)) : d));
  const inferAt = dims.flatMap((d, i) => (d === -1 ? [i] : []));
  if (inferAt.length > 1) fail('reshape has more than one -1');
  const total = volume(input);
  const others = out.filter((_, i) => i !== inferAt[0]);
  if (others.some((d) => d < -1)) fail(`reshape dims [${dims}] hold a negative size`);
  if (total < 0 || others.some((d) => d < 0)) return out; // run-time dims: TensorRT resolves them then
  const known = others.reduce((a, d) => a * d, 1);
  if (inferAt.length === 1) {
    if (known === 0 || total % known !== 0) fail(`cannot reshape [${input}] (${total} elements) to [${dims}]`);
    out[inferAt[0]!] = total / known;
  } else if (known !== total) {
    fail(`cannot reshape [${input}] (${total} elements) to [${dims}]`);
  }
  return out;
}

function permuteDims(fail: (m: string) => never, shape: readonly number[], perm: readonly number[] | undefined): number[] {
  if (!perm) return [...shape];
  if (perm.length !== shape.length || [...perm].sort((a, b) => a - b).some((p, i) => p !== i)) fail(`permutation [${perm}] does not fit rank ${shape.length}`);
  return perm.map((p) => shape[p]!);
}

const QUANTIZED_DTYPES: readonly QuantizedDType[] = ['int8', 'uint8', 'float8e4m3fn', 'int4'];

/** A dim of a network shape as the IR's quantization rules read it (-1: known only at run time). */
const RUN_TIME_DIM = sym('run_time');
const irDims = (shape: readonly number[]): Dim[] => shape.map((d) => (d < 0 ? RUN_TIME_DIM : d));

/**
 * The scale and zero point of a quantize or dequantize layer against its quantized side `x`:
 * a 0-d, per-axis or blocked scale (lib/ir/quantization.ts) whose blocks divide the axis, and
 * a zero point of the scale's shape in the quantized type (none for float8).
 */
function checkQuantization(
  fail: (m: string) => never,
  params: { axis: number; blockSize?: number },
  x: TensorInfo,
  scale: TensorInfo,
  zeroPoint: TensorInfo | null,
  quantized: QuantizedDType,
): void {
  const blockSize = params.blockSize ?? 0;
  if (params.blockSize !== undefined && (!Number.isInteger(blockSize) || blockSize < 1)) fail(`blockSize must be a positive integer, got ${params.blockSize}`);
  if (scale.shape.length > 0) normAxis(fail, params.axis, x.shape.length);
  const why = scaleShapeError(irDims(x.shape), irDims(scale.shape), params.axis, blockSize, true);
  if (why !== null) fail(`scale [${scale.shape}]: ${why}`);
  if (zeroPoint === null) return;
  if (quantized === 'float8e4m3fn') fail('a float8e4m3fn quantization takes no zero point');
  if (zeroPoint.dtype !== quantized) fail(`the zero point is ${zeroPoint.dtype}, not the quantized type ${quantized}`);
  if (zeroPoint.shape.length !== scale.shape.length || zeroPoint.shape.some((d, i) => d !== scale.shape[i] && d >= 0 && scale.shape[i]! >= 0)) {
    fail(`the zero point [${zeroPoint.shape}] does not have the scale's shape [${scale.shape}]`);
  }
}

function spatialOut(input: number, window: number, stride: number, pre: number, post: number, dilation: number, roundUp: boolean): number {
  if (input < 0) return -1;
  const effective = dilation * (window - 1) + 1;
  const span = input + pre + post - effective;
  return (roundUp ? Math.ceil(span / stride) : Math.floor(span / stride)) + 1;
}

/**
 * The error a backend gives when the concrete input shapes of a run break a rule of a layer
 * that the network's symbolic shapes passed (`cause` is inferLayer's complaint): the inputs
 * contradict each other, as a KV-cache model's attention mask shorter than its past plus new
 * tokens, whose lengths are separate dims of the model's inputs. Every backend words it so.
 */
export function shapesDoNotFit(backend: string, layerName: string, cause: unknown): BadInputError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new BadInputError(`${backend} backend: the input shapes do not fit together: ${reason}`, { cause, details: { layer: layerName } });
}

/**
 * Infers the outputs of a layer. `inputs` holds the input tensors' info (null where an
 * optional input is omitted); `name` labels errors.
 */
export function inferLayer(params: LayerParams, inputs: ReadonlyArray<TensorInfo | null>, name: string): TensorInfo[] {
  const fail = (m: string): never => {
    throw new InternalError(`network layer "${name}" (${params.kind}): ${m}`);
  };
  const x = (i: number): TensorInfo => inputs[i] ?? fail(`input ${i} is required`);
  const out = ((): TensorInfo[] => {
    switch (params.kind) {
      case 'constant': {
        const d = params.weights.dtype as TrtDType;
        if (d === 'bool' || d === 'uint8') fail('TensorRT has no bool or uint8 constants: use int32 and a cast');
        const t = params.weights;
        const value = (d === 'int32' || d === 'int64') && t.rank <= 1 && t.size <= 64 ? t.toArray() : undefined;
        return [{ dtype: d, shape: [...t.shape], value }];
      }
      case 'identity':
        return [{ ...x(0) }];
      case 'cast': {
        const a = x(0);
        const out: TensorInfo = { dtype: params.to, shape: a.shape, value: isInt(params.to) ? a.value?.map(Math.trunc) : undefined };
        return [isInt(params.to) && isInt(a.dtype) ? withKnown(out, a.known) : out];
      }
      case 'elementwise': {
        const a = x(0);
        const b = x(1);
        if (a.dtype !== b.dtype) fail(`input types differ: ${a.dtype} and ${b.dtype}`);
        const logical = params.op === 'and' || params.op === 'or' || params.op === 'xor';
        if (logical !== (a.dtype === 'bool')) fail(`${params.op} needs ${logical ? 'bool' : 'non-bool'} inputs, got ${a.dtype}`);
        const shape = broadcastEqualRank(fail, [a.shape, b.shape]);
        const compare = params.op === 'equal' || params.op === 'greater' || params.op === 'less';
        const value = a.value && b.value && !compare ? foldElementwise(params.op, a.value, b.value) : undefined;
        const out: TensorInfo = { dtype: compare ? 'bool' : a.dtype, shape, value };
        if (value || compare || !isInt(a.dtype) || shape.length > 1) return [out];
        return [withKnown(out, foldKnown(params.op, knownElements(a), knownElements(b)))];
      }
      case 'unary': {
        const a = x(0);
        if (params.op === 'not' && a.dtype !== 'bool') fail('not needs a bool input');
        const intOk = params.op === 'abs' || params.op === 'sign' || params.op === 'neg';
        if (params.op !== 'not' && !isFloat(a.dtype) && !(intOk && isInt(a.dtype))) fail(`${params.op} does not take ${a.dtype}`);
        const bool = params.op === 'isinf' || params.op === 'isnan';
        return [{ dtype: bool ? 'bool' : a.dtype, shape: a.shape, value: params.op === 'neg' ? a.value?.map((v) => -v) : undefined }];
      }
      case 'activation': {
        const a = x(0);
        if (!isFloat(a.dtype) && !(params.type === 'relu' && isInt(a.dtype))) fail(`${params.type} does not take ${a.dtype}`);
        return [{ dtype: a.dtype, shape: a.shape }];
      }
      case 'attention': {
        const [q, k, v] = [x(0), x(1), x(2)];
        if (!isFloat(q.dtype)) fail(`attention does not take ${q.dtype}`);
        if (k.dtype !== q.dtype || v.dtype !== q.dtype) fail(`query, key and value types differ: ${q.dtype}, ${k.dtype} and ${v.dtype}`);
        const m = inputs[3] ?? null;
        if (m !== null && m.dtype !== 'bool' && m.dtype !== q.dtype) fail(`the mask must be bool or ${q.dtype}, got ${m.dtype}`);
        if (params.strided) return [{ dtype: q.dtype, shape: [...params.strided.outputShape] }];
        if (params.causal && m !== null) fail('a causal attention takes no mask');
        const why = attentionShapeError({ query: q.shape, key: k.shape, value: v.shape, mask: m?.shape ?? null });
        if (why !== null) fail(why);
        return [{ dtype: q.dtype, shape: [...q.shape] }];
      }
      case 'matmul': {
        const a = x(0);
        const b = x(1);
        if (a.dtype !== b.dtype) fail(`input types differ: ${a.dtype} and ${b.dtype}`);
        if (!isFloat(a.dtype)) fail(`matmul does not take ${a.dtype}`);
        const vecA = params.opA === 'vector';
        const vecB = params.opB === 'vector';
        const ra = a.shape.length - (vecA ? 1 : 2);
        const rb = b.shape.length - (vecB ? 1 : 2);
        if (ra !== rb || ra < 0) fail(`batch ranks differ: [${a.shape}] and [${b.shape}]`);
        const batch = broadcastEqualRank(fail, [a.shape.slice(0, ra), b.shape.slice(0, rb)]);
        const mat = (s: readonly number[], op: string): [number, number] => {
          const r = s.slice(-2);
          return op === 'transpose' ? [r[1]!, r[0]!] : [r[0]!, r[1]!];
        };
        const [m, ka] = vecA ? [1, a.shape[a.shape.length - 1]!] : mat(a.shape, params.opA);
        const [kb, n] = vecB ? [b.shape[b.shape.length - 1]!, 1] : mat(b.shape, params.opB);
        if (ka !== kb && ka >= 0 && kb >= 0) fail(`inner dims differ: [${a.shape}] ${params.opA} x [${b.shape}] ${params.opB}`);
        return [{ dtype: a.dtype, shape: [...batch, ...(vecA ? [] : [m]), ...(vecB ? [] : [n])] }];
      }
      case 'shuffle': {
        const a = x(0);
        let shape = permuteDims(fail, a.shape, params.firstTranspose);
        const dimsInput = inputs[1];
        if (dimsInput) {
          if (dimsInput.shape.length !== 1 || dimsInput.dtype !== 'int64') fail('reshape dims must be a 1-D int64 shape tensor');
          const known = knownElements(dimsInput);
          shape = dimsInput.value
            ? reshapeDims(fail, shape, dimsInput.value, params.zeroIsPlaceholder)
            : known
              ? known.map((k, i) => (k === null ? -1 : k === 0 && params.zeroIsPlaceholder ? (shape[i] ?? fail(`reshape 0 at ${i} has no input dim to copy`)) : k))
              : new Array<number>(dimsInput.shape[0]!).fill(-1);
        } else if (params.reshape) {
          shape = reshapeDims(fail, shape, params.reshape, params.zeroIsPlaceholder);
        }
        shape = permuteDims(fail, shape, params.secondTranspose);
        const value = a.value && !params.firstTranspose && !params.secondTranspose && volume(shape) === a.value.length ? a.value : undefined;
        const known = !value && a.known && !params.firstTranspose && !params.secondTranspose && shape.length <= 1 && volume(shape) === a.known.length ? a.known : undefined;
        return [withKnown({ dtype: a.dtype, shape, value }, known)];
      }
      case 'slice': {
        const a = x(0);
        const rank = a.shape.length;
        const vec = (i: number, fallback: number[]): number[] | null => {
          const t = inputs[i];
          if (!t) return fallback;
          return t.value ? [...t.value] : null;
        };
        const start = vec(1, params.start);
        const size = vec(2, params.size);
        const stride = vec(3, params.stride);
        if (size === null) {
          const known = inputs[2] ? knownElements(inputs[2]) : undefined;
          return [{ dtype: a.dtype, shape: known && known.length === rank ? dimsFromKnown(known) : new Array<number>(rank).fill(-1) }];
        }
        for (const [label, v] of [['start', start], ['size', size], ['stride', stride]] as const) {
          if (v !== null && v.length !== rank) fail(`${label} has ${v.length} entries for rank ${rank}`);
        }
        if (params.mode === 'strict_bounds' && start && stride) {
          size.forEach((n, i) => {
            const d = a.shape[i]!;
            if (d < 0 || n === 0) return;
            const last = start[i]! + (n - 1) * stride[i]!;
            if (start[i]! < 0 || start[i]! >= d || last < 0 || last >= d) fail(`axis ${i}: start ${start[i]}, size ${n}, stride ${stride[i]} reads outside [0, ${d})`);
          });
        }
        const value =
          a.value && rank === 1 && start && stride && size.every((n) => n >= 0)
            ? Array.from({ length: size[0]! }, (_, j) => a.value![start[0]! + j * stride[0]!]!)
            : undefined;
        return [{ dtype: a.dtype, shape: size, value: value?.every((v) => v !== undefined) ? value : undefined }];
      }
      case 'concat': {
        const all = inputs.map((t, i) => t ?? fail(`input ${i} is missing`));
        if (all.length === 0) fail('no inputs');
        const rank = all[0]!.shape.length;
        const axis = normAxis(fail, params.axis, rank);
        if (all.some((t) => t.dtype !== all[0]!.dtype)) fail('inputs must share one dtype');
        const shape = [...all[0]!.shape];
        for (const t of all.slice(1)) {
          if (t.shape.length !== rank) fail('inputs must share one rank');
          t.shape.forEach((d, i) => {
            if (i !== axis && d !== shape[i] && d >= 0 && shape[i]! >= 0) fail(`dim ${i} differs: ${d} vs ${shape[i]}`);
          });
        }
        shape[axis] = all.reduce((s, t) => (s < 0 || t.shape[axis]! < 0 ? -1 : s + t.shape[axis]!), 0);
        const value = rank === 1 && all.every((t) => t.value) ? all.flatMap((t) => [...t.value!]) : undefined;
        const parts = rank === 1 && !value ? all.map(knownElements) : [];
        const known = parts.length > 0 && parts.every((k) => k !== undefined) ? parts.flatMap((k) => k!) : undefined;
        return [withKnown({ dtype: all[0]!.dtype, shape, value }, known)];
      }
      case 'gather': {
        const data = x(0);
        const idx = x(1);
        if (idx.dtype !== 'int32' && idx.dtype !== 'int64') fail(`indices must be int32 or int64, got ${idx.dtype}`);
        const rank = data.shape.length;
        if (params.mode === 'element') {
          if (idx.shape.length !== rank) fail('element gather needs indices of the data rank');
          return [{ dtype: data.dtype, shape: idx.shape }];
        }
        if (params.mode === 'nd') {
          const b = params.nbElementWiseDims ?? 0;
          const last = idx.shape[idx.shape.length - 1]!;
          if (last < 0) fail('nd gather needs a static last index dim');
          return [{ dtype: data.dtype, shape: [...idx.shape.slice(0, -1), ...data.shape.slice(b + last)] }];
        }
        const axis = normAxis(fail, params.axis, rank);
        const shape = [...data.shape.slice(0, axis), ...idx.shape, ...data.shape.slice(axis + 1)];
        const value =
          data.value && rank === 1 && idx.value ? idx.value.map((i) => data.value![i < 0 ? i + data.value!.length : i]!) : undefined;
        const out: TensorInfo = { dtype: data.dtype, shape, value: value?.every((v) => v !== undefined) ? value : undefined };
        const dataKnown = rank === 1 && idx.value && !out.value ? knownElements(data) : undefined;
        const known = dataKnown && idx.value!.map((i) => dataKnown[i < 0 ? i + dataKnown.length : i] ?? null);
        return [withKnown(out, known)];
      }
      case 'scatter': {
        const data = x(0);
        const idx = x(1);
        const upd = x(2);
        if (idx.dtype !== 'int32' && idx.dtype !== 'int64') fail('indices must be int32 or int64');
        if (upd.dtype !== data.dtype) fail('updates must have the data dtype');
        return [{ dtype: data.dtype, shape: data.shape }];
      }
      case 'reduce': {
        const a = x(0);
        const axes = new Set(params.axes.map((ax) => normAxis(fail, ax, a.shape.length)));
        const shape = params.keepDims ? a.shape.map((d, i) => (axes.has(i) ? 1 : d)) : a.shape.filter((_, i) => !axes.has(i));
        if (a.dtype === 'bool') fail('reduce does not take bool');
        return [{ dtype: a.dtype, shape }];
      }
      case 'softmax': {
        const a = x(0);
        normAxis(fail, params.axis, a.shape.length);
        if (!isFloat(a.dtype)) fail(`softmax does not take ${a.dtype}`);
        return [{ dtype: a.dtype, shape: a.shape }];
      }
      case 'shape': {
        const a = x(0);
        return [withKnown({ dtype: 'int64', shape: [a.shape.length] }, a.shape.map((d) => (d >= 0 ? d : null)))];
      }
      case 'fill': {
        const dimsInput = inputs[0];
        const dimsKnown = dimsInput ? knownElements(dimsInput) : undefined;
        const dims = dimsInput ? (dimsKnown ? dimsFromKnown(dimsKnown) : new Array<number>(dimsInput.shape[0]!).fill(-1)) : params.dims;
        if (!['float32', 'float16', 'int32', 'int64'].includes(params.dtype)) fail(`fill does not output ${params.dtype}`);
        const value =
          dims.length <= 1 && dims.every((d) => d >= 0) && !inputs[1] && !inputs[2] && (params.dtype === 'int32' || params.dtype === 'int64')
            ? Array.from({ length: dims[0] ?? 1 }, (_, i) => params.alpha + (params.beta[0] ?? 0) * i)
            : undefined;
        return [{ dtype: params.dtype, shape: dims, value: value && value.length <= 64 ? value : undefined }];
      }
      case 'select': {
        const c = x(0);
        const a = x(1);
        const b = x(2);
        if (c.dtype !== 'bool') fail('condition must be bool');
        if (a.dtype !== b.dtype) fail(`branches differ in dtype: ${a.dtype} and ${b.dtype}`);
        return [{ dtype: a.dtype, shape: broadcastEqualRank(fail, [c.shape, a.shape, b.shape]) }];
      }
      case 'convolution':
      case 'deconvolution': {
        const a = x(0);
        const n = params.kernelSize.length;
        if (a.shape.length !== n + 2) fail(`input rank ${a.shape.length} does not fit ${n}-D kernels`);
        if (!isFloat(a.dtype)) fail(`${params.kind} does not take ${a.dtype}`);
        const last = params.channelsLast === true;
        if (params.kind === 'deconvolution' && (last || params.activation !== undefined || inputs[3])) fail('channelsLast, activation and a residual are for convolutions only');
        const c = a.shape[last ? n + 1 : 1]!;
        if (c < 0) fail('the channel dim must be static');
        const spatial = params.kernelSize.map((k, i) => {
          const d = a.shape[(last ? 1 : 2) + i]!;
          if (params.kind === 'convolution') return spatialOut(d, k, params.stride[i]!, params.prePadding[i]!, params.postPadding[i]!, params.dilation[i]!, false);
          return d < 0 ? -1 : (d - 1) * params.stride[i]! - params.prePadding[i]! - params.postPadding[i]! + params.dilation[i]! * (k - 1) + 1;
        });
        if (spatial.some((d) => d === 0 || d < -1)) fail(`output spatial size [${spatial}] is empty`);
        const shape = last ? [a.shape[0]!, ...spatial, params.nbOutputMaps] : [a.shape[0]!, params.nbOutputMaps, ...spatial];
        const residual = inputs[3];
        if (residual) {
          if (residual.dtype !== a.dtype) fail(`the residual is ${residual.dtype}, the input ${a.dtype}`);
          if (residual.shape.length !== shape.length || residual.shape.some((d, i) => d !== shape[i] && d >= 0 && shape[i]! >= 0)) {
            fail(`the residual [${residual.shape.join(', ')}] does not have the output's shape [${shape.join(', ')}]`);
          }
        }
        return [{ dtype: a.dtype, shape }];
      }
      case 'pooling': {
        const a = x(0);
        const n = params.window.length;
        if (a.shape.length !== n + 2) fail(`input rank ${a.shape.length} does not fit ${n}-D windows`);
        const last = params.channelsLast === true;
        const spatial = params.window.map((w, i) =>
          spatialOut(a.shape[(last ? 1 : 2) + i]!, w, params.stride[i]!, params.prePadding[i]!, params.postPadding[i]!, 1, params.paddingMode === 'explicit_round_up'),
        );
        return [{ dtype: a.dtype, shape: last ? [a.shape[0]!, ...spatial, a.shape[n + 1]!] : [a.shape[0]!, a.shape[1]!, ...spatial] }];
      }
      case 'normalization': {
        const a = x(0);
        x(1);
        x(2);
        params.axes.forEach((ax) => normAxis(fail, ax, a.shape.length));
        return [{ dtype: a.dtype, shape: a.shape }];
      }
      case 'resize': {
        const a = x(0);
        const dimsInput = inputs[1];
        const dimsKnown = dimsInput ? knownElements(dimsInput) : undefined;
        const shape = dimsInput ? (dimsKnown && dimsKnown.length === a.shape.length ? dimsFromKnown(dimsKnown) : new Array<number>(a.shape.length).fill(-1)) : params.outputDims;
        if (shape.length !== a.shape.length) fail('output dims must have the input rank');
        return [{ dtype: a.dtype, shape }];
      }
      case 'topk': {
        const a = x(0);
        const axis = normAxis(fail, params.axis, a.shape.length);
        if (params.k > 3840) fail(`k ${params.k} exceeds TensorRT's limit of 3840`);
        const shape = a.shape.map((d, i) => (i === axis ? params.k : d));
        return [
          { dtype: a.dtype, shape },
          { dtype: params.indicesType, shape },
        ];
      }
      case 'cumulative': {
        const a = x(0);
        normAxis(fail, params.axis, a.shape.length);
        return [{ dtype: a.dtype, shape: a.shape }];
      }
      case 'nonzero': {
        // The count of nonzero elements is known only when the layer has run, even for an input whose dims are static.
        const a = x(0);
        if (!NONZERO_TYPES.includes(a.dtype)) fail(`nonzero takes ${NONZERO_TYPES.join(', ')}, got ${a.dtype}`);
        return [{ dtype: 'int64', shape: [a.shape.length, -1] }];
      }
      case 'nms': {
        // Rows of (batch, class, box): how many only a run tells, as a nonzero's count.
        const boxes = x(0);
        const scores = x(1);
        if (boxes.dtype !== 'float32' && boxes.dtype !== 'float16') fail(`nms takes float32 or float16 boxes, got ${boxes.dtype}`);
        if (scores.dtype !== boxes.dtype) fail(`nms scores are ${scores.dtype} and boxes ${boxes.dtype}`);
        if (boxes.shape.length !== 3 || (boxes.shape[2]! >= 0 && boxes.shape[2] !== 4)) fail(`nms boxes [${boxes.shape.join(', ')}] must be [batches, boxes, 4]`);
        if (scores.shape.length !== 3) fail(`nms scores [${scores.shape.join(', ')}] must be [batches, classes, boxes]`);
        const agree = (a: number, b: number): boolean => a < 0 || b < 0 || a === b;
        if (!agree(boxes.shape[0]!, scores.shape[0]!) || !agree(boxes.shape[1]!, scores.shape[2]!)) {
          fail(`nms boxes [${boxes.shape.join(', ')}] and scores [${scores.shape.join(', ')}] disagree on batches or boxes`);
        }
        if (!Number.isInteger(params.maxOutputBoxesPerClass) || params.maxOutputBoxesPerClass < 0) fail(`nms maxOutputBoxesPerClass ${params.maxOutputBoxesPerClass} must be a non-negative integer`);
        return [{ dtype: 'int64', shape: [-1, 3] }];
      }
      case 'unique': {
        // The count of unique elements (slices) is known only when the layer has run.
        const a = x(0);
        if (a.dtype === 'bool' || isFloat(a.dtype) || ['int8', 'int32', 'int64', 'uint8'].includes(a.dtype)) {
          const n = a.shape.reduce((p, d) => (p < 0 || d < 0 ? -1 : p * d), 1);
          if (params.axis === undefined) return [{ dtype: a.dtype, shape: [-1] }, { dtype: 'int64', shape: [-1] }, { dtype: 'int64', shape: [n] }, { dtype: 'int64', shape: [-1] }];
          const axis = normAxis(fail, params.axis, a.shape.length);
          return [
            { dtype: a.dtype, shape: a.shape.map((d, i) => (i === axis ? -1 : d)) },
            { dtype: 'int64', shape: [-1] },
            { dtype: 'int64', shape: [a.shape[axis]!] },
            { dtype: 'int64', shape: [-1] },
          ];
        }
        return fail(`unique takes bool, float32, float16, bfloat16, int8, int32, int64 or uint8, got ${a.dtype}`);
      }
      case 'quantize': {
        const a = x(0);
        const scale = x(1);
        if (!isFloat(a.dtype)) fail(`quantize takes float32, float16 or bfloat16, got ${a.dtype}`);
        if (!QUANTIZED_DTYPES.includes(params.to)) fail(`quantize does not output ${params.to}`);
        if (scale.dtype !== a.dtype) fail(`the scale is ${scale.dtype} and the input ${a.dtype}: x / scale is computed in their one type`);
        checkQuantization(fail, params, a, scale, inputs[2] ?? null, params.to);
        return [{ dtype: params.to, shape: a.shape }];
      }
      case 'dequantize': {
        const q = x(0);
        const scale = x(1);
        if (!QUANTIZED_DTYPES.includes(q.dtype as QuantizedDType)) fail(`dequantize takes ${QUANTIZED_DTYPES.join(', ')}, got ${q.dtype}`);
        if (!isFloat(params.to)) fail(`dequantize does not output ${params.to}`);
        if (!isFloat(scale.dtype)) fail(`the scale must be float32, float16 or bfloat16, got ${scale.dtype}`);
        checkQuantization(fail, params, q, scale, inputs[2] ?? null, q.dtype as QuantizedDType);
        return [{ dtype: params.to, shape: q.shape }];
      }
    }
  })();
  for (const t of out) if (t.shape.length > MAX_RANK) fail(`output rank ${t.shape.length} exceeds TensorRT's ${MAX_RANK}`);
  return out;
}
