/**
 * Pointwise layers as strided maps: IElementWiseLayer (equal ranks, a 1 broadcasts),
 * IUnaryLayer, IActivationLayer, ICastLayer and ISelectLayer. Floats compute in fp32
 * (float16/bfloat16 load into fp32 and round once on store); integers compute in int64 with
 * wrapping arithmetic, and the store truncates to the storage width, as the reference does.
 */
import type { ActivationType, ElementWiseOp, TrtDType, UnaryOp } from '../../../network';
import { broadcastStrides, denseStrides, f32, input, output, paramsOf, unsupported } from './kernel';
import { mapSpecLaunch } from './map';
import { convert, DTYPES } from './prelude';
import type { LayerLowering, LoweringContext, LoweredStep } from './types';

type Compute = 'float' | 'i64' | 'bool';

const FLOAT_BINARY: Partial<Record<ElementWiseOp, string>> = {
  sum: 'x0 + x1',
  prod: 'x0 * x1',
  sub: 'x0 - x1',
  div: 'x0 / x1',
  pow: 'powf(x0, x1)',
  floor_div: 'floorf(x0 / x1)',
  // NaN in either operand propagates (torch.maximum / minimum).
  max: '(x0 > x1 || f_isnan(x0)) ? x0 : x1',
  min: '(x0 < x1 || f_isnan(x0)) ? x0 : x1',
  equal: 'x0 == x1',
  greater: 'x0 > x1',
  less: 'x0 < x1',
};

const INT_BINARY: Partial<Record<ElementWiseOp, string>> = {
  sum: 'i_add(x0, x1)',
  prod: 'i_mul(x0, x1)',
  sub: 'i_sub(x0, x1)',
  // A zero divisor gives 0 (the reference's choice for masked lanes); -1 avoids INT64_MIN / -1.
  div: 'x1 == 0 ? 0 : x1 == -1 ? i_sub(0, x0) : x0 / x1',
  floor_div: 'x1 == 0 ? 0 : x1 == -1 ? i_sub(0, x0) : (x0 / x1 - ((x0 % x1 != 0) && ((x0 < 0) != (x1 < 0)) ? 1 : 0))',
  max: 'x0 > x1 ? x0 : x1',
  min: 'x0 < x1 ? x0 : x1',
  equal: 'x0 == x1',
  greater: 'x0 > x1',
  less: 'x0 < x1',
};

/** Integer power by squaring; a negative exponent gives 1/x^e truncated (0 unless |x| is 1). */
const INT_POW = `
  if (x1 < 0) return x0 == 1 ? 1 : x0 == -1 ? ((x1 & 1) ? -1 : 1) : 0;
  i64 r = 1, b = x0, e = x1;
  while (e > 0) { if (e & 1) r = i_mul(r, b); b = i_mul(b, b); e >>= 1; }
  return r;`;

const BOOL_BINARY: Partial<Record<ElementWiseOp, string>> = {
  and: 'x0 && x1',
  or: 'x0 || x1',
  xor: 'x0 != x1',
  equal: 'x0 == x1',
  greater: 'x0 && !x1',
  less: '!x0 && x1',
  max: 'x0 || x1',
  min: 'x0 && x1',
};

function binaryBody(op: ElementWiseOp, compute: Compute): string | undefined {
  if (compute === 'i64' && op === 'pow') return INT_POW;
  const table = compute === 'float' ? FLOAT_BINARY : compute === 'i64' ? INT_BINARY : BOOL_BINARY;
  const expr = table[op];
  return expr === undefined ? undefined : `  return ${expr};`;
}

const COMPARES = new Set<ElementWiseOp>(['equal', 'greater', 'less']);

/** Output `out` from broadcast inputs through a map kernel. */
function broadcastMap(ctx: LoweringContext, key: string, ins: readonly TrtDType[], outDtype: TrtDType, body: string, extra?: { params: string[]; args: ReturnType<typeof f32>[] }): LoweredStep[] {
  const out = output(ctx);
  const operands = ins.map((_, k) => {
    const x = input(ctx, k);
    if (x.shape.length !== out.shape.length) unsupported(ctx, `input ${k} has rank ${x.shape.length}, the output ${out.shape.length}`);
    return { at: x.at, strides: broadcastStrides(x.shape, out.shape) };
  });
  return mapSpecLaunch({ key, inputs: ins, output: outDtype, body, extra: extra?.params }, out.shape, { at: out.at, strides: denseStrides(out.shape) }, operands, extra?.args);
}

export const elementwise: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'elementwise');
  const dtype = input(ctx, 0).dtype;
  const body = binaryBody(p.op, DTYPES[dtype].compute);
  if (body === undefined) unsupported(ctx, `${p.op} does not take ${dtype}`);
  return broadcastMap(ctx, `elementwise.${p.op}.${dtype}`, [dtype, dtype], COMPARES.has(p.op) ? 'bool' : dtype, body);
};

