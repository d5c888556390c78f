/**
 * Recurrent-state sequence ops (ONNX opset 27): linear attention with its state carried from
 * step to step. ONNX's CausalConvWithState needs no op of its own (pad or concatenate the past
 * state, a depthwise convolution, a slice: lib/frontends/onnx/ops/sequence-state.ts).
 */
import { isFloating } from '../dtype';
import { tensorType } from '../graph';
import { dimEquals, formatShape, isStatic, symMul, type Dim } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';

export const LINEAR_ATTENTION_RULES = ['linear', 'gated', 'delta', 'gated_delta'] as const;

function sameDim(ctx: InferContext, a: Dim, b: Dim, what: string): void {
  if (!dimEquals(a, b) && isStatic(a) && isStatic(b)) ctx.fail(what);
}

/**
 * query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv]; past_state [B, Hkv, dk, dv];
 * decay [B, T, Hkv*dk] (per key channel) or [B, T, Hkv] (per head); beta [B, T, Hkv] or
 * [B, T, 1]. Outputs: [B, T, Hq*dv] and the state after the last step [B, Hkv, dk, dv].
 * Query head h reads the state of key/value head floor(h / (Hq / Hkv)).
 */
defineOp(
  'trt.linear_attention(Tensor query, Tensor key, Tensor value, Tensor? past_state, Tensor? decay, Tensor? beta, int q_num_heads, int kv_num_heads, str update_rule, float scale) -> (Tensor output, Tensor present_state)',
  (ctx) => {
    const q = ctx.tensor('query');
    const k = ctx.tensor('key');
    const v = ctx.tensor('value');
    const hq = ctx.int('q_num_heads');
    const hkv = ctx.int('kv_num_heads');
    const rule = ctx.str('update_rule');
    if (!(LINEAR_ATTENTION_RULES as readonly string[]).includes(rule)) ctx.fail(`update_rule ${JSON.stringify(rule)} is not one of ${LINEAR_ATTENTION_RULES.join(', ')}`);
    if (hq < 1 || hkv < 1 || hq % hkv !== 0) ctx.fail(`q_num_heads ${hq} must be a positive multiple of kv_num_heads ${hkv}`);
    for (const [name, t] of [['query', q], ['key', k], ['value', v]] as const) {
      if (t.shape.length !== 3) ctx.fail(`${name} ${formatShape(t.shape)} must be 3-D [batch, sequence, heads * head size]`);
      if (!isStatic(t.shape[2]!)) ctx.fail(`${name}'s last dim ${formatShape(t.shape)} must be static`);
      if (t.dtype !== q.dtype) ctx.fail(`${name} is ${t.dtype}, query is ${q.dtype}`);
    }
    if (!isFloating(q.dtype)) ctx.fail(`query must be a floating-point tensor, got ${q.dtype}`);
    const [b, t] = [q.shape[0]!, q.shape[1]!];
    for (const [name, x] of [['key', k], ['value', v]] as const) {
      sameDim(ctx, x.shape[0]!, b, `${name} ${formatShape(x.shape)} and query ${formatShape(q.shape)} differ in batch`);
      sameDim(ctx, x.shape[1]!, t, `${name} ${formatShape(x.shape)} and query ${formatShape(q.shape)} differ in sequence length`);
    }
    const [qw, kw, vw] = [q.shape[2] as number, k.shape[2] as number, v.shape[2] as number];
    if (qw % hq !== 0 || kw % hkv !== 0 || vw % hkv !== 0) ctx.fail(`query width ${qw}, key width ${kw} and value width ${vw} must divide by their head counts ${hq}, ${hkv}, ${hkv}`);
    const dk = qw / hq;
    const dv = vw / hkv;
    if (kw / hkv !== dk) ctx.fail(`key head size ${kw / hkv} differs from query head size ${dk}`);
    const state = [b, hkv, dk, dv];
    const past = ctx.optTensor('past_state');
    if (past !== null) {
      if (past.dtype !== q.dtype) ctx.fail(`past_state is ${past.dtype}, query is ${q.dtype}`);
      if (past.shape.length !== 4) ctx.fail(`past_state ${formatShape(past.shape)} must be [batch, ${hkv}, ${dk}, ${dv}]`);
      state.forEach((d, i) => sameDim(ctx, past.shape[i]!, d, `past_state ${formatShape(past.shape)} must be [batch, ${hkv}, ${dk}, ${dv}]`));
    }
    const gated = rule === 'gated' || rule === 'gated_delta';
    const delta = rule === 'delta' || rule === 'gated_delta';
    const decay = ctx.optTensor('decay');
    if (gated && decay === null) ctx.fail(`update_rule ${rule} needs decay`);
    if (decay !== null && gated) {
      const w = decay.shape[2];
      if (decay.shape.length !== 3 || (w !== hkv * dk && w !== hkv)) ctx.fail(`decay ${formatShape(decay.shape)} must be [batch, sequence, ${hkv * dk}] or [batch, sequence, ${hkv}]`);
      sameDim(ctx, decay.shape[1]!, t, `decay ${formatShape(decay.shape)} and query differ in sequence length`);
      if (decay.dtype !== q.dtype) ctx.fail(`decay is ${decay.dtype}, query is ${q.dtype}`);
    }
    const beta = ctx.optTensor('beta');
    if (delta && beta === null) ctx.fail(`update_rule ${rule} needs beta`);
    if (beta !== null && delta) {
      const w = beta.shape[2];
      if (beta.shape.length !== 3 || (w !== hkv && w !== 1)) ctx.fail(`beta ${formatShape(beta.shape)} must be [batch, sequence, ${hkv}] or [batch, sequence, 1]`);
      sameDim(ctx, beta.shape[1]!, t, `beta ${formatShape(beta.shape)} and query differ in sequence length`);
      if (beta.dtype !== q.dtype) ctx.fail(`beta is ${beta.dtype}, query is ${q.dtype}`);
    }
    ctx.float('scale');
    return [tensorType(q.dtype, [b, t, symMul(hq, dv)]), tensorType(q.dtype, state)];
  },
);
