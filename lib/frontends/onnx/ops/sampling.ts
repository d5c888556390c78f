/**
 * ONNX sampling ops composed of existing IR ops: GridSample (opset 16 up to the importer's MAX_OPSET, any spatial rank)
 * AffineGrid, Col2Im and DeformConv; and RoiAlign, one IR op of its own. GridSample follows ONNX's reference (onnx/reference/ops/op_grid_sample.py):
 * coordinates are denormalized, moved back inside the borders (border, reflection), and each
 * output pixel is a weighted sum of gathered input pixels, one gather per tap combination.
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { addS, bin, mulS, un } from './composed';

const where = (ctx: OnnxContext, condition: Value, self: Value, other: Value): Value => ctx.emit('aten.where.self', { condition, self, other });
const cmpS = (ctx: OnnxContext, op: string, self: Value, other: number): Value => ctx.emit(`aten.${op}.Scalar`, { self, other });
const clampS = (ctx: OnnxContext, self: Value, min: number, max: number): Value => ctx.emit('aten.clamp.default', { self, min, max });

/** Static dims of `v`, or E_UNSUPPORTED_OP naming `what`. */
export function staticShape(ctx: OnnxContext, v: Value, what: string): number[] {
  const shape = v.tensorType.shape;
  if (!shape.every(isStatic)) ctx.unsupported(`${what} must have a static shape`);
  return shape as number[];
}

/**
 * Reflects `x` into [lo, hi] as ONNX's reference does: by the near border, folding as many
 * times as it takes (the fold count's parity picks the border it ends near).
 */
function reflect(ctx: OnnxContext, x: Value, lo: number, hi: number): Value {
  const span = hi - lo;
  if (span <= 0) return addS(ctx, mulS(ctx, x, 0), lo);
  const fold = (dx: Value, near: number, far: number, sign: number): Value => {
    const n = un(ctx, 'floor', ctx.emit('aten.div.Scalar', { self: dx, other: span }));
    const r = bin(ctx, 'sub', dx, mulS(ctx, n, span));
    const even = cmpS(ctx, 'eq', ctx.emit('aten.remainder.Scalar', { self: n, other: 2 }), 0);
    return where(ctx, even, addS(ctx, mulS(ctx, r, sign), near), addS(ctx, mulS(ctx, r, -sign), far));
  };
  const below = fold(ctx.emit('aten.rsub.Scalar', { self: x, other: lo }), lo, hi, 1);
  const above = fold(addS(ctx, x, -hi), hi, lo, -1);
  return where(ctx, cmpS(ctx, 'lt', x, lo), below, where(ctx, cmpS(ctx, 'gt', x, hi), above, x));
}

function cubicCoefficients(ctx: OnnxContext, t: Value): Value[] {
  const a = -0.75;
  // |d| in [1, 2): a|d|³ − 5a|d|² + 8a|d| − 4a; |d| < 1: (a+2)|d|³ − (a+3)|d|² + 1.
  const far = (d: Value): Value => addS(ctx, bin(ctx, 'mul', addS(ctx, bin(ctx, 'mul', addS(ctx, mulS(ctx, d, a), -5 * a), d), 8 * a), d), -4 * a);
  const near = (d: Value): Value => addS(ctx, bin(ctx, 'mul', bin(ctx, 'mul', addS(ctx, mulS(ctx, d, a + 2), -(a + 3)), d), d), 1);
  const oneMinus = ctx.emit('aten.rsub.Scalar', { self: t, other: 1 });
  return [far(addS(ctx, t, 1)), near(t), near(oneMinus), far(addS(ctx, oneMinus, 1))];
}

interface Tap {
  /** Integer-valued source coordinate (float). */
  at: Value;
  weight: Value | null;
}

