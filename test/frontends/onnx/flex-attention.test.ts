/**
 * ONNX FlexAttention (domain ai.onnx.preview, version 1) composed of IR ops, its score_mod and
 * prob_mod subgraphs imported in place: against onnxruntime's Attention (opset 23) on the
 * same tensors (grouped heads, an explicit scale, a value head size of its own; score_mod as
 * an additive mask, the causal triangle and softcap; prob_mod as a factor on the output);
 * against values worked out by hand for float64 and float16; the imported graph converted
 * whole against the interpreter; the domain's import rules and the refused forms.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import type { DType } from '../../../lib/ir/dtype';
import { Tensor, type Shape } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { expectConvertedMatches } from '../../helpers/convert-compare';
import { buildSymbolicModel, type SymAttr, type SymGraphAttr, type SymNode } from '../../helpers/onnx-symbolic-model';
import { closeOrt, floatAttr, runOrtOp, type OrtInput } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

const rng = new Random(2026);
const TOL: Tolerance = { rtol: 1e-4, atol: 1e-5 };
const f32 = (shape: Shape): Tensor => rng.tensor(shape, 'float32', -1, 1);
const scalar = (v: number): Tensor => Tensor.from('float32', [], [v]);

afterAll(() => closeOrt());

interface FlexSpec {
  q: Tensor;
  k: Tensor;
  v: Tensor;
  attrs?: Record<string, SymAttr>;
  /** The opset imports besides the default domain's (default ai.onnx.preview 1). */
  imports?: Array<{ domain: string; version: number }>;
  /** Leave out the default domain's import. */
  previewOnly?: boolean;
}

/** A one-node FlexAttention model (node "FlexAttention_0"), Q, K and V its inputs. */
function flexModel(spec: FlexSpec): Uint8Array {
  const io = (t: Tensor): { dtype: DType; dims: number[] } => ({ dtype: t.dtype, dims: [...t.shape] });
  const bytes = buildSymbolicModel({
    inputs: { Q: io(spec.q), K: io(spec.k), V: io(spec.v) },
    nodes: [{ op: 'FlexAttention', inputs: ['Q', 'K', 'V'], outputs: ['Y'], attrs: spec.attrs }],
    outputs: ['Y'],
    opset: 23,
  });
  const model = onnx.ModelProto.decode(bytes);
  model.graph.node[0].domain = 'ai.onnx.preview';
  if (spec.previewOnly) model.opsetImport = [];
  for (const entry of spec.imports ?? [{ domain: 'ai.onnx.preview', version: 1 }]) model.opsetImport.push(entry);
  return onnx.ModelProto.encode(model).finish();
}

const ours = (spec: FlexSpec): Tensor => interpret(loadOnnx(flexModel(spec)), [spec.q, spec.k, spec.v])[0]!;

/** A modifier subgraph of one [B, H, L, S] input `x` and output `out`. */
function modifier(nodes: SymNode[], initializers: Record<string, Tensor> = {}, dtype: DType = 'float32'): SymGraphAttr {
  const info = (name: string): { name: string; dtype: DType; dims: string[] } => ({ name, dtype, dims: ['B', 'H', 'L', 'S'] });
  return { graph: { inputs: [info('x')], nodes, outputs: [info('out')], initializers } };
}

