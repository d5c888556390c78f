'use strict';
// The cuda backend's layer lowerings on the GPU: for every layer kind of the catalogue, sample
// layers (several shapes, broadcasting, size-0 and size-1 dims, each dtype the kind takes) are
// lowered, their kernel sources compiled with NVRTC (compileModule), the steps assembled into a
// PlanSpec and run with GpuPlan on DeviceTensors, and the outputs compared with the reference
// backend's executor on the same inputs. Prints per-kind max errors; exits 1 on a mismatch or
// on a kind without samples. A mismatch prints the case, the first wrong element and which
// kernels ran (key, grid, block: `.block` keys are the one-block-per-row form). Then, on a
// full run, the row layers that dominate transformer profiles (LayerNorm 1024x768, softmax
// 8x12x128x128, reduce-mean 512x2048) are checked at those sizes and timed: µs per layer,
// printed only.
//
// The sample catalogue (`buildCases`) is exported: the unit tests
// (test/backends/cuda/layers) run the same samples through the CPU kernel emulator.
const path = require('node:path');

/** mulberry32: the same "random" inputs on every run. */
function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FLOATS = ['float32', 'float16', 'bfloat16'];
const INTS = ['int8', 'uint8', 'int32', 'int64'];
const ALL = [...FLOATS, ...INTS, 'bool'];
const RANGE = { int8: [-128, 127], uint8: [0, 255] };
const size = (shape) => shape.reduce((a, d) => a * d, 1);

/**
 * The samples: { kind, name, params, inputs }. `Tensor` is the library's Tensor class (from
 * lib/ under jest, from dist/ on the GPU machine).
 */
