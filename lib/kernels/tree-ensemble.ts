/**
 * Tree ensembles: ONNX-ML's TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and
 * 3) and TreeEnsemble (ai.onnx.ml 5), computed as onnxruntime's CPU kernels compute them, the
 * reference the exporters (skl2onnx, onnxmltools for XGBoost and LightGBM) are checked against.
 *
 * The three attribute forms are normalized into one description ({@link TreeEnsemble}): every
 * node of every tree in one numbering, in flat arrays (a branch's mode, feature, threshold,
 * children, missing-value direction and member set; a leaf's weights, each for one target or
 * class), the trees' roots, the number of targets, the aggregation, base values and transform.
 * The builders check what the model gives (ids out of range, cycles, unreachable nodes,
 * attributes of mismatched lengths) and throw a BadModelError naming the attribute; a form the
 * ONNX text allows but onnxruntime cannot compute is an UnsupportedOpError, also naming it.
 *
 * Where onnxruntime departs from the ONNX text, this follows onnxruntime (each place is
 * commented where the code does it):
 * - comparisons and sums are done in the "threshold type": float64 for a float64 x, float32
 *   otherwise (an int64 or int32 x is converted to float32 before it is compared), each step
 *   rounded as C++ float arithmetic rounds it; transforms are computed in float32;
 * - one target (a regressor of n_targets 1, a classifier of one class) takes each leaf's first
 *   weight only (or, for a leaf without weights, its own nodes_values entry), and applies no
 *   transform but PROBIT;
 * - a target or class that no leaf reached scores 0 in the output, whatever its base value;
 * - TreeEnsemble's post_transform 1 is LOGISTIC and 2 SOFTMAX (the ONNX text swaps them);
 * - a classifier of two classes decides its label as onnxruntime's binary special cases do
 *   (see classifyTwo), and a set-membership node of TreeEnsemble whose set is not small
 *   (31 members or more, or a member outside [0, 30]) compares the feature truncated to int32.
 */
import { BadInputError, BadModelError, InternalError, UnsupportedOpError } from '../errors';
import type { Tensor } from '../ir/tensor';
import { AGGREGATES, NODE_COLUMNS, POST_TRANSFORMS, type Aggregate, type PostTransform } from '../ir/tree-ensemble-form';

export type { Aggregate, PostTransform } from '../ir/tree-ensemble-form';

/** How a node decides: the branch modes (true branch taken when the comparison holds), or LEAF. */
export const NodeMode = {
  LEQ: 0,
  LT: 1,
  GTE: 2,
  GT: 3,
  EQ: 4,
  NEQ: 5,
  /** The feature equals one of the node's members. */
  MEMBER: 6,
  /** The feature truncated toward zero to an int32 (NaN and values out of range: -2^31) is one of the node's (integer) members. */
  MEMBER_INT32: 7,
  LEAF: 8,
} as const;


/** What a classifier adds: its labels, and the facts onnxruntime's two-class label rule reads. */
export interface ClassifierInfo {
  /** The class labels (classlabels_int64s or classlabels_strings); their count is the number of classes. */
  readonly labels: BigInt64Array | readonly string[];
  /** Two classes, and every class weight of the model for the same one. */
  readonly binaryCase: boolean;
  /** No class weight of the model is below 0. */
  readonly weightsAllPositive: boolean;
}

/** One normalized ensemble: nodes numbered 0..M-1 across all trees. */
export interface TreeEnsemble {
  /** Per node: its {@link NodeMode}. */
  readonly mode: Uint8Array;
  /** Per branch: the column of x it reads. */
  readonly feature: Int32Array;
  /** Per branch: the threshold (not read by the member modes). */
  readonly threshold: Float64Array;
  readonly trueChild: Int32Array;
  readonly falseChild: Int32Array;
  /** Per branch: 1 where a NaN feature takes the true branch. */
  readonly missingTrue: Uint8Array;
  /** Per member branch: its set is members[setStart, setEnd). */
  readonly setStart: Int32Array;
  readonly setEnd: Int32Array;
  readonly members: Float64Array;
  /** Per leaf: its weights are (weightTarget, weightValue)[weightStart, weightEnd), in the model's order. */
  readonly weightStart: Int32Array;
  readonly weightEnd: Int32Array;
  readonly weightTarget: Int32Array;
  readonly weightValue: Float64Array;
  /** Each tree's root, in the trees' order (a root may repeat: that tree then counts twice). */
  readonly roots: Int32Array;
  /** Targets (regression) or classes (classification): the width of the scores. */
  readonly nTargets: number;
  readonly aggregate: Aggregate;
  readonly postTransform: PostTransform;
  /** Empty, or as many as the aggregation adds (see the builders: one for one target, two for a two-class classifier). */
  readonly baseValues: Float64Array;
  readonly classifier: ClassifierInfo | null;
}

const fail = (message: string): never => {
  throw new BadModelError(message);
};

/** A form the ONNX text allows that onnxruntime, whose results this reproduces, does not compute. */
const unsupported = (message: string): never => {
  throw new UnsupportedOpError(message);
};

/** Grows the node arrays of a TreeEnsemble. */
class NodeList {
  readonly mode: number[] = [];
  readonly feature: number[] = [];
  readonly threshold: number[] = [];
  readonly trueChild: number[] = [];
  readonly falseChild: number[] = [];
  readonly missingTrue: number[] = [];
  readonly setStart: number[] = [];
  readonly setEnd: number[] = [];
  readonly members: number[] = [];
  readonly weightStart: number[] = [];
  readonly weightEnd: number[] = [];
  readonly weightTarget: number[] = [];
  readonly weightValue: number[] = [];

  /** Adds a branch (children filled in later with setChildren) and returns its index. */
  branch(mode: number, feature: number, threshold: number, missingTrue: boolean, set: readonly number[] = []): number {
    const i = this.mode.length;
    this.mode.push(mode);
    this.feature.push(feature);
    this.threshold.push(threshold);
    this.trueChild.push(-1);
    this.falseChild.push(-1);
    this.missingTrue.push(missingTrue ? 1 : 0);
    this.setStart.push(this.members.length);
    this.members.push(...set);
    this.setEnd.push(this.members.length);
    this.weightStart.push(0);
    this.weightEnd.push(0);
    return i;
  }

