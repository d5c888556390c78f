/**
 * ONNX data-movement ops (opsets 7–28) mapped onto the SHAPE family (lib/ir/ops/shape.ts).
 * Shape-like inputs (Reshape's shape, Expand's shape, Slice's starts/ends, Pad's pads...) are
 * read with ctx.known: constants, or dims folded from Shape arithmetic (symbolic allowed),
 * which become SymInt arguments. A shape that depends on tensor data is unsupported.
 *
 * Shape and Size always fold (shape-folding.ts) and need no mapper here.
 */
import { isInteger, type DType } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { dimEquals, isStatic, symAdd, symFloorDiv, symMax, symMul, symSub, type Dim } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

/** A possibly negative axis against `rank` (ONNX ranges are [-rank, rank-1] unless told). */
function axisOf(ctx: OnnxContext, axis: number, rank: number, what = 'axis'): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= Math.max(rank, 1)) ctx.bad(`${what} ${axis} is out of range for rank ${rank}`);
  return a;
}

function axesOf(ctx: OnnxContext, axes: readonly number[], rank: number, what = 'axes'): number[] {
  const out = axes.map((a) => axisOf(ctx, a, rank, what));
  if (new Set(out).size !== out.length) ctx.bad(`${what} [${axes.join(', ')}] repeat an axis`);
  return out;
}

/** Input `i` as dims (static or symbolic), unsupported when it is data-dependent. */
function knownDims(ctx: OnnxContext, i: number, what: string): readonly Dim[] {
  return exactDims(ctx, knownBounds(ctx, i, what), i, what);
}

/** knownDims() for slice bounds, which may be ±INT64_MAX ("to the end"): clamped, never sizes. */
function knownBounds(ctx: OnnxContext, i: number, what: string): readonly Dim[] {
  const k = ctx.known(i);
  if (k === null) return ctx.needsKnown(`${what} (input ${i}) depends on tensor data, not only on shapes; it cannot be compiled`);
  return k.dims;
}

/**
 * `dims` when every static one is an exact integer: a shape value past 2^53 (folded from
 * int64 arithmetic or a product of dims) is no size any tensor can have, and would round.
 */
function exactDims(ctx: OnnxContext, dims: readonly Dim[], i: number, what: string): readonly Dim[] {
  const bad = dims.find((d) => isStatic(d) && !Number.isSafeInteger(d));
  if (bad !== undefined) ctx.bad(`${what} (input ${i}) holds ${bad}, past the sizes a tensor can have (2^53)`);
  return dims;
}

/** A scalar input's single value as a number (constant) or dim (known shape value). */
function scalarInput(ctx: OnnxContext, i: number, what: string): Dim {
  const k = ctx.known(i);
  if (k !== null) {
    if (k.dims.length !== 1) ctx.bad(`${what} (input ${i}) must hold one value, got ${k.dims.length}`);
    return exactDims(ctx, k.dims, i, what)[0]!;
  }
  const c = ctx.constant(i);
  if (c === null) return ctx.needsKnown(`${what} (input ${i}) depends on tensor data; it must be a constant`);
  if (c.size !== 1) ctx.bad(`${what} (input ${i}) must hold one value, got shape [${c.shape.join(', ')}]`);
  return c.toArray()[0]!;
}

function arg(ctx: OnnxContext, d: Dim): number | Value {
  return ctx.dimArg(d);
}

// Reshape family ----------------------------------------------------------------------------

defineOnnxOp('Reshape', (ctx) => {
  const x = ctx.input(0);
  const inShape = x.tensorType.shape;
  const target = knownDims(ctx, 1, 'the target shape');
  const allowzero = ctx.opset >= 14 ? ctx.attrInt('allowzero', 0) : 0;
  if (allowzero !== 0 && allowzero !== 1) ctx.bad(`attribute allowzero must be 0 or 1, got ${allowzero}`);
  const dims = target.map((d, i) => {
    if (d === 0 && allowzero === 0) {
      // 0 copies the input's dim at that position
      if (i >= inShape.length) ctx.bad(`shape [${target.join(', ')}] copies dim ${i} (a 0) of a rank-${inShape.length} input`);
      return inShape[i]!;
    }
    return d;
  });
  if (allowzero === 1 && dims.includes(0) && dims.includes(-1)) ctx.bad('with allowzero=1 the shape may not hold both 0 and -1');
  return [ctx.emit('aten.reshape.default', { self: x, shape: dims.map((d) => (d === -1 ? -1 : arg(ctx, d))) })];
});