defineOnnxOp('GridSample', (ctx) => {
  const x = ctx.input(0);
  const grid = ctx.input(1);
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype) || !isFloating(grid.tensorType.dtype)) ctx.unsupported(`only floating-point inputs are supported, got ${dtype} and ${grid.tensorType.dtype}`);
  const xShape = staticShape(ctx, x, 'X');
  const gShape = staticShape(ctx, grid, 'grid');
  const r = xShape.length - 2;
  if (r < 1 || gShape.length !== r + 2 || gShape[0] !== xShape[0] || gShape[r + 1] !== r) {
    ctx.bad(`grid [${gShape.join(', ')}] must be [N, ...out, ${r}] for X [${xShape.join(', ')}]`);
  }
  const modeName = ctx.attrString('mode', ctx.opset >= 20 ? 'linear' : 'bilinear');
  const modes: Record<string, 'linear' | 'cubic' | 'nearest'> = { bilinear: 'linear', linear: 'linear', bicubic: 'cubic', cubic: 'cubic', nearest: 'nearest' };
  const mode = modes[modeName];
  if (mode === undefined) ctx.bad(`unknown mode ${JSON.stringify(modeName)}`);
  const padding = ctx.attrString('padding_mode', 'zeros');
  if (!['zeros', 'border', 'reflection'].includes(padding)) ctx.bad(`unknown padding_mode ${JSON.stringify(padding)}`);
  const align = ctx.attrInt('align_corners', 0) !== 0;
  const [n, c] = xShape as [number, number];
  const dims = xShape.slice(2);
  const outSpatial = gShape.slice(1, r + 1);
  const points = outSpatial.reduce((p, d) => p * d, 1);
  const g = ctx.cast(grid, dtype);

  // Per spatial dim i: the taps (source coordinates and weights) of every output point, [N, points].
  const tapsPerDim = dims.map((d, i): Tap[] => {
    const lo = align ? 0 : -0.5;
    const hi = align ? d - 1 : d - 0.5;
    // The grid lists coordinates innermost first (x, y, z): dim i is component r-1-i.
    const normalized = ctx.emit('aten.reshape.default', { self: ctx.emit('aten.select.int', { self: g, dim: -1, index: r - 1 - i }), shape: [n, points] });
    let v = align ? mulS(ctx, addS(ctx, normalized, 1), (d - 1) / 2) : addS(ctx, mulS(ctx, normalized, d / 2), (d - 1) / 2);
    if (mode === 'nearest') {
      // Half to even, as ONNX 1.16's reference rounds every rank (np.rint).
      v = un(ctx, 'round', v);
    }
    const outside = ctx.emit('aten.logical_or.default', { self: cmpS(ctx, 'lt', v, lo), other: cmpS(ctx, 'gt', v, hi) });
    if (padding === 'border') v = where(ctx, outside, clampS(ctx, v, 0, d - 1), v);
    if (padding === 'reflection') v = reflect(ctx, v, lo, hi);
    if (mode === 'nearest') return [{ at: v, weight: null }];
    const base = un(ctx, 'floor', v);
    const t = bin(ctx, 'sub', v, base);
    if (mode === 'linear') return [{ at: base, weight: ctx.emit('aten.rsub.Scalar', { self: t, other: 1 }) }, { at: addS(ctx, base, 1), weight: t }];
    return cubicCoefficients(ctx, t).map((w, k) => ({ at: addS(ctx, base, k - 1), weight: w }));
  });

  // A tap's gather index along dim i and its in-range mask (zeros padding only).
  const place = (tap: Tap, i: number): { index: Value; valid: Value | null } => {
    const d = dims[i]!;
    const lo = align ? 0 : -0.5;
    const hi = align ? d - 1 : d - 0.5;
    const at = padding === 'reflection' ? un(ctx, 'trunc', reflect(ctx, tap.at, lo, hi)) : tap.at;
    const valid = padding === 'zeros' ? ctx.emit('aten.logical_and.default', { self: cmpS(ctx, 'ge', at, 0), other: cmpS(ctx, 'le', at, d - 1) }) : null;
    return { index: ctx.cast(clampS(ctx, at, 0, d - 1), 'int64'), valid };
  };
  const placed = tapsPerDim.map((taps, i) => taps.map((tap) => ({ ...place(tap, i), weight: tap.weight })));

  const strides = dims.map((_, i) => dims.slice(i + 1).reduce((p, d) => p * d, 1));
  const flat = ctx.emit('aten.reshape.default', { self: x, shape: [n, c, dims.reduce((p, d) => p * d, 1)] });
  let sum: Value | null = null;
  const combine = (i: number, index: Value | null, weight: Value | null, valid: Value | null): void => {
    if (i === r) {
      const idx = ctx.emit('aten.expand.default', { self: ctx.emit('aten.unsqueeze.default', { self: index!, dim: 1 }), size: [n, c, points] });
      let picked = ctx.emit('aten.gather.default', { self: flat, dim: 2, index: idx });
      let w = weight;
      if (valid !== null) w = w === null ? ctx.cast(valid, dtype) : ctx.emit('aten.where.ScalarOther', { condition: valid, self: w, other: 0 });
      if (w !== null) picked = bin(ctx, 'mul', picked, ctx.emit('aten.unsqueeze.default', { self: w, dim: 1 }));
      sum = sum === null ? picked : bin(ctx, 'add', sum, picked);
      return;
    }
    for (const tap of placed[i]!) {
      const term = strides[i] === 1 ? tap.index : ctx.emit('aten.mul.Scalar', { self: tap.index, other: strides[i]! });
      const w = tap.weight === null ? weight : weight === null ? tap.weight : bin(ctx, 'mul', weight, tap.weight);
      const ok = tap.valid === null ? valid : valid === null ? tap.valid : ctx.emit('aten.logical_and.default', { self: valid, other: tap.valid });
      combine(i + 1, index === null ? term : bin(ctx, 'add', index, term), w, ok);
    }
  };
  combine(0, null, null, null);
  return [ctx.emit('aten.reshape.default', { self: sum!, shape: [n, c, ...outSpatial] })];
});