  /** Adds a leaf of the given (target, value) weights and returns its index. */
  leaf(weights: ReadonlyArray<readonly [number, number]>): number {
    const i = this.branch(NodeMode.LEAF, 0, 0, false);
    this.weightStart[i] = this.weightTarget.length;
    for (const [target, value] of weights) {
      this.weightTarget.push(target);
      this.weightValue.push(value);
    }
    this.weightEnd[i] = this.weightTarget.length;
    return i;
  }

  setChildren(i: number, whenTrue: number, whenFalse: number): void {
    this.trueChild[i] = whenTrue;
    this.falseChild[i] = whenFalse;
  }

  finish(rest: Pick<TreeEnsemble, 'roots' | 'nTargets' | 'aggregate' | 'postTransform' | 'baseValues' | 'classifier'>): TreeEnsemble {
    return {
      mode: Uint8Array.from(this.mode),
      feature: Int32Array.from(this.feature),
      threshold: Float64Array.from(this.threshold),
      trueChild: Int32Array.from(this.trueChild),
      falseChild: Int32Array.from(this.falseChild),
      missingTrue: Uint8Array.from(this.missingTrue),
      setStart: Int32Array.from(this.setStart),
      setEnd: Int32Array.from(this.setEnd),
      members: Float64Array.from(this.members),
      weightStart: Int32Array.from(this.weightStart),
      weightEnd: Int32Array.from(this.weightEnd),
      weightTarget: Int32Array.from(this.weightTarget),
      weightValue: Float64Array.from(this.weightValue),
      ...rest,
    };
  }
}

/**
 * Walks every tree from its root: `cycleAt` is a node that leads back to itself (-1 when none),
 * `reached` marks the nodes some root reaches. A shared subtree (two branches to one node) is
 * no cycle. Iterative, so a deep tree cannot overflow the stack.
 */
export function walkTrees(e: Pick<TreeEnsemble, 'mode' | 'trueChild' | 'falseChild' | 'roots'>): { cycleAt: number; reached: Uint8Array } {
  const n = e.mode.length;
  // 0: not seen; 1: on the current path; 2: done (every path below it ends in a leaf).
  const state = new Uint8Array(n);
  const step = new Uint8Array(n);
  const stack: number[] = [];
  for (const root of e.roots) {
    if (state[root] === 2) continue;
    state[root] = 1;
    stack.push(root);
    while (stack.length > 0) {
      const node = stack[stack.length - 1]!;
      if (e.mode[node] === NodeMode.LEAF || step[node] === 2) {
        state[node] = 2;
        stack.pop();
        continue;
      }
      const child = step[node] === 0 ? e.trueChild[node]! : e.falseChild[node]!;
      step[node]++;
      if (state[child] === 1) return { cycleAt: child, reached: state };
      if (state[child] === 0) {
        state[child] = 1;
        stack.push(child);
      }
    }
  }
  return { cycleAt: -1, reached: state };
}

// ---------------------------------------------------------------------------------------------
// TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and 3)

/** A list attribute under the name the model gave it (a plain one or its `_as_tensor` form). */
export interface NamedValues {
  readonly name: string;
  readonly values: ArrayLike<number>;
}

/** The attributes TreeEnsembleRegressor and TreeEnsembleClassifier share (absent lists: empty). */
export interface TreeAttributesV3 {
  readonly nodes_treeids: readonly number[];
  readonly nodes_nodeids: readonly number[];
  readonly nodes_featureids: readonly number[];
  readonly nodes_modes: readonly string[];
  readonly nodes_truenodeids: readonly number[];
  readonly nodes_falsenodeids: readonly number[];
  readonly nodes_missing_value_tracks_true: readonly number[];
  /** nodes_values or nodes_values_as_tensor. */
  readonly nodes_values: NamedValues;
  /** base_values or base_values_as_tensor. */
  readonly base_values: NamedValues;
  readonly post_transform: string;
  /** The leaf weights: `target_` (regressor) or `class_` (classifier) treeids, nodeids, ids and weights. */
  readonly prefix: 'target_' | 'class_';
  readonly treeids: readonly number[];
  readonly nodeids: readonly number[];
  readonly ids: readonly number[];
  /** target_weights / class_weights or their _as_tensor form. */
  readonly weights: NamedValues;
}

const V3_MODES: Readonly<Record<string, number>> = {
  BRANCH_LEQ: NodeMode.LEQ,
  BRANCH_LT: NodeMode.LT,
  BRANCH_GTE: NodeMode.GTE,
  BRANCH_GT: NodeMode.GT,
  BRANCH_EQ: NodeMode.EQ,
  BRANCH_NEQ: NodeMode.NEQ,
  LEAF: NodeMode.LEAF,
};

function sameLength(names: readonly string[], lists: ReadonlyArray<ArrayLike<unknown>>, optional: ReadonlySet<string> = new Set()): void {
  const n = lists[0]!.length;
  lists.forEach((list, i) => {
    if (list.length === n || (optional.has(names[i]!) && list.length === 0)) return;
    fail(`${names[i]} has ${list.length} entries and ${names[0]} ${n}: they describe one item per position${optional.has(names[i]!) ? ` (${names[i]} may also be left empty)` : ''}`);
  });
}

function checkTargets(ids: ArrayLike<number>, name: string, count: number, what: string): void {
  for (let i = 0; i < ids.length; i++) {
    const t = ids[i]!;
    if (!Number.isInteger(t) || t < 0 || t >= count) fail(`${name}[${i}] is ${t}, not one of the ${count} ${what} (0 to ${count - 1})`);
  }
}

/**
 * The trees of a version 1/3 node list: the positions of each run of one nodes_treeids value
 * (onnxruntime's trees: a run is a tree, its first node the root). A tree id that comes back
 * after another tree's nodes is refused: onnxruntime would count a second, partial tree.
 */
function treeRuns(treeids: readonly number[]): Array<{ tree: number; start: number; end: number }> {
  const runs: Array<{ tree: number; start: number; end: number }> = [];
  const seen = new Set<number>();
  for (let i = 0; i < treeids.length; i++) {
    const tree = treeids[i]!;
    if (runs.length > 0 && runs[runs.length - 1]!.tree === tree) {
      runs[runs.length - 1]!.end = i + 1;
      continue;
    }
    if (seen.has(tree)) unsupported(`nodes_treeids: the nodes of tree ${tree} are not listed together (position ${i} comes back to it after another tree's nodes; onnxruntime would count a second tree)`);
    seen.add(tree);
    runs.push({ tree, start: i, end: i + 1 });
  }
  return runs;
}