defineOnnxOp('Flatten', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  const axis = ctx.attrInt('axis', 1);
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank) ctx.bad(`axis ${axis} is out of range for rank ${rank} (allowed: [${-rank}, ${rank}])`);
  if (rank === 0) return [ctx.emit('aten.view.default', { self: x, size: [1, 1] })];
  const flatten = (self: Value, start: number, end: number): Value =>
    start === end ? self : ctx.emit('aten.flatten.using_ints', { self, start_dim: start, end_dim: end });
  if (a === 0 || a === rank) {
    const flat = flatten(x, 0, rank - 1);
    return [ctx.emit('aten.unsqueeze.default', { self: flat, dim: a === 0 ? 0 : 1 })];
  }
  // [d0..d(a-1), da..] → [d0..d(a-1), prod(da..)] → [prod(d0..d(a-1)), prod(da..)]
  return [flatten(flatten(x, a, rank - 1), 0, a - 1)];
});

defineOnnxOp('Transpose', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  const perm = ctx.attrInts(
    'perm',
    Array.from({ length: rank }, (_, i) => rank - 1 - i),
  );
  if (perm.length !== rank) ctx.bad(`perm [${perm.join(', ')}] must have ${rank} entries`);
  axesOf(ctx, perm, rank, 'perm');
  return [ctx.emit('aten.permute.default', { self: x, dims: perm })];
});

defineOnnxOp('Squeeze', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  if (!ctx.hasInput(1)) return [ctx.emit('aten.squeeze.default', { self: x })];
  const axes = axesOf(ctx, ctx.staticInts(1, 'axes'), shape.length);
  for (const a of axes) {
    const d = shape[a]!;
    if (isStatic(d) && d !== 1) ctx.bad(`cannot squeeze axis ${a} of size ${d}`);
  }
  if (axes.every((a) => shape[a] === 1)) return [ctx.emit('aten.squeeze.dims', { self: x, dim: axes })];
  // A symbolic axis must be 1 at run time (ONNX requires it): reshape to the remaining dims,
  // which fails at run time if it is not.
  const rest = shape.filter((_, i) => !axes.includes(i));
  return [ctx.emit('aten.reshape.default', { self: x, shape: rest.map((d) => arg(ctx, d)) })];
});

defineOnnxOp('Unsqueeze', (ctx) => {
  let x = ctx.input(0);
  const raw = ctx.staticInts(1, 'axes');
  const outRank = x.tensorType.shape.length + raw.length;
  const axes = axesOf(ctx, raw, outRank).sort((p, q) => p - q);
  for (const a of axes) x = ctx.emit('aten.unsqueeze.default', { self: x, dim: a });
  return [x];
});

// Joins and splits -----------------------------------------------------------------------------

defineOnnxOp('Concat', (ctx) => {
  const inputs = ctx.inputs();
  if (inputs.length === 0) ctx.bad('needs at least one input');
  const types = inputs.map((v) => v.tensorType.dtype);
  if (types.some((t) => t !== types[0])) ctx.bad(`inputs must have one element type, got ${types.join(', ')}`);
  return [ctx.emit('aten.cat.default', { tensors: inputs, dim: ctx.attrInt('axis') })];
});