const FLOAT_UNARY: Record<Exclude<UnaryOp, 'not'>, string> = {
  exp: 'expf(x0)',
  log: 'logf(x0)',
  sqrt: 'sqrtf(x0)',
  recip: '1.0f / x0',
  abs: 'fabsf(x0)',
  neg: '-x0',
  sin: 'sinf(x0)',
  cos: 'cosf(x0)',
  tan: 'tanf(x0)',
  sinh: 'sinhf(x0)',
  cosh: 'coshf(x0)',
  asin: 'asinf(x0)',
  acos: 'acosf(x0)',
  atan: 'atanf(x0)',
  asinh: 'asinhf(x0)',
  acosh: 'acoshf(x0)',
  atanh: 'atanhf(x0)',
  ceil: 'ceilf(x0)',
  floor: 'floorf(x0)',
  erf: 'erff(x0)',
  // NaN and -0 give 0, as the reference's sign does.
  sign: 'x0 > 0.0f ? 1.0f : x0 < 0.0f ? -1.0f : 0.0f',
  // Half to even, as the default rounding mode rounds.
  round: 'rintf(x0)',
  isinf: 'f_isinf(x0)',
  isnan: 'f_isnan(x0)',
};

const INT_UNARY: Partial<Record<UnaryOp, string>> = {
  abs: 'x0 < 0 ? i_sub(0, x0) : x0',
  neg: 'i_sub(0, x0)',
  sign: 'x0 > 0 ? 1 : x0 < 0 ? -1 : 0',
};

export const unary: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'unary');
  const dtype = input(ctx, 0).dtype;
  const compute = DTYPES[dtype].compute;
  const expr = compute === 'bool' ? (p.op === 'not' ? '!x0' : undefined) : compute === 'float' ? (p.op === 'not' ? undefined : FLOAT_UNARY[p.op]) : INT_UNARY[p.op];
  if (expr === undefined) unsupported(ctx, `${p.op} does not take ${dtype}`);
  const outDtype: TrtDType = p.op === 'isinf' || p.op === 'isnan' ? 'bool' : dtype;
  return broadcastMap(ctx, `unary.${p.op}.${dtype}`, [dtype], outDtype, `  return ${expr};`);
};

/** Activation bodies over x0 with `alpha` and `beta` (TensorRT's definitions, as the reference documents them). */
const ACTIVATION: Record<ActivationType, string> = {
  relu: 'x0 > 0.0f ? x0 : (f_isnan(x0) ? x0 : 0.0f)',
  sigmoid: '1.0f / (1.0f + expf(-x0))',
  tanh: 'tanhf(x0)',
  leaky_relu: 'x0 >= 0.0f ? x0 : alpha * x0',
  elu: 'x0 >= 0.0f ? x0 : alpha * (expf(x0) - 1.0f)',
  selu: 'x0 > 0.0f ? beta * x0 : beta * (alpha * expf(x0) - alpha)',
  softsign: 'x0 / (1.0f + fabsf(x0))',
  softplus: 'alpha * (fmaxf(beta * x0, 0.0f) + log1pf(expf(-fabsf(beta * x0))))',
  clip: 'fmaxf(alpha, fminf(beta, x0))',
  hard_sigmoid: 'fmaxf(0.0f, fminf(1.0f, alpha * x0 + beta))',
  scaled_tanh: 'alpha * tanhf(beta * x0)',
  thresholded_relu: 'x0 > alpha ? x0 : 0.0f',
  gelu_erf: '0.5f * x0 * (1.0f + erff(x0 * 0.70710678118654752f))',
  gelu_tanh: '0.5f * x0 * (1.0f + tanhf(0.79788456080286536f * (x0 + 0.044715f * x0 * x0 * x0)))',
};

export const activation: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'activation');
  const dtype = input(ctx, 0).dtype;
  const compute = DTYPES[dtype].compute;
  let body: string;
  if (compute === 'float') body = `  return ${ACTIVATION[p.type]};`;
  else if (compute === 'i64' && p.type === 'relu') body = '  return x0 > 0 ? x0 : 0;';
  else unsupported(ctx, `${p.type} does not take ${dtype}`);
  return broadcastMap(ctx, `activation.${p.type}.${dtype}`, [dtype], dtype, body, {
    params: ['float alpha', 'float beta'],
    args: [f32(p.alpha ?? 0), f32(p.beta ?? 0)],
  });
};

/** The body of a cast from `from` to `to`, in compute types. */
export const castBody = (from: TrtDType, to: TrtDType): string => `  return ${convert(from, to, 'x0')};`;

export const cast: LayerLowering = (ctx) => {
  const p = paramsOf(ctx, 'cast');
  const from = input(ctx, 0).dtype;
  return broadcastMap(ctx, `cast.${from}.${p.to}`, [from], p.to, castBody(from, p.to));
};

export const select: LayerLowering = (ctx) => {
  const dtype = input(ctx, 1).dtype;
  if (input(ctx, 0).dtype !== 'bool') unsupported(ctx, 'the condition must be bool');
  // In compute types, so that a pointwise producer of a branch (attention's scale before its
  // mask) fuses into it: every dtype's load and store round-trip exactly, so the chosen element
  // is stored as it was read (a NaN stays a NaN).
  const out = output(ctx);
  const operands = [0, 1, 2].map((k) => {
    const x = input(ctx, k);
    if (x.shape.length !== out.shape.length) unsupported(ctx, `input ${k} has rank ${x.shape.length}, the output ${out.shape.length}`);
    return { at: x.at, strides: broadcastStrides(x.shape, out.shape) };
  });
  const spec = { key: `select.${dtype}`, inputs: ['bool', dtype, dtype] as TrtDType[], output: dtype, body: '  return x0 ? x1 : x2;' };
  return mapSpecLaunch(spec, out.shape, { at: out.at, strides: denseStrides(out.shape) }, operands);
};