/** The common part of the version 1/3 builders; `nTargets` is n_targets or the number of classes. */
function fromV3(a: TreeAttributesV3, nTargets: number, aggregate: Aggregate, classifier: ClassifierInfo | null): TreeEnsemble {
  const n = a.nodes_treeids.length;
  sameLength(
    ['nodes_treeids', 'nodes_nodeids', 'nodes_featureids', 'nodes_modes', 'nodes_truenodeids', 'nodes_falsenodeids', a.nodes_values.name, 'nodes_missing_value_tracks_true'],
    [a.nodes_treeids, a.nodes_nodeids, a.nodes_featureids, a.nodes_modes, a.nodes_truenodeids, a.nodes_falsenodeids, a.nodes_values.values, a.nodes_missing_value_tracks_true],
    new Set(['nodes_missing_value_tracks_true']),
  );
  const p = a.prefix;
  sameLength([`${p}ids`, `${p}nodeids`, `${p}treeids`, a.weights.name], [a.ids, a.nodeids, a.treeids, a.weights.values]);
  checkTargets(a.ids, `${p}ids`, nTargets, classifier === null ? 'targets' : 'classes');
  const postTransform = a.post_transform as PostTransform;
  if (!POST_TRANSFORMS.includes(postTransform)) fail(`post_transform ${JSON.stringify(a.post_transform)} is none of ${POST_TRANSFORMS.join(', ')}`);

  // Positions of each tree's nodes by node id.
  const runs = treeRuns(a.nodes_treeids);
  const position = new Map<number, Map<number, number>>();
  for (const run of runs) {
    const ids = new Map<number, number>();
    for (let i = run.start; i < run.end; i++) {
      const id = a.nodes_nodeids[i]!;
      if (ids.has(id)) fail(`nodes_nodeids: node ${id} of tree ${run.tree} is listed twice (positions ${ids.get(id)} and ${i})`);
      ids.set(id, i);
    }
    position.set(run.tree, ids);
  }
  const modes = a.nodes_modes.map((m, i) => {
    const mode = V3_MODES[m];
    if (mode === undefined) fail(`nodes_modes[${i}] is ${JSON.stringify(m)}, none of ${Object.keys(V3_MODES).join(', ')}`);
    return mode!;
  });

  // Each leaf's weights in the model's order (onnxruntime sorts them by tree and node, stably);
  // weights given to a branch are ignored, as onnxruntime ignores them (old onnxmltools wrote some).
  const leafWeights = new Map<number, Array<[number, number]>>();
  for (let k = 0; k < a.ids.length; k++) {
    const at = position.get(a.treeids[k]!)?.get(a.nodeids[k]!);
    if (at === undefined) fail(`${p}nodeids[${k}] / ${p}treeids[${k}]: tree ${a.treeids[k]} has no node ${a.nodeids[k]}`);
    if (modes[at!] !== NodeMode.LEAF) continue;
    let list = leafWeights.get(at!);
    if (list === undefined) leafWeights.set(at!, (list = []));
    list.push([a.ids[k]!, a.weights.values[k]!]);
  }

  const out = new NodeList();
  for (let i = 0; i < n; i++) {
    if (modes[i] === NodeMode.LEAF) {
      let weights = leafWeights.get(i) ?? [];
      // One target: onnxruntime adds each leaf's first weight whatever its id, and a leaf
      // without weights adds its own nodes_values entry.
      if (nTargets === 1) weights = [[0, weights.length > 0 ? weights[0]![1] : a.nodes_values.values[i]!]];
      out.leaf(weights);
      continue;
    }
    const feature = a.nodes_featureids[i]!;
    if (!Number.isInteger(feature) || feature < 0) fail(`nodes_featureids[${i}] is ${feature}, not a feature index`);
    // onnxruntime takes the missing-value direction from entries equal to 1 only.
    out.branch(modes[i]!, feature, a.nodes_values.values[i]!, a.nodes_missing_value_tracks_true[i] === 1);
  }
  for (let i = 0; i < n; i++) {
    if (modes[i] === NodeMode.LEAF) continue;
    const ids = position.get(a.nodes_treeids[i]!)!;
    const child = (name: string, id: number): number => {
      const at = ids.get(id);
      if (at === undefined) fail(`${name}[${i}] is ${id}: tree ${a.nodes_treeids[i]} has no node ${id}`);
      if (at === i) fail(`${name}[${i}]: node ${id} of tree ${a.nodes_treeids[i]} points to itself`);
      return at!;
    };
    out.setChildren(i, child('nodes_truenodeids', a.nodes_truenodeids[i]!), child('nodes_falsenodeids', a.nodes_falsenodeids[i]!));
  }
  const roots = Int32Array.from(runs.map((r) => r.start));
  const e = out.finish({ roots, nTargets, aggregate, postTransform, baseValues: Float64Array.from(a.base_values.values), classifier });
  const { cycleAt, reached } = walkTrees(e);
  if (cycleAt >= 0) fail(`nodes_truenodeids / nodes_falsenodeids: node ${a.nodes_nodeids[cycleAt]} of tree ${a.nodes_treeids[cycleAt]} is reached again from below itself (a cycle)`);
  const lost = reached.findIndex((r) => r === 0);
  if (lost >= 0) {
    fail(`nodes_truenodeids / nodes_falsenodeids: node ${a.nodes_nodeids[lost]} of tree ${a.nodes_treeids[lost]} (position ${lost}) is not reached from the tree's root (its first listed node, id ${a.nodes_nodeids[e.roots[runs.findIndex((r) => r.tree === a.nodes_treeids[lost])]!]})`);
  }
  return e;
}

/** A TreeEnsembleRegressor (ai.onnx.ml 1 or 3). */
export function regressorFromAttributes(a: TreeAttributesV3 & { readonly n_targets: number; readonly aggregate_function: string }): TreeEnsemble {
  if (!Number.isInteger(a.n_targets) || a.n_targets < 1) fail(`n_targets must be at least 1, got ${a.n_targets}`);
  const aggregate = a.aggregate_function as Aggregate;
  if (!AGGREGATES.includes(aggregate)) fail(`aggregate_function ${JSON.stringify(a.aggregate_function)} is none of ${AGGREGATES.join(', ')}`);
  const base = a.base_values.values.length;
  if (base !== 0 && base !== a.n_targets) fail(`${a.base_values.name} has ${base} values: it needs none or one per target (${a.n_targets})`);
  return fromV3(a, a.n_targets, aggregate, null);
}

