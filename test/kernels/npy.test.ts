import { InvalidArgumentError } from '../../lib/errors';
import type { DType } from '../../lib/ir/dtype';
import { readNpy, writeNpy } from '../../lib/kernels/npy';
import { Tensor } from '../../lib/ir/tensor';

/**
 * An .npy file assembled by hand from the format spec: magic "\x93NUMPY", version bytes, a
 * little-endian header length (2 bytes for 1.0, 4 for 2.0/3.0), the header text padded with
 * spaces and ended by '\n' so that the data starts at a multiple of 64, then the data.
 */
function npyBytes(header: string, data: Uint8Array, major = 1, padTo = 64): Uint8Array {
  const lengthBytes = major === 1 ? 2 : 4;
  const headerBytes = new TextEncoder().encode(header);
  const unpadded = 8 + lengthBytes + headerBytes.length + 1;
  const pad = (padTo - (unpadded % padTo)) % padTo;
  const hlen = headerBytes.length + pad + 1;
  const out = new Uint8Array(8 + lengthBytes + hlen + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  for (let i = 0; i < lengthBytes; i++) out[8 + i] = (hlen >> (8 * i)) & 0xff;
  out.set(headerBytes, 8 + lengthBytes);
  out.fill(0x20, 8 + lengthBytes + headerBytes.length, 8 + lengthBytes + hlen - 1);
  out[8 + lengthBytes + hlen - 1] = 0x0a;
  out.set(data, 8 + lengthBytes + hlen);
  return out;
}

/** Little-endian bytes of float32 values, written with DataView. */
function float32Bytes(values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return out;
}

describe('readNpy of hand-built files', () => {
  it('reads a version 1.0 float32 (2, 3) array', () => {
    const bytes = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", float32Bytes([0, 1.5, -2, 3, 4, 5]));
    expect(bytes.length % 64).toBe(24 % 64); // 64-byte header block, then 24 data bytes
    const t = readNpy(bytes);
    expect(t.dtype).toBe('float32');
    expect([...t.shape]).toEqual([2, 3]);
    expect(t.toArray()).toEqual([0, 1.5, -2, 3, 4, 5]);
  });

  it('reads int64, bool, int8, uint8, float16 and complex64 data', () => {
    const i64 = new Uint8Array(16);
    new DataView(i64.buffer).setBigInt64(0, -5n, true);
    new DataView(i64.buffer).setBigInt64(8, 2n ** 40n, true);
    const a = readNpy(npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i64));
    expect(a.dtype).toBe('int64');
    expect([...(a.data as BigInt64Array)]).toEqual([-5n, 2n ** 40n]);

    const b = readNpy(npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", new Uint8Array([1, 0, 1])));
    expect(b.dtype).toBe('bool');
    expect(b.toArray()).toEqual([1, 0, 1]);

    const c = readNpy(npyBytes("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", new Uint8Array([0xff, 0x7f])));
    expect(c.dtype).toBe('int8');
    expect(c.toArray()).toEqual([-1, 127]);

    const d = readNpy(npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1), }", new Uint8Array([200])));
    expect(d.dtype).toBe('uint8');
    expect(d.toArray()).toEqual([200]);

    // float16 1.0 is 0x3c00 and -2.0 is 0xc000, stored little-endian.
    const e = readNpy(npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", new Uint8Array([0x00, 0x3c, 0x00, 0xc0])));
    expect(e.dtype).toBe('float16');
    expect(e.toArray()).toEqual([1, -2]);

    const f = readNpy(npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", float32Bytes([1.5, -2.5])));
    expect(f.dtype).toBe('complex64');
    expect(f.toArray()).toEqual([1.5, -2.5]);
  });

  it('reads 0-d and size-0 arrays', () => {
    const f8 = new Uint8Array(8);
    new DataView(f8.buffer).setFloat64(0, 3.25, true);
    const s = readNpy(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8));
    expect([...s.shape]).toEqual([]);
    expect(s.toArray()).toEqual([3.25]);
    const z = readNpy(npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 4), }", new Uint8Array(0)));
    expect([...z.shape]).toEqual([0, 4]);
    expect(z.dtype).toBe('int32');
  });

  it('reads version 2.0 and 3.0 headers and other key orders and spacing', () => {
    const data = float32Bytes([7]);
    const v2 = readNpy(npyBytes("{'shape': (1,), 'fortran_order': False, 'descr': '<f4'}", data, 2));
    expect(v2.toArray()).toEqual([7]);
    const v3 = readNpy(npyBytes('{"descr":"<f4","fortran_order":False,"shape":(1,)}', data, 3));
    expect(v3.toArray()).toEqual([7]);
    // Older numpy aligned to 16 bytes; readers must follow the header length, not assume 64.
    const old = readNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", data, 1, 16));
    expect(old.toArray()).toEqual([7]);
  });

  it('reads big-endian data by swapping bytes', () => {
    const be = new Uint8Array(8);
    new DataView(be.buffer).setInt32(0, 0x01020304, false);
    new DataView(be.buffer).setInt32(4, -2, false);
    const t = readNpy(npyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be));
    expect(t.toArray()).toEqual([0x01020304, -2]);
  });

  it('copies the data out of the buffer (even at an unaligned offset)', () => {
    const bytes = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", float32Bytes([2]));
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    const view = shifted.subarray(1);
    const t = readNpy(view);
    view[view.length - 1] = 0xff;
    expect(t.toArray()).toEqual([2]);
  });
});

