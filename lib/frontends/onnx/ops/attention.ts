/**
 * ONNX's attention-block ops composed of IR ops: Attention (opsets 23 and 24), RotaryEmbedding
 * (23), TensorScatter (24: the KV cache update), SwiGLU (28) and FlexAttention (ai.onnx.preview 1).
 *
 * Attention follows ONNX's reference: Q, K, V
 * as [B, H, S, D] (3-D inputs [B, S, H·D] split by q_num_heads / kv_num_heads); the KV cache
 * (past_key / past_value joined before the new keys and values: present_key / present_value);
 * both Q and K scaled by √scale (scale defaults to 1/√D); grouped kv heads repeated in place
 * (h0, h0, h1, h1...); softcap·tanh(scores/softcap) when softcap > 0; then the bias: a bool
 * mask (false → −inf) or a float one, padded with −inf up to the keys' length, and with
 * is_causal key j > query i + past length masked; the softmax, in softmax_precision when
 * given (a row masked entirely gets probabilities 0, not NaN); times V. qk_matmul_output
 * (output 3) is the scores after softcap (mode 0 and 1), with the bias (2), or the softmax (3).
 * nonpad_kv_seqlen (opset 24: an external cache of B valid lengths) masks each batch's keys
 * from its length on, and without past_key shifts the causal frontier to key j <= query i +
 * length - the query length.
 */
