/**
 * Small layer builders and argument readers shared by the NN converters (reductions, pooling,
 * normalization, attention...): static shapes and lists read from nodes, constants shaped
 * like a network tensor, and one-line wrappers for the layers they use most.
 */
import { InternalError } from '../../errors';
import { isFloating, type DType } from '../../ir/dtype';
import type { GeometryArgs } from '../../ir/ops/nn-geometry';
import { dimsOfType, Value, type Arg, type Node } from '../../ir/graph';
import type { NetTensor, ReduceOp, TrtDType, UnaryOp } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { reshape } from './basic';
import { dimsVector, staticDims, type DimRef } from './dynamic';
import { staticShape } from './shape';

// ---------------------------------------------------------------------------------------------
// Reading nodes

export { staticShape };

/** The static shape of output `i` of `node`. */
export const outShape = (node: Node, i = 0): number[] => staticShape(node.outputs[i]!);

/** The IR dtype of output `i` of `node`. */
export const outDType = (node: Node, i = 0): DType => node.outputs[i]!.tensorType.dtype;

/** The tensor value of argument `name` (throws when it is not one). */
export function valueArg(node: Node, name: string): Value {
  const a = node.args[name];
  if (!(a instanceof Value)) throw new InternalError(`node ${node.name}: argument ${name} is not a value`);
  return a;
}

/** The tensor value of an optional argument, or null. */
export function optValueArg(node: Node, name: string): Value | null {
  const a = node.args[name];
  return a instanceof Value ? a : null;
}

/** A list argument of static integers; a single number repeats to `n` (ATen's `int[2] stride=1`). */
export function intList(node: Node, name: string, n?: number): number[] {
  const a = node.args[name];
  const list = Array.isArray(a) ? (a as Arg[]) : a === null || a === undefined ? [] : [a];
  if (!list.every((x): x is number => typeof x === 'number')) throw new InternalError(`node ${node.name}: argument ${name} is not static`);
  if (n !== undefined && list.length === 1 && n > 1) return new Array<number>(n).fill(list[0]!);
  return list as number[];
}

/** An optional int list (`int[1]? dim`): null when absent. */
export function optIntList(node: Node, name: string): number[] | null {
  const a = node.args[name];
  return a === null || a === undefined ? null : intList(node, name);
}

export const numArg = (node: Node, name: string): number => node.args[name] as number;
export const boolArg = (node: Node, name: string): boolean => node.args[name] as boolean;

/** The node's static arguments, for the conv/pool geometry readers shared with shape inference. */
export function geometryArgs(node: Node): GeometryArgs {
  return {
    list: (name, n) => intList(node, name, n),
    int: (name) => numArg(node, name),
    bool: (name) => boolArg(node, name),
    fail: (message) => {
      throw new InternalError(`node ${node.name}: ${message}`);
    },
  };
}
export function optNumArg(node: Node, name: string): number | null {
  const a = node.args[name];
  return typeof a === 'number' ? a : null;
}

/** True when `a` is a value computed by a constant node (weights, buffers, folded tensors). */
export function isConstant(a: Arg | undefined): a is Value {
  return a instanceof Value && a.producer.kind === 'constant' && a.producer.tensor !== undefined;
}

/** The data of a constant value. */
export function constantData(v: Value): Tensor {
  const t = v.producer.tensor;
  if (v.producer.kind !== 'constant' || t === undefined) throw new InternalError(`%${v.name} is not a constant`);
  return t;
}

// ---------------------------------------------------------------------------------------------
// checkArgs building blocks

/** A reason when any argument is a SymInt value or any tensor has a symbolic dim. */
export function symbolicReason(node: Node): string | null {
  const visit = (a: Arg): string | null => {
    if (a instanceof Value) {
      if (a.type.kind === 'symint') return `argument %${a.name} is a run-time SymInt; this converter needs static values`;
      if (dimsOfType(a.type).some((d) => typeof d !== 'number')) return `%${a.name} has a run-time dim; this converter handles static shapes only`;
      return null;
    }
    if (Array.isArray(a)) {
      for (const x of a) {
        const r = visit(x);
        if (r) return r;
      }
    }
    return null;
  };
  for (const a of Object.values(node.args)) {
    const r = visit(a);
    if (r) return r;
  }
  for (const v of node.outputs) {
    if (v.type.kind === 'tensor' && v.type.shape.some((d) => typeof d !== 'number')) return `output %${v.name} has a run-time dim`;
  }
  return null;
}

/** A reason unless the value is floating-point (TensorRT matmul, convolution, softmax... take only floats). */
export function floatReason(v: Value, what: string): string | null {
  const dtype = v.tensorType.dtype;
  return isFloating(dtype) ? null : `${what} is ${dtype}; TensorRT computes this only in floating point`;
}

// ---------------------------------------------------------------------------------------------
// Constants

/** Numbers as a constant of a TensorRT dtype (bool/uint8 go through ctx.constant's int32 + cast). */
export function constantOf(ctx: ConversionContext, dtype: TrtDType, shape: readonly number[], values: ArrayLike<number>, role: string): NetTensor {
  return ctx.constant(Tensor.from(dtype, shape, values), ctx.name(role));
}

/** One value broadcast over `rank` dims, in `dtype`. */
export function scalarOf(ctx: ConversionContext, value: number, dtype: TrtDType, rank: number, role: string): NetTensor {
  return constantOf(ctx, dtype, new Array<number>(rank).fill(1), [value], role);
}

