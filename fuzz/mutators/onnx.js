'use strict';
/**
 * Protobuf-field-level mutations of ONNX models: decoded with the repository's protobuf
 * library (onnx-proto), a few fields changed (op types, edges, attributes, dims, dtypes,
 * initializer data, opsets), encoded again.
 */
const Long = require('long');
const { onnx } = require('onnx-proto');

const { INTERESTING_NUMBERS } = require('../random');

const DIMS = [0, 1, 2, 3, -1, -2, 2 ** 31, 2 ** 53];
const HUGE_LONGS = [Long.MAX_VALUE, Long.MIN_VALUE, Long.fromNumber(2 ** 40)];
const DTYPES = Object.values(onnx.TensorProto.DataType);
const ATTR_TYPES = Object.values(onnx.AttributeProto.AttributeType);

function dim(rng) {
  return rng.chance(0.15) ? rng.pick(HUGE_LONGS) : rng.pick(DIMS);
}

/** Every value name the graph mentions (inputs, outputs, initializers, node edges). */
function valueNames(g) {
  const names = new Set();
  for (const v of [...g.input, ...g.output, ...g.valueInfo]) names.add(v.name);
  for (const t of g.initializer) names.add(t.name);
  for (const n of g.node) for (const x of [...n.input, ...n.output]) names.add(x);
  return [...names, '', 'missing'];
}

function mutateAttribute(rng, a) {
  switch (rng.int(0, 6)) {
    case 0: a.i = rng.chance(0.2) ? rng.pick(HUGE_LONGS) : rng.pick(INTERESTING_NUMBERS.filter(Number.isInteger)); break;
    case 1: a.f = rng.pick(INTERESTING_NUMBERS); break;
    case 2: a.ints = Array.from({ length: rng.int(0, 6) }, () => dim(rng)); break;
    case 3: a.type = rng.pick(ATTR_TYPES); break;
    case 4: a.s = Buffer.from(rng.pick(['', 'NOTSET', 'SAME_UPPER', 'constant', 'x'])); break;
    case 5: a.name = rng.pick(['axis', 'axes', 'perm', 'to', 'value', 'pads', 'kernel_shape', 'strides', 'x']); break;
    default: if (a.t) mutateTensor(rng, a.t);
  }
}

function mutateTensor(rng, t) {
  switch (rng.int(0, 4)) {
    case 0: t.dims = Array.from({ length: rng.int(0, 5) }, () => dim(rng)); break;
    case 1: if (t.dims.length > 0) t.dims[rng.int(0, t.dims.length - 1)] = dim(rng); break;
    case 2: t.dataType = rng.pick(DTYPES); break;
    case 3: if (t.rawData && t.rawData.length > 0) t.rawData = t.rawData.subarray(0, rng.int(0, t.rawData.length - 1)); break;
    default: t.dataLocation = 1; t.externalData = [{ key: 'location', value: rng.pick(['p.bin', '../p.bin', '/etc/passwd', '']) }];
  }
}

function mutateValueInfo(rng, v) {
  const tt = v.type && v.type.tensorType;
  if (!tt) return;
  if (rng.chance(0.3)) tt.elemType = rng.pick(DTYPES);
  else if (tt.shape && tt.shape.dim.length > 0 && rng.chance(0.7)) {
    const d = tt.shape.dim[rng.int(0, tt.shape.dim.length - 1)];
    if (rng.chance(0.5)) {
      d.dimParam = '';
      d.dimValue = dim(rng);
    } else {
      d.dimValue = undefined;
      d.dimParam = rng.pick(['batch', 's', '', 'seq', '__proto__', 'N+1']);
    }
  } else tt.shape = rng.chance(0.5) ? null : { dim: [] };
}

