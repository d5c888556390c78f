/**
 * Graph serialization (lib/ir/serialize.ts): every fixture graph and a hand-built graph of
 * the awkward cases survive serializeGraph → JSON text → deserializeGraph (and the one-buffer
 * form) printing identically, interpreting to bit-identical outputs and viewing the weights
 * without copies; malformed data is E_BAD_MODEL naming the problem.
 */
import * as path from 'node:path';

import { BadModelError } from '../../lib/errors';
import { loadOnnx } from '../../lib/frontends/onnx';
import { loadPt2 } from '../../lib/frontends/pt2';
import { interpret } from '../../lib/interpreter';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, Value, type Arg } from '../../lib/ir/graph';
import { printGraph } from '../../lib/ir/printer';
import {
  deserializeGraph,
  deserializeGraphFromBuffer,
  serializeGraph,
  GRAPH_FORMAT_VERSION,
  serializeGraphToBuffer,
  type SerializedCallNode,
  type SerializedConstantNode,
  type SerializedGraph,
} from '../../lib/ir/serialize';
import { sym } from '../../lib/ir/symbolic';
import { Tensor } from '../../lib/ir/tensor';
import { FIXTURES, loadFixture, ONNX_FIXTURES, PT2_FIXTURES } from '../helpers/fixtures';

const INT64_MAX = Number('9223372036854775807'); // the slice "to the end" sentinel, 2^63 as a double

function bytesOf(t: Tensor): Buffer {
  return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

function expectBitIdentical(actual: Tensor[], expected: Tensor[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((t, i) => {
    const e = expected[i]!;
    expect([i, t.dtype, t.shape]).toEqual([i, e.dtype, e.shape]);
    expect(bytesOf(t).equals(bytesOf(e))).toBe(true);
  });
}

/** Through real JSON text, as from a file. */
function viaJson(graph: Graph): { graph: Graph; json: SerializedGraph; weights: Uint8Array } {
  const { json, weights } = serializeGraph(graph);
  const text = JSON.stringify(json);
  expect(JSON.parse(text)).toEqual(json); // nothing JSON would drop or change
  return { graph: deserializeGraph(JSON.parse(text), weights), json, weights };
}

/** Only JSON data: plain objects, arrays, strings, finite numbers, booleans, null. */
function expectPlainJson(x: unknown, at = 'json'): void {
  if (x === null || typeof x === 'string' || typeof x === 'boolean') return;
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) throw new Error(`${at} is ${x}`);
    return;
  }
  if (Array.isArray(x)) {
    x.forEach((e, i) => expectPlainJson(e, `${at}[${i}]`));
    return;
  }
  if (typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype) {
    for (const [k, v] of Object.entries(x)) expectPlainJson(v, `${at}.${k}`);
    return;
  }
  throw new Error(`${at} is not JSON data (${typeof x} ${(x as object)?.constructor?.name ?? ''})`);
}

function isJsonData(x: unknown): boolean {
  try {
    expectPlainJson(x);
    return !Object.is(x, -0);
  } catch {
    return false;
  }
}

/** The meta entries serialization keeps. */
function jsonEntries(meta: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(meta).filter(([, v]) => isJsonData(v)));
}

function expectSameStructure(after: Graph, before: Graph): void {
  expect(printGraph(after)).toBe(printGraph(before));
  expect(after.name).toBe(before.name);
  expect([...after.symbols]).toEqual([...before.symbols]);
  expect(after.nodes.map((n) => [n.kind, n.name, n.target, n.origin, n.outputs.map((v) => v.name)])).toEqual(
    before.nodes.map((n) => [n.kind, n.name, n.target, n.origin, n.outputs.map((v) => v.name)]),
  );
  expect(after.nodes.map((n) => n.meta)).toEqual(before.nodes.map((n) => jsonEntries(n.meta)));
  expect(after.inputs.map((v) => v.name)).toEqual(before.inputs.map((v) => v.name));
  expect(after.outputs.map((v) => v.name)).toEqual(before.outputs.map((v) => v.name));
  expect(after.outputNames).toEqual(before.outputNames);
  after.nodes.forEach((n, i) => {
    const b = before.nodes[i]!;
    if (n.kind === 'constant') expect(bytesOf(n.tensor!).equals(bytesOf(b.tensor!))).toBe(true);
    n.outputs.forEach((v, k) => expect(v.type).toEqual(b.outputs[k]!.type));
  });
}