/** A TreeEnsembleClassifier (ai.onnx.ml 1 or 3); `labels` are classlabels_int64s or classlabels_strings. */
export function classifierFromAttributes(a: TreeAttributesV3 & { readonly labels: BigInt64Array | readonly string[] }): TreeEnsemble {
  const classes = a.labels.length;
  if (classes === 0) fail('classlabels_int64s or classlabels_strings must name at least one class');
  const base = a.base_values.values.length;
  // onnxruntime's rule: up to two base values for one or two classes (the second one is the
  // positive class's), else none or one per class.
  if (classes <= 2 ? base > 2 : base !== 0 && base !== classes) fail(`${a.base_values.name} has ${base} values: ${classes <= 2 ? 'at most 2' : `none or one per class (${classes})`} for ${classes} classes`);
  // One class: onnxruntime writes two scores into a one-column output with two base values,
  // and reads a second label for a string classifier that scores above 0.
  if (classes === 1 && base === 2) fail(`${a.base_values.name} has 2 values for a classifier of one class (onnxruntime writes past its score tensor)`);
  if (classes === 1 && typeof a.labels[0] === 'string') unsupported('classlabels_strings names one class: onnxruntime reads a second label for it');
  const weights = a.weights.values;
  let allPositive = true;
  for (let i = 0; i < weights.length; i++) if (weights[i]! < 0) allPositive = false;
  const classifier: ClassifierInfo = { labels: a.labels, binaryCase: classes === 2 && new Set(a.ids).size === 1, weightsAllPositive: allPositive };
  return fromV3(a, classes, 'SUM', classifier);
}

// ---------------------------------------------------------------------------------------------
// TreeEnsemble (ai.onnx.ml 5)

/** TreeEnsemble's attributes (absent optional lists: empty; membership_values: null when absent). */
export interface TreeAttributesV5 {
  readonly nodes_featureids: readonly number[];
  readonly nodes_modes: ArrayLike<number>;
  readonly nodes_splits: ArrayLike<number>;
  readonly nodes_truenodeids: readonly number[];
  readonly nodes_trueleafs: readonly number[];
  readonly nodes_falsenodeids: readonly number[];
  readonly nodes_falseleafs: readonly number[];
  readonly nodes_missing_value_tracks_true: readonly number[];
  readonly membership_values: ArrayLike<number> | null;
  readonly leaf_targetids: readonly number[];
  readonly leaf_weights: ArrayLike<number>;
  readonly tree_roots: readonly number[];
  readonly n_targets: number;
  readonly aggregate_function: number;
  readonly post_transform: number;
}

/** TreeEnsemble's aggregate_function codes. */
const V5_AGGREGATES: readonly Aggregate[] = ['AVERAGE', 'SUM', 'MIN', 'MAX'];
/**
 * TreeEnsemble's post_transform codes as onnxruntime reads them: 1 is LOGISTIC and 2 SOFTMAX
 * (its own enum's order), where the ONNX text says 1 SOFTMAX and 2 LOGISTIC.
 */
const V5_TRANSFORMS: readonly PostTransform[] = ['NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO', 'PROBIT'];
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * Each BRANCH_MEMBER node's set, in the order the member nodes come in nodes_modes (the ONNX
 * text's order; onnxruntime's too): each NaN ends a set, and values after the last NaN make
 * one more.
 */
function memberSets(modes: ArrayLike<number>, values: ArrayLike<number> | null): Map<number, number[]> {
  const sets = new Map<number, number[]>();
  const memberNodes: number[] = [];
  for (let i = 0; i < modes.length; i++) if (modes[i] === 6) memberNodes.push(i);
  if (memberNodes.length === 0) return sets;
  if (values === null) fail(`nodes_modes has ${memberNodes.length} BRANCH_MEMBER node(s) but membership_values is not given`);
  const lists: number[][] = [];
  let current: number[] = [];
  for (let k = 0; k < values!.length; k++) {
    const v = values![k]!;
    if (!Number.isNaN(v)) current.push(v);
    else {
      lists.push(current);
      current = [];
    }
  }
  if (current.length > 0) lists.push(current);
  if (lists.length !== memberNodes.length) fail(`membership_values holds ${lists.length} set(s) (each ended by NaN) for ${memberNodes.length} BRANCH_MEMBER node(s)`);
  lists.forEach((set, k) => {
    if (set.length === 0) fail(`membership_values: the set of BRANCH_MEMBER node ${memberNodes[k]} (set ${k}) is empty`);
    sets.set(memberNodes[k]!, set);
  });
  return sets;
}

