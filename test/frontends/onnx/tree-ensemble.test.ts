/**
 * ONNX-ML's tree ensembles (TreeEnsembleRegressor and TreeEnsembleClassifier of ai.onnx.ml 1
 * and 3, TreeEnsemble of ai.onnx.ml 5) through loadOnnx + interpretValues
 * (lib/kernels/tree-ensemble.ts), each model compared with onnxruntime-node on the same bytes.
 * Every comparison also checks that the outputs are not trivial (several distinct values,
 * labels that differ between rows), so that it can fail. The one form onnxruntime-node has no
 * kernel for (an int64 or int32 X of TreeEnsembleRegressor) is compared with values worked out
 * by hand from the ONNX text. Then compile() (the ensembles run in fallback segments), and
 * malformed attributes, each refused naming the attribute: E_BAD_MODEL, or E_UNSUPPORTED_OP for
 * a form the ONNX text allows but onnxruntime does not compute.
 */
import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpretValues } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { StringTensor, type GraphValue } from '../../../lib/ir/values';
import { decodeTreeEnsemble, encodeTreeEnsemble, evaluateTreeEnsemble, NodeMode, regressorFromAttributes, type TreeEnsemble } from '../../../lib/kernels/tree-ensemble';
import { expectClose, FP32 } from '../../helpers/compare';
import { expectSameGraphValues } from '../../helpers/graph-values';
import { closeOrt, runOrtModelValues } from '../../helpers/ort-single-op';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

afterAll(closeOrt);

const A = onnx.AttributeProto.AttributeType;
const ELEM: Record<string, number> = { float32: 1, uint8: 2, int32: 6, int64: 7, string: 8, float16: 10, float64: 11 };

type Attr = { ints: readonly number[] } | { floats: readonly number[] } | { strings: readonly string[] } | { int: number } | { string: string } | { tensor: Tensor };
type Attrs = Readonly<Record<string, Attr | undefined>>;

function tensorProto(name: string, t: Tensor): unknown {
  return { name, dims: [...t.shape], dataType: ELEM[t.dtype], rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice() };
}

function attribute(name: string, v: Attr): unknown {
  if ('ints' in v) return { name, type: A.INTS, ints: [...v.ints] };
  if ('floats' in v) return { name, type: A.FLOATS, floats: [...v.floats] };
  if ('strings' in v) return { name, type: A.STRINGS, strings: v.strings.map((s) => Buffer.from(s, 'utf8')) };
  if ('int' in v) return { name, type: A.INT, i: v.int };
  if ('string' in v) return { name, type: A.STRING, s: Buffer.from(v.string, 'utf8') };
  return { name, type: A.TENSOR, t: tensorProto(name, v.tensor) };
}

/** One ai.onnx.ml node `op` (domain version `version`) from X ([N, features] of `xElem`) to `outputs`. */
function mlModel(op: string, version: number, xElem: string, features: number, outputs: ReadonlyArray<readonly [string, string]>, attrs: Attrs): Uint8Array {
  const io = (name: string, elem: string, dims?: ReadonlyArray<number | string>): unknown => ({
    name,
    type: { tensorType: { elemType: ELEM[elem], ...(dims === undefined ? {} : { shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } }) } },
  });
  const attribute_ = Object.entries(attrs).flatMap(([k, v]) => (v === undefined ? [] : [attribute(k, v)]));
  return onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 9,
      opsetImport: [{ domain: 'ai.onnx.ml', version }, { domain: '', version: 20 }],
      graph: onnx.GraphProto.create({
        name: 'g',
        node: [onnx.NodeProto.create({ opType: op, domain: 'ai.onnx.ml', name: 'trees', input: ['X'], output: outputs.map(([n]) => n), attribute: attribute_ })],
        input: [io('X', xElem, ['N', features])],
        output: outputs.map(([n, e]) => io(n, e)),
      }),
    }),
  ).finish();
}

const f32 = (shape: readonly number[], v: readonly number[]): Tensor => Tensor.from('float32', shape, v);
const f64 = (shape: readonly number[], v: readonly number[]): Tensor => Tensor.from('float64', shape, v);
const i64 = (shape: readonly number[], v: ReadonlyArray<number | bigint>): Tensor => new Tensor('int64', shape, BigInt64Array.from(v, (x) => BigInt(x)));

/** How many distinct values (or strings) a result holds. */
function distinct(v: GraphValue): number {
  if (v instanceof StringTensor) return new Set(v.data).size;
  return new Set(Array.from((v as Tensor).data as ArrayLike<number | bigint>, (x) => String(x))).size;
}

/**
 * Our outputs and onnxruntime's on the same model: labels exactly, scores to FP32. Each output
 * must hold at least `minDistinct` distinct values, so that a broken import cannot pass by
 * giving the same constant both ways.
 */
async function expectSameAsOrt(bytes: Uint8Array, x: Tensor, minDistinct = 2): Promise<GraphValue[]> {
  const expected = await runOrtModelValues(bytes, [x]);
  const actual = interpretValues(loadOnnx(bytes), [x]);
  expectSameGraphValues(actual, expected);
  for (const a of actual) expect(distinct(a)).toBeGreaterThanOrEqual(minDistinct);
  return actual;
}

/** The numbers of a float output. */
const numbers = (v: GraphValue): number[] => (v as Tensor).toArray();

// ---------------------------------------------------------------------------------------------
// Trees written as nested objects, flattened into the attributes of each version.

interface V3Branch {
  readonly feature: number;
  readonly mode: string;
  readonly value: number;
  readonly t: V3Node;
  readonly f: V3Node;
  readonly missingTrue?: boolean;
}
/** A leaf: its (target or class, weight) pairs. */
interface V3Leaf {
  readonly w: ReadonlyArray<readonly [number, number]>;
}
type V3Node = V3Branch | V3Leaf;

