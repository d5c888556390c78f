/**
 * Converters of the ops whose output size only a run tells (lib/ir/ops/data-dependent.ts).
 * `trt.nonzero` becomes TensorRT's nonzero layer, whose count is a run-time (-1) dim of the
 * Network: the converter declares `dataDependent`, and compile() puts the node in an engine
 * segment only on a backend whose engines hold such sizes (SelectionSettings.dataDependentSizes).
 * `trt.compress` is a nonzero of its condition and a gather of those positions;
 * `trt.non_max_suppression` is an nms layer (ONNX's rows; the tensorrt backend refuses it, see
 * Backend.refusedLayers); a bool-mask aten.index.Tensor (`x[mask]` from .pt2) and
 * aten.masked_select are a nonzero of the flattened mask and a gather of those positions.
 * `trt.unique` is a unique layer (ONNX's four outputs), which the CPU backends compute and the
 * tensorrt and cuda backends refuse (TensorRT has no such layer; cuda plans buffers before a
 * run), leaving the node to a fallback segment there.
 */
import type { Node } from '../../ir/graph';
import type { NetTensor } from '../../network';
import type { ConversionContext } from '../context';
import { num, optNum, optValues, value } from '../impl/args';
import { axisOf, elementwise, reshape } from '../impl/basic';
import { expandTo } from '../impl/shape';
import { defineConverter } from '../define';
import { NONZERO_TYPES } from '../../network/shape-inference';

/**
 * trt.nonzero: one nonzero layer. TensorRT's takes float32, float16, int32 and bool; other
 * types become one of those without changing which elements are zero: bfloat16 → float32 and
 * int8 / uint8 → int32 are exact casts, int64 goes through a comparison with 0 (a cast to
 * int32 would wrap 2^32 to 0). It reads the input's rank only, so run-time input dims are fine.
 */
defineConverter(
  'trt.nonzero',
  (node, ctx) => {
    const self = value(node, 'self');
    let x = ctx.tensor(self);
    if (x.dtype === 'bfloat16') x = ctx.add({ kind: 'cast', to: 'float32' }, [x], 'as_float32');
    else if (x.dtype === 'int8' || x.dtype === 'uint8') x = ctx.add({ kind: 'cast', to: 'int32' }, [x], 'as_int32');
    else if (!NONZERO_TYPES.includes(x.dtype)) {
      const zero = elementwise(ctx, x, ctx.scalar(0, x.dtype, x.shape.length, 'zero'), 'equal', x.dtype, 'is_zero');
      x = ctx.add({ kind: 'unary', op: 'not' }, [zero], 'is_nonzero');
    }
    return [ctx.add({ kind: 'nonzero' }, [x])];
  },
  {
    shapes: 'any',
    dataDependent: true,
    checks: [
      // A 0-d input: the IR (and TensorRT) give [0, N], ONNX Runtime and NumPy [1, N]; the interpreter keeps the IR's meaning.
      (node) => (value(node, 'self').tensorType.shape.length === 0 ? 'a 0-d input runs in the interpreter (its index rows are the IR\'s own: none)' : null),
    ],
  },
);

/**
 * trt.compress (ONNX Compress with a computed condition): the positions of the true elements
 * of the 1-D condition (a nonzero layer, [1, N], flattened to [N]) gathered along `axis` of
 * self, or of self flattened when there is none: TensorRT's own recipe (NvInfer.h, INonZeroLayer).
 * A condition shorter than the axis selects among its first slices only; a true element past
 * the axis is an index out of range, refused at run time as every gather's.
 */
defineConverter(
  'trt.compress',
  (node, ctx) => {
    const self = value(node, 'self');
    const axis = optNum(node, 'axis');
    const x = axis === null ? reshape(ctx, ctx.tensor(self), [-1], 'flat') : ctx.tensor(self);
    const a = axis === null ? 0 : axisOf(ctx, axis, x.shape.length);
    const positions = ctx.add({ kind: 'nonzero' }, [ctx.tensor(value(node, 'condition'))], 'positions');
    const index = reshape(ctx, positions, [-1], 'indices');
    return [ctx.add({ kind: 'gather', mode: 'default', axis: a }, [x, index])];
  },
  { shapes: 'any', dataDependent: true },
);

/**
 * trt.non_max_suppression (ONNX NonMaxSuppression with constant limits): one nms layer, whose
 * row count is a run-time (-1) dim as a nonzero's. The layer takes float32 or float16 boxes and
 * scores; bfloat16 ones are cast to float32 (exact). A backend that refuses nms layers (the
 * tensorrt one: its INMSLayer lists other rows) leaves the node to a fallback segment.
 */
defineConverter(
  'trt.non_max_suppression',
  (node, ctx) => {
    const input = (name: string): ReturnType<typeof ctx.tensor> => {
      const t = ctx.tensor(value(node, name));
      return t.dtype === 'bfloat16' ? ctx.add({ kind: 'cast', to: 'float32' }, [t], `${name}_float32`) : t;
    };
    const scoreThreshold = optNum(node, 'score_threshold');
    const params = {
      kind: 'nms' as const,
      maxOutputBoxesPerClass: num(node, 'max_output_boxes_per_class'),
      iouThreshold: num(node, 'iou_threshold'),
      centerPointBox: node.args.center_point_box === true,
      ...(scoreThreshold === null ? {} : { scoreThreshold }),
    };
    return [ctx.add(params, [input('boxes'), input('scores')])];
  },
  {
    shapes: 'any',
    dataDependent: true,
    checks: [(_node: Node, settings) => (settings.refusedLayers?.nms === undefined ? null : `this backend refuses nms layers: ${settings.refusedLayers.nms}`)],
  },
);

