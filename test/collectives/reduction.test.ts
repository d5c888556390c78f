/** dtype and op → NCCL type, op and count (values from nccl.h, also checked by native/nccl/check_declarations.cc). */
import { InvalidArgumentError } from '../../lib/errors';
import { formatNcclVersion } from '../../lib/collectives/library';
import { ncclReduction } from '../../lib/collectives/reduction';

test.each([
  ['float32', 7],
  ['float16', 6],
  ['bfloat16', 9],
  ['float64', 8],
  ['int8', 0],
  ['uint8', 1],
  ['int32', 2],
  ['int64', 4],
] as const)('%s reduces as ncclDataType_t %d', (dtype, code) => {
  expect(ncclReduction(dtype, 'sum', 5)).toEqual({ dtype: code, op: 0, count: 5 });
});

test('ops are ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4', () => {
  expect(['sum', 'prod', 'max', 'min', 'avg'].map((op) => ncclReduction('float32', op as never, 1).op)).toEqual([0, 1, 2, 3, 4]);
});

test('bool reduces as uint8 only where the result stays 0/1; complex as its components for sum and avg', () => {
  expect(ncclReduction('bool', 'max', 3)).toEqual({ dtype: 1, op: 2, count: 3 });
  expect(ncclReduction('bool', 'prod', 3)).toEqual({ dtype: 1, op: 1, count: 3 });
  expect(() => ncclReduction('bool', 'sum', 3)).toThrow(/all-reduce sum of a bool tensor has no bool result/);
  expect(ncclReduction('complex64', 'sum', 3)).toEqual({ dtype: 7, op: 0, count: 6 });
  expect(ncclReduction('complex128', 'avg', 2)).toEqual({ dtype: 8, op: 4, count: 4 });
  expect(() => ncclReduction('complex64', 'max', 3)).toThrow(InvalidArgumentError);
  expect(() => ncclReduction('float32', 'mean' as never, 3)).toThrow(/unknown all-reduce op "mean"; expected one of sum, prod, max, min, avg/);
});

test('NCCL versions as NCCL writes them', () => {
  expect(formatNcclVersion(22803)).toBe('2.28.3');
  expect(formatNcclVersion(21903)).toBe('2.19.3');
  expect(formatNcclVersion(2708)).toBe('2.7.8');
});
