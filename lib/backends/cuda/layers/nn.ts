/**
 * Reductions and per-row layers (IReduceLayer, ISoftMaxLayer, INormalizationLayer,
 * ICumulativeLayer) as row kernels, and IPoolingLayer as one thread per output element.
 * Floats accumulate in fp32 (fp16/bf16 load into fp32); integers in wrapping int64.
 */
import type { ReduceOp, TrtDType } from '../../../network';
import { axisOf, checkRank, copyAll, denseStrides, dims8, f32, i32, i64, input, kernelSource, launch, output, paramsOf, ptr, u32, u64, unsupported, volume } from './kernel';
import { divisionMagic, magicQuotient } from './map';
import { BYTES, DTYPES, isFloatDType, storeDouble } from './prelude';
import { cooperative, innerAt, outerAt, outerOffsets, rowArgs, rowKernel, rowLaunch, rowParams, splitRows, warpForm, warpRowKernel, warpRowLaunch, type RowCombine, type RowSplit, type WarpCode, type WarpForm } from './rows';
import { prologueAt, prologueKey, prologueLambda, prologueNames, prologueParams, prologueRows, rowPrologue, type RowPrologue } from './prologue';
import type { LayerLowering, LoweredStep } from './types';

type Reduction = { init: string; step: string; combine: string; final: string };

// `step` folds an element `v` into `acc`; `combine` merges two partial results `a` and `b`.
const NAN_MAX = '(b > a || f_isnan(b)) ? b : a';
const NAN_MIN = '(b < a || f_isnan(b)) ? b : a';
const REDUCE_FLOAT: Record<ReduceOp, Reduction> = {
  sum: { init: '0.0f', step: 'acc + v', combine: 'a + b', final: 'acc' },
  avg: { init: '0.0f', step: 'acc + v', combine: 'a + b', final: 'acc / (float)inner' },
  prod: { init: '1.0f', step: 'acc * v', combine: 'a * b', final: 'acc' },
  max: { init: '-f_inf()', step: '(v > acc || f_isnan(v)) ? v : acc', combine: NAN_MAX, final: 'acc' },
  min: { init: 'f_inf()', step: '(v < acc || f_isnan(v)) ? v : acc', combine: NAN_MIN, final: 'acc' },
};

const REDUCE_INT: Record<ReduceOp, Reduction> = {
  sum: { init: '0', step: 'i_add(acc, v)', combine: 'i_add(a, b)', final: 'acc' },
  // The exact sum divided toward zero (an empty mean is 0, as NaN casts to 0).
  avg: { init: '0', step: 'i_add(acc, v)', combine: 'i_add(a, b)', final: 'inner == 0 ? 0 : acc / inner' },
  prod: { init: '1', step: 'i_mul(acc, v)', combine: 'i_mul(a, b)', final: 'acc' },
  max: { init: '(i64)0x8000000000000000ull', step: 'v > acc ? v : acc', combine: 'b > a ? b : a', final: 'acc' },
  min: { init: '(i64)0x7fffffffffffffffull', step: 'v < acc ? v : acc', combine: 'b < a ? b : a', final: 'acc' },
};

const SUM: RowCombine = { name: 'sum', type: 'float', combine: 'a + b', identity: '0.0f' };
const MAX: RowCombine = { name: 'max', type: 'float', combine: 'fmaxf(a, b)', identity: '-f_inf()' };

function reduceKernel(op: ReduceOp, dtype: TrtDType, coop: boolean, pro?: RowPrologue) {
  const c = DTYPES[dtype];
  const r = (c.compute === 'float' ? REDUCE_FLOAT : REDUCE_INT)[op];
  const all: RowCombine = { name: 'all', type: c.compute === 'float' ? 'float' : 'i64', combine: r.combine, identity: r.init };
  const key = pro ? `reduce.${op}.${dtype}.${prologueKey(pro)}` : `reduce.${op}.${dtype}`;
  const input = pro ? prologueParams(pro) : `const ${c.storage}* x`;
  const names = prologueNames(pro);
  const value = pro ? prologueAt(pro, 'j') : c.load(`x[base + ${innerAt('x')}]`);
  return rowKernel(key, coop, [all], (entry, k) => `
__device__ __forceinline__ ${c.compute} ${entry}_step(${c.compute} acc, ${c.compute} v) { return ${r.step}; }
extern "C" __global__ void ${entry}(${c.storage}* y, ${input}, ${rowParams(['x', ...names])}) {
  ${k.rows(`
    ${pro ? `${prologueRows(pro)}
    ${prologueLambda(pro)}` : `i64 base = ${outerAt('x')};`}
    ${c.compute} acc = ${r.init};
    ${k.each(` acc = ${entry}_step(acc, ${value}); `)}
    ${k.all(all, 'acc')}
    ${k.once(`y[o] = ${c.store(r.final)};`)}`)}
}`);
}

