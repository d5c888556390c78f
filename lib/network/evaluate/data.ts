/**
 * Data-movement and generator layers: IConstantLayer, IIdentityLayer, IShuffleLayer,
 * ISliceLayer, IConcatenationLayer, IShapeLayer and IFillLayer (linspace). Elements move
 * exactly, in any dtype.
 */
import { CHUNK_ELEMENTS, fromNumbers, readNumbers, stridesOf } from '../../kernels/access';
import { allocateData, concat as concatKernel, full, padSource, permute, reshape, takeElementsInto, type PadMode } from '../../kernels/shape';
import { int64Values } from '../../kernels/int64';
import { shapeSize, Tensor } from '../../ir/tensor';
import { badData, fail, fmtShape, intValues, required, type Executor } from './common';

export const constant: Executor<'constant'> = (p) => [p.weights];

export const identity: Executor<'identity'> = (_p, inputs, layer) => [required(inputs, 0, layer)];

/**
 * IShuffleLayer: first transpose, then reshape (static dims or input 1, a 1-D shape tensor;
 * -1 infers one dim; 0 copies the dim at its position only with zeroIsPlaceholder, else it
 * is a literal 0), then second transpose.
 */
export const shuffle: Executor<'shuffle'> = (p, inputs, layer) => {
  let t = required(inputs, 0, layer);
  if (p.firstTranspose) t = permute(t, p.firstTranspose);
  const dims = inputs[1] ? intValues(inputs[1]) : p.reshape;
  if (dims) t = reshape(t, dims, { copyZeroDims: p.zeroIsPlaceholder });
  if (p.secondTranspose) t = permute(t, p.secondTranspose);
  return [t];
};

/**
 * ISliceLayer: output dim i has size[i] elements; element j reads start[i] + j·stride[i]
 * (stride 0 repeats one element). Coordinates outside [0, d) are, by mode: an error
 * (strict_bounds), taken modulo d (wrap), clamped to the edge (clamp), the fill value
 * (fill: input 4, else 0), or mirrored about the edge elements without repeating them
 * (reflect; a single element repeats). start, size and stride may come from inputs 1-3.
 */
export const slice: Executor<'slice'> = (p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  const rank = x.rank;
  const vector = (i: number, fallback: readonly number[], what: string): number[] => {
    const v = inputs[i] ? intValues(inputs[i]!) : [...fallback];
    if (v.length !== rank) fail(layer, `${what} has ${v.length} entries for an input of rank ${rank}`);
    return v;
  };
  const start = vector(1, p.start, 'start');
  const size = vector(2, p.size, 'size');
  const stride = vector(3, p.stride, 'stride');
  if (size.some((n) => !Number.isInteger(n) || n < 0)) badData(layer, `size ${fmtShape(size)} has a negative entry`);
  const FILL = -1;
  const padMode: PadMode | null = p.mode === 'wrap' ? 'wrap' : p.mode === 'clamp' ? 'edge' : p.mode === 'reflect' ? 'reflect' : null;
  // Per axis, the input coordinate each output index reads (FILL: the fill value); null where
  // every coordinate start + j·stride is inside the dim (the first and the last are: it is
  // affine), read without a map, since a 1-D slice's map would be as long as its output.
  const maps = size.map((n, axis) => {
    const d = x.shape[axis]!;
    const first = start[axis]!;
    const last = first + (n - 1) * stride[axis]!;
    if (n > 0 && first >= 0 && first < d && last >= 0 && last < d) return null;
    const map = d < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const c = start[axis]! + j * stride[axis]!;
      if (c >= 0 && c < d) {
        map[j] = c;
        continue;
      }
      if (p.mode === 'fill') {
        map[j] = FILL;
        continue;
      }
      if (padMode === null || d === 0) {
        badData(layer, `axis ${axis}: element ${j} reads index ${c}, outside [0, ${d}) of input ${fmtShape(x.shape)} (mode ${p.mode})`, {
          axis,
          index: c,
          dim: d,
        });
      }
      map[j] = padSource(c, d, padMode);
    }
    return map;
  });
  const usesFill = maps.some((m) => m !== null && m.includes(FILL));
  const fillInput = inputs[4];
  if (usesFill && fillInput && (fillInput.dtype !== x.dtype || fillInput.size !== 1)) {
    fail(layer, `the fill value must be one ${x.dtype} element, got ${fillInput.dtype}${fmtShape(fillInput.shape)}`);
  }
  // Out-of-bounds elements of fill mode read one extra element appended after the data.
  const source = usesFill ? concatKernel([x.reshape([x.size]), (fillInput ?? full([1], 0, x.dtype)).reshape([1])], 0) : x;
  const fillAt = x.size;
  const strides = stridesOf(x.shape);
  const outShape = size;
  const count = shapeSize(outShape);
  // The source element of each output element, a chunk at a time (an index array as large as
  // the output would double the memory of a large slice, a stride-0 fill included).
  const out = allocateData(x.dtype, count);
  const chunk = Math.min(count, CHUNK_ELEMENTS);
  const index = new Float64Array(chunk);
  const counter = new Array<number>(rank).fill(0);
  for (let done = 0; done < count; done += chunk) {
    const n = Math.min(chunk, count - done);
    for (let k = 0; k < n; k++) {
      let at = 0;
      for (let axis = 0; axis < rank && at !== fillAt; axis++) {
        const map = maps[axis] ?? null;
        const m = map === null ? start[axis]! + counter[axis]! * stride[axis]! : map[counter[axis]!]!;
        at = m === FILL ? fillAt : at + m * strides[axis]!;
      }
      index[k] = at;
      for (let axis = rank - 1; axis >= 0; axis--) {
        if (++counter[axis]! < outShape[axis]!) break;
        counter[axis] = 0;
      }
    }
    takeElementsInto(source, out, done, index, n);
  }
  return [new Tensor(x.dtype, outShape, out)];
};