function expectViews(graph: Graph, buffer: ArrayBufferLike): void {
  const constants = graph.nodes.filter((n) => n.kind === 'constant');
  for (const n of constants) expect(n.tensor!.data.buffer).toBe(buffer);
}

const FIXTURE_GRAPHS: [string, string, () => Graph][] = [
  ...ONNX_FIXTURES.map((name): [string, string, () => Graph] => [`${name}.onnx`, name, () => loadOnnx(path.join(FIXTURES, name, 'model.onnx'))]),
  ...PT2_FIXTURES.map((name): [string, string, () => Graph] => [`${name}.pt2`, name, () => loadPt2(path.join(FIXTURES, name, 'model.pt2'))]),
];

describe.each(FIXTURE_GRAPHS)('%s round trip', (_label, fixtureName, load) => {
  const before = load();

  test('serializes to plain JSON data and deserializes to the same graph', () => {
    const { graph: after, json, weights } = viaJson(before);
    expectPlainJson(json);
    expect(json.version).toBe(GRAPH_FORMAT_VERSION);
    expectSameStructure(after, before);
    expectViews(after, weights.buffer);
    // No tensor is written twice.
    const distinct = new Set(before.nodes.filter((n) => n.kind === 'constant').map((n) => n.tensor));
    const bytes = [...distinct].reduce((s, t) => s + t!.data.byteLength, 0);
    expect(weights.byteLength).toBeLessThanOrEqual(bytes + 7 * distinct.size);
  });

  test('interprets to bit-identical outputs (JSON form and one-buffer form)', () => {
    const viaJsonGraph = viaJson(before).graph;
    const bytes = serializeGraphToBuffer(before);
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
    const fromBuffer = deserializeGraphFromBuffer(bytes.buffer);
    expectSameStructure(fromBuffer, before);
    expectViews(fromBuffer, bytes.buffer);
    for (const { inputs } of loadFixture(fixtureName).cases) {
      const expected = interpret(before, inputs);
      expectBitIdentical(interpret(viaJsonGraph, inputs), expected);
      expectBitIdentical(interpret(fromBuffer, inputs), expected);
    }
  });
});

test('ONNX dynamic dims keep their unbounded ranges (Infinity)', () => {
  const before = loadOnnx(path.join(FIXTURES, 'encoder', 'model.onnx'));
  expect([...before.symbols.values()].some((r) => r.max === Infinity)).toBe(true);
  const { graph: after, json } = viaJson(before);
  expect(json.symbols.every((s) => s.max === 'Infinity')).toBe(true);
  expect([...after.symbols]).toEqual([...before.symbols]);
});