// grid[n, ..., :] = theta[n] · (x, y, [z,] 1) over the normalized output coordinates.
defineOnnxOp('AffineGrid', (ctx) => {
  const theta = ctx.input(0);
  const dtype = theta.tensorType.dtype;
  if (!isFloating(dtype)) ctx.bad(`theta must be floating point, got ${dtype}`);
  const size = ctx.staticInts(1, 'size');
  const r = size.length - 2;
  if (r !== 2 && r !== 3) ctx.bad(`size [${size.join(', ')}] must be [N, C, H, W] or [N, C, D, H, W]`);
  const align = ctx.attrInt('align_corners', 0) !== 0;
  const spatial = size.slice(2);
  // Coordinates per dim, innermost (x) first in each row.
  const axis = (d: number): number[] => Array.from({ length: d }, (_, i) => (align ? (d === 1 ? -1 : -1 + (2 * i) / (d - 1)) : (2 * i + 1) / d - 1));
  const points = spatial.reduce((p, d) => p * d, 1);
  const rows: number[] = [];
  for (let p = 0; p < points; p++) {
    let rest = p;
    const coord = new Array<number>(r);
    for (let i = r - 1; i >= 0; i--) {
      coord[i] = axis(spatial[i]!)[rest % spatial[i]!]!;
      rest = Math.floor(rest / spatial[i]!);
    }
    rows.push(...coord.reverse(), 1);
  }
  const base = ctx.constantValue(Tensor.from(dtype, [points, r + 1], rows), 'base_grid');
  const out = ctx.emit('aten.matmul.default', { self: base, other: ctx.emit('aten.transpose.int', { self: theta, dim0: 1, dim1: 2 }) });
  return [ctx.emit('aten.reshape.default', { self: out, shape: [size[0]!, ...spatial, r] })];
});

