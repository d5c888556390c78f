/**
 * Tensor construction from caller values: every value an integer dtype
 * cannot hold is a typed E_INVALID_ARGUMENT naming its index, never a RangeError or a
 * silently wrapped value; shapes must be safe integers; a size no typed array can hold is
 * E_RESOURCE_LIMIT.
 */
import { InvalidArgumentError, ResourceLimitError } from '../lib/errors';
import { Tensor, typedArrayName } from '../lib/ir/tensor';
import { thrown } from './helpers/errors';

const invalid = (fn: () => unknown): string => thrown(fn, InvalidArgumentError, 'E_INVALID_ARGUMENT').message;

describe('int64 values', () => {
  test('are exact from bigints and from numbers up to ±2^63', () => {
    const t = Tensor.from('int64', [5], [2n ** 63n - 1n, -(2n ** 63n), 2 ** 60, -(2 ** 63), 9007199254740993n]);
    expect([...(t.data as BigInt64Array)]).toEqual([9223372036854775807n, -9223372036854775808n, 1152921504606846976n, -9223372036854775808n, 9007199254740993n]);
  });

  test('numbers truncate toward zero, as for every integer dtype', () => {
    expect([...(Tensor.from('int64', [2], [1.9, -1.9]).data as BigInt64Array)]).toEqual([1n, -1n]);
    expect([...(Tensor.scalar('int64', 1.5).data as BigInt64Array)]).toEqual([1n]);
  });

  test.each([
    ['NaN', NaN, 'Tensor.from(int64) value 1 is NaN, which is not an int64 value'],
    ['Infinity', Infinity, 'value 1 is Infinity, which is not an int64 value'],
    ['2^64', 2 ** 64, 'value 1 is 18446744073709552000, outside the int64 range [-2^63, 2^63-1]'],
    ['2^63 (a number)', 2 ** 63, 'outside the int64 range'],
    ['2^63 (a bigint)', 2n ** 63n, 'value 1 is 9223372036854775808n, outside the int64 range'],
    ['-2^63-1 (a bigint)', -(2n ** 63n) - 1n, 'outside the int64 range'],
    ['a string', '3', 'value 1 is "3", which is not an int64 value'],
    ['undefined', undefined, 'value 1 is undefined'],
  ])('%s is E_INVALID_ARGUMENT naming the value', (_, v, message) => {
    expect(invalid(() => Tensor.from('int64', [2], [0, v] as never))).toContain(message);
  });

  test('Tensor.scalar refuses what Tensor.from refuses', () => {
    expect(invalid(() => Tensor.scalar('int64', NaN))).toContain('is NaN');
    expect(invalid(() => Tensor.scalar('int64', 2n ** 64n))).toContain('outside the int64 range');
  });
});

describe('int8, uint8 and int32 values', () => {
  test('are range-checked instead of wrapping', () => {
    expect(invalid(() => Tensor.from('uint8', [1], [256]))).toContain('value 0 is 256, outside the uint8 range [0, 255]');
    expect(invalid(() => Tensor.from('uint8', [1], [-1]))).toContain('outside the uint8 range');
    expect(invalid(() => Tensor.from('int8', [1], [128]))).toContain('outside the int8 range [-128, 127]');
    expect(invalid(() => Tensor.from('int32', [1], [2 ** 31]))).toContain('outside the int32 range [-2147483648, 2147483647]');
    expect(invalid(() => Tensor.from('int32', [1], [NaN]))).toContain('not a finite int32 value');
    expect([...Tensor.from('int32', [3], [2 ** 31 - 1, -(2 ** 31), -2.7]).data]).toEqual([2147483647, -2147483648, -2]);
    expect([...Tensor.from('int8', [2], [5n, true as never]).data]).toEqual([5, 1]);
  });
});

describe('float and bool values', () => {
  test('take numbers and bigints; anything else is E_INVALID_ARGUMENT', () => {
    expect([...Tensor.from('float64', [3], [1.5, NaN, 3n as never]).data]).toEqual([1.5, NaN, 3]);
    expect(Tensor.scalar('float32', 2n).toArray()).toEqual([2]);
    expect(invalid(() => Tensor.from('float32', [1], [{}] as never))).toContain('value 0 is an object (Object), which is not a number');
    expect([...Tensor.from('bool', [3], [0, 2, NaN]).data]).toEqual([0, 1, 0]);
  });
});

describe('shapes and value lists', () => {
  test.each([
    ['a dim over 2^53', [1e20]],
    ['a fractional dim', [1.5]],
    ['a negative dim', [-1]],
    ['a NaN dim', [NaN]],
  ])('%s is E_INVALID_ARGUMENT', (_, shape) => {
    expect(invalid(() => new Tensor('float32', shape))).toContain('not a non-negative safe integer');
    expect(invalid(() => Tensor.from('float32', shape, []))).toContain('not a non-negative safe integer');
  });

  test('a size past 2^53 elements is E_INVALID_ARGUMENT; one no typed array can hold is E_RESOURCE_LIMIT', () => {
    expect(invalid(() => new Tensor('float32', [1e9, 1e9]))).toContain('has more elements than a tensor can hold');
    const e = thrown(() => new Tensor('float32', [2 ** 40]), ResourceLimitError, 'E_RESOURCE_LIMIT');
    expect(e.message).toContain('a float32 tensor of shape [1099511627776] needs 4398046511104 bytes, which cannot be allocated');
  });

  test('bad value lists, dtypes and shapes are E_INVALID_ARGUMENT', () => {
    expect(invalid(() => Tensor.from('float32', [1], null as never))).toContain('takes a list of values, got null');
    expect(invalid(() => Tensor.from('float32', [2], [1]))).toContain('needs 2 values, got 1');
    expect(invalid(() => Tensor.from('float128' as never, [1], [1]))).toContain('unknown dtype "float128"');
    expect(invalid(() => new Tensor('float32', '2' as never))).toContain('a tensor shape must be a list of dims, got "2"');
    expect(invalid(() => new Tensor('float32', [1], null as never))).toContain('needs its data in a Float32Array, got null');
  });
});

test('data must really be the typed array, not an object posing as one', () => {
  const fake = { [Symbol.toStringTag]: 'Float32Array', length: 2 };
  expect(typedArrayName(fake)).toBeUndefined();
  expect(typedArrayName(new Float32Array(2))).toBe('Float32Array');
  expect(typedArrayName(new DataView(new ArrayBuffer(2)))).toBeUndefined();
  expect(invalid(() => new Tensor('float32', [2], fake as never))).toContain('needs its data in a Float32Array, got an object (Float32Array)');
});
