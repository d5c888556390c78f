/**
 * Interpreter implementations of lib/ir/ops/data-dependent.ts. The size each returns binds
 * the node's data-dependent symbol (interpret() binds a symbol an output first shows).
 */
import type { Tensor } from '../../ir/tensor';
import { compress, nonMaxSuppression, nonzero, unique } from '../../kernels/data-dependent';
import { defineImpl } from '../registry';

const optInt = (a: unknown): number | null => (a === null || a === undefined ? null : (a as number));

defineImpl('trt.nonzero', (a) => [nonzero(a.self as Tensor)]);
defineImpl('trt.compress', (a) => [compress(a.self as Tensor, a.condition as Tensor, optInt(a.axis))]);
defineImpl('trt.unique', (a) => {
  const r = unique(a.self as Tensor, optInt(a.axis), a.sorted as boolean);
  return [r.values, r.indices, r.inverse, r.counts];
});
defineImpl('trt.non_max_suppression', (a) => [
  nonMaxSuppression(a.boxes as Tensor, a.scores as Tensor, {
    maxPerClass: a.max_output_boxes_per_class as number,
    iouThreshold: a.iou_threshold as number,
    scoreThreshold: a.score_threshold === null || a.score_threshold === undefined ? null : (a.score_threshold as number),
    centerPointBox: a.center_point_box as boolean,
  }),
]);
