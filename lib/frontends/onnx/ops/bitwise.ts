/**
 * ONNX bitwise ops (BitwiseAnd/Or/Xor/Not, BitShift) composed of integer arithmetic, which
 * every backend has: a value's bits are floor(x / 2^k) mod 2 (an arithmetic shift, so two's
 * complement holds for negatives), combined per bit and summed back, the sign bit weighing
 * −2^(w−1) for signed types. Work runs in int32 for the types up to 16 bits and int32, in
 * int64 for uint32, int64 and uint64: uint64 as the int64 of the same 64 bits (a cast wraps
 * both ways), so its top bit counts as a sign bit there.
 */
import type { DType } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import type { OnnxContext } from '../context';
import { defineOnnxOp } from '../registry';

/** Per element type: its bits as the work type sees them, and the type the work runs in. */
const WIDTH: Partial<Record<DType, { bits: number; signed: boolean; work: 'int32' | 'int64' }>> = {
  int8: { bits: 8, signed: true, work: 'int32' },
  uint8: { bits: 8, signed: false, work: 'int32' },
  int16: { bits: 16, signed: true, work: 'int32' },
  uint16: { bits: 16, signed: false, work: 'int32' },
  int32: { bits: 32, signed: true, work: 'int32' },
  uint32: { bits: 32, signed: false, work: 'int64' },
  int64: { bits: 64, signed: true, work: 'int64' },
  uint64: { bits: 64, signed: true, work: 'int64' },
};

const SUPPORTED = Object.keys(WIDTH).join(', ');

function integerInputs(ctx: OnnxContext): { a: Value; b: Value; dtype: DType; bits: number; signed: boolean } {
  const a = ctx.input(0);
  const b = ctx.input(1);
  const dtype = a.tensorType.dtype;
  if (b.tensorType.dtype !== dtype) ctx.bad(`inputs must have one element type, got ${dtype}, ${b.tensorType.dtype}`);
  const width = WIDTH[dtype];
  if (width === undefined) ctx.unsupported(`${dtype} inputs are not supported (${SUPPORTED} are)`);
  return { a: ctx.cast(a, width.work), b: ctx.cast(b, width.work), dtype, bits: width.bits, signed: width.signed };
}

/** The bits of `x` (int32 or int64) as 0/1 tensors of its type, least significant first; the top one is the sign for signed types. */
function bitsOf(ctx: OnnxContext, x: Value, bits: number, signed: boolean): Value[] {
  const out: Value[] = [];
  for (let k = 0; k < bits; k++) {
    if (signed && k === bits - 1) {
      // In the work type: a narrower bit would wrap its weight −2^(w−1) away.
      out.push(ctx.cast(ctx.emit('aten.lt.Scalar', { self: x, other: 0 }), x.tensorType.dtype));
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
  if (WIDTH[x.tensorType.dtype] === undefined && x.tensorType.dtype !== 'bool') ctx.unsupported(`${x.tensorType.dtype} inputs are not supported (bool, ${SUPPORTED} are)`);
  return [ctx.emit('aten.bitwise_not.default', { self: x })];
});

const SHIFT_TYPES: ReadonlySet<DType> = new Set(['uint8', 'uint16', 'uint32', 'uint64']);

// x << y wraps at the type's width; x >> y is floor(x / 2^y). Shifts past the width give 0.
defineOnnxOp('BitShift', (ctx) => {
  const direction = ctx.attrString('direction');
  if (direction !== 'LEFT' && direction !== 'RIGHT') ctx.bad(`direction must be LEFT or RIGHT, got ${JSON.stringify(direction)}`);
  const dtype = ctx.input(0).tensorType.dtype;
  if (!SHIFT_TYPES.has(dtype)) ctx.unsupported(`${dtype} inputs are not supported (${[...SHIFT_TYPES].join(', ')} are: ONNX defines BitShift on unsigned types)`);
  if (dtype === 'uint64') return [shiftUint64(ctx, direction)];
  // Up to uint32 the work type holds x · 2^width's low bits: a product past its range wraps
  // modulo 2^32 or 2^64, which 2^width divides, so the remainder is still x << y.
  const { a, b, bits } = integerInputs(ctx);
  const power = ctx.emit('aten.pow.Scalar', { self: 2, exponent: ctx.emit('aten.clamp.default', { self: b, min: 0, max: bits }) });
  const shifted =
    direction === 'LEFT'
      ? ctx.emit('aten.remainder.Scalar', { self: mul(ctx, a, power), other: 2 ** bits })
      : ctx.emit('aten.floor_divide.default', { self: a, other: power });
  return [ctx.cast(shifted, dtype)];
});

/**
 * BitShift of uint64 in uint64 itself (exact, wrapping modulo 2^64): x << y is x · 2^min(y, 64),
 * where 2^64 wraps to 0. x >> y divides by 2^min(y, 63), then once more by 2 when y ≥ 64 (a
 * divisor of 2^64 would wrap to 0).
 */
function shiftUint64(ctx: OnnxContext, direction: string): Value {
  const a = ctx.input(0);
  const b = ctx.cast(ctx.input(1), 'uint64');
  const powerOf = (max: number): Value => ctx.emit('aten.pow.Scalar', { self: 2, exponent: ctx.emit('aten.clamp.default', { self: b, min: 0, max }) });
  if (direction === 'LEFT') return mul(ctx, a, powerOf(64));
  const partial = ctx.emit('aten.floor_divide.default', { self: a, other: powerOf(63) });
  const past = ctx.cast(ctx.emit('aten.gt.Scalar', { self: b, other: 63 }), 'uint64');
  return ctx.emit('aten.floor_divide.default', { self: partial, other: ctx.emit('aten.add.Scalar', { self: past, other: 1 }) });
}