/** A graph with the awkward cases the fixtures do not all have. */
function handBuilt(): { graph: Graph; shared: Tensor; nodes: Record<string, Value> } {
  const g = new Graph('hand built');
  g.symbols.set('s0', { min: 2, max: Infinity });
  g.symbols.set('u', { min: -Infinity, max: 7 });
  const x = g.addInput('x', tensorType('float32', [sym('s0'), 8]));
  const y = g.addInput('y', tensorType('int64', []));
  g.inputs.reverse(); // inputs in another order than their placeholders
  const size = call(g, 'aten.sym_size.int', { self: x, dim: 0 }).output;
  const twice = call(g, 'sym.mul', { a: size, b: 2 }).output;
  const split = call(g, 'aten.split.Tensor', { self: x, split_size: 4, dim: 1 });
  expect(split.outputs).toHaveLength(2);
  // Multi-output with null args and a float.
  const norm = call(g, 'aten.native_layer_norm.default', { input: x, normalized_shape: [8], weight: null, bias: null, eps: 1e-5 });
  const viewed = call(g, 'aten.view.default', { self: x, size: [size, 2, 4] }).output; // a list mixing a value and ints
  const sliced = call(g, 'aten.slice.Tensor', { self: x, dim: 1, start: 2, end: INT64_MAX, step: 1 }).output;
  const half = call(g, 'aten.to.dtype', { self: x, dtype: 'float16', non_blocking: false, copy: true }).output; // dtype string, booleans
  const gelu = call(g, 'aten.gelu.default', { self: x, approximate: 'tanh' }, { meta: { where: 'a gelu', nested: { a: [1, 'b', null, true] } } });
  gelu.meta.tensor = Tensor.scalar('float32', 1); // not JSON data: left out
  gelu.meta.fn = () => 1;
  gelu.meta.big = 1n;
  gelu.meta.inf = Infinity;
  const negZero = call(g, 'aten.mul.Scalar', { self: x, other: -0 }).output;
  const clamped = call(g, 'aten.clamp.default', { self: x, min: -Infinity, max: Infinity }).output;
  const filled = call(g, 'aten.full.default', { size: [twice, 3], fill_value: NaN, dtype: 'float32' }).output;
  const sizes = call(g, 'trt.sym_tensor', { values: [size, twice, 5] }).output;
  const complex = g.addConstant('complex', Tensor.from('complex64', [2], [1.5, -2, 0, 3.25]));
  const big = g.addConstant('big', Tensor.from('int64', [4], [2n ** 62n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n]), 'buffer');
  const mask = g.addConstant('mask', Tensor.from('bool', [8], [1, 0, 0, 1, 1, 0, 1, 0]), 'parameter');
  const masked = call(g, 'aten.masked_fill.Scalar', { self: x, mask, value: -Infinity }).output;
  const shared = Tensor.from('float32', [3], [1, 2, 3]);
  const s1 = g.addConstant('shared', shared);
  const s2 = g.addConstant('shared', shared); // same object: written once
  const empty = g.addConstant('empty', new Tensor('float64', [0, 3]));
  const sum = call(g, 'aten.add.Tensor', { self: s1, other: s2 }).output;
  sum.name = 'renamed_sum'; // names set after creation survive
  sum.producer.name = 'renamed_node';
  const outputs: [string, Value][] = [
    ['split0', split.outputs[0]!],
    ['split1', split.outputs[1]!],
    ['norm', norm.outputs[0]!],
    ['rstd', norm.outputs[2]!],
    ['viewed', viewed],
    ['sliced', sliced],
    ['half', half],
    ['gelu', gelu.output],
    ['neg_zero', negZero],
    ['clamped', clamped],
    ['filled', filled],
    ['sizes', sizes],
    ['complex', complex],
    ['big', big],
    ['mask', mask],
    ['masked', masked],
    ['sum', sum],
    ['empty', empty],
    ['y', y],
  ];
  g.setOutputs(
    outputs.map(([, v]) => v),
    outputs.map(([n]) => n),
  );
  return { graph: g, shared, nodes: { x, y, s1, s2, big, sliced, negZero } };
}

/** Args with values replaced by their names, for exact comparison (toEqual uses Object.is: -0 and NaN count). */
function plainArgs(graph: Graph): unknown[] {
  const plain = (a: Arg): unknown => (a instanceof Value ? { value: a.name } : Array.isArray(a) ? a.map(plain) : a);
  return graph.nodes.map((n) => Object.entries(n.args).map(([k, a]) => [k, plain(a)]));
}