function buildCases(Tensor) {
  const random = rng(17);
  const uniform = (lo, hi) => lo + (hi - lo) * random();
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  const t = (dtype, shape, lo = -2, hi = 2) => {
    const n = size(shape);
    if (dtype === 'bool') return Tensor.from('bool', shape, Array.from({ length: n }, () => random() < 0.5));
    if (INTS.includes(dtype)) {
      const [min, max] = RANGE[dtype] ?? [-Infinity, Infinity];
      const [a, b] = [Math.max(min, Math.ceil(lo)), Math.min(max, Math.floor(hi))];
      return Tensor.from(dtype, shape, Array.from({ length: n }, () => int(a, b)));
    }
    return Tensor.from(dtype, shape, Array.from({ length: n }, () => uniform(lo, hi)));
  };
  const v = (dtype, shape, values) => Tensor.from(dtype, shape, values);
  const i64 = (values) => Tensor.from('int64', [values.length], values);
  const cases = [];
  const add = (kind, name, params, inputs) => cases.push({ kind, name: `${kind}/${name}`, params: { kind, ...params }, inputs });
  const special = (dtype) => v(dtype, [8], [NaN, Infinity, -Infinity, 0.5, -2.7, 1e10, -1e10, 255.9]);

  // constant, identity, cast
  for (const d of ['float32', 'float16', 'bfloat16', 'int8', 'int32', 'int64']) add('constant', d, { weights: t(d, [2, 3], -50, 50) }, []);
  add('constant', 'scalar', { weights: v('int64', [], [7]) }, []);
  add('constant', 'empty', { weights: t('float32', [0, 3]) }, []);
  for (const d of ALL) add('identity', d, {}, [t(d, [2, 3], -50, 50)]);
  add('identity', 'empty', {}, [t('int32', [0, 4])]);
  add('identity', 'scalar', {}, [t('float16', [])]);
  for (const from of ALL) {
    for (const to of ALL) add('cast', `${from}->${to}`, { to }, [t(from, [3, 4], -300, 300)]);
  }
  for (const to of ALL) add('cast', `specials->${to}`, { to }, [special('float32')]);
  add('cast', 'int64-big->float32', { to: 'float32' }, [v('int64', [3], [2n ** 40n + 1n, -(2n ** 62n), 123456789012n])]);

  // elementwise
  const SHAPES = [
    [[2, 3, 4], [2, 3, 4]],
    [[2, 1, 4], [1, 3, 1]],
    [[0, 3], [1, 3]],
    [[], []],
  ];
  const floatOps = ['sum', 'prod', 'max', 'min', 'sub', 'div', 'pow', 'floor_div', 'equal', 'greater', 'less'];
  for (const op of floatOps) {
    for (const d of FLOATS) {
      SHAPES.forEach(([sa, sb], s) => {
        const lo = op === 'pow' ? 0.1 : -3;
        add('elementwise', `${op}.${d}.${s}`, { op }, [t(d, sa, lo, 3), t(d, sb, op === 'pow' ? -2 : 0.5, 3)]);
      });
    }
  }
  const intOps = ['sum', 'prod', 'max', 'min', 'sub', 'div', 'floor_div', 'pow', 'equal', 'greater', 'less'];
  for (const op of intOps) {
    for (const d of INTS) {
      SHAPES.slice(0, 3).forEach(([sa, sb], s) => {
        const b = op === 'pow' ? t(d, sb, 0, 4) : t(d, sb, -9, 9);
        add('elementwise', `${op}.${d}.${s}`, { op }, [t(d, sa, op === 'pow' ? -3 : -100, op === 'pow' ? 3 : 100), b]);
      });
    }
  }
  add('elementwise', 'div.int64.extremes', { op: 'div' }, [v('int64', [3], [-(2n ** 63n), 7n, -7n]), v('int64', [3], [-1n, -2n, 0n])]);
  add('elementwise', 'floor_div.int32.signs', { op: 'floor_div' }, [v('int32', [4], [7, -7, 7, -7]), v('int32', [4], [2, 2, -2, -2])]);
  for (const op of ['and', 'or', 'xor']) {
    SHAPES.forEach(([sa, sb], s) => add('elementwise', `${op}.bool.${s}`, { op }, [t('bool', sa), t('bool', sb)]));
  }
  add('elementwise', 'max.float32.nan', { op: 'max' }, [special('float32'), v('float32', [8], [1, 2, 3, NaN, 0, 0, 0, 0])]);

  // unary
  const DOMAIN = { log: [0.1, 3], sqrt: [0, 3], acosh: [1, 3], asin: [-0.9, 0.9], acos: [-0.9, 0.9], atanh: [-0.9, 0.9], tan: [-1.2, 1.2] };
  const floatUnary = ['exp', 'log', 'sqrt', 'recip', 'abs', 'neg', 'sin', 'cos', 'tan', 'sinh', 'cosh', 'asin', 'acos', 'atan', 'asinh', 'acosh', 'atanh', 'ceil', 'floor', 'erf', 'sign', 'round', 'isinf', 'isnan'];
  for (const op of floatUnary) {
    for (const d of FLOATS) {
      const [lo, hi] = DOMAIN[op] ?? [-3, 3];
      add('unary', `${op}.${d}`, { op }, [t(d, [3, 5], lo, hi)]);
    }
  }
  for (const op of ['isinf', 'isnan', 'sign', 'abs']) add('unary', `${op}.specials`, { op }, [special('float32')]);
  add('unary', 'round.halves', { op: 'round' }, [v('float32', [6], [0.5, 1.5, 2.5, -0.5, -1.5, 2.4999])]);
  for (const op of ['abs', 'neg', 'sign']) for (const d of ['int8', 'int32', 'int64']) add('unary', `${op}.${d}`, { op }, [t(d, [2, 4], -100, 100)]);
  add('unary', 'not.bool', { op: 'not' }, [t('bool', [3, 3])]);
  add('unary', 'exp.empty', { op: 'exp' }, [t('float32', [2, 0])]);

  // activation
  const ACT = {
    relu: {},
    sigmoid: {},
    tanh: {},
    leaky_relu: { alpha: 0.1 },
    elu: { alpha: 1.2 },
    selu: { alpha: 1.6732632, beta: 1.0507010 },
    softsign: {},
    softplus: { alpha: 1.5, beta: 0.7 },
    clip: { alpha: -0.5, beta: 0.75 },
    hard_sigmoid: { alpha: 0.2, beta: 0.5 },
    scaled_tanh: { alpha: 1.7, beta: 0.66 },
    thresholded_relu: { alpha: 0.3 },
    gelu_erf: {},
    gelu_tanh: {},
  };
  for (const [type, ab] of Object.entries(ACT)) for (const d of FLOATS) add('activation', `${type}.${d}`, { type, ...ab }, [t(d, [4, 6], -4, 4)]);
  for (const d of ['int8', 'int32', 'int64']) add('activation', `relu.${d}`, { type: 'relu' }, [t(d, [2, 5], -50, 50)]);

  // matmul
  const MM = [
    ['plain', 'none', 'none', [3, 4], [4, 5]],
    ['transA', 'transpose', 'none', [4, 3], [4, 5]],
    ['transB', 'none', 'transpose', [3, 4], [5, 4]],
    ['both', 'transpose', 'transpose', [4, 3], [5, 4]],
    ['vecA', 'vector', 'none', [4], [4, 5]],
    ['vecB', 'none', 'vector', [3, 4], [4]],
    ['vecAB', 'vector', 'vector', [2, 4], [2, 4]],
    ['batched', 'none', 'none', [2, 3, 4], [2, 4, 5]],
    ['bcastB', 'none', 'none', [2, 3, 4], [1, 4, 5]],
    // One B for every batch: one GEMM over the batches' rows (unless A is transposed).
    ['bcastB4d', 'none', 'none', [2, 3, 2, 4], [1, 1, 4, 5]],
    ['bcastBtransB', 'none', 'transpose', [3, 2, 4], [1, 5, 4]],
    ['bcastBtransA', 'transpose', 'none', [2, 4, 3], [1, 4, 5]],
    ['bcastBvecA', 'vector', 'none', [3, 4], [1, 4, 5]],
    ['bcastBvecB', 'none', 'vector', [2, 3, 4], [1, 4]],
    ['bcastBoth', 'none', 'none', [2, 1, 3, 4], [1, 3, 4, 2]],
    ['k0', 'none', 'none', [2, 0], [0, 3]],
    ['m0', 'none', 'none', [0, 4], [4, 3]],
    ['one', 'none', 'none', [1, 1], [1, 1]],
  ];
  for (const [name, opA, opB, sa, sb] of MM) add('matmul', `${name}.float32`, { opA, opB }, [t('float32', sa), t('float32', sb)]);
  for (const d of ['float16', 'bfloat16']) add('matmul', `bcastBoth.${d}`, { opA: 'none', opB: 'transpose' }, [t(d, [2, 1, 3, 4]), t(d, [1, 2, 5, 4])]);
  // Up to four rows by a transposed fp16/bf16 B: the generated GEMV (16-byte loads, then element loads).
  add('matmul', 'gemv.v8.float16', { opA: 'none', opB: 'transpose' }, [t('float16', [1, 64]), t('float16', [40, 64])]);
  add('matmul', 'gemv.rows.bfloat16', { opA: 'none', opB: 'transpose' }, [t('bfloat16', [2, 2, 32]), t('bfloat16', [1, 24, 32])]);
  add('matmul', 'gemv.v1.float16', { opA: 'none', opB: 'transpose' }, [t('float16', [3, 37]), t('float16', [5, 37])]);
  // Attention layers in the strided form the cuda backend's attention pass gives them (AttentionParams): q, k, v read at strides.
  // GQA, causal: q [1, 40, 4, 16] and k, v [1, 40, 2, 16] (tokens first) over the box [1, 2 kv heads, 2 groups].
  const gqa = { batch: [1, 2, 2], seqQ: 40, seqKV: 40, headDim: 16, scale: 0.25, causal: true, query: [2560, 32, 16, 64], key: [1280, 16, 0, 32], value: [1280, 16, 0, 32], output: [2560, 32, 16, 64], outputShape: [1, 40, 64] };
  add('attention', 'gqa-causal.float16', { scale: gqa.scale, causal: gqa.causal, strided: gqa }, [t('float16', [1, 40, 4, 16]), t('float16', [1, 40, 2, 16]), t('float16', [1, 40, 2, 16])]);
  // Q, K and V as columns of wide [1, 24, 96] products (merge-matmuls): 2 heads of 16 at offsets 0, 32 and 64.
  const columns = { batch: [1, 2], seqQ: 24, seqKV: 24, headDim: 16, scale: 0.25, causal: false, query: [2304, 16, 96], key: [2304, 16, 96], value: [2304, 16, 96], output: [768, 16, 32], offsets: [0, 32, 64], outputShape: [1, 24, 32] };
  add('attention', 'offsets.float16', { scale: columns.scale, causal: columns.causal, strided: columns }, [t('float16', [1, 24, 96]), t('float16', [1, 24, 96]), t('float16', [1, 24, 96])]);
  // A bool mask [1, 1, 70, 70] over heads-first q, k, v [1, 2, 70, 32]: two key tiles, the second partial.
  const boolMask = { batch: [1, 2], seqQ: 70, seqKV: 70, headDim: 32, scale: 0.17, causal: false, query: [4480, 2240, 32], key: [4480, 2240, 32], value: [4480, 2240, 32], output: [4480, 2240, 32], mask: [4900, 0, 70, 1], outputShape: [1, 2, 70, 32] };
  add('attention', 'bool-mask.bfloat16', { scale: boolMask.scale, causal: boolMask.causal, strided: boolMask }, [t('bfloat16', [1, 2, 70, 32]), t('bfloat16', [1, 2, 70, 32]), t('bfloat16', [1, 2, 70, 32]), t('bool', [1, 1, 70, 70])]);
  // An additive [1, 1, 1, 24] mask, head dim 64, 20 queries over 24 keys.
  const addMask = { batch: [1, 2], seqQ: 20, seqKV: 24, headDim: 64, scale: 0.125, causal: false, query: [2560, 64, 128], key: [3072, 64, 128], value: [3072, 64, 128], output: [2560, 64, 128], mask: [0, 0, 0, 1], outputShape: [1, 20, 128] };
  add('attention', 'add-mask.float16', { scale: addMask.scale, causal: addMask.causal, strided: addMask }, [t('float16', [1, 20, 2, 64]), t('float16', [1, 24, 2, 64]), t('float16', [1, 24, 2, 64]), t('float16', [1, 1, 1, 24])]);

  // shuffle
  for (const d of ['float32', 'int64', 'bool', 'float16']) {
    add('shuffle', `transpose.${d}`, { firstTranspose: [2, 0, 1], zeroIsPlaceholder: false }, [t(d, [2, 3, 4])]);
  }
  add('shuffle', 'reshape', { reshape: [4, -1], zeroIsPlaceholder: false }, [t('float32', [2, 3, 4])]);
  add('shuffle', 'first+reshape+second', { firstTranspose: [1, 0, 2], reshape: [0, 8], secondTranspose: [1, 0], zeroIsPlaceholder: true }, [t('int32', [2, 3, 4], -9, 9)]);
  add('shuffle', 'reshape-second', { reshape: [6, 4], secondTranspose: [1, 0], zeroIsPlaceholder: false }, [t('int8', [2, 3, 4], -9, 9)]);
  add('shuffle', 'dynamic-reshape', { zeroIsPlaceholder: false }, [t('float32', [2, 6]), i64([3, 4])]);
  add('shuffle', 'empty', { firstTranspose: [1, 0], zeroIsPlaceholder: false }, [t('float32', [0, 3])]);

  // slice
  for (const d of ['float32', 'int64', 'bool', 'bfloat16', 'uint8']) {
    add('slice', `strided.${d}`, { start: [1, 0], size: [2, 3], stride: [1, 2], mode: 'strict_bounds' }, [t(d, [4, 6], 0, 50)]);
  }
  add('slice', 'reverse', { start: [3, 5], size: [4, 3], stride: [-1, -2], mode: 'strict_bounds' }, [t('float32', [4, 6])]);
  add('slice', 'broadcast-stride0', { start: [0, 2], size: [3, 4], stride: [0, 1], mode: 'strict_bounds' }, [t('int32', [1, 6], -9, 9)]);
  for (const mode of ['wrap', 'clamp', 'reflect', 'fill']) {
    add('slice', mode, { start: [-2, -3], size: [6, 9], stride: [1, 1], mode }, [t('float32', [3, 4])]);
  }
  add('slice', 'reflect-single', { start: [-2], size: [5], stride: [1], mode: 'reflect' }, [t('float32', [1])]);
  add('slice', 'fill-value', { start: [-1, 0], size: [4, 2], stride: [1, 1], mode: 'fill' }, [t('float16', [2, 2]), null, null, null, v('float16', [], [7.5])]);
  add('slice', 'dynamic', { start: [0, 0], size: [1, 1], stride: [1, 1], mode: 'strict_bounds' }, [t('float32', [4, 5]), i64([1, 1]), i64([2, 3]), i64([2, 1])]);
  add('slice', 'empty', { start: [0, 0], size: [0, 2], stride: [1, 1], mode: 'strict_bounds' }, [t('float32', [3, 3])]);

  // concat
  for (const d of ['float32', 'int64', 'bool', 'float16']) {
    add('concat', `axis1.${d}`, { axis: 1 }, [t(d, [2, 3, 2]), t(d, [2, 1, 2]), t(d, [2, 0, 2])]);
  }
  add('concat', 'axis0', { axis: 0 }, [t('int32', [1, 4], -9, 9), t('int32', [2, 4], -9, 9)]);
  add('concat', 'last', { axis: 2 }, [t('float32', [2, 2, 1]), t('float32', [2, 2, 3])]);
  add('concat', 'rank1', { axis: 0 }, [i64([1, 2]), i64([3])]);

  // gather
  for (const id of ['int32', 'int64']) {
    add('gather', `default.axis0.${id}`, { mode: 'default', axis: 0 }, [t('float32', [5, 3]), t(id, [2, 2], 0, 4)]);
    add('gather', `default.axis1.${id}`, { mode: 'default', axis: 1 }, [t('int64', [2, 4, 3], -9, 9), t(id, [3], 0, 3)]);
  }
  // Whole rows a thread chunk at a time (the row gather): 16-byte chunks of an embedding table,
  // rows around an inner axis, and 12-byte rows in 4-byte chunks.
  add('gather', 'default.rows16.embedding', { mode: 'default', axis: 0 }, [t('float16', [10, 24]), t('int64', [3, 4], 0, 9)]);
  add('gather', 'default.rows16.axis1', { mode: 'default', axis: 1 }, [t('float16', [2, 5, 8]), t('int32', [3], 0, 4)]);
  add('gather', 'default.rows4', { mode: 'default', axis: 0 }, [t('float32', [6, 3]), t('int32', [4], 0, 5)]);
  add('gather', 'default.scalar-index', { mode: 'default', axis: 1 }, [t('float16', [2, 4]), v('int32', [], [3])]);
  add('gather', 'default.bool', { mode: 'default', axis: 0 }, [t('bool', [4]), t('int64', [6], 0, 3)]);
  add('gather', 'default.empty-index', { mode: 'default', axis: 0 }, [t('float32', [4, 2]), t('int64', [0], 0, 3)]);
  add('gather', 'element.axis1', { mode: 'element', axis: 1 }, [t('float32', [3, 4]), t('int64', [3, 5], 0, 3)]);
  add('gather', 'element.axis0', { mode: 'element', axis: 0 }, [t('int8', [3, 4], -9, 9), t('int32', [2, 4], 0, 2)]);
  add('gather', 'nd.b0', { mode: 'nd', axis: 0, nbElementWiseDims: 0 }, [t('float32', [3, 4, 2]), t('int64', [5, 2], 0, 2)]);
  add('gather', 'nd.b1', { mode: 'nd', axis: 0, nbElementWiseDims: 1 }, [t('bfloat16', [2, 3, 4]), t('int32', [2, 3, 1], 0, 2)]);
  add('gather', 'nd.full', { mode: 'nd', axis: 0, nbElementWiseDims: 0 }, [t('int32', [3, 4], -9, 9), t('int64', [2, 2], 0, 2)]);

  // scatter (unique targets: TensorRT leaves duplicates undefined)
  const perm = (n) => {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = int(0, i);
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  };
  const rowsOfPerms = (rows, n, k) => Array.from({ length: rows }, () => perm(n).slice(0, k)).flat();
  add('scatter', 'element.axis1', { mode: 'element', axis: 1 }, [t('float32', [3, 5]), v('int64', [3, 2], rowsOfPerms(3, 5, 2)), t('float32', [3, 2])]);
  {
    // axis 0: column j of the indices is a permutation slice of the rows.
    const cols = Array.from({ length: 4 }, () => perm(3).slice(0, 2));
    const idx = [0, 1].flatMap((r) => cols.map((c) => c[r]));
    add('scatter', 'element.axis0', { mode: 'element', axis: 0 }, [t('int64', [3, 4], -9, 9), v('int32', [2, 4], idx), t('int64', [2, 4], -9, 9)]);
  }
  add('scatter', 'nd.rows', { mode: 'nd', axis: 0 }, [t('float16', [4, 3]), v('int64', [2, 1], perm(4).slice(0, 2)), t('float16', [2, 3])]);
  {
    const cells = perm(12).slice(0, 5);
    add('scatter', 'nd.cells', { mode: 'nd', axis: 0 }, [t('int32', [3, 4], -9, 9), v('int32', [5, 2], cells.flatMap((c) => [Math.floor(c / 4), c % 4])), t('int32', [5], -9, 9)]);
  }
  add('scatter', 'element.bool', { mode: 'element', axis: 0 }, [t('bool', [4]), v('int64', [2], perm(4).slice(0, 2)), t('bool', [2])]);

  // reduce
  for (const op of ['sum', 'prod', 'max', 'min', 'avg']) {
    for (const d of ['float32', 'float16', 'bfloat16', 'int32', 'int64', 'int8', 'uint8']) {
      const lo = op === 'prod' ? (INTS.includes(d) ? -3 : 0.5) : -20;
      const hi = op === 'prod' ? (INTS.includes(d) ? 3 : 1.5) : 20;
      add('reduce', `${op}.${d}.axes02`, { op, axes: [0, 2], keepDims: false }, [t(d, [2, 3, 4], lo, hi)]);
      add('reduce', `${op}.${d}.last.keep`, { op, axes: [2], keepDims: true }, [t(d, [2, 3, 4], lo, hi)]);
    }
  }
  add('reduce', 'sum.all', { op: 'sum', axes: [0, 1], keepDims: false }, [t('float32', [3, 5])]);
  // A global pool over channels-last: height and width walked as one axis of 12, 16 apart.
  add('reduce', 'avg.hw-of-nhwc.float16', { op: 'avg', axes: [1, 2], keepDims: true }, [t('float16', [2, 3, 4, 16])]);
  add('reduce', 'avg.none', { op: 'avg', axes: [], keepDims: false }, [t('float32', [3, 2])]);
  add('reduce', 'max.empty-outer', { op: 'max', axes: [1], keepDims: true }, [t('float32', [0, 3])]);

  // softmax
  for (const d of FLOATS) {
    add('softmax', `last.${d}`, { axis: 2 }, [t(d, [2, 3, 5], -5, 5)]);
    add('softmax', `first.${d}`, { axis: 0 }, [t(d, [4, 3], -5, 5)]);
  }
  add('softmax', 'size1', { axis: 1 }, [t('float32', [3, 1])]);

  // shape
  for (const s of [[2, 3, 4], [0, 5], [7], []]) add('shape', `rank${s.length}`, {}, [t('float32', s)]);

  // fill
  add('fill', 'int64.static', { dims: [2, 3], alpha: 5, beta: [10, -1], dtype: 'int64' }, []);
  add('fill', 'int32.static', { dims: [4], alpha: -2, beta: [3], dtype: 'int32' }, []);
  add('fill', 'float32.static', { dims: [3, 2], alpha: 0.5, beta: [0.25, -1.5], dtype: 'float32' }, []);
  add('fill', 'float16.static', { dims: [5], alpha: 1, beta: [0.1], dtype: 'float16' }, []);
  add('fill', 'int64.inputs', { dims: [1], alpha: 0, beta: [1], dtype: 'int64' }, [i64([3, 2]), v('int64', [], [100]), i64([-7, 2])]);
  add('fill', 'float32.float-inputs', { dims: [1], alpha: 0, beta: [1], dtype: 'float32' }, [i64([4]), v('float32', [], [0.5]), v('float32', [1], [0.125])]);
  add('fill', 'int64.float-alpha', { dims: [3], alpha: 0, beta: [1], dtype: 'int64' }, [null, v('float32', [], [2.5]), v('float32', [1], [1.25])]);
  add('fill', 'empty', { dims: [0, 2], alpha: 0, beta: [1, 1], dtype: 'float32' }, []);

  // select
  for (const d of ALL) add('select', d, {}, [t('bool', [2, 1, 4]), t(d, [1, 3, 4], -50, 50), t(d, [2, 3, 1], -50, 50)]);
  add('select', 'empty', {}, [t('bool', [0, 2]), t('float32', [0, 2]), t('float32', [1, 2])]);

  // convolution / deconvolution
  const conv = (o) => ({
    nbOutputMaps: o.k,
    kernelSize: o.ks,
    stride: o.stride ?? o.ks.map(() => 1),
    prePadding: o.pre ?? o.ks.map(() => 0),
    postPadding: o.post ?? o.pre ?? o.ks.map(() => 0),
    dilation: o.dil ?? o.ks.map(() => 1),
    groups: o.groups ?? 1,
    kernel: o.kernel,
    bias: o.bias ?? null,
  });
  const convCase = (kind, name, x, o, wshape, dtype = x.dtype) => {
    add(kind, name, conv({ ...o, kernel: t(o.kdtype ?? dtype, wshape, -0.5, 0.5), bias: o.hasBias ? t(o.kdtype ?? dtype, [o.k]) : null }), [x]);
  };
  convCase('convolution', '2d.basic', t('float32', [1, 2, 5, 5]), { k: 3, ks: [3, 3], hasBias: true }, [3, 2, 3, 3]);
  convCase('convolution', '2d.pad-stride-dil', t('float32', [2, 2, 7, 6]), { k: 2, ks: [3, 2], stride: [2, 1], pre: [1, 1], dil: [2, 1] }, [2, 2, 3, 2]);
  convCase('convolution', '2d.asym-pad', t('float32', [1, 1, 4, 4]), { k: 2, ks: [2, 2], pre: [1, 0], post: [0, 1], hasBias: true }, [2, 1, 2, 2]);
  convCase('convolution', '2d.groups', t('float32', [1, 4, 5, 5]), { k: 6, ks: [3, 3], groups: 2, pre: [1, 1] }, [6, 2, 3, 3]);
  convCase('convolution', '1d', t('float32', [2, 3, 8]), { k: 2, ks: [3], stride: [2], hasBias: true }, [2, 3, 3]);
  convCase('convolution', '3d', t('float32', [1, 2, 3, 4, 4]), { k: 2, ks: [2, 3, 3], pre: [0, 1, 1] }, [2, 2, 2, 3, 3]);
  convCase('convolution', '2d.float16', t('float16', [1, 2, 5, 5]), { k: 2, ks: [3, 3], hasBias: true }, [2, 2, 3, 3]);
  convCase('convolution', '2d.bfloat16.f32-weights', t('bfloat16', [1, 2, 4, 4]), { k: 2, ks: [3, 3], hasBias: true, kdtype: 'float32' }, [2, 2, 3, 3]);
  add('convolution', '2d.kernel-input', conv({ k: 2, ks: [2, 2], kernel: t('float32', [0]) }), [t('float32', [1, 3, 4, 4]), t('float32', [2, 3, 2, 2]), t('float32', [2])]);
  // Channels-last ([N, H, W, C], kernel [K, 1, 1, C]) 1×1 stride 1: a cuBLASLt GEMM over the
  // pixels with the bias, ReLU and residual (input 3) in its epilogue and its candidates timed.
  add('convolution', '2d.nhwc.1x1.gemm.float16', { ...conv({ k: 24, ks: [1, 1], kernel: t('float16', [24, 1, 1, 16], -0.5, 0.5), bias: t('float16', [24]) }), channelsLast: true, activation: 'relu' }, [t('float16', [2, 5, 3, 16])]);
  add('convolution', '2d.nhwc.1x1.gemm.residual.bfloat16', { ...conv({ k: 16, ks: [1, 1], kernel: t('bfloat16', [16, 1, 1, 8], -0.5, 0.5), bias: t('bfloat16', [16]) }), channelsLast: true, activation: 'relu' }, [t('bfloat16', [1, 4, 4, 8]), null, null, t('bfloat16', [1, 4, 4, 16])]);
  add('convolution', '2d.nhwc.3x3.float16', { ...conv({ k: 8, ks: [3, 3], pre: [1, 1], kernel: t('float16', [8, 3, 3, 8], -0.5, 0.5), bias: t('float16', [8]) }), channelsLast: true }, [t('float16', [1, 5, 6, 8])]);
  // Depthwise, channels-last (groups = C = K; the weight stored [K, kh, kw, 1]): the generated kernel, every vector width.
  const depthwise = (o, x, dtype = x.dtype) => {
    const c = x.shape[3];
    return { ...conv({ k: c, ks: o.ks, groups: c, stride: o.stride, pre: o.pre, post: o.post, dil: o.dil, kernel: t(dtype, [c, ...o.ks, 1], -0.5, 0.5), bias: o.bias ? t(dtype, [c]) : null }), channelsLast: true, ...(o.relu ? { activation: 'relu' } : {}) };
  };
  add('convolution', '2d.nhwc.depthwise.3x3.relu.float16', depthwise({ ks: [3, 3], pre: [1, 1], bias: true, relu: true }, t('float16', [2, 7, 9, 16])), [t('float16', [2, 7, 9, 16])]);
  add('convolution', '2d.nhwc.depthwise.7x7.float32', depthwise({ ks: [7, 7], pre: [3, 3], bias: true }, t('float32', [1, 10, 11, 8])), [t('float32', [1, 10, 11, 8])]);
  add('convolution', '2d.nhwc.depthwise.5x5.stride2.bfloat16', depthwise({ ks: [5, 5], stride: [2, 2], pre: [2, 2], bias: true }, t('bfloat16', [2, 9, 8, 12])), [t('bfloat16', [2, 9, 8, 12])]);
  add('convolution', '2d.nhwc.depthwise.dilated.asym-pad.3-channels.float32', depthwise({ ks: [3, 2], dil: [2, 3], pre: [2, 1], post: [1, 2] }, t('float32', [1, 6, 7, 3])), [t('float32', [1, 6, 7, 3])]);
  add('convolution', '2d.nhwc.depthwise.residual.relu.float16', depthwise({ ks: [3, 3], pre: [1, 1], bias: true, relu: true }, t('float16', [1, 5, 3, 6])), [t('float16', [1, 5, 3, 6]), null, null, t('float16', [1, 5, 3, 6])]);
  convCase('deconvolution', '2d.stride2', t('float32', [1, 2, 3, 3]), { k: 3, ks: [3, 3], stride: [2, 2], pre: [1, 1], hasBias: true }, [2, 3, 3, 3]);
  convCase('deconvolution', '2d.groups', t('float32', [2, 4, 3, 2]), { k: 2, ks: [2, 2], groups: 2 }, [4, 1, 2, 2]);
  convCase('deconvolution', '1d', t('float32', [1, 2, 5]), { k: 3, ks: [3], stride: [3], dil: [1] }, [2, 3, 3]);
  convCase('deconvolution', '2d.float16', t('float16', [1, 2, 3, 3]), { k: 2, ks: [2, 2], stride: [2, 2] }, [2, 2, 2, 2]);

  // pooling
  const pool = (type, o) => ({
    type,
    window: o.w,
    stride: o.s ?? o.w,
    prePadding: o.pre ?? o.w.map(() => 0),
    postPadding: o.post ?? o.pre ?? o.w.map(() => 0),
    paddingMode: o.up ? 'explicit_round_up' : 'explicit_round_down',
    averageCountExcludesPadding: o.exclude ?? true,
    ...(o.last ? { channelsLast: true } : {}),
  });
  for (const type of ['max', 'average']) {
    add('pooling', `${type}.2d`, pool(type, { w: [2, 2] }), [t('float32', [1, 2, 4, 5])]);
    add('pooling', `${type}.2d.pad.up`, pool(type, { w: [3, 3], s: [2, 2], pre: [1, 1], up: true }), [t('float32', [2, 1, 6, 5])]);
    add('pooling', `${type}.2d.pad.include`, pool(type, { w: [3, 2], s: [1, 2], pre: [1, 0], post: [1, 1], exclude: false }), [t('float16', [1, 2, 4, 4])]);
    add('pooling', `${type}.1d`, pool(type, { w: [3], s: [2] }), [t('bfloat16', [2, 2, 7])]);
    add('pooling', `${type}.3d`, pool(type, { w: [2, 2, 2] }), [t('float32', [1, 1, 4, 4, 4])]);
  }
  add('pooling', 'max.int8', pool('max', { w: [2, 2], pre: [1, 1] }), [t('int8', [1, 2, 3, 3], -100, 100)]);
  add('pooling', 'average.int32', pool('average', { w: [2, 2] }), [t('int32', [1, 1, 4, 4], -100, 100)]);
  // Channels-last ([N, H, W, C]): 8 channels a thread as one access (C a multiple of 8), or one at a time.
  add('pooling', 'max.nhwc.float16', pool('max', { w: [3, 3], s: [2, 2], pre: [1, 1], last: true }), [t('float16', [2, 7, 6, 16])]);
  add('pooling', 'average.nhwc.float32', pool('average', { w: [2, 3], s: [1, 2], pre: [1, 1], exclude: false, last: true }), [t('float32', [1, 5, 5, 24])]);
  add('pooling', 'max.nhwc.int8', pool('max', { w: [2, 2], last: true }), [t('int8', [1, 4, 4, 8], -100, 100)]);
  add('pooling', 'average.nhwc.exclude.float16', pool('average', { w: [3, 3], s: [2, 2], pre: [1, 1], post: [2, 1], last: true }), [t('float16', [2, 5, 6, 8])]);
  // A window of more than 16 positions: the general kernel, 8 channels as one access.
  add('pooling', 'max.nhwc.5x5', pool('max', { w: [5, 5], s: [1, 1], pre: [2, 2], last: true }), [t('float16', [1, 6, 5, 8])]);
  add('pooling', 'max.nhwc.c12', pool('max', { w: [2, 2], s: [1, 1], last: true }), [t('bfloat16', [1, 3, 4, 12])]);

  // normalization
  for (const d of FLOATS) {
    add('normalization', `layer.${d}`, { axes: [2], epsilon: 1e-5, nbGroups: 1 }, [t(d, [2, 3, 8]), t(d, [1, 1, 8]), t(d, [1, 1, 8])]);
  }
  add('normalization', 'instance', { axes: [2, 3], epsilon: 1e-5, nbGroups: 1 }, [t('float32', [2, 3, 4, 4]), t('float32', [1, 3, 1, 1]), t('float32', [1, 3, 1, 1])]);
  add('normalization', 'group.per-channel', { axes: [2, 3], epsilon: 1e-5, nbGroups: 2 }, [t('float32', [2, 4, 3, 3]), t('float32', [1, 4, 1, 1]), t('float32', [1, 4, 1, 1])]);
  add('normalization', 'group.per-group', { axes: [2, 3], epsilon: 1e-5, nbGroups: 2 }, [t('float32', [2, 4, 3, 3]), t('float32', [1, 2, 1, 1]), t('float32', [1, 2, 1, 1])]);
  add('normalization', 'middle-axis', { axes: [1], epsilon: 1e-3, nbGroups: 1 }, [t('float32', [2, 5, 3]), t('float32', [1, 5, 1]), t('float32', [1, 5, 3])]);

  // resize
  const resize = (o) => ({ mode: o.mode, outputDims: o.out, coordinateTransformation: o.ct ?? 'half_pixel', selector: o.sel ?? 'formula', nearestRounding: o.round ?? 'floor' });
  for (const ct of ['half_pixel', 'asymmetric', 'align_corners']) {
    for (const round of ['half_up', 'half_down', 'floor', 'ceil']) {
      add('resize', `nearest.${ct}.${round}`, resize({ mode: 'nearest', out: [1, 1, 7, 3], ct, round }), [t('float32', [1, 1, 3, 5])]);
    }
    add('resize', `linear.${ct}`, resize({ mode: 'linear', out: [1, 2, 6, 3], ct }), [t('float32', [1, 2, 3, 5])]);
  }
  add('resize', 'linear.upper-one', resize({ mode: 'linear', out: [2, 1], sel: 'upper' }), [t('float32', [2, 4])]);
  add('resize', 'linear.float16', resize({ mode: 'linear', out: [1, 3, 8] }), [t('float16', [1, 3, 4])]);
  add('resize', 'nearest.int64', resize({ mode: 'nearest', out: [4, 6] }), [t('int64', [2, 3], -9, 9)]);
  add('resize', 'linear.int32', resize({ mode: 'linear', out: [5], ct: 'align_corners' }), [t('int32', [3], -90, 90)]);
  add('resize', 'dynamic-dims', resize({ mode: 'nearest', out: [1, 1] }), [t('float32', [2, 2]), i64([4, 3])]);

  // topk
  for (const op of ['max', 'min']) {
    for (const d of ['float32', 'float16', 'int32', 'int64', 'uint8']) {
      add('topk', `${op}.${d}.last`, { op, k: 3, axis: 1, indicesType: 'int32' }, [t(d, [2, 6], -5, 5)]);
    }
    add('topk', `${op}.axis0.int64-indices`, { op, k: 2, axis: 0, indicesType: 'int64' }, [t('float32', [4, 3])]);
    add('topk', `${op}.nan`, { op, k: 4, axis: 0, indicesType: 'int32' }, [v('float32', [6], [1, NaN, 3, -Infinity, NaN, 3])]);
    add('topk', `${op}.k0`, { op, k: 0, axis: 0, indicesType: 'int32' }, [t('float32', [3])]);
  }

  // cumulative
  for (const d of ['float32', 'float16', 'int32', 'int64', 'bfloat16']) {
    for (const [exclusive, reverse] of [[false, false], [true, false], [false, true], [true, true]]) {
      add('cumulative', `${d}.${exclusive ? 'ex' : 'in'}.${reverse ? 'rev' : 'fwd'}`, { op: 'sum', axis: 1, exclusive, reverse }, [t(d, [2, 5, 3], -9, 9)]);
    }
  }
  add('cumulative', 'axis0', { op: 'sum', axis: 0, exclusive: false, reverse: false }, [t('float32', [4])]);
  add('cumulative', 'empty', { op: 'sum', axis: 1, exclusive: false, reverse: false }, [t('float32', [2, 0])]);
  // Size-0 and size-1 dims.
  add('cast', 'empty', { to: 'int64' }, [t('float16', [3, 0])]);
  add('scatter', 'nd.no-updates', { mode: 'nd', axis: 0 }, [t('float32', [3, 2]), v('int64', [0, 1], []), t('float32', [0, 2])]);
  add('reduce', 'sum.empty-axis', { op: 'sum', axes: [1], keepDims: false }, [t('float32', [3, 0])]);
  add('reduce', 'prod.size1-axis', { op: 'prod', axes: [1], keepDims: true }, [t('int32', [3, 1], -9, 9)]);
  add('softmax', 'empty-outer', { axis: 1 }, [t('float32', [0, 4])]);
  add('normalization', 'empty-batch', { axes: [2], epsilon: 1e-5, nbGroups: 1 }, [t('float32', [0, 3, 4]), t('float32', [1, 1, 4]), t('float32', [1, 1, 4])]);
  add('resize', 'to-empty', resize({ mode: 'nearest', out: [0, 3] }), [t('float32', [2, 3])]);
  add('pooling', 'empty-batch', pool('max', { w: [2, 2] }), [t('float32', [0, 2, 4, 4])]);
  convCase('convolution', 'empty-batch', t('float32', [0, 2, 4, 4]), { k: 2, ks: [3, 3] }, [2, 2, 3, 3]);
  convCase('convolution', '1x1', t('float32', [1, 3, 1, 1]), { k: 2, ks: [1, 1], hasBias: true }, [2, 3, 1, 1]);
  convCase('deconvolution', '2d.bfloat16', t('bfloat16', [1, 2, 2, 2]), { k: 2, ks: [2, 2] }, [2, 2, 2, 2]);
  add('topk', 'empty-rows', { op: 'max', k: 2, axis: 1, indicesType: 'int32' }, [t('float32', [0, 5])]);
  add('topk', 'bfloat16', { op: 'min', k: 3, axis: 0, indicesType: 'int64' }, [t('bfloat16', [5, 2])]);
  add('shuffle', 'uint8.bfloat16-sized', { firstTranspose: [1, 0], zeroIsPlaceholder: false }, [t('uint8', [3, 4], 0, 255)]);
  add('cumulative', 'int8', { op: 'sum', axis: 0, exclusive: false, reverse: false }, [t('int8', [6], -100, 100)]);
  add('select', 'scalar', {}, [t('bool', []), t('int64', [], -9, 9), t('int64', [], -9, 9)]);

  // Negative axes (the converters normalize them, but a lowering takes either).
  add('reduce', 'negative-axis', { op: 'sum', axes: [-1], keepDims: false }, [t('float32', [2, 3])]);
  add('softmax', 'negative-axis', { axis: -2 }, [t('float32', [3, 4])]);
  add('cumulative', 'negative-axis', { op: 'sum', axis: -1, exclusive: false, reverse: false }, [t('int32', [2, 4], -9, 9)]);
  add('concat', 'negative-axis', { axis: -1 }, [t('float32', [2, 1]), t('float32', [2, 2])]);
  add('gather', 'negative-axis', { mode: 'default', axis: -1 }, [t('float32', [2, 4]), t('int64', [3], 0, 3)]);
  add('topk', 'negative-axis', { op: 'max', k: 2, axis: -1, indicesType: 'int64' }, [t('float32', [3, 4])]);

  // Long rows (lib/backends/cuda/layers/rows.ts): rows of at least 64 elements run one block
  // per row; the names say the row length (`rows.<what>.<length>`) around the threshold.
  const norm = (axes, eps = 1e-5) => ({ axes, epsilon: eps, nbGroups: 1 });
  for (const n of [1, 63, 64, 65, 768, 2048, 4099]) {
    add('reduce', `rows.sum.float32.${n}`, { op: 'sum', axes: [1], keepDims: false }, [t('float32', [3, n])]);
    add('softmax', `rows.float32.${n}`, { axis: 1 }, [t('float32', [2, n], -8, 8)]);
    add('normalization', `rows.float32.${n}`, norm([1]), [t('float32', [2, n], -3, 5), t('float32', [1, n]), t('float32', [1, n])]);
  }
  for (const op of ['sum', 'prod', 'max', 'min', 'avg']) {
    for (const d of ['float32', 'float16', 'bfloat16', 'int32', 'int64', 'int8', 'uint8']) {
      const [lo, hi] = op === 'prod' ? (INTS.includes(d) ? [1, 2] : [0.8, 1.25]) : [-20, 20];
      add('reduce', `rows.${op}.${d}.130`, { op, axes: [1], keepDims: true }, [t(d, [3, 130], lo, hi)]);
    }
  }
  add('reduce', 'rows.max.specials.200', { op: 'max', axes: [1], keepDims: false }, [
    v('float32', [3, 200], [...Array.from({ length: 199 }, () => uniform(-5, 5)), NaN, ...new Array(200).fill(-Infinity), ...Array.from({ length: 200 }, (_, i) => (i === 150 ? Infinity : -i))]),
  ]);
  add('reduce', 'rows.min.nan-first.100', { op: 'min', axes: [1], keepDims: false }, [v('float32', [1, 100], [NaN, ...Array.from({ length: 99 }, () => uniform(-5, 5))])]);
  add('reduce', 'rows.avg.middle-axis.300', { op: 'avg', axes: [1], keepDims: false }, [t('float32', [4, 300, 5])]);
  add('reduce', 'rows.sum.two-axes.280', { op: 'sum', axes: [1, 3], keepDims: true }, [t('float32', [3, 40, 5, 7])]);
  add('reduce', 'rows.max.int64.two-axes.96', { op: 'max', axes: [0, 2], keepDims: false }, [v('int64', [4, 3, 24], Array.from({ length: 288 }, (_, i) => BigInt(((i * 7919) % 1001) - 500) * 2n ** 40n))]);
  add('reduce', 'rows.sum.float16.2048', { op: 'sum', axes: [1], keepDims: false }, [t('float16', [2, 2048], 0, 1)]);
  add('softmax', 'rows.specials.96', { axis: 1 }, [
    v('float32', [3, 96], [
      ...Array.from({ length: 96 }, (_, i) => (i % 3 === 0 ? -Infinity : i === 50 ? 80 : uniform(-3, 3))),
      ...new Array(96).fill(-Infinity),
      ...Array.from({ length: 96 }, (_, i) => (i === 7 ? 3e38 : i === 8 ? 2e38 : -3e38)),
    ]),
  ]);
  add('softmax', 'rows.first-axis.300', { axis: 0 }, [t('float32', [300, 3], -5, 5)]);
  add('softmax', 'rows.middle-axis.128', { axis: 2 }, [t('float32', [2, 3, 128, 4], -5, 5)]);
  for (const d of ['float16', 'bfloat16']) add('softmax', `rows.${d}.1000`, { axis: 1 }, [t(d, [3, 1000], -8, 8)]);
  for (const d of ['float16', 'bfloat16']) {
    add('normalization', `rows.layer.${d}.768`, norm([2]), [t(d, [2, 2, 768]), t(d, [1, 1, 768]), t(d, [1, 1, 768])]);
  }
  add('normalization', 'rows.layer.fp16-scale.100', norm([1]), [t('float32', [3, 100]), t('float16', [1, 100]), t('float32', [1, 1])]);
  add('normalization', 'rows.instance.256', norm([2, 3]), [t('float32', [2, 3, 16, 16], 2, 9), t('float32', [1, 3, 1, 1]), t('float32', [1, 3, 1, 1])]);
  add('normalization', 'rows.group.256', { axes: [2, 3], epsilon: 1e-5, nbGroups: 2 }, [t('float32', [2, 8, 8, 8]), t('float32', [1, 8, 1, 1]), t('float32', [1, 2, 1, 1])]);
  add('normalization', 'rows.middle-axis.200', norm([1], 1e-3), [t('float32', [2, 200, 3]), t('float32', [1, 200, 1]), t('float32', [1, 200, 3])]);
  add('normalization', 'rows.constant.512', norm([1]), [v('float32', [2, 512], new Array(1024).fill(3.25)), t('float32', [1, 512]), t('float32', [1, 512])]);
  // One contiguous axis of at most 1024 runs one warp per row, the row in registers (the
  // `warp<E>` forms); up to 2048 too where chunks are at least 4 wide (2048: `warp64`); 1025
  // (chunks of 1) falls back to a block per row. 11 rows: a partly filled last block.
  for (const n of [1, 31, 32, 33, 100, 128, 512, 768, 1024, 1025, 2048]) {
    for (const d of ['float32', 'float16']) {
      add('softmax', `rows.warp.${d}.${n}`, { axis: 1 }, [t(d, [11, n], -8, 8)]);
      add('normalization', `rows.warp.${d}.${n}`, norm([1]), [t(d, [11, n], -3, 5), t(d, [1, n]), t(d, [1, n])]);
    }
    add('normalization', `rows.warp.broadcast.${n}`, norm([2]), [t('float32', [3, 2, n], -3, 5), t('float32', [1, 1, 1]), t('float32', [1, 2, 1])]);
  }
  // RMS normalization (the cuda backend's RMSNorm pass, no mean subtracted) in every form:
  // warp (40, 768, Llama's 2048), block (2050: chunks of 2 are too narrow for 64 a lane) and a
  // thread a row (a strided middle axis). Inputs centred off zero, so a kernel that subtracted
  // the mean would fail.
  const rms = { axes: [1], epsilon: 1e-5, nbGroups: 1, rms: true };
  for (const d of ['float32', 'float16', 'bfloat16']) {
    for (const n of [40, 768, 2048, 2050]) add('normalization', `rows.rms.${d}.${n}`, rms, [t(d, [5, n], -1, 3), t(d, [1, n]), t(d, [1, 1])]);
  }
  add('normalization', 'rows.rms.middle-axis.40', rms, [t('float32', [2, 40, 3], -1, 3), t('float32', [1, 40, 1]), t('float32', [1, 1, 1])]);
  return cases;
}