/**
 * The elements (or slices) of `x` where `mask` is true, the mask covering dims [d, d + rank(mask))
 * of x: those dims flattened into one, the mask flattened alike, a nonzero of it ([1, N]) as
 * the positions, and a gather of them along d: [...x.shape[:d], N, ...x.shape[d + rank(mask):]].
 * The reshapes need x's other dims static (checked by the converters below).
 */
function gatherMasked(ctx: ConversionContext, x: NetTensor, mask: NetTensor, d: number): NetTensor {
  const k = mask.shape.length;
  const flat = k === 1 ? x : reshape(ctx, x, [...x.shape.slice(0, d), -1, ...x.shape.slice(d + k)], 'flat');
  const positions = ctx.add({ kind: 'nonzero' }, [k === 1 ? mask : reshape(ctx, mask, [-1], 'flat_mask')], 'positions');
  return ctx.add({ kind: 'gather', mode: 'default', axis: d }, [flat, reshape(ctx, positions, [-1], 'indices')]);
}

/** Where x[mask]'s one bool mask index sits, or null when the node indexes otherwise. */
function maskPosition(node: Node): number | null {
  const indices = optValues(node, 'indices');
  const given = indices.flatMap((v, d) => (v === null ? [] : [d]));
  return given.length === 1 && indices[given[0]!]!.tensorType.dtype === 'bool' ? given[0]! : null;
}

/**
 * aten.index.Tensor with a bool mask as its one index tensor (`x[mask]`, `x[:, mask]`): a
 * nonzero of the mask and a gather (gatherMasked). Other index forms have their converters in
 * ./shape.ts and ./dynamic.ts; a mask with other index tensors never gets this far (its shape
 * rule refuses it).
 */
defineConverter(
  'aten.index.Tensor',
  (node, ctx) => {
    const d = maskPosition(node)!;
    return [gatherMasked(ctx, ctx.tensor(value(node, 'self')), ctx.tensor(optValues(node, 'indices')[d]!), d)];
  },
  {
    shapes: 'any',
    dataDependent: true,
    name: 'aten.index.Tensor (bool mask)',
    checks: [
      (node) => (maskPosition(node) === null ? 'no bool mask index' : null),
      (node) => {
        const d = maskPosition(node)!;
        const self = value(node, 'self').tensorType.shape;
        const k = optValues(node, 'indices')[d]!.tensorType.shape.length;
        const others = [...self.slice(0, d), ...self.slice(d + k)];
        return others.every((s) => typeof s === 'number') ? null : `self's dims outside the mask must be static, got ${others.length} with a symbolic one`;
      },
    ],
  },
);

/**
 * aten.masked_select: self and the mask broadcast to their common (static) shape, then the
 * elements where the mask is true, as a 1-D nonzero + gather of both flattened.
 */
defineConverter(
  'aten.masked_select.default',
  (node, ctx) => {
    const shape = broadcastStatic(node)!;
    const self = ctx.tensor(value(node, 'self'));
    const mask = ctx.tensor(value(node, 'mask'));
    const fit = (t: NetTensor, role: string): NetTensor => (t.shape.length === shape.length && t.shape.every((s, i) => s === shape[i]) ? t : expandTo(ctx, t, shape, role));
    return [gatherMasked(ctx, reshape(ctx, fit(self, 'expand_self'), [-1], 'flat_self'), reshape(ctx, fit(mask, 'expand_mask'), [-1], 'flat_mask_all'), 0)];
  },
  {
    shapes: 'any',
    dataDependent: true,
    checks: [(node) => (broadcastStatic(node) === null ? 'self and mask must have static shapes' : null)],
  },
);

/** The broadcast shape of masked_select's self and mask when both are static, else null. */
function broadcastStatic(node: Node): number[] | null {
  const a = value(node, 'self').tensorType.shape;
  const b = value(node, 'mask').tensorType.shape;
  if (![...a, ...b].every((d) => typeof d === 'number')) return null;
  const rank = Math.max(a.length, b.length);
  return Array.from({ length: rank }, (_, i) => {
    const x = (a[i - rank + a.length] ?? 1) as number;
    const y = (b[i - rank + b.length] ?? 1) as number;
    return x === 1 ? y : x;
  });
}

/** The element types the unique layer takes (lib/network/shape-inference.ts). */
const UNIQUE_TYPES: readonly string[] = ['bool', 'float32', 'float16', 'bfloat16', 'int8', 'int32', 'int64', 'uint8'];

/** trt.unique (ONNX Unique): one unique layer; its count is a run-time (-1) dim of the Network, as a nonzero's. */
defineConverter(
  'trt.unique',
  (node, ctx) => {
    const x = ctx.tensor(value(node, 'self'));
    const axis = optNum(node, 'axis');
    const params = { kind: 'unique' as const, sorted: node.args.sorted === true, ...(axis === null ? {} : { axis: axisOf(ctx, axis, x.shape.length) }) };
    return ctx.network.add(params, [x], ctx.name('unique'));
  },
  {
    shapes: 'any',
    dataDependent: true,
    checks: [
      (node) => (UNIQUE_TYPES.includes(value(node, 'self').tensorType.dtype) ? null : `the unique layer takes ${UNIQUE_TYPES.join(', ')}, not ${value(node, 'self').tensorType.dtype}`),
      (_node: Node, settings) => (settings.refusedLayers?.unique === undefined ? null : `this backend refuses unique layers: ${settings.refusedLayers.unique}`),
    ],
  },
);