import { dtypeFromOnnx } from '../tensor-proto';
import { isFloating, type DType } from '../../../ir/dtype';
import { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';
import { wantsOutput } from './nn';

/** A static dim of `v`, or the node refused (the composition builds constants of these sizes). */
function staticDim(ctx: OnnxContext, v: Value, axis: number, what: string): number {
  const d = v.tensorType.shape[axis];
  if (typeof d !== 'number') return ctx.unsupported(`${what} must be static`);
  return d;
}

/** [B, S, H·D] → [B, H, S, D]. */
function splitHeads(ctx: OnnxContext, x: Value, heads: number, what: string): Value {
  const [b, s] = x.tensorType.shape;
  const width = staticDim(ctx, x, 2, `${what}'s hidden size`);
  if (width % heads !== 0) ctx.bad(`${what}'s hidden size ${width} does not split into ${heads} heads`);
  const split = ctx.emit('aten.reshape.default', { self: x, shape: [ctx.dimArg(b!), ctx.dimArg(s!), heads, width / heads] });
  return ctx.emit('aten.permute.default', { self: split, dims: [0, 2, 1, 3] });
}

/** [B, Hkv, S, D] with each head repeated `times` in place → [B, Hkv·times, S, D]. */
function repeatHeads(ctx: OnnxContext, x: Value, times: number): Value {
  if (times === 1) return x;
  const [b, h, s, d] = x.tensorType.shape;
  const expanded = ctx.emit('aten.expand.default', { self: ctx.emit('aten.unsqueeze.default', { self: x, dim: 2 }), size: [ctx.dimArg(b!), ctx.dimArg(h!), times, ctx.dimArg(s!), ctx.dimArg(d!)] });
  return ctx.emit('aten.reshape.default', { self: expanded, shape: [ctx.dimArg(b!), (h as number) * times, ctx.dimArg(s!), ctx.dimArg(d!)] });
}

/** The additive bias of a mask: itself (float, in `dtype`), or 0 where a bool mask is true and −inf where false. */
function maskBias(ctx: OnnxContext, mask: Value, dtype: DType): Value {
  if (mask.tensorType.dtype !== 'bool') return ctx.cast(mask, dtype);
  const zeros = ctx.emit('aten.full_like.default', { self: mask, fill_value: 0, dtype });
  return ctx.emit('aten.masked_fill.Scalar', { self: zeros, mask: ctx.emit('aten.logical_not.default', { self: mask }), value: -Infinity });
}

/** Inputs 0-2 (Q, K, V) of an attention op: one floating-point element type. */
function qkvInputs(ctx: OnnxContext): [Value, Value, Value] {
  const [q, k, v] = [ctx.input(0), ctx.input(1), ctx.input(2)];
  const dtype = q.tensorType.dtype;
  if (!isFloating(dtype)) ctx.bad(`Q must be floating point, got ${dtype}`);
  if (k.tensorType.dtype !== dtype || v.tensorType.dtype !== dtype) ctx.bad(`Q, K and V must have one element type, got ${dtype}, ${k.tensorType.dtype}, ${v.tensorType.dtype}`);
  return [q, k, v];
}

defineOnnxOp('Attention', (ctx) => {
  let [q, k, v] = qkvInputs(ctx);
  const dtype = q.tensorType.dtype;
  const rank = q.tensorType.shape.length;
  if (rank !== 3 && rank !== 4) ctx.bad(`Q must be 3-D or 4-D, got rank ${rank}`);
  if (k.tensorType.shape.length !== rank || v.tensorType.shape.length !== rank) ctx.bad('Q, K and V must have the same rank');
  const qHeadsAttr = ctx.has('q_num_heads') ? ctx.attrInt('q_num_heads') : null;
  const kvHeadsAttr = ctx.has('kv_num_heads') ? ctx.attrInt('kv_num_heads') : null;
  if (rank === 3) {
    if (qHeadsAttr === null || kvHeadsAttr === null) ctx.bad('3-D inputs need the q_num_heads and kv_num_heads attributes');
    q = splitHeads(ctx, q, qHeadsAttr!, 'Q');
    k = splitHeads(ctx, k, kvHeadsAttr!, 'K');
    v = splitHeads(ctx, v, kvHeadsAttr!, 'V');
  }
  // The cache: past keys and values before the new ones.
  const pastKey = ctx.optInput(4);
  const pastValue = ctx.optInput(5);
  if ((pastKey === null) !== (pastValue === null)) ctx.bad('past_key and past_value come together');
  const presentKey = pastKey === null ? k : ctx.emit('aten.cat.default', { tensors: [pastKey, k], dim: 2 });
  const presentValue = pastValue === null ? v : ctx.emit('aten.cat.default', { tensors: [pastValue, v], dim: 2 });
  const qHeads = staticDim(ctx, q, 1, 'the query heads');
  const kvHeads = staticDim(ctx, presentKey, 1, 'the key heads');
  if (qHeads % kvHeads !== 0) ctx.bad(`${qHeads} query heads do not group over ${kvHeads} key heads`);
  const headSize = staticDim(ctx, q, 3, 'the query head size');
  const scale = ctx.has('scale') ? ctx.attrFloat('scale') : 1 / Math.sqrt(headSize);
  const root = Math.sqrt(scale);
  const keys = repeatHeads(ctx, presentKey, qHeads / kvHeads);
  const values = repeatHeads(ctx, presentValue, qHeads / kvHeads);
  let scores = ctx.emit('aten.matmul.default', {
    self: ctx.emit('aten.mul.Scalar', { self: q, other: root }),
    other: ctx.emit('aten.transpose.int', { self: ctx.emit('aten.mul.Scalar', { self: keys, other: root }), dim0: 2, dim1: 3 }),
  });
  const softcap = ctx.attrFloat('softcap', 0);
  if (softcap > 0) scores = ctx.emit('aten.mul.Scalar', { self: ctx.emit('aten.tanh.default', { self: ctx.emit('aten.div.Scalar', { self: scores, other: softcap }) }), other: softcap });
  // The bias: the mask (padded with −inf up to the keys' length), and the causal triangle.
  const qLen = staticDim(ctx, q, 2, 'the query length');
  const kvLen = staticDim(ctx, presentKey, 2, 'the key length');
  let bias: Value | null = null;
  const mask = ctx.optInput(3);
  if (mask !== null) {
    bias = maskBias(ctx, mask, dtype);
    const maskLen = staticDim(ctx, mask, mask.tensorType.shape.length - 1, "the mask's last dim");
    if (maskLen > kvLen) ctx.bad(`the mask covers ${maskLen} keys, there are ${kvLen}`);
    if (maskLen < kvLen) bias = ctx.emit('aten.constant_pad_nd.default', { self: bias, pad: [0, kvLen - maskLen], value: -Infinity });
  }
  const lengths = ctx.hasInput(6) ? ctx.input(6) : null;
  const add = (a: Value | null, b: Value): Value => (a === null ? b : ctx.emit('aten.add.Tensor', { self: a, other: b }));
  /** 0 where `allowed` (bool), −inf elsewhere. */
  const allow = (allowed: Value): Value => maskBias(ctx, allowed, dtype);
  // 0, 1, ... over the keys: made only where the lengths are compared with it.
  let indexOfKeys: Value | undefined;
  const keyIndex = (): Value => (indexOfKeys ??= ctx.constantValue(Tensor.from('int64', [kvLen], Array.from({ length: kvLen }, (_, j) => j)), 'key_index'));
  if (ctx.attrInt('is_causal', 0) === 1) {
    if (lengths !== null && pastKey === null) {
      // Per batch: key j is allowed for query i when j <= i + lengths[b] - qLen.
      const frontier = ctx.emit('aten.add.Tensor', {
        self: ctx.emit('aten.reshape.default', { self: ctx.cast(lengths, 'int64'), shape: [-1, 1, 1, 1] }),
        other: ctx.constantValue(Tensor.from('int64', [qLen, 1], Array.from({ length: qLen }, (_, i) => i - qLen)), 'query_offset'),
        alpha: 1,
      });
      bias = add(bias, allow(ctx.emit('aten.le.Tensor', { self: keyIndex(), other: frontier })));
    } else {
      const past = pastKey === null ? 0 : staticDim(ctx, pastKey, 2, 'the past length');
      const triangle = Array.from({ length: qLen * kvLen }, (_, n) => (n % kvLen > Math.floor(n / kvLen) + past ? -Infinity : 0));
      bias = add(bias, ctx.constantValue(Tensor.from(dtype, [qLen, kvLen], triangle), 'causal'));
    }
  }
  if (lengths !== null) {
    // Keys from each batch's length on are padding.
    const valid = ctx.emit('aten.lt.Tensor', { self: keyIndex(), other: ctx.emit('aten.reshape.default', { self: ctx.cast(lengths, 'int64'), shape: [-1, 1, 1, 1] }) });
    bias = add(bias, allow(valid));
  }
  const biased = bias === null ? scores : ctx.emit('aten.add.Tensor', { self: scores, other: bias });
  const precision = ctx.has('softmax_precision') ? dtypeFromOnnx(ctx.attrInt('softmax_precision'), `${ctx.where}: attribute softmax_precision`) : dtype;
  if (!isFloating(precision)) ctx.bad(`softmax_precision must name a floating-point type, got ${precision}`);
  const softmax = ctx.emit('aten._softmax.default', { self: ctx.cast(biased, precision), dim: -1, half_to_float: false });
  // A query row the bias masks entirely attends to nothing: its probabilities are 0 (the
  // softmax of all −inf would be NaN), as ONNX's test data expects.
  const unmasked = bias === null ? softmax : ctx.emit('aten.masked_fill.Scalar', { self: softmax, mask: ctx.emit('aten.eq.Scalar', { self: ctx.emit('aten.amax.default', { self: biased, dim: [-1], keepdim: true }), other: -Infinity }), value: 0 });
  const probabilities = ctx.cast(unmasked, dtype);
  let y = ctx.emit('aten.matmul.default', { self: probabilities, other: values });
  if (rank === 3) {
    const [b, , s] = y.tensorType.shape;
    y = ctx.emit('aten.reshape.default', { self: ctx.emit('aten.permute.default', { self: y, dims: [0, 2, 1, 3] }), shape: [ctx.dimArg(b!), ctx.dimArg(s!), -1] });
  }
  const mode = ctx.attrInt('qk_matmul_output_mode', 0);
  if (mode < 0 || mode > 3) ctx.bad(`qk_matmul_output_mode must be 0 to 3, got ${mode}`);
  const qk = wantsOutput(ctx, 3) ? ctx.cast([scores, scores, biased, probabilities][mode]!, dtype) : null;
  return [y, presentKey, presentValue, ...(qk === null ? [] : [qk])];
});

/**
 * RotaryEmbedding (opset 23): the first `rotary_embedding_dim` channels of each head (all of
 * them by default) rotated pairwise by the cos/sin caches (indexed by position_ids when given,
 * else already [B, S, dim/2]); pairs are the two halves, or neighbours with `interleaved`.
 * X is [B, H, S, D], or [B, S, H·D] with num_heads; the output has X's shape.
 */
defineOnnxOp('RotaryEmbedding', (ctx) => {
  const x = ctx.input(0);
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.bad(`X must be floating point, got ${dtype}`);
  const rank = x.tensorType.shape.length;
  if (rank !== 3 && rank !== 4) ctx.bad(`X must be 3-D or 4-D, got rank ${rank}`);
  const heads = ctx.attrInt('num_heads', 0);
  // [B, S, H, D] either way.
  let bshd: Value;
  if (rank === 4) {
    bshd = ctx.emit('aten.permute.default', { self: x, dims: [0, 2, 1, 3] });
  } else {
    if (heads <= 0) ctx.bad('3-D X needs the num_heads attribute');
    const [b, s] = x.tensorType.shape;
    const width = staticDim(ctx, x, 2, "X's hidden size");
    if (width % heads !== 0) ctx.bad(`X's hidden size ${width} does not split into ${heads} heads`);
    bshd = ctx.emit('aten.reshape.default', { self: x, shape: [ctx.dimArg(b!), ctx.dimArg(s!), heads, width / heads] });
  }
  const head = staticDim(ctx, bshd, 3, 'the head size');
  const given = ctx.attrInt('rotary_embedding_dim', 0);
  const dim = given === 0 ? head : given;
  if (dim % 2 !== 0 || dim > head) ctx.bad(`rotary_embedding_dim ${dim} must be even and at most the head size ${head}`);
  const slice = (v: Value, start: number, end: number, step = 1): Value => ctx.emit('aten.slice.Tensor', { self: v, dim: -1, start, end, step });
  const positions = ctx.optInput(3);
  const cache = (i: number): Value => {
    const c = ctx.cast(ctx.input(i), dtype);
    const picked = positions === null ? c : ctx.emit('aten.embedding.default', { weight: c, indices: positions });
    return ctx.emit('aten.unsqueeze.default', { self: picked, dim: 2 });
  };
  const cos = cache(1);
  const sin = cache(2);
  const interleaved = ctx.attrInt('interleaved', 0) === 1;
  const rotated = slice(bshd, 0, dim);
  const [x1, x2] = interleaved ? [slice(rotated, 0, dim, 2), slice(rotated, 1, dim, 2)] : [slice(rotated, 0, dim / 2), slice(rotated, dim / 2, dim)];
  const mul = (a: Value, b: Value): Value => ctx.emit('aten.mul.Tensor', { self: a, other: b });
  const real = ctx.emit('aten.sub.Tensor', { self: mul(cos, x1), other: mul(sin, x2), alpha: 1 });
  const imag = ctx.emit('aten.add.Tensor', { self: mul(sin, x1), other: mul(cos, x2), alpha: 1 });
  let turned: Value;
  if (interleaved) {
    const pairs = ctx.emit('aten.cat.default', { tensors: [ctx.emit('aten.unsqueeze.default', { self: real, dim: -1 }), ctx.emit('aten.unsqueeze.default', { self: imag, dim: -1 })], dim: -1 });
    turned = ctx.emit('aten.flatten.using_ints', { self: pairs, start_dim: 3, end_dim: 4 });
  } else {
    turned = ctx.emit('aten.cat.default', { tensors: [real, imag], dim: -1 });
  }
  const whole = dim === head ? turned : ctx.emit('aten.cat.default', { tensors: [turned, slice(bshd, dim, head)], dim: -1 });
  if (rank === 4) return [ctx.emit('aten.permute.default', { self: whole, dims: [0, 2, 1, 3] })];
  return [ctx.emit('aten.reshape.default', { self: whole, shape: x.tensorType.shape.map((d) => ctx.dimArg(d)) })];
});

/**
 * TensorScatter (opset 24): a KV cache updated in place of a copy: along `axis` (default −2),
 * batch b's positions write_indices[b] + s (s over the update's length; modulo the cache length
 * in `circular` mode) take the update's values. As one scatter of the update into the cache.
 */
defineOnnxOp('TensorScatter', (ctx) => {
  const cache = ctx.input(0);
  const update = ctx.input(1);
  const rank = cache.tensorType.shape.length;
  if (update.tensorType.shape.length !== rank || update.tensorType.dtype !== cache.tensorType.dtype) ctx.bad('the update must have the cache\'s rank and element type');
  const given = ctx.attrInt('axis', -2);
  const axis = given < 0 ? given + rank : given;
  if (axis < 1 || axis >= rank) ctx.bad(`axis ${given} must name a dim after the batch dim of a rank-${rank} cache`);
  const mode = ctx.attrString('mode', 'linear');
  if (mode !== 'linear' && mode !== 'circular') ctx.bad(`mode must be "linear" or "circular", got ${JSON.stringify(mode)}`);
  const length = staticDim(ctx, cache, axis, "the cache's length");
  const steps = staticDim(ctx, update, axis, "the update's length");
  if (steps > length) ctx.bad(`an update of ${steps} positions does not fit a cache of ${length}`);
  const ones = (at: number, size: number): number[] => Array.from({ length: rank }, (_, i) => (i === at ? size : 1));
  const offsets = ctx.constantValue(Tensor.from('int64', ones(axis, steps), Array.from({ length: steps }, (_, s) => s)), 'offsets');
  // write_indices [B] as [B, 1, ...]: one start per batch, broadcast over the other dims.
  const starts = ctx.hasInput(2) ? ctx.emit('aten.reshape.default', { self: ctx.cast(ctx.input(2), 'int64'), shape: [-1, ...new Array<number>(rank - 1).fill(1)] }) : null;
  let positions = starts === null ? offsets : ctx.emit('aten.add.Tensor', { self: starts, other: offsets, alpha: 1 });
  if (mode === 'circular') positions = ctx.emit('aten.remainder.Scalar', { self: positions, other: length });
  const index = ctx.emit('aten.expand.default', { self: positions, size: update.tensorType.shape.map((d) => ctx.dimArg(d)) });
  return [ctx.emit('aten.scatter.src', { self: cache, dim: axis, index, src: update })];
});

// SwiGLU (opset 28): swish(a, alpha) · b.
defineOnnxOp('SwiGLU', (ctx) => {
  const a = ctx.input(0);
  const b = ctx.input(1);
  if (!isFloating(a.tensorType.dtype)) ctx.bad(`the inputs must be floating point, got ${a.tensorType.dtype}`);
  const alpha = ctx.attrFloat('alpha', 1);
  const swish = alpha === 1 ? ctx.emit('aten.silu.default', { self: a }) : ctx.emit('aten.mul.Tensor', { self: a, other: ctx.emit('aten.sigmoid.default', { self: ctx.emit('aten.mul.Scalar', { self: a, other: alpha }) }) });
  return [ctx.emit('aten.mul.Tensor', { self: swish, other: b })];
});

/**
 * FlexAttention (ai.onnx.preview, version 1): attention over rank-4 Q [B, Hq, L, E],
 * K [B, Hkv, S, E] and V [B, Hkv, S, Ev] with two optional modifier subgraphs, each taking one
 * [B, Hq, L, S] tensor and giving one of its shape and type: score_mod on the scores before the
 * softmax, prob_mod on the probabilities after it. As the op's function body computes it: Q and
 * the K heads (each shared by a contiguous group of query heads) are both scaled by √scale in
 * the inputs' type, their product cast to softmax_precision (float32 unless the inputs are
 * float64) and modified, the softmax taken and modified, V multiplied in softmax_precision and
 * the result cast back. The scale (default 1/√E) and its root are float32 values, as there.
 * The subgraphs are imported into the graph with their input bound to the tensor they modify.
 */
defineOnnxOp(
  'FlexAttention',
  (ctx) => {
    const [q, k, v] = qkvInputs(ctx);
    const dtype = q.tensorType.dtype;
    for (const [name, t] of [['Q', q], ['K', k], ['V', v]] as const) {
      if (t.tensorType.shape.length !== 4) ctx.bad(`${name} must be rank 4 [batch, heads, sequence, head size], got rank ${t.tensorType.shape.length}`);
    }
    // Forms of other FlexAttention drafts: refused by name rather than imported without them.
    if (ctx.has('mask_mod')) ctx.unsupported('the mask_mod attribute (a FlexAttention draft other than ai.onnx.preview version 1) is not supported: write the mask in score_mod as -inf scores');
    const qHeads = staticDim(ctx, q, 1, 'the query heads');
    const kvHeads = staticDim(ctx, k, 1, 'the key heads');
    if (kvHeads < 1 || qHeads % kvHeads !== 0) ctx.bad(`${qHeads} query heads do not group over ${kvHeads} key heads`);
    if (staticDim(ctx, v, 1, 'the value heads') !== kvHeads) ctx.bad(`K has ${kvHeads} heads and V ${v.tensorType.shape[1]}; they must have the same`);
    const headSize = staticDim(ctx, q, 3, 'the query head size');
    if (staticDim(ctx, k, 3, 'the key head size') !== headSize) ctx.bad(`Q's head size ${headSize} differs from K's ${k.tensorType.shape[3]}`);
    const precision = ctx.has('softmax_precision') ? dtypeFromOnnx(ctx.attrInt('softmax_precision'), `${ctx.where}: attribute softmax_precision`) : dtype === 'float64' ? 'float64' : 'float32';
    if (!['float32', 'float16', 'bfloat16', 'float64'].includes(precision)) ctx.bad(`softmax_precision must name float, float16, bfloat16 or double, got ${precision}`);
    const f32 = Math.fround;
    const scale = ctx.has('scale') ? f32(ctx.attrFloat('scale')) : f32(1 / f32(Math.sqrt(headSize)));
    const root = ctx.constantValue(Tensor.from(dtype, [], [f32(Math.sqrt(scale))]), 'scale_root');
    const keys = repeatHeads(ctx, k, qHeads / kvHeads);
    const values = repeatHeads(ctx, v, qHeads / kvHeads);
    const mul = (a: Value, b: Value): Value => ctx.emit('aten.mul.Tensor', { self: a, other: b });
    const scores = ctx.cast(
      ctx.emit('aten.matmul.default', { self: mul(q, root), other: ctx.emit('aten.transpose.int', { self: mul(keys, root), dim0: 2, dim1: 3 }) }),
      precision,
    );
    /** `x` through modifier subgraph `name`, when the node has one. */
    const modify = (name: string, x: Value): Value => {
      if (!ctx.has(name)) return x;
      const inputs = ctx.graphAttribute(name).input?.length ?? 0;
      if (inputs === 5) ctx.unsupported(`a ${name} of 5 inputs (a per-element (score, batch, head, q_idx, k_idx) form of another FlexAttention draft) is not supported: ai.onnx.preview version 1 modifies the whole [B, Hq, L, S] tensor through one input`);
      if (inputs !== 1) ctx.bad(`${name} must take one input (the [B, Hq, L, S] tensor), it declares ${inputs}`);
      const outputs = ctx.inlineSubgraph(name, [x]);
      if (outputs.length !== 1) ctx.bad(`${name} must give one output, it gives ${outputs.length}`);
      const out = outputs[0]!;
      const type = out instanceof Value ? out.tensorType : null;
      const same = type !== null && type.dtype === x.tensorType.dtype && type.shape.length === 4 && type.shape.every((d, i) => !isStatic(d) || !isStatic(x.tensorType.shape[i]!) || d === x.tensorType.shape[i]);
      if (!same) ctx.bad(`${name} must give a ${x.tensorType.dtype} tensor of its input's shape [${x.tensorType.shape.join(', ')}]${type === null ? '' : `, it gives ${type.dtype} [${type.shape.join(', ')}]`}`);
      return out as Value;
    };
    const probabilities = modify('prob_mod', ctx.emit('aten._softmax.default', { self: modify('score_mod', scores), dim: -1, half_to_float: false }));
    return [ctx.cast(ctx.emit('aten.matmul.default', { self: probabilities, other: ctx.cast(values, precision) }), dtype)];
  },
  'ai.onnx.preview',
);
