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
 * - TreeEnsembleRegressor and TreeEnsembleClassifier (versions 1 and 3, with the
 *   `*_as_tensor` attributes of version 3) and TreeEnsemble (version 5, with BRANCH_MEMBER
 *   sets): the attributes are checked and normalized (lib/kernels/tree-ensemble.ts) into the
 *   constant tensors of a `trt.tree_ensemble` / `trt.tree_ensemble_classifier` node, which the
 *   interpreter computes as onnxruntime does (the kernel's comment lists where that departs
 *   from the ONNX text).
 */
import { BadModelError, UnsupportedOpError } from '../../../errors';
import type { Value } from '../../../ir/graph';
import { Tensor } from '../../../ir/tensor';
import { StringTensor } from '../../../ir/values';
import {
  classifierFromAttributes,
  encodeTreeEnsemble,
  regressorFromAttributes,
  treeEnsembleFromAttributes,
  type NamedValues,
  type TreeAttributesV3,
  type TreeAttributesV5,
  type TreeEnsemble,
} from '../../../kernels/tree-ensemble';
import { NODE_COLUMNS } from '../../../ir/tree-ensemble-form';
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

/** The element type tree ensembles compare and sum in for x (onnxruntime's threshold type): float64 for float64, float32 otherwise. */
function thresholdDtype(x: Value): 'float32' | 'float64' {
  return x.tensorType.dtype === 'float64' ? 'float64' : 'float32';
}

/** x of a tree ensemble: [N, F] of one of `dtypes` (ONNX's shape inference, which onnxruntime runs, takes rank 2 only). */
function ensembleInput(ctx: OnnxContext, dtypes: readonly string[]): Value {
  const x = ctx.input(0);
  const { dtype, shape } = x.tensorType;
  if (dtype === 'float16' && dtypes.includes('float64')) ctx.unsupported('X is float16: tree ensembles are computed for float32 and float64 X, the types onnxruntime computes them for');
  if (!dtypes.includes(dtype)) ctx.bad(`X must be ${dtypes.join(', ')}, got ${dtype}`);
  if (shape.length !== 2) ctx.bad(`X must be [N, F], got rank ${shape.length}`);
  return x;
}

/**
 * A 1-D tensor attribute of the given dtype, or null when absent. Another dtype is a bad model
 * where ONNX requires `dtype`, an unsupported form where only onnxruntime does (`onlyOnnxruntime`).
 */
function tensorList(ctx: OnnxContext, name: string, dtype: string, why: string, onlyOnnxruntime = false): Tensor | null {
  const t = ctx.attrTensor(name);
  if (t === null) return null;
  if (t.dtype !== dtype) {
    const message = `attribute ${name} holds ${t.dtype} values: it must be ${dtype} (${why})`;
    if (onlyOnnxruntime) ctx.unsupported(message);
    ctx.bad(message);
  }
  if (t.rank !== 1) ctx.bad(`attribute ${name} must be a 1-D tensor, got shape [${t.shape.join(', ')}]`);
  return t;
}

/** `name` (FLOATS) or `name`_as_tensor, whichever the node gives (empty when neither). */
function floatsOrTensor(ctx: OnnxContext, name: string, x: Value): NamedValues {
  const dtype = thresholdDtype(x);
  const t = tensorList(ctx, `${name}_as_tensor`, dtype, `onnxruntime takes ${name}_as_tensor in the type it compares ${x.tensorType.dtype} X in`, true);
  if (t !== null && ctx.node.attributes.has(name)) ctx.bad(`attributes ${name} and ${name}_as_tensor are both given: one of them holds the values`);
  if (t !== null) return { name: `${name}_as_tensor`, values: t.data as Float32Array | Float64Array };
  return { name, values: ctx.attrFloats(name, []) };
}

/** The attributes TreeEnsembleRegressor and TreeEnsembleClassifier share, `prefix` naming the leaf weights' attributes. */
function treeAttributesV3(ctx: OnnxContext, x: Value, prefix: 'target_' | 'class_'): TreeAttributesV3 {
  // Hit rates describe the training data: onnxruntime does not read them.
  ctx.ignoreAttributes('nodes_hitrates', 'nodes_hitrates_as_tensor');
  const ints = (name: string): number[] => ctx.attrInts(name, []);
  return {
    nodes_treeids: ints('nodes_treeids'),
    nodes_nodeids: ints('nodes_nodeids'),
    nodes_featureids: ints('nodes_featureids'),
    nodes_modes: ctx.attrStrings('nodes_modes', []),
    nodes_truenodeids: ints('nodes_truenodeids'),
    nodes_falsenodeids: ints('nodes_falsenodeids'),
    nodes_missing_value_tracks_true: ints('nodes_missing_value_tracks_true'),
    nodes_values: floatsOrTensor(ctx, 'nodes_values', x),
    base_values: floatsOrTensor(ctx, 'base_values', x),
    post_transform: ctx.attrString('post_transform', 'NONE'),
    prefix,
    treeids: ints(`${prefix}treeids`),
    nodeids: ints(`${prefix}nodeids`),
    ids: ints(`${prefix}ids`),
    weights: floatsOrTensor(ctx, `${prefix}weights`, x),
  };
}

/** `build()`, its refusal (naming the attribute) given as this node's. */
function built(ctx: OnnxContext, build: () => TreeEnsemble): TreeEnsemble {
  try {
    return build();
  } catch (e) {
    if (e instanceof BadModelError) return ctx.bad(e.message);
    if (e instanceof UnsupportedOpError) return ctx.unsupported(e.message);
    throw e;
  }
}