/** A TreeEnsemble (ai.onnx.ml 5). */
export function treeEnsembleFromAttributes(a: TreeAttributesV5): TreeEnsemble {
  const m = a.nodes_featureids.length;
  sameLength(
    ['nodes_featureids', 'nodes_modes', 'nodes_splits', 'nodes_truenodeids', 'nodes_trueleafs', 'nodes_falsenodeids', 'nodes_falseleafs', 'nodes_missing_value_tracks_true'],
    [a.nodes_featureids, a.nodes_modes, a.nodes_splits, a.nodes_truenodeids, a.nodes_trueleafs, a.nodes_falsenodeids, a.nodes_falseleafs, a.nodes_missing_value_tracks_true],
    new Set(['nodes_missing_value_tracks_true']),
  );
  sameLength(['leaf_targetids', 'leaf_weights'], [a.leaf_targetids, a.leaf_weights]);
  if (!Number.isInteger(a.n_targets) || a.n_targets < 1) fail(`n_targets must be at least 1, got ${a.n_targets}`);
  checkTargets(a.leaf_targetids, 'leaf_targetids', a.n_targets, 'targets');
  const aggregate = V5_AGGREGATES[a.aggregate_function];
  if (aggregate === undefined) fail(`aggregate_function is ${a.aggregate_function}, not 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX)`);
  const postTransform = V5_TRANSFORMS[a.post_transform];
  if (postTransform === undefined) fail(`post_transform is ${a.post_transform}, not one of 0 to 4 (NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT as onnxruntime numbers them)`);
  for (let i = 0; i < m; i++) {
    const mode = a.nodes_modes[i]!;
    if (!Number.isInteger(mode) || mode < 0 || mode > 6) fail(`nodes_modes[${i}] is ${mode}, not a branch mode (0 BRANCH_LEQ to 6 BRANCH_MEMBER)`);
    const feature = a.nodes_featureids[i]!;
    if (!Number.isInteger(feature) || feature < 0) fail(`nodes_featureids[${i}] is ${feature}, not a feature index`);
  }
  const sets = memberSets(a.nodes_modes, a.membership_values);
  const leaves = a.leaf_targetids.length;

  // Interior node i is node i; leaf j is node m + j.
  const out = new NodeList();
  for (let i = 0; i < m; i++) {
    const set = sets.get(i);
    if (set === undefined) {
      out.branch(a.nodes_modes[i]!, a.nodes_featureids[i]!, a.nodes_splits[i]!, a.nodes_missing_value_tracks_true[i] === 1);
      continue;
    }
    // onnxruntime unrolls a small set of small non-negative members into equality tests (exact
    // comparison); any other set it tests with the feature truncated to int32, and takes only
    // members that are int32 values.
    const small = set.length < 31 && set.every((v) => v >= 0 && v <= 30);
    if (!small) {
      const bad = set.find((v) => !Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX);
      if (bad !== undefined) unsupported(`membership_values: the set of BRANCH_MEMBER node ${i} holds ${bad}; a set of 31 members or more, or with a member outside [0, 30], may hold only int32 values (onnxruntime tests those sets as integers)`);
    }
    out.branch(small ? NodeMode.MEMBER : NodeMode.MEMBER_INT32, a.nodes_featureids[i]!, 0, a.nodes_missing_value_tracks_true[i] === 1, set);
  }
  for (let j = 0; j < leaves; j++) out.leaf([[a.leaf_targetids[j]!, a.leaf_weights[j]!]]);
  const ref = (i: number, side: 'true' | 'false'): number => {
    const isLeaf = (side === 'true' ? a.nodes_trueleafs : a.nodes_falseleafs)[i] !== 0;
    const id = (side === 'true' ? a.nodes_truenodeids : a.nodes_falsenodeids)[i]!;
    const count = isLeaf ? leaves : m;
    if (!Number.isInteger(id) || id < 0 || id >= count) {
      fail(`nodes_${side}nodeids[${i}] is ${id}, not one of the ${count} ${isLeaf ? 'leaves (leaf_* entries' : 'interior nodes (nodes_* entries'}, as nodes_${side}leafs[${i}] says)`);
    }
    if (!isLeaf && id === i) fail(`nodes_${side}nodeids[${i}]: node ${i} points to itself`);
    return isLeaf ? m + id : id;
  };
  for (let i = 0; i < m; i++) out.setChildren(i, ref(i, 'true'), ref(i, 'false'));
  a.tree_roots.forEach((r, k) => {
    if (!Number.isInteger(r) || r < 0 || r >= m) fail(`tree_roots[${k}] is ${r}, not one of the ${m} interior nodes`);
  });
  const e = out.finish({ roots: Int32Array.from(a.tree_roots), nTargets: a.n_targets, aggregate: aggregate!, postTransform: postTransform!, baseValues: new Float64Array(0), classifier: null });
  const { cycleAt, reached } = walkTrees(e);
  if (cycleAt >= 0) fail(`nodes_truenodeids / nodes_falsenodeids: interior node ${cycleAt} is reached again from below itself (a cycle)`);
  // Leaves no node names are left alone (onnxruntime ignores them too); an interior node no
  // tree reaches is refused.
  for (let i = 0; i < m; i++) if (reached[i] === 0) fail(`nodes_truenodeids / nodes_falsenodeids / tree_roots: interior node ${i} is not reached from any of tree_roots`);
  return e;
}

// ---------------------------------------------------------------------------------------------
// The IR encoding: numeric tensors of the ensemble (lib/ir/ops/ml.ts trt.tree_ensemble)


/** The ensemble's arrays as the IR op's constant tensors carry them. */
export interface EncodedTreeEnsemble {
  /** int32 [M, 9]: {@link NODE_COLUMNS} per node. */
  readonly nodes: Int32Array;
  /** float64 [M]. */
  readonly thresholds: Float64Array;
  /** float64 [S]: the member sets, one after another. */
  readonly members: Float64Array;
  /** float64 [W, 2]: (target, value) per weight. */
  readonly weights: Float64Array;
  /** int32 [T]. */
  readonly roots: Int32Array;
  /** float64 [B]. */
  readonly baseValues: Float64Array;
}

export function encodeTreeEnsemble(e: TreeEnsemble): EncodedTreeEnsemble {
  const m = e.mode.length;
  const nodes = new Int32Array(m * NODE_COLUMNS.length);
  for (let i = 0; i < m; i++) {
    nodes.set([e.mode[i]!, e.feature[i]!, e.trueChild[i]!, e.falseChild[i]!, e.missingTrue[i]!, e.setStart[i]!, e.setEnd[i]!, e.weightStart[i]!, e.weightEnd[i]!], i * NODE_COLUMNS.length);
  }
  const weights = new Float64Array(e.weightTarget.length * 2);
  for (let k = 0; k < e.weightTarget.length; k++) {
    weights[2 * k] = e.weightTarget[k]!;
    weights[2 * k + 1] = e.weightValue[k]!;
  }
  return { nodes, thresholds: e.threshold.slice(), members: e.members.slice(), weights, roots: e.roots.slice(), baseValues: e.baseValues.slice() };
}

/**
 * The ensemble an IR node carries, checked (column ranges, children, weights, roots, no
 * cycle) so that evaluation ends however the tensors were made; a fault is a BadModelError.
 */