const leaf = (...w: Array<readonly [number, number]>): V3Leaf => ({ w });
const br = (feature: number, mode: string, value: number, t: V3Node, f: V3Node, missingTrue = false): V3Branch => ({ feature, mode, value, t, f, missingTrue });

/** Version 1/3 attributes of `trees` (node ids in pre-order from 0 in each tree); `prefix` names the weights. */
function v3Attributes(trees: readonly V3Node[], prefix: 'target_' | 'class_'): Record<string, Attr> {
  const n = { treeids: [] as number[], nodeids: [] as number[], featureids: [] as number[], modes: [] as string[], values: [] as number[], t: [] as number[], f: [] as number[], mt: [] as number[] };
  const w = { treeids: [] as number[], nodeids: [] as number[], ids: [] as number[], weights: [] as number[] };
  trees.forEach((root, tree) => {
    let next = 0;
    const visit = (node: V3Node): number => {
      const id = next++;
      const at = n.treeids.length;
      n.treeids.push(tree);
      n.nodeids.push(id);
      if ('w' in node) {
        n.featureids.push(0);
        n.modes.push('LEAF');
        n.values.push(0);
        n.t.push(0);
        n.f.push(0);
        n.mt.push(0);
        for (const [target, weight] of node.w) {
          w.treeids.push(tree);
          w.nodeids.push(id);
          w.ids.push(target);
          w.weights.push(weight);
        }
        return id;
      }
      n.featureids.push(node.feature);
      n.modes.push(node.mode);
      n.values.push(node.value);
      n.mt.push(node.missingTrue ? 1 : 0);
      n.t.push(-1);
      n.f.push(-1);
      n.t[at] = visit(node.t);
      n.f[at] = visit(node.f);
      return id;
    };
    visit(root);
  });
  return {
    nodes_treeids: { ints: n.treeids },
    nodes_nodeids: { ints: n.nodeids },
    nodes_featureids: { ints: n.featureids },
    nodes_modes: { strings: n.modes },
    nodes_values: { floats: n.values },
    nodes_truenodeids: { ints: n.t },
    nodes_falsenodeids: { ints: n.f },
    nodes_missing_value_tracks_true: { ints: n.mt },
    [`${prefix}treeids`]: { ints: w.treeids },
    [`${prefix}nodeids`]: { ints: w.nodeids },
    [`${prefix}ids`]: { ints: w.ids },
    [`${prefix}weights`]: { floats: w.weights },
  };
}

const REG_OUT: ReadonlyArray<readonly [string, string]> = [['Y', 'float32']];
const regressor = (attrs: Attrs, xElem = 'float32', features = 2, version = 3): Uint8Array => mlModel('TreeEnsembleRegressor', version, xElem, features, REG_OUT, attrs);
const classifier = (attrs: Attrs, labelElem = 'int64', xElem = 'float32', features = 2): Uint8Array =>
  mlModel('TreeEnsembleClassifier', 3, xElem, features, [['label', labelElem], ['probabilities', 'float32']], attrs);

/** Three trees over two features, two targets; every branch mode. */
const FOREST: readonly V3Node[] = [
  br(0, 'BRANCH_LEQ', 0.5, br(1, 'BRANCH_LT', 2, leaf([0, 1], [1, -0.5]), leaf([0, 2], [1, 0.25])), leaf([0, -1], [1, 3])),
  br(1, 'BRANCH_GTE', 1, leaf([0, 0.5], [1, 0.5]), br(0, 'BRANCH_GT', 2, leaf([0, 4]), leaf([1, -2]))),
  br(0, 'BRANCH_EQ', 3, leaf([0, 10]), br(1, 'BRANCH_NEQ', 0, leaf([0, 0.125], [1, 1]), leaf([1, 7]))),
];
const X8 = f32([8, 2], [0, 0, 0.5, 1, 1, 3, 3, 0, 3, 5, -1, 2, 2.5, 0.5, 0.25, 1.5]);

/** The forest with each weight mapped by `f`. */
function mapWeights(trees: readonly V3Node[], f: (w: number) => number): V3Node[] {
  const map = (node: V3Node): V3Node => ('w' in node ? { w: node.w.map(([t, w]) => [t, f(w)] as const) } : { ...node, t: map(node.t), f: map(node.f) });
  return trees.map(map);
}

