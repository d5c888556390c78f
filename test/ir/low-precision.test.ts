/**
 * The 8-, 4- and 2-bit element types: every code's value and back, the edges of each format
 * (largest finite value, smallest normal and subnormal, ties to even at the top and at zero),
 * NaN and ±Infinity with and without saturation, float8e8m0's rounding modes, and the 4- and
 * 2-bit integers' rounding and wrapping. Expected codes are worked out from the formats'
 * definitions (ONNX's float8 and int4 notes), not from the code under test.
 */
import { readNumbers } from '../../lib/kernels/access';
import { dtypeInfo, DTYPES, integerBits, isUnsigned, promoteTypes } from '../../lib/ir/dtype';
import {
  fromE8M0Bits,
  fromMiniFloatBits,
  toE8M0Bits,
  toMiniFloatBits,
  wrapSubByte,
  type MiniFloatDType,
  type SubByteIntDType,
} from '../../lib/ir/low-precision';
import { Tensor } from '../../lib/ir/tensor';

const codes = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('every code round-trips through its value', () => {
  test.each([
    ['float8e4m3fn', 256, [0x7f, 0xff], 0x7f],
    ['float8e4m3fnuz', 256, [0x80], 0x80],
    ['float8e5m2', 256, [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff], 0x7e],
    ['float8e5m2fnuz', 256, [0x80], 0x80],
    ['float4e2m1', 16, [], 0],
  ] as const)('%s: %d codes, the NaN codes to the one NaN', (dtype, n, nans, nan) => {
    for (const c of codes(n)) {
      const v = fromMiniFloatBits(c, dtype);
      if ((nans as readonly number[]).includes(c)) {
        expect(v).toBeNaN();
        expect(toMiniFloatBits(v, dtype, false)).toBe(nan);
      } else {
        expect(Number.isNaN(v)).toBe(false);
        expect([c, toMiniFloatBits(v, dtype, false)]).toEqual([c, c]);
        expect([c, toMiniFloatBits(v, dtype, true)]).toEqual([c, Number.isFinite(v) ? c : c === 0x7c ? 0x7b : 0xfb]);
      }
    }
  });

  test('float8e8m0: codes 1..254 are the powers 2^-126..2^127 and round-trip in every mode; 0xff is NaN', () => {
    for (let c = 1; c <= 254; c++) {
      expect(fromE8M0Bits(c)).toBe(2 ** (c - 127));
      for (const mode of ['up', 'down', 'nearest'] as const) expect([c, toE8M0Bits(2 ** (c - 127), true, mode)]).toEqual([c, c]);
    }
    expect(fromE8M0Bits(0xff)).toBeNaN();
    // 2^-127 is a float32 subnormal: "up" takes the next power, "down" keeps it.
    expect(fromE8M0Bits(0)).toBe(2 ** -127);
    expect([toE8M0Bits(2 ** -127, true, 'up'), toE8M0Bits(2 ** -127, true, 'down')]).toEqual([1, 0]);
  });

  test.each([
    ['int4', [-8, 7]],
    ['uint4', [0, 15]],
    ['int2', [-2, 1]],
    ['uint2', [0, 3]],
  ] as const)('%s: every value in range is itself', (dtype, [lo, hi]) => {
    for (let v = lo; v <= hi; v++) expect(wrapSubByte(v, dtype)).toBe(v);
  });
});