/** Every kernel key met in this process and its source (see planCase). */
const KEY_SOURCES = new Map();

/** Per-dtype comparison tolerances (floats compute in fp32 and round once into their dtype). */
const TOLERANCE = {
  float32: { rtol: 1e-4, atol: 1e-5 },
  float16: { rtol: 2e-3, atol: 2e-3 },
  bfloat16: { rtol: 1.6e-2, atol: 1.6e-2 },
};

/**
 * Lowers sample `c` onto `lib`'s GPU runtime: device buffers for its inputs, outputs, scratch
 * and weights (all pushed to `owned` for disposal), its kernels compiled once per key into
 * `modules`, and a GpuPlan of its steps (null when it has none). `launched` names each kernel
 * launch (key, grid, block), so a failure says which form of a kernel ran.
 */
async function planCase(lib, internals, modules, c, owned) {
  const { lowerLayer, executeLayer, readNumbers } = internals;
  const { Tensor, DeviceTensor, toDevice, compileModule, GpuPlan } = lib;
  const inputsIds = c.inputs.map((x, i) => (x ? i : null));
  const layer = { index: 0, name: c.name, params: c.params, inputs: inputsIds, outputs: [c.inputs.length] };
  const expected = executeLayer(layer, c.inputs);
  const full = { ...layer, outputs: expected.map((_, i) => c.inputs.length + i) };
  const buffers = [];
  const tensorBuffer = async (host) => {
    const d = await toDevice(host.size === 0 ? Tensor.from('uint8', [1], [0]) : host);
    owned.push(d);
    buffers.push(d);
    return buffers.length - 1;
  };
  for (const x of c.inputs) await tensorBuffer(x ?? Tensor.from('uint8', [1], [0]));
  for (const e of expected) {
    const d = await DeviceTensor.allocate(e.dtype, e.size === 0 ? [1] : e.shape);
    owned.push(d);
    buffers.push(d);
  }
  const pending = [];
  let statusAt;
  const steps = lowerLayer({
    layer: full,
    inputs: c.inputs.map((x, i) => (x ? { dtype: x.dtype, shape: x.shape, at: { buffer: i } } : null)),
    outputs: expected.map((e, i) => ({ dtype: e.dtype, shape: e.shape, at: { buffer: c.inputs.length + i } })),
    values: c.inputs.map((x) => (x && (x.dtype === 'int32' || x.dtype === 'int64') && x.rank <= 1 && x.size <= 64 ? Array.from(readNumbers(x)) : undefined)),
    scratch: (bytes) => {
      buffers.push(null);
      const at = buffers.length - 1;
      pending.push(DeviceTensor.allocate('uint8', [Math.max(1, bytes)]).then((d) => ((buffers[at] = d), owned.push(d))));
      return { buffer: at };
    },
    weight: (w) => {
      buffers.push(null);
      const at = buffers.length - 1;
      pending.push(toDevice(w.size === 0 ? Tensor.from('uint8', [1], [0]) : w).then((d) => ((buffers[at] = d), owned.push(d))));
      return { buffer: at };
    },
    // One zeroed status word for the layer's run-time checks (index kernels report there).
    check: () => {
      if (statusAt === undefined) {
        buffers.push(null);
        statusAt = buffers.length - 1;
        const at = statusAt;
        pending.push(toDevice(Tensor.from('int32', [1], [0])).then((d) => ((buffers[at] = d), owned.push(d))));
      }
      return [{ pointer: { buffer: statusAt } }, { scalar: 'u32', value: 1 }];
    },
  });
  await Promise.all(pending);
  const used = [];
  const planSteps = [];
  const launched = [];
  for (const s of steps) {
    if (s.kind !== 'launch') {
      planSteps.push(s);
      continue;
    }
    launched.push(`${s.kernel.key} grid [${s.grid.join(',')}] block [${s.block.join(',')}]`);
    // A key names one source (engines and this check load modules by key): two sources under
    // one key would run the first one's code with the second one's arguments.
    const known = KEY_SOURCES.get(s.kernel.key);
    if (known !== undefined && known !== s.kernel.source) throw new Error(`kernel key "${s.kernel.key}" names two different sources (case ${c.name})`);
    KEY_SOURCES.set(s.kernel.key, s.kernel.source);
    let mod = modules.get(s.kernel.key);
    if (!mod) {
      mod = await compileModule(s.kernel.source, [s.kernel.entry], 0, { name: `${s.kernel.key}.cu` });
      modules.set(s.kernel.key, mod);
    }
    if (!used.includes(mod)) used.push(mod);
    const { kernel, ...rest } = s;
    planSteps.push({ ...rest, module: used.indexOf(mod), kernel: 0 });
  }
  const plan = planSteps.length > 0 ? await GpuPlan.create({ steps: planSteps }, buffers, used) : null;
  return { plan, expected, outputs: expected.map((_, i) => buffers[c.inputs.length + i]), launched, status: statusAt === undefined ? null : buffers[statusAt] };
}

