/**
 * int64 is exact past 2^53: every op of the interpreter's table that
 * takes or gives int64 data, on values such as 2^53 + 1, INT64_MAX and INT64_MIN, through
 * interpret(), through compile() + program.run on the reference backend (engine segments
 * where a converter exists, the interpreter elsewhere), and through constant folding. The
 * expected values were computed with Python integers by test/ops/int64-cases.py, not by
 * the kernels; int64 arithmetic wraps in two's complement, as PyTorch's does.
 */
import { compile } from '../../lib/compile';
import '../../lib/interpreter/ops';
import { interpret } from '../../lib/interpreter';
import { implementedOps } from '../../lib/interpreter/registry';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { compress, nonzero, unique } from '../../lib/kernels/data-dependent';

const i64 = (shape: number[], values: bigint[]): Tensor => Tensor.from('int64', shape, values);
const i32 = (shape: number[], values: number[]): Tensor => Tensor.from('int32', shape, values);
const f64 = (shape: number[], values: number[]): Tensor => Tensor.from('float64', shape, values);
const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);
const bool = (shape: number[], values: number[]): Tensor => Tensor.from('bool', shape, values);

interface Case {
  readonly name: string;
  readonly target: string;
  readonly inputs: readonly Tensor[];
  readonly args: (v: Value[]) => Record<string, Arg>;
  readonly expected: readonly Tensor[];
}

const c = (name: string, target: string, inputs: Tensor[], args: Case['args'], expected: Tensor[]): Case => ({ name, target, inputs, args, expected });

// Inputs shared by many cases: 2^53 + 1, INT64_MAX, INT64_MIN, −(2^53 + 1) and neighbours.
// prettier-ignore
const X = i64([4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n]);
const Y = i64([4], [3n, 7n, -1n, -2n]);
const X2 = i64([4], [9007199254740992n, 9223372036854775807n, -9223372036854775807n, -9007199254740992n]);
const M = i64([2, 3], [9007199254740993n, 9007199254740993n, 1n, 9223372036854775807n, 1n, -9223372036854775808n]);
const T = i64([4], [9007199254740992n, 9007199254740993n, 9007199254740992n, 9007199254740991n]);