describe('float8 and float4 values', () => {
  const enc = (x: number, d: MiniFloatDType, sat = false): number => toMiniFloatBits(x, d, sat);

  test('float8e4m3fn: max 448, normals from 2^-6, subnormals from 2^-9, no Infinity', () => {
    expect([enc(448, 'float8e4m3fn'), enc(-448, 'float8e4m3fn')]).toEqual([0x7e, 0xfe]);
    expect([enc(2 ** -6, 'float8e4m3fn'), enc(2 ** -9, 'float8e4m3fn'), enc(7 * 2 ** -9, 'float8e4m3fn')]).toEqual([0x08, 0x01, 0x07]);
    // 464 lies halfway between 448 (mantissa 110) and 480 (111, which would be NaN): to even, 448.
    expect(enc(464, 'float8e4m3fn')).toBe(0x7e);
    expect([enc(465, 'float8e4m3fn'), enc(465, 'float8e4m3fn', true)]).toEqual([0x7f, 0x7e]);
    expect([enc(Infinity, 'float8e4m3fn'), enc(Infinity, 'float8e4m3fn', true), enc(-Infinity, 'float8e4m3fn', true)]).toEqual([0x7f, 0x7e, 0xfe]);
    expect([enc(NaN, 'float8e4m3fn'), enc(NaN, 'float8e4m3fn', true)]).toEqual([0x7f, 0x7f]);
    // Ties at the bottom: 2^-10 is halfway between 0 and 2^-9 (to even: 0, keeping the sign).
    expect([enc(2 ** -10, 'float8e4m3fn'), enc(-(2 ** -10), 'float8e4m3fn'), enc(1.5 * 2 ** -9, 'float8e4m3fn')]).toEqual([0x00, 0x80, 0x02]);
    // 0.4789... → 0.46875 (0x2f), as ONNX's own Cast case.
    expect(enc(Math.fround(0.4789254665374756), 'float8e4m3fn')).toBe(0x2f);
  });

  test('float8e5m2: max 57344, Infinity 0x7c, subnormals from 2^-16', () => {
    expect([enc(57344, 'float8e5m2'), enc(Infinity, 'float8e5m2'), enc(-Infinity, 'float8e5m2')]).toEqual([0x7b, 0x7c, 0xfc]);
    // 61440 is halfway between 57344 (mantissa 11) and 65536 (the next binade, even): Infinity.
    expect([enc(61439, 'float8e5m2'), enc(61440, 'float8e5m2'), enc(61440, 'float8e5m2', true)]).toEqual([0x7b, 0x7c, 0x7b]);
    expect([enc(1e6, 'float8e5m2', true), enc(-1e6, 'float8e5m2', true)]).toEqual([0x7b, 0xfb]);
    expect([enc(2 ** -16, 'float8e5m2'), enc(2 ** -14, 'float8e5m2'), enc(-(2 ** -17), 'float8e5m2')]).toEqual([0x01, 0x04, 0x80]);
    expect(fromMiniFloatBits(0xfc, 'float8e5m2')).toBe(-Infinity);
  });

  test('fnuz: no negative zero, the one NaN 0x80, overflow without saturation is NaN', () => {
    expect([enc(240, 'float8e4m3fnuz'), enc(2 ** -10, 'float8e4m3fnuz'), enc(2 ** -7, 'float8e4m3fnuz')]).toEqual([0x7f, 0x01, 0x08]);
    expect([enc(-0, 'float8e4m3fnuz'), enc(-(2 ** -12), 'float8e4m3fnuz')]).toEqual([0x00, 0x00]);
    expect([enc(1e6, 'float8e4m3fnuz'), enc(1e6, 'float8e4m3fnuz', true), enc(-Infinity, 'float8e4m3fnuz', true)]).toEqual([0x80, 0x7f, 0xff]);
    expect([enc(57344, 'float8e5m2fnuz'), enc(2 ** -17, 'float8e5m2fnuz'), enc(Infinity, 'float8e5m2fnuz')]).toEqual([0x7f, 0x01, 0x80]);
    expect(fromMiniFloatBits(0x80, 'float8e5m2fnuz')).toBeNaN();
    expect(Object.is(fromMiniFloatBits(0x00, 'float8e4m3fnuz'), 0)).toBe(true);
  });

  test('float4e2m1: the eight magnitudes, ties to even, overflow and Infinity to ±6, NaN to 0x8', () => {
    expect(codes(8).map((c) => fromMiniFloatBits(c, 'float4e2m1'))).toEqual([0, 0.5, 1, 1.5, 2, 3, 4, 6]);
    expect([enc(0.25, 'float4e2m1'), enc(0.75, 'float4e2m1'), enc(2.5, 'float4e2m1'), enc(5, 'float4e2m1'), enc(-3.5, 'float4e2m1')]).toEqual([0x0, 0x2, 0x4, 0x6, 0xe]);
    expect([enc(1e6, 'float4e2m1'), enc(-Infinity, 'float4e2m1'), enc(NaN, 'float4e2m1')]).toEqual([0x7, 0xf, 0x8]);
  });
});