/**
 * Compares the outputs of a run with the expectations; returns the first mismatch of each
 * output as a failure record (case, output, element, got, expected, the launches) and folds
 * the errors into `stats`.
 */
async function compareOutputs(internals, c, planned, stats) {
  const { readNumbers } = internals;
  const failures = [];
  // Every sample's indices are in range (the reference ran it): a reported index is a kernel bug.
  const status = planned.status === null ? 0 : Number(readNumbers(await planned.status.toHost())[0]);
  if (status !== 0) failures.push({ case: c.name, output: 'status', got: String(status), expected: '0', launched: planned.launched });
  for (let i = 0; i < planned.expected.length; i++) {
    const e = planned.expected[i];
    if (e.size === 0) continue;
    const got = await planned.outputs[i].toHost();
    const a = readNumbers(got);
    const x = readNumbers(e);
    const tol = TOLERANCE[e.dtype];
    for (let j = 0; j < x.length; j++) {
      const p = Number(a[j]);
      const q = Number(x[j]);
      if (p === q || (Number.isNaN(p) && Number.isNaN(q))) continue;
      const abs = Math.abs(p - q);
      stats.maxAbs = Math.max(stats.maxAbs, abs);
      stats.maxRel = Math.max(stats.maxRel, abs / Math.max(Math.abs(q), 1e-30));
      if (!tol || !Number.isFinite(q) || !(abs <= tol.atol + tol.rtol * Math.abs(q))) {
        failures.push({ case: c.name, output: i, element: j, got: String(a[j]), expected: String(x[j]), shape: e.shape, launched: planned.launched });
        break;
      }
    }
  }
  return failures;
}

