/**
 * lib/gpu/plan.ts encodes plans; native/gpu/plan.cc decodes them. (lib/gpu's CPU tests live in
 * test/native/: test/gpu/ is the GPU-only jest project.) The expected layouts and addresses
 * below are worked out by hand from the C ABI rules and the format, not read back from the
 * encoder: the decoder (run without a GPU through gpuDescribePlan) must find each argument
 * where the kernel would read it, and refuse every out-of-range operand.
 */
import { InvalidArgumentError, UnsupportedOpError } from '../../lib/errors';
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
    expect(steps[0]).toMatchObject({ kind: 'copy', bytes: 100, ptrs: [base(1) + 8n, base(0) + 4n, 0n, 0n, 0n] });
    expect(steps[1]).toMatchObject({ kind: 'memset', bytes: 16, value: 255, ptrs: [base(2), 0n, 0n, 0n, 0n] });
    expect(steps[2]).toMatchObject({
      kind: 'gemm',
      gemm: { m: 4, n: 2, k: 8, dtype: 'float32', transA: false, transB: false, tf32: false, batch: 1, alpha: 1, beta: 0 },
      ptrs: [base(0), base(1), base(2), 0n, 0n],
    });
    expect(steps[3]).toMatchObject({
      kind: 'conv',
      hasBias: false,
      conv: {
        spatial: 2, dtype: 'float32', transposed: false, n: 2, c: 6, k: 8, groups: 2,
        input: [17, 19], kernel: [3, 3], pads: [1, 2], postPads: [1, 2], strides: [2, 1], dilations: [1, 2], output: [9, 19],
      },
      ptrs: [base(3), base(4), 0n, 0n, base(5)],
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

/** The error `fn` throws (or a failure if it returns). */
function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('plan format 4: GEMM and convolution fields, encoder → native decoder', () => {
  // fp16 A 4×8 broadcast over the batch (stride 0): 4·8·2 = 64 bytes. B 8×2 with batch stride 20
  // elements, 3 batches: (2·20 + 16)·2 = 112 bytes. D 4×2 dense: (2·8 + 8)·2 = 48 bytes.
  const gemm = {
    kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, m: 4, n: 2, k: 8,
    dtype: 'float16', transA: true, transB: true, batch: 3, strideA: 0, strideB: 20, strideD: 8, alpha: 0.5, beta: 2,
  } as const;

  test('a strided-batch fp16 GEMM with transposes, broadcast A and alpha/beta decodes field for field', () => {
    const [step] = describe_({ steps: [gemm] }, [64, 112, 48]);
    expect(step).toMatchObject({
      kind: 'gemm',
      gemm: { m: 4, n: 2, k: 8, dtype: 'float16', transA: true, transB: true, tf32: false, batch: 3, strideA: 0, strideB: 20, strideD: 8, alpha: 0.5, beta: 2 },
      ptrs: [base(0), base(1), base(2), 0n, 0n],
    });
    const [tf32] = describe_({ steps: [{ kind: 'gemm', a: { buffer: 0 }, b: { buffer: 0 }, d: { buffer: 0 }, m: 2, n: 2, k: 2, tf32: true }] }, [16]);
    expect(tf32!.gemm).toMatchObject({ dtype: 'float32', tf32: true, batch: 1, strideA: 4, strideB: 4, strideD: 4 });
  });

  test('a GEMM epilogue (own C, bias, ReLU) and its tuning count decode; C and the bias are bounds-checked', () => {
    // fp16 A 4×8 (64 bytes), B stored 2×8 (32), C and D 4×2 (16 each), bias 2 (4 bytes).
    const epilogue = { kind: 'gemm', a: { buffer: 0 }, b: { buffer: 1 }, d: { buffer: 2 }, c: { buffer: 3 }, bias: { buffer: 4, offset: 4 }, m: 4, n: 2, k: 8, dtype: 'float16', transB: true, beta: 1, relu: true, tune: 8 } as const;
    const [step] = describe_({ steps: [epilogue] }, [64, 32, 16, 16, 8]);
    expect(step).toMatchObject({
      kind: 'gemm',
      gemm: { m: 4, n: 2, k: 8, dtype: 'float16', transB: true, relu: true, hasC: true, hasBias: true, tune: 8, batch: 1, beta: 1 },
      ptrs: [base(0), base(1), base(2), base(3), base(4) + 4n],
    });
    const [plain] = describe_({ steps: [{ ...epilogue, c: undefined, bias: undefined, relu: undefined, tune: undefined }] }, [64, 32, 16]);
    expect(plain!.gemm).toMatchObject({ relu: false, hasC: false, hasBias: false, tune: 0 });
    expect(thrown(() => describe_({ steps: [epilogue] }, [64, 32, 16, 16, 7])).message).toMatch(/gemm bias reads bytes \[4, 8\) of buffer 4, which holds 7/);
    expect(thrown(() => describe_({ steps: [epilogue] }, [64, 32, 16, 15, 8])).message).toMatch(/gemm C reads bytes \[0, 16\) of buffer 3, which holds 15/);
  });

  test('patched GEMM bytes: a ReLU on a batch, or an unknown flag, is refused by the decoder', () => {
    // Header 12 bytes, kind 4, five operands of 12: m at 76, then n, k, dtype, flags (92), batch, tune.
    const batched = encodePlan({ steps: [gemm] });
    const view = new DataView(batched.buffer);
    expect([view.getUint32(76, true), view.getUint32(96, true)]).toEqual([4, 3]);
    view.setUint32(92, view.getUint32(92, true) | 8, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(batched, [64, 112, 48], [])).message).toMatch(/malformed at step 0.*a C, a bias or a ReLU takes one matrix \(batch 1\), not 3/);
    const unknown = encodePlan({ steps: [{ ...gemm, batch: 1, strideA: undefined, strideB: undefined, strideD: undefined }] });
    new DataView(unknown.buffer).setUint32(92, 16, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(unknown, [64, 112, 48], [])).message).toMatch(/malformed at step 0.*flags \(16\)/);
  });

  test('the batch extents are exact: one byte short of B\'s last matrix is refused', () => {
    expect(thrown(() => describe_({ steps: [gemm] }, [64, 111, 48])).message).toMatch(/gemm B reads bytes \[0, 112\) of buffer 1, which holds 111/);
    expect(thrown(() => describe_({ steps: [gemm] }, [63, 112, 48])).message).toMatch(/gemm A reads bytes \[0, 64\) of buffer 0, which holds 63/);
  });

  test('bad GEMM fields are E_INVALID_ARGUMENT naming the step', () => {
    const base_ = { kind: 'gemm', a: { buffer: 0 }, b: { buffer: 0 }, d: { buffer: 0 }, m: 2, n: 2, k: 2 } as const;
    const cases: [object, RegExp][] = [
      [{ tf32: true, dtype: 'float16' }, /plan step 1 \(gemm\): tf32 applies to float32 GEMMs only, not float16/],
      [{ dtype: 'float64' }, /plan step 1 \(gemm\): dtype must be float32, float16 or bfloat16, got float64/],
      [{ batch: 2, strideD: 3 }, /plan step 1 \(gemm\): strideD 3 would make the 2 output matrices of 2×2 overlap/],
      [{ alpha: Infinity }, /plan step 1 \(gemm\): alpha must be a finite float32 number/],
      [{ beta: 1e39 }, /plan step 1 \(gemm\): beta must be a finite float32 number/],
      [{ transA: 1 }, /plan step 1 \(gemm\): transA must be a boolean/],
      [{ batch: 0 }, /plan step 1 \(gemm\): batch must be an integer in \[1/],
      [{ batch: 2, bias: { buffer: 0 } }, /plan step 1 \(gemm\): c, bias and relu take one matrix \(batch 1\), not 2/],
      [{ batch: 2, relu: true }, /plan step 1 \(gemm\): c, bias and relu take one matrix \(batch 1\), not 2/],
      [{ relu: 'yes' }, /plan step 1 \(gemm\): relu must be a boolean/],
      [{ tune: 17 }, /plan step 1 \(gemm\): tune must be an integer in \[0, 16\]/],
      [{ tune: 1.5 }, /plan step 1 \(gemm\): tune must be an integer in \[0, 16\]/],
    ];
    for (const [fields, message] of cases) {
      const error = thrown(() => encodePlan({ steps: [{ kind: 'memset', dst: { buffer: 0 }, bytes: 1, value: 0 }, { ...base_, ...fields } as never] }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toMatch(message);
    }
  });

  test('a 3-D fp16 convolution with asymmetric padding and bias: sizes and extents', () => {
    // d: floor((5 + 1 + 0 - 3) / 1) + 1 = 4; h: floor((6 + 0 + 1 - 3) / 2) + 1 = 3;
    // w: floor((7 + 2 + 2 - 5) / 1) + 1 = 7 (dilation 2: span 5).
    const conv = { input: [1, 2, 5, 6, 7], weight: [4, 2, 3, 3, 3], pads: [1, 0, 2], postPads: [0, 1, 2], strides: [1, 2, 1], dilations: [1, 1, 2] };
    expect(convOutputShape(conv)).toEqual([1, 4, 4, 3, 7]);
    // x 1·2·5·6·7·2 = 840, w 4·2·27·2 = 432, bias 4·2 = 8, y 1·4·4·3·7·2 = 672 bytes.
    const spec: PlanSpec = { steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, bias: { buffer: 2 }, y: { buffer: 3 }, dtype: 'float16', ...conv }] };
    const [step] = describe_(spec, [840, 432, 8, 672]);
    expect(step).toMatchObject({
      kind: 'conv',
      hasBias: true,
      conv: { spatial: 3, dtype: 'float16', transposed: false, n: 1, c: 2, k: 4, groups: 1, input: [5, 6, 7], kernel: [3, 3, 3], pads: [1, 0, 2], postPads: [0, 1, 2], strides: [1, 2, 1], dilations: [1, 1, 2], output: [4, 3, 7] },
      ptrs: [base(0), base(1), base(2), 0n, base(3)],
    });
    expect(thrown(() => describe_(spec, [840, 432, 8, 671])).message).toMatch(/convolution output reads bytes \[0, 672\) of buffer 3, which holds 671/);
  });

  test('a 1-D transposed bf16 convolution with output padding', () => {
    // Weight [c=4, k/groups=3, 5]; out = (10 - 1)·3 - 2 - 1 + 4 + 1 = 29 (output padding 2 - 1 = 1 < stride 3).
    const conv = { input: [2, 4, 10], weight: [4, 3, 5], pads: [2], postPads: [1], strides: [3], transposed: true };
    expect(convOutputShape(conv)).toEqual([2, 3, 29]);
    // x 2·4·10·2 = 160, w 4·3·5·2 = 120, y 2·3·29·2 = 348 bytes.
    const [step] = describe_({ steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, dtype: 'bfloat16', ...conv }] }, [160, 120, 348]);
    expect(step).toMatchObject({
      kind: 'conv',
      hasBias: false,
      conv: { spatial: 1, dtype: 'bfloat16', transposed: true, n: 2, c: 4, k: 3, groups: 1, input: [10], kernel: [5], pads: [2], postPads: [1], strides: [3], dilations: [1], output: [29] },
      ptrs: [base(0), base(1), 0n, 0n, base(2)],
    });
  });

  test('a transposed convolution whose padding cuDNN cannot express is E_UNSUPPORTED_OP, from the encoder and the decoder', () => {
    const conv = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: [2, 4, 10], weight: [4, 3, 5], strides: [3], transposed: true } as const;
    for (const [pads, postPads] of [[[0], [3]], [[3], [0]]]) {
      const error = thrown(() => encodePlan({ steps: [{ ...conv, pads, postPads }] }));
      expect(error).toBeInstanceOf(UnsupportedOpError);
      expect(error.message).toMatch(/^plan step 0 \(conv\): a transposed convolution with pads/);
    }
    // Bytes patched past the encoder: pads 2 → 0 and postPads 1 → 3 keep the output size (29).
    const encoded = encodePlan({ steps: [{ ...conv, pads: [2], postPads: [1] }] });
    const view = new DataView(encoded.buffer);
    // Header 12, kind 4, five operands 60, spatial/dtype/flags 12, n/c/k/groups 16: dim 0 at 104.
    expect([view.getInt32(104, true), view.getInt32(112, true), view.getInt32(116, true), view.getInt32(128, true)]).toEqual([10, 2, 1, 29]);
    view.setInt32(112, 0, true);
    view.setInt32(116, 3, true);
    const error = thrown(() => gpuBinding().gpuDescribePlan(encoded, [160, 120, 348], []));
    expect(error).toBeInstanceOf(UnsupportedOpError);
    expect(error.message).toMatch(/GPU plan step 0: a transposed convolution needs 0 <= pads - postPads < stride/);
  });

  test('the decoder refuses an unknown dtype and an output size that does not follow from the geometry', () => {
    const encoded = encodePlan({ steps: [{ kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: [2, 4, 10], weight: [3, 4, 5] }] });
    const dtype = encoded.slice();
    new DataView(dtype.buffer).setUint32(80, 7, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(dtype, [1000, 1000, 1000], [])).message).toMatch(/malformed at step 0.*dtype 7/);
    const out = encoded.slice();
    new DataView(out.buffer).setInt32(128, 7, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(out, [1000, 1000, 1000], [])).message).toMatch(/output size 7 in spatial dim 0, but the geometry gives 6/);
  });

  test('tf32 on a float32 convolution is flag 2; the encoder and the decoder refuse it on fp16/bf16', () => {
    const conv = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: [2, 4, 10], weight: [3, 4, 5] } as const;
    const encoded = encodePlan({ steps: [{ ...conv, tf32: true }] });
    // Header 12, kind 4, five operands 60, spatial 4, dtype 4: flags at 84.
    expect(new DataView(encoded.buffer).getUint32(84, true)).toBe(2);
    const [step] = gpuBinding().gpuDescribePlan(encoded, [1000, 1000, 1000], []);
    expect(step!.conv).toMatchObject({ dtype: 'float32', tf32: true, transposed: false });
    expect(gpuBinding().gpuDescribePlan(encodePlan({ steps: [conv] }), [1000, 1000, 1000], [])[0]!.conv!.tf32).toBe(false);
    expect(thrown(() => encodePlan({ steps: [{ ...conv, dtype: 'float16', tf32: true }] })).message).toMatch(/plan step 0 \(conv\): tf32 applies to float32 convolutions only, not float16/);
    const patched = encodePlan({ steps: [{ ...conv, dtype: 'bfloat16' }] });
    new DataView(patched.buffer).setUint32(84, 2, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(patched, [1000, 1000, 1000], [])).message).toMatch(/malformed at step 0.*flags 2/);
  });

  test('a channels-last fp16 convolution with a residual and a ReLU: flags 4 and 8, z sized as y', () => {
    // x 1·3·6·6·2 = 216, w 4·3·3·3·2 = 216, bias 8, z and y 1·4·6·6·2 = 288 bytes.
    const conv = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, bias: { buffer: 2 }, z: { buffer: 3 }, y: { buffer: 4 }, input: [1, 3, 6, 6], weight: [4, 3, 3, 3], pads: [1, 1], dtype: 'float16', channelsLast: true, relu: true } as const;
    const encoded = encodePlan({ steps: [conv] });
    expect(new DataView(encoded.buffer).getUint32(84, true)).toBe(4 | 8);
    const [step] = gpuBinding().gpuDescribePlan(encoded, [216, 216, 8, 288, 288], []);
    expect(step).toMatchObject({ kind: 'conv', hasBias: true, conv: { channelsLast: true, relu: true, residual: true, transposed: false }, ptrs: [base(0), base(1), base(2), base(3), base(4)] });
    expect(thrown(() => describe_({ steps: [conv] }, [216, 216, 8, 287, 288])).message).toMatch(/convolution residual reads bytes \[0, 288\) of buffer 3, which holds 287/);
    // Forward only, symmetric padding only: from the encoder, and from the decoder for patched bytes.
    expect(thrown(() => encodePlan({ steps: [{ ...conv, pads: [1, 0], postPads: [0, 1] }] })).message).toMatch(/channels-last convolution takes symmetric padding only/);
    const transposed = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: [1, 4, 6, 6], weight: [4, 3, 3, 3], pads: [1, 1], transposed: true } as const;
    expect(thrown(() => encodePlan({ steps: [{ ...transposed, relu: true }] })).message).toMatch(/apply to forward convolutions only/);
    const patched = encodePlan({ steps: [transposed] });
    new DataView(patched.buffer).setUint32(84, 1 | 8, true);
    expect(thrown(() => gpuBinding().gpuDescribePlan(patched, [1000, 1000, 1000], [])).message).toMatch(/malformed at step 0.*flags 9/);
  });

  test('bad convolution fields are E_INVALID_ARGUMENT naming the step', () => {
    const conv = { kind: 'conv', x: { buffer: 0 }, w: { buffer: 1 }, y: { buffer: 2 }, input: [1, 2, 5, 6, 7], weight: [4, 2, 3, 3, 3] } as const;
    const cases: [object, RegExp][] = [
      [{ pads: [1, 1] }, /plan step 0 \(conv\): pads must have 3 entries/],
      [{ postPads: [0, 0, -1] }, /plan step 0 \(conv\): postPads\[2\] must be an integer/],
      [{ dtype: 'int8' }, /plan step 0 \(conv\): dtype must be float32, float16 or bfloat16/],
      [{ transposed: 'yes' }, /plan step 0 \(conv\): transposed must be a boolean/],
      [{ input: [1, 2, 5, 6, 7, 8], weight: [4, 2, 3, 3, 3, 3] }, /plan step 0 \(conv\): input and weight must both be 3-D, 4-D or 5-D/],
      [{ strides: [1, 1, 0] }, /plan step 0 \(conv\): strides\[2\] must be an integer in \[1/],
    ];
    for (const [fields, message] of cases) {
      const error = thrown(() => encodePlan({ steps: [{ ...conv, ...fields } as never] }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toMatch(message);
    }
  });
});
