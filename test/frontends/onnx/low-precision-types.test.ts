/**
 * ONNX's 8-, 4- and 2-bit element types: TensorProto import from raw_data and int32_data
 * (the 4- and 2-bit types packed, low bits first, int32_data entries possibly sign-extended),
 * Cast and CastLike with `saturate`, QuantizeLinear and DequantizeLinear into and out of them,
 * and compile() running such a Cast in a fallback segment. Expected values are worked out by
 * hand from the formats (float8e4m3fn: max 448, no Infinity; e5m2: Infinity 0x7c).
 */
import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { packSubByte, tensorFromProto } from '../../../lib/frontends/onnx/tensor-proto';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { thrownError } from '../../helpers/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

const FLOAT = 1;
const FLOAT8E4M3FN = 17;
const FLOAT8E5M2 = 19;
const UINT4 = 21;
const INT4 = 22;
const FLOAT4E2M1 = 23;
const FLOAT8E8M0 = 24;
const UINT2 = 25;
const INT2 = 26;

function decoded(fields: Record<string, unknown>): unknown {
  return onnx.TensorProto.decode(onnx.TensorProto.encode(onnx.TensorProto.create({ name: 't', ...fields })).finish());
}

const slots = (t: Tensor): number[] => Array.from(t.data as ArrayLike<number>);
const proto = (fields: Record<string, unknown>): Tensor => tensorFromProto(decoded(fields) as never, 'initializer "t"');

describe('tensorFromProto', () => {
  test('INT4 raw_data: two per byte, low nibble first, an odd count leaves the last high nibble', () => {
    // 0x87 → 7, -8; 0xa9 → -7, -6; 0x0f → -1 (its high nibble is padding).
    const t = proto({ dims: [5], dataType: INT4, rawData: new Uint8Array([0x87, 0xa9, 0x0f]) });
    expect([t.dtype, ...slots(t)]).toEqual(['int4', 7, -8, -7, -6, -1]);
  });

  test('UINT4 and INT4 int32_data: one packed byte per entry, sign-extended entries read by their low byte', () => {
    expect(slots(proto({ dims: [3], dataType: UINT4, int32Data: [0x21, 0x0f] }))).toEqual([1, 2, 15]);
    // -120 is the byte 0x88 written as a signed value: -8, -8.
    expect(slots(proto({ dims: [3], dataType: INT4, int32Data: [-120, 7] }))).toEqual([-8, -8, 7]);
  });

  test('UINT2 and INT2: four per byte, lowest bits first', () => {
    // 0b11_10_01_00 = 0xe4 → 0, 1, 2, 3; then 0b01 → 1.
    expect(slots(proto({ dims: [5], dataType: UINT2, rawData: new Uint8Array([0xe4, 0x01]) }))).toEqual([0, 1, 2, 3, 1]);
    expect(slots(proto({ dims: [5], dataType: INT2, int32Data: [0xe4, 0x01] }))).toEqual([0, 1, -2, -1, 1]);
  });

  test('FLOAT4E2M1 keeps its codes; the values decode', () => {
    const t = proto({ dims: [3], dataType: FLOAT4E2M1, rawData: new Uint8Array([0xf7, 0x01]) });
    expect([t.dtype, ...slots(t), ...t.toArray()]).toEqual(['float4e2m1', 7, 15, 1, 6, -6, 0.5]);
  });

  test('FLOAT8 from raw_data and from int32_data (one pattern per entry)', () => {
    const raw = proto({ dims: [3], dataType: FLOAT8E4M3FN, rawData: new Uint8Array([0x7e, 0xfe, 0x7f]) });
    expect([raw.dtype, ...raw.toArray()]).toEqual(['float8e4m3fn', 448, -448, NaN]);
    const typed = proto({ dims: [2], dataType: FLOAT8E5M2, int32Data: [0x7c, 0x38] });
    expect([typed.dtype, ...typed.toArray()]).toEqual(['float8e5m2', Infinity, 0.5]);
    expect(proto({ dims: [1], dataType: FLOAT8E8M0, int32Data: [0x80] }).toArray()).toEqual([2]);
  });

  test('packed data of the wrong size is E_BAD_MODEL', () => {
    const raw = thrownError(() => proto({ dims: [5], dataType: INT4, rawData: new Uint8Array(2) }));
    expect([raw.code, raw.message]).toEqual(['E_BAD_MODEL', expect.stringContaining('raw data holds 2 bytes, but int4 with 5 elements needs 3')]);
    const typed = thrownError(() => proto({ dims: [5], dataType: UINT2, int32Data: [1, 2, 3] }));
    expect([typed.code, typed.message]).toEqual(['E_BAD_MODEL', expect.stringContaining('int32_data holds 3 values, its shape [5] needs 2')]);
  });

  test('packSubByte is unpacking undone', () => {
    expect(Array.from(packSubByte('int4', [7, -8, -7, -6, -1]))).toEqual([0x87, 0xa9, 0x0f]);
    expect(Array.from(packSubByte('uint2', [0, 1, 2, 3, 1]))).toEqual([0xe4, 0x01]);
  });
});