defineOnnxOp('Split', (ctx) => {
  const x = ctx.input(0);
  const shape = x.tensorType.shape;
  const a = axisOf(ctx, ctx.attrInt('axis', 0), shape.length);
  const n = shape[a]!;
  const outputs = ctx.node.outputs.length;
  let sizes: Dim[];
  if (ctx.hasInput(1)) {
    sizes = [...knownDims(ctx, 1, 'split')];
    if (sizes.length !== outputs) ctx.bad(`split has ${sizes.length} sizes for ${outputs} outputs`);
  } else {
    let k = outputs;
    let uneven = false;
    if (ctx.opset >= 18) {
      if (!ctx.has('num_outputs')) ctx.bad('either the split input or the num_outputs attribute is required');
      k = ctx.attrInt('num_outputs');
      if (k !== outputs) ctx.bad(`num_outputs is ${k} but the node has ${outputs} outputs`);
      uneven = true;
    }
    if (k < 1) ctx.bad('Split needs at least one output');
    if (isStatic(n)) {
      if (!uneven && n % k !== 0) ctx.bad(`dim ${a} of size ${n} cannot be split evenly into ${k} outputs`);
      const size = Math.ceil(n / k);
      sizes = Array.from({ length: k }, (_, i) => (i < k - 1 ? size : n - size * (k - 1)));
      // As onnxruntime: with num_outputs, every chunk must be non-empty.
      if ((sizes[k - 1] as number) < (uneven ? 1 : 0)) ctx.bad(`dim ${a} of size ${n} cannot be split into ${k} chunks of ${size}`);
    } else if (!uneven) {
      sizes = new Array<Dim>(k).fill(symFloorDiv(n, k));
    } else {
      const size = symFloorDiv(symAdd(n, k - 1), k);
      sizes = Array.from({ length: k }, (_, i) => (i < k - 1 ? size : symSub(n, symMul(size, k - 1))));
    }
  }
  const node = ctx.call('aten.split_with_sizes.default', { self: x, split_sizes: sizes.map((d) => arg(ctx, d)), dim: a });
  return node.outputs;
});

// Slice ---------------------------------------------------------------------------------------------

defineOnnxOp('Slice', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  const starts = knownBounds(ctx, 1, 'starts');
  const ends = knownBounds(ctx, 2, 'ends');
  const axes = ctx.hasInput(3) ? ctx.staticInts(3, 'axes') : starts.map((_, i) => i);
  const steps = ctx.hasInput(4) ? ctx.staticInts(4, 'steps') : starts.map(() => 1);
  if (ends.length !== starts.length || axes.length !== starts.length || steps.length !== starts.length) {
    ctx.bad(`starts, ends, axes and steps must have one length (got ${starts.length}, ${ends.length}, ${axes.length}, ${steps.length})`);
  }
  const norm = axesOf(ctx, axes, rank);
  let t = x;
  norm.forEach((a, i) => {
    const step = steps[i]!;
    if (step === 0) ctx.bad('steps must not be 0');
    const start = arg(ctx, starts[i]!);
    const end = arg(ctx, ends[i]!);
    t =
      step > 0
        ? ctx.emit('aten.slice.Tensor', { self: t, dim: a, start, end, step })
        : ctx.emit('trt.slice_onnx', { self: t, dim: a, start, end, step });
  });
  return [t];
});

// Gathers and scatters ----------------------------------------------------------------------------

defineOnnxOp('Gather', (ctx) => {
  const data = ctx.input(0);
  const shape = data.tensorType.shape;
  if (shape.length === 0) ctx.bad('data must have at least 1 dim');
  const a = axisOf(ctx, ctx.attrInt('axis', 0), shape.length);
  const n = shape[a]!;
  const c = ctx.constant(1);
  if (c !== null && isInteger(c.dtype) && c.rank <= 1) {
    const values = c.toArray();
    if (isStatic(n)) {
      for (const v of values) if (v < -n || v >= n) ctx.bad(`index ${v} is out of range for axis ${a} of size ${n}`);
    }
    const normalized = isStatic(n) ? values.map((v) => (v < 0 ? v + n : v)) : values;
    if (c.rank === 0) return [ctx.emit('aten.select.int', { self: data, dim: a, index: normalized[0]! })];
    if (normalized.every((v) => v >= 0)) {
      // Along a symbolic axis the indices stay as the model wrote them (checked at run time):
      // as numbers, an int64 index past 2^53 (INT64_MAX, say) would be rounded out of int64.
      const exact = isStatic(n) || c.dtype !== 'int64' ? Tensor.from('int64', [normalized.length], normalized) : c.reshape([c.size]);
      const index = ctx.constantValue(exact, 'indices');
      return [ctx.emit('aten.index_select.default', { self: data, dim: a, index })];
    }
  }
  const indices = ctx.input(1);
  if (!isInteger(indices.tensorType.dtype)) ctx.bad(`indices must be int32 or int64, got ${indices.tensorType.dtype}`);
  return [ctx.emit('aten.index.Tensor', { self: data, indices: [...new Array<null>(a).fill(null), indices] })];
});

