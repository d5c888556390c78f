/**
 * ONNX-ML ops (domain ai.onnx.ml), as scikit-learn pipelines export them:
 * - LabelEncoder (versions 1 to 4): a lookup from keys to values (label and category
 *   encodings). The keys, values and default come from attributes (`keys_strings` /
 *   `keys_int64s` / `keys_floats` / `keys_tensor`, the same for `values_*`, and
 *   `default_string` / `default_int64` / `default_float` / `default_tensor`) and become
 *   constants of a `trt.label_encoder` node, which the interpreter computes
 *   (lib/kernels/strings.ts labelEncode).
 * - Binarizer: 1 where x > threshold, else 0, in x's type (a comparison and a cast).
 * - ArrayFeatureExtractor: the elements of x's last axis at the given indices (an
 *   index_select; a 1-D x gives [1, n], as onnxruntime does).
 */
import type { Value } from '../../../ir/graph';
import { Tensor } from '../../../ir/tensor';
import { StringTensor } from '../../../ir/values';
import type { OnnxContext } from '../context';
import { defineOnnxOp, takesAnyValues } from '../registry';

const ML_DOMAIN = 'ai.onnx.ml';

/** The one of `{prefix}strings`, `{prefix}int64s`, `{prefix}floats`, `{prefix}tensor` the node gives, as a constant 1-D list. */
function listAttribute(ctx: OnnxContext, prefix: 'keys_' | 'values_'): Value {
  const given = ['strings', 'int64s', 'floats', 'tensor'].filter((s) => ctx.node.attributes.has(`${prefix}${s}`));
  if (given.length !== 1) ctx.bad(`exactly one of ${prefix}strings, ${prefix}int64s, ${prefix}floats and ${prefix}tensor must be given, got ${given.length === 0 ? 'none' : given.map((g) => prefix + g).join(', ')}`);
  const name = `${prefix}${given[0]}`;
  if (given[0] === 'strings') return ctx.stringConstant(new StringTensor([ctx.attrStrings(name).length], ctx.attrStrings(name)));
  if (given[0] === 'int64s') return ctx.constantValue(Tensor.from('int64', [ctx.attrInts(name).length], ctx.attrInts(name)), name);
  if (given[0] === 'floats') return ctx.constantValue(Tensor.from('float32', [ctx.attrFloats(name).length], ctx.attrFloats(name)), name);
  const t = ctx.node.attributes.get(name);
  if (t instanceof StringTensor) return ctx.stringConstant(t);
  if (!(t instanceof Tensor) || t.rank !== 1) return ctx.bad(`attribute ${name} must be a 1-D tensor`);
  return ctx.constantValue(t, name);
}

/** The default for values of `values`' kind: `default_tensor`, else `default_string` ("_Unused"), `default_int64` (-1) or `default_float` (-0). */
function defaultFor(ctx: OnnxContext, values: Value): Value {
  const t = ctx.node.attributes.get('default_tensor');
  for (const other of ['default_string', 'default_int64', 'default_float']) if (t !== undefined && ctx.node.attributes.has(other)) ctx.bad(`default_tensor and ${other} are both given`);
  if (t instanceof StringTensor) return ctx.stringConstant(t);
  if (t instanceof Tensor) return ctx.constantValue(t, 'default_tensor');
  if (t !== undefined) return ctx.bad('attribute default_tensor must be a tensor');
  if (values.type.kind === 'strings') return ctx.stringConstant(new StringTensor([1], [ctx.attrString('default_string', '_Unused')]));
  const dtype = values.type.kind === 'tensor' ? values.type.dtype : 'float32';
  if (dtype === 'int64') return ctx.constantValue(Tensor.from('int64', [1], [ctx.attrInt('default_int64', -1)]), 'default_int64');
  return ctx.constantValue(Tensor.from(dtype, [1], [ctx.attrFloat('default_float', -0)]), 'default_float');
}

defineOnnxOp(
  'LabelEncoder',
  (ctx) => {
    const x = ctx.input(0);
    const keys = listAttribute(ctx, 'keys_');
    const values = listAttribute(ctx, 'values_');
    // Each value kind's default attribute has a default of its own; those of the other kinds
    // mean nothing for this node, so importing without them changes nothing.
    for (const a of ['default_string', 'default_int64', 'default_float']) ctx.node.attributes.get(a);
    return [ctx.emit('trt.label_encoder', { x, keys, values, default_value: defaultFor(ctx, values) })];
  },
  ML_DOMAIN,
);

defineOnnxOp(
  'Binarizer',
  (ctx) => {
    const x = ctx.input(0);
    const above = ctx.emit('aten.gt.Scalar', { self: x, other: ctx.attrFloat('threshold', 0) });
    return [ctx.cast(above, x.tensorType.dtype)];
  },
  ML_DOMAIN,
);

defineOnnxOp(
  'ArrayFeatureExtractor',
  (ctx) => {
    const x = ctx.input(0);
    const indices = ctx.input(1);
    if (indices.tensorType.dtype !== 'int64') ctx.bad(`the indices must be int64, got ${indices.tensorType.dtype}`);
    const flat = ctx.emit('aten.reshape.default', { self: indices, shape: [-1] });
    const picked = ctx.emit('aten.index_select.default', { self: x, dim: -1, index: flat });
    return [x.tensorType.shape.length === 1 ? ctx.emit('aten.unsqueeze.default', { self: picked, dim: 0 }) : picked];
  },
  ML_DOMAIN,
);

takesAnyValues(['LabelEncoder'], ML_DOMAIN);