export function decodeTreeEnsemble(
  enc: EncodedTreeEnsemble,
  settings: Pick<TreeEnsemble, 'nTargets' | 'aggregate' | 'postTransform' | 'classifier'>,
): TreeEnsemble {
  const cols = NODE_COLUMNS.length;
  if (enc.nodes.length % cols !== 0) fail(`tree ensemble: nodes must be a [M, ${cols}] table, got ${enc.nodes.length} values`);
  const m = enc.nodes.length / cols;
  if (enc.thresholds.length !== m) fail(`tree ensemble: ${enc.thresholds.length} thresholds for ${m} nodes`);
  if (enc.weights.length % 2 !== 0) fail('tree ensemble: weights must be a [W, 2] table');
  const w = enc.weights.length / 2;
  const column = (c: number): Int32Array => Int32Array.from({ length: m }, (_, i) => enc.nodes[i * cols + c]!);
  const weightTarget = Int32Array.from({ length: w }, (_, k) => enc.weights[2 * k]!);
  const e: TreeEnsemble = {
    mode: Uint8Array.from(column(0)),
    feature: column(1),
    threshold: enc.thresholds,
    trueChild: column(2),
    falseChild: column(3),
    missingTrue: Uint8Array.from(column(4)),
    setStart: column(5),
    setEnd: column(6),
    members: enc.members,
    weightStart: column(7),
    weightEnd: column(8),
    weightTarget,
    weightValue: Float64Array.from({ length: w }, (_, k) => enc.weights[2 * k + 1]!),
    roots: enc.roots,
    baseValues: enc.baseValues,
    ...settings,
  };
  const inRange = (v: number, end: number): boolean => v >= 0 && v < end;
  const { nTargets, classifier } = settings;
  if (!Number.isInteger(nTargets) || nTargets < 1) fail(`tree ensemble: ${nTargets} targets`);
  if (classifier !== null && classifier.labels.length !== nTargets) fail(`tree ensemble: ${classifier.labels.length} labels for ${nTargets} classes`);
  const base = enc.baseValues.length;
  const baseFits = classifier === null ? base === 0 || base === nTargets : nTargets <= 2 ? base <= nTargets : base === 0 || base === nTargets;
  if (!baseFits) fail(`tree ensemble: ${base} base values for ${nTargets} ${classifier === null ? 'targets' : 'classes'}`);
  for (let i = 0; i < m; i++) {
    const mode = enc.nodes[i * cols]!;
    const raw = Array.from(enc.nodes.subarray(i * cols, (i + 1) * cols));
    if (!inRange(mode, NodeMode.LEAF + 1)) fail(`tree ensemble: node ${i} has mode ${mode}`);
    if (mode === NodeMode.LEAF) {
      if (!(raw[7]! >= 0 && raw[7]! <= raw[8]! && raw[8]! <= w)) fail(`tree ensemble: leaf ${i} has weights [${raw[7]}, ${raw[8]}) of ${w}`);
      continue;
    }
    if (raw[1]! < 0) fail(`tree ensemble: node ${i} reads feature ${raw[1]}`);
    if (!inRange(raw[2]!, m) || !inRange(raw[3]!, m)) fail(`tree ensemble: node ${i} has children ${raw[2]} and ${raw[3]} of ${m} nodes`);
    if (!(raw[5]! >= 0 && raw[5]! <= raw[6]! && raw[6]! <= enc.members.length)) fail(`tree ensemble: node ${i} has members [${raw[5]}, ${raw[6]}) of ${enc.members.length}`);
  }
  weightTarget.forEach((t, k) => {
    if (!inRange(t, settings.nTargets) || enc.weights[2 * k] !== t) fail(`tree ensemble: weight ${k} is for target ${enc.weights[2 * k]} of ${settings.nTargets}`);
  });
  enc.roots.forEach((r) => {
    if (!inRange(r, m)) fail(`tree ensemble: root ${r} of ${m} nodes`);
  });
  if (walkTrees(e).cycleAt >= 0) fail('tree ensemble: the trees have a cycle');
  return e;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

const f32 = Math.fround;
const same = (v: number): number => v;

/** An int64 converted to the nearest float32 (ties to even), as C++ converts it; exact past 2^53, where Number() would round first. */
function int64ToFloat32(v: bigint): number {
  const magnitude = v < 0n ? -v : v;
  if (magnitude <= 9007199254740992n) return f32(Number(v));
  const shift = magnitude.toString(2).length - 24;
  let q = magnitude >> BigInt(shift);
  const rest = magnitude - (q << BigInt(shift));
  const half = 1n << BigInt(shift - 1);
  if (rest > half || (rest === half && (q & 1n) === 1n)) q += 1n;
  const r = f32(Number(q) * 2 ** shift);
  return v < 0n ? -r : r;
}

/** x86's float-to-int32 truncation (cvttss2si), which onnxruntime's set test uses: NaN and values out of range give -2^31. */
function truncToInt32(v: number): number {
  if (Number.isNaN(v)) return INT32_MIN;
  const t = Math.trunc(v);
  return t < INT32_MIN || t > INT32_MAX ? INT32_MIN : t;
}

/** onnxruntime's logistic, in float32. */
function logistic(v: number): number {
  const p = f32(1 / f32(1 + f32(Math.exp(-Math.abs(v)))));
  return v < 0 ? f32(1 - p) : p;
}

/**
 * onnxruntime's probit, in float32: √2 · erfinv(2v − 1), erfinv by Winitzki's approximation
 * (a = 0.147): sign(x) · √(√(c² − ln(1 − x²)/a) − c) with c = 2/(πa) + ln(1 − x²)/2.
 */
function probit(v: number): number {
  const a = f32(0.147);
  const x = f32(f32(2 * v) - 1);
  const sign = x < 0 ? -1 : 1;
  const ln = f32(Math.log(f32(f32(1 - x) * f32(1 + x))));
  const c = f32(f32(2 / f32(f32(Math.PI) * a)) + f32(0.5 * ln));
  const inner = f32(f32(-c) + f32(Math.sqrt(f32(f32(c * c) - f32(f32(1 / a) * ln)))));
  return f32(f32(Math.SQRT2) * f32(sign * f32(Math.sqrt(inner))));
}

const FLT_MAX = 3.4028234663852886e38;
const SOFTMAX_ZERO_EPS = f32(1e-7);

/** onnxruntime's softmax of `v` in place, in float32 (SOFTMAX_ZERO: entries within 1e-7 of 0 stay 0 and are left out of the sum). */
function softmax(v: Float64Array, skipZeros: boolean): void {
  let max = -FLT_MAX;
  for (let i = 0; i < v.length; i++) if (v[i]! > max) max = v[i]!;
  const expNegMax = f32(Math.exp(-max));
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    if (!skipZeros || v[i]! > SOFTMAX_ZERO_EPS || v[i]! < -SOFTMAX_ZERO_EPS) {
      v[i] = f32(Math.exp(f32(v[i]! - max)));
      sum = f32(sum + v[i]!);
    } else v[i] = f32(v[i]! * expNegMax);
  }
  for (let i = 0; i < v.length; i++) v[i] = f32(v[i]! / sum);
}