/** `count` copies of `value` shaped `shape`. */
export function filledOf(ctx: ConversionContext, value: number, dtype: TrtDType, shape: readonly number[], role: string): NetTensor {
  const n = shape.reduce((a, d) => a * d, 1);
  return constantOf(ctx, dtype, shape, new Array<number>(n).fill(value), role);
}

/** The lowest value of a dtype (the padding of a max over windows). */
export function lowestOf(dtype: TrtDType): number {
  switch (dtype) {
    case 'int32':
      return -(2 ** 31);
    case 'int64':
      return -(2 ** 63);
    case 'int8':
      return -128;
    case 'uint8':
    case 'bool':
      return 0;
    default:
      return -Infinity;
  }
}

// ---------------------------------------------------------------------------------------------
// Layers

export function unary(ctx: ConversionContext, t: NetTensor, op: UnaryOp, role?: string): NetTensor {
  return ctx.add({ kind: 'unary', op }, [t], role ?? op);
}

/** A reduce layer; no axes (a rank-0 input) gives the input back. */
export function reduce(ctx: ConversionContext, t: NetTensor, op: ReduceOp, axes: readonly number[], keepDims: boolean, role?: string): NetTensor {
  if (axes.length === 0) return t;
  return ctx.add({ kind: 'reduce', op, axes: [...axes], keepDims }, [t], role ?? `reduce_${op}`);
}

/** Removes size-1 dims `axes` (a reshape). */
export function squeeze(ctx: ConversionContext, t: NetTensor, axes: readonly number[], role = 'squeeze'): NetTensor {
  const drop = new Set(axes);
  return reshape(ctx, t, t.shape.filter((_, i) => !drop.has(i)), role);
}

/**
 * One static slice layer (size, not end), even when it reads `t` whole (shape.ts's
 * `sliceOrSelf` returns `t` then); `fill` (a number, or a scalar tensor of t's dtype) pads
 * reads outside the input with that value.
 */
export function slice(
  ctx: ConversionContext,
  t: NetTensor,
  start: readonly number[],
  size: readonly number[],
  stride: readonly number[],
  role = 'slice',
  fill?: number | NetTensor,
): NetTensor {
  if (fill === undefined) return ctx.add({ kind: 'slice', start: [...start], size: [...size], stride: [...stride], mode: 'strict_bounds' }, [t], role);
  // Fill value 0 is the layer's default; anything else is a scalar input.
  const value = typeof fill !== 'number' ? fill : fill === 0 ? null : constantOf(ctx, t.dtype, [], [fill], `${role}_fill`);
  return ctx.add({ kind: 'slice', start: [...start], size: [...size], stride: [...stride], mode: 'fill' }, [t, null, null, null, value], role);
}

/**
 * A slice whose sizes may be axes of `t` with run-time dims (then the size is a shape tensor
 * input); static sizes give exactly {@link slice}.
 */
export function sliceSized(
  ctx: ConversionContext,
  t: NetTensor,
  start: readonly number[],
  size: readonly DimRef[],
  stride: readonly number[],
  role = 'slice',
  fill?: number | NetTensor,
): NetTensor {
  const known = staticDims(t, size);
  if (known !== null) return slice(ctx, t, start, known, stride, role, fill);
  const sizeT = dimsVector(ctx, t, size, `${role}_size`);
  const zeros = size.map(() => 0);
  if (fill === undefined) return ctx.add({ kind: 'slice', start: [...start], size: zeros, stride: [...stride], mode: 'strict_bounds' }, [t, null, sizeT], role);
  const value = typeof fill !== 'number' ? fill : fill === 0 ? null : constantOf(ctx, t.dtype, [], [fill], `${role}_fill`);
  return ctx.add({ kind: 'slice', start: [...start], size: zeros, stride: [...stride], mode: 'fill' }, [t, null, sizeT, null, value], role);
}

/** `t`'s dims as sizes, with `axis` replaced by `d` (run-time dims stay references to `t`'s axes). */
export const withAxis = (t: NetTensor, axis: number, d: DimRef): DimRef[] => t.shape.map((n, i) => (i === axis ? d : n >= 0 ? n : { axis: i }));

/** Elements [from, from+count) of axis `axis`. */
export function sliceAxis(ctx: ConversionContext, t: NetTensor, axis: number, from: number, count: number, role = 'slice'): NetTensor {
  const start = t.shape.map((_, i) => (i === axis ? from : 0));
  return sliceSized(ctx, t, start, withAxis(t, axis, count), t.shape.map(() => 1), role);
}

export function concat(ctx: ConversionContext, ts: readonly NetTensor[], axis: number, role = 'concat'): NetTensor {
  if (ts.length === 1) return ts[0]!;
  return ctx.add({ kind: 'concat', axis }, ts, role);
}

/** Gathers indices `index` (int32 constant) along `axis`: that dim becomes index.length. */
export function gatherAxis(ctx: ConversionContext, t: NetTensor, axis: number, index: readonly number[], role = 'gather'): NetTensor {
  const idx = constantOf(ctx, 'int32', [index.length], index, `${role}_index`);
  return ctx.add({ kind: 'gather', mode: 'default', axis }, [t, idx], role);
}

/** `dims` listed out as [1, ..., 1, d, 1, ...] with `d` at `axis` of `rank`. */
export function alongAxis(rank: number, axis: number, d: number): number[] {
  return Array.from({ length: rank }, (_, i) => (i === axis ? d : 1));
}

export const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);