export const reduce: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'reduce');
  const x = input(ctx, 0);
  const out = output(ctx);
  const rank = x.shape.length;
  checkRank(ctx, rank);
  if (x.dtype === 'bool') unsupported(ctx, 'reduce does not take bool');
  const axes = [...new Set(p.axes.map((a) => axisOf(ctx, a, rank)))];
  if (axes.length === 0) {
    return copyAll(x, out);
  }
  const split = splitRows(x.shape, axes, [denseStrides(x.shape)]);
  const coop = cooperative(split);
  const taken = rowPrologue(ctx, axes, null);
  if (taken) {
    const with_ = splitRows(x.shape, axes, [denseStrides(x.shape), ...taken.strides]);
    return rowLaunch(reduceKernel(p.op, x.dtype, coop, taken.prologue), coop, with_, [ptr(out.at), ...taken.pointers, ...taken.extra, ...rowArgs(with_)]);
  }
  return rowLaunch(reduceKernel(p.op, x.dtype, coop), coop, split, [ptr(out.at), ptr(x.at), ...rowArgs(split)]);
};

/** Max, then the sum of exponentials relative to it, then each element's share. */
function softmaxKernel(dtype: TrtDType, coop: boolean) {
  const c = DTYPES[dtype];
  const at = `base + ${innerAt('x')}`;
  return rowKernel(`softmax.${dtype}`, coop, [MAX, SUM], (entry, k) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, ${rowParams(['x'])}) {
  ${k.rows(`
    i64 base = ${outerAt('x')};
    float m = -f_inf();
    ${k.each(` m = fmaxf(m, ${c.load(`x[${at}]`)}); `)}
    ${k.all(MAX, 'm')}
    float s = 0.0f;
    ${k.each(` s += expf(${c.load(`x[${at}]`)} - m); `)}
    ${k.all(SUM, 's')}
    ${k.each(`
      i64 at = ${at};
      y[at] = ${c.store(`expf(${c.load('x[at]')} - m) / s`)};
    `)}`)}
}`);
}

/**
 * The warp form: the row read once into registers, exp computed once and kept there. Each
 * lane folds its slots in order, then the butterfly: the order depends on E alone.
 */
function softmaxWarpKernel(dtype: TrtDType, form: WarpForm, pro?: RowPrologue) {
  const c = DTYPES[dtype];
  const key = pro ? `softmax.${dtype}.${prologueKey(pro)}` : `softmax.${dtype}`;
  const input = pro ? prologueParams(pro) : `const ${c.storage}* x`;
  const names = prologueNames(pro);
  return warpRowKernel(key, form, [MAX, SUM], (entry, w) => `
extern "C" __global__ void ${entry}(${c.storage}* y, ${input}, ${rowParams(['x', ...names])}) {
  ${w.rows(`
    ${pro ? prologueRows(pro) : `const i64 base = ${outerAt('x')};
    const ${c.storage}* xr = x + base;`}
    ${c.storage}* yr = y + base;
    float v[${form.elements}];
    ${pro ? w.produce(pro, '-f_inf()') : w.load(c, 'xr', '-f_inf()')}
    float m = -f_inf();
    ${w.slots(` m = fmaxf(m, v[k]); `)}
    ${w.all(MAX, 'm')}
    float s = 0.0f;
    ${w.indexed(`
        v[k] = inside ? expf(v[k] - m) : 0.0f;
        s += v[k];`)}
    ${w.all(SUM, 's')}
    // One division a row, not one a slot (an IEEE division is a dozen instructions and
    // registers): within an ulp of v / s before the rounding to the output's storage.
    const float inv = 1.0f / s;
    ${w.store(c, 'yr', 'v[k] * inv')}`)}
}`);
}

export const softmax: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'softmax');
  const x = input(ctx, 0);
  const out = output(ctx);
  checkRank(ctx, x.shape.length);
  if (!isFloatDType(x.dtype)) unsupported(ctx, `softmax does not take ${x.dtype}`);
  const split = x.shape.length === 0 ? splitRows([], [], [[]]) : splitRows(x.shape, [axisOf(ctx, p.axis, x.shape.length)], [denseStrides(x.shape)]);
  const args = [ptr(out.at), ptr(x.at), ...rowArgs(split)];
  const form = warpForm(split, BYTES[x.dtype], [x.at.offset ?? 0, out.at.offset ?? 0]);
  const taken = form && x.shape.length > 0 ? rowPrologue(ctx, [axisOf(ctx, p.axis, x.shape.length)], form) : null;
  if (form && taken) {
    const with_ = splitRows(x.shape, [axisOf(ctx, p.axis, x.shape.length)], [denseStrides(x.shape), ...taken.strides]);
    return warpRowLaunch(softmaxWarpKernel(x.dtype, form, taken.prologue), with_, [ptr(out.at), ...taken.pointers, ...taken.extra, ...rowArgs(with_)]);
  }
  if (form) return warpRowLaunch(softmaxWarpKernel(x.dtype, form), split, args);
  const coop = cooperative(split);
  return rowLaunch(softmaxKernel(x.dtype, coop), coop, split, args);
};

/** A float of `dtype` loaded from `expr`. */
const loadFloat = (dtype: TrtDType, expr: string): string => (DTYPES[dtype].compute === 'float' ? DTYPES[dtype].load(expr) : `(float)(${DTYPES[dtype].load(expr)})`);

/** The kernel-key part of a normalization's statistics: `.rms` skips the mean (RMSNorm). */
const statsKey = (rms: boolean): string => (rms ? '.rms' : '');

/**
 * Two passes (mean, then the mean squared deviation) before the normalized, scaled and shifted
 * write; RMS (`rms`) takes the mean as 0, so its second pass is the mean square.
 */
function normalizationKernel(dtype: TrtDType, scaleDtype: TrtDType, biasDtype: TrtDType, coop: boolean, rms: boolean) {
  const c = DTYPES[dtype];
  const s = DTYPES[scaleDtype];
  const b = DTYPES[biasDtype];
  const xj = c.load(`x[bx + ${innerAt('x')}]`);
  return rowKernel(`normalization.${dtype}.${scaleDtype}.${biasDtype}${statsKey(rms)}`, coop, [SUM], (entry, k) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, const ${s.storage}* scale, const ${b.storage}* bias, float eps, ${rowParams(['x', 's', 'b'])}) {
  ${k.rows(`
    i64 bx = ${outerAt('x')}, bs = ${outerAt('s')}, bb = ${outerAt('b')};
    ${rms ? 'const float mean = 0.0f;' : `float mean = 0.0f;
    ${k.each(` mean += ${xj}; `)}
    ${k.all(SUM, 'mean')}
    mean /= (float)inner;`}
    float var = 0.0f;
    ${k.each(`
      float d = ${xj} - mean;
      var += d * d;
    `)}
    ${k.all(SUM, 'var')}
    float inv = 1.0f / sqrtf(var / (float)inner + eps);
    ${k.each(`
      i64 at = bx + ${innerAt('x')};
      float sc = ${loadFloat(scaleDtype, `scale[bs + ${innerAt('s')}]`)};
      float bi = ${loadFloat(biasDtype, `bias[bb + ${innerAt('b')}]`)};
      y[at] = ${c.store(`(${c.load('x[at]')} - mean) * inv * sc + bi`)};
    `)}`)}
}`);
}

