/**
 * The serialized Network (lib/network/serialize.ts), the backend-neutral form every backend
 * receives: a round trip keeps every layer parameter exactly, including numbers JSON cannot
 * hold (NaN, ±Infinity, -0, in the codec's one encoding), and bad descriptions are E_BAD_MODEL
 * errors prefixed with the caller's label.
 */
import { checkNetwork } from '../../lib/network/check';
import { BadModelError } from '../../lib/errors';
import { Network, printNetwork } from '../../lib/network';
import {
  deserializeNetwork,
  deserializeNetworkFromBuffer,
  NETWORK_FORMAT,
  NETWORK_MAGIC,
  serializeNetwork,
  serializeNetworkToBuffer,
} from '../../lib/network/serialize';
import { Tensor } from '../../lib/ir/tensor';

/** x [2, 3] → clip(-∞, 1) → fill-like elementwise with -0 / NaN constants → y. */
function network(): Network {
  const net = new Network('specials');
  const x = net.addInput('x', 'float32', [2, 3], []);
  const c = net.add1({ kind: 'activation', type: 'clip', alpha: -Infinity, beta: Infinity }, [x], 'clip');
  const k = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 3], [-0, NaN, 2.5]) }, [], 'k');
  const l = net.add1({ kind: 'activation', type: 'leaky_relu', alpha: -0 }, [c], 'leaky');
  const y = net.add1({ kind: 'elementwise', op: 'sum' }, [l, k], 'add');
  net.markOutput(y, 'y');
  return net;
}

const check = (net: Network, fail: (m: string, cause?: unknown) => never): unknown => checkNetwork(net, fail);

test('round trip: parameters keep NaN, ±Infinity and -0; weights view the buffer', () => {
  const net = network();
  const { json } = serializeNetwork(net);
  expect(json.format).toBe(NETWORK_FORMAT);
  const text = JSON.stringify(json);
  expect(text).toContain('"alpha":{"$number":"-Infinity"}');
  expect(text).toContain('"beta":{"$number":"Infinity"}');
  expect(text).toContain('"alpha":{"$number":"-0"}');
  const bytes = serializeNetworkToBuffer(net);
  expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe(NETWORK_MAGIC);
  const back = deserializeNetworkFromBuffer(bytes, 'test network', check);
  expect(printNetwork(back)).toBe(printNetwork(net));
  const leaky = back.layers.find((l) => l.name === 'leaky')!.params as { alpha: number };
  expect(Object.is(leaky.alpha, -0)).toBe(true);
  const clip = back.layers.find((l) => l.name === 'clip')!.params as { alpha: number; beta: number };
  expect([clip.alpha, clip.beta]).toEqual([-Infinity, Infinity]);
  const weights = (back.layers.find((l) => l.name === 'k')!.params as { weights: Tensor }).weights;
  expect(weights.data.buffer).toBe(bytes.buffer);
  const w = weights.data as Float32Array;
  expect(Object.is(w[0], -0) && Number.isNaN(w[1]) && w[2] === 2.5).toBe(true);
  expect(serializeNetworkToBuffer(back)).toEqual(bytes);
});

test('bad descriptions are E_BAD_MODEL with the caller label', () => {
  const { json, blobs } = serializeNetwork(network());
  const blob = blobs.toBytes();
  const bad = (edit: (j: any) => void, pattern: RegExp): void => {
    const copy = JSON.parse(JSON.stringify(json));
    edit(copy);
    let error: unknown;
    try {
      deserializeNetwork(copy, blob, 'my engine', check);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadModelError);
    expect((error as Error).message).toMatch(pattern);
  };
  bad((j) => (j.format = 'other'), /^my engine: the description is not a serialized network \(format "other"\)/);
  bad((j) => (j.layers[0].params.alpha = { $number: 'Huge' }), /^my engine: layer 0 "clip" has the unknown number "Huge"/);
  bad((j) => (j.weights[0].offset = 4), /^my engine: weights 0 has an invalid offset 4/);
  bad((j) => (j.weights[0].offset = 64), /^my engine: weights 0 \(bytes 64\.\.76\) lie outside the 12-byte blob/);
  expect(() => deserializeNetworkFromBuffer(new Uint8Array(8), 'my engine', check)).toThrow(/^my engine: truncated/);
});

test('a Node Buffer at an odd offset (a blob read out of a zip) loads: its weights are copied once, not viewed misaligned', () => {
  const bytes = serializeNetworkToBuffer(network());
  const pool = Buffer.alloc(bytes.byteLength + 3);
  pool.set(bytes, 3);
  const odd = pool.subarray(3);
  expect(odd.byteOffset % 8).not.toBe(0);
  const back = deserializeNetworkFromBuffer(odd, 'odd', check);
  expect(printNetwork(back)).toBe(printNetwork(network()));
});

test('a nonzero layer and the run-time count after it round-trip; a recorded count other than -1, or a stray field, is refused', () => {
  const net = new Network('nonzero');
  const x = net.addInput('x', 'float32', [3, 4], []);
  const nz = net.add1({ kind: 'nonzero' }, [x], 'nz');
  const t = net.add1({ kind: 'shuffle', firstTranspose: [1, 0], zeroIsPlaceholder: false }, [nz], 't');
  net.markOutput(net.add1({ kind: 'gather', mode: 'nd', axis: 0, nbElementWiseDims: 0 }, [x, t], 'values'), 'v');
  const back = deserializeNetworkFromBuffer(serializeNetworkToBuffer(net), 'test network', check);
  expect(printNetwork(back)).toBe(printNetwork(net));
  expect(printNetwork(back)).toContain('nz:out: int64[2, ?] = nonzero(x)');
  const { json, blobs } = serializeNetwork(net);
  const refused = (edit: (j: any) => void): void => {
    const copy = JSON.parse(JSON.stringify(json));
    edit(copy);
    expect(() => deserializeNetwork(copy, blobs.toBytes(), 'my engine', check)).toThrow(BadModelError);
  };
  refused((j) => (j.tensors[nz.id].shape = [2, 12]));
  refused((j) => (j.layers[0].params.axis = 0));
});
