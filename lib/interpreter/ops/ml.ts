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

/**
 * Ensembles already decoded, by their node table's array: the tables are the node's constants,
 * the same arrays at every run, and decoding checks every node (a forest of thousands of trees
 * would otherwise be re-checked for each row it is run on).
 */
const decoded = new WeakMap<object, { settings: string; arrays: readonly unknown[]; ensemble: TreeEnsemble }>();

const TABLES = ['thresholds', 'members', 'weights', 'roots', 'base_values'] as const;

/** The node's ensemble, checked (lib/kernels/tree-ensemble.ts decodeTreeEnsemble) once per node table and settings. */
function ensemble(a: Readonly<Record<string, RuntimeArg>>, settings: Pick<TreeEnsemble, 'nTargets' | 'aggregate' | 'postTransform' | 'classifier'>): TreeEnsemble {
  const key = tensor(a.nodes, 'nodes').data;
  const id = JSON.stringify([settings.nTargets, settings.aggregate, settings.postTransform, settings.classifier?.binaryCase, settings.classifier?.weightsAllPositive]);
  const arrays = [...TABLES.map((name) => tensor(a[name], name).data), settings.classifier?.labels];
  const hit = decoded.get(key);
  if (hit !== undefined && hit.settings === id && hit.arrays.every((x, i) => x === arrays[i])) return hit.ensemble;
  const e = decodeEnsemble(a, settings);
  decoded.set(key, { settings: id, arrays, ensemble: e });
  return e;
}

function decodeEnsemble(a: Readonly<Record<string, RuntimeArg>>, settings: Pick<TreeEnsemble, 'nTargets' | 'aggregate' | 'postTransform' | 'classifier'>): TreeEnsemble {
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