/**
 * How the warp form reads the scale or the bias along a row: one value a row (inner stride 0: a
 * scalar or per-row operand), a contiguous run whose rows start V-aligned (vector loads a
 * chunk), or any other stride (a scalar load a slot).
 */
type RowOperand = 'row' | 'contiguous' | 'strided';

function rowOperand(split: RowSplit, tensor: number, form: WarpForm, bytes: number, offset: number): RowOperand {
  const [outer, inner] = split.strides[tensor]!;
  if (inner[0] === 0) return 'row';
  const rowsAligned = outer.every((st, d) => split.outerDims[d] === 1 || st % form.vector === 0);
  return inner[0] === 1 && rowsAligned && offset % (form.vector * bytes) === 0 ? 'contiguous' : 'strided';
}

const OPERAND_KEY: Record<RowOperand, string> = { row: '0', contiguous: '1', strided: '' };

/**
 * C for one row operand (`scale` as `s`, `bias` as `b`) of the warp form: statements issued
 * right after the row's own loads, before its reductions, and the slot's value as a float. A
 * contiguous operand is read in the row's chunks there, so its loads overlap the reductions:
 * in the kernel lab (H200, 2026-12-03) that took Llama's RMSNorm from 6.0 to 3.7 µs, where a
 * scalar strided load a slot in the store loop waited on each chunk's loads in turn.
 */
