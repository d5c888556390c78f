/**
 * The map kernel's two index walks (lib/backends/cuda/layers/map.ts): the 32-bit walk of
 * exactly 1, 2 or 3 dims that a launch takes where its offsets fit (narrowWalkOf), and the
 * general one. Each launch here runs on the CPU kernel emulator as lowered and again with its
 * `walk` argument set to 0 (the general walk): both must give the values computed here in
 * JavaScript, broadcast, transposed, stepping backwards from an offset, and in the vector form.
 */
import { mapLaunch, narrowWalkOf, type MapOperand, type MapSpec } from '../../../../lib/backends/cuda/layers/map';
import type { KernelLaunch } from '../../../../lib/backends/cuda/layers';
import { runSteps } from '../../../helpers/cuda-emulator';

describe('narrowWalkOf', () => {
  test('the rank, for ranks 1 to 3 whose offsets fit in 32 bits', () => {
    expect(narrowWalkOf([7], [[1], [-1]])).toBe(1);
    expect(narrowWalkOf([4, 6], [[6, 1], [0, 1]])).toBe(2);
    expect(narrowWalkOf([3, 4, 5], [[20, 5, 1], [1, 3, 12]])).toBe(3);
  });

  test('0 (the general walk) for rank 4 and up, for 2^31 elements, and for offsets beyond [−2^31, 2^31)', () => {
    expect(narrowWalkOf([2, 3, 4, 5], [[60, 20, 5, 1]])).toBe(0);
    expect(narrowWalkOf([2 ** 16, 2 ** 15], [[2 ** 15, 1]])).toBe(0);
    expect(narrowWalkOf([2 ** 16, 2 ** 15 - 1], [[2 ** 15 - 1, 1]])).toBe(2);
    // The largest offset is (d − 1)·stride summed over the dims: 2^31 − 1 fits, 2^31 does not.
    expect(narrowWalkOf([2, 2], [[2 ** 31 - 2, 1]])).toBe(2);
    expect(narrowWalkOf([2, 2], [[2 ** 31 - 1, 1]])).toBe(0);
    // Backwards down to −2^31 fits (an i32), one more element does not.
    expect(narrowWalkOf([2, 1], [[-(2 ** 31), 1]])).toBe(2);
    expect(narrowWalkOf([2, 2], [[-(2 ** 31), -1]])).toBe(0);
  });
});

const f32 = (values: number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);
const read = (bytes: Uint8Array, at = 0, n = bytes.byteLength / 4): number[] => Array.from(new Float32Array(bytes.buffer.slice(at, at + 4 * n)));
const ADD: MapSpec = { key: 'test.walk.add.float32', inputs: ['float32', 'float32'], output: 'float32', body: '  return x0 + x1;' };
const COPY: MapSpec = { key: 'copy.float32', inputs: ['float32'], output: 'float32', body: '  return x0;', raw: true };

interface Case {
  spec: MapSpec;
  dims: number[];
  out: MapOperand;
  inputs: MapOperand[];
  /** Buffer contents: 0 is the output (its size), then one per input. */
  buffers: Uint8Array[];
  expected: number[];
  walk: number;
}

const iota = (n: number, scale = 1): number[] => Array.from({ length: n }, (_, i) => (i + 1) * scale);

const CASES: Array<[string, Case]> = [
  [
    'broadcast (rank 2): x [4, 5] + b [5]',
    {
      spec: ADD,
      dims: [4, 5],
      out: { at: { buffer: 0 }, strides: [5, 1] },
      inputs: [{ at: { buffer: 1 }, strides: [5, 1] }, { at: { buffer: 2 }, strides: [0, 1] }],
      buffers: [new Uint8Array(80), f32(iota(20)), f32(iota(5, 100))],
      expected: iota(20).map((x, i) => x + (i % 5 + 1) * 100),
      walk: 2,
    },
  ],
  [
    'transposed (rank 3): y [3, 4, 5] from x [5, 4, 3]',
    {
      spec: COPY,
      dims: [3, 4, 5],
      out: { at: { buffer: 0 }, strides: [20, 5, 1] },
      inputs: [{ at: { buffer: 1 }, strides: [1, 3, 12] }],
      buffers: [new Uint8Array(240), f32(iota(60))],
      expected: Array.from({ length: 60 }, (_, i) => {
        const [a, b, c] = [Math.floor(i / 20), Math.floor(i / 5) % 4, i % 5];
        return c * 12 + b * 3 + a + 1;
      }),
      walk: 3,
    },
  ],
  [
    'backwards from an offset (rank 1): the last 7 of 9 reversed',
    {
      spec: COPY,
      dims: [7],
      out: { at: { buffer: 0 }, strides: [1] },
      inputs: [{ at: { buffer: 1, offset: 8 * 4 }, strides: [-1] }],
      buffers: [new Uint8Array(28), f32(iota(9))],
      expected: [9, 8, 7, 6, 5, 4, 3],
      walk: 1,
    },
  ],
  [
    'backwards in the outer dim, broadcast in the inner (rank 2, vector form)',
    {
      spec: ADD,
      dims: [3, 8],
      out: { at: { buffer: 0 }, strides: [8, 1] },
      inputs: [{ at: { buffer: 1, offset: 16 * 4 }, strides: [-8, 1] }, { at: { buffer: 2 }, strides: [1, 0] }],
      buffers: [new Uint8Array(96), f32(iota(24)), f32([1000, 2000, 3000])],
      expected: Array.from({ length: 24 }, (_, i) => (2 - Math.floor(i / 8)) * 8 + (i % 8) + 1 + (Math.floor(i / 8) + 1) * 1000),
      walk: 2,
    },
  ],
  [
    'rank 4: the general walk only',
    {
      spec: COPY,
      dims: [2, 3, 2, 2],
      out: { at: { buffer: 0 }, strides: [12, 4, 2, 1] },
      inputs: [{ at: { buffer: 1 }, strides: [1, 2, 6, 12] }],
      buffers: [new Uint8Array(96), f32(iota(24))],
      expected: Array.from({ length: 24 }, (_, i) => {
        const [a, b, c, d] = [Math.floor(i / 12), Math.floor(i / 4) % 3, Math.floor(i / 2) % 2, i % 2];
        return a + 2 * b + 6 * c + 12 * d + 1;
      }),
      walk: 0,
    },
  ],
];

/** The launch's arguments with `walk` replaced. */
function withWalk(step: KernelLaunch, inputs: number, walk: number): KernelLaunch {
  const args = [...step.args];
  args[inputs + 3] = { scalar: 'i32', value: walk };
  return { ...step, args };
}

describe.each(CASES)('%s', (_name, c) => {
  const [step, ...rest] = mapLaunch(c.spec, c.dims, c.out, c.inputs) as KernelLaunch[];

  test('lowers to one launch whose walk is the expected one', () => {
    expect(rest).toHaveLength(0);
    expect(step!.args[c.inputs.length + 3]).toEqual({ scalar: 'i32', value: c.walk });
  });

  test.each([
    ['as lowered', undefined],
    ['with the general walk', 0],
  ] as const)('%s: the values computed here', (_how, walk) => {
    const buffers = c.buffers.map((b) => b.slice());
    runSteps([walk === undefined ? step! : withWalk(step!, c.inputs.length, walk)], buffers);
    expect(read(buffers[0]!)).toEqual(c.expected);
  });
});