/** score_mod keeping key j for query i when i >= j, else -inf: the node tests' causal form. */
const causal = modifier(
  [
    { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
    { op: 'Gather', inputs: ['shape', 'two'], outputs: ['l'], attrs: { axis: 0 } },
    { op: 'Gather', inputs: ['shape', 'three'], outputs: ['s'], attrs: { axis: 0 } },
    { op: 'Range', inputs: ['zero', 'l', 'one'], outputs: ['ql'] },
    { op: 'Reshape', inputs: ['ql', 'qshape'], outputs: ['qi'] },
    { op: 'Range', inputs: ['zero', 's', 'one'], outputs: ['kl'] },
    { op: 'Reshape', inputs: ['kl', 'kshape'], outputs: ['ki'] },
    { op: 'GreaterOrEqual', inputs: ['qi', 'ki'], outputs: ['keep'] },
    { op: 'Where', inputs: ['keep', 'x', 'minus_inf'], outputs: ['out'] },
  ],
  {
    zero: Tensor.scalar('int64', 0),
    one: Tensor.scalar('int64', 1),
    two: Tensor.scalar('int64', 2),
    three: Tensor.scalar('int64', 3),
    qshape: Tensor.from('int64', [4], [1, 1, -1, 1]),
    kshape: Tensor.from('int64', [4], [1, 1, 1, -1]),
    minus_inf: scalar(-Infinity),
  },
);

async function attention(inputs: OrtInput[], attributes: Record<string, unknown> = {}): Promise<Tensor> {
  const [y] = await runOrtOp({ opType: 'Attention', inputs, attributes: attributes as never, opset: 23 });
  return y!;
}

describe('ONNX FlexAttention against onnxruntime Attention', () => {
  test('grouped heads (8 query, 2 key/value), the default scale 1/sqrt(E)', async () => {
    const [q, k, v] = [f32([2, 8, 4, 16]), f32([2, 2, 6, 16]), f32([2, 2, 6, 16])];
    expectClose(ours({ q, k, v }), await attention([q, k, v]), TOL);
    await expectConvertedMatches(loadOnnx(flexModel({ q, k, v })), [q, k, v]);
  });

  test('an explicit scale and a value head size unlike the query one', async () => {
    const [q, k, v] = [f32([1, 2, 5, 8]), f32([1, 2, 3, 8]), f32([1, 2, 3, 12])];
    expectClose(ours({ q, k, v, attrs: { scale: 0.3 } }), await attention([q, k, v], { scale: floatAttr(0.3) }), TOL);
  });

  test('score_mod adding a bias: Attention with that float mask', async () => {
    const [q, k, v] = [f32([1, 2, 3, 4]), f32([1, 2, 5, 4]), f32([1, 2, 5, 4])];
    const bias = f32([3, 5]);
    const attrs = { score_mod: modifier([{ op: 'Add', inputs: ['x', 'bias'], outputs: ['out'] }], { bias }) };
    expectClose(ours({ q, k, v, attrs }), await attention([q, k, v, bias]), TOL);
    await expectConvertedMatches(loadOnnx(flexModel({ q, k, v, attrs })), [q, k, v]);
  });

  test('score_mod masking key j > query i with -inf (shape arithmetic on its input): is_causal', async () => {
    const [q, k, v] = [f32([2, 2, 4, 8]), f32([2, 2, 4, 8]), f32([2, 2, 4, 8])];
    expectClose(ours({ q, k, v, attrs: { score_mod: causal } }), await attention([q, k, v], { is_causal: 1 }), TOL);
    await expectConvertedMatches(loadOnnx(flexModel({ q, k, v, attrs: { score_mod: causal } })), [q, k, v]);
  });

  test('score_mod cap · tanh(x / cap): softcap', async () => {
    const [q, k, v] = [rng.tensor([1, 2, 4, 8], 'float32', -4, 4), f32([1, 2, 4, 8]), f32([1, 2, 4, 8])];
    const score_mod = modifier(
      [
        { op: 'Div', inputs: ['x', 'cap'], outputs: ['scaled'] },
        { op: 'Tanh', inputs: ['scaled'], outputs: ['t'] },
        { op: 'Mul', inputs: ['t', 'cap'], outputs: ['out'] },
      ],
      { cap: scalar(0.5) },
    );
    expectClose(ours({ q, k, v, attrs: { score_mod } }), await attention([q, k, v], { softcap: floatAttr(0.5) }), TOL);
  });

  test('prob_mod scaling the probabilities by 0.5 halves the output', async () => {
    const [q, k, v] = [f32([1, 3, 2, 4]), f32([1, 3, 3, 4]), f32([1, 3, 3, 4])];
    const prob_mod = modifier([{ op: 'Mul', inputs: ['x', 'half'], outputs: ['out'] }], { half: scalar(0.5) });
    const [want] = await runOrtOp({ opType: 'Mul', inputs: [await attention([q, k, v]), scalar(0.5)] });
    expectClose(ours({ q, k, v, attrs: { prob_mod } }), want!, TOL);
  });
});

describe('FlexAttention by hand', () => {
  // Equal scores (Q = 0) weight every key alike: each output row is the mean of V's rows.
  const means = (dtype: DType): Tensor => Tensor.from(dtype, [1, 1, 2, 2], [2, 20, 2, 20]);
  const v = (dtype: DType): Tensor => Tensor.from(dtype, [1, 1, 3, 2], [1, 10, 2, 20, 3, 30]);
  const zeros = (dtype: DType, shape: Shape): Tensor => Tensor.from(dtype, shape, new Array(shape.reduce((a, b) => a * b, 1)).fill(0));

  test.each(['float64', 'float16'] as const)('%s: equal scores average V, in the inputs\' type', (dtype) => {
    expectClose(ours({ q: zeros(dtype, [1, 1, 2, 4]), k: rng.tensor([1, 1, 3, 4], dtype), v: v(dtype) }), means(dtype), { rtol: 1e-3, atol: 0 });
  });

  test('score_mod adding -inf to the last key leaves the mean of the first two; a float16 softmax_precision', () => {
    const dtype = 'float32';
    const score_mod = modifier([{ op: 'Add', inputs: ['x', 'bias'], outputs: ['out'] }], { bias: Tensor.from('float32', [3], [0, 0, -Infinity]) });
    const y = ours({ q: zeros(dtype, [1, 1, 2, 4]), k: f32([1, 1, 3, 4]), v: v(dtype), attrs: { score_mod } });
    expectClose(y, Tensor.from('float32', [1, 1, 2, 2], [1.5, 15, 1.5, 15]));
    // softmax_precision float16 (10): the scores and V in float16, the output float32 again.
    const half = ours({ q: zeros(dtype, [1, 1, 2, 4]), k: f32([1, 1, 3, 4]), v: v(dtype), attrs: { softmax_precision: 10, score_mod: modifier([{ op: 'Identity', inputs: ['x'], outputs: ['out'] }], {}, 'float16') } });
    expectClose(half, means('float32'), { rtol: 1e-3, atol: 0 });
  });
});

describe('ONNX FlexAttention import rules and refusals', () => {
  const [q, k, v] = [f32([1, 4, 3, 8]), f32([1, 2, 3, 8]), f32([1, 2, 3, 8])];
  const unsupported = (text: string): ReturnType<typeof expect.objectContaining> => expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining(text) });
  const bad = (text: string): ReturnType<typeof expect.objectContaining> => expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(new RegExp(`ONNX node "FlexAttention_0".*${text}`)) });

  test('a model importing only ai.onnx.preview loads; another preview version does not', async () => {
    expectClose(ours({ q, k, v, previewOnly: true }), await attention([q, k, v]), TOL);
    expect(() => loadOnnx(flexModel({ q, k, v, imports: [{ domain: 'ai.onnx.preview', version: 2 }] }))).toThrow(unsupported('ai.onnx.preview ops of version 2'));
    expect(() => loadOnnx(flexModel({ q, k, v, imports: [] }))).toThrow(unsupported('without importing the domain'));
  });

  test('a preview-only model whose subgraph needs the default domain is refused', () => {
    const attrs = { prob_mod: modifier([{ op: 'Identity', inputs: ['x'], outputs: ['out'] }]) };
    expect(() => loadOnnx(flexModel({ q, k, v, attrs, previewOnly: true }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('default ONNX domain') }));
  });

  test('mask_mod and per-element (5-input) score_mod, forms of other drafts, are refused by name', () => {
    const five = { graph: { ...modifier([]).graph, inputs: ['x', 'b', 'h', 'qi', 'ki'].map((name) => ({ name, dtype: 'float32' as const, dims: [] })), nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['out'] }] } };
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { mask_mod: modifier([]) } }))).toThrow(unsupported('mask_mod'));
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { score_mod: five } }))).toThrow(unsupported('5 inputs'));
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { enable_gqa: 1 } }))).toThrow(unsupported('"enable_gqa"'));
  });

  test('modifiers of the wrong arity, shape or type are E_BAD_MODEL', () => {
    const two = { graph: { ...modifier([]).graph, inputs: [modifier([]).graph.inputs[0]!, { name: 'y', dtype: 'float32' as const, dims: [] }], nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['out'] }] } };
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { score_mod: two } }))).toThrow(bad('one input'));
    const reduce = modifier([{ op: 'ReduceSum', inputs: ['x', 'axes'], outputs: ['out'], attrs: { keepdims: 0 } }], { axes: Tensor.from('int64', [1], [3]) });
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { score_mod: reduce } }))).toThrow(bad('shape'));
    expect(() => loadOnnx(flexModel({ q, k, v, attrs: { score_mod: modifier([{ op: 'Identity', inputs: ['x'], outputs: ['out'] }], {}, 'float64') } }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('declared float64') }));
  });

  test('inputs that are not rank 4, heads that do not group, mixed types', () => {
    expect(() => loadOnnx(flexModel({ q: f32([4, 3, 8]), k: f32([2, 3, 8]), v: f32([2, 3, 8]) }))).toThrow(bad('rank 4'));
    expect(() => loadOnnx(flexModel({ q: f32([1, 3, 3, 8]), k, v }))).toThrow(bad('3 query heads'));
    expect(() => loadOnnx(flexModel({ q, k: f32([1, 2, 3, 6]), v }))).toThrow(bad('head size'));
    expect(() => loadOnnx(flexModel({ q, k, v: rng.tensor([1, 2, 3, 8], 'float64') }))).toThrow(bad('one element type'));
  });
});
