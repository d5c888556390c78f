/**
 * ONNX CumProd, Det, BitCast, LinearAttention and CausalConvWithState: kernels against
 * hand-computed values and the mappers through the interpreter, with their refusals.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { linearAttention } from '../../lib/kernels/linear-attention';
import { bitcast, cumprod, det } from '../../lib/kernels/numeric';
import { expectClose, expectTensor } from '../helpers/compare';
import { buildSymbolicModel, i64, type SymAttr } from '../helpers/onnx-symbolic-model';

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

describe('CumProd, Det, BitCast kernels', () => {
  it('cumprod: inclusive, exclusive, reverse; integers wrap at their width', () => {
    const x = f32([4], [1, 2, 3, 4]);
    expectTensor(cumprod(x, 0), 'float32', [4], [1, 2, 6, 24]);
    expectTensor(cumprod(x, 0, { exclusive: true }), 'float32', [4], [1, 1, 2, 6]);
    expectTensor(cumprod(x, 0, { reverse: true }), 'float32', [4], [24, 24, 12, 4]);
    expectTensor(cumprod(x, 0, { reverse: true, exclusive: true }), 'float32', [4], [24, 12, 4, 1]);
    expectTensor(cumprod(f32([2, 2], [1, 2, 3, 4]), 1), 'float32', [2, 2], [1, 2, 3, 12]);
    // 2^16 * 2^16 wraps to 0 in int32.
    expectTensor(cumprod(Tensor.from('int32', [2], [65536, 65536]), 0), 'int32', [2], [65536, 0]);
    expect(cumprod(Tensor.from('int64', [2], [2n ** 40n, 2n ** 20n]), 0).data).toEqual(BigInt64Array.from([2n ** 40n, 2n ** 60n]));
  });

  it('det: 2x2, 3x3 with a pivot, a singular matrix and a batch', () => {
    expectClose(det(f32([2, 2], [1, 2, 3, 4])), f32([], [-2]));
    expectClose(det(f32([3, 3], [0, 1, 2, 1, 0, 3, 4, -3, 8])), f32([], [-2]));
    expectClose(det(f32([2, 2, 2], [1, 2, 2, 4, 2, 0, 0, 3])), f32([2], [0, 6]));
  });

  it('bitcast reads the same bytes as another type of the same width', () => {
    expect(bitcast(f32([2], [1, -2]), 'int32').toArray()).toEqual([0x3f800000, -0x40000000]);
    expect(bitcast(Tensor.from('uint16', [1], [0xffff]), 'int16').toArray()).toEqual([-1]);
    expect(() => bitcast(f32([1], [1]), 'int64')).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }));
  });
});

describe('LinearAttention kernel', () => {
  // One batch, one head, dk = dv = 1: the state is a number, each step by hand.
  const q = f32([1, 2, 1], [1, 2]);
  const k = f32([1, 2, 1], [3, 1]);
  const v = f32([1, 2, 1], [2, 5]);
  const base = { query: q, key: k, value: v, pastState: null, decay: null, beta: null, qHeads: 1, kvHeads: 1, scale: 1 };

  it('linear: S += k v; out = q S', () => {
    const [out, state] = linearAttention({ ...base, rule: 'linear' });
    // S = 6, then 6 + 5 = 11; outputs 1*6 and 2*11.
    expectClose(out, f32([1, 2, 1], [6, 22]));
    expectClose(state, f32([1, 1, 1, 1], [11]));
  });

  it('gated_delta: S = e^g S; S += k beta (v - S k)', () => {
    const decay = f32([1, 2, 1], [0, Math.log(0.5)]);
    const beta = f32([1, 2, 1], [0.5, 1]);
    const past = f32([1, 1, 1, 1], [1]);
    const [out, state] = linearAttention({ ...base, pastState: past, decay, beta, rule: 'gated_delta', scale: 0.5 });
    // t0: S = 1; delta = 0.5 (2 - 3) = -0.5; S = 1 + 3 (-0.5) = -0.5; out = 0.5 * 1 * -0.5.
    // t1: S = -0.25; delta = 1 (5 - (-0.25)) = 5.25; S = -0.25 + 5.25 = 5; out = 0.5 * 2 * 5.
    expectClose(out, f32([1, 2, 1], [-0.25, 5]));
    expectClose(state, f32([1, 1, 1, 1], [5]));
  });

  it('grouped query heads read their key/value head', () => {
    const [out] = linearAttention({ ...base, query: f32([1, 2, 2], [1, 10, 2, 20]), qHeads: 2, rule: 'linear' });
    expectClose(out, f32([1, 2, 2], [6, 60, 22, 220]));
  });
});

function model(op: string, inputs: Record<string, { dtype: 'float32'; dims: number[] }>, nodeInputs: string[], outputs: string[], attrs: Record<string, SymAttr> = {}): Uint8Array {
  return buildSymbolicModel({ inputs, nodes: [{ op, inputs: nodeInputs, outputs, attrs, name: 'n0' }], outputs, opset: 27 });
}

describe('ONNX mappers', () => {
  it('CumProd with exclusive and reverse, and its refusals', () => {
    const g = loadOnnx(buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [3] } }, initializers: { a: i64([0]) }, nodes: [{ op: 'CumProd', inputs: ['x', 'a'], outputs: ['y'], attrs: { reverse: 1 } }], outputs: ['y'], opset: 26 }));
    expectTensor(interpret(g, [f32([3], [2, 3, 4])])[0]!, 'float32', [3], [24, 12, 4]);
    const bad = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [3] } }, initializers: { a: i64([0]) }, nodes: [{ op: 'CumProd', inputs: ['x', 'a'], outputs: ['y'], attrs: { exclusive: 2 }, name: 'cp' }], outputs: ['y'], opset: 26 });
    expect(() => loadOnnx(bad)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "cp" (CumProd)') }));
  });

  it('BitCast between widths that differ is refused', () => {
    expect(() => loadOnnx(model('BitCast', { x: { dtype: 'float32', dims: [2] } }, ['x'], ['y'], { to: 7 }))).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });

  it('CausalConvWithState: output and present state, with a past state and SiLU', () => {
    const g = loadOnnx(
      model('CausalConvWithState', { x: { dtype: 'float32', dims: [1, 1, 3] }, w: { dtype: 'float32', dims: [1, 1, 2] }, p: { dtype: 'float32', dims: [1, 1, 1] } }, ['x', 'w', '', 'p'], ['y', 's']),
    );
    // Padded [5, 1, 2, 3]; kernel [1, 10]: 5 + 10, 1 + 20, 2 + 30; the state keeps the last 1.
    const [y, s] = interpret(g, [f32([1, 1, 3], [1, 2, 3]), f32([1, 1, 2], [1, 10]), f32([1, 1, 1], [5])]);
    expectTensor(y!, 'float32', [1, 1, 3], [15, 21, 32]);
    expectTensor(s!, 'float32', [1, 1, 1], [3]);
    const silu = loadOnnx(model('CausalConvWithState', { x: { dtype: 'float32', dims: [1, 1, 2] }, w: { dtype: 'float32', dims: [1, 1, 1] } }, ['x', 'w'], ['y', 's'], { activation: 'silu' }));
    const [ys, ss] = interpret(silu, [f32([1, 1, 2], [0, 1]), f32([1, 1, 1], [1])]);
    expectClose(ys!, f32([1, 1, 2], [0, 1 / (1 + Math.exp(-1))]));
    expect(ss!.shape).toEqual([1, 1, 0]);
    expect(() => loadOnnx(model('CausalConvWithState', { x: { dtype: 'float32', dims: [1, 1, 2] }, w: { dtype: 'float32', dims: [1, 1, 1] } }, ['x', 'w'], ['y'], { activation: 'relu' }))).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "n0" (CausalConvWithState)') }),
    );
  });

  it('LinearAttention: default gated_delta needs decay and beta; bad head counts are E_BAD_MODEL', () => {
    const io = { q: { dtype: 'float32' as const, dims: [1, 2, 4] }, k: { dtype: 'float32' as const, dims: [1, 2, 4] }, v: { dtype: 'float32' as const, dims: [1, 2, 4] } };
    expect(() => loadOnnx(model('LinearAttention', io, ['q', 'k', 'v'], ['o'], { q_num_heads: 2, kv_num_heads: 2 }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('decay') }));
    expect(() => loadOnnx(model('LinearAttention', io, ['q', 'k', 'v'], ['o'], { q_num_heads: 3, kv_num_heads: 2, update_rule: 'linear' }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
    expect(() => loadOnnx(model('LinearAttention', io, ['q', 'k', 'v'], ['o'], { q_num_heads: 2, kv_num_heads: 2, update_rule: 'softmax' }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
    const g = loadOnnx(model('LinearAttention', io, ['q', 'k', 'v'], ['o', 's'], { q_num_heads: 2, kv_num_heads: 2, update_rule: 'linear', scale: 1 }));
    expect(g.outputs.map((o) => o.tensorType.shape)).toEqual([[1, 2, 4], [1, 2, 2, 2]]);
  });
});