defineOnnxOp('GatherElements', (ctx) => {
  const data = ctx.input(0);
  const a = axisOf(ctx, ctx.attrInt('axis', 0), data.tensorType.shape.length);
  return [ctx.emit('aten.gather.default', { self: data, dim: a, index: ctx.input(1) })];
});

defineOnnxOp('GatherND', (ctx) => [
  ctx.emit('trt.gather_nd', { self: ctx.input(0), indices: ctx.input(1), batch_dims: ctx.attrInt('batch_dims', 0) }),
]);

/** The reduction attribute of ScatterND / ScatterElements, checked against the opset. */
function reductionOf(ctx: OnnxContext): string {
  const reduction = ctx.opset >= 16 ? ctx.attrString('reduction', 'none') : 'none';
  const allowed = ctx.opset >= 18 ? ['none', 'add', 'mul', 'max', 'min'] : ['none', 'add', 'mul'];
  if (!allowed.includes(reduction)) ctx.bad(`reduction "${reduction}" is not one of ${allowed.join(', ')} at opset ${ctx.opset}`);
  return reduction;
}

defineOnnxOp('ScatterND', (ctx) => [
  ctx.emit('trt.scatter_nd', { self: ctx.input(0), indices: ctx.input(1), updates: ctx.input(2), reduction: reductionOf(ctx) }),
]);

defineOnnxOp('ScatterElements', (ctx) => {
  const data = ctx.input(0);
  const a = axisOf(ctx, ctx.attrInt('axis', 0), data.tensorType.shape.length);
  const reduction = reductionOf(ctx);
  const args = { self: data, dim: a, index: ctx.input(1), src: ctx.input(2) };
  if (reduction === 'none') return [ctx.emit('aten.scatter.src', args)];
  if (reduction === 'add') return [ctx.emit('aten.scatter_add.default', args)];
  const reduce = { mul: 'prod', max: 'amax', min: 'amin' }[reduction]!;
  return [ctx.emit('aten.scatter_reduce.two', { ...args, reduce, include_self: true })];
});

// Expand, Tile ------------------------------------------------------------------------------------

defineOnnxOp('Expand', (ctx) => {
  // Bidirectional broadcast: the output is the broadcast of the input shape and `shape`.
  const x = ctx.input(0);
  const inShape = x.tensorType.shape;
  const target = knownDims(ctx, 1, 'shape');
  const rank = Math.max(inShape.length, target.length);
  const size: Array<number | Value> = [];
  for (let i = 0; i < rank; i++) {
    const d = i - (rank - inShape.length) >= 0 ? inShape[i - (rank - inShape.length)]! : undefined;
    const t = i - (rank - target.length) >= 0 ? target[i - (rank - target.length)]! : 1;
    if (d === undefined) {
      size.push(arg(ctx, t));
      continue;
    }
    if (t === 1 || dimEquals(t, d)) {
      size.push(-1);
      continue;
    }
    if (d === 1) {
      size.push(arg(ctx, t));
      continue;
    }
    if (isStatic(d) && isStatic(t)) ctx.bad(`shapes [${inShape.join(', ')}] and [${target.join(', ')}] cannot be broadcast together`);
    // A symbolic dim against another size: the broadcast is their max (they are equal or one is 1).
    size.push(isStatic(t) && !isStatic(d) ? arg(ctx, t) : isStatic(d) ? -1 : arg(ctx, symMax(d, t)));
  }
  return [ctx.emit('aten.expand.default', { self: x, size })];
});