describe('a hand-built graph', () => {
  const { graph: before, shared } = handBuilt();
  const x = Tensor.from('float32', [3, 8], Array.from({ length: 24 }, (_, i) => (i % 5) - 1.75 + i / 7));
  const inputs = [Tensor.scalar('int64', 7), x]; // graph.inputs order: y, x

  test('round-trips exactly', () => {
    const { graph: after, json, weights } = viaJson(before);
    expectPlainJson(json);
    expectSameStructure(after, before);
    expect(plainArgs(after)).toEqual(plainArgs(before));
    const sliced = after.nodes.find((n) => n.target === 'aten.slice.Tensor')!;
    expect(sliced.args.end).toBe(INT64_MAX);
    expect(Object.is(after.nodes.find((n) => n.target === 'aten.mul.Scalar')!.args.other, -0)).toBe(true);
    expect(after.symbols.get('s0')).toEqual({ min: 2, max: Infinity });
    expect(after.symbols.get('u')).toEqual({ min: -Infinity, max: 7 });
    expect(json.symbols).toEqual([
      { name: 's0', min: 2, max: 'Infinity' },
      { name: 'u', min: '-Infinity', max: 7 },
    ]);
    // Multi-output nodes and SymInt values keep their types.
    expect(after.nodes.find((n) => n.target === 'aten.split.Tensor')!.outputs).toHaveLength(2);
    expect(after.nodes.find((n) => n.target === 'sym.mul')!.output.type).toEqual({
      kind: 'symint',
      expr: { op: 'mul', a: { op: 'sym', name: 's0' }, b: 2 },
    });
    // Meta: JSON entries kept, others left out.
    const gelu = after.nodes.find((n) => n.target === 'aten.gelu.default')!;
    expect(gelu.meta).toEqual({ where: 'a gelu', nested: { a: [1, 'b', null, true] } });
    // Constants: the int64 values beyond 2^53, complex, bool; views of the weights; shared once.
    const constants = after.nodes.filter((n) => n.kind === 'constant');
    expect([...(constants.find((n) => n.name === 'big')!.tensor!.data as BigInt64Array)]).toEqual([
      2n ** 62n + 1n,
      -(2n ** 63n),
      2n ** 63n - 1n,
      9007199254740993n,
    ]);
    expect(constants.find((n) => n.name === 'complex')!.tensor!.toArray()).toEqual([1.5, -2, 0, 3.25]);
    expect(constants.find((n) => n.name === 'mask')!.tensor!.toArray()).toEqual([1, 0, 0, 1, 1, 0, 1, 0]);
    expectViews(after, weights.buffer);
    const [c1, c2] = constants.filter((n) => n.name.startsWith('shared'));
    expect(c1!.tensor).toBe(c2!.tensor);
    const sharedNodes = json.nodes.filter((n): n is SerializedConstantNode => n.kind === 'constant' && n.name.startsWith('shared'));
    expect(sharedNodes[0]!.constant.offset).toBe(sharedNodes[1]!.constant.offset);
    expect(shared.data.byteLength).toBe(12);
    for (const n of json.nodes) if (n.kind === 'constant') expect(n.constant.offset % 8).toBe(0);
  });

  test('interprets to bit-identical outputs', () => {
    const expected = interpret(before, inputs);
    expect(Object.is(expected[8]!.data[0], -0) || expected[8]!.toArray().some((v) => Object.is(v, -0))).toBe(true);
    expectBitIdentical(interpret(viaJson(before).graph, inputs), expected);
    const bytes = serializeGraphToBuffer(before);
    const after = deserializeGraphFromBuffer(bytes);
    expectSameStructure(after, before);
    expectViews(after, bytes.buffer);
    expectBitIdentical(interpret(after, inputs), expected);
  });

  test('weights at an unaligned address are copied, not viewed', () => {
    const { json, weights } = serializeGraph(before);
    const shifted = new Uint8Array(weights.byteLength + 1);
    shifted.set(weights, 1);
    const after = deserializeGraph(json, shifted.subarray(1));
    expectSameStructure(after, before);
    const big = after.nodes.find((n) => n.name === 'big')!.tensor!;
    expect(big.data.buffer).not.toBe(shifted.buffer);
    // One-byte elements can still be viewed.
    expect(after.nodes.find((n) => n.name === 'mask')!.tensor!.data.buffer).toBe(shifted.buffer);
    expectBitIdentical(interpret(after, inputs), interpret(before, inputs));
  });

  test('a deserialized graph names new nodes without clashing', () => {
    const { graph: after } = viaJson(before);
    const x2 = after.inputs[1]!;
    const added = call(after, 'aten.mul.Scalar', { self: x2, other: 2 }, { name: 'renamed_sum' }).output;
    expect(added.name).not.toBe('renamed_sum');
    const names = after.nodes.flatMap((n) => n.outputs.map((v) => v.name));
    expect(new Set(names).size).toBe(names.length);
  });
});

