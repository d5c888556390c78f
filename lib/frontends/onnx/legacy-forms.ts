/**
 * Opsets 7–12: nodes whose older form differs from the opset-13 one (values given as
 * attributes that later became inputs, renamed or merged ops) are rewritten into the
 * opset-13 form before their mapper runs, so that each mapper knows one form. Forms whose
 * meaning changed in place (Softmax's 2-D coercion before 13) are handled by their mapper.
 */
import type { DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import type { AttrValue, OnnxNodeView } from './context';

/** The opset-13 form the mapper sees: the node and the opset it is written in. */
export interface UpgradedNode {
  view: OnnxNodeView;
  opset: number;
}

export interface LegacyResolver {
  /** Defines a constant value and returns the name that refers to it. */
  constant(hint: string, tensor: Tensor): string;
  /** The element type of a value already defined. */
  dtypeOf(name: string): DType;
}

const FORM_OPSET = 13;

/**
 * Ops whose meaning has not changed since opsets 1–6 (their `consumed_inputs` attribute, an
 * in-place hint, is ignored): a model of opset < 7 imports when it uses only these. Binary ops
 * (their `broadcast`/`axis` attributes), Reshape, Concat, Cast, Tile, Split, Pad and the other
 * ops whose form changed are not listed.
 */
export const STABLE_BEFORE_7 = new Set([
  'Abs', 'AveragePool', 'Ceil', 'Conv', 'Elu', 'Exp', 'Floor', 'GlobalAveragePool', 'GlobalMaxPool', 'HardSigmoid',
  'Hardmax', 'Identity', 'InstanceNormalization', 'LeakyRelu', 'Log', 'LogSoftmax', 'MatMul', 'MaxPool', 'Neg', 'Not',
  'Reciprocal', 'Relu', 'Selu', 'Sigmoid', 'Softmax', 'Softplus', 'Softsign', 'Sqrt', 'Tanh', 'Transpose',
]);

/** Where an op's older form ends: before this opset, the node is rewritten. */
const REWRITTEN_BEFORE: Record<string, number> = {
  Squeeze: 13,
  Unsqueeze: 13,
  Split: 13,
  Slice: 10,
  Pad: 11,
  Clip: 11,
  Dropout: 12,
  TopK: 10,
  Upsample: 10,
  Resize: 11,
  BatchNormalization: 9,
  Scatter: 12,
};

function without(attributes: ReadonlyMap<string, AttrValue>, names: readonly string[]): Map<string, AttrValue> {
  const out = new Map(attributes);
  for (const n of names) out.delete(n);
  return out;
}

const int64s = (values: readonly number[]): Tensor => Tensor.from('int64', [values.length], values.map((v) => BigInt(v)));

function ints(view: OnnxNodeView, name: string): number[] | undefined {
  const v = view.attributes.get(name);
  return Array.isArray(v) ? (v as number[]) : undefined;
}

function float(view: OnnxNodeView, name: string, fallback: number): number {
  const v = view.attributes.get(name);
  return typeof v === 'number' ? v : fallback;
}

/**
 * Rewrites `view` (a default-domain node of a model at `opset`) into its opset-13 form when its
 * form is older; otherwise returns it as is. Attribute values are checked by the mapper.
 */
export function upgradeLegacyForm(view: OnnxNodeView, opset: number, resolver: LegacyResolver): UpgradedNode {
  const before = REWRITTEN_BEFORE[view.opType];
  if ((view.domain !== '' && view.domain !== 'ai.onnx') || before === undefined || opset >= before) return { view, opset };
  const constant = (what: string, t: Tensor): string => resolver.constant(`${view.name}_${what}`, t);
  const inputs = [...view.inputs];
  const at = (i: number, name: string): void => {
    while (inputs.length < i) inputs.push('');
    inputs[i] = name;
  };
  const upgraded = (attributes: Map<string, AttrValue>, opType = view.opType, formOpset = FORM_OPSET): UpgradedNode => ({
    view: { ...view, opType, inputs, attributes },
    opset: formOpset,
  });
  switch (view.opType) {
    case 'Squeeze':
    case 'Unsqueeze': {
      const axes = ints(view, 'axes');
      if (axes !== undefined) at(1, constant('axes', int64s(axes)));
      return upgraded(without(view.attributes, ['axes']));
    }
    case 'Split': {
      const split = ints(view, 'split');
      if (split !== undefined && split.length > 0) at(1, constant('split', int64s(split)));
      return upgraded(without(view.attributes, ['split']));
    }
    case 'Slice': {
      const starts = ints(view, 'starts') ?? [];
      at(1, constant('starts', int64s(starts)));
      at(2, constant('ends', int64s(ints(view, 'ends') ?? [])));
      const axes = ints(view, 'axes');
      if (axes !== undefined) at(3, constant('axes', int64s(axes)));
      return upgraded(without(view.attributes, ['starts', 'ends', 'axes']));
    }
    case 'Pad': {
      at(1, constant('pads', int64s(ints(view, 'pads') ?? [])));
      const dtype = resolver.dtypeOf(view.inputs[0] ?? '');
      at(2, constant('value', Tensor.from(dtype, [], [float(view, 'value', 0)])));
      return upgraded(without(view.attributes, ['pads', 'value']));
    }
    case 'Clip': {
      const dtype = resolver.dtypeOf(view.inputs[0] ?? '');
      // Clip-6's defaults are the float range's ends: clamping to them is the identity.
      if (view.attributes.has('min')) at(1, constant('min', Tensor.from(dtype, [], [float(view, 'min', 0)])));
      if (view.attributes.has('max')) at(2, constant('max', Tensor.from(dtype, [], [float(view, 'max', 0)])));
      return upgraded(without(view.attributes, ['min', 'max']));
    }
    case 'Dropout':
      // Inference: the ratio is irrelevant (the op is the identity) and there is no training input.
      // The opset stays: before 10 the mask output has the input's type, which the mapper refuses.
      return upgraded(without(view.attributes, ['ratio', 'is_test']), 'Dropout', opset);
    case 'TopK': {
      const k = view.attributes.get('k');
      if (typeof k === 'number') at(1, constant('k', int64s([k])));
      return upgraded(without(view.attributes, ['k']));
    }
    case 'Upsample':
    case 'Resize': {
      // Upsample-7 (scales attribute), Upsample-9 and Resize-10 (scales input): output
      // floor(in * scale), coordinates asymmetric, nearest rounding down (as the ONNX version
      // converter maps them onto Resize-11).
      const scales = view.attributes.get('scales');
      const scalesName = Array.isArray(scales) ? constant('scales', Tensor.from('float32', [scales.length], scales as number[])) : (view.inputs[1] ?? '');
      inputs.length = 1;
      at(2, scalesName);
      const attributes = without(view.attributes, ['scales']);
      const mode = attributes.get('mode');
      // Upsample-7 called it "bilinear" in some exporters; ONNX only defines nearest and linear.
      if (mode === 'bilinear') attributes.set('mode', 'linear');
      attributes.set('coordinate_transformation_mode', 'asymmetric');
      attributes.set('nearest_mode', 'floor');
      return upgraded(attributes, 'Resize');
    }
    case 'BatchNormalization':
      // spatial=1 (the default) is opset 9's only form; spatial=0 is left for the mapper to refuse.
      if (view.attributes.get('spatial') === 0) return { view, opset };
      return upgraded(without(view.attributes, ['spatial', 'is_test', 'consumed_inputs']));
    case 'Scatter':
      // Scatter-9/11 is ScatterElements-11 under its old name.
      return upgraded(new Map(view.attributes), 'ScatterElements');
    default:
      return { view, opset };
  }
}
