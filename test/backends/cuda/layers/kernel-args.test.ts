/**
 * By-value array kernel arguments (`{ array, values }`, a C struct such as Dims8): packed at
 * their element type's alignment, element after element, as the C ABI lays out the struct;
 * and the dims a map launch passes after merging the dims its operands step through alike.
 */
import { coalesce } from '../../../../lib/backends/cuda/layers/map';
import { packKernelArgs } from '../../../../lib/gpu/plan';

describe('packKernelArgs with array arguments', () => {
  test('(i32, i64[3], f32, f64[2]) → offsets 0, 8, 32, 40; 56 bytes', () => {
    const packed = packKernelArgs([
      { scalar: 'i32', value: -5 },
      { array: 'i64', values: [1, -2n, 2 ** 40] },
      { scalar: 'f32', value: 0.5 },
      { array: 'f64', values: [0.25, -8] },
    ]);
    expect(packed.bytes.length).toBe(56);
    expect(packed.pointers).toEqual([]);
    const view = new DataView(packed.bytes.buffer);
    expect(view.getInt32(0, true)).toBe(-5);
    expect([8, 16, 24].map((at) => view.getBigInt64(at, true))).toEqual([1n, -2n, 2n ** 40n]);
    expect(view.getFloat32(32, true)).toBe(0.5);
    expect([40, 48].map((at) => view.getFloat64(at, true))).toEqual([0.25, -8]);
  });

  test('an empty or mistyped array is E_INVALID_ARGUMENT naming its index', () => {
    expect(() => packKernelArgs([{ scalar: 'i32', value: 1 }, { array: 'i64', values: [] }], 'step 2')).toThrow(/step 2: argument 1/);
    expect(() => packKernelArgs([{ array: 'i16' as never, values: [1] }], 'step 2')).toThrow(/step 2: argument 0/);
  });
});

describe('coalesce (map launch dims)', () => {
  test('a dense box over dense operands is one dim', () => {
    expect(coalesce([2, 3, 4], [[12, 4, 1], [12, 4, 1]])).toEqual({ dims: [24], strides: [[1], [1]] });
  });

  test('a broadcast operand keeps the dims it does not step through alike', () => {
    // out [2, 3, 4] dense; b broadcast over dim 1 ([2, 1, 4]).
    expect(coalesce([2, 3, 4], [[12, 4, 1], [4, 0, 1]])).toEqual({ dims: [2, 3, 4], strides: [[12, 4, 1], [4, 0, 1]] });
    // b broadcast over the leading dims only: [1, 1, 4].
    expect(coalesce([2, 3, 4], [[12, 4, 1], [0, 0, 1]])).toEqual({ dims: [6, 4], strides: [[4, 1], [0, 1]] });
  });

  test('size-1 dims drop; a transpose stays', () => {
    expect(coalesce([1, 3, 1, 2], [[6, 2, 2, 1], [6, 1, 6, 3]])).toEqual({ dims: [3, 2], strides: [[2, 1], [1, 3]] });
    expect(coalesce([1, 1], [[1, 1]])).toEqual({ dims: [], strides: [[]] });
  });
});