/** One node of `opType` over float inputs (graph inputs of `inTypes`), opset `opset`. */
function model(opType: string, attrs: Record<string, number | string>, inTypes: number[], outType: number, initializers: unknown[] = [], opset = 25): Uint8Array {
  const type = (elemType: number) => ({ tensorType: { elemType, shape: { dim: [{ dimValue: 4 }] } } });
  const attribute = Object.entries(attrs).map(([name, v]) =>
    typeof v === 'number' ? { name, type: 2, i: v } : { name, type: 3, s: new TextEncoder().encode(v) },
  );
  const inputs = inTypes.map((t, i) => ({ name: `x${i}`, type: type(t) }));
  const init = initializers as { name: string }[];
  const graph = onnx.GraphProto.create({
    name: 'g',
    node: [onnx.NodeProto.create({ opType, input: [...inputs.map((x) => x.name), ...init.map((t) => t.name)], output: ['y'], name: 'n', attribute })],
    input: inputs,
    output: [{ name: 'y', type: type(outType) }],
    initializer: init.map((t) => onnx.TensorProto.create(t)),
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 11, opsetImport: [{ domain: '', version: opset }], graph })).finish();
}

const f32 = (v: number[]): Tensor => Tensor.from('float32', [v.length], v);

describe('Cast and CastLike', () => {
  const x = f32([500, -Infinity, NaN, 0.4375]);

  test('to float8e4m3fn with saturate (the default): ±max for what is past it, NaN kept', () => {
    const [y] = interpret(loadOnnx(model('Cast', { to: FLOAT8E4M3FN }, [FLOAT], FLOAT8E4M3FN)), [x]);
    // 0.4375 = 1.75·2^-2: exponent field 5, mantissa 110.
    expect([y!.dtype, ...slots(y!)]).toEqual(['float8e4m3fn', 0x7e, 0xfe, 0x7f, 0x2e]);
  });

  test('saturate=0: float8e4m3fn has no Infinity (NaN), float8e5m2 overflows to ±Infinity', () => {
    const [a] = interpret(loadOnnx(model('Cast', { to: FLOAT8E4M3FN, saturate: 0 }, [FLOAT], FLOAT8E4M3FN)), [x]);
    expect(slots(a!)).toEqual([0x7f, 0x7f, 0x7f, 0x2e]);
    const [b] = interpret(loadOnnx(model('Cast', { to: FLOAT8E5M2, saturate: 0 }, [FLOAT], FLOAT8E5M2)), [f32([1e6, -1e6, 500, 0.4375])]);
    // 500 → 512 (1.0·2^9; 448 and 512 are its neighbours, 512 nearer); 0.4375 → 0.4375 (1.11b·2^-2).
    expect(slots(b!)).toEqual([0x7c, 0xfc, 0x60, 0x37]);
  });

  test('CastLike takes the type and saturate from the like input', () => {
    const [y] = interpret(loadOnnx(model('CastLike', { saturate: 1 }, [FLOAT, FLOAT8E5M2], FLOAT8E5M2)), [
      f32([1e6, -Infinity, 3, 0]),
      Tensor.from('float8e5m2', [4], [0, 0, 0, 0]),
    ]);
    expect(slots(y!)).toEqual([0x7b, 0xfb, 0x42, 0x00]);
  });

  test('to INT4 rounds to nearest even and wraps; back to float is exact', () => {
    const [q] = interpret(loadOnnx(model('Cast', { to: INT4 }, [FLOAT], INT4)), [f32([9, -9, 2.5, 7])]);
    expect([q!.dtype, ...slots(q!)]).toEqual(['int4', -7, 7, 2, 7]);
    const [back] = interpret(loadOnnx(model('Cast', { to: FLOAT }, [INT4], FLOAT)), [q!]);
    expect(back!.toArray()).toEqual([-7, 7, 2, 7]);
  });

  test('to FLOAT8E8M0 rounds up by default; another round_mode is refused naming the node', () => {
    const [y] = interpret(loadOnnx(model('Cast', { to: FLOAT8E8M0 }, [FLOAT], FLOAT8E8M0)), [f32([1.1, 2, 0.124, 0])]);
    expect(slots(y!)).toEqual([0x80, 0x80, 0x7c, 0x00]);
    const e = thrownError(() => loadOnnx(model('Cast', { to: FLOAT8E8M0, round_mode: 'nearest' }, [FLOAT], FLOAT8E8M0)));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/ONNX node "n" \(Cast\).*round_mode "nearest" is not supported/);
  });
});