function operandCode(mode: RowOperand, n: 's' | 'b', dtype: TrtDType, form: WarpForm, w: WarpCode): { early: string; value: string } {
  const t = DTYPES[dtype];
  const V = form.vector;
  const row = `${n}r`;
  if (mode === 'row') return { early: `\n    const float ${n}0 = ${loadFloat(dtype, `${row}[0]`)};`, value: `${n}0` };
  if (mode === 'contiguous') {
    if (V === 1) return { early: '', value: loadFloat(dtype, `${row}[j]`) };
    const vec = `VecN<${t.storage}, ${V}>`;
    return {
      early: `\n    ${vec} q${n}[${form.elements / V}];${w.chunks(`\n      if (inside) q${n}[c] = *reinterpret_cast<const ${vec}*>(${row} + j0);`)}`,
      value: loadFloat(dtype, `q${n}[c].v[t]`),
    };
  }
  // Each lane's first element, then constant steps: per-slot products j·stride cost 130-195
  // registers a thread at E = 24-32 (ptxas), these 72.
  return {
    early: `\n    const int ${n}s = (int)i_${n}.v[0];\n    const ${t.storage}* ${n}l = ${row} + lane * ${V} * ${n}s;`,
    value: loadFloat(dtype, `${n}l[(c * ${32 * V} + t) * ${n}s]`),
  };
}

/**
 * The warp form: the row read once into registers, then the same two passes and formula over
 * them. Each lane folds its slots in order, then the butterfly: the order depends on E alone.
 * Scale and bias are read as {@link RowOperand}s (`.s<k>`, `.b<k>` in the key).
 */
function normalizationWarpKernel(dtype: TrtDType, scaleDtype: TrtDType, biasDtype: TrtDType, form: WarpForm, rms: boolean, operands: readonly [RowOperand, RowOperand], pro?: RowPrologue) {
  const c = DTYPES[dtype];
  const s = DTYPES[scaleDtype];
  const b = DTYPES[biasDtype];
  const [sm, bm] = operands;
  const modes = `${sm === 'strided' ? '' : `.s${OPERAND_KEY[sm]}`}${bm === 'strided' ? '' : `.b${OPERAND_KEY[bm]}`}`;
  const key = `normalization.${dtype}.${scaleDtype}.${biasDtype}${statsKey(rms)}${modes}${pro ? `.${prologueKey(pro)}` : ''}`;
  const input = pro ? prologueParams(pro) : `const ${c.storage}* x`;
  const names = prologueNames(pro);
  return warpRowKernel(key, form, [SUM], (entry, w) => {
    const sc = operandCode(sm, 's', scaleDtype, form, w);
    const bc = operandCode(bm, 'b', biasDtype, form, w);
    return `
extern "C" __global__ void ${entry}(${c.storage}* y, ${input}, const ${s.storage}* scale, const ${b.storage}* bias, float eps, ${rowParams(['x', 's', 'b', ...names])}) {
  ${w.rows(`
    ${pro ? `${prologueRows(pro, ['s', 'b'])}
    const i64 bx = base;` : `${outerOffsets(['x', 's', 'b'])}
    const i64 bx = off_x;
    const ${c.storage}* xr = x + bx;`}
    ${c.storage}* yr = y + bx;
    const ${s.storage}* sr = scale + off_s;
    const ${b.storage}* br = bias + off_b;
    float v[${form.elements}];
    ${pro ? w.produce(pro, '0.0f') : w.load(c, 'xr', '0.0f')}${sc.early}${bc.early}
    ${rms ? 'const float mean = 0.0f;' : `float mean = 0.0f;
    ${w.slots(` mean += v[k]; `)}
    ${w.all(SUM, 'mean')}
    mean /= (float)inner;`}
    float var = 0.0f;
    ${w.indexed(`
        const float d = inside ? v[k] - mean : 0.0f;
        var += d * d;`)}
    ${w.all(SUM, 'var')}
    const float inv = 1.0f / sqrtf(var / (float)inner + eps);
    ${w.store(c, 'yr', `(v[k] - mean) * inv * ${sc.value} + ${bc.value}`)}`)}
}`;
  });
}

