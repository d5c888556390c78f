/**
 * ONNX bitwise ops (BitwiseAnd/Or/Xor/Not, BitShift) composed of integer arithmetic, which
 * every backend has: a value's bits are floor(x / 2^k) mod 2 (an arithmetic shift, so two's
 * complement holds for negatives), combined per bit and summed back, the sign bit weighing
 * −2^(w−1) for signed types. Work runs in int32 (exact for the 8- and 32-bit types).
 */
import type { DType } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

const WIDTH: Partial<Record<DType, { bits: number; signed: boolean }>> = {
  int8: { bits: 8, signed: true },
  uint8: { bits: 8, signed: false },
  int32: { bits: 32, signed: true },
};

function integerInputs(ctx: OnnxContext): { a: Value; b: Value; dtype: DType; bits: number; signed: boolean } {
  const a = ctx.input(0);
  const b = ctx.input(1);
  const dtype = a.tensorType.dtype;
  if (b.tensorType.dtype !== dtype) ctx.bad(`inputs must have one element type, got ${dtype}, ${b.tensorType.dtype}`);
  const width = WIDTH[dtype];
  if (width === undefined) ctx.unsupported(`${dtype} inputs are not supported (int8, uint8 and int32 are)`);
  return { a: ctx.cast(a, 'int32'), b: ctx.cast(b, 'int32'), dtype, ...width };
}

/** The bits of int32 `x` as 0/1 int32 tensors, least significant first; the top one is the sign for signed types. */
function bitsOf(ctx: OnnxContext, x: Value, bits: number, signed: boolean): Value[] {
  const out: Value[] = [];
  for (let k = 0; k < bits; k++) {
    if (signed && k === bits - 1) {
      out.push(ctx.cast(ctx.emit('aten.lt.Scalar', { self: x, other: 0 }), 'int32'));
      continue;
    }
    const shifted = k === 0 ? x : ctx.emit('aten.floor_divide.Scalar', { self: x, other: 2 ** k });
    out.push(ctx.emit('aten.remainder.Scalar', { self: shifted, other: 2 }));
  }
  return out;
}

/** Σ bit_k · 2^k, the sign bit counting −2^(w−1). */
function fromBits(ctx: OnnxContext, bits: readonly Value[], signed: boolean): Value {
  const top = bits.length - 1;
  return bits
    .map((bit, k) => (k === 0 ? bit : ctx.emit('aten.mul.Scalar', { self: bit, other: signed && k === top ? -(2 ** k) : 2 ** k })))
    .reduce((acc, v) => ctx.emit('aten.add.Tensor', { self: acc, other: v }));
}

function bitwise(opType: string, combine: (ctx: OnnxContext, a: Value, b: Value) => Value): void {
  defineOnnxOp(opType, (ctx) => {
    const { a, b, dtype, bits, signed } = integerInputs(ctx);
    const x = bitsOf(ctx, a, bits, signed);
    const y = bitsOf(ctx, b, bits, signed);
    return [ctx.cast(fromBits(ctx, x.map((xi, k) => combine(ctx, xi, y[k]!)), signed), dtype)];
  });
}

const mul = (ctx: OnnxContext, a: Value, b: Value): Value => ctx.emit('aten.mul.Tensor', { self: a, other: b });
const add = (ctx: OnnxContext, a: Value, b: Value): Value => ctx.emit('aten.add.Tensor', { self: a, other: b });

bitwise('BitwiseAnd', mul);
// a + b − ab and (a + b) mod 2 on single bits.
bitwise('BitwiseOr', (ctx, a, b) => ctx.emit('aten.sub.Tensor', { self: add(ctx, a, b), other: mul(ctx, a, b) }));
bitwise('BitwiseXor', (ctx, a, b) => ctx.emit('aten.remainder.Scalar', { self: add(ctx, a, b), other: 2 }));

defineOnnxOp('BitwiseNot', (ctx) => {
  const x = ctx.input(0);
  if (WIDTH[x.tensorType.dtype] === undefined && x.tensorType.dtype !== 'int64') ctx.unsupported(`${x.tensorType.dtype} inputs are not supported`);
  return [ctx.emit('aten.bitwise_not.default', { self: x })];
});

// x << y wraps at the type's width; x >> y is floor(x / 2^y). Shifts past the width give 0.
defineOnnxOp('BitShift', (ctx) => {
  const direction = ctx.attrString('direction');
  if (direction !== 'LEFT' && direction !== 'RIGHT') ctx.bad(`direction must be LEFT or RIGHT, got ${JSON.stringify(direction)}`);
  const { a, b, dtype, bits, signed } = integerInputs(ctx);
  if (signed || bits !== 8) ctx.unsupported(`${dtype} inputs are not supported (uint8 is)`);
  const power = ctx.emit('aten.pow.Scalar', { self: 2, exponent: ctx.emit('aten.clamp.default', { self: b, min: 0, max: bits }) });
  const shifted =
    direction === 'LEFT'
      ? ctx.emit('aten.remainder.Scalar', { self: mul(ctx, a, power), other: 2 ** bits })
      : ctx.emit('aten.floor_divide.default', { self: a, other: power });
  return [ctx.cast(shifted, dtype)];
});