describe('TreeEnsembleRegressor, against onnxruntime', () => {
  test('SUM with base values and AVERAGE, two targets, every branch mode', async () => {
    const sum = await expectSameAsOrt(regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, base_values: { floats: [0.5, -1] } }), X8, 5);
    // Row [0, 0]: tree 0 → [1, -0.5], tree 1 → x0 > 2 false → target 1 −2, tree 2 → x1 ≠ 0 false → target 1 7.
    expect(numbers(sum[0]!).slice(0, 2)).toEqual([1 + 0.5, -0.5 - 2 + 7 - 1]);
    await expectSameAsOrt(regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, aggregate_function: { string: 'AVERAGE' } }), X8, 5);
  });

  test('one loaded graph run again on other rows, and two ensembles in turn, each matches onnxruntime (the decoded ensemble is kept per node table)', async () => {
    const sumBytes = regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, base_values: { floats: [0.5, -1] } });
    const maxBytes = regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, aggregate_function: { string: 'MAX' } });
    const graphs = [loadOnnx(sumBytes), loadOnnx(maxBytes)];
    const rows = [X8, f32([3, 2], [3, 1, -1, 0, 2.5, 5])];
    for (const x of rows) {
      for (const [k, bytes] of [sumBytes, maxBytes].entries()) {
        expectSameGraphValues(interpretValues(graphs[k]!, [x]), await runOrtModelValues(bytes, [x]));
      }
    }
  });

  test('MIN and MAX', async () => {
    for (const aggregate of ['MIN', 'MAX']) {
      await expectSameAsOrt(regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, base_values: { floats: [1, 2] }, aggregate_function: { string: aggregate } }), X8, 4);
    }
  });

  test('LOGISTIC, SOFTMAX, SOFTMAX_ZERO and PROBIT over two targets', async () => {
    for (const transform of ['LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO']) {
      const [y] = await expectSameAsOrt(regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, post_transform: { string: transform } }), X8, 5);
      expect(numbers(y!).every((v) => v >= 0 && v <= 1)).toBe(true);
    }
    // PROBIT of averages inside (0, 1).
    const probit = mapWeights(FOREST, (w) => (w + 2.5) / 13);
    const [y] = await expectSameAsOrt(regressor({ ...v3Attributes(probit, 'target_'), n_targets: { int: 2 }, aggregate_function: { string: 'AVERAGE' }, post_transform: { string: 'PROBIT' } }), X8, 5);
    expect(numbers(y!).some((v) => v < 0) && numbers(y!).some((v) => v > 0)).toBe(true);
  });

  test('one target: the first weight of each leaf; PROBIT applies, LOGISTIC and SOFTMAX do not (onnxruntime; the ONNX text applies every transform)', async () => {
    const trees = [br(0, 'BRANCH_LEQ', 1, leaf([0, 0.25], [0, 5]), br(1, 'BRANCH_LEQ', 1, leaf([0, 0.5]), leaf([0, 0.75])))];
    const x = f32([4, 2], [0, 0, 2, 0, 2, 2, 1, 9]);
    const [plain] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 1 }, base_values: { floats: [0.125] } }), x, 3);
    // The first leaf's second weight (5) is not added: onnxruntime keeps one weight per leaf for one target.
    expect(numbers(plain!)).toEqual([0.375, 0.625, 0.875, 0.375]);
    const [logistic] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 1 }, base_values: { floats: [0.125] }, post_transform: { string: 'LOGISTIC' } }), x, 3);
    expect(numbers(logistic!)).toEqual(numbers(plain!));
    const [probit] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 1 }, base_values: { floats: [0.125] }, post_transform: { string: 'PROBIT' } }), x, 3);
    expect(numbers(probit!)[0]).toBeCloseTo(-0.3186, 3);
  });

  test('a target no leaf reaches reads 0, whatever its base value (onnxruntime)', async () => {
    const trees = [br(0, 'BRANCH_LEQ', 1, leaf([0, 1.5]), leaf([0, 2.5]))];
    const [y] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 2 }, base_values: { floats: [10, 20] } }), f32([2, 2], [0, 0, 3, 0]), 3);
    expect(numbers(y!)).toEqual([11.5, 0, 12.5, 0]);
    // SOFTMAX_ZERO leaves such a target at 0 (SOFTMAX gives it exp(−max) / sum).
    const [z] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 2 }, post_transform: { string: 'SOFTMAX_ZERO' } }), f32([2, 2], [0, 0, 3, 0]));
    expect(numbers(z!)).toEqual([1, 0, 1, 0]);
  });

  test('NaN features: nodes_missing_value_tracks_true sends them to the true branch, else they compare false', async () => {
    const trees = [br(0, 'BRANCH_LT', 1, br(1, 'BRANCH_GT', 0, leaf([0, 1]), leaf([0, 2])), br(1, 'BRANCH_LEQ', 5, leaf([0, 3]), leaf([0, 4]), true), true)];
    const x = f32([6, 2], [NaN, 1, NaN, NaN, 2, NaN, 0, NaN, 2, 6, 0, 1]);
    const [y] = await expectSameAsOrt(regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 1 } }), x, 4);
    expect(numbers(y!)).toEqual([1, 2, 3, 2, 4, 1]);
  });

  test('float64 X compares in float64: thresholds, weights and base values as tensors (version 3)', async () => {
    const attrs = v3Attributes([br(0, 'BRANCH_LEQ', 0, leaf([0, 0]), leaf([0, 0]))], 'target_');
    const bytes = regressor(
      {
        ...attrs,
        nodes_values: undefined,
        nodes_values_as_tensor: { tensor: f64([3], [0.1, 0, 0]) },
        target_weights: undefined,
        target_weights_as_tensor: { tensor: f64([2], [1e-9, 2.000000001]) },
        base_values_as_tensor: { tensor: f64([1], [1]) },
        n_targets: { int: 1 },
      },
      'float64',
      1,
    );
    // 0.1000000005 is above 0.1 in float64 but not in float32 (both round to the same float).
    const [y] = await expectSameAsOrt(bytes, f64([3, 1], [0.1000000005, 0.1, 0.0999999995]));
    expect(numbers(y!)).toEqual([Math.fround(3.000000001), Math.fround(1.000000001), Math.fround(1.000000001)]);
  });

  test('int64 and int32 X (no onnxruntime kernel: values worked out by hand from the ONNX text)', () => {
    // As onnxruntime's int64 classifier does, integers compare with the float32 thresholds
    // after conversion to float32: 16777217 becomes 16777216, which is ≤ 16777216.5 (stored
    // as the float32 16777216), so it takes the true branch (an exact comparison would not);
    // 16777219 becomes 16777220, above it.
    const trees = [br(0, 'BRANCH_LEQ', 16777216.5, br(0, 'BRANCH_GT', 40, leaf([0, 2]), leaf([0, 1])), leaf([0, 3]))];
    const bytes = (elem: string): Uint8Array => regressor({ ...v3Attributes(trees, 'target_'), n_targets: { int: 1 } }, elem, 1);
    const [y64] = interpretValues(loadOnnx(bytes('int64')), [i64([5, 1], [16777217, 16777219, -5, 2n ** 40n + 1n, 41])]);
    expect(numbers(y64!)).toEqual([2, 3, 1, 3, 2]);
    const [y32] = interpretValues(loadOnnx(bytes('int32')), [new Tensor('int32', [4, 1], Int32Array.from([16777217, 16777219, 40, 41]))]);
    expect(numbers(y32!)).toEqual([2, 3, 1, 2]);
  });

  test('version 1 (no *_as_tensor attributes) imports the same', async () => {
    await expectSameAsOrt(regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 } }, 'float32', 2, 1), X8, 5);
  });
});