/** Strides that broadcast `shape` (NumPy rules: missing leading dims are 1) over `to`. */
function numpyStrides(shape: readonly number[], to: readonly number[]): number[] | null {
  if (shape.length > to.length) return null;
  const padded = [...new Array<number>(to.length - shape.length).fill(1), ...shape];
  if (padded.some((d, i) => d !== 1 && d !== to[i])) return null;
  const dense = denseStrides(padded);
  return to.map((d, i) => (padded[i] === d ? dense[i]! : 0));
}

export const normalization: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'normalization');
  const x = input(ctx, 0);
  const scale = input(ctx, 1);
  const bias = input(ctx, 2);
  const out = output(ctx);
  const rank = x.shape.length;
  if (!isFloatDType(x.dtype)) unsupported(ctx, `normalization does not take ${x.dtype}`);
  if (p.axes.length === 0) unsupported(ctx, 'no axes to normalize over');
  if (p.rms === true && p.nbGroups > 1) unsupported(ctx, 'RMS normalization takes no groups');
  const axes = [...new Set(p.axes.map((a) => axisOf(ctx, a, rank)))];
  let view: number[];
  let normAxes: number[];
  let strideOf: (t: typeof scale) => number[] | null;
  if (p.nbGroups > 1) {
    const [n, c] = [x.shape[0]!, x.shape[1]!];
    const g = p.nbGroups;
    if (rank < 2 || c % g !== 0) unsupported(ctx, `${c} channels of input [${x.shape.join(', ')}] do not split into ${g} groups`);
    if (axes.some((a) => a < 2)) unsupported(ctx, `group normalization takes spatial axes (2 and up), got [${axes.join(', ')}]`);
    view = [n, g, c / g, ...x.shape.slice(2)];
    normAxes = [2, ...axes.map((a) => a + 1)];
    const perGroup = (t: typeof scale): boolean => g !== c && t.shape.length === rank && t.shape[1] === g;
    strideOf = (t) => {
      if (t.shape.length !== rank) return null;
      const tv = perGroup(t) ? [t.shape[0]!, g, 1, ...t.shape.slice(2)] : t.shape[1] === 1 ? [t.shape[0]!, 1, 1, ...t.shape.slice(2)] : [t.shape[0]!, g, c / g, ...t.shape.slice(2)];
      if (!perGroup(t) && t.shape[1] !== c && t.shape[1] !== 1) return null;
      return numpyStrides(tv, view);
    };
  } else {
    view = [...x.shape];
    normAxes = axes;
    strideOf = (t) => numpyStrides(t.shape, x.shape);
  }
  checkRank(ctx, view.length);
  const sStrides = strideOf(scale);
  const bStrides = strideOf(bias);
  if (!sStrides || !bStrides) unsupported(ctx, `scale [${scale.shape.join(', ')}] and bias [${bias.shape.join(', ')}] do not broadcast to input [${x.shape.join(', ')}]`);
  const split = splitRows(view, normAxes, [denseStrides(view), sStrides, bStrides]);
  const args = [ptr(out.at), ptr(x.at), ptr(scale.at), ptr(bias.at), f32(p.epsilon), ...rowArgs(split)];
  const form = warpForm(split, BYTES[x.dtype], [x.at.offset ?? 0, out.at.offset ?? 0]);
  const rms = p.rms === true;
  // The warp form also takes a stored prologue (Llama's residual sum before each RMSNorm).
  const taken = form && p.nbGroups <= 1 ? rowPrologue(ctx, normAxes, form, true) : null;
  const operands = (sp: RowSplit, f: WarpForm): [RowOperand, RowOperand] => [
    rowOperand(sp, 1, f, BYTES[scale.dtype], scale.at.offset ?? 0),
    rowOperand(sp, 2, f, BYTES[bias.dtype], bias.at.offset ?? 0),
  ];
  if (form && taken) {
    const with_ = splitRows(view, normAxes, [denseStrides(view), sStrides, bStrides, ...taken.strides]);
    const kernel = normalizationWarpKernel(x.dtype, scale.dtype, bias.dtype, form, rms, operands(with_, form), taken.prologue);
    return warpRowLaunch(kernel, with_, [ptr(out.at), ...taken.pointers, ...taken.extra, ptr(scale.at), ptr(bias.at), f32(p.epsilon), ...rowArgs(with_)]);
  }
  if (form) return warpRowLaunch(normalizationWarpKernel(x.dtype, scale.dtype, bias.dtype, form, rms, operands(split, form)), split, args);
  const coop = cooperative(split);
  return rowLaunch(normalizationKernel(x.dtype, scale.dtype, bias.dtype, coop, rms), coop, split, args);
};