/**
 * Runs every sample through lowering → NVRTC → GpuPlan with `lib`'s GPU runtime and compares
 * with `internals.executeLayer`; `only` (a substring of case names) narrows the run.
 */
/**
 * Layer kinds the cuda build spells out before lowering (the spell-out-quantization pass):
 * their lowerings refuse, so they have no samples; the layers they become have theirs.
 */
const SPELLED_OUT_AT_BUILD = new Set(['quantize', 'dequantize']);

/** Layer kinds the cuda build refuses (a nonzero's or nms's output size is known only after a run; plans are made before): no samples. */
const REFUSED_AT_BUILD = new Set(['nonzero', 'nms', 'unique']);

async function runCheck(lib, internals, only) {
  const { LOWERINGS, LAYER_KINDS } = internals;
  // CHECK_SKIP: cases whose names contain it are left out (a case that hangs, while the rest is checked).
  const skip = process.env.CHECK_SKIP;
  const cases = buildCases(lib.Tensor).filter((c) => (!only || c.name.includes(only)) && (!skip || !c.name.includes(skip)));
  const modules = new Map(); // kernel key -> GpuModule
  const perKind = {};
  const failures = [];
  for (const kind of LAYER_KINDS) {
    perKind[kind] = { cases: 0, maxAbs: 0, maxRel: 0 };
    if (!LOWERINGS[kind]) failures.push({ kind, error: 'no lowering' });
    if (!only && !SPELLED_OUT_AT_BUILD.has(kind) && !REFUSED_AT_BUILD.has(kind) && !cases.some((c) => c.kind === kind)) failures.push({ kind, error: 'no sample cases' });
  }
  // CHECK_PROGRESS=1: each case's name on stderr as it starts. A case that has not finished
  // after CHECK_CASE_TIMEOUT_S seconds (default 60) ends the check with its name: a plan that
  // never completes leaves the event loop free, so the timer fires.
  const progress = process.env.CHECK_PROGRESS === '1';
  const caseTimeoutMs = Number(process.env.CHECK_CASE_TIMEOUT_S || 60) * 1000;
  for (const c of cases) {
    if (progress) process.stderr.write(`${c.name}\n`);
    const watchdog = setTimeout(() => {
      console.log(JSON.stringify({ failure: { case: c.name, error: `did not finish within ${caseTimeoutMs / 1000} s` } }));
      console.log(JSON.stringify({ check: 'cuda-lowering', ok: false, hung: c.name }));
      process.exit(1);
    }, caseTimeoutMs);
    const stats = perKind[c.kind];
    stats.cases++;
    const owned = [];
    try {
      const planned = await planCase(lib, internals, modules, c, owned);
      if (planned.plan) {
        await planned.plan.run();
        planned.plan.dispose();
      }
      failures.push(...(await compareOutputs(internals, c, planned, stats)));
    } catch (error) {
      failures.push({ case: c.name, error: `${error.code ?? ''} ${error.message}`.slice(0, 2000) });
    } finally {
      clearTimeout(watchdog);
      for (const d of owned) d.dispose();
    }
  }
  for (const [kind, s] of Object.entries(perKind)) console.log(JSON.stringify({ kind, ...s }));
  for (const f of failures) console.log(JSON.stringify({ failure: f }));
  for (const m of modules.values()) m.dispose();
  if (failures.length > 0) throw new Error(`${failures.length} failure(s) of ${cases.length} cases (see the lines above)`);
  return { cases: cases.length, kernels: modules.size };
}