// Col2Im sums each column's block back into the image: a grouped transposed convolution
// whose kernel puts block position j of channel c's column at position j (one-hot), then the
// pads cropped off.
defineOnnxOp('Col2Im', (ctx) => {
  const x = ctx.input(0);
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.unsupported(`only floating-point inputs are supported, got ${dtype}`);
  const image = ctx.staticInts(1, 'image_shape');
  const block = ctx.staticInts(2, 'block_shape');
  const r = image.length;
  if (block.length !== r || r < 1 || r > 3) ctx.unsupported(`image_shape [${image.join(', ')}] and block_shape [${block.join(', ')}] must both have 1 to 3 dims`);
  const dilations = ctx.attrInts('dilations', new Array<number>(r).fill(1));
  const strides = ctx.attrInts('strides', new Array<number>(r).fill(1));
  const pads = ctx.attrInts('pads', new Array<number>(2 * r).fill(0));
  if (dilations.length !== r || strides.length !== r || pads.length !== 2 * r) ctx.bad(`dilations, strides and pads must have ${r}, ${r} and ${2 * r} values`);
  const [n, ck, l] = staticShape(ctx, x, 'input') as [number, number, number];
  const k = block.reduce((p, d) => p * d, 1);
  if (x.tensorType.shape.length !== 3 || ck % k !== 0) ctx.bad(`input [${x.tensorType.shape.join(', ')}] must be [N, C * ${k}, L]`);
  const c = ck / k;
  const blocks = image.map((d, i) => Math.floor((d + pads[i]! + pads[r + i]! - dilations[i]! * (block[i]! - 1) - 1) / strides[i]!) + 1);
  if (blocks.some((b) => b < 1) || blocks.reduce((p, b) => p * b, 1) !== l) ctx.bad(`L = ${l} does not match the ${blocks.join(' x ')} blocks of the padded image`);
  const weight = new Array<number>(ck * k).fill(0);
  for (let ch = 0; ch < ck; ch++) weight[ch * k + (ch % k)] = 1;
  const columns = ctx.emit('aten.reshape.default', { self: x, shape: [n, ck, ...blocks] });
  let out = ctx.emit('aten.convolution.default', {
    input: columns,
    weight: ctx.constantValue(Tensor.from(dtype, [ck, 1, ...block], weight), 'one_hot'),
    bias: null,
    stride: strides,
    padding: new Array<number>(r).fill(0),
    dilation: dilations,
    transposed: true,
    // The pixels past the last whole block (fewer than a stride) get no column: zeros.
    output_padding: image.map((d, i) => d + pads[i]! + pads[r + i]! - ((blocks[i]! - 1) * strides[i]! + dilations[i]! * (block[i]! - 1) + 1)),
    groups: c,
  });
  image.forEach((d, i) => {
    if (pads[i] !== 0 || pads[r + i] !== 0) out = ctx.emit('aten.slice.Tensor', { self: out, dim: 2 + i, start: pads[i]!, end: pads[i]! + d, step: 1 });
  });
  return [out];
});

/**
 * RoiAlign (opsets 10, 16, 22) as one trt.roi_align node: how many samples a bin takes may
 * depend on the regions' coordinates (sampling_ratio 0), which no composition of fixed-shape
 * ops expresses. Opset 10 has no coordinate_transformation_mode: its regions are unshifted
 * (output_half_pixel); opset 16 added the attribute, defaulting to half_pixel.
 */
defineOnnxOp('RoiAlign', (ctx) => {
  const modes: Record<string, boolean> = { half_pixel: true, output_half_pixel: false };
  const transform = ctx.opset >= 16 ? ctx.attrString('coordinate_transformation_mode', 'half_pixel') : 'output_half_pixel';
  const halfPixel = modes[transform];
  if (halfPixel === undefined) ctx.bad(`coordinate_transformation_mode must be "half_pixel" or "output_half_pixel", got ${JSON.stringify(transform)}`);
  const mode = ctx.attrString('mode', 'avg');
  if (mode !== 'avg' && mode !== 'max') ctx.bad(`mode must be "avg" or "max", got ${JSON.stringify(mode)}`);
  const outputHeight = ctx.attrInt('output_height', 1);
  const outputWidth = ctx.attrInt('output_width', 1);
  if (outputHeight < 1 || outputWidth < 1) ctx.bad(`output_height and output_width must be at least 1, got ${outputHeight} and ${outputWidth}`);
  const samplingRatio = ctx.attrInt('sampling_ratio', 0);
  if (samplingRatio < 0) ctx.bad(`sampling_ratio must be 0 (adaptive) or positive, got ${samplingRatio}`);
  const spatialScale = ctx.attrFloat('spatial_scale', 1);
  if (!Number.isFinite(spatialScale)) ctx.bad(`spatial_scale must be finite, got ${spatialScale}`);
  return [
    ctx.emit('trt.roi_align', {
      self: ctx.input(0),
      rois: ctx.input(1),
      batch_indices: ctx.input(2),
      mode,
      output_height: outputHeight,
      output_width: outputWidth,
      sampling_ratio: samplingRatio,
      spatial_scale: spatialScale,
      half_pixel: halfPixel!,
    }),
  ];
});