function cumulativeKernel(dtype: TrtDType, exclusive: boolean, reverse: boolean) {
  const c = DTYPES[dtype];
  const add = c.compute === 'float' ? 'acc + v' : 'i_add(acc, v)';
  return rowKernel(`cumulative.sum.${dtype}.${exclusive ? 'exclusive' : 'inclusive'}.${reverse ? 'reverse' : 'forward'}`, false, [], (entry) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, ${rowParams(['x'])}) {
  GRID_STRIDE(o, outer) {
    i64 base = ${outerAt('x')};
    ${c.compute} acc = 0;
    for (i64 t = 0; t < inner; ++t) {
      i64 j = ${reverse ? 'inner - 1 - t' : 't'};
      i64 at = base + ${innerAt('x')};
      ${c.compute} v = ${c.load('x[at]')};
      ${exclusive ? `y[at] = ${c.store('acc')};\n      acc = ${add};` : `acc = ${add};\n      y[at] = ${c.store('acc')};`}
    }
  }
}`);
}

export const cumulative: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'cumulative');
  const x = input(ctx, 0);
  const out = output(ctx);
  checkRank(ctx, x.shape.length);
  if (x.dtype === 'bool') unsupported(ctx, 'cumulative does not take bool');
  const dims = x.shape.length === 0 ? [1] : x.shape;
  const split = splitRows(dims, [axisOf(ctx, p.axis, x.shape.length)], [denseStrides(dims)]);
  return launch(cumulativeKernel(x.dtype, p.exclusive, p.reverse), volume(split.outerDims), [ptr(out.at), ptr(x.at), ...rowArgs(split)]);
};

/** The accumulation of a pooling kernel: its type, start, step (`v` into `acc[k]`) and the stored result (`divisor` for an average). */
function poolingArithmetic(type: 'max' | 'average', dtype: TrtDType) {
  const c = DTYPES[dtype];
  const float = c.compute === 'float';
  const acc = type === 'max' ? c.compute : float ? 'float' : 'double';
  const init = type === 'max' ? (float ? '-f_inf()' : '(i64)0x8000000000000000ull') : '0';
  const step = type === 'max' ? (float ? '(v > acc[k] || f_isnan(v)) ? v : acc[k]' : 'v > acc[k] ? v : acc[k]') : `acc[k] + (${acc})v`;
  const result = type === 'max' ? c.store('acc[k]') : float ? c.store('acc[k] / (float)divisor') : storeDouble(dtype, 'acc[k] / (double)divisor');
  return { c, acc, init, step, result };
}

/**
 * Pooling over 1-3 spatial dims: each output element walks its window. Windows start at
 * o·S − pre; padding never wins a max; an average divides by the window's real elements
 * (excludePad) or by its extent within the padded input, as the reference counts them.
 */
function poolingKernel(type: 'max' | 'average', dtype: TrtDType, last: boolean, vec: number, wide = false) {
  const { c, acc, init, step, result } = poolingArithmetic(type, dtype);
  // Channels-last ([N, spatial..., C]): the spatial dims are 1.. and the channel the last dim,
  // picked by unrolled selects (an index by the run-time rank would put c in local memory).
  // Each thread then takes `vec` neighbouring channels of one pixel: the window's index
  // arithmetic, most of a thread's work, is shared by them.
  // `wide`: the thread's channels are one aligned access (VecN), read once a window position
  // and written once; else `vec` accesses of one element each.
  const first = (d: string): string => (last ? `${d} + 1` : `${d} + 2`);
  const read = wide
    ? `const VecN<${c.storage}, ${vec}> w = *reinterpret_cast<const VecN<${c.storage}, ${vec}>*>(x + at);
#pragma unroll
          for (int k = 0; k < ${vec}; ++k) {
            ${c.compute} v = ${c.load('w.v[k]')};
            acc[k] = ${step};
          }`
    : `#pragma unroll
          for (int k = 0; k < ${vec}; ++k) {
            ${c.compute} v = ${c.load('x[at + k]')};
            acc[k] = ${step};
          }`;
  const write = wide
    ? `VecN<${c.storage}, ${vec}> w;
#pragma unroll
    for (int k = 0; k < ${vec}; ++k) w.v[k] = ${result};
    *reinterpret_cast<VecN<${c.storage}, ${vec}>*>(y + i) = w;`
    : `#pragma unroll
    for (int k = 0; k < ${vec}; ++k) y[i + k] = ${result};`;
  return kernelSource(`pooling.${type}.${dtype}${last ? `.nhwc${vec}${wide ? 'w' : ''}` : ''}`, (entry) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, i64 n, i32 sr, Dims8 outDims, Dims8 inDims, Dims8 window, Dims8 stride, Dims8 pre, Dims8 post, i32 excludePad) {
  GRID_STRIDE(t, n / ${vec}) {
    i64 i = t * ${vec};
    i64 c[8];
    unflatten(i, sr + 2, outDims, c);
    i64 ch = c[1], channels = inDims.v[1];
${
  last
    ? `#pragma unroll
    for (int d = 1; d < 8; ++d) {
      if (d == sr + 1) {
        ch = c[d];
        channels = inDims.v[d];
      }
    }`
    : ''
}
    // Up to 3 spatial dims, unrolled (the spare slots a window of 1 over a dim of 1); the
    // window walks only its positions inside the input, in row-major order, as the
    // reference does: no division per position, no local arrays.
    i64 lo[3], hi[3], size[3];
    i64 plane = 1, divisor = 1;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      lo[d] = 0;
      hi[d] = 1;
      size[d] = 1;
      if (d < sr) {
        size[d] = inDims.v[${first('d')}];
        plane *= size[d];
        i64 start = c[${first('d')}] * stride.v[d] - pre.v[d], end = start + window.v[d];
        lo[d] = start < 0 ? 0 : start;
        hi[d] = end < size[d] ? end : size[d];
        i64 padEnd = end < size[d] + post.v[d] ? end : size[d] + post.v[d];
        divisor *= excludePad ? (hi[d] > lo[d] ? hi[d] - lo[d] : 0) : padEnd - start;
      }
    }
    ${last ? 'i64 base = c[0] * plane;' : 'i64 base = (c[0] * channels + ch) * plane;'}
    ${acc} acc[${vec}];
#pragma unroll
    for (int k = 0; k < ${vec}; ++k) acc[k] = ${init};
    for (i64 p0 = lo[0]; p0 < hi[0]; ++p0) {
      for (i64 p1 = lo[1]; p1 < hi[1]; ++p1) {
        for (i64 p2 = lo[2]; p2 < hi[2]; ++p2) {
          i64 at = ${last ? '(base + (p0 * size[1] + p1) * size[2] + p2) * channels + ch' : 'base + (p0 * size[1] + p1) * size[2] + p2'};
          ${read}
        }
      }
    }
    ${write}
  }
}`);
}

