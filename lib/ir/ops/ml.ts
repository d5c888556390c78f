/**
 * ONNX-ML's tree ensembles (TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble): x
 * [N, F] and the ensemble as numeric constant tensors, the normalized form of
 * lib/kernels/tree-ensemble.ts (encodeTreeEnsemble; its words in ../tree-ensemble-form.ts):
 *
 *   nodes        int32 [M, 9]  per node: mode, feature, true child, false child, missing tracks
 *                              true, member set start and end, weight start and end
 *   thresholds   float64 [M]
 *   members      float64 [S]   the member sets, one after another
 *   weights      float64 [W, 2] (target, value) per leaf weight
 *   roots        int32 [T]     each tree's root node
 *   base_values  float64 [B]
 *
 * Only the CPU interpreter computes them (lib/interpreter/ops/ml.ts), as onnxruntime does:
 * comparisons and sums in float64 for a float64 x, float32 otherwise.
 */
import { stringTensorType, tensorType, Value, type StringTensorType, type TensorType, type ValueType } from '../graph';
import { AGGREGATES, NODE_COLUMNS, POST_TRANSFORMS, type Aggregate, type PostTransform } from '../tree-ensemble-form';
import type { Dim } from '../symbolic';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';

const X_DTYPES = ['float32', 'float64', 'int64', 'int32'];

/** The ensemble's tensors checked (dtype and rank); x's rows. */
function ensembleArgs(ctx: InferContext): Dim {
  const x = ctx.tensor('x');
  if (!X_DTYPES.includes(x.dtype)) ctx.fail(`x must be ${X_DTYPES.join(', ')}, got ${x.dtype}`);
  if (x.shape.length !== 2) ctx.fail(`x must be [N, F], got rank ${x.shape.length}`);
  const table = (name: string, dtype: string, rank: number, columns?: number): TensorType => {
    const t = ctx.tensor(name);
    if (t.dtype !== dtype || t.shape.length !== rank) ctx.fail(`${name} must be a rank-${rank} ${dtype} tensor, got ${t.dtype} of rank ${t.shape.length}`);
    if (columns !== undefined && typeof t.shape[1] === 'number' && t.shape[1] !== columns) ctx.fail(`${name} must have ${columns} columns, got ${t.shape[1]}`);
    return t;
  };
  const nodes = table('nodes', 'int32', 2, NODE_COLUMNS.length);
  const thresholds = table('thresholds', 'float64', 1);
  if (typeof nodes.shape[0] === 'number' && typeof thresholds.shape[0] === 'number' && nodes.shape[0] !== thresholds.shape[0]) ctx.fail(`${thresholds.shape[0]} thresholds for ${nodes.shape[0]} nodes`);
  table('members', 'float64', 1);
  table('weights', 'float64', 2, 2);
  table('roots', 'int32', 1);
  table('base_values', 'float64', 1);
  const transform = ctx.str('post_transform');
  if (!POST_TRANSFORMS.includes(transform as PostTransform)) ctx.fail(`post_transform must be one of ${POST_TRANSFORMS.join(', ')}, got ${JSON.stringify(transform)}`);
  return x.shape[0]!;
}

// Regression (TreeEnsembleRegressor, TreeEnsemble): scores [N, n_targets] of dtype float32 or float64.
defineOp(
  'trt.tree_ensemble(Tensor x, Tensor nodes, Tensor thresholds, Tensor members, Tensor weights, Tensor roots, Tensor base_values, int n_targets, str aggregate_function, str post_transform, ScalarType dtype) -> Tensor',
  (ctx) => {
    const rows = ensembleArgs(ctx);
    const targets = ctx.int('n_targets');
    if (targets < 1) ctx.fail(`n_targets must be at least 1, got ${targets}`);
    const aggregate = ctx.str('aggregate_function');
    if (!AGGREGATES.includes(aggregate as Aggregate)) ctx.fail(`aggregate_function must be one of ${AGGREGATES.join(', ')}, got ${JSON.stringify(aggregate)}`);
    const dtype = ctx.dtype('dtype');
    if (dtype !== 'float32' && dtype !== 'float64') ctx.fail(`dtype must be float32 or float64, got ${dtype}`);
    return [tensorType(dtype!, [rows, targets])];
  },
);

// Classification (TreeEnsembleClassifier): each row's label (of class_labels' kind: int64 or
// strings) and its class scores [N, classes] (float32). binary_case and weights_all_positive
// are the facts of the model's class weights onnxruntime's two-class rule reads.
defineOp(
  'trt.tree_ensemble_classifier(Tensor x, Tensor nodes, Tensor thresholds, Tensor members, Tensor weights, Tensor roots, Tensor base_values, Any class_labels, bool binary_case, bool weights_all_positive, str post_transform) -> (Any, Tensor)',
  (ctx): ValueType[] => {
    const rows = ensembleArgs(ctx);
    ctx.bool('binary_case');
    ctx.bool('weights_all_positive');
    const labels = ctx.arg('class_labels');
    const type = labels instanceof Value ? labels.type : null;
    const isStrings = type?.kind === 'strings';
    const shape = type !== null && (isStrings || (type.kind === 'tensor' && type.dtype === 'int64')) ? (type as TensorType | StringTensorType).shape : null;
    if (shape === null || shape.length !== 1) return ctx.fail('class_labels must be a 1-D int64 or string tensor');
    const classes = shape[0]!;
    if (typeof classes === 'number' && classes < 1) ctx.fail('class_labels must name at least one class');
    return [isStrings ? stringTensorType([rows]) : tensorType('int64', [rows]), tensorType('float32', [rows, classes])];
  },
);