export const concat: Executor<'concat'> = (p, inputs, layer) => [
  concatKernel(
    inputs.map((_, i) => required(inputs, i, layer)),
    p.axis,
  ),
];

/** IShapeLayer: the input's dims as a 1-D int64 tensor. */
export const shape: Executor<'shape'> = (_p, inputs, layer) => {
  const x = required(inputs, 0, layer);
  return [fromNumbers('int64', [x.rank], x.shape)];
};

/** out[k] = alpha + Σ term(d, i_d) over the row-major multi-indices of `dims`. */
function linspace<T extends number | bigint>(dims: readonly number[], alpha: T, add: (v: T, d: number, i: number) => T, out: { [k: number]: T }): void {
  const count = shapeSize(dims);
  const counter = new Array<number>(dims.length).fill(0);
  for (let k = 0; k < count; k++) {
    // Evaluated afresh for each element, so no rounding error accumulates along the output.
    let v = alpha;
    for (let d = 0; d < dims.length; d++) v = add(v, d, counter[d]!);
    out[k] = v;
    for (let d = dims.length - 1; d >= 0; d--) {
      if (++counter[d]! < dims[d]!) break;
      counter[d] = 0;
    }
  }
}

/**
 * IFillLayer, kLINSPACE: out[i_0, ..., i_n] = alpha + Σ beta[d]·i_d. dims, alpha (a scalar)
 * and beta (1-D, one per output dim) come from inputs 0-2 when given. An int64 output with
 * integer alpha and beta is computed exactly (wrapping as int64), the others in float64.
 */
export const fill: Executor<'fill'> = (p, inputs, layer) => {
  const dims = inputs[0] ? intValues(inputs[0]) : [...p.dims];
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) badData(layer, `dims ${fmtShape(dims)} has a negative entry`);
  if (inputs[1] && inputs[1].size !== 1) fail(layer, `alpha must be a scalar, got shape ${fmtShape(inputs[1].shape)}`);
  const alphaT = inputs[1] ?? Tensor.from('float64', [], [p.alpha]);
  const betaT = inputs[2] ?? Tensor.from('float64', [p.beta.length], [...p.beta]);
  if (betaT.size !== dims.length) fail(layer, `beta has ${betaT.size} entries for ${dims.length} output dims`);
  const alpha = readNumbers(alphaT);
  const beta = readNumbers(betaT);
  const integral = [...alpha, ...beta].every(Number.isInteger);
  if (p.dtype === 'int64' && integral) {
    const out = new BigInt64Array(shapeSize(dims));
    const steps = int64Values(betaT);
    linspace(dims, int64Values(alphaT)[0]!, (v, d, i) => v + steps[d]! * BigInt(i), out);
    return [new Tensor('int64', dims, out)];
  }
  const values = new Float64Array(shapeSize(dims));
  linspace(dims, alpha[0]!, (v, d, i) => v + beta[d]! * i, values);
  return [fromNumbers(p.dtype, dims, values)];
};
