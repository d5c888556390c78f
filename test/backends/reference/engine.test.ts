/**
 * Reference backend: engine bytes (round trip, zero-copy loading, malformed bytes), run-time
 * input checks (names, dtypes, ranks, static dims, optimization profiles) and converter-bug
 * detection (build-time checks, run-time output assertions).
 */
import { ENGINE_FORMAT_VERSION, deserializeEngine, referenceBackend } from '../../../lib/backends/reference';
import { executors } from '../../../lib/network/evaluate';
import { BadInputError, BadModelError, InternalError, InvalidArgumentError, ShapeOutOfRangeError, UnsupportedOpError } from '../../../lib/errors';
import { Network, printNetwork } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { expectExact, expectTensor } from '../../helpers/compare';
import { thrown } from '../../helpers/errors';
import { Random } from '../../helpers/random';

const rng = new Random(5);

/** x [-1, 4] (profile batch 1..8) → clip(alpha -∞) → · constant weights [4, 3] → y; plus shape(x) as s. */
function sampleNetwork(): Network {
  const net = new Network('sample');
  const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
  const w = net.add1({ kind: 'constant', weights: Tensor.from('float32', [4, 3], Array.from({ length: 12 }, (_, i) => i / 4 - 1)) }, [], 'w');
  const c = net.add1({ kind: 'activation', type: 'clip', alpha: -Infinity, beta: 1 }, [x], 'clip');
  const y = net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [c, w], 'fc');
  net.markOutput(y, 'y');
  net.markOutput(net.add1({ kind: 'shape' }, [x], 'shape'), 's');
  return net;
}

const u32 = (bytes: Uint8Array, at: number): number => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at, true);

/** The engine's JSON description and weights blob, and a way to reassemble edited bytes. */
function openEngine(bytes: Uint8Array): { json: Record<string, unknown>; blob: Uint8Array; pack: (json: unknown) => Uint8Array; packText: (text: string) => Uint8Array } {
  const jsonLength = u32(bytes, 12);
  const json = JSON.parse(new TextDecoder().decode(bytes.subarray(24, 24 + jsonLength))) as Record<string, unknown>;
  const blob = bytes.subarray(Math.ceil((24 + jsonLength) / 8) * 8);
  const packText = (edited: string): Uint8Array => {
    const text = new TextEncoder().encode(edited);
    const start = Math.ceil((24 + text.length) / 8) * 8;
    const out = new Uint8Array(start + blob.length);
    out.set(bytes.subarray(0, 24));
    new DataView(out.buffer).setUint32(12, text.length, true);
    out.set(text, 24);
    out.set(blob, start);
    return out;
  };
  return { json, blob, pack: (edited) => packText(JSON.stringify(edited)), packText };
}

