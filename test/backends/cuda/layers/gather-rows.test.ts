/**
 * The row gather (lib/backends/cuda/layers/indexing.ts): a default-mode gather moving whole
 * inner rows a chunk at a time (16 bytes where the rows and buffers allow, down to 1). On the
 * CPU kernel emulator against the reference backend (a gather is a copy: the bits must be
 * equal), at each chunk size, around an inner axis, and with indices outside the axis, which
 * give zero rows as the general walk's do.
 */
import type { KernelLaunch, LoweredStep } from '../../../../lib/backends/cuda/layers';
import type { LayerParams } from '../../../../lib/network';
import { readNumbers } from '../../../../lib/kernels/access';
import { Tensor } from '../../../../lib/ir/tensor';
import { runSteps } from '../../../helpers/cuda-emulator';
import { layerOf, lowerAt, runLayer } from '../../../helpers/cuda-emulator/run-layer';
import { Random } from '../../../helpers/random';

const launches = (steps: readonly LoweredStep[]): KernelLaunch[] => steps.filter((s): s is KernelLaunch => s.kind === 'launch');
const bitsOf = (t: Tensor): number[] => Array.from(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));

describe('row gather', () => {
  const r = new Random(17);
  const cases: Array<[string, LayerParams, Tensor, Tensor, string]> = [
    ['an fp16 embedding table, 16-byte chunks', { kind: 'gather', mode: 'default', axis: 0 }, r.tensor([30, 64], 'float16'), r.intTensor([2, 5], 0, 29, 'int64'), 'gather.rows16.i64'],
    ['rows around an inner axis (outer 3), int32 indices', { kind: 'gather', mode: 'default', axis: 1 }, r.tensor([3, 7, 4], 'float32'), r.intTensor([4], 0, 6, 'int32'), 'gather.rows16.i32'],
    ['12-byte rows in 4-byte chunks', { kind: 'gather', mode: 'default', axis: 0 }, r.tensor([6, 3], 'float32'), r.intTensor([2, 3], 0, 5, 'int32'), 'gather.rows4.i32'],
    ['2-byte rows (the last axis gathered)', { kind: 'gather', mode: 'default', axis: 1 }, r.tensor([5, 6], 'bfloat16'), r.intTensor([3], 0, 5, 'int64'), 'gather.rows2.i64'],
  ];
  test.each(cases)('%s: the reference\'s bits', (_, params, data, indices, key) => {
    const { expected, actual, steps } = runLayer(params, [data, indices]);
    expect(launches(steps).map((s) => s.kernel.key)).toEqual([key]);
    expect(bitsOf(actual[0]!)).toEqual(bitsOf(expected[0]!));
  });

  test('a table 4 bytes into its buffer takes 4-byte chunks, with the same bits', () => {
    const [, params, data, indices] = cases[0]!;
    const { expected, actual, steps } = runLayer(params, [data, indices], 'layer', (s) => s, [4, 0]);
    expect(launches(steps).map((s) => s.kernel.key)).toEqual(['gather.rows4.i64']);
    expect(bitsOf(actual[0]!)).toEqual(bitsOf(expected[0]!));
  });

  test('an index outside [0, D), negative or past the end, gives a zero row (as the general walk does) and sets the layer\'s status word', () => {
    const data = Tensor.from('float16', [4, 8], Array.from({ length: 32 }, (_, i) => i + 1));
    const indices = Tensor.from('int64', [4], [2, -1, 4, 0]);
    const params: LayerParams = { kind: 'gather', mode: 'default', axis: 0 };
    const out = { dtype: 'float16' as const, shape: [4, 8] };
    const extra: Uint8Array[] = [];
    const statusAt: number[] = [];
    const steps = lowerAt(layerOf(params, [data, indices], 1), [data, indices], [out], extra, [], statusAt);
    expect(statusAt).toHaveLength(1);
    const buffers = [new Uint8Array(data.data.buffer.slice(0)), new Uint8Array(indices.data.buffer.slice(0)), new Uint8Array(64).fill(0xa5), ...extra];
    runSteps(steps, buffers);
    expect(new DataView(buffers[3 + statusAt[0]!]!.buffer).getUint32(0, true)).toBe(1);
    const got = Array.from(readNumbers(new Tensor('float16', [4, 8], new Uint16Array(buffers[2]!.buffer))));
    const row = (k: number): number[] => Array.from({ length: 8 }, (_, j) => 8 * k + j + 1);
    expect(got).toEqual([...row(2), ...new Array<number>(8).fill(0), ...new Array<number>(8).fill(0), ...row(0)]);
  });
});
