/**
 * The map kernel's division by magic numbers (lib/backends/cuda/layers/map.ts,
 * divisionMagic): floor(n·m / 2^s) must equal floor(n / d) for every numerator below 2^31 the
 * kernel can see, checked here in exact BigInt arithmetic on the edges (powers of two and their
 * neighbours, the largest numerators) and on random divisors and numerators. The kernels
 * themselves run on the CPU emulator in layers.test.ts and on the GPU in the lowering check.
 */
import { divisionMagic } from '../../../../lib/backends/cuda/layers/map';
import { Random } from '../../../helpers/random';

/** The quotient the kernel computes: (n · m) >> s, with m and s unpacked as the kernel does. */
function quotient(n: number, packed: number): bigint {
  const m = BigInt(packed % 2 ** 32);
  const s = BigInt(Math.floor(packed / 2 ** 32));
  return (BigInt(n) * m) >> s;
}

const MAX_N = 2 ** 31 - 1;

describe('divisionMagic', () => {
  const divisors = [1, 2, 3, 5, 6, 7, 9, 10, 12, 49, 64, 96, 100, 127, 128, 129, 768, 3136, 12544, 65535, 65536, 65537, 1e6, 2 ** 30 - 1, 2 ** 30, 2 ** 30 + 1, MAX_N];

  test.each(divisors)('divides exactly by %d at the edges', (d) => {
    const packed = divisionMagic(d);
    expect(packed % 2 ** 32).toBeLessThan(2 ** 32);
    const numerators = [0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, MAX_N, MAX_N - 1, MAX_N - (MAX_N % d), MAX_N - (MAX_N % d) - 1].filter((n) => n >= 0 && n <= MAX_N);
    for (const n of numerators) expect([d, n, quotient(n, packed)]).toEqual([d, n, BigInt(Math.floor(n / d))]);
  });

  test('divides exactly for random divisors and numerators', () => {
    const rng = new Random(2024);
    for (let k = 0; k < 2000; k++) {
      const d = 1 + Math.floor(rng.next() ** 3 * MAX_N);
      const packed = divisionMagic(d);
      for (let j = 0; j < 20; j++) {
        const n = Math.floor(rng.next() * (MAX_N + 1));
        if (quotient(n, packed) !== BigInt(Math.floor(n / d))) throw new Error(`wrong quotient of ${n} / ${d}`);
      }
    }
  });
});