defineOnnxOp('Tile', (ctx) => {
  const x = ctx.input(0);
  const repeats = knownDims(ctx, 1, 'repeats');
  if (repeats.length !== x.tensorType.shape.length) ctx.bad(`repeats has ${repeats.length} entries for a rank-${x.tensorType.shape.length} input`);
  return [ctx.emit('aten.repeat.default', { self: x, repeats: repeats.map((d) => arg(ctx, d)) })];
});

// Pad ----------------------------------------------------------------------------------------------

const PAD_MODE: Record<string, string> = { constant: 'constant', reflect: 'reflect', edge: 'replicate', wrap: 'circular' };

defineOnnxOp('Pad', (ctx) => {
  const x = ctx.input(0);
  const rank = x.tensorType.shape.length;
  const mode = ctx.attrString('mode', 'constant');
  if (PAD_MODE[mode] === undefined || (mode === 'wrap' && ctx.opset < 19)) {
    ctx.bad(`mode "${mode}" is not supported at opset ${ctx.opset} (constant, reflect, edge${ctx.opset >= 19 ? ', wrap' : ''})`);
  }
  const pads = knownDims(ctx, 1, 'pads');
  // constant_value (input 2) fills in constant mode only; reflect, edge and wrap ignore it, as the spec says.
  if (mode !== 'constant') ctx.ignoreInputs(2);
  const axes = ctx.opset >= 18 && ctx.hasInput(3) ? axesOf(ctx, ctx.staticInts(3, 'axes'), rank) : Array.from({ length: rank }, (_, i) => i);
  if (pads.length !== 2 * axes.length) ctx.bad(`pads has ${pads.length} entries; ${2 * axes.length} expected (begin and end per axis)`);
  // ONNX [b_0, .., b_k, e_0, .., e_k] per listed axis → torch's [b_last, e_last, b_last-1, ...].
  const begin = new Array<Dim>(rank).fill(0);
  const end = new Array<Dim>(rank).fill(0);
  axes.forEach((a, i) => {
    begin[a] = pads[i]!;
    end[a] = pads[axes.length + i]!;
  });
  let first = 0;
  while (first < rank && begin[first] === 0 && end[first] === 0) first++;
  const torchPad: Array<number | Value> = [];
  for (let a = rank - 1; a >= first; a--) torchPad.push(arg(ctx, begin[a]!), arg(ctx, end[a]!));
  if (mode === 'constant') {
    let value = 0;
    if (ctx.hasInput(2)) {
      const c = ctx.constant(2);
      if (c === null) return ctx.needsKnown('constant_value (input 2) must be a constant');
      if (c.size !== 1) ctx.bad(`constant_value must be a scalar, got shape [${c.shape.join(', ')}]`);
      value = c.toArray()[0]!;
    }
    return [ctx.emit('aten.constant_pad_nd.default', { self: x, pad: torchPad, value })];
  }
  if (torchPad.length === 0) return [x];
  return [ctx.emit('aten.pad.default', { self: x, pad: torchPad, mode: PAD_MODE[mode]! })];
});

// Filled tensors ---------------------------------------------------------------------------------------

defineOnnxOp('ConstantOfShape', (ctx) => {
  const shape = knownDims(ctx, 0, 'the shape');
  const value = ctx.attrTensor('value');
  if (value !== null && value.size !== 1) ctx.bad(`attribute value must hold one element, got shape [${value.shape.join(', ')}]`);
  const dtype: DType = value?.dtype ?? 'float32';
  const fill = value === null ? 0 : value.toArray()[0]!;
  return [ctx.emit('aten.full.default', { size: shape.map((d) => arg(ctx, d)), fill_value: dtype === 'bool' ? fill !== 0 : fill, dtype })];
});

defineOnnxOp('Range', (ctx) => {
  const dtype = ctx.inputType(0).dtype;
  const [start, limit, delta] = [0, 1, 2].map((i) => scalarInput(ctx, i, ['start', 'limit', 'delta'][i]!)) as [Dim, Dim, Dim];
  if (delta === 0) ctx.bad('delta must not be 0');
  return [ctx.emit('aten.arange.start_step', { start: arg(ctx, start), end: arg(ctx, limit), step: arg(ctx, delta), dtype })];
});