/** Windows of at most this many positions take the unrolled 2-D channels-last kernel. */
const UNROLLED_WINDOW = 16;

/**
 * 2-D channels-last pooling with the window unrolled (its extent is a layer parameter, so it
 * may shape the source): each thread takes `vec` channels of one output pixel as one aligned
 * access, finds its pixel with three divisions by magic numbers in 32 bits, and reads every
 * window position inside the input, all loads independent of each other. The general kernel
 * walks the window in 64-bit loops with run-time bounds, one position after another: ResNet-50's
 * 3×3 max pool took 53 µs at batch 32 (H200, 2026-12-03), 0.3 of the copy bandwidth.
 */
function pooling2dLastKernel(type: 'max' | 'average', dtype: TrtDType, vec: number, window: readonly number[]) {
  const { c, acc, init, step, result } = poolingArithmetic(type, dtype);
  const [kh, kw] = window as [number, number];
  const positions: string[] = [];
  for (let a = 0; a < kh; a++) {
    for (let b = 0; b < kw; b++) {
      positions.push(`
    if (h0 + ${a} >= 0 && h0 + ${a} < H && w0 + ${b} >= 0 && w0 + ${b} < W) {
      const VecN<${c.storage}, ${vec}> w = *reinterpret_cast<const VecN<${c.storage}, ${vec}>*>(x + (u32)(((i32)row + ${a}) * (i32)W + w0 + ${b}) * C + cg * ${vec});
      ++inside;
#pragma unroll
      for (int k = 0; k < ${vec}; ++k) {
        ${c.compute} v = ${c.load('w.v[k]')};
        acc[k] = ${step};
      }
    }`);
    }
  }
  return kernelSource(`pooling.${type}.${dtype}.nhwc${vec}w.${kh}x${kw}`, (entry) => `
extern "C" __global__ void ${entry}(${c.storage}* y, const ${c.storage}* x, u32 n, u32 CG, u64 mCG, u32 OW, u64 mOW, u32 OH, u64 mOH, i32 H, i32 W, u32 C, i32 sh, i32 sw, i32 ph, i32 pw, i32 postH, i32 postW, i32 excludePad) {
  for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
    u32 r = ${magicQuotient('t', 'mCG')};
    const u32 cg = t - r * CG;
    u32 q = ${magicQuotient('r', 'mOW')};
    const i32 ow = (i32)(r - q * OW);
    const u32 b = ${magicQuotient('q', 'mOH')};
    const i32 oh = (i32)(q - b * OH);
    const i32 h0 = oh * sh - ph, w0 = ow * sw - pw;
    // The window's first row in the image [b, H, W]: h0 may be negative, so rows count signed.
    const i32 row = (i32)(b * (u32)H) + h0;
    ${acc} acc[${vec}];
#pragma unroll
    for (int k = 0; k < ${vec}; ++k) acc[k] = ${init};
    i32 inside = 0;${positions.join('')}
    const i32 hEnd = h0 + ${kh} < H + postH ? h0 + ${kh} : H + postH, wEnd = w0 + ${kw} < W + postW ? w0 + ${kw} : W + postW;
    const i64 divisor = excludePad ? (i64)inside : (i64)(hEnd - h0) * (i64)(wEnd - w0);
    (void)divisor;
    VecN<${c.storage}, ${vec}> out;
#pragma unroll
    for (int k = 0; k < ${vec}; ++k) out.v[k] = ${result};
    *reinterpret_cast<VecN<${c.storage}, ${vec}>*>(y + (u64)t * ${vec}) = out;
  }
}`);
}

