/**
 * lib/gpu/plan.ts encodes plans; native/gpu/plan.cc decodes them. (lib/gpu's CPU tests live in
 * test/native/: test/gpu/ is the GPU-only jest project.) The expected layouts and addresses
 * below are worked out by hand from the C ABI rules and the format, not read back from the
 * encoder: the decoder (run without a GPU through gpuDescribePlan) must find each argument
 * where the kernel would read it, and refuse every out-of-range operand.
 */
import { InvalidArgumentError } from '../../lib/errors';
import { gpuBinding } from '../../lib/gpu/binding';
import { convOutputShape, encodePlan, packKernelArgs, type PlanSpec } from '../../lib/gpu/plan';
import { requireBuild } from '../helpers/built-package';

const base = (i: number): bigint => BigInt(i + 1) << 40n;

beforeAll(() => requireBuild());

function describe_(plan: PlanSpec, bufferSizes: number[], kernelCounts: number[] = [2]) {
  return gpuBinding().gpuDescribePlan(encodePlan(plan), bufferSizes, kernelCounts);
}

describe('packKernelArgs', () => {
  test('natural alignment: (f32, ptr, i32, f64, u32) → offsets 0, 8, 16, 24, 32; 36 bytes', () => {
    const packed = packKernelArgs([
      { scalar: 'f32', value: 1.5 },
      { pointer: { buffer: 0 } },
      { scalar: 'i32', value: -2 },
      { scalar: 'f64', value: 0.25 },
      { scalar: 'u32', value: 7 },
    ]);
    expect(packed.bytes.length).toBe(36);
    expect(packed.pointers.map((p) => p.at)).toEqual([8]);
    const view = new DataView(packed.bytes.buffer);
    expect(view.getFloat32(0, true)).toBe(1.5);
    expect(view.getInt32(16, true)).toBe(-2);
    expect(view.getFloat64(24, true)).toBe(0.25);
    expect(view.getUint32(32, true)).toBe(7);
  });

  test('a bad argument is E_INVALID_ARGUMENT naming its index', () => {
    expect(() => packKernelArgs([{ pointer: { buffer: 0 } }, { scalar: 'f16' as never, value: 1 }], 'step 3')).toThrow(
      /step 3: argument 1/,
    );
  });
});