/**
 * DeformConv (opsets 19 and 22), 2-D as ONNX's reference computes it
 * (onnx/reference/ops/op_deform_conv.py): each kernel tap of each output position samples the
 * input at its regular place plus a learned offset, bilinearly, with taps outside the image
 * reading 0 (GridSample with align_corners and zeros padding), times the optional mask; the
 * samples are then multiplied by the weights as the columns of a grouped convolution. Offsets
 * and masks come per offset group: offset [N, offset_group·kH·kW·2, oH, oW] holds (dy, dx) per
 * tap, mask [N, offset_group·kH·kW, oH, oW] one factor per tap. 16-bit inputs are sampled and
 * multiplied in float32 (the reference computes in float64) and rounded once.
 */
defineOnnxOp('DeformConv', (ctx) => {
  const x = ctx.input(0);
  const w = ctx.input(1);
  const offset = ctx.input(2);
  const bias = ctx.optInput(3);
  const mask = ctx.optInput(4);
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.bad(`X must be floating point, got ${dtype}`);
  for (const [name, v] of [['W', w], ['offset', offset], ['B', bias], ['mask', mask]] as const) {
    if (v !== null && v.tensorType.dtype !== dtype) ctx.bad(`${name} is ${v.tensorType.dtype} but X is ${dtype}; they must have the same type`);
  }
  const xShape = staticShape(ctx, x, 'X');
  if (xShape.length !== 4) ctx.unsupported(`only 2-D deformable convolution (X [N, C, H, W]) is supported, got X [${xShape.join(', ')}]`);
  const wShape = staticShape(ctx, w, 'W');
  if (wShape.length !== 4) ctx.bad(`W [${wShape.join(', ')}] must be [M, C / group, kH, kW]`);
  const [n, c, height, width] = xShape as [number, number, number, number];
  const [oc, perGroup, kh, kw] = wShape as [number, number, number, number];
  const kernel = ctx.attrInts('kernel_shape', [kh, kw]);
  if (kernel.length !== 2 || kernel[0] !== kh || kernel[1] !== kw) ctx.bad(`kernel_shape [${kernel.join(', ')}] differs from W's kernel [${kh}, ${kw}]`);
  const group = ctx.attrInt('group', 1);
  const offsetGroup = ctx.attrInt('offset_group', 1);
  if (group < 1 || perGroup * group !== c || oc % group !== 0) ctx.bad(`group ${group} does not split X's ${c} channels into W's ${perGroup} per group and W's ${oc} output channels`);
  if (offsetGroup < 1 || c % offsetGroup !== 0) ctx.bad(`offset_group ${offsetGroup} does not divide X's ${c} channels`);
  const dilations = ctx.attrInts('dilations', [1, 1]);
  const strides = ctx.attrInts('strides', [1, 1]);
  const pads = ctx.attrInts('pads', [0, 0, 0, 0]);
  if (dilations.length !== 2 || strides.length !== 2 || pads.length !== 4) ctx.bad('dilations, strides and pads must have 2, 2 and 4 values');
  if (dilations.some((d) => d < 1) || strides.some((s) => s < 1) || pads.some((p) => p < 0)) ctx.bad(`dilations [${dilations.join(', ')}] and strides [${strides.join(', ')}] must be positive, pads [${pads.join(', ')}] not negative`);
  const [dh, dw] = dilations as [number, number];
  const [sh, sw] = strides as [number, number];
  const outH = Math.floor((height + pads[0]! + pads[2]! - ((kh - 1) * dh + 1)) / sh) + 1;
  const outW = Math.floor((width + pads[1]! + pads[3]! - ((kw - 1) * dw + 1)) / sw) + 1;
  if (outH < 1 || outW < 1) ctx.bad(`the ${kh}x${kw} kernel (dilations [${dilations.join(', ')}]) does not fit X [${xShape.join(', ')}] with pads [${pads.join(', ')}]`);
  const taps = kh * kw;
  const expectShape = (v: Value, name: string, expected: number[]): void => {
    const s = staticShape(ctx, v, name);
    if (s.length !== expected.length || s.some((d, i) => d !== expected[i])) ctx.bad(`${name} [${s.join(', ')}] must be [${expected.join(', ')}]`);
  };
  expectShape(offset, 'offset', [n, offsetGroup * taps * 2, outH, outW]);
  if (mask !== null) expectShape(mask, 'mask', [n, offsetGroup * taps, outH, outW]);
  if (bias !== null) expectShape(bias, 'B', [oc]);

  const compute = dtype === 'float64' ? 'float64' : 'float32';
  const reshape = (self: Value, shape: number[]): Value => ctx.emit('aten.reshape.default', { self, shape });
  const points = outH * outW;
  const perOffsetGroup = c / offsetGroup;
  // Where tap k of output position l sits before its offset: rows (axis 0) or columns (axis 1).
  const offsets = reshape(ctx.cast(offset, compute), [n, offsetGroup, taps, 2, points]);
  const coordinate = (axis: 0 | 1): Value => {
    const base = new Array<number>(taps * points);
    for (let k = 0; k < taps; k++) {
      for (let l = 0; l < points; l++) {
        base[k * points + l] = axis === 0 ? -pads[0]! + sh * Math.floor(l / outW) + dh * Math.floor(k / kw) : -pads[1]! + sw * (l % outW) + dw * (k % kw);
      }
    }
    const at = ctx.constantValue(Tensor.from(compute, [taps, points], base), axis === 0 ? 'tap_rows' : 'tap_cols');
    return bin(ctx, 'add', ctx.emit('aten.select.int', { self: offsets, dim: 3, index: axis }), at);
  };
  const y = coordinate(0);
  const xc = coordinate(1);
  const y0 = un(ctx, 'floor', y);
  const x0 = un(ctx, 'floor', xc);
  const ty = bin(ctx, 'sub', y, y0);
  const tx = bin(ctx, 'sub', xc, x0);
  const modulation = mask === null ? null : reshape(ctx.cast(mask, compute), [n, offsetGroup, taps, points]);
  const image = reshape(ctx.cast(x, compute), [n, offsetGroup, perOffsetGroup, height * width]);
  const inRange = (v: Value, size: number): Value => ctx.emit('aten.logical_and.default', { self: cmpS(ctx, 'ge', v, 0), other: cmpS(ctx, 'le', v, size - 1) });
  let sampled: Value | null = null;
  for (const dy of [0, 1]) {
    for (const dx of [0, 1]) {
      const row = dy === 0 ? y0 : addS(ctx, y0, 1);
      const col = dx === 0 ? x0 : addS(ctx, x0, 1);
      const wy = dy === 0 ? ctx.emit('aten.rsub.Scalar', { self: ty, other: 1 }) : ty;
      const wx = dx === 0 ? ctx.emit('aten.rsub.Scalar', { self: tx, other: 1 }) : tx;
      const valid = ctx.emit('aten.logical_and.default', { self: inRange(row, height), other: inRange(col, width) });
      let weight = ctx.emit('aten.where.ScalarOther', { condition: valid, self: bin(ctx, 'mul', wy, wx), other: 0 });
      if (modulation !== null) weight = bin(ctx, 'mul', weight, modulation);
      const flatIndex = bin(ctx, 'add', mulS(ctx, clampS(ctx, row, 0, height - 1), width), clampS(ctx, col, 0, width - 1));
      const index = ctx.emit('aten.expand.default', { self: reshape(ctx.cast(flatIndex, 'int64'), [n, offsetGroup, 1, taps * points]), size: [n, offsetGroup, perOffsetGroup, taps * points] });
      const term = bin(ctx, 'mul', ctx.emit('aten.gather.default', { self: image, dim: 3, index }), reshape(weight, [n, offsetGroup, 1, taps * points]));
      sampled = sampled === null ? term : bin(ctx, 'add', sampled, term);
    }
  }
  // The sampled columns [N, C, kH·kW, L] by convolution group, times W as [group, M / group, C / group · kH·kW].
  const columns = reshape(sampled!, [n, group, perGroup * taps, points]);
  const weights = reshape(ctx.cast(w, compute), [group, oc / group, perGroup * taps]);
  let out = reshape(ctx.emit('aten.matmul.default', { self: weights, other: columns }), [n, oc, outH, outW]);
  if (bias !== null) out = bin(ctx, 'add', out, reshape(ctx.cast(bias, compute), [1, oc, 1, 1]));
  return [ctx.cast(out, dtype)];
});
