/**
 * ONNX INT16, UINT16, UINT32 and UINT64 tensors import with exact values from every field a
 * TensorProto may hold them in: raw_data (little-endian), int32_data (INT16 and UINT16,
 * widened one per entry) and uint64_data (UINT32 and UINT64). Protos go through encode and
 * decode, so the fields are what protobufjs hands the importer (Longs for 64-bit values).
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { tensorFromProto } from '../../../lib/frontends/onnx/tensor-proto';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { thrownError } from '../../helpers/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

const INT16 = 5;
const UINT16 = 4;
const UINT32 = 12;
const UINT64 = 13;
const U64_MAX = 2n ** 64n - 1n;

/** A TensorProto as the decoder gives it back. */
function decoded(fields: Record<string, unknown>): unknown {
  return onnx.TensorProto.decode(onnx.TensorProto.encode(onnx.TensorProto.create({ name: 't', ...fields })).finish());
}

/** Little-endian bytes of `values` written with DataView's `setter`. */
function rawBytes(width: number, values: readonly (number | bigint)[], set: (view: DataView, at: number, v: never) => void): Uint8Array {
  const bytes = new Uint8Array(width * values.length);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => set(view, i * width, v as never));
  return bytes;
}

const slots = (t: Tensor): unknown[] => Array.from(t.data as ArrayLike<unknown>);

describe('tensorFromProto', () => {
  test.each([
    ['INT16', INT16, 'int16', [-32768, 32767, -1]],
    ['UINT16', UINT16, 'uint16', [0, 65535, 1234]],
  ] as const)('%s from int32_data', (_, dataType, dtype, values) => {
    const t = tensorFromProto(decoded({ dims: [3], dataType, int32Data: values }) as never, 'initializer "t"');
    expect([t.dtype, t.shape]).toEqual([dtype, [3]]);
    expect(slots(t)).toEqual(values);
  });

  test('UINT32 from uint64_data', () => {
    const t = tensorFromProto(decoded({ dims: [2], dataType: UINT32, uint64Data: [0, 4294967295] }) as never, 'initializer "t"');
    expect(t.dtype).toBe('uint32');
    expect(slots(t)).toEqual([0, 4294967295]);
  });

  test('UINT64 from uint64_data keeps values past 2^53 exactly', () => {
    const proto = decoded({ dims: [3], dataType: UINT64, uint64Data: ['18446744073709551615', '9007199254740993', 7] });
    const t = tensorFromProto(proto as never, 'initializer "t"');
    expect(t.dtype).toBe('uint64');
    expect(slots(t)).toEqual([U64_MAX, 2n ** 53n + 1n, 7n]);
  });

  test('a UINT32 value past 2^32 in uint64_data is E_BAD_MODEL naming the tensor', () => {
    const e = thrownError(() => tensorFromProto(decoded({ dims: [1], dataType: UINT32, uint64Data: ['4294967296'] }) as never, 'initializer "t"'));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('initializer "t": uint64_data value 0 is 4294967296, outside uint32');
  });

  test.each([
    ['INT16', INT16, 2, [-32768, 32767, -2], (v: DataView, at: number, x: number) => v.setInt16(at, x, true)],
    ['UINT16', UINT16, 2, [0, 65535, 40000], (v: DataView, at: number, x: number) => v.setUint16(at, x, true)],
    ['UINT32', UINT32, 4, [0, 4294967295, 3000000000], (v: DataView, at: number, x: number) => v.setUint32(at, x, true)],
    ['UINT64', UINT64, 8, [U64_MAX, 2n ** 53n + 1n, 2n ** 63n], (v: DataView, at: number, x: bigint) => v.setBigUint64(at, x, true)],
  ] as const)('%s from raw_data (little-endian)', (_, dataType, width, values, set) => {
    const rawData = rawBytes(width, values, set as never);
    const t = tensorFromProto(decoded({ dims: [3], dataType, rawData }) as never, 'initializer "t"');
    expect(slots(t)).toEqual(values);
  });

  test('raw_data of the wrong length is E_BAD_MODEL', () => {
    const e = thrownError(() => tensorFromProto(decoded({ dims: [2], dataType: UINT16, rawData: new Uint8Array(3) }) as never, 'initializer "t"'));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('raw data holds 3 bytes, but uint16 with 2 elements needs 4');
  });
});

/** y = x + w (Add, opset 14) with x a graph input and w an initializer, both of `elemType`. */
function addModel(elemType: number, initializer: Record<string, unknown>): Uint8Array {
  const type = { tensorType: { elemType, shape: { dim: [{ dimValue: 2 }] } } };
  const graph = onnx.GraphProto.create({
    name: 'g',
    node: [onnx.NodeProto.create({ opType: 'Add', input: ['x', 'w'], output: ['y'], name: 'add' })],
    input: [{ name: 'x', type }],
    output: [{ name: 'y', type }],
    initializer: [onnx.TensorProto.create({ name: 'w', dims: [2], dataType: elemType, ...initializer })],
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 14 }], graph })).finish();
}

describe('a model of these types imports and runs', () => {
  test('uint64: the graph input, initializer and output are uint64 and the sum is exact, wrapping', () => {
    const graph = loadOnnx(addModel(UINT64, { uint64Data: ['18446744073709551615', '9007199254740993'] }));
    expect(graph.inputs[0]!.type).toMatchObject({ kind: 'tensor', dtype: 'uint64' });
    const [y] = interpret(graph, [Tensor.from('uint64', [2], [2n, 2n])]);
    expect(y!.dtype).toBe('uint64');
    expect(slots(y!)).toEqual([1n, 2n ** 53n + 3n]);
  });

  test('int16 wraps on overflow', () => {
    const [y] = interpret(loadOnnx(addModel(INT16, { int32Data: [32767, -32768] })), [Tensor.from('int16', [2], [1, -1])]);
    expect([y!.dtype, ...slots(y!)]).toEqual(['int16', -32768, 32767]);
  });
});