// ---------------------------------------------------------------------------------------------

/** Two trees over two features, three classes. */
const THREE_CLASSES: readonly V3Node[] = [
  br(0, 'BRANCH_LEQ', 1, leaf([0, 0.6], [1, 0.3], [2, 0.1]), br(1, 'BRANCH_LEQ', 1, leaf([1, 0.7], [2, 0.3]), leaf([2, 0.9], [0, 0.1]))),
  br(1, 'BRANCH_LT', 0.5, leaf([0, 0.2], [1, 0.8]), leaf([2, 0.5], [0, 0.5])),
];
const X6 = f32([6, 2], [0, 0, 2, 0, 2, 2, 0, 2, 1.5, 0.25, -1, 3]);

/** Two classes, every tree voting for both (as skl2onnx writes a random forest). */
const TWO_CLASSES: readonly V3Node[] = [
  br(0, 'BRANCH_LEQ', 1, leaf([0, 0.8], [1, 0.2]), leaf([0, 0.3], [1, 0.7])),
  br(1, 'BRANCH_LEQ', 1, leaf([0, 0.6], [1, 0.4]), leaf([0, 0.1], [1, 0.9])),
];

describe('TreeEnsembleClassifier, against onnxruntime', () => {
  test('three classes, int64 and string labels, with and without SOFTMAX and base values', async () => {
    const [labels] = await expectSameAsOrt(classifier({ ...v3Attributes(THREE_CLASSES, 'class_'), classlabels_int64s: { ints: [7, 8, 9] } }), X6, 3);
    expect(Array.from((labels as Tensor).data as BigInt64Array, Number)).toEqual([8, 8, 9, 7, 8, 7]);
    await expectSameAsOrt(classifier({ ...v3Attributes(THREE_CLASSES, 'class_'), classlabels_strings: { strings: ['ant', 'bee', 'cat'] }, post_transform: { string: 'SOFTMAX' } }, 'string'), X6, 3);
    await expectSameAsOrt(classifier({ ...v3Attributes(THREE_CLASSES, 'class_'), classlabels_int64s: { ints: [0, 1, 2] }, base_values: { floats: [0.5, 0, -0.25] }, post_transform: { string: 'LOGISTIC' } }), X6, 2);
  });

  test('two classes voted by every tree: labels 0 and 1 by the sign of the second score (onnxruntime)', async () => {
    const x = f32([4, 2], [0, 0, 2, 0, 0, 2, 2, 2]);
    // onnxruntime returns the fixed label 1 whenever the second class's score is above 0 (the
    // ONNX text: the top class), whatever the labels are; with labels 0 and 1 that is class 1.
    const [labels, scores] = await expectSameAsOrt(classifier({ ...v3Attributes(TWO_CLASSES, 'class_'), classlabels_int64s: { ints: [0, 1] } }), x, 1);
    expect(Array.from((labels as Tensor).data as BigInt64Array, Number)).toEqual([1, 1, 1, 1]);
    expect(distinct(scores!)).toBeGreaterThanOrEqual(4);
    await expectSameAsOrt(classifier({ ...v3Attributes(TWO_CLASSES, 'class_'), classlabels_strings: { strings: ['no', 'yes'] }, base_values: { floats: [0.1, -2] } }, 'string'), x, 1);
    // A class with negative scores: the fixed label 0 (not classlabels_int64s[0]).
    const negative = mapWeights(TWO_CLASSES, (w) => w - 0.65);
    const [l2] = await expectSameAsOrt(classifier({ ...v3Attributes(negative, 'class_'), classlabels_int64s: { ints: [5, 9] } }), x, 2);
    expect(Array.from((l2 as Tensor).data as BigInt64Array, Number)).toEqual([0, 0, 0, 1]);
  });

  test('two classes, one weight column (XGBoost, LightGBM, gradient boosting): the binary rules', async () => {
    const margins = (cls: number, ws: readonly number[]): V3Node[] => [
      br(0, 'BRANCH_LEQ', 1, leaf([cls, ws[0]!]), leaf([cls, ws[1]!])),
      br(1, 'BRANCH_LEQ', 1, leaf([cls, ws[2]!]), leaf([cls, ws[3]!])),
    ];
    const x = f32([4, 2], [0, 0, 2, 0, 0, 2, 2, 2]);
    // Class 0's column, mixed-sign margins, one base value and LOGISTIC: label by sign,
    // scores [logistic(−s), logistic(s)].
    const [l0, s0] = await expectSameAsOrt(
      classifier({ ...v3Attributes(margins(0, [-0.8, 0.6, 0.3, -0.1]), 'class_'), classlabels_int64s: { ints: [0, 1] }, base_values: { floats: [0.2] }, post_transform: { string: 'LOGISTIC' } }),
      x,
    );
    expect(Array.from((l0 as Tensor).data as BigInt64Array, Number)).toEqual([0, 1, 0, 1]);
    expect(numbers(s0!)[0]! + numbers(s0!)[1]!).toBeCloseTo(1, 6);
    // Class 1's column, positive weights: the positive class above 0.5; string labels.
    await expectSameAsOrt(classifier({ ...v3Attributes(margins(1, [0.1, 0.5, 0.2, 0.3]), 'class_'), classlabels_strings: { strings: ['no', 'yes'] } }, 'string'), x);
    // Class 0's column, positive weights, no base value: scores [1 − s, s].
    const [, s2] = await expectSameAsOrt(classifier({ ...v3Attributes(margins(0, [0.1, 0.5, 0.2, 0.3]), 'class_'), classlabels_int64s: { ints: [3, 4] } }), x);
    expect(numbers(s2!).slice(0, 2)).toEqual([Math.fround(1 - Math.fround(0.3)), Math.fround(0.3)]);
  });

  test('int64 X (converted to float32 before comparing) and float64 X', async () => {
    const trees = [br(0, 'BRANCH_LEQ', 16777216.5, leaf([0, 0.9], [1, 0.1]), leaf([1, 0.8], [2, 0.2])), br(1, 'BRANCH_GT', 3, leaf([2, 0.7]), leaf([0, 0.3]))];
    const attrs = { ...v3Attributes(trees, 'class_'), classlabels_int64s: { ints: [-1, 0, 1] } };
    const [labels] = await expectSameAsOrt(classifier(attrs, 'int64', 'int64'), i64([5, 2], [16777217, 0, 16777219, 0, 5, 9, 2n ** 40n, 9, -7, 4]), 3);
    // 16777217 is 16777216 in float32: not above the threshold, so class -1 wins.
    expect(Number((labels as Tensor).data[0])).toBe(-1);
    await expectSameAsOrt(classifier(attrs, 'int64', 'float64'), f64([4, 2], [16777216.75, 0, 16777216.25, 9, 3, 3.5, 1e30, 0]), 3);
  });
});

