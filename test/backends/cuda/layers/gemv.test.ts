/**
 * Products of at most four rows by a transposed B as one generated launch
 * (lib/backends/cuda/layers/gemv.ts) instead of a cuBLASLt GEMM: on the CPU kernel emulator
 * against the reference backend (float64 products, rounded once), in the 16-byte and the
 * element form, and the shapes that stay GEMMs.
 */
import type { KernelLaunch, LoweredStep } from '../../../../lib/backends/cuda/layers';
import type { LayerParams, TrtDType } from '../../../../lib/network';
import { expectClose, type Tolerance } from '../../../helpers/compare';
import { runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { Random } from '../../../helpers/random';

const LINEAR: LayerParams = { kind: 'matmul', opA: 'none', opB: 'transpose' };
// fp32 accumulation in another order than the reference's float64, one rounding to the dtype.
const TOL: Record<string, Tolerance> = { float16: { rtol: 2e-3, atol: 2e-3 }, bfloat16: { rtol: 1e-2, atol: 1e-2 } };
const keys = (steps: readonly LoweredStep[]): string[] => steps.map((s) => (s.kind === 'launch' ? (s as KernelLaunch).kernel.key : s.kind));

describe('gemv', () => {
  const cases: Array<[string, TrtDType, number[], number[], string]> = [
    ['ResNet\'s classifier at batch 1 (k 2048, 16-byte loads)', 'float16', [1, 2048], [1000, 2048], 'gemv.float16.v8'],
    ['four rows of a token batch [2, 2, k] (one B for both)', 'bfloat16', [2, 2, 64], [1, 40, 64], 'gemv.bfloat16.v8'],
    ['three rows, k 37 (element loads), n 5', 'float16', [3, 37], [5, 37], 'gemv.float16.v1'],
  ];
  test.each(cases)('%s: the reference backend\'s values', (_, dtype, a, b, key) => {
    const r = new Random(9);
    const { expected, actual, steps } = runLayer(LINEAR, [r.tensor(a, dtype), r.tensor(b, dtype)]);
    expect(keys(steps)).toEqual([key]);
    expectClose(actual[0]!, expected[0]!, TOL[dtype]!, key);
  });

  test('x 2 bytes into its buffer takes the element loads, with the same values', () => {
    const r = new Random(3);
    const { expected, actual, steps } = runLayer(LINEAR, [r.tensor([1, 64], 'float16'), r.tensor([24, 64], 'float16')], 'layer', (s) => s, [2, 0]);
    expect(keys(steps)).toEqual(['gemv.float16.v1']);
    expectClose(actual[0]!, expected[0]!, TOL.float16!, 'unaligned');
  });

  test('stay GEMMs: five rows, a B that is not transposed, fp32, a B per batch', () => {
    const r = new Random(4);
    const lowered = (params: LayerParams, a: number[], b: number[], dtype: TrtDType = 'float16'): string[] => keys(runLayer(params, [r.tensor(a, dtype), r.tensor(b, dtype)]).steps);
    expect(lowered(LINEAR, [5, 16], [8, 16])).toEqual(['gemm']);
    expect(lowered({ kind: 'matmul', opA: 'none', opB: 'none' }, [1, 16], [16, 8])).toEqual(['gemm']);
    expect(lowered(LINEAR, [1, 16], [8, 16], 'float32')).toEqual(['gemm']);
    expect(lowered(LINEAR, [2, 1, 16], [2, 8, 16])).toEqual(['gemm']);
  });
});
