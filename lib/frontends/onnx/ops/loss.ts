/**
 * ONNX's loss ops, computed for inference (a loss value from given scores and labels):
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, composed of gather, where and
 * reductions. Their gradients are not computed (training ops such as Adam stay refused).
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

const REDUCTIONS = ['none', 'sum', 'mean'];

/**
 * -input[n, target[n, ...], ...] weighted by weight[target] (0 where target is ignore_index),
 * reduced as ONNX's reference does: `mean` divides by the sum of the weights applied.
 */
function nllLoss(ctx: OnnxContext, input: Value, targetIndex: number, weightIndex: number): Value {
  const reduction = ctx.attrString('reduction', 'mean');
  if (!REDUCTIONS.includes(reduction)) ctx.bad(`reduction ${JSON.stringify(reduction)} is not one of ${REDUCTIONS.join(', ')}`);
  const rank = input.tensorType.shape.length;
  if (rank < 2) ctx.bad(`the input must be [N, C, d1...], got rank ${rank}`);
  if (!isFloating(input.tensorType.dtype)) ctx.bad(`the input must be floating point, got ${input.tensorType.dtype}`);
  const rawTarget = ctx.input(targetIndex);
  if (rawTarget.tensorType.shape.length !== rank - 1) ctx.bad(`the target must have rank ${rank - 1}, got ${rawTarget.tensorType.shape.length}`);
  let target = rawTarget.tensorType.dtype === 'int64' ? rawTarget : ctx.cast(rawTarget, 'int64');
  const ignore = ctx.has('ignore_index') ? ctx.attrInt('ignore_index') : null;
  const ignored = ignore === null ? null : ctx.emit('aten.eq.Scalar', { self: target, other: ignore });
  // An ignored target may be out of [0, C): gather class 0 there and zero its weight.
  if (ignored !== null) target = ctx.emit('aten.where.ScalarSelf', { condition: ignored, self: 0, other: target });
  const picked = ctx.emit('aten.gather.default', { self: input, dim: 1, index: ctx.emit('aten.unsqueeze.default', { self: target, dim: 1 }) });
  let loss = ctx.emit('aten.neg.default', { self: ctx.emit('aten.squeeze.dims', { self: picked, dim: [1] }) });
  let weights: Value | null = null;
  if (ctx.hasInput(weightIndex)) {
    const w = ctx.input(weightIndex);
    if (w.tensorType.shape.length !== 1) ctx.bad(`the weight must be 1-D [C], got rank ${w.tensorType.shape.length}`);
    weights = ctx.emit('aten.index.Tensor', { self: w, indices: [target] });
  }
  if (ignored !== null) {
    weights =
      weights === null
        ? ctx.emit('aten.where.Scalar', { condition: ignored, self: 0, other: 1 })
        : ctx.emit('aten.where.ScalarSelf', { condition: ignored, self: 0, other: weights });
    if (weights.tensorType.dtype !== loss.tensorType.dtype) weights = ctx.cast(weights, loss.tensorType.dtype);
  }
  if (weights !== null) loss = ctx.emit('aten.mul.Tensor', { self: loss, other: weights });
  if (reduction === 'none') return loss;
  const total = ctx.emit('aten.sum.default', { self: loss });
  if (reduction === 'sum') return total;
  if (weights === null) return ctx.emit('aten.mean.default', { self: loss });
  return ctx.emit('aten.div.Tensor', { self: total, other: ctx.emit('aten.sum.default', { self: weights }) });
}

defineOnnxOp('NegativeLogLikelihoodLoss', (ctx) => [nllLoss(ctx, ctx.input(0), 1, 2)]);

defineOnnxOp('SoftmaxCrossEntropyLoss', (ctx) => {
  const logProb = ctx.emit('aten._log_softmax.default', { self: ctx.input(0), dim: 1, half_to_float: false });
  return [nllLoss(ctx, logProb, 1, 2), logProb];
});
