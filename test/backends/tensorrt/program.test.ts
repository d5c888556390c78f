/**
 * The replay program's encoding (lib/backends/tensorrt/program.ts), read back with an
 * independent decoder written here from the layout its header documents: ops, TensorRT enum
 * values, axes masks, extra constants for fill and cumulative, identity layers for aliased
 * outputs, profiles and the build configuration.
 */
import { axesMask, encodeProgram, LAYER_OPCODE, OP, packInt4, PROGRAM_MAGIC, PROGRAM_VERSION } from '../../../lib/backends/tensorrt/program';
import { InternalError } from '../../../lib/errors';
import { LAYER_KINDS, Network } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';

const OPTIONS = { precisions: ['fp32'] as const, workspaceBytes: undefined, hardwareCompatibility: 'none' as const, optimizationLevel: 3 };

class Reader {
  pos = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8 = (): number => this.view.getUint8(this.pos++);
  u32 = (): number => ((this.pos += 4), this.view.getUint32(this.pos - 4, true));
  i32 = (): number => ((this.pos += 4), this.view.getInt32(this.pos - 4, true));
  i64 = (): number => ((this.pos += 8), Number(this.view.getBigInt64(this.pos - 8, true)));
  f64 = (): number => ((this.pos += 8), this.view.getFloat64(this.pos - 8, true));
  str = (): string => {
    const n = this.u32();
    this.pos += n;
    return new TextDecoder().decode(this.bytes.subarray(this.pos - n, this.pos));
  };
  dims = (): number[] => Array.from({ length: this.u32() }, () => this.i64());
  weights = (): { type: number; dims: number[]; bytes: Uint8Array } | null => {
    const type = this.i32();
    if (type < 0) return null;
    const dims = this.dims();
    const n = this.i64();
    while (this.pos % 8 !== 0) this.pos++;
    this.pos += n;
    return { type, dims, bytes: this.bytes.subarray(this.pos - n, this.pos) };
  };
}

/** Header, CONFIG, then every op up to END as [op, ...fields] (layer payloads left to the caller). */
function header(bytes: Uint8Array): Reader {
  const r = new Reader(bytes);
  expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe(PROGRAM_MAGIC);
  r.pos = 8;
  expect(r.u32()).toBe(PROGRAM_VERSION);
  return r;
}

function config(r: Reader): Record<string, unknown> {
  expect(r.u8()).toBe(OP.CONFIG);
  const c = { optimizationLevel: r.i32(), workspaceBytes: r.i64(), tf32: r.u8(), hardwareCompatibility: r.i32(), versionCompatible: r.u8() };
  const n = r.i64();
  r.pos += n;
  return { ...c, timingCacheBytes: n };
}

function layerHead(r: Reader): { opcode: number; name: string; inputs: number[]; outputs: Array<[number, string]> } {
  expect(r.u8()).toBe(OP.LAYER);
  const opcode = r.i32();
  const name = r.str();
  const inputs = Array.from({ length: r.u32() }, () => r.i32());
  const outputs = Array.from({ length: r.u32() }, () => [r.i32(), r.str()] as [number, string]);
  return { opcode, name, inputs, outputs };
}

