/**
 * The vector form of the map kernel (lib/backends/cuda/layers/map.ts): when each thread may
 * take V innermost neighbours ({@link vectorWidth}, pure), and that the form computes what the
 * reference backend does on the CPU emulator — dense operands, operands broadcast along the
 * innermost dim (read once, used V times) and along outer dims, mixed dtypes, select and cast.
 */
import { mapLaunch, vectorWidth, type MapOperand, type MapSpec } from '../../../../lib/backends/cuda/layers/map';
import type { KernelLaunch } from '../../../../lib/backends/cuda/layers';
import type { TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, expectExact } from '../../../helpers/compare';
import { runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { Random } from '../../../helpers/random';

const spec = (inputs: TrtDType[], output: TrtDType): MapSpec => ({ key: 'test', inputs, output, body: '  return x0;' });
const op = (strides: number[], offset = 0, buffer = 0): MapOperand => ({ at: { buffer, offset }, strides });

describe('vectorWidth', () => {
  test('16 bytes of the widest operand read along the innermost dim', () => {
    expect(vectorWidth(spec(['float16', 'float16'], 'float16'), [1024, 3072], op([3072, 1]), [op([3072, 1]), op([0, 1])])).toBe(8);
    expect(vectorWidth(spec(['float32'], 'float32'), [4, 8], op([8, 1]), [op([8, 1])])).toBe(4);
    expect(vectorWidth(spec(['int64'], 'int64'), [4, 8], op([8, 1]), [op([8, 1])])).toBe(2);
    // A cast float32 → float16: the float32 input is the widest.
    expect(vectorWidth(spec(['float32'], 'float16'), [64], op([1]), [op([1])])).toBe(4);
    // An input broadcast along the innermost dim does not count: it is one element a group.
    expect(vectorWidth(spec(['float32', 'float16'], 'float16'), [4, 16], op([16, 1]), [op([0, 0]), op([16, 1])])).toBe(8);
  });

  test('the largest width that divides the innermost dim, the other strides and the offsets', () => {
    const s = spec(['float16'], 'float16');
    expect(vectorWidth(s, [3, 12], op([12, 1]), [op([12, 1])])).toBe(4);
    expect(vectorWidth(s, [3, 12], op([12, 1]), [op([12, 1], 8)])).toBe(4);
    expect(vectorWidth(s, [3, 12], op([12, 1]), [op([12, 1], 4)])).toBe(2);
    expect(vectorWidth(s, [3, 12], op([12, 1], 2), [op([12, 1])])).toBe(1);
    // A block of a wider output (concat): the output's row stride must be a multiple of V too.
    expect(vectorWidth(s, [3, 8], op([20, 1]), [op([8, 1])])).toBe(4);
    expect(vectorWidth(s, [3, 8], op([18, 1]), [op([8, 1])])).toBe(2);
  });

  test('one element a thread otherwise', () => {
    const s = spec(['float16'], 'float16');
    expect(vectorWidth(s, [5, 7], op([7, 1]), [op([7, 1])])).toBe(1);
    // A transposed read: its innermost stride is not 1.
    expect(vectorWidth(s, [16, 16], op([16, 1]), [op([1, 16])])).toBe(1);
    // A strided output (a slice written into a larger tensor with a step).
    expect(vectorWidth(s, [16], op([2]), [op([1])])).toBe(1);
    expect(vectorWidth(s, [0, 16], op([16, 1]), [op([16, 1])])).toBe(1);
    expect(vectorWidth(s, [2 ** 31], op([1]), [op([1])])).toBe(1);
  });

  test('the launch of the vector form counts groups and marks which inputs are read as neighbours', () => {
    const [l] = mapLaunch(spec(['float16', 'float16'], 'float16'), [4, 16], op([16, 1]), [op([16, 1], 0, 1), op([1, 0], 0, 2)]) as KernelLaunch[];
    expect(l!.kernel.key).toBe('test.v8');
    expect(l!.args[3]).toEqual({ scalar: 'i64', value: 8 });
    expect(l!.args[l!.args.length - 1]).toEqual({ scalar: 'i32', value: 1 });
    expect(l!.kernel.source).toContain('VecN<u16, 8>');
  });
});

describe('the vector map form on the emulator', () => {
  const rng = new Random(91);
  const rand = (dtype: TrtDType, shape: number[], lo = -4, hi = 4): Tensor =>
    Tensor.from(dtype, shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => (dtype === 'bool' ? rng.next() < 0.5 : lo + (hi - lo) * rng.next())) as number[]);
  const keys = (steps: readonly unknown[]): string[] => steps.map((s) => (s as KernelLaunch).kernel?.key ?? (s as { kind: string }).kind);

  test.each([
    ['dense float16', 'float16', [5, 24], [5, 24], 'v8'],
    ['a bias broadcast over rows', 'float16', [5, 24], [1, 24], 'v8'],
    ['a column broadcast along the innermost dim', 'float16', [5, 24], [5, 1], 'v8'],
    ['float32', 'float32', [3, 8], [3, 8], 'v4'],
    ['bfloat16, broadcast both ways', 'bfloat16', [2, 1, 16], [1, 3, 16], 'v8'],
    ['an odd innermost dim (one element a thread)', 'float16', [5, 7], [5, 7], null],
  ] as const)('elementwise add, %s', (_, dtype, a, b, form) => {
    const { actual, expected, steps } = runLayer({ kind: 'elementwise', op: 'sum' }, [rand(dtype, [...a]), rand(dtype, [...b])]);
    const [key] = keys(steps);
    if (form === null) expect(key).not.toMatch(/\.v\d$/);
    else expect(key).toMatch(new RegExp(`\\.${form.split('.').pop()}$`));
    expectExact(actual[0]!, expected[0]!);
  });

  test('int64 multiply (two neighbours a thread) wraps as the reference does', () => {
    const big = (shape: number[]): Tensor => Tensor.from('int64', shape, Array.from({ length: shape.reduce((x, d) => x * d, 1) }, (_, i) => BigInt(i) * 0x7654321987n - 3n));
    const { actual, expected, steps } = runLayer({ kind: 'elementwise', op: 'prod' }, [big([3, 4]), big([3, 4])]);
    expect(keys(steps)[0]).toMatch(/\.v2$/);
    expectExact(actual[0]!, expected[0]!);
  });

  test('select reads its bool condition as neighbours beside float16 values', () => {
    const { actual, expected, steps } = runLayer({ kind: 'select' }, [rand('bool', [4, 16]), rand('float16', [4, 16]), rand('float16', [1, 16])]);
    expect(keys(steps)[0]).toMatch(/^select\.float16\.v8$/);
    expectExact(actual[0]!, expected[0]!);
  });

  test('a cast float32 → float16 over a dense box', () => {
    const { actual, expected, steps } = runLayer({ kind: 'cast', to: 'float16' }, [rand('float32', [6, 32], -70000, 70000)]);
    expect(keys(steps)[0]).toMatch(/\.v4$/);
    expectExact(actual[0]!, expected[0]!);
  });

  test('GELU (an activation map) over a row-broadcast float16 box', () => {
    const { actual, expected, steps } = runLayer({ kind: 'activation', type: 'gelu_erf', alpha: 0, beta: 0 }, [rand('float16', [3, 40])]);
    expect(keys(steps)[0]).toMatch(/\.v8$/);
    expectClose(actual[0]!, expected[0]!, { rtol: 1e-3, atol: 1e-3 });
  });
});