export const pooling: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'pooling');
  const x = input(ctx, 0);
  const out = output(ctx);
  const sr = p.window.length;
  if (x.shape.length !== sr + 2 || sr < 1) unsupported(ctx, `input rank ${x.shape.length} does not fit ${sr}-D windows`);
  // As TensorRT's IPoolingLayer (2-D and 3-D windows; 1-D as a 2-D window of height 1).
  if (sr > 3) unsupported(ctx, `${sr}-D pooling windows: the kernel walks at most 3 spatial dims`);
  if (x.dtype === 'bool') unsupported(ctx, 'pooling does not take bool');
  const n = volume(out.shape);
  const last = p.channelsLast === true;
  // Channels per thread (channels-last only): 8 when the channel count allows it, read and
  // written as one aligned access each where both tensors start on that alignment. ResNet-50's
  // max pool, batch 32 (H200, 2026-12-03): 58 µs with 8 accesses of 2 bytes, 53 with one
  // access, 26 with the window unrolled as well.
  const vec = last && x.shape[x.shape.length - 1]! % 8 === 0 ? 8 : 1;
  const align = vec * BYTES[x.dtype];
  const wide = vec > 1 && (x.at.offset ?? 0) % align === 0 && (out.at.offset ?? 0) % align === 0;
  if (wide && sr === 2 && p.window[0]! * p.window[1]! <= UNROLLED_WINDOW && volume(x.shape) < 2 ** 31 && n < 2 ** 31) {
    const [N, H, W, C] = x.shape as [number, number, number, number];
    const [, OH, OW] = out.shape as [number, number, number, number];
    if (N > 0) {
      return launch(pooling2dLastKernel(p.type, x.dtype, vec, p.window), n / vec, [
        ptr(out.at),
        ptr(x.at),
        u32(n / vec),
        u32(C / vec),
        u64(divisionMagic(C / vec)),
        u32(OW),
        u64(divisionMagic(OW)),
        u32(OH),
        u64(divisionMagic(OH)),
        i32(H),
        i32(W),
        u32(C),
        i32(p.stride[0]!),
        i32(p.stride[1]!),
        i32(p.prePadding[0]!),
        i32(p.prePadding[1]!),
        i32(p.postPadding[0]!),
        i32(p.postPadding[1]!),
        i32(p.averageCountExcludesPadding ? 1 : 0),
      ]);
    }
  }
  const steps: LoweredStep[] = launch(poolingKernel(p.type, x.dtype, last, vec, wide), n / vec, [
    ptr(out.at),
    ptr(x.at),
    i64(n),
    i32(sr),
    dims8(out.shape),
    dims8(x.shape),
    dims8(p.window),
    dims8(p.stride),
    dims8(p.prePadding),
    dims8(p.postPadding),
    i32(p.averageCountExcludesPadding ? 1 : 0),
  ]);
  return steps;
};