describe('engine bytes', () => {
  it('round-trips: the header, deterministic bytes, and the same results', async () => {
    const net = sampleNetwork();
    const bytes = await referenceBackend.build(net, {});
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe('TRTNREF1');
    expect(u32(bytes, 8)).toBe(ENGINE_FORMAT_VERSION);
    const loaded = deserializeEngine(bytes);
    expect(printNetwork(loaded)).toBe(printNetwork(net));
    expect(await referenceBackend.build(loaded, {})).toEqual(bytes);

    const runner = referenceBackend.createRunner(bytes);
    expect(runner.inputNames).toEqual(['x']);
    expect(runner.outputNames).toEqual(['y', 's']);
    const x = rng.tensor([3, 4], 'float32', -3, 3);
    const out = runner.run({ x });
    const again = referenceBackend.createRunner(new Uint8Array(bytes)).run({ x });
    expectExact(out.y!, again.y!);
    expectTensor(out.s!, 'int64', [2], [3, 4]);
    // clip(alpha = -∞, beta = 1) survived JSON: values above 1 are clipped, negatives kept.
    const clipped = x.toArray().map((v) => Math.min(v, 1));
    const w = Array.from({ length: 12 }, (_, i) => i / 4 - 1);
    const expected = [0, 1, 2].flatMap((r) => [0, 1, 2].map((c) => [0, 1, 2, 3].reduce((s, k) => s + clipped[r * 4 + k]! * w[k * 3 + c]!, 0)));
    expect(out.y!.toArray().map((v, i) => Math.abs(v - expected[i]!) < 1e-5)).toEqual(new Array(9).fill(true));
    runner.dispose();
  });

  it('loads weights zero-copy, and copies once when the bytes sit at an odd offset', async () => {
    const bytes = await referenceBackend.build(sampleNetwork(), {});
    const weightsOf = (net: Network): Tensor => (net.layers.find((l) => l.params.kind === 'constant')!.params as { weights: Tensor }).weights;
    expect(weightsOf(deserializeEngine(bytes)).data.buffer).toBe(bytes.buffer);
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    const odd = shifted.subarray(3);
    const w = weightsOf(deserializeEngine(odd));
    expect(w.data.buffer).not.toBe(shifted.buffer);
    expectExact(w, weightsOf(deserializeEngine(bytes)));
    // A Node Buffer works as well.
    expect(referenceBackend.createRunner(Buffer.from(bytes)).run({ x: rng.tensor([1, 4]) }).y!.shape).toEqual([1, 3]);
  });

  describe('malformed bytes are a BadModelError naming the problem', () => {
    let bytes: Uint8Array;
    beforeAll(async () => {
      bytes = await referenceBackend.build(sampleNetwork(), {});
    });
    const expectBad = (engine: unknown, message: RegExp): void => {
      let error: unknown;
      try {
        referenceBackend.createRunner(engine as Uint8Array);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(BadModelError);
      expect((error as BadModelError).code).toBe('E_BAD_MODEL');
      expect((error as Error).message).toMatch(message);
    };

    it('framing: short, wrong magic, version, truncated, trailing bytes, not bytes', () => {
      expectBad(bytes.subarray(0, 10), /truncated: 10 bytes, its header alone needs 24/);
      const magic = bytes.slice();
      magic.set(new TextEncoder().encode('TRTNREF0'));
      expectBad(magic, /not a reference engine/);
      const version = bytes.slice();
      new DataView(version.buffer).setUint32(8, ENGINE_FORMAT_VERSION + 1, true);
      expectBad(version, new RegExp(`format version ${ENGINE_FORMAT_VERSION + 1} is not supported`));
      new DataView(version.buffer).setUint32(8, 1, true);
      expectBad(version, /format version 1 is not supported/);
      expectBad(bytes.subarray(0, bytes.length - 5), /truncated/);
      const longer = new Uint8Array(bytes.length + 8);
      longer.set(bytes);
      expectBad(longer, /8 unexpected bytes after the weights/);
      expectBad('not bytes', /must be a Uint8Array/);
    });

    it('description: invalid JSON, bad references, unknown kinds, bad parameters, inconsistent shapes', () => {
      const corrupt = bytes.slice();
      corrupt[24] = 0x78; // 'x' instead of the JSON's opening '{'
      expectBad(corrupt, /not valid JSON/);
      const { json, pack, packText } = openEngine(bytes);
      expectBad(packText(JSON.stringify(json).replace('"type":"clip"', '"type":"clip","__proto__":{"kind":"x"}')), /parameter named __proto__/);
      const edit = (f: (j: any) => void): Uint8Array => {
        const copy = JSON.parse(JSON.stringify(json));
        f(copy);
        return pack(copy);
      };
      expectBad(edit((j) => (j.layers[2].inputs[0] = 99)), /layer "fc" \(matmul\) input 0 refers to tensor 99, which does not exist/);
      expectBad(edit((j) => (j.layers[2].inputs[0] = 4)), /reads tensor .* before any layer produces it/);
      expectBad(edit((j) => (j.layers[1].params.kind = 'softmaxx')), /layer 1 "clip" has unknown kind "softmaxx"/);
      expectBad(edit((j) => (j.layers[1].params.type = 'swish')), /parameter type must be one of relu/);
      expectBad(edit((j) => (j.layers[1].params.extra = 1)), /unknown parameter extra/);
      expectBad(edit((j) => (j.layers[0].params.weights = { $weights: 3 })), /refers to weights 3, which do not exist/);
      expectBad(edit((j) => (j.weights[0].offset = 4096)), /weights 0 .* lie outside the \d+-byte blob/);
      expectBad(edit((j) => (j.weights[0].shape = [5, 3])), /records 48 bytes, its shape needs 60/);
      expectBad(edit((j) => (j.tensors[3].shape = [-1, 4])), /layer "fc" \(matmul\) output 0 "fc:out" is recorded as float32\[\?, 4\], but its inputs give float32\[\?, 3\]/);
      expectBad(edit((j) => (j.outputs[0].tensor = 0)), /output "y" is the network input "x"/);
      expectBad(edit((j) => (j.inputs[0].profiles = [])), /input "x" float32\[\?, 4\] has dynamic dims but no optimization profile/);
      expectBad(edit((j) => (j.tensors[0].dtype = 'float64')), /dtype "float64", which TensorRT does not have/);
    });
  });
});

describe('run-time input checks', () => {
  let runner: ReturnType<typeof referenceBackend.createRunner>;
  beforeAll(async () => {
    runner = referenceBackend.createRunner(await referenceBackend.build(sampleNetwork(), {}));
  });
  afterAll(() => runner.dispose());
  const errorOf = (f: () => unknown): BadInputError => thrown(f, BadInputError, 'E_BAD_INPUT');

  it('a dynamic dim outside the optimization profile is E_SHAPE_OUT_OF_RANGE naming the input, dim and range', () => {
    const rangeError = (f: () => unknown): ShapeOutOfRangeError => thrown(f, ShapeOutOfRangeError, 'E_SHAPE_OUT_OF_RANGE');
    const e = rangeError(() => runner.run({ x: new Tensor('float32', [9, 4]) }));
    expect(e.message).toBe(`input "x" dim 0 is 9, outside the optimization profile's range [1, 8]`);
    expect(e.details).toEqual({ input: 'x', dim: 0, value: 9, min: 1, max: 8, profile: 0 });
    expect(rangeError(() => runner.run({ x: new Tensor('float32', [0, 4]) })).details).toMatchObject({ input: 'x', dim: 0, value: 0 });
  });

  it('names, dtypes, ranks and static dims', () => {
    expect(errorOf(() => runner.run({})).message).toBe('missing input "x" (float32[?, 4])');
    expect(errorOf(() => runner.run({ x: new Tensor('float32', [1, 4]), z: new Tensor('float32', [1]) })).message).toMatch(/unknown input "z"; the engine's inputs are "x"/);
    expect(errorOf(() => runner.run({ x: new Tensor('float16', [1, 4]) })).message).toBe('input "x" is float16, the engine takes float32[?, 4]');
    expect(errorOf(() => runner.run({ x: new Tensor('float32', [4]) })).message).toMatch(/rank 1/);
    const dim = errorOf(() => runner.run({ x: new Tensor('float32', [2, 5]) }));
    expect(dim.message).toBe('input "x" dim 1 is 5, the engine was built for 4 (float32[?, 4])');
    expect(errorOf(() => runner.run({ x: [1, 2, 3, 4] as unknown as Tensor })).message).toMatch(/must be a Tensor/);
  });

  it('with several profiles, the first that fits every input is used', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [-1], [
      { min: [1], opt: [2], max: [4] },
      { min: [10], opt: [12], max: [16] },
    ]);
    net.markOutput(net.add1({ kind: 'unary', op: 'neg' }, [x], 'neg'), 'y');
    const r = referenceBackend.createRunner(await referenceBackend.build(net, {}));
    expect(r.run({ x: new Tensor('float32', [12]) }).y!.shape).toEqual([12]);
    let e: unknown;
    try {
      r.run({ x: new Tensor('float32', [7]) });
    } catch (error) {
      e = error;
    }
    expect(e).toBeInstanceOf(ShapeOutOfRangeError);
    expect((e as ShapeOutOfRangeError).message).toMatch(/outside the optimization profile's range \[1, 4\] \(no optimization profile fits: .*profile 1 needs "x" dim 0 in \[10, 16\]\)/);
  });

  it('inputs whose shapes contradict each other at a layer: E_BAD_INPUT naming the layer, for a plain layer and for attention', async () => {
    // Each input is inside its profile; their sum needs them equal, which no profile rule says.
    const net = new Network();
    const a = net.addInput('a', 'float32', [-1], [{ min: [1], opt: [2], max: [8] }]);
    const b = net.addInput('b', 'float32', [-1], [{ min: [1], opt: [2], max: [8] }]);
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [a, b], 'add'), 'y');
    const r = referenceBackend.createRunner(await referenceBackend.build(net, {}));
    expect(r.run({ a: new Tensor('float32', [3]), b: new Tensor('float32', [3]) }).y!.shape).toEqual([3]);
    const e = errorOf(() => r.run({ a: new Tensor('float32', [3]), b: new Tensor('float32', [2]) }));
    expect(e.message).toBe('reference backend: the input shapes do not fit together: network layer "add" (elementwise): dim 0 cannot broadcast: 3 vs 2');
    expect(e.details).toEqual({ layer: 'add' });
    r.dispose();
    // Attention with a mask shorter than the keys (its executor would read past the mask).
    const att = new Network();
    const q = att.addInput('q', 'float32', [1, 1, -1, 4], [{ min: [1, 1, 1, 4], opt: [1, 1, 2, 4], max: [1, 1, 8, 4] }]);
    const k = att.addInput('k', 'float32', [1, 1, -1, 4], [{ min: [1, 1, 1, 4], opt: [1, 1, 2, 4], max: [1, 1, 8, 4] }]);
    const m = att.addInput('m', 'float32', [1, 1, 1, -1], [{ min: [1, 1, 1, 1], opt: [1, 1, 1, 2], max: [1, 1, 1, 8] }]);
    att.markOutput(att.add1({ kind: 'attention', scale: 0.5, causal: false }, [q, k, k, m], 'attn'), 'y');
    const ra = referenceBackend.createRunner(await referenceBackend.build(att, {}));
    const feeds = (keys: number, mask: number) => ({ q: new Tensor('float32', [1, 1, 2, 4]), k: new Tensor('float32', [1, 1, keys, 4]), m: new Tensor('float32', [1, 1, 1, mask]) });
    expect(ra.run(feeds(3, 3)).y!.shape).toEqual([1, 1, 2, 4]);
    const ea = errorOf(() => ra.run(feeds(3, 2)));
    expect(ea.message).toMatch(/^reference backend: the input shapes do not fit together: network layer "attn" \(attention\): /);
    expect(ea.details).toEqual({ layer: 'attn' });
    ra.dispose();
  });

  it('a disposed runner refuses to run', async () => {
    const r = referenceBackend.createRunner(await referenceBackend.build(sampleNetwork(), {}));
    r.dispose();
    expect(() => r.run({ x: new Tensor('float32', [1, 4]) })).toThrow(InvalidArgumentError);
  });
});