defineOnnxOp('Trilu', (ctx) => {
  const x = ctx.input(0);
  const upper = ctx.attrInt('upper', 1);
  let k = 0;
  if (ctx.hasInput(1)) {
    const v = ctx.staticInts(1, 'k');
    if (v.length !== 1) ctx.bad(`k must be a scalar, got ${v.length} values`);
    k = v[0]!;
  }
  return [ctx.emit(upper !== 0 ? 'aten.triu.default' : 'aten.tril.default', { self: x, diagonal: k })];
});

defineOnnxOp('OneHot', (ctx) => {
  const indices = ctx.input(0);
  let depth = scalarInput(ctx, 1, 'depth');
  if (isStatic(depth)) depth = Math.trunc(depth);
  if (isStatic(depth) && depth < 1) ctx.bad(`depth must be positive, got ${depth}`);
  const values = ctx.input(2);
  return [ctx.emit('trt.one_hot', { indices, depth: arg(ctx, depth), values, axis: ctx.attrInt('axis', -1) })];
});

// DepthToSpace / SpaceToDepth ----------------------------------------------------------------------------

function blocksize(ctx: OnnxContext, x: Value): number {
  if (x.tensorType.shape.length !== 4) ctx.bad(`input must be 4-D [N, C, H, W], got rank ${x.tensorType.shape.length}`);
  const b = ctx.attrInt('blocksize');
  if (b < 1) ctx.bad(`blocksize must be positive, got ${b}`);
  return b;
}

defineOnnxOp('DepthToSpace', (ctx) => {
  const x = ctx.input(0);
  const b = blocksize(ctx, x);
  const mode = ctx.attrString('mode', 'DCR');
  if (mode !== 'DCR' && mode !== 'CRD') ctx.bad(`mode must be DCR or CRD, got "${mode}"`);
  const c = x.tensorType.shape[1]!;
  if (isStatic(c) && c % (b * b) !== 0) ctx.bad(`channels ${c} are not divisible by blocksize² (${b * b})`);
  // DCR: [N, b, b, C', H, W] → [N, C', H, b, W, b]; CRD: [N, C', b, b, H, W] → same.
  const split = ctx.emit('aten.unflatten.int', { self: x, dim: 1, sizes: mode === 'DCR' ? [b, b, -1] : [-1, b, b] });
  const perm = mode === 'DCR' ? [0, 3, 4, 1, 5, 2] : [0, 1, 4, 2, 5, 3];
  const moved = ctx.emit('aten.permute.default', { self: split, dims: perm });
  const w = ctx.emit('aten.flatten.using_ints', { self: moved, start_dim: 4, end_dim: 5 });
  return [ctx.emit('aten.flatten.using_ints', { self: w, start_dim: 2, end_dim: 3 })];
});

defineOnnxOp('SpaceToDepth', (ctx) => {
  const x = ctx.input(0);
  const b = blocksize(ctx, x);
  const [, , h, w] = x.tensorType.shape as [Dim, Dim, Dim, Dim];
  if ((isStatic(h) && h % b !== 0) || (isStatic(w) && w % b !== 0)) ctx.bad(`spatial dims ${String(h)}, ${String(w)} are not divisible by blocksize ${b}`);
  // [N, C, H, W] → [N, C, H', b, W', b] → [N, b, b, C, H', W'] → [N, b*b*C, H', W']
  const sw = ctx.emit('aten.unflatten.int', { self: x, dim: 3, sizes: [-1, b] });
  const sh = ctx.emit('aten.unflatten.int', { self: sw, dim: 2, sizes: [-1, b] });
  const moved = ctx.emit('aten.permute.default', { self: sh, dims: [0, 3, 5, 1, 2, 4] });
  return [ctx.emit('aten.flatten.using_ints', { self: moved, start_dim: 1, end_dim: 3 })];
});
