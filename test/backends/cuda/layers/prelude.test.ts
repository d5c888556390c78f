/**
 * The prelude's half and bfloat16 conversions (bit manipulation, no CUDA headers), through
 * cast layers on the emulator, against the reference's conversions: every float16 bit
 * pattern to float32 and back, and float32 values exactly halfway between neighbours (ties
 * round to even), overflowing, subnormal and NaN.
 */
import { Tensor } from '../../../../lib/ir/tensor';
import { expectExact } from '../../../helpers/compare';
import { runLayer } from '../../../helpers/cuda-emulator/run-layer';

const castTo = (to: 'float32' | 'float16' | 'bfloat16', x: Tensor): { actual: Tensor; expected: Tensor } => {
  const { actual, expected } = runLayer({ kind: 'cast', to }, [x]);
  return { actual: actual[0]!, expected: expected[0]! };
};

/** NaN payloads may differ; everything else must be bit-identical. */
function expectSameBits(actual: Tensor, expected: Tensor, isNaN: (bits: number) => boolean): void {
  const a = actual.data as Uint16Array;
  const e = expected.data as Uint16Array;
  const normalize = (bits: Uint16Array) => Uint16Array.from(bits, (b) => (isNaN(b) ? 0x7fff : b));
  expectExact(new Tensor(actual.dtype, actual.shape, normalize(a)), new Tensor(expected.dtype, expected.shape, normalize(e)));
}

const halfNaN = (b: number): boolean => (b & 0x7c00) === 0x7c00 && (b & 0x3ff) !== 0;
const bfNaN = (b: number): boolean => (b & 0x7f80) === 0x7f80 && (b & 0x7f) !== 0;

describe('prelude conversions', () => {
  const allHalves = new Tensor('float16', [65536], Uint16Array.from({ length: 65536 }, (_, i) => i));

  test('every float16 bit pattern widens to float32 exactly', () => {
    const { actual, expected } = castTo('float32', allHalves);
    const a = actual.data as Float32Array;
    const e = expected.data as Float32Array;
    for (let i = 0; i < e.length; i++) {
      if (Number.isNaN(e[i]!)) expect(Number.isNaN(a[i]!)).toBe(true);
      else if (a[i] !== e[i] || Object.is(a[i], -0) !== Object.is(e[i], -0)) throw new Error(`half 0x${i.toString(16)}: got ${a[i]}, expected ${e[i]}`);
    }
  });

  test('float32 to float16 rounds to nearest even, including midpoints, subnormals, overflow and NaN', () => {
    const widened = castTo('float32', allHalves).expected.data as Float32Array;
    const values: number[] = [];
    for (let i = 0; i < 0x7c00; i++) {
      const lo = widened[i]!;
      const hi = widened[i + 1]!;
      values.push(lo, -lo, Math.fround((lo + hi) / 2), -Math.fround((lo + hi) / 2), Math.fround(lo + (hi - lo) * 0.25));
    }
    values.push(65504, 65519.99, 65520, 1e10, -1e10, Infinity, -Infinity, NaN, 2 ** -25, 2 ** -26, 3 * 2 ** -26);
    const x = new Tensor('float32', [values.length], Float32Array.from(values));
    const { actual, expected } = castTo('float16', x);
    expectSameBits(actual, expected, halfNaN);
  });

  test('float32 to bfloat16 rounds to nearest even', () => {
    const values: number[] = [];
    for (let e = -130; e < 128; e += 3) {
      for (const m of [1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -7 + 2 ** -8, 1.999, 1.5 + 2 ** -9]) values.push(m * 2 ** e, -m * 2 ** e);
    }
    values.push(3.4e38, Infinity, -Infinity, NaN, 0, -0);
    const x = new Tensor('float32', [values.length], Float32Array.from(values));
    const { actual, expected } = castTo('bfloat16', x);
    expectSameBits(actual, expected, bfNaN);
  });
});
