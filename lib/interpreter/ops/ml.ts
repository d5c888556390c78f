/** Interpreter implementations of lib/ir/ops/ml.ts (tree ensembles). */
import { InternalError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import { StringTensor } from '../../ir/values';
import { decodeTreeEnsemble, evaluateTreeEnsemble, type Aggregate, type ClassifierInfo, type PostTransform, type TreeEnsemble } from '../../kernels/tree-ensemble';
import { defineImpl, type RuntimeArg } from '../registry';

function tensor(a: RuntimeArg | undefined, name: string): Tensor {
  if (!(a instanceof Tensor)) throw new InternalError(`tree ensemble: ${name} is not a tensor`);
  return a;
}

/** The node's ensemble, checked (lib/kernels/tree-ensemble.ts decodeTreeEnsemble). */
function ensemble(a: Readonly<Record<string, RuntimeArg>>, settings: Pick<TreeEnsemble, 'nTargets' | 'aggregate' | 'postTransform' | 'classifier'>): TreeEnsemble {
  return decodeTreeEnsemble(
    {
      nodes: tensor(a.nodes, 'nodes').data as Int32Array,
      thresholds: tensor(a.thresholds, 'thresholds').data as Float64Array,
      members: tensor(a.members, 'members').data as Float64Array,
      weights: tensor(a.weights, 'weights').data as Float64Array,
      roots: tensor(a.roots, 'roots').data as Int32Array,
      baseValues: tensor(a.base_values, 'base_values').data as Float64Array,
    },
    settings,
  );
}

/** Scores [rows, width] in `dtype` (float32 rounds, as onnxruntime's output cast does). */
function scoresTensor(dtype: DType, rows: number, width: number, scores: Float64Array): Tensor {
  return new Tensor(dtype, [rows, width], dtype === 'float64' ? scores : Float32Array.from(scores));
}

defineImpl('trt.tree_ensemble', (a) => {
  const width = a.n_targets as number;
  const e = ensemble(a, { nTargets: width, aggregate: a.aggregate_function as Aggregate, postTransform: a.post_transform as PostTransform, classifier: null });
  const { rows, scores } = evaluateTreeEnsemble(tensor(a.x, 'x'), e);
  return [scoresTensor(a.dtype as DType, rows, width, scores)];
});

defineImpl('trt.tree_ensemble_classifier', (a) => {
  const given = a.class_labels;
  let labels: BigInt64Array | readonly string[];
  if (given instanceof StringTensor) labels = given.data;
  else labels = tensor(given, 'class_labels').data as BigInt64Array;
  const classifier: ClassifierInfo = { labels, binaryCase: a.binary_case as boolean, weightsAllPositive: a.weights_all_positive as boolean };
  const e = ensemble(a, { nTargets: labels.length, aggregate: 'SUM', postTransform: a.post_transform as PostTransform, classifier });
  const { rows, scores, labels: out } = evaluateTreeEnsemble(tensor(a.x, 'x'), e);
  const label = out instanceof BigInt64Array ? new Tensor('int64', [rows], out) : new StringTensor([rows], out!);
  return [label, scoresTensor('float32', rows, labels.length, scores)];
});