/** Layers timed by {@link timeRows} (the row layers of transformer profiles, a repeat-kv slice, a stem max pool): [name, kind, params, input shapes]. */
const TIMED = [
  ['layernorm 1024x768', 'normalization', { axes: [1], epsilon: 1e-5, nbGroups: 1 }, [[1024, 768], [1, 768], [1, 768]]],
  ['softmax 8x12x128x128', 'softmax', { axis: 3 }, [[8, 12, 128, 128]]],
  ['reduce-mean 512x2048', 'reduce', { op: 'avg', axes: [1], keepDims: true }, [[512, 2048]]],
  // GQA's repeat-kv (expand by a stride-0 slice) and ResNet's stem max pool.
  ['slice expand 512x4x(1->4)x128', 'slice', { start: [0, 0, 0, 0, 0], size: [1, 512, 4, 4, 128], stride: [1, 1, 1, 0, 1], mode: 'strict_bounds' }, [[1, 512, 4, 1, 128]]],
  ['maxpool 3x3/2 8x64x112x112', 'pooling', { type: 'max', window: [3, 3], stride: [2, 2], prePadding: [1, 1], postPadding: [1, 1], paddingMode: 'explicit_round_down', averageCountExcludesPadding: true }, [[8, 64, 112, 112]]],
];

