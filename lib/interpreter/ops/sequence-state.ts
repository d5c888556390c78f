/** Interpreter implementations of lib/ir/ops/sequence-state.ts. */
import type { Tensor } from '../../ir/tensor';
import { linearAttention, type LinearAttentionRule } from '../../kernels/linear-attention';
import { defineImpl, type RuntimeArg } from '../registry';

const optT = (a: RuntimeArg | undefined): Tensor | null => (a === null || a === undefined ? null : (a as Tensor));

defineImpl('trt.linear_attention', (a) => {
  const rule = a.update_rule as LinearAttentionRule;
  const gated = rule === 'gated' || rule === 'gated_delta';
  const delta = rule === 'delta' || rule === 'gated_delta';
  return linearAttention({
    query: a.query as Tensor,
    key: a.key as Tensor,
    value: a.value as Tensor,
    pastState: optT(a.past_state),
    decay: gated ? optT(a.decay) : null,
    beta: delta ? optT(a.beta) : null,
    qHeads: a.q_num_heads as number,
    kvHeads: a.kv_num_heads as number,
    rule,
    scale: a.scale as number,
  });
});