test('distinct empty constants stay distinct; a graph buffer survives a transfer', () => {
  const g = new Graph('empties');
  const a = g.addConstant('a', new Tensor('float32', [0]));
  const b = g.addConstant('b', new Tensor('float32', [0]));
  g.setOutputs([a, b]);
  const after = viaJson(g).graph;
  expect(after.nodes[0]!.tensor).not.toBe(after.nodes[1]!.tensor);
  const bytes = serializeGraphToBuffer(handBuilt().graph);
  const moved = structuredClone(bytes.buffer, { transfer: [bytes.buffer] }); // what postMessage does
  expect(bytes.byteLength).toBe(0);
  expectSameStructure(deserializeGraphFromBuffer(moved), handBuilt().graph);
});

test('serializing a graph whose node reads a value of another graph is E_INTERNAL', () => {
  const other = new Graph('other');
  const foreign = other.addInput('x', tensorType('float32', [2]));
  const g = new Graph('g');
  g.addInput('x', tensorType('float32', [2]));
  g.addCall('aten.relu.default', { self: foreign }, [tensorType('float32', [2])]);
  expect(() => serializeGraph(g)).toThrow(
    expect.objectContaining({ code: 'E_INTERNAL', message: expect.stringMatching(/argument self reads %x, which no earlier node/) }),
  );
});

// ---------------------------------------------------------------------------------------
// Malformed data

function expectBadModel(fn: () => unknown, pattern: RegExp): void {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(BadModelError);
  expect((error as BadModelError).code).toBe('E_BAD_MODEL');
  expect((error as Error).message).toMatch(pattern);
}