/**
 * Each of `timed` (float32, fixed random inputs) checked against the reference backend, then
 * run `repeats` times in one call after a warm-up: prints µs per layer and the bandwidth its
 * input and output bytes imply. Prints only; a mismatch throws like {@link runCheck}.
 */
async function timeRows(lib, internals, timed = TIMED, repeats = 200) {
  const random = rng(29);
  const modules = new Map();
  const failures = [];
  const report = [];
  for (const [name, kind, params, shapes] of timed) {
    const inputs = shapes.map((shape) => lib.Tensor.from('float32', shape, Array.from({ length: size(shape) }, () => 4 * random() - 2)));
    const c = { kind, name: `timed/${name}`, params: { kind, ...params }, inputs };
    const owned = [];
    try {
      const planned = await planCase(lib, internals, modules, c, owned);
      await planned.plan.run();
      const caseFailures = await compareOutputs(internals, c, planned, { maxAbs: 0, maxRel: 0 });
      failures.push(...caseFailures);
      const perLayer = async (run) => {
        const start = process.hrtime.bigint();
        await run();
        return Number(process.hrtime.bigint() - start) / 1e3 / repeats;
      };
      const us = await perLayer(() => planned.plan.run(repeats));
      // A CUDA graph replay leaves out the host's per-launch cost: closer to the kernel's own time.
      let graphUs = null;
      if (typeof planned.plan.capture === 'function') {
        await planned.plan.capture();
        graphUs = await perLayer(() => planned.plan.replay(repeats));
      }
      planned.plan.dispose();
      const bytes = 4 * (shapes.reduce((a, sh) => a + size(sh), 0) + planned.expected.reduce((a, e) => a + e.size, 0));
      const best = graphUs ?? us;
      const line = {
        timed: name,
        usPerLayer: Number(us.toFixed(2)),
        usPerLayerGraph: graphUs === null ? null : Number(graphUs.toFixed(2)),
        gbPerS: Number((bytes / best / 1e3).toFixed(1)),
        launched: planned.launched,
        ok: caseFailures.length === 0,
      };
      report.push(line);
      console.log(JSON.stringify(line));
    } catch (error) {
      failures.push({ case: c.name, error: `${error.code ?? ''} ${error.message}`.slice(0, 2000) });
    } finally {
      for (const d of owned) d.dispose();
    }
  }
  for (const f of failures) console.log(JSON.stringify({ failure: f }));
  for (const m of modules.values()) m.dispose();
  if (failures.length > 0) throw new Error(`${failures.length} failure(s) of ${timed.length} timed row layers (see the lines above)`);
  return report;
}

module.exports = { buildCases, runCheck, timeRows, TOLERANCE, SPELLED_OUT_AT_BUILD, REFUSED_AT_BUILD };

if (require.main === module) {
  // eslint-disable-next-line global-require
  const { gpuCheck } = require('./check-util');
  const dist = path.join(__dirname, '..', '..', 'dist');
  const internals = {
    ...require(path.join(dist, 'backends', 'cuda', 'layers', 'index.js')),
    ...require(path.join(dist, 'network', 'evaluate', 'index.js')),
    ...require(path.join(dist, 'network', 'layers.js')),
    ...require(path.join(dist, 'kernels', 'access.js')),
  };
  // Optional argument: a substring of the case names to run (e.g. `softmax/`).
  gpuCheck('cuda-lowering', async (lib) => {
    const summary = await runCheck(lib, internals, process.argv[2]);
    // The timings print only: the lead reads them (no threshold to pass).
    const timed = process.argv[2] ? [] : await timeRows(lib, internals);
    return { ...summary, timed: timed.length };
  });
}