describe('encodePlan → native decoder', () => {
  test('a launch: kernel, dims, and each pointer patched to buffer base + offset at its slot', () => {
    const [step] = describe_(
      {
        steps: [
          {
            kind: 'launch', module: 0, kernel: 1, grid: [10, 2], block: [128], sharedBytes: 4096,
            args: [{ pointer: { buffer: 1, offset: 64 } }, { scalar: 'f32', value: 2.5 }, { pointer: { buffer: 0 } }, { scalar: 'u64', value: 12345678901n }],
          },
        ],
      },
      [1024, 256],
    );
    expect(step).toMatchObject({ kind: 'launch', kernel: '0:1', grid: [10, 2, 1], block: [128, 1, 1], sharedBytes: 4096 });
    const params = Buffer.from(step!.params!);
    // ptr @0, f32 @8, ptr @16, u64 @24: 32 bytes.
    expect(params.length).toBe(32);
    expect(params.readBigUInt64LE(0)).toBe(base(1) + 64n);
    expect(params.readFloatLE(8)).toBe(2.5);
    expect(params.readBigUInt64LE(16)).toBe(base(0));
    expect(params.readBigUInt64LE(24)).toBe(12345678901n);
  });

  test('copy, memset, gemm and conv operands resolve to their addresses and sizes', () => {
    const conv = { input: [2, 6, 17, 19], weight: [8, 3, 3, 3], pads: [1, 2], strides: [2, 1], dilations: [1, 2], groups: 2 } as const;
    // PyTorch: floor((17 + 2 - 2 - 1) / 2) + 1 = 9; floor((19 + 4 - 4 - 1) / 1) + 1 = 19.
    expect(convOutputShape(conv)).toEqual([2, 8, 9, 19]);
    const steps = describe_(
      {
        steps: [
          { kind: 'copy', dst: { buffer: 1, offset: 8 }, src: { buffer: 0, offset: 4 }, bytes: 100 },
          { kind: 'memset', dst: { buffer: 2 }, bytes: 16, value: 255 },
          { kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, m: 4, n: 2, k: 8 },
          { kind: 'conv', x: { buffer: 3 }, w: { buffer: 4 }, bias: null, y: { buffer: 5 }, ...conv },
        ],
      },
      // gemm: A 4×8, B 8×2, D 4×2 floats; conv: x 2·6·17·19, w 8·3·3·3, y 2·8·9·19 floats.
      [128, 108, 32, 2 * 6 * 17 * 19 * 4, 8 * 3 * 3 * 3 * 4, 2 * 8 * 9 * 19 * 4],
    );
    expect(steps[0]).toMatchObject({ kind: 'copy', bytes: 100, ptrs: [base(1) + 8n, base(0) + 4n, 0n, 0n] });
    expect(steps[1]).toMatchObject({ kind: 'memset', bytes: 16, value: 255, ptrs: [base(2), 0n, 0n, 0n] });
    expect(steps[2]).toMatchObject({ kind: 'gemm', mnk: '4,2,8', ptrs: [base(0), base(1), base(2), 0n] });
    expect(steps[3]).toMatchObject({
      kind: 'conv',
      hasBias: false,
      conv: [2, 6, 17, 19, 8, 3, 3, 1, 2, 2, 1, 1, 2, 2, 9, 19],
      ptrs: [base(3), base(4), 0n, base(5)],
    });
  });

  test.each([
    ['a copy one byte past its source', { kind: 'copy', dst: { buffer: 0 }, src: { buffer: 1, offset: 1 }, bytes: 64 }, /copy source reads bytes \[1, 65\) of buffer 1, which holds 64/],
    ['a pointer into a buffer that does not exist', { kind: 'launch', module: 0, kernel: 0, grid: [1], block: [1], args: [{ pointer: { buffer: 2 } }] }, /names buffer 2 but the plan has 2/],
    ['a kernel the module does not have', { kind: 'launch', module: 0, kernel: 5, grid: [1], block: [1], args: [] }, /kernel 5 of module 0, which does not exist/],
    ['a GEMM whose D does not fit', { kind: 'gemm', a: { buffer: 0 }, b: { buffer: 0 }, d: { buffer: 1 }, m: 4, n: 5, k: 1 }, /gemm D reads bytes \[0, 80\) of buffer 1, which holds 64/],
  ])('the decoder refuses %s', (_what, step, message) => {
    let error: unknown;
    try {
      describe_({ steps: [step as never] }, [64, 64]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^The GPU plan is malformed at step 0/);
    expect((error as Error).message).toMatch(message);
  });

  test('truncated or foreign bytes are refused, not read past their end', () => {
    const good = encodePlan({ steps: [{ kind: 'memset', dst: { buffer: 0 }, bytes: 8, value: 1 }] });
    for (const bytes of [good.subarray(0, good.length - 2), good.subarray(0, 8), new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])]) {
      expect(() => gpuBinding().gpuDescribePlan(bytes, [64], [])).toThrow(InvalidArgumentError);
    }
    const trailing = new Uint8Array(good.length + 4);
    trailing.set(good);
    expect(() => gpuBinding().gpuDescribePlan(trailing, [64], [])).toThrow(/4 trailing bytes/);
  });

  test('the encoder refuses bad shapes with the step named', () => {
    expect(() => encodePlan({ steps: [{ kind: 'gemm', a: { buffer: 0 }, b: { buffer: 0 }, d: { buffer: 0 }, m: 0, n: 1, k: 1 }] })).toThrow(
      /plan step 0 \(gemm\): m must be an integer in \[1/,
    );
    expect(() =>
      encodePlan({ steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 0 }, y: { buffer: 0 }, input: [1, 6, 4, 4], weight: [2, 4, 3, 3] }] }),
    ).toThrow(/input has 6 channels, but weight \[2, 4, 3, 3\] with 1 group\(s\) takes 4/);
    expect(() => encodePlan({ steps: [{ kind: 'launch', module: 0, kernel: 0, grid: [0], block: [1], args: [] }] })).toThrow(/grid\[0\]/);
    expect(() => encodePlan({ steps: [{ kind: 'nope' } as never] })).toThrow(/unknown step kind/);
  });
});
