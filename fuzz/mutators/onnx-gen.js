'use strict';
/**
 * Structure-aware generators of small ONNX models, one family per input class that random
 * byte or field mutations almost never reach:
 *
 *  - shapeFoldModel: shape arithmetic that grows when folded at import (Shape, then Concat(s, s)
 *    doublings, Tile and Expand of shapes, Range with big limits, ConstantOfShape of folded shapes);
 *  - expansionModel: ConstantOfShape / Expand of large sizes through pointwise ops and a
 *    reduction, with the compile settings to use (a small maxProgramBytes or the default);
 *  - indexModel: Gather / GatherElements / GatherND / ScatterElements / ScatterND with indices in
 *    and out of range, with the values to feed (compiled and run on two backends);
 *  - duplicateNamesModel: graph inputs, initializers and node outputs that share a name;
 *  - externalDataCase: a model whose weight lives in an external-data file, with the layout of
 *    files and links to make around it (hard links and symbolic links in and out of its folder).
 *
 * Settings and feeds travel inside the model (a `fuzz` entry of metadata_props), so a saved
 * finding is one self-contained file that replays alone.
 */
const Long = require('long');
const { onnx } = require('onnx-proto');

const FLOAT = 1;
const INT64 = 7;

/** A ValueInfo; `dims` null leaves the shape out (outputs: the importer infers it). */
function info(name, elemType, dims) {
  return { name, type: { tensorType: { elemType, shape: dims === null ? null : { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } } };
}

const attrI = (name, i) => ({ name, type: 2, i });
const attrF = (name, f) => ({ name, type: 1, f });
const attrS = (name, s) => ({ name, type: 3, s: Buffer.from(s) });
const attrT = (name, t) => ({ name, type: 4, t });
/** An int64 value as protobuf wants it: a Long beyond 2^53, else a number. */
const long = (v) => (typeof v === 'bigint' ? Long.fromString(v.toString()) : v);
const i64 = (name, dims, values) => ({ name, dataType: INT64, dims, int64Data: values.map(long) });
const f32 = (name, dims, values) => ({ name, dataType: FLOAT, dims, floatData: values });

/** Encodes a model: nodes are [opType, inputs, outputs, attributes?]; `meta` goes to metadata_props as JSON. */
function encodeModel({ nodes, inputs, outputs, initializers = [], meta, opset = 18 }) {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: opset }],
    metadataProps: meta === undefined ? [] : [{ key: 'fuzz', value: JSON.stringify(meta) }],
    graph: {
      name: 'gen',
      node: nodes.map(([opType, input, output, attribute = []], k) => ({ opType, input, output, attribute, name: `${opType}_${k}` })),
      input: inputs,
      output: outputs,
      initializer: initializers,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** The `fuzz` metadata of an encoded model (settings, feeds), or undefined when the bytes do not decode or carry none. */
function modelMeta(bytes) {
  try {
    const m = onnx.ModelProto.decode(bytes);
    const p = (m.metadataProps ?? []).find((e) => e.key === 'fuzz');
    return p === undefined ? undefined : JSON.parse(p.value);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Shape-folding growth

/** Repeat counts, limits and factors that make folded shape lists or ranges large. */
const BIG = [2, 3, 16, 1000, 65536, 2 ** 20, 2 ** 24, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 53, 2n ** 62n, 2n ** 63n - 1n];

/**
 * Shape(x), then a few steps that grow a 1-D int64 value (Concat of itself, Tile, Expand, Mul
 * by a big factor, Range over a folded element), then a consumer that materializes it
 * (ConstantOfShape, Reshape, Expand of x, Range to its product) or the value itself.
 */
function shapeFoldModel(rng) {
  const symbolic = rng.chance(0.3);
  const xDims = symbolic ? ['batch', rng.int(1, 4)] : [rng.int(1, 4), rng.int(1, 4)];
  const nodes = [['Shape', ['x'], ['s0']]];
  const inits = [];
  let n = 0;
  let cur = 's0';
  const fresh = () => `v${++n}`;
  const constant = (values) => {
    const name = `c${inits.length}`;
    inits.push(i64(name, [values.length], values));
    return name;
  };
  const scalar = (v) => {
    const name = `k${inits.length}`;
    inits.push(i64(name, [], [v]));
    return name;
  };
  const steps = rng.chance(0.5) ? rng.int(1, 8) : rng.int(8, 48);
  for (let k = 0; k < steps; k++) {
    const out = fresh();
    // Range steps stop folding when their limit is not known (a refusal): kept rare.
    const step = rng.chance(0.04) ? 'range' : rng.pick(['concat', 'concat', 'concat', 'tile', 'expand', 'mul', 'concat3']);
    switch (step) {
      case 'concat': nodes.push(['Concat', [cur, cur], [out], [attrI('axis', 0)]]); break;
      case 'concat3': nodes.push(['Concat', [cur, cur, cur, 's0'], [out], [attrI('axis', 0)]]); break;
      case 'tile': nodes.push(['Tile', [cur, constant([rng.pick(BIG)])], [out]]); break;
      case 'expand': {
        // [len] -> [n, len] -> flattened: n copies of the list.
        const u = fresh();
        const e = fresh();
        nodes.push(['Unsqueeze', [cur, constant([0])], [u]], ['Expand', [u, constant([rng.pick(BIG), 1])], [e]], ['Reshape', [e, constant([-1])], [out]]);
        break;
      }
      case 'mul': nodes.push(['Mul', [cur, scalar(rng.pick(BIG))], [out]]); break;
      default: {
        // Range(0, limit, delta) with limit a folded element (or its product with a big factor).
        const g = fresh();
        const lim = fresh();
        nodes.push(['Gather', [cur, scalar(0)], [g], [attrI('axis', 0)]]);
        nodes.push(['Mul', [g, scalar(rng.pick(BIG))], [lim]]);
        nodes.push(['Range', [scalar(rng.pick([0, -1, 0])), lim, scalar(rng.pick([1, 1, 1, 2, -1, 0]))], [out]]);
      }
    }
    cur = out;
  }
  const y = 'y';
  switch (rng.pick(['value', 'cos', 'cos', 'reshape', 'expand', 'rangeprod', 'range'])) {
    case 'value': nodes.push(['Identity', [cur], [y]]); break;
    case 'cos': nodes.push(['ConstantOfShape', [cur], [y], [attrT('value', f32('v', [1], [1]))]]); break;
    case 'reshape': nodes.push(['Reshape', ['x', cur], [y]]); break;
    case 'expand': nodes.push(['Expand', ['x', cur], [y]]); break;
    case 'rangeprod': {
      const p = fresh();
      nodes.push(['ReduceProd', [cur], [p], [attrI('keepdims', 0)]], ['Range', [scalar(0), p, scalar(1)], [y]]);
      break;
    }
    default: {
      // A plain Range with a big limit, beside the shape chain.
      const t = fresh();
      nodes.push(['Range', [scalar(0), scalar(rng.pick(BIG)), scalar(rng.pick([1, 1, 3, -1]))], [t]], ['Concat', [cur, t], [y], [attrI('axis', 0)]]);
    }
  }
  if (rng.chance(0.2)) {
    // Float Range with a tiny delta: the element count is limit / delta.
    nodes.push(['Range', ['fz', 'fl', 'fd'], ['y2']]);
    inits.push(f32('fz', [], [0]), f32('fl', [], [rng.pick([1, 1e6, 1e9, 3e38])]), f32('fd', [], [rng.pick([1e-9, 1e-3, 1, 1e-45])]));
    return encodeModel({ nodes, inputs: [info('x', FLOAT, xDims)], outputs: [info(y, 0, null), info('y2', FLOAT, null)], initializers: inits });
  }
  return encodeModel({ nodes, inputs: [info('x', FLOAT, xDims)], outputs: [info(y, 0, null)], initializers: inits });
}

// ---------------------------------------------------------------------------------------------
// 3. Constant expansion, compiled

/** Element counts of the expanded tensor: from small (compiles and runs) to far past any memory. */
const EXPANDED = [1000, 65536, 2 ** 20, 2 ** 22, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30, 2 ** 33, 2 ** 40];
/** maxProgramBytes settings: null is the default (the machine's memory). */
const PROGRAM_BUDGETS = [null, null, 2 ** 20, 4 * 2 ** 20, 16 * 2 ** 20, 64 * 2 ** 20];

/** Splits `count` into a shape of 1 to 3 dims whose product is `count` (a power of two or not). */
function splitShape(rng, count) {
  const rank = rng.int(1, 3);
  if (rank === 1) return [count];
  const dims = [];
  let left = count;
  for (let r = 0; r < rank - 1; r++) {
    let d = 1;
    for (const f of [1024, 256, 64, 16, 8, 4, 2]) {
      if (left % f === 0 && rng.chance(0.5)) {
        d = f;
        break;
      }
    }
    dims.push(d);
    left /= d;
  }
  dims.push(left);
  return rng.chance(0.5) ? dims : dims.reverse();
}

/**
 * x [2, 4] (or [batch, 4]) and a large tensor made from a constant: ConstantOfShape of a shape
 * (given, or folded from Shape(x)), Expand of a scalar constant or of x; then pointwise ops
 * (some between constants only: foldable), a reduction, and an output that depends on x.
 */
function expansionModel(rng) {
  const count = rng.pick(EXPANDED);
  const shape = splitShape(rng, count);
  const symbolic = rng.chance(0.2);
  const inits = [];
  const nodes = [];
  const scalar = (name, v) => {
    inits.push(f32(name, [], [v]));
    return name;
  };
  inits.push(i64('big', [shape.length], shape));
  let big;
  switch (rng.pick(['cos', 'cos', 'cos-folded', 'expand-const', 'expand-const', 'expand-x'])) {
    case 'cos': nodes.push(['ConstantOfShape', ['big'], ['e'], [attrT('value', f32('v', [1], [rng.pick([0, 1, 0.5])]))]]); big = 'e'; break;
    case 'cos-folded': {
      // The shape comes from Shape(x) times a factor: folded at import, or symbolic with batch.
      inits.push(i64('fac', [2], [Math.max(1, Math.floor(count / 8)), 1]));
      nodes.push(['Shape', ['x'], ['s']], ['Mul', ['s', 'fac'], ['s2']], ['ConstantOfShape', ['s2'], ['e'], [attrT('value', f32('v', [1], [1]))]]);
      big = 'e';
      break;
    }
    case 'expand-const': nodes.push(['Expand', [scalar('one', rng.pick([1, 2, -1])), 'big'], ['e']]); big = 'e'; break;
    default: {
      // x is [2, 4]: expanded to [count / 8, 2, 4] when that divides, else to [count, 1, 1] of one element.
      const lead = Math.max(1, Math.floor(count / 8));
      inits.push(i64('xshape', [3], [lead, 2, 4]));
      nodes.push(['Expand', ['x', 'xshape'], ['e']]);
      big = 'e';
    }
  }
  let cur = big;
  const steps = rng.int(1, 4);
  for (let k = 0; k < steps; k++) {
    const out = `p${k}`;
    const op = rng.pick(['Add', 'Mul', 'Sub', 'Relu', 'Exp', 'Sigmoid', 'Neg', 'Abs', 'Sqrt', 'AddSelf', 'AddConst']);
    if (op === 'AddSelf') nodes.push(['Add', [cur, cur], [out]]);
    else if (op === 'AddConst') nodes.push(['Add', [cur, scalar(`a${k}`, 0.25)], [out]]);
    else if (['Add', 'Mul', 'Sub'].includes(op)) nodes.push([op, [cur, rng.chance(0.5) ? cur : scalar(`b${k}`, 2)], [out]]);
    else nodes.push([op, [cur], [out]]);
    cur = out;
  }
  const reduce = rng.pick(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin']);
  nodes.push([reduce, [cur], ['r'], [attrI('keepdims', 0)]]);
  // The output depends on x, so the whole graph is never one constant.
  nodes.push(['ReduceSum', ['x'], ['rx'], [attrI('keepdims', 0)]], ['Add', ['r', 'rx'], ['y']]);
  const budget = rng.pick(PROGRAM_BUDGETS);
  const meta = { maxProgramBytes: budget };
  if (symbolic) meta.inputs = { x: { min: [1, 4], opt: [2, 4], max: [rng.pick([2, 64, 4096]), 4] } };
  return encodeModel({ nodes, inputs: [info('x', FLOAT, symbolic ? ['batch', 4] : [2, 4])], outputs: [info('y', FLOAT, null)], initializers: inits, meta });
}

// ---------------------------------------------------------------------------------------------
// 4. Indices in and out of range, for the differential reader

/** An index along a dim of size `d`: in range (either sign), at the edges, or out of range. */
function index(rng, d, mode) {
  if (mode === 'out' && rng.chance(0.35)) return rng.pick([d, d + 1, -d - 1, -2 * d, 2 * d + 3, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 + 1, 2 ** 40, -(2 ** 40)]);
  if (mode !== 'in' && rng.chance(0.3)) return rng.pick([-d, d - 1, -1, 0]);
  const i = rng.int(0, d - 1);
  return rng.chance(0.3) ? i - d : i;
}

/** `count` distinct positions in [0, d) (count <= d), each written in either sign. */
function distinct(rng, d, count) {
  const all = Array.from({ length: d }, (_, i) => i);
  for (let i = d - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all.slice(0, count).map((i) => (rng.chance(0.3) ? i - d : i));
}

const product = (dims) => dims.reduce((a, b) => a * b, 1);
const arange = (n, scale = 1, shift = 0) => Array.from({ length: n }, (_, k) => k * scale + shift);

/** One out-of-range value somewhere in `values` (in place) when `mode` is 'out' and none is yet. */
function forceOut(rng, values, d, mode) {
  if (mode !== 'out' || values.length === 0 || values.some((v) => v < -d || v >= d)) return;
  values[rng.int(0, values.length - 1)] = rng.pick([d, -d - 1, 2 ** 31, -(2 ** 33)]);
}

/**
 * A one-op graph over data x (float32, rank 1-3, small dims) and int64 indices (a graph input,
 * or an initializer), with the feed in the model's metadata. Scatter ops with no reduction get
 * distinct positions (duplicates make their result order-dependent, which ONNX leaves undefined),
 * except where an out-of-range index is planted on purpose.
 */
function indexModel(rng) {
  const rank = rng.int(1, 3);
  const dims = Array.from({ length: rank }, () => rng.int(1, 5));
  const mode = rng.pick(['in', 'edge', 'out', 'out']);
  const op = rng.pick(['Gather', 'GatherElements', 'GatherND', 'ScatterElements', 'ScatterND']);
  const axisOf = () => rng.int(-rank, rank - 1);
  const norm = (a) => (a < 0 ? a + rank : a);
  const attrs = [];
  let idxDims;
  let idx;
  let updDims;
  switch (op) {
    case 'Gather': {
      const a = axisOf();
      attrs.push(attrI('axis', a));
      idxDims = rng.pick([[], [rng.int(1, 4)], [rng.int(1, 3), rng.int(1, 3)]]);
      idx = Array.from({ length: product(idxDims) }, () => index(rng, dims[norm(a)], mode));
      forceOut(rng, idx, dims[norm(a)], mode);
      break;
    }
    case 'GatherElements':
    case 'ScatterElements': {
      const a = axisOf();
      const ax = norm(a);
      attrs.push(attrI('axis', a));
      const d = dims[ax];
      const reduction = op === 'ScatterElements' ? rng.pick(['none', 'none', 'add', 'mul', 'max', 'min']) : undefined;
      if (reduction !== undefined) attrs.push(attrS('reduction', reduction));
      // The indices' dims: at most the data's, and along the axis any length (gather) or at most d (scatter without reduction).
      idxDims = dims.map((n, i) => (i === ax ? (op === 'GatherElements' ? rng.int(1, 5) : rng.int(1, d)) : rng.int(1, n)));
      const lines = product(idxDims) / idxDims[ax];
      // Indices along the axis: distinct per line for a scatter without reduction.
      const perLine = Array.from({ length: lines }, () => (reduction === 'none' ? distinct(rng, d, idxDims[ax]) : Array.from({ length: idxDims[ax] }, () => index(rng, d, mode))));
      // Lay the lines out row-major: the axis position k of line l.
      idx = new Array(product(idxDims));
      const strides = idxDims.map((_, i) => product(idxDims.slice(i + 1)));
      let l = 0;
      for (let flat = 0; flat < idx.length; flat++) {
        const coords = idxDims.map((_, i) => Math.floor(flat / strides[i]) % idxDims[i]);
        if (coords[ax] !== 0) continue;
        for (let k = 0; k < idxDims[ax]; k++) idx[flat + k * strides[ax]] = perLine[l][k];
        l++;
      }
      if (reduction === 'none' && mode === 'out' && rng.chance(0.7)) idx[rng.int(0, idx.length - 1)] = rng.pick([d, -d - 1, 2 ** 31]);
      else if (reduction !== 'none') forceOut(rng, idx, d, mode);
      updDims = op === 'ScatterElements' ? idxDims : undefined;
      break;
    }
    case 'GatherND': {
      const b = rank >= 2 && rng.chance(0.3) ? 1 : 0;
      if (b > 0) attrs.push(attrI('batch_dims', b));
      const m = rng.int(1, rank - b);
      const k = rng.int(1, 3);
      idxDims = b > 0 ? [dims[0], k, m] : [k, m];
      idx = Array.from({ length: product(idxDims) }, (_, flat) => index(rng, dims[b + (flat % m)], mode));
      if (mode === 'out' && rng.chance(0.7)) {
        const at = rng.int(0, idx.length - 1);
        idx[at] = rng.pick([dims[b + (at % m)], -dims[b + (at % m)] - 1, 2 ** 31]);
      }
      break;
    }
    default: {
      // ScatterND: k tuples of m coordinates; updates [k, ...dims[m:]].
      const reduction = rng.pick(['none', 'none', 'add', 'mul', 'max', 'min']);
      attrs.push(attrS('reduction', reduction));
      const m = rng.int(1, rank);
      const room = product(dims.slice(0, m));
      const k = rng.int(1, Math.min(4, room));
      idxDims = [k, m];
      if (reduction === 'none') {
        // Distinct tuples: distinct flat positions in the first m dims, written in either sign.
        const flats = distinct(rng, room, k).map((v) => (v < 0 ? v + room : v));
        idx = flats.flatMap((f) => dims.slice(0, m).map((_, i) => {
          const d = dims[i];
          const c = Math.floor(f / product(dims.slice(i + 1, m))) % d;
          return rng.chance(0.3) ? c - d : c;
        }));
        if (mode === 'out' && rng.chance(0.7)) {
          const at = rng.int(0, idx.length - 1);
          idx[at] = rng.pick([dims[at % m], -dims[at % m] - 1, 2 ** 31]);
        }
      } else {
        idx = Array.from({ length: k * m }, (_, flat) => index(rng, dims[flat % m], mode));
      }
      updDims = [k, ...dims.slice(m)];
    }
  }
  const indicesFed = rng.chance(0.7);
  const inputs = [info('x', FLOAT, dims)];
  const inits = [];
  const feed = { x: ['float32', dims, arange(product(dims), 1, -2)] };
  if (indicesFed) {
    inputs.push(info('i', INT64, idxDims));
    feed.i = ['int64', idxDims, idx];
  } else inits.push(i64('i', idxDims, idx));
  const opInputs = ['x', 'i'];
  if (updDims !== undefined) {
    inputs.push(info('u', FLOAT, updDims));
    feed.u = ['float32', updDims, arange(product(updDims), 0.5, 1)];
    opInputs.push('u');
  }
  return encodeModel({ nodes: [[op, opInputs, ['y'], attrs]], inputs, outputs: [info('y', FLOAT, null)], initializers: inits, meta: { op, mode, feed } });
}

// ---------------------------------------------------------------------------------------------
// 6. Duplicate names

/**
 * x [2, 4] + w [4] through a node or two, with one name given twice: a graph input, an
 * initializer (same or different value and shape), an output of two nodes, a node output that
 * is also a graph input or an initializer; or, as controls, an initializer that is also a graph
 * input (its default value: valid ONNX) and a graph output listed twice.
 */
function duplicateNamesModel(rng) {
  const inputs = [info('x', FLOAT, [2, 4])];
  const inits = [f32('w', [4], [1, 2, 3, 4])];
  const nodes = [['Add', ['x', 'w'], ['h']], ['Relu', ['h'], ['y']]];
  const outputs = [info('y', FLOAT, null)];
  const kinds = ['input-same', 'input-other', 'input-unused', 'init-same', 'init-other', 'init-unused', 'node-output', 'node-output-input', 'node-output-init', 'init-is-input', 'output-twice'];
  const picked = new Set(Array.from({ length: rng.chance(0.8) ? 1 : 2 }, () => rng.pick(kinds)));
  for (const kind of picked) {
    switch (kind) {
      case 'input-same': inputs.push(info('x', FLOAT, [2, 4])); break;
      case 'input-other': inputs.push(info('x', rng.pick([FLOAT, INT64]), rng.pick([[4], [2, 4, 1], ['n', 4]]))); break;
      case 'input-unused': inputs.push(info('z', FLOAT, [1]), info('z', FLOAT, [1])); break;
      case 'init-same': inits.push(f32('w', [4], [1, 2, 3, 4])); break;
      case 'init-other': inits.push(rng.chance(0.5) ? f32('w', [4], [9, 9, 9, 9]) : f32('w', [2, 4], arange(8))); break;
      case 'init-unused': inits.push(f32('u', [1], [1]), f32('u', [2], [2, 3])); break;
      case 'node-output': nodes.splice(1, 0, ['Mul', ['x', 'w'], ['h']]); break;
      case 'node-output-input': nodes.unshift(['Neg', ['w'], ['x']]); break;
      case 'node-output-init': nodes.unshift(['Neg', ['x'], ['w']]); break;
      case 'init-is-input': inputs.push(info('w', FLOAT, [4])); break;
      default: outputs.push(info('y', FLOAT, null));
    }
  }
  if (rng.chance(0.3)) [inputs[0], inputs[inputs.length - 1]] = [inputs[inputs.length - 1], inputs[0]];
  return encodeModel({ nodes, inputs, outputs, initializers: inits });
}

/**
 * What must refuse a decoded model for a name given twice, or undefined: ONNX graphs are in
 * SSA form, so each graph input, initializer and node output has its own name, and a node
 * output must not reuse an input's or an initializer's. (An initializer that is also a graph
 * input is its default value, and a graph output listed twice defines nothing: both valid.)
 */
function duplicateNameProblem(model) {
  const g = model.graph;
  if (!g) return undefined;
  const twice = (names) => names.find((n, i) => n !== '' && names.indexOf(n) !== i);
  const inputs = (g.input ?? []).map((v) => v.name ?? '');
  const inits = (g.initializer ?? []).map((t) => t.name ?? '');
  const outs = (g.node ?? []).flatMap((n) => (n.output ?? []).filter((o) => o !== ''));
  let n;
  if ((n = twice(inputs)) !== undefined) return `graph input "${n}" declared twice`;
  if ((n = twice(inits)) !== undefined) return `initializer "${n}" given twice`;
  if ((n = twice(outs)) !== undefined) return `"${n}" is the output of two nodes`;
  const defined = new Set([...inputs, ...inits]);
  if ((n = outs.find((o) => defined.has(o))) !== undefined) return `node output "${n}" is also a graph input or an initializer`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// 5. External data through links

/**
 * How the external-data file of the model's weight is laid out in a fresh folder tree
 * (`model/` holds the model, `outside/` a file the model must not reach), and whether loading
 * must fail: every layout where the data is reached through a link, or from outside the
 * model's folder, must be E_BAD_MODEL.
 */
const LAYOUTS = {
  plain: { refused: false },
  'hardlink-outside': { refused: true },
  'hardlink-inside': { refused: true },
  'symlink-outside-relative': { refused: true },
  'symlink-outside-absolute': { refused: true },
  'symlink-inside': { refused: true },
  'symlink-chain-outside': { refused: true },
  'symlink-dangling': { refused: true },
  'symlink-dir-outside': { refused: true },
  'symlink-dir-inside': { refused: false, either: true },
  'hardlink-outside-via-dir-symlink': { refused: true },
  'location-escape': { refused: true },
  'location-absolute': { refused: true },
  'location-dotdot-inside': { refused: false, either: true },
  'location-directory': { refused: true },
  'model-dir-symlinked': { refused: false, either: true },
  'model-dir-symlinked-hardlink': { refused: true },
};

/** Data of the weight: float32 [4] (16 bytes), and the outside file holds different values. */
const WEIGHT = [1, 2, 3, 4];
const SECRET = [666, 667, 668, 669];

/** A case of class 5: JSON {layout, location, model (base64), offset, length}. */
function externalDataCase(rng) {
  const layout = rng.pick(Object.keys(LAYOUTS));
  let location = 'w.bin';
  if (layout === 'symlink-dir-outside' || layout === 'symlink-dir-inside' || layout === 'hardlink-outside-via-dir-symlink') location = 'sub/w.bin';
  if (layout === 'location-escape') location = rng.pick(['../outside/secret.bin', 'sub/../../outside/secret.bin']);
  if (layout === 'location-absolute') location = '<root>/outside/secret.bin';
  if (layout === 'location-dotdot-inside') location = rng.pick(['sub/../w.bin', './w.bin']);
  if (layout === 'location-directory') location = rng.pick(['sub', '.', 'sub/']);
  const offset = rng.chance(0.8) ? 0 : rng.pick([4, 16, 2 ** 31]);
  const length = rng.chance(0.8) ? undefined : rng.pick([0, 8, 16, 17, 2 ** 40]);
  const ext = [{ key: 'location', value: location }];
  if (offset !== 0 || rng.chance(0.3)) ext.push({ key: 'offset', value: String(offset) });
  if (length !== undefined) ext.push({ key: 'length', value: String(length) });
  const w = { name: 'w', dataType: FLOAT, dims: [4], dataLocation: 1, externalData: ext };
  const nodes = [['Add', ['x', 'w'], ['y']]];
  const inits = [w];
  if (rng.chance(0.3)) {
    // A second weight in the same file: the loader shares the opened file between tensors.
    inits.push({ name: 'w2', dataType: FLOAT, dims: [4], dataLocation: 1, externalData: ext });
    nodes.push(['Add', ['y', 'w2'], ['y2']]);
  }
  const model = encodeModel({ nodes, inputs: [info('x', FLOAT, [4])], outputs: [info(nodes.length > 1 ? 'y2' : 'y', FLOAT, null)], initializers: inits });
  return new Uint8Array(Buffer.from(JSON.stringify({ layout, location, model: Buffer.from(model).toString('base64') })));
}

module.exports = { FLOAT, INT64, info, encodeModel, modelMeta, shapeFoldModel, expansionModel, indexModel, duplicateNamesModel, duplicateNameProblem, externalDataCase, LAYOUTS, WEIGHT, SECRET };
