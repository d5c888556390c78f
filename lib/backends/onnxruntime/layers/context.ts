/**
 * What every layer lowering gets (one Network layer → ONNX nodes), and the dtype rule they
 * share: onnxruntime's CPU kernels exist for fewer types than TensorRT's layers take, so an
 * op computes in a wider type where its kernel is missing (float16 and bfloat16 in float32,
 * int8 and uint8 in int32) and the result is cast back. Both widenings are exact for the
 * inputs and the cast back rounds once, as TensorRT's own fp16 kernels do.
 */
import { UnsupportedOpError } from '../../../errors';
import type { DType } from '../../../ir/dtype';
import type { Layer, LayerKind, LayerParams, TrtDType } from '../../../network';
import type { OnnxGraph } from './onnx-graph';

/** Which element types an op's onnxruntime CPU kernel takes. */
export type KernelTypes = 'float' | 'numeric' | 'any';

export interface LowerContext {
  readonly g: OnnxGraph;
  readonly layer: Layer;
  /** Whether input `i` is given (optional inputs may be null). */
  has(i: number): boolean;
  /** The ONNX value of input `i`. */
  input(i: number): string;
  inputDType(i: number): TrtDType;
  /** Input i's shape (-1: decided at run time); its rank is always known. */
  inputShape(i: number): readonly number[];
  outputDType(k: number): TrtDType;
  outputShape(k: number): readonly number[];
  /** UnsupportedOpError naming the layer. */
  unsupported(why: string): never;
}

/** The ONNX values of a layer's outputs, in order. */
export type Lowering<K extends LayerKind> = (p: Extract<LayerParams, { kind: K }>, c: LowerContext) => string[];

/** The type `dtype` is computed in by a kernel that takes `types`. */
export function computeDType(dtype: DType, types: KernelTypes): DType {
  if (types === 'any') return dtype;
  if (dtype === 'float16' || dtype === 'bfloat16') return 'float32';
  if (types === 'numeric' && (dtype === 'int8' || dtype === 'uint8' || dtype === 'bool')) return 'int32';
  return dtype;
}

/**
 * The types onnxruntime's CPU Where (opset 16) takes for its two value operands: it has no
 * kernel for bool, int8 or bfloat16 ("Could not find an implementation for Where(16)" when
 * the session is made), so those are selected in int32 (float32 for bfloat16) and cast back,
 * which is exact for every value of those types.
 */
export const whereTypes = (dtype: DType): KernelTypes => (dtype === 'bool' || dtype === 'int8' || dtype === 'bfloat16' ? 'numeric' : 'any');

/** The types onnxruntime's CPU Expand (opset 13) takes: every type but bfloat16, which is expanded in float32 (exact) and cast back. */
export const expandTypes = (dtype: DType): KernelTypes => (dtype === 'bfloat16' ? 'numeric' : 'any');

/**
 * Emits `emit(inputs)` in the type the kernel takes: inputs of `dtype` are cast to the
 * compute type and the result back to `resultDType` (default `dtype`; a comparison's bool
 * stays as it is).
 */
export function computeIn(c: LowerContext, inputs: readonly string[], dtype: DType, types: KernelTypes, emit: (ins: string[], as: DType) => string, resultDType: DType = dtype): string {
  const as = computeDType(dtype, types);
  if (types === 'float' && as !== 'float32' && as !== 'float64') c.unsupported(`onnxruntime's CPU kernel takes floating-point values, not ${dtype}`);
  const out = emit(
    inputs.map((x) => c.g.cast(x, dtype, as)),
    as,
  );
  return resultDType === dtype ? c.g.cast(out, as, dtype) : out;
}

export function unsupportedError(layer: Layer, why: string): UnsupportedOpError {
  return new UnsupportedOpError(`the onnxruntime backend cannot run layer "${layer.name}" (${layer.params.kind}): ${why}`, {
    details: { layer: layer.name, kind: layer.params.kind },
  });
}