describe('float8e8m0 rounding', () => {
  test('up (the default): the next power of two, 0 to 2^-127, saturating at 2^127 unless told not to', () => {
    expect([0, 0.124, 0.25, 1.1, 2, 3].map((x) => toE8M0Bits(x))).toEqual([0x00, 0x7c, 0x7d, 0x80, 0x80, 0x81]);
    expect([toE8M0Bits(1.5 * 2 ** 127), toE8M0Bits(1.5 * 2 ** 127, false)]).toEqual([0xfe, 0xff]);
    expect([toE8M0Bits(Infinity), toE8M0Bits(NaN), toE8M0Bits(-4)]).toEqual([0xff, 0xff, 0x81]);
  });

  test('down keeps the exponent; nearest rounds on the guard bit', () => {
    expect([toE8M0Bits(1.9, true, 'down'), toE8M0Bits(1.1, true, 'nearest'), toE8M0Bits(1.5, true, 'nearest'), toE8M0Bits(1.6, true, 'nearest')]).toEqual([
      0x7f, 0x7f, 0x80, 0x80,
    ]);
  });
});

describe('4- and 2-bit integers', () => {
  const w = (v: number, d: SubByteIntDType): number => wrapSubByte(v, d);
  test('round to nearest even, then keep the low bits', () => {
    expect([w(9, 'int4'), w(-9, 'int4'), w(8, 'int4'), w(2.5, 'int4'), w(3.5, 'int4'), w(-2.5, 'int4'), w(7.6, 'int4')]).toEqual([-7, 7, -8, 2, 4, -2, -8]);
    expect([w(-1, 'uint4'), w(16, 'uint4'), w(3, 'int2'), w(-3, 'int2'), w(4, 'uint2'), w(NaN, 'int4'), w(Infinity, 'uint4')]).toEqual([15, 0, -1, 1, 0, 0, 0]);
  });
});

describe('the dtypes', () => {
  test('one byte per element in memory, with their value bits and signedness', () => {
    for (const d of ['float8e4m3fn', 'float8e4m3fnuz', 'float8e5m2', 'float8e5m2fnuz', 'float8e8m0', 'float4e2m1', 'int4', 'uint4', 'int2', 'uint2'] as const) {
      expect(DTYPES).toContain(d);
      expect(dtypeInfo(d).itemBytes).toBe(1);
    }
    expect(['int4', 'uint4', 'int2', 'uint2'].map((d) => [integerBits(d as never), isUnsigned(d as never)])).toEqual([
      [4, false],
      [4, true],
      [2, false],
      [2, true],
    ]);
  });

  test('promotion: a wider type holds both', () => {
    expect([promoteTypes('int4', 'int8'), promoteTypes('uint4', 'int4'), promoteTypes('uint2', 'int2'), promoteTypes('uint4', 'uint8')]).toEqual([
      'int8', 'int8', 'int4', 'uint8',
    ]);
    expect([promoteTypes('float8e4m3fn', 'float32'), promoteTypes('float8e4m3fn', 'float8e5m2'), promoteTypes('float8e8m0', 'float16')]).toEqual([
      'float32', 'float32', 'float32',
    ]);
  });

  test('Tensor.from rounds into the type and toArray/readNumbers decode exactly', () => {
    const t = Tensor.from('float8e4m3fn', [4], [0.3, 448, 500, -0]);
    expect(Array.from(t.data as Uint8Array)).toEqual([0x2a, 0x7e, 0x7f, 0x80]);
    expect(t.toArray().slice(0, 2)).toEqual([0.3125, 448]);
    expect(Array.from(readNumbers(t)).slice(0, 2)).toEqual([0.3125, 448]);
    const i = Tensor.from('int4', [2], [-8, 7]);
    expect([i.data.constructor.name, ...i.toArray()]).toEqual(['Int8Array', -8, 7]);
    expect(() => Tensor.from('int4', [1], [8])).toThrow(/outside the int4 range \[-8, 7\]/);
  });
});