describe('QuantizeLinear and DequantizeLinear', () => {
  const scale = (v: number) => ({ name: 's', dims: [], dataType: FLOAT, floatData: [v] });

  test('into float8e4m3fn: x / scale, saturated; a zero point must be 0', () => {
    const zp = { name: 'zp', dims: [], dataType: FLOAT8E4M3FN, int32Data: [0] };
    const [y] = interpret(loadOnnx(model('QuantizeLinear', {}, [FLOAT], FLOAT8E4M3FN, [scale(2), zp])), [f32([0, 2, 1e5, -0.875])]);
    // 1e5 / 2 saturates to 448; -0.875 / 2 = -0.4375 (1.11b·2^-2, sign set).
    expect(slots(y!)).toEqual([0x00, 0x38, 0x7e, 0xae]);
    const bad = { ...zp, int32Data: [0x38] };
    const e = thrownError(() => loadOnnx(model('QuantizeLinear', {}, [FLOAT], FLOAT8E4M3FN, [scale(2), bad])));
    expect([e.code, e.message]).toEqual(['E_BAD_MODEL', expect.stringMatching(/zero point \(input 2\) must be 0/)]);
  });

  test('into int4 and uint2: rounded half to even, plus the zero point, clipped to the range', () => {
    const zp4 = { name: 'zp', dims: [], dataType: INT4, int32Data: [1] };
    const [q4] = interpret(loadOnnx(model('QuantizeLinear', {}, [FLOAT], INT4, [scale(2), zp4])), [f32([5, -30, 30, 3])]);
    // 5/2 = 2.5 → 2, +1 = 3; -15 + 1 → -8; 15 + 1 → 7; 1.5 → 2, +1 = 3.
    expect([q4!.dtype, ...slots(q4!)]).toEqual(['int4', 3, -8, 7, 3]);
    const zp2 = { name: 'zp', dims: [], dataType: UINT2, int32Data: [1] };
    const [q2] = interpret(loadOnnx(model('QuantizeLinear', {}, [FLOAT], UINT2, [scale(1), zp2])), [f32([-3, 0, 1, 9])]);
    expect(slots(q2!)).toEqual([0, 1, 2, 3]);
  });

  test('from float8e5m2 and int4: (x - zero point) · scale', () => {
    const [a] = interpret(loadOnnx(model('DequantizeLinear', {}, [FLOAT8E5M2], FLOAT, [scale(2)])), [Tensor.from('float8e5m2', [4], [0.5, -3, 57344, 0])]);
    expect(a!.toArray()).toEqual([1, -6, 114688, 0]);
    const zp = { name: 'zp', dims: [], dataType: INT4, int32Data: [-8 & 0xf] };
    const [b] = interpret(loadOnnx(model('DequantizeLinear', {}, [INT4], FLOAT, [scale(0.5), zp])), [Tensor.from('int4', [4], [-8, 7, 0, -1])]);
    expect(b!.toArray()).toEqual([0, 7.5, 4, 3.5]);
  });
});

test('compile() runs a float8 Cast in a fallback segment, the converters refusing float8e4m3fn by name', async () => {
  const bytes = model('Cast', { to: FLOAT8E4M3FN }, [FLOAT], FLOAT8E4M3FN);
  const program = await compile(bytes, { backend: 'reference', minBlockSize: 1 });
  try {
    // The saturating clip before the cast is float32 and converts; the cast itself does not.
    expect(program.data.segments.map((s) => s.kind)).toEqual(['engine', 'fallback']);
    const refused = program.report.ops.filter((o) => !o.converted);
    expect(refused.map((o) => o.target)).toEqual(['aten._to_copy.default']);
    expect(refused[0]!.reasons.join('; ')).toMatch(/is float8e4m3fn: TensorRT holds FP8 only between quantize and dequantize layers/);
    const [y] = await program.run([f32([500, 0.4375, -1, NaN])]);
    expect([y!.dtype, ...slots(y!)]).toEqual(['float8e4m3fn', 0x7e, 0x2e, 0xb8, 0x7f]);
  } finally {
    await program.dispose();
  }
});