/** A mutated encoding of `bytes` (a ModelProto). */
function mutateOnnx(rng, bytes, opTypes) {
  const m = onnx.ModelProto.decode(bytes);
  const g = m.graph;
  for (let n = rng.int(1, 3); n > 0; n--) {
    const nodes = g.node;
    const node = nodes.length > 0 ? rng.pick(nodes) : undefined;
    const r = rng.int(0, 15);
    if (node && r <= 1) node.opType = rng.pick(opTypes);
    else if (node && r <= 3) {
      const names = valueNames(g);
      if (node.input.length > 0 && rng.chance(0.7)) node.input[rng.int(0, node.input.length - 1)] = rng.pick(names);
      else if (rng.chance(0.5)) node.input.push(rng.pick(names));
      else node.output[rng.int(0, node.output.length - 1)] = rng.pick(names);
    } else if (node && r === 4) nodes.splice(nodes.indexOf(node), 1);
    else if (node && r === 5) nodes.splice(rng.int(0, nodes.length), 0, onnx.NodeProto.decode(onnx.NodeProto.encode(node).finish()));
    else if (node && r <= 7 && node.attribute.length > 0) mutateAttribute(rng, rng.pick(node.attribute));
    else if (node && r === 8) node.attribute = rng.chance(0.5) ? [] : [...node.attribute, ...node.attribute];
    else if (r <= 10 && g.initializer.length > 0) mutateTensor(rng, rng.pick(g.initializer));
    else if (r === 11 && g.input.length + g.output.length > 0) mutateValueInfo(rng, rng.pick([...g.input, ...g.output]));
    else if (r === 12 && m.opsetImport.length > 0) m.opsetImport[0].version = rng.pick([1, 6, 11, 13, 17, 18, 21, 99, 0]);
    else if (r === 13) (rng.chance(0.5) ? g.input : g.output).splice(0, 1);
    else if (r === 14 && g.output.length > 0) g.output.push(onnx.ValueInfoProto.decode(onnx.ValueInfoProto.encode(g.output[0]).finish()));
    else if (r === 15 && nodes.length > 1) {
      const i = rng.int(0, nodes.length - 1);
      const j = rng.int(0, nodes.length - 1);
      [nodes[i], nodes[j]] = [nodes[j], nodes[i]];
    }
  }
  return onnx.ModelProto.encode(m).finish();
}

/** A small ONNX model of `nodes` over float input `x` [batch, 4] (seeds that reach many ops quickly). */
function tinyModel(nodes, initializers = [], outputs = ['y']) {
  const info = (name, elemType, dims) => ({ name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } } });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'tiny',
      node: nodes.map(([opType, input, output, attribute = []]) => ({ opType, input, output, attribute })),
      input: [info('x', 1, ['batch', 4])],
      output: outputs.map((o) => info(o, 1, [])),
      initializer: initializers,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

const i64 = (name, values) => ({ name, dataType: 7, dims: [values.length], int64Data: values });
const f32 = (name, dims, values) => ({ name, dataType: 1, dims, floatData: values });
const ints = (name, v) => ({ name, type: 7, ints: v });
const int = (name, v) => ({ name, type: 2, i: v });

/** Seeds beyond the fixtures: shape arithmetic, reshapes, gathers, reductions, casts. */
function tinySeeds() {
  return [
    ['shape-arith', tinyModel([['Shape', ['x'], ['s']], ['Mul', ['s', 's'], ['s2']], ['ConstantOfShape', ['s2'], ['z']], ['ReduceSum', ['z'], ['y'], [int('keepdims', 0)]]])],
    ['reshape-gather', tinyModel([['Reshape', ['x', 'shape'], ['r']], ['Gather', ['r', 'idx'], ['y'], [int('axis', 1)]]], [i64('shape', [-1, 2, 2]), i64('idx', [0, -1])])],
    ['concat-slice', tinyModel([['Concat', ['x', 'x'], ['c'], [int('axis', 1)]], ['Slice', ['c', 'starts', 'ends', 'axes'], ['y']]], [i64('starts', [1]), i64('ends', [7]), i64('axes', [1])])],
    ['matmul-softmax', tinyModel([['MatMul', ['x', 'w'], ['m']], ['Softmax', ['m'], ['y'], [int('axis', -1)]]], [f32('w', [4, 3], Array.from({ length: 12 }, (_, k) => k / 10))])],
    ['cast-where', tinyModel([['Cast', ['x'], ['xi'], [int('to', 7)]], ['Cast', ['xi'], ['b'], [int('to', 9)]], ['Where', ['b', 'x', 'x'], ['y']]])],
    ['transpose-expand', tinyModel([['Transpose', ['x'], ['t'], [ints('perm', [1, 0])]], ['Expand', ['t', 'eshape'], ['e']], ['Unsqueeze', ['e', 'uaxes'], ['y']]], [i64('eshape', [2, 4, 1]), i64('uaxes', [0])])],
    ['range-topk', tinyModel([['ReduceMax', ['x'], ['mx'], [int('keepdims', 0)]], ['Range', ['zero', 'ten', 'one'], ['rg']], ['TopK', ['x', 'k'], ['y', 'ind'], [int('axis', 1)]]], [f32('zero', [], [0]), f32('ten', [], [10]), f32('one', [], [1]), i64('k', [2])], ['y', 'ind'])],
  ];
}

module.exports = { mutateOnnx, tinySeeds };
