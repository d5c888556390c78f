/**
 * int16, uint16, uint32 and uint64 end to end on the CPU kernels: dtype facts, exact values
 * (uint64 past 2^53 as bigints), conversions that wrap as C and ONNX Cast do, and integer
 * arithmetic against hand-computed results (ONNX Div truncates toward zero, Mod follows the
 * divisor's sign unless fmod). Every expectation here was worked out by hand from the
 * two's-complement definitions, not by running the code.
 */
import { inspect } from 'node:util';

import { InvalidArgumentError } from '../../lib/errors';
import { dtypeInfo, integerRange, isInteger, isUnsigned, promoteTypes, type DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';
import { fromNumbers, readNumbers } from '../../lib/kernels/access';
import { add, div, eq, fmod, gt, lt, maximum, minimum, mul, remainder, sub, where } from '../../lib/kernels/elementwise';
import { matmul } from '../../lib/kernels/linalg';
import { readNpy, writeNpy } from '../../lib/kernels/npy';
import { maxPool } from '../../lib/kernels/pool';
import { amax, amin, argmax, cumsum, prod, sum } from '../../lib/kernels/reduce';
import { abs, cast, clamp, neg } from '../../lib/kernels/unary';

const TWO_53 = 2n ** 53n;
const U64_MAX = 2n ** 64n - 1n;
const bigints = (t: Tensor): bigint[] => Array.from(t.data as BigUint64Array | BigInt64Array);
const numbers = (t: Tensor): number[] => Array.from(t.data as Uint32Array);
const u64 = (values: bigint[]): Tensor => Tensor.from('uint64', [values.length], values);

describe('dtype facts', () => {
  test.each([
    ['int16', 2, 'Int16Array', [-32768n, 32767n], false],
    ['uint16', 2, 'Uint16Array', [0n, 65535n], true],
    ['uint32', 4, 'Uint32Array', [0n, 4294967295n], true],
    ['uint64', 8, 'BigUint64Array', [0n, U64_MAX], true],
  ] as const)('%s: %d bytes in a %s, range %j', (dtype, bytes, storage, range, unsigned) => {
    const info = dtypeInfo(dtype);
    expect([info.kind, info.itemBytes, info.storage.name]).toEqual(['int', bytes, storage]);
    expect(isInteger(dtype)).toBe(true);
    expect(isUnsigned(dtype)).toBe(unsigned);
    expect(integerRange(dtype)).toEqual(range);
  });

  test.each([
    ['uint8', 'int8', 'int16'],
    ['uint16', 'int16', 'int32'],
    ['uint16', 'int8', 'int32'],
    ['uint32', 'int32', 'int64'],
    ['uint32', 'int64', 'int64'],
    ['uint64', 'int64', 'float64'],
    ['uint16', 'uint32', 'uint32'],
    ['int16', 'int32', 'int32'],
    ['uint64', 'float16', 'float16'],
    ['bool', 'uint16', 'uint16'],
  ] as const)('%s with %s promotes to %s', (a, b, want) => {
    expect(promoteTypes(a, b)).toBe(want);
    expect(promoteTypes(b, a)).toBe(want);
  });
});

describe('Tensor values', () => {
  test('round trip through Tensor.from and toArray at the ends of each range', () => {
    expect(Tensor.from('int16', [3], [-32768, 32767, -1.9]).toArray()).toEqual([-32768, 32767, -1]);
    expect(Tensor.from('uint16', [2], [0, 65535]).toArray()).toEqual([0, 65535]);
    expect(Tensor.from('uint32', [2], [4294967295, 7.9]).toArray()).toEqual([4294967295, 7]);
  });

  test('uint64 keeps values past 2^53 exactly', () => {
    const t = u64([U64_MAX, TWO_53 + 1n, 2n ** 63n]);
    expect(t.data).toBeInstanceOf(BigUint64Array);
    expect(bigints(t)).toEqual([18446744073709551615n, 9007199254740993n, 9223372036854775808n]);
    expect(inspect(t)).toBe('Tensor<uint64>[3] [18446744073709551615, 9007199254740993, 9223372036854775808]');
  });

  test.each([
    ['int16', 32768, 'outside the int16 range [-32768, 32767]'],
    ['uint16', -1, 'outside the uint16 range [0, 65535]'],
    ['uint32', 2 ** 32, 'outside the uint32 range [0, 4294967295]'],
    ['uint64', -1n, 'outside the uint64 range [0, 2^64-1]'],
    ['uint64', 2n ** 64n, 'outside the uint64 range [0, 2^64-1]'],
    ['uint64', NaN, 'which is not an uint64 value'],
  ] as const)('%s refuses %s', (dtype, value, message) => {
    expect(() => Tensor.from(dtype as DType, [1], [value])).toThrow(InvalidArgumentError);
    expect(() => Tensor.from(dtype as DType, [1], [value])).toThrow(message);
  });

  test('fromNumbers wraps the 16- and 32-bit types and saturates uint64 past 2^64', () => {
    expect(numbers(fromNumbers('uint16', [4], [-1, 65536, 70000.7, NaN]))).toEqual([65535, 0, 4464, 0]);
    expect(Array.from(fromNumbers('int16', [2], [32768, -32769]).data as Int16Array)).toEqual([-32768, 32767]);
    expect(numbers(fromNumbers('uint32', [2], [-1, 2 ** 32 + 3]))).toEqual([4294967295, 3]);
    expect(bigints(fromNumbers('uint64', [4], [-1, 2 ** 64, 2 ** 60, NaN]))).toEqual([U64_MAX, U64_MAX, 2n ** 60n, 0n]);
    expect(Array.from(readNumbers(u64([5n, 2n ** 63n])))).toEqual([5, 2 ** 63]);
  });
});

describe('cast (ONNX Cast: integers wrap to the target width, floats truncate toward zero)', () => {
  test.each([
    ['int32', [40000, -1], 'int16', [-25536, -1]],
    ['int32', [-1, 65536], 'uint16', [65535, 0]],
    ['uint16', [65535, 32768], 'int16', [-1, -32768]],
    ['int16', [-1, -32768], 'uint32', [4294967295, 4294934528]],
    ['float32', [3.9, -2.5], 'int16', [3, -2]],
    ['float32', [3.9, 65535], 'uint16', [3, 65535]],
  ] as const)('%s %j → %s %j', (from, values, to, want) => {
    expect(cast(Tensor.from(from, [2], values), to).toArray()).toEqual(want);
  });

  test('uint64 ↔ int64 reinterpret the 64 bits, exactly', () => {
    expect(bigints(cast(u64([U64_MAX, 2n ** 63n]), 'int64'))).toEqual([-1n, -(2n ** 63n)]);
    expect(bigints(cast(Tensor.from('int64', [2], [-1n, -(2n ** 63n)]), 'uint64'))).toEqual([U64_MAX, 2n ** 63n]);
  });

  test('uint64 past 2^53 narrows exactly: the low bits are kept', () => {
    expect(numbers(cast(u64([TWO_53 + 1n, U64_MAX]), 'uint32'))).toEqual([1, 4294967295]);
    expect(Array.from(cast(u64([U64_MAX, TWO_53 + 3n]), 'int32').data as Int32Array)).toEqual([-1, 3]);
    expect(Array.from(cast(u64([2n ** 40n + 65537n]), 'uint16').data as Uint16Array)).toEqual([1]);
    expect(cast(u64([0n, 5n]), 'bool').toArray()).toEqual([0, 1]);
  });

  test('uint32 → uint64 and int16 → uint64 (a negative wraps)', () => {
    expect(bigints(cast(Tensor.from('uint32', [1], [4294967295]), 'uint64'))).toEqual([4294967295n]);
    expect(bigints(cast(Tensor.from('int16', [1], [-2]), 'uint64'))).toEqual([U64_MAX - 1n]);
  });

  test('uint64 → float rounds once (2^64 − 1 is 2^64 in float64 and float32)', () => {
    expect(Array.from(cast(u64([U64_MAX, TWO_53 + 1n]), 'float64').data as Float64Array)).toEqual([2 ** 64, 2 ** 53]);
    // 2^60 + 2^36 + 1 is just past halfway between float32 neighbours (spacing 2^37): it rounds
    // up. Through float64 first it would round twice (to 2^60 + 2^36, then to even, 2^60).
    expect(Array.from(cast(u64([2n ** 60n + 2n ** 36n + 1n]), 'float32').data as Float32Array)).toEqual([2 ** 60 + 2 ** 37]);
  });
});

describe('arithmetic wraps at the type width', () => {
  test('add, sub, mul on the 16- and 32-bit types', () => {
    expect(add(Tensor.from('int16', [1], [32767]), Tensor.from('int16', [1], [1])).toArray()).toEqual([-32768]);
    expect(sub(Tensor.from('uint16', [1], [3]), Tensor.from('uint16', [1], [5])).toArray()).toEqual([65534]);
    expect(mul(Tensor.from('uint16', [1], [65535]), Tensor.from('uint16', [1], [65535])).toArray()).toEqual([1]);
    expect(mul(Tensor.from('uint32', [2], [4294967295, 65536]), Tensor.from('uint32', [2], [2, 65536])).toArray()).toEqual([4294967294, 0]);
    expect(sub(Tensor.from('uint32', [1], [0]), Tensor.from('uint32', [1], [1])).toArray()).toEqual([4294967295]);
  });

  test('uint64 arithmetic is exact past 2^53 and wraps modulo 2^64', () => {
    expect(bigints(add(u64([U64_MAX, TWO_53 + 1n]), u64([1n, 2n])))).toEqual([0n, TWO_53 + 3n]);
    expect(bigints(sub(u64([0n]), u64([1n])))).toEqual([U64_MAX]);
    expect(bigints(mul(u64([2n ** 32n + 1n]), u64([2n ** 32n - 1n])))).toEqual([U64_MAX]);
    expect(add(u64([1n]), 2).dtype).toBe('uint64');
  });

  test('integer division truncates toward zero (ONNX Div)', () => {
    expect(div(Tensor.from('int16', [4], [-7, 7, -7, 7]), Tensor.from('int16', [4], [2, 2, -2, -2]), 'trunc').toArray()).toEqual([-3, 3, 3, -3]);
    expect(div(Tensor.from('uint32', [1], [4294967295]), Tensor.from('uint32', [1], [2]), 'trunc').toArray()).toEqual([2147483647]);
    expect(bigints(div(u64([U64_MAX, TWO_53 + 1n]), u64([3n, 2n]), 'trunc'))).toEqual([6148914691236517205n, 2n ** 52n]);
    expect(() => div(u64([1n]), u64([0n]), 'trunc')).toThrow(/integer division by zero/);
  });

  test('Mod: the divisor\'s sign (fmod 0) or the dividend\'s (fmod 1)', () => {
    const a = Tensor.from('int16', [4], [-7, 7, -7, 7]);
    const b = Tensor.from('int16', [4], [3, -3, -3, 3]);
    expect(remainder(a, b).toArray()).toEqual([2, -2, -1, 1]);
    expect(fmod(a, b).toArray()).toEqual([-1, 1, -1, 1]);
    expect(remainder(Tensor.from('uint32', [1], [4294967295]), Tensor.from('uint32', [1], [10])).toArray()).toEqual([5]);
    expect(bigints(remainder(u64([U64_MAX, TWO_53 + 1n]), u64([10n, 2n])))).toEqual([5n, 1n]);
    expect(bigints(fmod(u64([U64_MAX]), u64([2n ** 63n])))).toEqual([2n ** 63n - 1n]);
  });

  test('comparisons, max and min of uint64 compare the exact unsigned values', () => {
    // Read as int64 2^63 would be negative; read as float64 2^53 + 1 would tie with 2^53.
    const a = u64([2n ** 63n, TWO_53 + 1n]);
    const b = u64([2n ** 63n - 1n, TWO_53]);
    expect(gt(a, b).toArray()).toEqual([1, 1]);
    expect(lt(a, b).toArray()).toEqual([0, 0]);
    expect(eq(a, b).toArray()).toEqual([0, 0]);
    expect(bigints(maximum(a, b))).toEqual([2n ** 63n, TWO_53 + 1n]);
    expect(bigints(minimum(a, b))).toEqual([2n ** 63n - 1n, TWO_53]);
  });

  test('neg of an unsigned type wraps, abs is the identity, clamp is exact', () => {
    expect(neg(Tensor.from('uint16', [2], [1, 0])).toArray()).toEqual([65535, 0]);
    expect(bigints(neg(u64([1n])))).toEqual([U64_MAX]);
    expect(abs(Tensor.from('int16', [2], [-5, -32768])).toArray()).toEqual([5, -32768]);
    expect(bigints(abs(u64([U64_MAX])))).toEqual([U64_MAX]);
    expect(bigints(clamp(u64([U64_MAX, 3n]), u64([5n]), u64([2n ** 63n])))).toEqual([2n ** 63n, 5n]);
  });

  test('where copies uint64 elements exactly', () => {
    const cond = Tensor.from('bool', [2], [1, 0]);
    expect(bigints(where(cond, u64([U64_MAX, 1n]), u64([2n, TWO_53 + 1n])))).toEqual([U64_MAX, TWO_53 + 1n]);
  });

  test('uint32 and uint64 matmul accumulate exactly (float64 would round the products)', () => {
    const a = Tensor.from('uint32', [1, 2], [4294967295, 3]);
    const b = Tensor.from('uint32', [2, 1], [4294967295, 2]);
    // (2^32 − 1)^2 + 6 = 2^64 − 2^33 + 7 ≡ 7 (mod 2^32)
    expect(matmul(a, b).toArray()).toEqual([7]);
    expect(bigints(matmul(u64([U64_MAX]).reshape([1, 1]), u64([U64_MAX]).reshape([1, 1])))).toEqual([1n]);
  });
});

describe('reductions', () => {
  test('sum and prod in the input type are exact and wrap', () => {
    expect(sum(Tensor.from('uint32', [2], [4294967295, 1]), [], false, 'uint32').toArray()).toEqual([0]);
    expect(prod(Tensor.from('uint32', [2], [4294967295, 4294967295]), [], false, 'uint32').toArray()).toEqual([1]);
    expect(prod(Tensor.from('int16', [2], [256, 129]), [], false, 'int16').toArray()).toEqual([-32512]);
    expect(bigints(sum(u64([U64_MAX, 2n]), [], false, 'uint64'))).toEqual([1n]);
    expect(bigints(sum(u64([TWO_53, 1n, 2n]), [], false, 'uint64'))).toEqual([TWO_53 + 3n]);
    expect(bigints(cumsum(u64([TWO_53, 1n, U64_MAX]), 0, { dtype: 'uint64' }))).toEqual([TWO_53, TWO_53 + 1n, TWO_53]);
  });

  test('amax, amin and argmax of uint64 are exact', () => {
    const t = u64([TWO_53, TWO_53 + 1n, 2n ** 63n, 7n]);
    expect(bigints(amax(t))).toEqual([2n ** 63n]);
    expect(bigints(amin(t))).toEqual([7n]);
    expect(bigints(argmax(u64([TWO_53, TWO_53 + 1n, TWO_53])))).toEqual([1n]);
  });

  test('max pooling of uint64 keeps the exact values', () => {
    const x = u64([TWO_53 + 1n, TWO_53, U64_MAX, 1n]).reshape([1, 1, 4]);
    expect(bigints(maxPool(x, { kernel: [2], stride: [2] }))).toEqual([TWO_53 + 1n, U64_MAX]);
  });
});

describe('.npy files', () => {
  test.each([
    ['int16', [-32768, 32767], '<i2'],
    ['uint16', [0, 65535], '<u2'],
    ['uint32', [0, 4294967295], '<u4'],
    ['uint64', [U64_MAX, TWO_53 + 1n], '<u8'],
  ] as const)('%s round-trips as %s', (dtype, values, descr) => {
    const bytes = writeNpy(Tensor.from(dtype, [2], values));
    expect(Buffer.from(bytes).toString('latin1')).toContain(`'descr': '${descr}'`);
    const back = readNpy(bytes);
    expect(back.dtype).toBe(dtype);
    expect(Array.from(back.data as ArrayLike<unknown>)).toEqual(values);
  });
});