describe('converter bugs and unsupported layers', () => {
  it('build refuses a network whose recorded shapes disagree with the layer rules (InternalError naming the layer)', async () => {
    const net = new Network('tampered');
    const x = net.addInput('x', 'float32', [2, 3]);
    const y = net.add1({ kind: 'reduce', op: 'sum', axes: [1], keepDims: true }, [x], 'rowsum');
    net.markOutput(y, 'y');
    (y as { shape: readonly number[] }).shape = [2];
    await expect(referenceBackend.build(net, {})).rejects.toThrow(InternalError);
    await expect(referenceBackend.build(net, {})).rejects.toThrow(/layer "rowsum" \(reduce\) output 0 "rowsum:out" is recorded as float32\[2\], but its inputs give float32\[2, 1\]/);
  });

  it('a network without outputs, or with float64 weights, is a converter bug', async () => {
    const net = new Network('empty');
    net.addInput('x', 'float32', [1]);
    await expect(referenceBackend.build(net, {})).rejects.toThrow(/has no outputs/);
    const f64 = new Network('f64');
    const c = f64.add1({ kind: 'constant', weights: Tensor.from('float64', [1], [1]) }, [], 'c');
    f64.markOutput(f64.add1({ kind: 'identity' }, [c], 'id'), 'y');
    await expect(referenceBackend.build(f64, {})).rejects.toThrow(InternalError);
    await expect(referenceBackend.build(f64, {})).rejects.toThrow(/dtype "float64", which TensorRT does not have/);
  });

  it('an executor whose output breaks the layer rules is caught at run time, naming the layer', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [2, 3]);
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x], 'my_exp'), 'y');
    const runner = referenceBackend.createRunner(await referenceBackend.build(net, {}));
    const spy = jest.spyOn(executors, 'unary').mockImplementation(() => [new Tensor('float32', [3, 2])]);
    try {
      expect(() => runner.run({ x: new Tensor('float32', [2, 3]) })).toThrow(InternalError);
      expect(() => runner.run({ x: new Tensor('float32', [2, 3]) })).toThrow(/layer "my_exp" \(unary\) output 0 is float32\[3, 2\], but TensorRT's rules give float32\[2, 3\]/);
    } finally {
      spy.mockRestore();
    }
    expect(runner.run({ x: new Tensor('float32', [2, 3]) }).y!.toArray()).toEqual(new Array(6).fill(1));
  });

  it('a kernel rejecting a layer is an InternalError; layers that reach no output are not run', async () => {
    // A reshape TensorRT would refuse is already caught when the layer is added.
    const early = new Network();
    const e = early.addInput('x', 'float32', [2, 3]);
    expect(() => early.add1({ kind: 'shuffle', reshape: [0, -1], zeroIsPlaceholder: false }, [e], 'bad_reshape')).toThrow(
      /layer "bad_reshape" \(shuffle\): cannot reshape \[2,3\] \(6 elements\) to \[0,-1\]/,
    );

    const net = new Network();
    const x = net.addInput('x', 'float32', [2, 3]);
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x], 'my_exp'), 'y');
    const runner = referenceBackend.createRunner(await referenceBackend.build(net, {}));
    const kernel = jest.spyOn(executors, 'unary').mockImplementation(() => {
      throw new InvalidArgumentError('the kernel refuses');
    });
    try {
      expect(() => runner.run({ x: new Tensor('float32', [2, 3]) })).toThrow(InternalError);
      expect(() => runner.run({ x: new Tensor('float32', [2, 3]) })).toThrow(/reference backend: layer "my_exp" \(unary\) failed on inputs float32\[2, 3\]/);
    } finally {
      kernel.mockRestore();
    }

    const pruned = new Network();
    const p = pruned.addInput('p', 'float32', [3]);
    pruned.add1({ kind: 'softmax', axis: 0 }, [p], 'unused');
    pruned.markOutput(pruned.add1({ kind: 'unary', op: 'abs' }, [p], 'abs'), 'y');
    const spy = jest.spyOn(executors, 'softmax');
    try {
      referenceBackend.createRunner(await referenceBackend.build(pruned, {})).run({ p: new Tensor('float32', [3]) });
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it('a layer the reference backend cannot run is an UnsupportedOpError at build', async () => {
    const net = new Network();
    const x = net.addInput('x', 'float32', [1, 1, 2, 2]);
    const y = net.add1({ kind: 'resize', mode: 'cubic', outputDims: [1, 1, 4, 4], coordinateTransformation: 'half_pixel', selector: 'formula', nearestRounding: 'floor' }, [x], 'bicubic');
    net.markOutput(y, 'y');
    await expect(referenceBackend.build(net, {})).rejects.toThrow(UnsupportedOpError);
    await expect(referenceBackend.build(net, {})).rejects.toThrow(/layer "bicubic" \(resize\): cubic resize is not implemented/);
  });
});