/**
 * onnxruntime's write of a full score vector (two or more entries): a target no leaf reached
 * reads 0; every transform is applied, in float32. `out` gets the scores in the threshold type
 * (NONE) or float32.
 */
function writeScores(score: Float64Array, has: Uint8Array, transform: PostTransform, out: Float64Array, at: number): void {
  const n = score.length;
  const v = new Float64Array(n);
  for (let t = 0; t < n; t++) v[t] = has[t] ? score[t]! : 0;
  if (transform === 'NONE') {
    out.set(v, at);
    return;
  }
  for (let t = 0; t < n; t++) v[t] = f32(v[t]!);
  if (transform === 'SOFTMAX' || transform === 'SOFTMAX_ZERO') softmax(v, transform === 'SOFTMAX_ZERO');
  else for (let t = 0; t < n; t++) v[t] = transform === 'LOGISTIC' ? logistic(v[t]!) : probit(v[t]!);
  out.set(v, at);
}

/** How a two-class score vector of one entry is widened to two (onnxruntime's add_second_class). */
type SecondClass = 'none' | 'complement' | 'negation';

/**
 * onnxruntime's write of a two-class classifier's single score s (the positive class's, the
 * other one having no leaf): PROBIT writes probit(s) and leaves the second score 0; after a
 * label decided by the all-positive-weights rule, [1 − s, s] (LOGISTIC: of logistic(s)); after
 * one decided by sign, [−s, s] (LOGISTIC: [logistic(−s), logistic(s)]); otherwise [s, 0].
 */
function writeOneScore(s: number, second: SecondClass, transform: PostTransform, r: (v: number) => number, out: Float64Array, at: number): void {
  if (transform === 'PROBIT') {
    out[at] = probit(f32(s));
  } else if (second === 'complement') {
    const p = transform === 'LOGISTIC' ? logistic(f32(s)) : s;
    out[at] = transform === 'LOGISTIC' ? f32(1 - p) : r(1 - p);
    out[at + 1] = p;
  } else if (second === 'negation') {
    out[at] = transform === 'LOGISTIC' ? logistic(f32(-s)) : -s;
    out[at + 1] = transform === 'LOGISTIC' ? logistic(f32(s)) : s;
  } else out[at] = s;
}

/** The scores and, for a classifier, the labels of each row of x. */
export interface TreeEnsembleResult {
  readonly rows: number;
  /** [rows, nTargets], row-major: float32 values unless x is float64 and no transform applies. */
  readonly scores: Float64Array;
  /** A classifier's label per row (int64 labels or strings, as the classifier's labels are), else null. */
  readonly labels: BigInt64Array | string[] | null;
}

/** x's values as the threshold type compares them: float64 for a float64 x, float32 (rounded) otherwise. */
function featuresOf(x: Tensor): Float64Array {
  const d = x.data;
  if (x.dtype === 'float64' || x.dtype === 'float32') return Float64Array.from(d as Float64Array | Float32Array);
  if (x.dtype === 'int32') return Float64Array.from(d as Int32Array, (v) => f32(v));
  if (x.dtype === 'int64') return Float64Array.from(d as BigInt64Array, int64ToFloat32);
  throw new BadInputError(`tree ensemble: x must be float32, float64, int64 or int32, got ${x.dtype}`);
}

/**
 * Every row of x ([N, F]) through the ensemble, as onnxruntime computes it: each tree's leaf,
 * the leaves' weights aggregated per target in tree order, base values, the transform; for a
 * classifier, also each row's label.
 */
export function evaluateTreeEnsemble(x: Tensor, e: TreeEnsemble): TreeEnsembleResult {
  if (x.rank !== 2) throw new BadInputError(`tree ensemble: x must be [N, F], got shape [${x.shape.join(', ')}]`);
  const [rows, columns] = x.shape as [number, number];
  const m = e.mode.length;
  for (let i = 0; i < m; i++) {
    if (e.mode[i] !== NodeMode.LEAF && e.feature[i]! >= columns) throw new BadInputError(`tree ensemble: a node reads feature ${e.feature[i]} but x has ${columns} features`);
  }
  // The threshold type's rounding: float64 for a float64 x, float32 otherwise.
  const r = x.dtype === 'float64' ? same : f32;
  const features = featuresOf(x);
  const threshold = e.threshold.map(r);
  const members = e.members.map(r);
  const weight = e.weightValue.map(r);
  const base = e.baseValues.map(r);
  const sets: Array<Set<number> | undefined> = [];
  for (let i = 0; i < m; i++) if (e.mode[i] === NodeMode.MEMBER_INT32) sets[i] = new Set(members.subarray(e.setStart[i]!, e.setEnd[i]!));
  const trees = e.roots.length;
  const width = e.nTargets;
  const scores = new Float64Array(rows * width);
  const intLabels = e.classifier !== null && e.classifier.labels instanceof BigInt64Array ? new BigInt64Array(rows) : null;
  const stringLabels = e.classifier !== null && intLabels === null ? new Array<string>(rows) : null;

  /** The leaf `root`'s tree sends row `row` to. */
  const leafOf = (root: number, row: number): number => {
    let node = root;
    for (let steps = 0; e.mode[node] !== NodeMode.LEAF; steps++) {
      if (steps > m) throw new InternalError('tree ensemble: a tree has a cycle');
      const v = features[row * columns + e.feature[node]!]!;
      const t = threshold[node]!;
      let go: boolean;
      switch (e.mode[node]) {
        case NodeMode.LEQ:
          go = v <= t;
          break;
        case NodeMode.LT:
          go = v < t;
          break;
        case NodeMode.GTE:
          go = v >= t;
          break;
        case NodeMode.GT:
          go = v > t;
          break;
        case NodeMode.EQ:
          go = v === t;
          break;
        case NodeMode.NEQ:
          go = v !== t;
          break;
        case NodeMode.MEMBER: {
          go = false;
          for (let k = e.setStart[node]!; k < e.setEnd[node]! && !go; k++) go = v === members[k];
          break;
        }
        default:
          go = sets[node]!.has(truncToInt32(v));
      }
      node = go || (e.missingTrue[node] === 1 && Number.isNaN(v)) ? e.trueChild[node]! : e.falseChild[node]!;
    }
    return node;
  };

  const score = new Float64Array(width);
  const has = new Uint8Array(width);
  for (let row = 0; row < rows; row++) {
    score.fill(0);
    has.fill(0);
    for (let j = 0; j < trees; j++) {
      const leaf = leafOf(e.roots[j]!, row);
      for (let k = e.weightStart[leaf]!; k < e.weightEnd[leaf]!; k++) {
        const t = e.weightTarget[k]!;
        const w = weight[k]!;
        if (e.aggregate === 'MIN') score[t] = !has[t] || w < score[t]! ? w : score[t]!;
        else if (e.aggregate === 'MAX') score[t] = !has[t] || w > score[t]! ? w : score[t]!;
        else score[t] = r(score[t]! + w);
        has[t] = 1;
      }
    }
    const at = row * width;
    if (e.classifier !== null) {
      const label = classify(e, e.classifier, score, has, base, r, scores, at);
      if (intLabels !== null) intLabels[row] = label as bigint;
      else stringLabels![row] = label as string;
    } else if (width === 1) scores[at] = finishOne(e, score[0]!, has[0] === 1, base, trees, r);
    else {
      finishMany(e, score, has, base, trees, r);
      writeScores(score, has, e.postTransform, scores, at);
    }
  }
  return { rows, scores, labels: intLabels ?? stringLabels };
}