describe('replay program encoding', () => {
  it('numbers every layer kind, each once', () => {
    expect(Object.keys(LAYER_OPCODE).sort()).toEqual([...LAYER_KINDS].sort());
    expect(new Set(Object.values(LAYER_OPCODE)).size).toBe(LAYER_KINDS.length);
  });

  it('writes the build configuration first', () => {
    const net = new Network('n');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [net.addInput('x', 'float32', [2])], 'L'), 'y');
    const r = header(encodeProgram(net, { precisions: ['fp32', 'tf32'], workspaceBytes: 4096, hardwareCompatibility: 'ampere+', optimizationLevel: 1, versionCompatible: true, timingCache: new Uint8Array(5) }));
    expect(config(r)).toEqual({ optimizationLevel: 1, workspaceBytes: 4096, tf32: 1, hardwareCompatibility: 1, versionCompatible: 1, timingCacheBytes: 5 });
    const none = header(encodeProgram(net, OPTIONS));
    expect(config(none)).toMatchObject({ workspaceBytes: -1, tf32: 0, hardwareCompatibility: 0, versionCompatible: 0, timingCacheBytes: 0 });
  });

  it('writes inputs, a layer with TensorRT enum values, outputs and END', () => {
    const net = new Network('n');
    const x = net.addInput('x', 'int64', [2, -1], [{ min: [2, 1], opt: [2, 4], max: [2, 9] }]);
    net.markOutput(net.add1({ kind: 'reduce', op: 'max', axes: [0, 1], keepDims: false }, [x], 'R'), 'y');
    const r = header(encodeProgram(net, OPTIONS));
    config(r);
    expect([r.u8(), r.i32(), r.str(), r.i32(), r.dims()]).toEqual([OP.INPUT, 0, 'x', 8, [2, -1]]);
    expect(layerHead(r)).toEqual({ opcode: LAYER_OPCODE.reduce, name: 'R', inputs: [0], outputs: [[1, 'R:out']] });
    expect([r.i32(), r.u32(), r.u8()]).toEqual([2, 0b11, 0]); // kMAX, axes {0,1}, keepDims false
    expect([r.u8(), r.i32(), r.str()]).toEqual([OP.OUTPUT, 1, 'y']);
    expect([r.u8(), r.u32(), r.str(), r.dims(), r.dims(), r.dims()]).toEqual([OP.PROFILE, 1, 'x', [2, 1], [2, 4], [2, 9]]);
    expect(r.u8()).toBe(OP.END);
    expect(r.pos).toBe(encodeProgram(net, OPTIONS).length);
  });

  it('writes constant weights 8-byte aligned with their DataType and dims', () => {
    const net = new Network('n');
    const w = Tensor.from('int32', [3], [7, -1, 5]);
    net.markOutput(net.add1({ kind: 'constant', weights: w }, [], 'C'), 'y');
    const r = header(encodeProgram(net, OPTIONS));
    config(r);
    expect(layerHead(r).opcode).toBe(LAYER_OPCODE.constant);
    const start = r.pos;
    const got = r.weights()!;
    expect(got.type).toBe(3);
    expect(got.dims).toEqual([3]);
    expect([...new Int32Array(got.bytes.slice().buffer)]).toEqual([7, -1, 5]);
    expect(got.bytes.byteOffset % 8).toBe(0);
    expect(got.bytes.byteOffset).toBeGreaterThan(start);
  });

  it('turns a fill’s alpha and beta into constants of its dtype (exact for int64) and a cumulative’s axis into an int32 scalar', () => {
    const net = new Network('n');
    net.markOutput(net.add1({ kind: 'fill', dims: [2, 3], alpha: 2 ** 40, beta: [3, 1], dtype: 'int64' }, [], 'F'), 'f');
    net.markOutput(net.add1({ kind: 'cumulative', op: 'sum', axis: 1, exclusive: true, reverse: false }, [net.addInput('x', 'float32', [2, 3])], 'S'), 's');
    const r = header(encodeProgram(net, OPTIONS));
    config(r);
    r.u8();
    r.i32();
    r.str();
    r.i32();
    r.dims(); // input x
    const alpha = layerHead(r);
    expect(alpha).toMatchObject({ opcode: LAYER_OPCODE.constant, name: 'F/alpha', inputs: [] });
    const a = r.weights()!;
    expect([a.type, a.dims, new BigInt64Array(a.bytes.slice().buffer)[0]]).toEqual([8, [], 2n ** 40n]);
    const beta = layerHead(r);
    expect(beta.name).toBe('F/beta');
    const b = r.weights()!;
    expect([...new BigInt64Array(b.bytes.slice().buffer)]).toEqual([3n, 1n]);
    const fill = layerHead(r);
    expect(fill).toMatchObject({ opcode: LAYER_OPCODE.fill, inputs: [-1, alpha.outputs[0]![0], beta.outputs[0]![0]] });
    expect([r.dims(), r.i32()]).toEqual([[2, 3], 8]);
    const axis = layerHead(r);
    expect(axis.name).toBe('S/axis');
    const ax = r.weights()!;
    expect([ax.type, ax.dims, new Int32Array(ax.bytes.slice().buffer)[0]]).toEqual([3, [], 1]);
    const cum = layerHead(r);
    expect(cum).toMatchObject({ opcode: LAYER_OPCODE.cumulative, inputs: [net.inputs[0]!.tensor, axis.outputs[0]![0]] });
    expect([r.i32(), r.u8(), r.u8()]).toEqual([0, 1, 0]);
  });

  it('writes a nonzero layer with kINT64 indices; its run-time count is -1 in what follows', () => {
    const net = new Network('n');
    const x = net.addInput('x', 'bool', [3, 4]);
    const nz = net.add1({ kind: 'nonzero' }, [x], 'NZ');
    expect(nz.shape).toEqual([2, -1]);
    net.markOutput(net.add1({ kind: 'reduce', op: 'max', axes: [1], keepDims: false }, [nz], 'R'), 'y');
    const r = header(encodeProgram(net, OPTIONS));
    config(r);
    expect([r.u8(), r.i32(), r.str(), r.i32(), r.dims()]).toEqual([OP.INPUT, x.id, 'x', 4, [3, 4]]);
    const head = layerHead(r);
    expect(head).toEqual({ opcode: 28, name: 'NZ', inputs: [x.id], outputs: [[nz.id, nz.name]] });
    expect(LAYER_OPCODE.nonzero).toBe(28);
    expect(r.i32()).toBe(8); // DataType::kINT64
    expect(layerHead(r)).toMatchObject({ opcode: LAYER_OPCODE.reduce, inputs: [nz.id] });
  });

  it('writes quantize and dequantize layers: output DataType, axis, block shape, the zero point as input 2', () => {
    const net = new Network('n');
    const w = net.add1({ kind: 'constant', weights: Tensor.from('int4', [1, 128], Array.from({ length: 128 }, (_, i) => (i % 16) - 8)) }, [], 'W');
    const s = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 1], [0.5]) }, [], 'S');
    const z = net.add1({ kind: 'constant', weights: Tensor.from('int4', [1, 1], [0]) }, [], 'Z');
    net.markOutput(net.add1({ kind: 'dequantize', to: 'float16', axis: 1, blockSize: 128 }, [w, s, z], 'DQ'), 'y');
    const x = net.addInput('x', 'float32', [2, 8]);
    const xs = net.add1({ kind: 'constant', weights: Tensor.from('float32', [], [0.25]) }, [], 'XS');
    net.markOutput(net.add1({ kind: 'quantize', to: 'float8e4m3fn', axis: 1 }, [x, xs], 'Q'), 'q');
    const e = net.add1({ kind: 'constant', weights: Tensor.from('float8e4m3fn', [2], [1, -2]) }, [], 'E');
    const es = net.add1({ kind: 'constant', weights: Tensor.from('float32', [2], [0.5, 0.25]) }, [], 'ES');
    net.markOutput(net.add1({ kind: 'dequantize', to: 'float32', axis: 0 }, [e, es], 'EDQ'), 'z');
    const r = header(encodeProgram(net, OPTIONS));
    config(r);
    expect([r.u8(), r.i32(), r.str(), r.i32(), r.dims()]).toEqual([OP.INPUT, x.id, 'x', 0, [2, 8]]);
    // INT4 weights: kINT4, packed two values a byte, the first in the low nibble.
    expect(layerHead(r).name).toBe('W');
    const packed = r.weights()!;
    expect([packed.type, packed.dims, packed.bytes.length]).toEqual([9, [1, 128], 64]);
    expect([...packed.bytes.subarray(0, 3)]).toEqual([0x98, 0xba, 0xdc]); // -8, -7 | -6, -5 | -4, -3
    expect(layerHead(r).name).toBe('S');
    r.weights();
    expect(layerHead(r).name).toBe('Z');
    const zero = r.weights()!;
    expect([zero.type, zero.dims, [...zero.bytes]]).toEqual([9, [1, 1], [0]]);
    expect(layerHead(r)).toEqual({ opcode: LAYER_OPCODE.dequantize, name: 'DQ', inputs: [w.id, s.id, z.id], outputs: [[net.layers[3]!.outputs[0]!, 'DQ:out']] });
    expect([r.i32(), r.i32(), r.dims()]).toEqual([1, 1, [1, 128]]); // kHALF, the axis, blocks of 128 along it
    expect(layerHead(r).name).toBe('XS');
    r.weights();
    expect(layerHead(r)).toMatchObject({ opcode: LAYER_OPCODE.quantize, name: 'Q', inputs: [x.id, xs.id] });
    expect([r.i32(), r.i32(), r.dims()]).toEqual([6, 1, []]); // kFP8, per tensor: no block shape
    // FP8 weights: kFP8, their bit patterns one a byte.
    expect(layerHead(r).name).toBe('E');
    const fp8 = r.weights()!;
    expect([fp8.type, fp8.dims, [...fp8.bytes]]).toEqual([6, [2], [0x38, 0xc0]]);
    expect(layerHead(r).name).toBe('ES');
    r.weights();
    expect(layerHead(r)).toMatchObject({ opcode: LAYER_OPCODE.dequantize, name: 'EDQ', inputs: [e.id, es.id] });
    expect([r.i32(), r.i32(), r.dims()]).toEqual([0, 0, []]); // kFLOAT, per axis 0
  });

  it('packs INT4 values two a byte, an odd count leaving the last high nibble 0', () => {
    expect([...packInt4(Int8Array.of(1, -1, 7))]).toEqual([0xf1, 0x07]);
    expect([...packInt4(Int8Array.of(-8, 7))]).toEqual([0x78]);
    expect(packInt4(new Int8Array(0)).length).toBe(0);
  });

  it('refuses an axis outside the rank, naming the layer', () => {
    expect(() => axesMask([4], 4, 'layer "L" (reduce)')).toThrow(InternalError);
    expect(() => axesMask([4], 4, 'layer "L" (reduce)')).toThrow('layer "L" (reduce): axis 4 is outside rank 4');
    expect(axesMask([-1, 0], 3, 'x')).toBe(0b101);
  });

  it('refuses inputs with different numbers of optimization profiles', () => {
    const net = new Network('n');
    const a = net.addInput('a', 'float32', [-1], [{ min: [1], opt: [1], max: [2] }, { min: [3], opt: [3], max: [4] }]);
    const b = net.addInput('b', 'float32', [-1], [{ min: [1], opt: [1], max: [2] }]);
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [a, b], 'L'), 'y');
    expect(() => encodeProgram(net, OPTIONS)).toThrow('network "n" input "b" has 1 optimization profiles, others 2');
  });
});
