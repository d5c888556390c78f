/**
 * ONNX mappers of the recurrent-state sequence ops of opset 27: LinearAttention
 * (trt.linear_attention) and CausalConvWithState, which is exactly a depthwise convolution
 * over the past state joined to the input, so it is composed from ATen ops.
 */
import type { Value } from '../../../ir/graph';
import { LINEAR_ATTENTION_RULES } from '../../../ir/ops/sequence-state';
import { formatShape, isStatic, symAdd } from '../../../ir/symbolic';
import { wantsOutput } from './nn';
import { defineOnnxOp } from '../registry';

defineOnnxOp('LinearAttention', (ctx) => {
  const query = ctx.input(0);
  const key = ctx.input(1);
  const value = ctx.input(2);
  const pastState = ctx.optInput(3);
  const decay = ctx.optInput(4);
  const beta = ctx.optInput(5);
  const qHeads = ctx.attrInt('q_num_heads');
  const kvHeads = ctx.attrInt('kv_num_heads');
  if (qHeads < 1 || kvHeads < 1 || qHeads % kvHeads !== 0) ctx.bad(`q_num_heads ${qHeads} must be a positive multiple of kv_num_heads ${kvHeads}`);
  const rule = ctx.attrString('update_rule', 'gated_delta');
  if (!(LINEAR_ATTENTION_RULES as readonly string[]).includes(rule)) ctx.bad(`attribute update_rule ${JSON.stringify(rule)} must be one of ${LINEAR_ATTENTION_RULES.join(', ')}`);
  if ((rule === 'gated' || rule === 'gated_delta') && decay === null) ctx.bad(`update_rule ${rule} needs the decay input (4)`);
  if ((rule === 'delta' || rule === 'gated_delta') && beta === null) ctx.bad(`update_rule ${rule} needs the beta input (5)`);
  const last = query.tensorType.shape[2];
  if (query.tensorType.shape.length !== 3 || last === undefined || !isStatic(last)) {
    return ctx.unsupported(`query ${formatShape(query.tensorType.shape)} must be 3-D with a static last dim`);
  }
  const width: number = last;
  if (width % qHeads !== 0) ctx.bad(`query width ${width} does not divide by q_num_heads ${qHeads}`);
  // The default scale is 1/sqrt(head size), the head size read from the query.
  const scale = ctx.has('scale') ? ctx.attrFloat('scale') : 1 / Math.sqrt(width / qHeads);
  const node = ctx.call('trt.linear_attention', {
    query,
    key,
    value,
    past_state: pastState,
    decay,
    beta,
    q_num_heads: qHeads,
    kv_num_heads: kvHeads,
    update_rule: rule,
    scale,
  });
  return [node.outputs[0]!, node.outputs[1]!];
});

const ACTIVATIONS = ['none', 'silu', 'swish'];

defineOnnxOp('CausalConvWithState', (ctx) => {
  const x = ctx.input(0);
  const w = ctx.input(1);
  const bias = ctx.optInput(2);
  const past = ctx.optInput(3);
  const activation = ctx.attrString('activation', 'none');
  if (!ACTIVATIONS.includes(activation)) ctx.bad(`attribute activation ${JSON.stringify(activation)} must be one of ${ACTIVATIONS.join(', ')}`);
  const xs = x.tensorType.shape;
  const ws = w.tensorType.shape;
  if (xs.length !== 3) ctx.unsupported(`input ${formatShape(xs)} must be 3-D [batch, channels, length]`);
  if (ws.length !== 3 || !ws.every(isStatic)) ctx.unsupported(`weight ${formatShape(ws)} must be static [channels, 1, kernel]`);
  const [channels, one, kernel] = ws as number[];
  if (one !== 1) ctx.bad(`weight ${formatShape(ws)} must be depthwise [channels, 1, kernel]`);
  if (kernel! < 1) ctx.bad(`weight ${formatShape(ws)} has an empty kernel`);
  if (isStatic(xs[1]!) && xs[1] !== channels) ctx.bad(`input ${formatShape(xs)} has ${xs[1]} channels, weight ${formatShape(ws)} has ${channels}`);
  const keep = kernel! - 1;
  let padded: Value;
  if (past !== null) {
    const ps = past.tensorType.shape;
    if (ps.length !== 3 || (isStatic(ps[2]!) && ps[2] !== keep)) ctx.bad(`past_state ${formatShape(ps)} must be [batch, ${channels}, ${keep}]`);
    padded = ctx.emit('aten.cat.default', { tensors: [past, x], dim: 2 });
  } else {
    padded = keep === 0 ? x : ctx.emit('aten.constant_pad_nd.default', { self: x, pad: [keep, 0], value: 0 });
  }
  let y = ctx.emit('aten.convolution.default', {
    input: padded,
    weight: w,
    bias,
    stride: [1],
    padding: [0],
    dilation: [1],
    transposed: false,
    output_padding: [0],
    groups: channels!,
  });
  if (activation !== 'none') y = ctx.emit('aten.silu.default', { self: y });
  if (!wantsOutput(ctx, 1)) return [y];
  const length = xs[2]!;
  const state = ctx.emit('aten.slice.Tensor', { self: padded, dim: 2, start: ctx.dimArg(length), end: ctx.dimArg(symAdd(length, keep)), step: 1 });
  return [y, state];
});