// ---------------------------------------------------------------------------------------------
// TreeEnsemble (ai.onnx.ml 5)

interface V5Branch {
  readonly feature: number;
  /** 0 BRANCH_LEQ … 5 BRANCH_NEQ, 6 BRANCH_MEMBER. */
  readonly mode: number;
  readonly split: number | readonly number[];
  readonly t: V5Node;
  readonly f: V5Node;
  readonly missingTrue?: boolean;
}
type V5Node = V5Branch | { readonly target: number; readonly weight: number };

const lf = (target: number, weight: number): V5Node => ({ target, weight });
const nd = (feature: number, mode: number, split: number | readonly number[], t: V5Node, f: V5Node, missingTrue = false): V5Node => ({ feature, mode, split, t, f, missingTrue });

/** TreeEnsemble attributes of `trees` (interior nodes and leaves numbered in pre-order). */
function v5Attributes(trees: readonly V5Node[], dtype: 'float32' | 'float64', nTargets: number): Record<string, Attr> {
  const n = { feature: [] as number[], mode: [] as number[], split: [] as number[], t: [] as number[], tl: [] as number[], f: [] as number[], fl: [] as number[], mt: [] as number[], members: [] as number[] };
  const leaves = { target: [] as number[], weight: [] as number[] };
  const visit = (node: V5Node): { id: number; leaf: boolean } => {
    if ('target' in node) {
      leaves.target.push(node.target);
      leaves.weight.push(node.weight);
      return { id: leaves.target.length - 1, leaf: true };
    }
    const id = n.feature.length;
    n.feature.push(node.feature);
    n.mode.push(node.mode);
    n.split.push(typeof node.split === 'number' ? node.split : NaN);
    n.mt.push(node.missingTrue ? 1 : 0);
    n.t.push(0);
    n.tl.push(0);
    n.f.push(0);
    n.fl.push(0);
    if (typeof node.split !== 'number') n.members.push(...node.split, NaN);
    const t = visit(node.t);
    const f = visit(node.f);
    [n.t[id], n.tl[id], n.f[id], n.fl[id]] = [t.id, t.leaf ? 1 : 0, f.id, f.leaf ? 1 : 0];
    return { id, leaf: false };
  };
  const roots = trees.map((t) => visit(t).id);
  const floats = (v: number[]): Tensor => Tensor.from(dtype, [v.length], v);
  return {
    n_targets: { int: nTargets },
    tree_roots: { ints: roots },
    nodes_featureids: { ints: n.feature },
    nodes_modes: { tensor: new Tensor('uint8', [n.mode.length], Uint8Array.from(n.mode)) },
    nodes_splits: { tensor: floats(n.split) },
    nodes_truenodeids: { ints: n.t },
    nodes_trueleafs: { ints: n.tl },
    nodes_falsenodeids: { ints: n.f },
    nodes_falseleafs: { ints: n.fl },
    nodes_missing_value_tracks_true: { ints: n.mt },
    ...(n.members.length > 0 ? { membership_values: { tensor: floats(n.members) } } : {}),
    leaf_targetids: { ints: leaves.target },
    leaf_weights: { tensor: floats(leaves.weight) },
  };
}

const ensemble = (attrs: Attrs, dtype: 'float32' | 'float64' = 'float32', features = 2): Uint8Array => mlModel('TreeEnsemble', 5, dtype, features, [['Y', dtype]], attrs);