/** The ensemble's constant tensors, as the trt.tree_ensemble ops take them. */
function ensembleConstants(ctx: OnnxContext, e: TreeEnsemble): Record<string, Value> {
  const enc = encodeTreeEnsemble(e);
  const m = enc.thresholds.length;
  return {
    nodes: ctx.constantValue(new Tensor('int32', [m, NODE_COLUMNS.length], enc.nodes), 'nodes'),
    thresholds: ctx.constantValue(new Tensor('float64', [m], enc.thresholds), 'thresholds'),
    members: ctx.constantValue(new Tensor('float64', [enc.members.length], enc.members), 'members'),
    weights: ctx.constantValue(new Tensor('float64', [enc.weights.length / 2, 2], enc.weights), 'weights'),
    roots: ctx.constantValue(new Tensor('int32', [enc.roots.length], enc.roots), 'roots'),
    base_values: ctx.constantValue(new Tensor('float64', [enc.baseValues.length], enc.baseValues), 'base_values'),
  };
}

const V3_X_DTYPES = ['float32', 'float64', 'int64', 'int32'];

defineOnnxOp(
  'TreeEnsembleRegressor',
  (ctx) => {
    const x = ensembleInput(ctx, V3_X_DTYPES);
    const attrs = treeAttributesV3(ctx, x, 'target_');
    const nTargets = ctx.attrInt('n_targets');
    const aggregate = ctx.attrString('aggregate_function', 'SUM');
    const e = built(ctx, () => regressorFromAttributes({ ...attrs, n_targets: nTargets, aggregate_function: aggregate }));
    return [
      ctx.emit('trt.tree_ensemble', { x, ...ensembleConstants(ctx, e), n_targets: e.nTargets, aggregate_function: e.aggregate, post_transform: e.postTransform, dtype: 'float32' }),
    ];
  },
  ML_DOMAIN,
);

/** classlabels_strings or classlabels_int64s (exactly one of them): the labels and their constant. */
function classLabels(ctx: OnnxContext): { labels: BigInt64Array | string[]; value: Value } {
  const strings = ctx.attrStrings('classlabels_strings', []);
  const ints = ctx.attrInts('classlabels_int64s', []);
  if ((strings.length > 0) === (ints.length > 0)) ctx.bad(`exactly one of classlabels_strings and classlabels_int64s must name the classes, got ${strings.length > 0 ? 'both' : 'neither'}`);
  if (strings.length > 0) return { labels: strings, value: ctx.stringConstant(new StringTensor([strings.length], strings)) };
  // The importer reads INTS as numbers: a label past 2^53 would have been rounded.
  const unsafe = ints.find((v) => !Number.isSafeInteger(v));
  if (unsafe !== undefined) ctx.bad(`classlabels_int64s holds ${unsafe}, past 2^53, which this import cannot read exactly`);
  const labels = BigInt64Array.from(ints, (v) => BigInt(v));
  return { labels, value: ctx.constantValue(new Tensor('int64', [labels.length], labels), 'classlabels') };
}

defineOnnxOp(
  'TreeEnsembleClassifier',
  (ctx) => {
    const x = ensembleInput(ctx, V3_X_DTYPES);
    const attrs = treeAttributesV3(ctx, x, 'class_');
    const { labels, value } = classLabels(ctx);
    const e = built(ctx, () => classifierFromAttributes({ ...attrs, labels }));
    const c = e.classifier!;
    const node = ctx.call('trt.tree_ensemble_classifier', {
      x,
      ...ensembleConstants(ctx, e),
      class_labels: value,
      binary_case: c.binaryCase,
      weights_all_positive: c.weightsAllPositive,
      post_transform: e.postTransform,
    });
    return node.outputs;
  },
  ML_DOMAIN,
);

defineOnnxOp(
  'TreeEnsemble',
  (ctx) => {
    const x = ensembleInput(ctx, ['float32', 'float64']);
    const dtype = x.tensorType.dtype;
    // Hit rates describe the training data: onnxruntime does not read them.
    ctx.ignoreAttributes('nodes_hitrates');
    const why = 'the type of X, as ONNX requires';
    const required = (name: string): Tensor => tensorList(ctx, name, dtype, why) ?? ctx.bad(`attribute ${name} is required`);
    const modes = tensorList(ctx, 'nodes_modes', 'uint8', 'ONNX gives the modes as uint8') ?? ctx.bad('attribute nodes_modes is required');
    const membership = tensorList(ctx, 'membership_values', dtype, why);
    const attrs: TreeAttributesV5 = {
      nodes_featureids: ctx.attrInts('nodes_featureids'),
      nodes_modes: modes.data as Uint8Array,
      nodes_splits: required('nodes_splits').data as Float32Array | Float64Array,
      nodes_truenodeids: ctx.attrInts('nodes_truenodeids'),
      nodes_trueleafs: ctx.attrInts('nodes_trueleafs'),
      nodes_falsenodeids: ctx.attrInts('nodes_falsenodeids'),
      nodes_falseleafs: ctx.attrInts('nodes_falseleafs'),
      nodes_missing_value_tracks_true: ctx.attrInts('nodes_missing_value_tracks_true', []),
      membership_values: membership === null ? null : (membership.data as Float32Array | Float64Array),
      leaf_targetids: ctx.attrInts('leaf_targetids'),
      leaf_weights: required('leaf_weights').data as Float32Array | Float64Array,
      tree_roots: ctx.attrInts('tree_roots'),
      n_targets: ctx.attrInt('n_targets'),
      aggregate_function: ctx.attrInt('aggregate_function', 1),
      post_transform: ctx.attrInt('post_transform', 0),
    };
    const e = built(ctx, () => treeEnsembleFromAttributes(attrs));
    return [ctx.emit('trt.tree_ensemble', { x, ...ensembleConstants(ctx, e), n_targets: e.nTargets, aggregate_function: e.aggregate, post_transform: e.postTransform, dtype })];
  },
  ML_DOMAIN,
);