describe('malformed data is E_BAD_MODEL naming the problem', () => {
  const { graph } = handBuilt();
  const fresh = (): { json: SerializedGraph; weights: Uint8Array } => {
    const { json, weights } = serializeGraph(graph);
    return { json: JSON.parse(JSON.stringify(json)) as SerializedGraph, weights };
  };
  const callNode = (json: SerializedGraph, target: string): SerializedCallNode =>
    json.nodes.find((n): n is SerializedCallNode => n.kind === 'call' && n.target === target)!;

  test('a truncated buffer', () => {
    const bytes = serializeGraphToBuffer(graph);
    expectBadModel(() => deserializeGraphFromBuffer(bytes.subarray(0, bytes.length - 3)), /graph buffer: truncated/);
    expectBadModel(() => deserializeGraphFromBuffer(bytes.subarray(0, 100)), /graph buffer: truncated/);
    expectBadModel(() => deserializeGraphFromBuffer(bytes.subarray(0, 10)), /truncated: 10 bytes, its header alone needs 24/);
    expectBadModel(() => deserializeGraphFromBuffer(new Uint8Array(0)), /truncated/);
  });

  test('extra bytes after the weights', () => {
    const bytes = serializeGraphToBuffer(graph);
    const longer = new Uint8Array(bytes.length + 8);
    longer.set(bytes);
    expectBadModel(() => deserializeGraphFromBuffer(longer), /8 unexpected bytes after the weights/);
  });

  test('a wrong magic', () => {
    const bytes = serializeGraphToBuffer(graph).slice();
    bytes.set(new TextEncoder().encode('PK\x03\x04'), 0);
    expectBadModel(() => deserializeGraphFromBuffer(bytes), /bad magic .*not a serialized graph/);
  });

  test('version 1 (special numbers as {number}) is still read, the same as version 2', () => {
    const { json, weights } = fresh();
    const legacy = JSON.parse(JSON.stringify(json).replaceAll('"$number":', '"number":')) as SerializedGraph;
    (legacy as { version: number }).version = 1;
    expect(JSON.stringify(legacy)).toContain('{"number":"-Infinity"}');
    const a = deserializeGraph(json, weights);
    const b = deserializeGraph(legacy, weights);
    const clampArgs = (g: ReturnType<typeof deserializeGraph>): unknown => g.nodes.find((n) => n.kind === 'call' && n.target === 'aten.clamp.default')!.args;
    expect(clampArgs(b)).toMatchObject({ min: -Infinity, max: Infinity });
    expect(serializeGraph(b).json).toEqual(serializeGraph(a).json);
    // Version 2 does not read version 1's tag.
    (legacy as { version: number }).version = 2;
    expectBadModel(() => deserializeGraph(legacy, weights), /neither \{value\} nor \{\$number\}/);
  });

  test('a future version (buffer and JSON)', () => {
    const bytes = serializeGraphToBuffer(graph).slice();
    new DataView(bytes.buffer).setUint32(8, 2, true);
    expectBadModel(() => deserializeGraphFromBuffer(bytes), /version 2 is not supported/);
    const { json, weights } = fresh();
    (json as { version: number }).version = GRAPH_FORMAT_VERSION + 1;
    expectBadModel(() => deserializeGraph(json, weights), new RegExp(`format version ${GRAPH_FORMAT_VERSION + 1} is not supported`));
    expectBadModel(() => deserializeGraph({ nodes: [] }, weights), /no format version/);
    expectBadModel(() => deserializeGraph(null, weights), /is not an object/);
  });

  test('unreadable JSON in a buffer', () => {
    const bytes = serializeGraphToBuffer(graph).slice();
    bytes[24] = 0xff; // invalid UTF-8 where the JSON starts
    expectBadModel(() => deserializeGraphFromBuffer(bytes), /JSON part is unreadable/);
  });

  test('a node reading a missing value, or a value defined after it', () => {
    const { json, weights } = fresh();
    callNode(json, 'aten.gelu.default').args.self = { value: 9999 };
    expectBadModel(() => deserializeGraph(json, weights), /node \d+ \(gelu\) argument self reads value 9999, which no earlier node defines/);
    const later = fresh();
    callNode(later.json, 'aten.sym_size.int').args.self = { value: 30 };
    expectBadModel(() => deserializeGraph(later.json, later.weights), /sym_size.* argument self reads value 30/);
    const output = fresh();
    output.json.outputs[0] = 500;
    expectBadModel(() => deserializeGraph(output.json, output.weights), /output 0 is value 500, but the graph defines only/);
  });

  test('an unknown op or argument', () => {
    const { json, weights } = fresh();
    callNode(json, 'aten.gelu.default').target = 'aten.frobnicate.default';
    expectBadModel(() => deserializeGraph(json, weights), /\(gelu\) calls the unknown op aten\.frobnicate\.default/);
    const arg = fresh();
    expectBadModel(() => deserializeGraph(JSON.parse(JSON.stringify(arg.json).replace('"approximate"', '"__proto__"')), arg.weights), /unknown argument __proto__/);
  });

  test('constant data outside the weights, or disagreeing with its dtype and shape', () => {
    const { json, weights } = fresh();
    const big = json.nodes.find((n): n is SerializedConstantNode => n.kind === 'constant' && n.name === 'big')!;
    big.constant.offset = weights.byteLength;
    expectBadModel(() => deserializeGraph(json, weights), /node \d+ \(big\): its data \(bytes \d+ to \d+\) lies past the end of the weights \(\d+ bytes\)/);
    big.constant.offset = 0;
    big.constant.byteLength = 24;
    expectBadModel(() => deserializeGraph(json, weights), /\(big\): a int64\[4\] constant needs 32 bytes, its byteLength says 24/);
    big.constant.byteLength = 32;
    big.constant.shape = [5];
    expectBadModel(() => deserializeGraph(json, weights), /\(big\): a int64\[5\] constant needs 40 bytes/);
    big.constant.shape = [4];
    (big.constant as { dtype: string }).dtype = 'int3';
    expectBadModel(() => deserializeGraph(json, weights), /\(big\): unknown dtype "int3"/);
    big.constant.dtype = 'float64';
    expectBadModel(() => deserializeGraph(json, weights), /\(big\): its value's type does not match its float64\[4\] data/);
    big.constant.offset = -8;
    expectBadModel(() => deserializeGraph(json, weights), /\(big\)'s offset is not a non-negative integer \(got -8\)/);
  });

  test('bad types, dims, args and meta', () => {
    const cases: [(json: SerializedGraph) => void, RegExp][] = [
      [(j) => ((j.nodes[0]!.outputs[0]!.type as { dtype: string }).dtype = 'float8'), /node 0 \(x\) output 0's type has the unknown dtype "float8"/],
      [(j) => ((j.nodes[0]!.outputs[0]!.type as { shape: unknown[] }).shape[0] = { op: 'pow', a: 1, b: 2 }), /unknown op "pow"/],
      [(j) => ((j.nodes[0]!.outputs[0]!.type as { shape: unknown[] }).shape[1] = 2.5), /has the dim 2\.5, not an integer/],
      [(j) => (callNode(j, 'aten.gelu.default').args.self = { tensor: 1 } as never), /argument self is an object that is neither \{value\} nor \{\$number\}/],
      [(j) => (callNode(j, 'aten.clamp.default').args.min = { $number: 'Huge' } as never), /argument min is the unknown number "Huge"/],
      [(j) => (j.nodes[0]!.kind = 'weird' as never), /node 0 \(x\) has the unknown kind "weird"/],
      [(j) => (j.nodes[0]!.outputs = []), /a placeholder has one output, not 0/],
      [(j) => (j.inputs[0] = 2), /input 0 \(%sym_size\) is not a placeholder/],
      [(j) => j.outputNames.pop(), /19 outputs but 18 output names/],
      [(j) => j.symbols.push({ name: 's0', min: 0, max: 1 }), /symbol s0 is declared twice/],
      [(j) => (j.symbols[0]!.max = null as never), /symbol s0's maximum is not a number or "Infinity"/],
      [(j) => (j.symbols[1]!.min = 100), /symbol u has an empty range \[100, 7\]/], // from the verifier
      [(j) => (j.nodes[3]!.outputs[0]!.name = 'x'), /value name %x is used twice/], // from the verifier
      [(j) => (callNode(j, 'aten.gelu.default').args.approximate = 3), /argument approximate: expected a string, got 3/], // from the verifier
      [(j) => (j.nodes[0]!.meta = [] as never), /node 0 \(x\)'s meta is not an object/],
    ];
    const failures: string[] = [];
    for (const [change, pattern] of cases) {
      const { json, weights } = fresh();
      change(json);
      try {
        deserializeGraph(json, weights);
        failures.push(`${pattern}: no error`);
      } catch (e) {
        if (!(e instanceof BadModelError) || !pattern.test(e.message)) failures.push(`${pattern}: ${(e as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