// prettier-ignore
const CASES: readonly Case[] = [
  // 3037000500² passes 2^63: the running product wraps as int64 does.
  // Token ids 2^53 and 2^53 + 1 are different tokens: only the one equal to the pool's 2^53 is counted.
  c('tfidf ids past 2^53', 'trt.tfidf_vectorizer', [i64([3], [9007199254740992n, 9007199254740993n, 9007199254740993n])], (v) => ({
    self: v[0], mode: 'TF', min_gram_length: 1, max_gram_length: 1, max_skip_count: 0, ngram_counts: [0], ngram_indexes: [0], pool_int64s: [9007199254740992], weights: [],
  }), [Tensor.from('float32', [1], [1])]),
  c('cumprod', 'trt.cumprod_onnx', [i64([3], [3037000500n, 3037000500n, 3n])], (v) => ({ self: v[0], dim: 0 }), [i64([3], [3037000500n, -9223372036709301616n, -9223372036418353232n])]),
  c('bitcast to uint64', 'trt.bitcast', [X], (v) => ({ self: v[0], dtype: 'uint64' }), [
    Tensor.from('uint64', [4], [9007199254740993n, 9223372036854775807n, 9223372036854775808n, 18437736874454810623n]),
  ]),
  c('add', 'aten.add.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740996n, -9223372036854775802n, 9223372036854775807n, -9007199254740995n])]),
  c('add alpha', 'aten.add.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1], alpha: 2 }), [i64([4], [9007199254740999n, -9223372036854775795n, 9223372036854775806n, -9007199254740997n])]),
  c('add x + 0 (issue)', 'aten.add.Tensor', [X, i64([1], [0n])], (v) => ({ self: v[0], other: v[1] }), [X]),
  c('add scalar', 'aten.add.Scalar', [X], (v) => ({ self: v[0], other: 5 }), [i64([4], [9007199254740998n, -9223372036854775804n, -9223372036854775803n, -9007199254740988n])]),
  c('sub', 'aten.sub.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740990n, 9223372036854775800n, -9223372036854775807n, -9007199254740991n])]),
  c('sub scalar', 'aten.sub.Scalar', [X], (v) => ({ self: v[0], other: 5 }), [i64([4], [9007199254740988n, 9223372036854775802n, 9223372036854775803n, -9007199254740998n])]),
  c('rsub', 'aten.rsub.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [-9007199254740990n, -9223372036854775800n, 9223372036854775807n, 9007199254740991n])]),
  c('rsub scalar', 'aten.rsub.Scalar', [X], (v) => ({ self: v[0], other: 5 }), [i64([4], [-9007199254740988n, -9223372036854775802n, -9223372036854775803n, 9007199254740998n])]),
  c('mul', 'aten.mul.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [27021597764222979n, 9223372036854775801n, -9223372036854775808n, 18014398509481986n])]),
  c('mul squares', 'aten.mul.Tensor', [X, X], (v) => ({ self: v[0], other: v[1] }), [i64([4], [18014398509481985n, 1n, 0n, 18014398509481985n])]),
  c('mul scalar', 'aten.mul.Scalar', [X], (v) => ({ self: v[0], other: 3 }), [i64([4], [27021597764222979n, 9223372036854775805n, -9223372036854775808n, -27021597764222979n])]),
  c('div trunc', 'aten.div.Tensor_mode', [X, Y], (v) => ({ self: v[0], other: v[1], rounding_mode: 'trunc' }), [i64([4], [3002399751580331n, 1317624576693539401n, -9223372036854775808n, 4503599627370496n])]),
  c('div floor', 'aten.div.Tensor_mode', [X, Y], (v) => ({ self: v[0], other: v[1], rounding_mode: 'floor' }), [i64([4], [3002399751580331n, 1317624576693539401n, -9223372036854775808n, 4503599627370496n])]),
  c('div scalar trunc', 'aten.div.Scalar_mode', [X], (v) => ({ self: v[0], other: -4, rounding_mode: 'trunc' }), [i64([4], [-2251799813685248n, -2305843009213693951n, 2305843009213693952n, 2251799813685248n])]),
  c('div scalar floor', 'aten.div.Scalar_mode', [X], (v) => ({ self: v[0], other: -4, rounding_mode: 'floor' }), [i64([4], [-2251799813685249n, -2305843009213693952n, 2305843009213693952n, 2251799813685248n])]),
  c('floor_divide', 'aten.floor_divide.default', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [3002399751580331n, 1317624576693539401n, -9223372036854775808n, 4503599627370496n])]),
  c('floor_divide scalar', 'aten.floor_divide.Scalar', [X], (v) => ({ self: v[0], other: -4 }), [i64([4], [-2251799813685249n, -2305843009213693952n, 2305843009213693952n, 2251799813685248n])]),
  c('remainder', 'aten.remainder.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [0n, 0n, 0n, -1n])]),
  c('remainder scalar', 'aten.remainder.Scalar', [X], (v) => ({ self: v[0], other: -4 }), [i64([4], [-3n, -1n, 0n, -1n])]),
  c('remainder scalar-tensor', 'aten.remainder.Scalar_Tensor', [i64([4], [9007199254740993n, -9007199254740993n, 4611686018427387905n, -7n])], (v) => ({ self: 9007199254740992, other: v[0] }), [i64([4], [9007199254740992n, -1n, 9007199254740992n, -3n])]),
  c('fmod', 'aten.fmod.Tensor', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [0n, 0n, 0n, -1n])]),
  c('fmod scalar', 'aten.fmod.Scalar', [X], (v) => ({ self: v[0], other: -4 }), [i64([4], [1n, 3n, 0n, -1n])]),
  c('pow', 'aten.pow.Tensor_Tensor', [i64([4], [3n, -3n, 2n, 9007199254740993n]), i64([4], [39n, 39n, 63n, 2n])], (v) => ({ self: v[0], exponent: v[1] }), [i64([4], [4052555153018976267n, -4052555153018976267n, -9223372036854775808n, 18014398509481985n])]),
  c('pow tensor-scalar', 'aten.pow.Tensor_Scalar', [X], (v) => ({ self: v[0], exponent: 2 }), [i64([4], [18014398509481985n, 1n, 0n, 18014398509481985n])]),
  c('pow scalar-tensor', 'aten.pow.Scalar', [i64([4], [39n, 40n, 0n, -1n])], (v) => ({ self: 3, exponent: v[0] }), [i64([4], [4052555153018976267n, -6289078614652622815n, 1n, 0n])]),
  c('maximum', 'aten.maximum.default', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740993n, 9223372036854775807n, -1n, -2n])]),
  // The .other overloads are the same functions: the same Python-computed values.
  c('max.other', 'aten.max.other', [X, Y], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740993n, 9223372036854775807n, -1n, -2n])]),
  c('maximum with INT64_MAX (issue)', 'aten.maximum.default', [X, i64([1], [9223372036854775807n])], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9223372036854775807n, 9223372036854775807n, 9223372036854775807n, 9223372036854775807n])]),
  c('maximum of neighbours', 'aten.maximum.default', [X, X2], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740993n, 9223372036854775807n, -9223372036854775807n, -9007199254740992n])]),
  c('minimum', 'aten.minimum.default', [X, X2], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740992n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('min.other', 'aten.min.other', [X, X2], (v) => ({ self: v[0], other: v[1] }), [i64([4], [9007199254740992n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('bitwise_not', 'aten.bitwise_not.default', [X], (v) => ({ self: v[0] }), [i64([4], [-9007199254740994n, -9223372036854775808n, 9223372036854775807n, 9007199254740992n])]),
  c('neg', 'aten.neg.default', [X], (v) => ({ self: v[0] }), [i64([4], [-9007199254740993n, -9223372036854775807n, -9223372036854775808n, 9007199254740993n])]),
  c('abs', 'aten.abs.default', [X], (v) => ({ self: v[0] }), [i64([4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n])]),
  c('sign', 'aten.sign.default', [X], (v) => ({ self: v[0] }), [i64([4], [1n, 1n, -1n, -1n])]),
  c('relu', 'aten.relu.default', [X], (v) => ({ self: v[0] }), [i64([4], [9007199254740993n, 9223372036854775807n, 0n, 0n])]),
  c('clamp tensor', 'aten.clamp.Tensor', [X, i64([4], [9007199254740994n, 9223372036854775806n, -9223372036854775807n, -9007199254740992n]), i64([4], [9007199254740995n, 9223372036854775806n, -9223372036854775806n, -9007199254740991n])], (v) => ({ self: v[0], min: v[1], max: v[2] }), [i64([4], [9007199254740994n, 9223372036854775806n, -9223372036854775807n, -9007199254740992n])]),
  c('clamp scalar', 'aten.clamp.default', [X], (v) => ({ self: v[0], min: -9007199254740992, max: 9007199254740992 }), [i64([4], [9007199254740992n, 9007199254740992n, -9007199254740992n, -9007199254740992n])]),
  c('clamp_min tensor', 'aten.clamp_min.Tensor', [X, i64([4], [9007199254740994n, 9223372036854775806n, -9223372036854775807n, -9007199254740992n])], (v) => ({ self: v[0], min: v[1] }), [i64([4], [9007199254740994n, 9223372036854775807n, -9223372036854775807n, -9007199254740992n])]),
  c('clamp_min scalar', 'aten.clamp_min.default', [X], (v) => ({ self: v[0], min: -9007199254740992 }), [i64([4], [9007199254740993n, 9223372036854775807n, -9007199254740992n, -9007199254740992n])]),
  c('clamp_max tensor', 'aten.clamp_max.Tensor', [X, i64([4], [9007199254740995n, 9223372036854775806n, -9223372036854775806n, -9007199254740991n])], (v) => ({ self: v[0], max: v[1] }), [i64([4], [9007199254740993n, 9223372036854775806n, -9223372036854775808n, -9007199254740993n])]),
  c('clamp_max scalar', 'aten.clamp_max.default', [X], (v) => ({ self: v[0], max: 9007199254740992 }), [i64([4], [9007199254740992n, 9007199254740992n, -9223372036854775808n, -9007199254740993n])]),
  c('hardtanh', 'aten.hardtanh.default', [X], (v) => ({ self: v[0] }), [i64([4], [1n, 1n, -1n, -1n])]),
  c('eq', 'aten.eq.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [0, 1, 0, 0])]),
  c('eq scalar', 'aten.eq.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [0, 0, 0, 0])]),
  c('ne', 'aten.ne.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [1, 0, 1, 1])]),
  c('ne scalar', 'aten.ne.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [1, 1, 1, 1])]),
  c('lt', 'aten.lt.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [0, 0, 1, 1])]),
  c('lt scalar', 'aten.lt.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [0, 0, 1, 1])]),
  c('le', 'aten.le.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [0, 1, 1, 1])]),
  c('le scalar', 'aten.le.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [0, 0, 1, 1])]),
  c('gt', 'aten.gt.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [1, 0, 0, 0])]),
  c('gt scalar', 'aten.gt.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [1, 1, 0, 0])]),
  c('ge', 'aten.ge.Tensor', [X, X2], (v) => ({ self: v[0], other: v[1] }), [bool([4], [1, 1, 0, 0])]),
  c('ge scalar', 'aten.ge.Scalar', [X], (v) => ({ self: v[0], other: 9007199254740992 }), [bool([4], [1, 1, 0, 0])]),
  c('where', 'aten.where.self', [bool([4], [1, 0, 0, 1]), X, X2], (v) => ({ condition: v[0], self: v[1], other: v[2] }), [i64([4], [9007199254740993n, 9223372036854775807n, -9223372036854775807n, -9007199254740993n])]),
  c('where scalar self', 'aten.where.ScalarSelf', [bool([4], [1, 0, 0, 1]), X], (v) => ({ condition: v[0], self: 5, other: v[1] }), [i64([4], [5n, 9223372036854775807n, -9223372036854775808n, 5n])]),
  c('where scalar other', 'aten.where.ScalarOther', [bool([4], [1, 0, 0, 1]), X], (v) => ({ condition: v[0], self: v[1], other: 5 }), [i64([4], [9007199254740993n, 5n, 5n, -9007199254740993n])]),
  c('where scalars', 'aten.where.Scalar', [bool([4], [1, 0, 0, 1])], (v) => ({ condition: v[0], self: -9223372036854775808, other: 4611686018427387904 }), [i64([4], [-9223372036854775808n, 4611686018427387904n, 4611686018427387904n, -9223372036854775808n])]),
  c('masked_fill scalar', 'aten.masked_fill.Scalar', [X, bool([4], [1, 0, 0, 1])], (v) => ({ self: v[0], mask: v[1], value: 7 }), [i64([4], [7n, 9223372036854775807n, -9223372036854775808n, 7n])]),
  c('masked_fill tensor', 'aten.masked_fill.Tensor', [X, bool([4], [1, 0, 0, 1]), i64([], [9007199254740995n])], (v) => ({ self: v[0], mask: v[1], value: v[2] }), [i64([4], [9007199254740995n, 9223372036854775807n, -9223372036854775808n, 9007199254740995n])]),
  c('fill scalar', 'aten.fill.Scalar', [X], (v) => ({ self: v[0], value: 7 }), [i64([4], [7n, 7n, 7n, 7n])]),
  c('fill tensor', 'aten.fill.Tensor', [X, i64([], [9007199254740995n])], (v) => ({ self: v[0], value: v[1] }), [i64([4], [9007199254740995n, 9007199254740995n, 9007199254740995n, 9007199254740995n])]),
  c('to float64', 'aten._to_copy.default', [i64([4], [9007199254740993n, 18014399583223809n, -9223372036854775808n, -18014399583223809n])], (v) => ({ self: v[0], dtype: 'float64' }), [f64([4], [9007199254740992.0, 1.801439958322381e+16, -9.223372036854776e+18, -1.801439958322381e+16])]),
  c('to float32', 'aten.to.dtype', [i64([4], [9007199254740993n, 18014399583223809n, -9223372036854775808n, -18014399583223809n])], (v) => ({ self: v[0], dtype: 'float32' }), [f32([4], [9007199254740992, 18014400656965632, -9223372036854775808, -18014400656965632])]),
  // to.device / to.dtype_layout are to.dtype with device and layout arguments.
  c('to.device float32', 'aten.to.device', [i64([4], [9007199254740993n, 18014399583223809n, -9223372036854775808n, -18014399583223809n])], (v) => ({ self: v[0], device: 'cpu', dtype: 'float32' }), [f32([4], [9007199254740992, 18014400656965632, -9223372036854775808, -18014400656965632])]),
  c('to.dtype_layout float32', 'aten.to.dtype_layout', [i64([4], [9007199254740993n, 18014399583223809n, -9223372036854775808n, -18014399583223809n])], (v) => ({ self: v[0], dtype: 'float32', layout: 'strided' }), [f32([4], [9007199254740992, 18014400656965632, -9223372036854775808, -18014400656965632])]),
  c('to int32 (wraps)', 'aten._to_copy.default', [X], (v) => ({ self: v[0], dtype: 'int32' }), [i32([4], [1, -1, 0, -1])]),
  c('float64 to int64 (saturates)', 'aten._to_copy.default', [f64([6], [1e+19, -1e+19, NaN, 1.152921504606847e+18, -2.5, 9007199254740992.0])], (v) => ({ self: v[0], dtype: 'int64' }), [i64([6], [9223372036854775807n, -9223372036854775808n, 0n, 1152921504606846976n, -2n, 9007199254740992n])]),
  c('type_as', 'aten.type_as.default', [i64([4], [9007199254740993n, 18014399583223809n, -9223372036854775808n, -18014399583223809n]), f64([1], [0.0])], (v) => ({ self: v[0], other: v[1] }), [f64([4], [9007199254740992.0, 1.801439958322381e+16, -9.223372036854776e+18, -1.801439958322381e+16])]),
  c('floor', 'aten.floor.default', [X], (v) => ({ self: v[0] }), [X]),
  c('ceil', 'aten.ceil.default', [X], (v) => ({ self: v[0] }), [X]),
  c('trunc', 'aten.trunc.default', [X], (v) => ({ self: v[0] }), [X]),
  c('round', 'aten.round.default', [X], (v) => ({ self: v[0] }), [X]),
  c('clone', 'aten.clone.default', [X], (v) => ({ self: v[0] }), [X]),
  c('alias', 'aten.alias.default', [X], (v) => ({ self: v[0] }), [X]),
  c('lift_fresh_copy', 'aten.lift_fresh_copy.default', [X], (v) => ({ self: v[0] }), [X]),
  c('detach', 'aten.detach.default', [X], (v) => ({ self: v[0] }), [X]),
  c('contiguous', 'aten.contiguous.default', [X], (v) => ({ self: v[0] }), [X]),
  c('round decimals', 'aten.round.decimals', [X], (v) => ({ self: v[0], decimals: 0 }), [X]),
  c('dropout', 'aten.dropout.default', [X], (v) => ({ input: v[0], p: 0.5, train: false }), [X]),
  c('sum', 'aten.sum.default', [X], (v) => ({ self: v[0] }), [i64([], [-1n])]),
  c('sum dim', 'aten.sum.dim_IntList', [M], (v) => ({ self: v[0], dim: [1] }), [i64([2], [18014398509481987n, 0n])]),
  c('sum of int32 into int64', 'aten.sum.default', [i32([3], [2147483647, 2147483647, 2147483647])], (v) => ({ self: v[0] }), [i64([], [6442450941n])]),
  c('prod', 'aten.prod.default', [i64([3], [9007199254740993n, 3n, -1n])], (v) => ({ self: v[0] }), [i64([], [-27021597764222979n])]),
  c('prod dim', 'aten.prod.dim_int', [M], (v) => ({ self: v[0], dim: 1 }), [i64([2], [18014398509481985n, -9223372036854775808n])]),
  c('cumsum', 'aten.cumsum.default', [X], (v) => ({ self: v[0], dim: 0 }), [i64([4], [9007199254740993n, -9214364837600034816n, 9007199254740992n, -1n])]),
  c('cumsum onnx exclusive reverse', 'trt.cumsum_onnx', [X], (v) => ({ self: v[0], dim: 0, exclusive: true, reverse: true }), [i64([4], [-9007199254740994n, 9214364837600034815n, -9007199254740993n, 0n])]),
  c('amax', 'aten.amax.default', [M], (v) => ({ self: v[0], dim: [1] }), [i64([2], [9007199254740993n, 9223372036854775807n])]),
  c('amin', 'aten.amin.default', [T], (v) => ({ self: v[0] }), [i64([], [9007199254740991n])]),
  c('max', 'aten.max.default', [T], (v) => ({ self: v[0] }), [i64([], [9007199254740993n])]),
  c('min', 'aten.min.default', [X2], (v) => ({ self: v[0] }), [i64([], [-9223372036854775807n])]),
  c('max dim', 'aten.max.dim', [i64([2, 3], [9007199254740992n, 9007199254740993n, 9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], dim: 1 }), [i64([2], [9007199254740993n, 9007199254740993n]), i64([2], [1n, 0n])]),
  c('min dim', 'aten.min.dim', [i64([2, 3], [9007199254740992n, 9007199254740993n, 9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], dim: 1 }), [i64([2], [9007199254740992n, -9007199254740993n]), i64([2], [0n, 1n])]),
  c('argmax', 'aten.argmax.default', [T], (v) => ({ self: v[0] }), [i64([], [1n])]),
  c('argmin', 'aten.argmin.default', [T], (v) => ({ self: v[0], dim: 0 }), [i64([], [3n])]),
  c('argmax last', 'trt.argmax_last', [T], (v) => ({ self: v[0], dim: 0 }), [i64([], [1n])]),
  c('argmin last', 'trt.argmin_last', [i64([4], [9007199254740993n, 9007199254740992n, 9007199254740993n, 9007199254740992n])], (v) => ({ self: v[0], dim: 0 }), [i64([], [3n])]),
  c('gather', 'aten.gather.default', [M, i64([2, 2], [2n, 0n, 1n, -1n])], (v) => ({ self: v[0], dim: 1, index: v[1] }), [i64([2, 2], [1n, 9007199254740993n, 1n, -9223372036854775808n])]),
  c('index_select', 'aten.index_select.default', [X, i64([3], [3n, 0n, -3n])], (v) => ({ self: v[0], dim: 0, index: v[1] }), [i64([3], [-9007199254740993n, 9007199254740993n, 9223372036854775807n])]),
  c('embedding', 'aten.embedding.default', [i64([4, 1], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n]), i64([2], [2n, 0n])], (v) => ({ weight: v[0], indices: v[1] }), [i64([2, 1], [-9223372036854775808n, 9007199254740993n])]),
  c('index', 'aten.index.Tensor', [X, i64([2], [-1n, 1n])], (v) => ({ self: v[0], indices: [v[1]] }), [i64([2], [-9007199254740993n, 9223372036854775807n])]),
  c('index_put', 'aten.index_put.default', [X, i64([2], [0n, 3n]), i64([2], [9223372036854775807n, 5n])], (v) => ({ self: v[0], indices: [v[1]], values: v[2] }), [i64([4], [9223372036854775807n, 9223372036854775807n, -9223372036854775808n, 5n])]),
  c('index_put accumulate', 'aten.index_put.default', [X, i64([3], [0n, 1n, 0n]), i64([3], [1n, 1n, 2n])], (v) => ({ self: v[0], indices: [v[1]], values: v[2], accumulate: true }), [i64([4], [9007199254740996n, -9223372036854775808n, -9223372036854775808n, -9007199254740993n])]),
  c('scatter src', 'aten.scatter.src', [X, i64([2], [3n, 0n]), i64([2], [9223372036854775807n, -9223372036854775808n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2] }), [i64([4], [-9223372036854775808n, 9223372036854775807n, -9223372036854775808n, 9223372036854775807n])]),
  c('scatter value', 'aten.scatter.value', [X, i64([1], [2n])], (v) => ({ self: v[0], dim: 0, index: v[1], value: 9007199254740992 }), [i64([4], [9007199254740993n, 9223372036854775807n, 9007199254740992n, -9007199254740993n])]),
  c('scatter_add', 'aten.scatter_add.default', [X, i64([3], [0n, 0n, 1n]), i64([3], [1n, 1n, 1n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2] }), [i64([4], [9007199254740995n, -9223372036854775808n, -9223372036854775808n, -9007199254740993n])]),
  c('scatter reduce multiply', 'aten.scatter.reduce', [X, i64([2], [0n, 3n]), i64([2], [3n, -1n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'multiply' }), [i64([4], [27021597764222979n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n])]),
  c('scatter_reduce amax', 'aten.scatter_reduce.two', [X, i64([2], [0n, 0n]), i64([2], [9007199254740994n, 9007199254740992n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'amax' }), [i64([4], [9007199254740994n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('scatter_reduce amin', 'aten.scatter_reduce.two', [X, i64([2], [3n, 3n]), i64([2], [-9007199254740992n, -9007199254740994n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'amin' }), [i64([4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740994n])]),
  c('scatter_reduce sum', 'aten.scatter_reduce.two', [X, i64([2], [1n, 1n]), i64([2], [1n, 1n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'sum' }), [i64([4], [9007199254740993n, -9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('scatter_reduce prod', 'aten.scatter_reduce.two', [X, i64([2], [0n, 0n]), i64([2], [2n, 2n])], (v) => ({ self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'prod' }), [i64([4], [36028797018963972n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('select_scatter', 'aten.select_scatter.default', [M, i64([3], [-9223372036854775808n, 9223372036854775807n, 9007199254740993n])], (v) => ({ self: v[0], src: v[1], dim: 0, index: -1 }), [i64([2, 3], [9007199254740993n, 9007199254740993n, 1n, -9223372036854775808n, 9223372036854775807n, 9007199254740993n])]),
  c('slice_scatter', 'aten.slice_scatter.default', [X, i64([2], [-9223372036854775808n, 9223372036854775807n])], (v) => ({ self: v[0], src: v[1], dim: 0, start: 1, end: 4, step: 2 }), [i64([4], [9007199254740993n, -9223372036854775808n, -9223372036854775808n, 9223372036854775807n])]),
  c('gather_nd', 'trt.gather_nd', [M, i64([2, 2], [1n, 2n, 0n, -3n])], (v) => ({ self: v[0], indices: v[1] }), [i64([2], [-9223372036854775808n, 9007199254740993n])]),
  c('scatter_nd add', 'trt.scatter_nd', [M, i64([2, 2], [1n, 1n, 1n, 1n]), i64([2], [9223372036854775807n, 1n])], (v) => ({ self: v[0], indices: v[1], updates: v[2], reduction: 'add' }), [i64([2, 3], [9007199254740993n, 9007199254740993n, 1n, 9223372036854775807n, -9223372036854775807n, -9223372036854775808n])]),
  c('topk', 'aten.topk.default', [T], (v) => ({ self: v[0], k: 2 }), [i64([2], [9007199254740993n, 9007199254740992n]), i64([2], [1n, 0n])]),
  c('one_hot values', 'trt.one_hot', [i64([2], [1n, -1n]), i64([2], [-9223372036854775808n, 9223372036854775807n])], (v) => ({ indices: v[0], depth: 3, values: v[1] }), [i64([2, 3], [-9223372036854775808n, 9223372036854775807n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, 9223372036854775807n])]),
  c('view', 'aten.view.default', [X], (v) => ({ self: v[0], size: [2, 2] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('_unsafe_view', 'aten._unsafe_view.default', [X], (v) => ({ self: v[0], size: [2, 2] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('reshape', 'aten.reshape.default', [X], (v) => ({ self: v[0], shape: [4, 1] }), [i64([4, 1], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('permute', 'aten.permute.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dims: [1, 0] }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('transpose', 'aten.transpose.int', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dim0: 0, dim1: 1 }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('t', 'aten.t.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('flatten', 'aten.flatten.using_ints', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [X]),
  c('unflatten', 'aten.unflatten.int', [X], (v) => ({ self: v[0], dim: 0, sizes: [2, 2] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('squeeze', 'aten.squeeze.default', [i64([1, 4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [X]),
  c('squeeze dim', 'aten.squeeze.dim', [i64([1, 4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dim: 0 }), [X]),
  c('squeeze dims', 'aten.squeeze.dims', [i64([1, 4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dim: [0] }), [X]),
  c('unsqueeze', 'aten.unsqueeze.default', [X], (v) => ({ self: v[0], dim: 0 }), [i64([1, 4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('cat', 'aten.cat.default', [X, X2], (v) => ({ tensors: [v[0], v[1]] }), [i64([8], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n, 9007199254740992n, 9223372036854775807n, -9223372036854775807n, -9007199254740992n])]),
  c('stack', 'aten.stack.default', [X, X2], (v) => ({ tensors: [v[0], v[1]] }), [i64([2, 4], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n, 9007199254740992n, 9223372036854775807n, -9223372036854775807n, -9007199254740992n])]),
  c('split', 'aten.split.Tensor', [X], (v) => ({ self: v[0], split_size: 3 }), [i64([3], [9007199254740993n, 9223372036854775807n, -9223372036854775808n]), i64([1], [-9007199254740993n])]),
  c('split_with_sizes', 'aten.split_with_sizes.default', [X], (v) => ({ self: v[0], split_sizes: [1, 3] }), [i64([1], [9007199254740993n]), i64([3], [9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('chunk', 'aten.chunk.default', [X], (v) => ({ self: v[0], chunks: 2 }), [i64([2], [9007199254740993n, 9223372036854775807n]), i64([2], [-9223372036854775808n, -9007199254740993n])]),
  c('unbind', 'aten.unbind.int', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [i64([2], [9007199254740993n, 9223372036854775807n]), i64([2], [-9223372036854775808n, -9007199254740993n])]),
  c('expand', 'aten.expand.default', [i64([1, 2], [9007199254740993n, 9223372036854775807n])], (v) => ({ self: v[0], size: [2, 2] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, 9007199254740993n, 9223372036854775807n])]),
  c('expand_as', 'aten.expand_as.default', [i64([1, 2], [9007199254740993n, 9223372036854775807n]), i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], other: v[1] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, 9007199254740993n, 9223372036854775807n])]),
  c('flip', 'aten.flip.default', [X], (v) => ({ self: v[0], dims: [0] }), [i64([4], [-9007199254740993n, -9223372036854775808n, 9223372036854775807n, 9007199254740993n])]),
  c('repeat', 'aten.repeat.default', [i64([2], [9007199254740993n, 9223372036854775807n])], (v) => ({ self: v[0], repeats: [2] }), [i64([4], [9007199254740993n, 9223372036854775807n, 9007199254740993n, 9223372036854775807n])]),
  c('repeat_interleave', 'aten.repeat_interleave.self_int', [i64([2], [9007199254740993n, 9223372036854775807n])], (v) => ({ self: v[0], repeats: 2 }), [i64([4], [9007199254740993n, 9007199254740993n, 9223372036854775807n, 9223372036854775807n])]),
  c('roll', 'aten.roll.default', [X], (v) => ({ self: v[0], shifts: [1], dims: [0] }), [i64([4], [-9007199254740993n, 9007199254740993n, 9223372036854775807n, -9223372036854775808n])]),
  c('narrow', 'aten.narrow.default', [X], (v) => ({ self: v[0], dim: 0, start: 1, length: 2 }), [i64([2], [9223372036854775807n, -9223372036854775808n])]),
  c('select', 'aten.select.int', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dim: 0, index: -1 }), [i64([2], [-9223372036854775808n, -9007199254740993n])]),
  c('slice', 'aten.slice.Tensor', [X], (v) => ({ self: v[0], dim: 0, start: 1, end: 4, step: 2 }), [i64([2], [9223372036854775807n, -9007199254740993n])]),
  c('slice onnx', 'trt.slice_onnx', [X], (v) => ({ self: v[0], dim: 0, start: -1, end: -5, step: -2 }), [i64([2], [-9007199254740993n, 9223372036854775807n])]),
  c('tril', 'aten.tril.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [i64([2, 2], [9007199254740993n, 0n, -9223372036854775808n, -9007199254740993n])]),
  c('triu', 'aten.triu.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [i64([2, 2], [9007199254740993n, 9223372036854775807n, 0n, -9007199254740993n])]),
  c('constant_pad_nd', 'aten.constant_pad_nd.default', [X], (v) => ({ self: v[0], pad: [1, 0], value: -9223372036854775808 }), [i64([5], [-9223372036854775808n, 9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])]),
  c('pad', 'aten.pad.default', [X], (v) => ({ self: v[0], pad: [0, 1], mode: 'constant', value: 4611686018427387904 }), [i64([5], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n, 4611686018427387904n])]),
  c('upsample_nearest2d', 'aten.upsample_nearest2d.vec', [i64([1, 1, 1, 2], [9007199254740993n, 9223372036854775807n])], (v) => ({ input: v[0], output_size: [1, 4], scale_factors: null }), [i64([1, 1, 1, 4], [9007199254740993n, 9007199254740993n, 9223372036854775807n, 9223372036854775807n])]),
  c('resize nearest', 'trt.resize', [i64([1, 1, 1, 2], [9007199254740993n, 9223372036854775807n])], (v) => ({ self: v[0], size: [1, 4], mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' }), [i64([1, 1, 1, 4], [9007199254740993n, 9007199254740993n, 9223372036854775807n, 9223372036854775807n])]),
  c('full', 'aten.full.default', [], (v) => ({ size: [2], fill_value: -9223372036854775808, dtype: 'int64' }), [i64([2], [-9223372036854775808n, -9223372036854775808n])]),
  c('full_like', 'aten.full_like.default', [X], (v) => ({ self: v[0], fill_value: 4611686018427387904 }), [i64([4], [4611686018427387904n, 4611686018427387904n, 4611686018427387904n, 4611686018427387904n])]),
  c('new_full', 'aten.new_full.default', [X], (v) => ({ self: v[0], size: [1], fill_value: -9223372036854775808 }), [i64([1], [-9223372036854775808n])]),
  c('zeros', 'aten.zeros.default', [], (v) => ({ size: [2], dtype: 'int64' }), [i64([2], [0n, 0n])]),
  c('zeros_like', 'aten.zeros_like.default', [X], (v) => ({ self: v[0] }), [i64([4], [0n, 0n, 0n, 0n])]),
  c('new_zeros', 'aten.new_zeros.default', [X], (v) => ({ self: v[0], size: [1] }), [i64([1], [0n])]),
  c('zero', 'aten.zero.default', [X], (v) => ({ self: v[0] }), [i64([4], [0n, 0n, 0n, 0n])]),
  c('diff', 'aten.diff.default', [i64([3], [9007199254740993n, 9223372036854775807n, 9223372036854775806n])], (v) => ({ self: v[0], n: 1, dim: -1, prepend: null, append: null }), [i64([2], [9214364837600034814n, -1n])]),
  c('einsum (a transpose)', 'aten.einsum.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ equation: 'ij->ji', tensors: [v[0]] }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('swapaxes', 'aten.swapaxes.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], axis0: 0, axis1: 1 }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('swapdims', 'aten.swapdims.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0], dim0: 1, dim1: 0 }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('ones', 'aten.ones.default', [], (v) => ({ size: [2], dtype: 'int64' }), [i64([2], [1n, 1n])]),
  c('ones_like', 'aten.ones_like.default', [X], (v) => ({ self: v[0] }), [i64([4], [1n, 1n, 1n, 1n])]),
  c('new_ones', 'aten.new_ones.default', [X], (v) => ({ self: v[0], size: [1] }), [i64([1], [1n])]),
  c('arange', 'aten.arange.start', [], (v) => ({ start: 9007199254740992, end: 9007199254740996, dtype: 'int64' }), [i64([4], [9007199254740992n, 9007199254740993n, 9007199254740994n, 9007199254740995n])]),
  c('arange step', 'aten.arange.start_step', [], (v) => ({ start: -9007199254740992, end: -9007199254741000, step: -3, dtype: 'int64' }), [i64([3], [-9007199254740992n, -9007199254740995n, -9007199254740998n])]),
  c('arange end', 'aten.arange.default', [], (v) => ({ end: 3, dtype: 'int64' }), [i64([3], [0n, 1n, 2n])]),
  c('max_pool1d', 'aten.max_pool1d.default', [i64([1, 1, 4], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [2] }), [i64([1, 1, 2], [9007199254740993n, -9007199254740992n])]),
  c('max_pool1d_with_indices', 'aten.max_pool1d_with_indices.default', [i64([1, 1, 4], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [2] }), [i64([1, 1, 2], [9007199254740993n, -9007199254740992n]), i64([1, 1, 2], [1n, 3n])]),
  c('adaptive_max_pool1d', 'aten.adaptive_max_pool1d.default', [i64([1, 1, 4], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], output_size: [2] }), [i64([1, 1, 2], [9007199254740993n, -9007199254740992n]), i64([1, 1, 2], [1n, 3n])]),
  c('max_pool2d', 'aten.max_pool2d.default', [i64([1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [1, 2] }), [i64([1, 1, 2, 1], [9007199254740993n, -9007199254740992n])]),
  c('max_pool2d_with_indices', 'aten.max_pool2d_with_indices.default', [i64([1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [1, 2] }), [i64([1, 1, 2, 1], [9007199254740993n, -9007199254740992n]), i64([1, 1, 2, 1], [1n, 3n])]),
  c('adaptive_max_pool2d', 'aten.adaptive_max_pool2d.default', [i64([1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], output_size: [2, 1] }), [i64([1, 1, 2, 1], [9007199254740993n, -9007199254740992n]), i64([1, 1, 2, 1], [1n, 3n])]),
  c('max_pool3d', 'aten.max_pool3d.default', [i64([1, 1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [1, 1, 2] }), [i64([1, 1, 1, 2, 1], [9007199254740993n, -9007199254740992n])]),
  c('max_pool3d_with_indices', 'aten.max_pool3d_with_indices.default', [i64([1, 1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [1, 1, 2] }), [i64([1, 1, 1, 2, 1], [9007199254740993n, -9007199254740992n]), i64([1, 1, 1, 2, 1], [1n, 3n])]),
  c('adaptive_max_pool3d', 'aten.adaptive_max_pool3d.default', [i64([1, 1, 1, 2, 2], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], output_size: [1, 2, 1] }), [i64([1, 1, 1, 2, 1], [9007199254740993n, -9007199254740992n]), i64([1, 1, 1, 2, 1], [1n, 3n])]),
  c('max_pool padded', 'trt.max_pool_padded', [i64([1, 1, 4], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [2], stride: [2], pads_begin: [0], pads_end: [0], dilation: [1] }), [i64([1, 1, 2], [9007199254740993n, -9007199254740992n])]),
  c('max_pool onnx indices', 'trt.max_pool_onnx_indices', [i64([1, 1, 4], [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740992n])], (v) => ({ self: v[0], kernel_size: [2], stride: [2], pads_begin: [0], pads_end: [0], dilation: [1] }), [i64([1, 1, 2], [9007199254740993n, -9007199254740992n]), i64([1, 1, 2], [1n, 3n])]),
  c('mm', 'aten.mm.default', [i64([2, 2], [9007199254740993n, 1n, 2n, 3n]), i64([2, 2], [3n, 9223372036854775807n, 1n, -1n])], (v) => ({ self: v[0], mat2: v[1] }), [i64([2, 2], [27021597764222980n, 9214364837600034814n, 9n, -5n])]),
  c('matmul', 'aten.matmul.default', [i64([2, 2], [9007199254740993n, 1n, 2n, 3n]), i64([2, 2], [3n, 9223372036854775807n, 1n, -1n])], (v) => ({ self: v[0], other: v[1] }), [i64([2, 2], [27021597764222980n, 9214364837600034814n, 9n, -5n])]),
  c('bmm', 'aten.bmm.default', [i64([1, 2, 2], [9007199254740993n, 1n, 2n, 3n]), i64([1, 2, 2], [3n, 9223372036854775807n, 1n, -1n])], (v) => ({ self: v[0], mat2: v[1] }), [i64([1, 2, 2], [27021597764222980n, 9214364837600034814n, 9n, -5n])]),
  c('linear', 'aten.linear.default', [i64([2, 2], [9007199254740993n, 1n, 2n, 3n]), i64([2, 2], [3n, 1n, 9223372036854775807n, -1n]), i64([2], [1n, 1n])], (v) => ({ input: v[0], weight: v[1], bias: v[2] }), [i64([2, 2], [27021597764222981n, 9214364837600034815n, 10n, -4n])]),
  c('numpy_T', 'aten.numpy_T.default', [i64([2, 2], [9007199254740993n, 9223372036854775807n, -9223372036854775808n, -9007199254740993n])], (v) => ({ self: v[0] }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9223372036854775807n, -9007199254740993n])]),
  c('copy', 'aten.copy.default', [i64([2, 2], [0n, 0n, 0n, 0n]), i64([2], [9007199254740993n, -9223372036854775808n])], (v) => ({ self: v[0], src: v[1] }), [i64([2, 2], [9007199254740993n, -9223372036854775808n, 9007199254740993n, -9223372036854775808n])]),
  c('meshgrid ij', 'aten.meshgrid.indexing', [i64([2], [9007199254740993n, -9223372036854775808n]), i64([1], [9223372036854775807n])], (v) => ({ tensors: [v[0], v[1]], indexing: 'ij' }), [
    i64([2, 1], [9007199254740993n, -9223372036854775808n]), i64([2, 1], [9223372036854775807n, 9223372036854775807n]),
  ]),
  c('meshgrid default', 'aten.meshgrid.default', [i64([1], [9223372036854775807n]), i64([2], [9007199254740993n, -9007199254740993n])], (v) => ({ tensors: [v[0], v[1]] }), [
    i64([1, 2], [9223372036854775807n, 9223372036854775807n]), i64([1, 2], [9007199254740993n, -9007199254740993n]),
  ]),
  // 3·((2^53 + 1)·3 + INT64_MAX) + 2·1, wrapped.
  c('baddbmm', 'aten.baddbmm.default', [i64([1], [1n]), i64([1, 1, 2], [9007199254740993n, 1n]), i64([1, 2, 1], [3n, 9223372036854775807n])], (v) => ({ self: v[0], batch1: v[1], batch2: v[2], beta: 2, alpha: 3 }), [i64([1, 1, 1], [-9142307243562106872n])]),
  c('addmm', 'aten.addmm.default', [i64([2], [1n, -1n]), i64([2, 2], [9007199254740993n, 1n, 2n, 3n]), i64([2, 2], [3n, 9223372036854775807n, 1n, -1n])], (v) => ({ self: v[0], mat1: v[1], mat2: v[2], beta: 2, alpha: 3 }), [i64([2, 2], [81064793292668942n, 9196350439090552824n, 29n, -17n])]),
];

/**
 * The ops of the interpreter's table that never produce int64 data from int64 values, and
 * why. Every implemented op is either here or in CASES (checked below), so a new op cannot
 * slip past this test.
 */
const NOT_INT64: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    [
      'exp', 'log', 'log1p', 'sqrt', 'rsqrt', 'reciprocal', 'sin', 'cos', 'tan', 'tanh', 'sigmoid', 'erf', 'isnan', 'isinf',
      'angle', 'atan2', 'div.Tensor', 'div.Scalar', 'mean.default', 'mean.dim', 'linalg_vector_norm', 'logsumexp',
    ].map((op) => [`aten.${op}`.replace(/^(aten\.[a-z_0-9]+)$/, '$1.default'), 'a float result (integer input is promoted to float)']),
  ),
  ...Object.fromEntries(
    [
      'gelu', 'silu', 'hardswish', 'hardsigmoid', 'leaky_relu', 'elu', 'softplus', '_prelu_kernel', 'softmax.int', '_softmax',
      'log_softmax.int', '_log_softmax', 'layer_norm', 'native_layer_norm', 'group_norm', 'native_group_norm', 'batch_norm',
      '_native_batch_norm_legit_no_training', 'rms_norm', 'scaled_dot_product_attention', 'upsample_bilinear2d.vec',
    ].map((op) => [op.includes('.') ? `aten.${op}` : `aten.${op}.default`, 'floating-point input only, as in PyTorch']),
  ),
  'trt.hardsigmoid_onnx': 'floating-point input only',
  ...Object.fromEntries(
    ['string_concat', 'string_constant', 'string_equal', 'string_normalizer', 'string_split', 'regex_full_match'].map((op) => [`trt.${op}`, 'computes on strings, not numbers']),
  ),
  ...Object.fromEntries(
    ['label_encoder'].map((op) => [`trt.${op}`, 'a lookup: int64 keys compared by their exact digits (bigints), values copied as stored']),
  ),
  ...Object.fromEntries(
    ['sequence_empty', 'sequence_construct', 'sequence_insert', 'sequence_erase', 'sequence_at', 'sequence_length', 'split_to_sequence', 'concat_from_sequence', 'sequence_map', 'optional', 'optional_none', 'optional_has_element', 'optional_get_element'].map((op) => [
      `trt.${op}`,
      'moves tensors whole (int64 data passes through untouched; test/frontends/onnx/strings-sequences.test.ts)',
    ]),
  ),
  'aten.logical_and.default': 'bool output of truth values (nonzero int64 stays nonzero through float64)',
  'aten.logical_or.default': 'bool output of truth values',
  'aten.logical_xor.default': 'bool output of truth values',
  'aten.logical_not.default': 'bool output of truth values',
  ...Object.fromEntries(
    ['and', 'or', 'xor'].flatMap((op) => [`aten.__${op}__.Tensor`, `aten.bitwise_${op}.Tensor`]).map((op) => [op, 'bool operands only (integer bitwise arithmetic is refused)']),
  ),
  'aten.one_hot.default': 'outputs 0/1; its int64 indices are range-checked',
  'aten.scalar_tensor.default': 'takes a JS number, exact only up to 2^53 (an IR scalar)',
  'aten.sym_size.int': 'a SymInt (a dim), not tensor data',
  ...Object.fromEntries(['add', 'sub', 'mul', 'floordiv', 'mod', 'max', 'min'].map((op) => [`sym.${op}`, 'SymInt arithmetic on dims'])),
  ...Object.fromEntries(
    ['size', 'shape', 'sym_add', 'sym_sub', 'sym_mul', 'sym_floordiv', 'sym_mod', 'sym_max', 'sym_min', 'sym_list', 'reshape', 'expand', 'slice', 'select', 'full', 'arange'].map(
      (op) => [`trt.${op}_dyn`, 'a shape-tensor op (legalized dynamic shapes): its int64 values are dims'],
    ),
  ),
  'trt.sym_tensor': 'a shape tensor built from SymInts (dims)',
  'trt.all_reduce': 'tensor-parallel reduction of float activations',
  'aten.linalg_det.default': 'floating-point input only (ONNX Det)',
  'trt.linear_attention': 'floating-point input only (ONNX LinearAttention)',
  'trt.tree_ensemble': 'int64 features are compared after conversion to float32, as onnxruntime does; the result is float',
  'trt.tree_ensemble_classifier': 'int64 features are compared after conversion to float32, as onnxruntime does; int64 labels are copied from classlabels_int64s',
  'trt.roi_align': 'floating-point input only (ONNX RoiAlign); its int64 batch indices are range-checked',
  'trt.dropout_onnx': 'floating-point input only (ONNX Dropout)',
  'trt.quantize_linear': 'floating-point input; quantized outputs of at most 32 bits (ONNX QuantizeLinear)',
  'trt.dequantize_linear': 'quantized input of at most 32 bits (ONNX DequantizeLinear takes no int64)',
  ...Object.fromEntries(
    ['quantize_per_tensor.default', 'quantize_per_tensor.tensor', 'quantize_per_channel.default', 'dequantize_per_tensor.default', 'dequantize_per_tensor.tensor', 'dequantize_per_channel.default'].map((op) => [
      `quantized_decomposed.${op}`,
      'PyTorch quantization of float tensors to 8/16/32-bit integers and back: no int64',
    ]),
  ),
  ...Object.fromEntries(
    ['trt.nonzero', 'trt.compress', 'trt.unique', 'trt.non_max_suppression'].map((op) => [
      op,
      'a data-dependent output size (a graph symbol the single-node graphs here do not declare): the kernels are checked past 2^53 below',
    ]),
  ),
  'aten.masked_select.default': 'a data-dependent output size; its elements are copied by the kernel of aten.index.Tensor, covered here',
  ...Object.fromEntries(['trt.if', 'trt.loop', 'trt.scan'].map((op) => [op, "control flow: runs its subgraphs' ops, each covered here"])),
  'trt.deferred_node': "a frontend's node imported at run time: runs the op the node maps to, covered here",
  'aten.view_as_complex.default': 'complex',
  'aten.view_as_real.default': 'complex',
  'aten.polar.default': 'complex',
  'aten.real.default': 'complex',
  'aten.imag.default': 'complex',
  'aten.conj_physical.default': 'complex',
  'aten._conj.default': 'complex',
  'trt.complex_mul': 'complex',
  ...Object.fromEntries(
    [
      'aten.convolution.default', 'aten.conv1d.default', 'aten.conv2d.default', 'aten.conv3d.default', 'aten.conv1d.padding',
      'aten.conv2d.padding', 'aten.conv3d.padding', 'aten.conv_transpose1d.default', 'aten.conv_transpose2d.input',
      'aten.conv_transpose3d.input', 'trt.conv_padded', 'trt.conv_transpose_padded',
    ].map((op) => [op, 'KNOWN GAP: int64 convolution accumulates in float64 (PyTorch has no CPU int64 convolution)']),
  ),
  ...Object.fromEntries(
    [
      'aten.avg_pool1d.default', 'aten.avg_pool2d.default', 'aten.avg_pool3d.default', 'aten.adaptive_avg_pool1d.default',
      'aten.adaptive_avg_pool2d.default', 'aten.adaptive_avg_pool3d.default', 'aten._adaptive_avg_pool2d.default',
      'aten._adaptive_avg_pool3d.default', 'trt.avg_pool_padded',
    ].map((op) => [op, 'KNOWN GAP: int64 average pooling sums in float64']),
  ),
};

/** The elements as exact strings (bigints for int64, bits-free numbers otherwise). */
const exact = (t: Tensor): string[] => Array.from(t.data as ArrayLike<number | bigint>, (v) => String(v));

function expectSame(actual: Tensor | undefined, expected: Tensor, label: string): void {
  expect({ label, dtype: actual?.dtype, shape: actual?.shape, values: actual === undefined ? [] : exact(actual) }).toEqual({
    label,
    dtype: expected.dtype,
    shape: expected.shape,
    values: exact(expected),
  });
}

/** One graph holding every case: case k reads inputs `c{k}_in{j}` (or constants) and gives its outputs in order. */
function combinedGraph(asConstants: boolean): { graph: Graph; feeds: Tensor[] } {
  const graph = new Graph('int64_cases');
  const feeds: Tensor[] = [];
  const outputs: Value[] = [];
  CASES.forEach((k, i) => {
    const values = k.inputs.map((t, j) => {
      if (asConstants) return graph.addConstant(`c${i}_k${j}`, t);
      feeds.push(t);
      return graph.addInput(`c${i}_in${j}`, tensorType(t.dtype, [...t.shape]));
    });
    outputs.push(...call(graph, k.target, k.args(values), { name: `case${i}` }).outputs);
  });
  graph.setOutputs(outputs);
  return { graph, feeds };
}

function expectAllCases(results: readonly Tensor[], how: string): void {
  let at = 0;
  for (const k of CASES) for (const [j, want] of k.expected.entries()) expectSame(results[at++], want, `${k.name} (${k.target}) output ${j}, ${how}`);
  expect(results).toHaveLength(at);
}

describe('int64 past 2^53', () => {
  it('covers every op of the interpreter table (CASES or NOT_INT64 with a reason)', () => {
    const tested = new Set(CASES.map((k) => k.target));
    const missing = implementedOps().filter((op) => !tested.has(op) && NOT_INT64[op] === undefined);
    expect(missing).toEqual([]);
    expect(Object.keys(NOT_INT64).filter((op) => tested.has(op))).toEqual([]);
    expect(Object.keys(NOT_INT64).filter((op) => !implementedOps().includes(op))).toEqual([]);
  });

  it.each(CASES.map((k) => [k.name, k] as const))('interpret: %s', (_name, k) => {
    const graph = new Graph(k.target);
    const values = k.inputs.map((t, j) => graph.addInput(`in${j}`, tensorType(t.dtype, [...t.shape])));
    graph.setOutputs(call(graph, k.target, k.args(values)).outputs);
    const results = interpret(graph, k.inputs);
    expect(results).toHaveLength(k.expected.length);
    k.expected.forEach((want, j) => expectSame(results[j], want, `output ${j}`));
  });

  it('compile + run on the reference backend: every case in one program', async () => {
    const { graph, feeds } = combinedGraph(false);
    const program = await compile(graph, { backend: 'reference', minBlockSize: 1 });
    try {
      // Most cases must really run as network layers in an engine segment (reference backend), not fall back.
      const converted = program.report.segments.filter((s) => s.kind === 'engine').reduce((n, s) => n + s.ops, 0);
      expect(converted).toBeGreaterThan(CASES.length / 2);
      expectAllCases(await program.run(feeds), 'compiled');
    } finally {
      await program.dispose();
    }
  }, 60_000);

  it('constant folding computes every case exactly at compile time', async () => {
    const { graph } = combinedGraph(true);
    const program = await compile(graph, { backend: 'reference' });
    try {
      expectAllCases(await program.run([]), 'folded');
    } finally {
      await program.dispose();
    }
  }, 60_000);
});

describe('int64 past 2^53 in the kernels of data-dependent sizes', () => {
  const K = i64([5], [9007199254740993n, 0n, 9007199254740992n, 9007199254740993n, 0n]);
  it('unique keeps 2^53 and 2^53 + 1 apart', () => {
    const r = unique(K, null, true);
    expect(r.values.data).toEqual(BigInt64Array.from([0n, 9007199254740992n, 9007199254740993n]));
    expect(r.counts.data).toEqual(BigInt64Array.from([2n, 1n, 2n]));
  });
  it('nonzero and compress read int64 values exactly', () => {
    expect(nonzero(K).data).toEqual(BigInt64Array.from([0n, 2n, 3n]));
    expect(compress(K, Tensor.from('bool', [5], [1, 0, 1, 0, 0]), 0).data).toEqual(BigInt64Array.from([9007199254740993n, 9007199254740992n]));
  });
});