describe('readNpy errors say what and where', () => {
  const good = (): Uint8Array => npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", float32Bytes([1, 2]));

  it('bad magic', () => {
    const b = good();
    b[3] = 0x41;
    expect(() => readNpy(b)).toThrow(InvalidArgumentError);
    expect(() => readNpy(b)).toThrow(/bad magic at byte 3/);
  });

  it('a buffer too short for the preamble or the header', () => {
    expect(() => readNpy(new Uint8Array([0x93, 0x4e]))).toThrow(/too short/);
    expect(() => readNpy(good().subarray(0, 40))).toThrow(/truncated header: .*byte 8 says 118 bytes from byte 10, but the buffer ends at byte 40/);
  });

  it('data shorter than the shape needs', () => {
    const b = good();
    expect(() => readNpy(b.subarray(0, b.length - 1))).toThrow(/data at byte 128 needs 8 bytes .* only 7 remain/);
  });

  it('fortran_order True', () => {
    const b = npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", float32Bytes([1, 2]));
    expect(() => readNpy(b)).toThrow(/fortran_order True/);
  });

  it('an unsupported dtype, a missing byte order, an unknown version, a malformed dict', () => {
    expect(() => readNpy(npyBytes("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4)))).toThrow(/unsupported dtype descr "<U4"/);
    expect(() => readNpy(npyBytes("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4)))).toThrow(/byte order/);
    const v9 = good();
    v9[6] = 9;
    expect(() => readNpy(v9)).toThrow(/unsupported format version 9.0 at byte 6/);
    expect(() => readNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", new Uint8Array(8)))).toThrow(/malformed header at byte \d+/);
    expect(() => readNpy(npyBytes("{'descr': '<f4', 'fortran_order': False}", new Uint8Array(8)))).toThrow(/'shape'/);
  });
});

describe('readNpy shapes are exact integers', () => {
  const header = (shape: string): string => `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;

  it.each(['(1000000000000000000000, 0)', '(0, 9007199254740993)', '(9007199254740992L,)'])('a dim past 2^53 is refused: %s', (shape) => {
    const b = npyBytes(header(shape), new Uint8Array(0));
    expect(() => readNpy(b)).toThrow(InvalidArgumentError);
    expect(() => readNpy(b)).toThrow(/malformed header at byte \d+: the shape's dim \d+ is past 2\^53/);
  });

  it('the largest exact dim is read (an empty array)', () => {
    const t = readNpy(npyBytes(header('(9007199254740991, 0)'), new Uint8Array(0)));
    expect(t.shape).toEqual([2 ** 53 - 1, 0]);
    expect(t.size).toBe(0);
  });

  it('exact dims whose product no data backs are refused before allocating', () => {
    expect(() => readNpy(npyBytes(header('(1099511627776, 1099511627776)'), new Uint8Array(0)))).toThrow(/needs 4\.8\d*e\+24 bytes for float32 shape \(1099511627776, 1099511627776\), but only 0 remain/);
  });
});

describe('writeNpy', () => {
  it('writes exactly the bytes of the spec (numpy.save layout) for float32 (2, 3)', () => {
    const t = Tensor.from('float32', [2, 3], [0, 1.5, -2, 3, 4, 5]);
    // numpy also leaves 21 − len("2") spaces after the dict so the first axis can grow in place.
    const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + ' '.repeat(20);
    expect(Buffer.from(writeNpy(t))).toEqual(Buffer.from(npyBytes(header, float32Bytes([0, 1.5, -2, 3, 4, 5]))));
  });

  it('writes 0-d shapes as () and 1-d shapes as (n,)', () => {
    const text = (t: Tensor): string => new TextDecoder('latin1').decode(writeNpy(t).subarray(10, 118));
    expect(text(Tensor.from('float64', [], [1]))).toContain("'shape': (), }");
    expect(text(Tensor.from('bool', [3], [1, 0, 1]))).toContain("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }");
  });

  const dtypes: Array<[DType, number[] | bigint[]]> = [
    ['float32', [1.5, -2, 0]],
    ['float64', [0.1, -1e300, 5]],
    ['float16', [1, -2.5, 65504]],
    ['int8', [-128, 0, 127]],
    ['uint8', [0, 1, 255]],
    ['int32', [-2147483648, 7, 2147483647]],
    ['int64', [-(2n ** 62n), 0n, 2n ** 62n + 1n]],
    ['bool', [1, 0, 1]],
    ['complex64', [1, 2, 3, 4, 5, 6]],
    ['complex128', [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]],
  ];
  it.each(dtypes)('round-trips %s with the data at a 64-byte boundary', (dtype, values) => {
    const t = Tensor.from(dtype, [3], values);
    const bytes = writeNpy(t);
    const headerLength = bytes[8]! | (bytes[9]! << 8);
    expect((10 + headerLength) % 64).toBe(0);
    expect(bytes[10 + headerLength - 1]).toBe(0x0a);
    const back = readNpy(bytes);
    expect(back.dtype).toBe(dtype);
    expect([...back.shape]).toEqual([3]);
    expect([...back.data]).toEqual([...t.data]);
  });

  it('round-trips multi-dimensional and size-0 shapes', () => {
    for (const shape of [[2, 3, 4], [0, 5], [1, 1, 1], []]) {
      const n = shape.reduce((a, b) => a * b, 1);
      const t = Tensor.from('float32', shape, Array.from({ length: n }, (_, i) => i * 0.5));
      const back = readNpy(writeNpy(t));
      expect([...back.shape]).toEqual(shape);
      expect(back.toArray()).toEqual(t.toArray());
    }
  });

  it('switches to version 2.0 when the header does not fit 65535 bytes', () => {
    // The header grows with the shape's text; 13,000 dims of 1 write ~39 KB, so use more.
    const shape = new Array<number>(30000).fill(1);
    const bytes = writeNpy(new Tensor('int8', shape));
    expect(bytes[6]).toBe(2);
    const hlen = bytes[8]! + bytes[9]! * 256 + bytes[10]! * 65536 + bytes[11]! * 16777216;
    expect((12 + hlen) % 64).toBe(0);
    expect(readNpy(bytes).shape.length).toBe(30000);
  });

  it('refuses bfloat16, which NumPy has no type for', () => {
    expect(() => writeNpy(new Tensor('bfloat16', [2]))).toThrow(InvalidArgumentError);
    expect(() => writeNpy(new Tensor('bfloat16', [2]))).toThrow(/writeNpy: NumPy has no bfloat16 type; cast/);
  });
});

test('reads from a Node Buffer that views a larger pool at an offset', () => {
  const t = Tensor.from('float32', [3], [1.5, -2, 3.25]);
  const bytes = writeNpy(t);
  // Buffer.from(array) of a small size lands inside Node's shared pool, at a non-zero offset.
  const pooled = Buffer.concat([Buffer.from([1, 2, 3]), Buffer.from(bytes)]).subarray(3);
  expect(pooled.byteOffset).not.toBe(0);
  expect(Array.from(readNpy(pooled).data as Float32Array)).toEqual([1.5, -2, 3.25]);
});