/** Two trees, three targets, a small set (with a non-integer member) and a large one. */
const MEMBER_TREES: readonly V5Node[] = [
  nd(0, 6, [1, 3, 4.5], lf(0, 1), nd(1, 0, 0.5, lf(1, 2), lf(2, 3)), true),
  nd(1, 6, [-1, 7, 100], lf(2, 10), nd(0, 3, 2, lf(0, 20), lf(1, 30))),
];
const XM = f32([9, 2], [1, 0, 3, 7, 4.5, -1, 4.4, 100, NaN, 7.5, 2, 1, 5, 0.25, 0, -1.5, 7, 6.99]);

describe('TreeEnsemble (version 5), against onnxruntime', () => {
  test('BRANCH_MEMBER sets: a small set compares exactly, a large one truncates the feature to int32 (onnxruntime)', async () => {
    const [y] = await expectSameAsOrt(ensemble(v5Attributes(MEMBER_TREES, 'float32', 3)), XM, 5);
    const rows = numbers(y!);
    // Row [4.4, 100]: 4.4 is not in the small set (4.5 is), 100 is in the large one.
    expect(rows.slice(9, 12)).toEqual([0, 0, 13]);
    // Row [NaN, 7.5]: NaN tracks true at the first node; 7.5 truncates to 7, a member.
    expect(rows.slice(12, 15)).toEqual([1, 0, 10]);
    // Row [0, -1.5]: -1.5 truncates to -1, a member of the large set (the ONNX text compares
    // -1.5 itself, which is not: it would give [0, 32, 0]).
    expect(rows.slice(21, 24)).toEqual([0, 2, 10]);
  });

  test('AVERAGE, MIN and MAX; float64 X with splits float32 cannot hold', async () => {
    for (const aggregate of [0, 2, 3]) await expectSameAsOrt(ensemble({ ...v5Attributes(MEMBER_TREES, 'float32', 3), aggregate_function: { int: aggregate } }), XM, 4);
    const trees = [nd(0, 0, 0.1, lf(0, 1e-9), lf(1, 2)), nd(0, 1, 0.30000000000000004, lf(0, 0.5), lf(1, 0.25))];
    const [y] = await expectSameAsOrt(ensemble(v5Attributes(trees, 'float64', 2), 'float64', 1), f64([3, 1], [0.1000000001, 0.1, 0.3]), 4);
    expect((y as Tensor).dtype).toBe('float64');
    expect(numbers(y!).slice(2, 4)).toEqual([0.5 + 1e-9, 0]);
  });

  test('post_transform 1 is LOGISTIC and 2 SOFTMAX, as onnxruntime reads them (the ONNX text: 1 SOFTMAX, 2 LOGISTIC)', async () => {
    const [plain] = await expectSameAsOrt(ensemble(v5Attributes(MEMBER_TREES, 'float32', 3)), XM, 5);
    const [one] = await expectSameAsOrt(ensemble({ ...v5Attributes(MEMBER_TREES, 'float32', 3), post_transform: { int: 1 } }), XM, 5);
    const logistic = numbers(plain!).map((v) => 1 / (1 + Math.exp(-v)));
    numbers(one!).forEach((v, i) => expect(v).toBeCloseTo(logistic[i]!, 5));
    const [two] = await expectSameAsOrt(ensemble({ ...v5Attributes(MEMBER_TREES, 'float32', 3), post_transform: { int: 2 } }), XM, 5);
    const firstRow = numbers(two!).slice(0, 3);
    expect(firstRow.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
  });

  test('the ONNX node tests: a single tree and set membership', async () => {
    const single = v5Attributes([nd(0, 0, 3.14, nd(0, 0, 1.2, lf(0, 5.23), lf(0, -12.23)), nd(0, 0, 4.2, lf(1, 12.12), lf(1, 7.21)))], 'float64', 2);
    const [y] = await expectSameAsOrt(ensemble(single, 'float64', 2), f64([3, 2], [1.2, 3.4, -0.12, 1.66, 4.14, 1.77]), 3);
    expect(numbers(y!)).toEqual([5.23, 0, 5.23, 0, 0, 12.12]);
  });
});

describe('compile()', () => {
  test.each(['reference', 'onnxruntime'] as const)('on %s: the ensembles run in a fallback segment and match onnxruntime', async (backend) => {
    const cases: Array<[Uint8Array, Tensor]> = [
      [regressor({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 }, post_transform: { string: 'LOGISTIC' } }), X8],
      [classifier({ ...v3Attributes(THREE_CLASSES, 'class_'), classlabels_int64s: { ints: [7, 8, 9] } }), X6],
      [ensemble(v5Attributes(MEMBER_TREES, 'float32', 3)), XM],
    ];
    for (const [bytes, x] of cases) {
      const program = await compile(bytes, { backend, inputs: { X: { shape: [...x.shape] } } });
      try {
        const actual = await program.run([x]);
        const expected = await runOrtModelValues(bytes, [x]);
        expect(actual).toHaveLength(expected.length);
        actual.forEach((a, i) => (a.dtype === 'int64' ? expect(Array.from(a.data as BigInt64Array)).toEqual(Array.from((expected[i] as Tensor).data as BigInt64Array)) : expectClose(a, expected[i] as Tensor, FP32)));
      } finally {
        await program.dispose();
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** The message (and code) of what importing `bytes` throws. */
function refusal(bytes: Uint8Array): { code: string; message: string } {
  try {
    loadOnnx(bytes);
  } catch (e) {
    return { code: (e as { code?: string }).code ?? '', message: (e as Error).message };
  }
  throw new Error('the model was imported');
}

describe('malformed attributes are refused, naming the attribute', () => {
  const base = (): Record<string, Attr> => ({ ...v3Attributes(FOREST, 'target_'), n_targets: { int: 2 } });

  test.each<[string, (a: Record<string, Attr>) => void, RegExp]>([
    ['a nodes_* list of another length', (a) => (a.nodes_featureids = { ints: [0, 1] }), /nodes_featureids has 2 entries and nodes_treeids 15/],
    ['a child id the tree lacks', (a) => (a.nodes_truenodeids = { ints: [9, ...(a.nodes_truenodeids as { ints: number[] }).ints.slice(1)] }), /nodes_truenodeids\[0\] is 9: tree 0 has no node 9/],
    ['a node pointing to itself', (a) => (a.nodes_falsenodeids = { ints: [0, ...(a.nodes_falsenodeids as { ints: number[] }).ints.slice(1)] }), /nodes_falsenodeids\[0\]: node 0 of tree 0 points to itself/],
    ['a cycle', (a) => (a.nodes_falsenodeids = { ints: [(a.nodes_falsenodeids as { ints: number[] }).ints[0]!, 0, ...(a.nodes_falsenodeids as { ints: number[] }).ints.slice(2)] }), /cycle/],
    ['an unreachable node', (a) => (a.nodes_falsenodeids = { ints: [1, ...(a.nodes_falsenodeids as { ints: number[] }).ints.slice(1)] }), /node 4 of tree 0 \(position 4\) is not reached from the tree's root/],
    ['a target id out of range', (a) => (a.target_ids = { ints: [0, 1, 0, 2, ...(a.target_ids as { ints: number[] }).ints.slice(4)] }), /target_ids\[3\] is 2, not one of the 2 targets/],
    ['a weight for a node the tree lacks', (a) => (a.target_nodeids = { ints: [77, ...(a.target_nodeids as { ints: number[] }).ints.slice(1)] }), /target_nodeids\[0\] \/ target_treeids\[0\]: tree 0 has no node 77/],
    ['an unknown mode', (a) => (a.nodes_modes = { strings: ['BRANCH_MEMBER', ...(a.nodes_modes as { strings: string[] }).strings.slice(1)] }), /nodes_modes\[0\] is "BRANCH_MEMBER"/],
    ['a tree listed in two runs (unsupported: onnxruntime counts a second tree)', (a) => (a.nodes_treeids = { ints: [0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 2, 2, 2, 2, 2] }), /nodes_treeids: the nodes of tree 0 are not listed together/],
    ['base values of another length', (a) => (a.base_values = { floats: [1, 2, 3] }), /base_values has 3 values: it needs none or one per target \(2\)/],
    ['an unknown aggregate_function', (a) => (a.aggregate_function = { string: 'MEDIAN' }), /aggregate_function "MEDIAN" is none of/],
    ['nodes_values and nodes_values_as_tensor both', (a) => (a.nodes_values_as_tensor = { tensor: f32([15], new Array<number>(15).fill(0)) }), /nodes_values and nodes_values_as_tensor are both given/],
    ['a float64 nodes_values_as_tensor for float32 X (unsupported: onnxruntime refuses it)', (a) => ((a.nodes_values_as_tensor = { tensor: f64([15], new Array<number>(15).fill(0)) }), delete a.nodes_values), /nodes_values_as_tensor holds float64 values: it must be float32/],
  ])('TreeEnsembleRegressor: %s', (what, edit, message) => {
    const attrs = base();
    edit(attrs);
    const { code, message: said } = refusal(regressor(attrs));
    expect(code).toBe(what.includes('unsupported') ? 'E_UNSUPPORTED_OP' : 'E_BAD_MODEL');
    expect(said).toMatch(/ONNX node "trees" \(TreeEnsembleRegressor\)/);
    expect(said).toMatch(message);
  });

  test('TreeEnsembleClassifier: both label lists, one string class, two base values for one class', () => {
    const attrs = v3Attributes(THREE_CLASSES, 'class_');
    expect(refusal(classifier({ ...attrs, classlabels_int64s: { ints: [1, 2, 3] }, classlabels_strings: { strings: ['a', 'b', 'c'] } })).message).toMatch(
      /exactly one of classlabels_strings and classlabels_int64s must name the classes, got both/,
    );
    const one = v3Attributes([br(0, 'BRANCH_LEQ', 1, leaf([0, 1]), leaf([0, 2]))], 'class_');
    expect(refusal(classifier({ ...one, classlabels_strings: { strings: ['a'] } }, 'string'))).toEqual({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/classlabels_strings names one class/) });
    expect(refusal(classifier({ ...one, classlabels_int64s: { ints: [4] }, base_values: { floats: [1, 2] } })).message).toMatch(/base_values has 2 values for a classifier of one class/);
    expect(refusal(classifier({ ...attrs, classlabels_int64s: { ints: [1, 2, 3] }, class_ids: { ints: [0, 1, 2, 1, 2, 2, 0, 0, 1, 2, 5] } })).message).toMatch(/class_ids\[10\] is 5, not one of the 3 classes/);
  });

  test('TreeEnsemble: member sets, leaf references, tensor types, X types', () => {
    const attrs = (): Record<string, Attr> => v5Attributes(MEMBER_TREES, 'float32', 3);
    const refuse = (edit: (a: Record<string, Attr>) => void, dtype: 'float32' | 'float64' = 'float32'): string => {
      const a = attrs();
      edit(a);
      return refusal(ensemble(a, dtype)).message;
    };
    expect(refuse((a) => (a.membership_values = { tensor: f32([4], [1, 3, 4.5, NaN]) }))).toMatch(/membership_values holds 1 set\(s\) \(each ended by NaN\) for 2 BRANCH_MEMBER node\(s\)/);
    // A large set may hold only integers: onnxruntime refuses others (the ONNX text allows them).
    const big = attrs();
    big.membership_values = { tensor: f32([8], [1, 3, 4.5, NaN, -1, 7.5, 100, NaN]) };
    expect(refusal(ensemble(big))).toEqual({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/membership_values: the set of BRANCH_MEMBER node 2 holds 7.5/) });
    expect(refuse((a) => (a.membership_values = { tensor: f32([5], [1, 3, NaN, NaN, 2]) }))).toMatch(/holds 3 set/);
    expect(refuse((a) => delete a.membership_values)).toMatch(/membership_values is not given/);
    expect(refuse((a) => (a.nodes_falsenodeids = { ints: [1, 0, 3, 9] }))).toMatch(/nodes_falsenodeids\[3\] is 9, not one of the 6 leaves/);
    expect(refuse((a) => (a.nodes_truenodeids = { ints: [-1, 1, 3, 4] }))).toMatch(/nodes_truenodeids\[0\] is -1, not one of the 6 leaves/);
    expect(refuse((a) => ((a.nodes_falseleafs = { ints: [0, 0, 0, 1] }), (a.nodes_falsenodeids = { ints: [1, 0, 3, 5] })))).toMatch(/interior node \d is reached again from below itself \(a cycle\)/);
    expect(refuse((a) => ((a.nodes_trueleafs = { ints: [0, 1, 1, 1] }), (a.nodes_truenodeids = { ints: [0, 0, 0, 0] })))).toMatch(/nodes_truenodeids\[0\]: node 0 points to itself/);
    expect(refuse((a) => (a.tree_roots = { ints: [0] }))).toMatch(/interior node 2 is not reached from any of tree_roots/);
    expect(refuse((a) => (a.leaf_targetids = { ints: [0, 1, 2, 2, 0, 3] }))).toMatch(/leaf_targetids\[5\] is 3, not one of the 3 targets/);
    expect(refuse((a) => (a.leaf_weights = { tensor: f64([6], [1, 2, 3, 10, 20, 30]) }))).toMatch(/attribute leaf_weights holds float64 values: it must be float32/);
    expect(refuse((a) => (a.nodes_modes = { tensor: new Tensor('int32', [4], Int32Array.from([6, 0, 6, 3])) }))).toMatch(/attribute nodes_modes holds int32 values: it must be uint8/);
    expect(refuse((a) => (a.nodes_modes = { tensor: new Tensor('uint8', [4], Uint8Array.from([6, 0, 6, 9])) }))).toMatch(/nodes_modes\[3\] is 9/);
    expect(refuse((a) => (a.post_transform = { int: 7 }))).toMatch(/post_transform is 7/);
    expect(refuse((a) => (a.nodes_splits = { tensor: f32([3], [0, 0, 0]) }))).toMatch(/nodes_splits has 3 entries and nodes_featureids 4/);
    expect(refusal(mlModel('TreeEnsemble', 5, 'float16', 2, [['Y', 'float16']], attrs()))).toEqual({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/X is float16: tree ensembles are computed for float32 and float64 X/) });
    expect(refusal(mlModel('TreeEnsemble', 5, 'int64', 2, [['Y', 'float32']], attrs()))).toEqual({ code: 'E_BAD_MODEL', message: expect.stringMatching(/X must be float32, float64, got int64/) });
  });
});

describe('the kernel bounds its work', () => {
  const chain = (): TreeEnsemble =>
    regressorFromAttributes({
      nodes_treeids: [0, 0, 0],
      nodes_nodeids: [0, 1, 2],
      nodes_featureids: [0, 0, 0],
      nodes_modes: ['BRANCH_LEQ', 'LEAF', 'LEAF'],
      nodes_truenodeids: [1, 0, 0],
      nodes_falsenodeids: [2, 0, 0],
      nodes_missing_value_tracks_true: [],
      nodes_values: { name: 'nodes_values', values: [0, 0, 0] },
      base_values: { name: 'base_values', values: [] },
      post_transform: 'NONE',
      prefix: 'target_',
      treeids: [0, 0],
      nodeids: [1, 2],
      ids: [0, 0],
      weights: { name: 'target_weights', values: [1, 2] },
      n_targets: 1,
      aggregate_function: 'SUM',
    });

  test('an encoded ensemble with a cycle is refused when decoded', () => {
    const enc = encodeTreeEnsemble(chain());
    const nodes = enc.nodes.slice();
    // Node 1 becomes a branch back to node 0.
    nodes.set([NodeMode.LEQ, 0, 0, 2, 0, 0, 0, 0, 0], 9);
    const settings = { nTargets: 1, aggregate: 'SUM' as const, postTransform: 'NONE' as const, classifier: null };
    expect(decodeTreeEnsemble(enc, settings).roots).toEqual(Int32Array.from([0]));
    expect(() => decodeTreeEnsemble({ ...enc, nodes }, settings)).toThrow(/cycle/);
  });

  test('evaluation of an ensemble that skipped the checks stops at a cycle instead of looping', () => {
    const e = chain();
    const cyclic: TreeEnsemble = { ...e, mode: Uint8Array.from([NodeMode.LEQ, NodeMode.LEQ, NodeMode.LEAF]), trueChild: Int32Array.from([1, 0, 0]) };
    expect(evaluateTreeEnsemble(f32([1, 1], [-1]), e).scores).toEqual(Float64Array.from([1]));
    expect(() => evaluateTreeEnsemble(f32([1, 1], [-1]), cyclic)).toThrow(/cycle/);
  });

  test('a feature past the columns of X is refused at run time', () => {
    expect(() => evaluateTreeEnsemble(new Tensor('float32', [1, 0], new Float32Array(0)), chain())).toThrow(/reads feature 0 but x has 0 features/);
  });
});