/** onnxruntime's one-target regression: base value and average, then PROBIT alone of the transforms. */
function finishOne(e: TreeEnsemble, score: number, has: boolean, base: Float64Array, trees: number, r: (v: number) => number): number {
  // A single base value is added (onnxruntime's origin); SUM and AVERAGE add to the sum even
  // when it is empty, MIN and MAX give the base value alone then.
  const origin = base.length === 1 ? base[0]! : 0;
  let s: number;
  if (e.aggregate === 'SUM') s = r(score + origin);
  else if (e.aggregate === 'AVERAGE') s = r(r(score / trees) + origin);
  else s = has ? r(score + origin) : origin;
  return e.postTransform === 'PROBIT' ? probit(f32(s)) : s;
}

/** onnxruntime's base values and average for two or more targets (in place). */
function finishMany(e: TreeEnsemble, score: Float64Array, has: Uint8Array, base: Float64Array, trees: number, r: (v: number) => number): void {
  const useBase = base.length === score.length;
  for (let t = 0; t < score.length; t++) {
    const b = useBase ? base[t]! : 0;
    if (e.aggregate === 'SUM') score[t] = useBase ? r(score[t]! + b) : score[t]!;
    else if (e.aggregate === 'AVERAGE') score[t] = useBase ? r(r(score[t]! / trees) + b) : r(score[t]! / trees);
    // MIN and MAX: the base value plus the score where a leaf gave one; the target still
    // reads 0 where none did (writeScores), as in onnxruntime.
    else score[t] = r(b + (has[t] ? score[t]! : 0));
  }
}

/** The label onnxruntime gives for label index or fixed value `k`: int64 labels take the 0/1 rule's value itself, string labels read it as an index. */
function labelAt(c: ClassifierInfo, k: number, literal: boolean): bigint | string {
  if (c.labels instanceof BigInt64Array) return literal ? BigInt(k) : c.labels[k]!;
  return c.labels[k]!;
}

/** A classifier row: scores written at `at`, the label returned. */
function classify(e: TreeEnsemble, c: ClassifierInfo, score: Float64Array, has: Uint8Array, base: Float64Array, r: (v: number) => number, out: Float64Array, at: number): bigint | string {
  const classes = score.length;
  if (classes === 1) {
    // One class: the sum plus a single base value; label 1 when it is above 0, else 0
    // (onnxruntime's fixed positive and negative labels); PROBIT alone transforms it.
    const s = base.length === 1 ? r(score[0]! + base[0]!) : score[0]!;
    writeOneScore(s, 'none', e.postTransform, r, out, at);
    return labelAt(c, s > 0 ? 1 : 0, true);
  }
  if (classes > 2) {
    for (let k = 0; k < base.length; k++) {
      score[k] = has[k] ? r(score[k]! + base[k]!) : base[k]!;
      has[k] = 1;
    }
    // The first class of the highest score among those a leaf (or base value) gave.
    let best = -1;
    for (let k = 0; k < classes; k++) if (has[k] && (best < 0 || score[k]! > score[best]!)) best = k;
    if (best < 0) throw new BadInputError('tree ensemble classifier: no leaf gives this row a class score and there are no base values (onnxruntime fails on such a row too)');
    writeScores(score, has, e.postTransform, out, at);
    return labelAt(c, best, false);
  }
  return classifyTwo(e, c, score, has, base, r, out, at);
}

/**
 * onnxruntime's two-class rule. Base values: with two, where the positive class has a score
 * it becomes base[1] + the negative class's score and the negative one its negation, else each
 * class adds its own; with one, the negative class adds it. Without a positive score (and
 * fewer than two base values) the row has a single score. The label: in the binary case (every
 * weight for one class) the positive class where the score is above 0.5 (all weights ≥ 0) or
 * above 0 (else); otherwise the fixed label 1 where the score is above 0, else 0.
 */
function classifyTwo(e: TreeEnsemble, c: ClassifierInfo, score: Float64Array, has: Uint8Array, base: Float64Array, r: (v: number) => number, out: Float64Array, at: number): bigint | string {
  let second: SecondClass = 'none';
  let single = false;
  if (base.length === 2) {
    if (has[1]) {
      score[1] = r(base[1]! + score[0]!);
      score[0] = -score[1]!;
    } else {
      score[1] = r(score[1]! + base[1]!);
      score[0] = r(score[0]! + base[0]!);
    }
  } else {
    if (base.length === 1) score[0] = r(score[0]! + base[0]!);
    else second = 'negation';
    single = !has[1];
  }
  const positive = has[1] ? score[1]! : has[0] ? score[0]! : 0;
  let label: bigint | string;
  if (c.binaryCase) {
    const cut = c.weightsAllPositive ? 0.5 : 0;
    second = c.weightsAllPositive ? 'complement' : 'negation';
    label = labelAt(c, positive > cut ? 1 : 0, false);
  } else label = labelAt(c, positive > 0 ? 1 : 0, true);
  if (single) writeOneScore(has[0] ? score[0]! : 0, second, e.postTransform, r, out, at);
  else writeScores(score, has, e.postTransform, out, at);
  return label;
}
