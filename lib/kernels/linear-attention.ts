/**
 * Linear attention with a recurrent state (ONNX LinearAttention), step by step in float64.
 */
import { InvalidArgumentError } from '../errors';
import type { Tensor } from '../ir/tensor';
import { fromNumbers, readNumbers } from './access';

export type LinearAttentionRule = 'linear' | 'gated' | 'delta' | 'gated_delta';

export interface LinearAttentionArgs {
  query: Tensor;
  key: Tensor;
  value: Tensor;
  pastState: Tensor | null;
  decay: Tensor | null;
  beta: Tensor | null;
  qHeads: number;
  kvHeads: number;
  rule: LinearAttentionRule;
  scale: number;
}

/**
 * Per batch and key/value head, the state S [dk, dv] is updated at each step t:
 * gated rules first decay it (S = exp(g) * S, g per key channel or per head), then
 * linear/gated add k v^T, delta rules add k (beta (v - S^T k))^T. Each query head of the
 * group then reads scale * q^T S. Returns [output, present_state] in the query's type.
 */
export function linearAttention(a: LinearAttentionArgs): [Tensor, Tensor] {
  const [B, T] = a.query.shape as [number, number, number];
  const hq = a.qHeads;
  const hkv = a.kvHeads;
  const dk = a.query.shape[2]! / hq;
  const dv = a.value.shape[2]! / hkv;
  const group = hq / hkv;
  if (!Number.isInteger(dk) || !Number.isInteger(dv) || !Number.isInteger(group) || a.key.shape[2] !== hkv * dk) {
    throw new InvalidArgumentError('linear attention: head counts do not divide the query, key and value widths');
  }
  const q = readNumbers(a.query);
  const k = readNumbers(a.key);
  const v = readNumbers(a.value);
  const gated = a.rule === 'gated' || a.rule === 'gated_delta';
  const delta = a.rule === 'delta' || a.rule === 'gated_delta';
  const g = gated ? readNumbers(a.decay!) : null;
  const gw = gated ? a.decay!.shape[2]! : 0;
  const beta = delta ? readNumbers(a.beta!) : null;
  const bw = delta ? a.beta!.shape[2]! : 0;
  const state = a.pastState === null ? new Float64Array(B * hkv * dk * dv) : Float64Array.from(readNumbers(a.pastState));
  const out = new Float64Array(B * T * hq * dv);
  const retrieved = new Float64Array(dv);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < hkv; h++) {
      const S = state.subarray((b * hkv + h) * dk * dv, (b * hkv + h + 1) * dk * dv);
      for (let t = 0; t < T; t++) {
        const row = b * T + t;
        const kOff = row * hkv * dk + h * dk;
        const vOff = row * hkv * dv + h * dv;
        if (g !== null) {
          for (let i = 0; i < dk; i++) {
            const f = Math.exp(gw === hkv ? g[row * gw + h]! : g[row * gw + h * dk + i]!);
            for (let j = 0; j < dv; j++) S[i * dv + j] *= f;
          }
        }
        if (beta !== null) {
          const bt = beta[row * bw + (bw === 1 ? 0 : h)]!;
          retrieved.fill(0);
          for (let i = 0; i < dk; i++) {
            const ki = k[kOff + i]!;
            for (let j = 0; j < dv; j++) retrieved[j] += S[i * dv + j]! * ki;
          }
          for (let j = 0; j < dv; j++) retrieved[j] = bt * (v[vOff + j]! - retrieved[j]!);
          for (let i = 0; i < dk; i++) {
            const ki = k[kOff + i]!;
            for (let j = 0; j < dv; j++) S[i * dv + j] += ki * retrieved[j]!;
          }
        } else {
          for (let i = 0; i < dk; i++) {
            const ki = k[kOff + i]!;
            for (let j = 0; j < dv; j++) S[i * dv + j] += ki * v[vOff + j]!;
          }
        }
        for (let r = 0; r < group; r++) {
          const head = h * group + r;
          const qOff = row * hq * dk + head * dk;
          const oOff = row * hq * dv + head * dv;
          for (let j = 0; j < dv; j++) {
            let s = 0;
            for (let i = 0; i < dk; i++) s += q[qOff + i]! * S[i * dv + j]!;
            out[oOff + j] = a.scale * s;
          }
        }
      }
    }
  }
  const dtype = a.query.dtype;
  return [fromNumbers(dtype, [B, T, hq * dv], out), fromNumbers(dtype, [B, hkv, dk, dv], state)];
}
