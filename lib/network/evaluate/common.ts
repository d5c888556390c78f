/** What the reference backend's layer executors share: their type, errors and small helpers. */
import { BadInputError, InternalError, type ErrorDetails } from '../../errors';
import { readNumbers } from '../../kernels/access';
import { cast as castKernel } from '../../kernels/unary';
import type { DType } from '../../ir/dtype';
import type { LayerKind, LayerParams } from '..';
import type { Tensor } from '../../ir/tensor';

/** The layer an executor runs, for error messages. */
export interface LayerContext {
  readonly name: string;
  readonly kind: LayerKind;
}

/** The parameters of one layer kind. */
export type ParamsOf<K extends LayerKind> = Extract<LayerParams, { kind: K }>;

/**
 * Runs one layer on concrete inputs (null for an omitted optional input) and returns its
 * outputs, which must have the dtypes and shapes inferLayer gives for these inputs (the
 * runner checks). Executors never modify their inputs; they may return an input itself.
 */
export type Executor<K extends LayerKind> = (params: ParamsOf<K>, inputs: ReadonlyArray<Tensor | null>, layer: LayerContext) => Tensor[];

const label = (layer: LayerContext): string => `layer "${layer.name}" (${layer.kind})`;

/** A layer whose parameters or input types break its rules: a converter bug. */
export function fail(layer: LayerContext, message: string): never {
  throw new InternalError(`reference backend: ${label(layer)}: ${message}`, { details: { layer: layer.name } });
}

/**
 * Run-time data the layer cannot process (an index out of range, a slice outside a dim that
 * only the input shapes decide): TensorRT leaves these undefined, the reference refuses them.
 */
export function badData(layer: LayerContext, message: string, details: ErrorDetails = {}): never {
  throw new BadInputError(`${label(layer)}: ${message}`, { details: { layer: layer.name, ...details } });
}

/** Input `i`, which this layer needs. */
export function required(inputs: ReadonlyArray<Tensor | null>, i: number, layer: LayerContext): Tensor {
  const t = inputs[i];
  if (t === undefined || t === null) fail(layer, `input ${i} is missing`);
  return t;
}

/** The values of a shape tensor (or any small integer tensor) as numbers. */
export function intValues(t: Tensor): number[] {
  return Array.from(readNumbers(t));
}

/** `t` in `dtype` (itself when it already is). */
export function asDType(t: Tensor, dtype: DType): Tensor {
  return t.dtype === dtype ? t : castKernel(t, dtype);
}

export const fmtShape = (shape: readonly number[]): string => `[${shape.join(', ')}]`;
