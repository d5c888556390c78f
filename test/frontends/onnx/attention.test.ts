/**
 * ONNX Attention, RotaryEmbedding, TensorScatter and SwiGLU against onnxruntime (the same node;
 * for SwiGLU, of opset 28, onnxruntime's Mul and Sigmoid): Attention in 4-D and 3-D forms,
 * grouped kv heads, a KV cache (past in, present out), bool and float masks, causal masking
 * offset by the past, softcap, an explicit scale, qk_matmul_output, and through compile() on
 * the reference backend. ONNX's own node tests cover more forms
 * (docs/onnx-conformance-1.23.0.md); this runs where that set is absent.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { expectConvertedMatches } from '../../helpers/convert-compare';
import { buildSingleOpModel, closeOrt, floatAttr, runOrtOp, type OrtInput } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

const rng = new Random(61);
const TOL: Tolerance = { rtol: 1e-4, atol: 1e-5 };
const f32 = (shape: number[]): Tensor => rng.tensor(shape, 'float32', -1, 1);
const bools = (shape: number[], p = 0.7): Tensor => Tensor.from('bool', shape, Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => (rng.next() < p ? 1 : 0)));

afterAll(() => closeOrt());

async function expectMatchesOrt(inputs: OrtInput[], attributes: Record<string, unknown>, outputCount: number, opset = 23): Promise<void> {
  const spec = { opType: 'Attention', inputs, attributes: attributes as never, outputCount, opset };
  const want = await runOrtOp(spec);
  const feeds = inputs.filter((x): x is Tensor => x instanceof Tensor);
  const graph = loadOnnx(buildSingleOpModel(spec));
  const got = interpret(graph, feeds);
  want.forEach((w, i) => expectClose(got[i]!, w, TOL, `output ${i}`));
  await expectConvertedMatches(loadOnnx(buildSingleOpModel(spec)), feeds);
}

describe('ONNX Attention against onnxruntime', () => {
  test('4-D, a bool mask with causal, present key and value out', async () => {
    await expectMatchesOrt([f32([2, 3, 4, 8]), f32([2, 3, 6, 8]), f32([2, 3, 6, 8]), bools([4, 6])], { is_causal: 1 }, 3);
  });

  test('3-D grouped heads (6 query, 2 kv) with a KV cache, softcap and a float mask', async () => {
    await expectMatchesOrt(
      [f32([2, 3, 24]), f32([2, 3, 8]), f32([2, 3, 8]), f32([2, 1, 3, 5]), f32([2, 2, 2, 4]), f32([2, 2, 2, 4])],
      { q_num_heads: 6, kv_num_heads: 2, softcap: floatAttr(2) },
      3,
    );
  });

  // Mode 3 (the softmax): onnxruntime writes masked scores as -FLT_MAX where ONNX's reference has
  // -inf (modes 1 and 2), which the node tests check.
  test('4-D causal with a past, an explicit scale, and qk_matmul_output (the softmax)', async () => {
    await expectMatchesOrt([f32([1, 2, 3, 4]), f32([1, 2, 3, 4]), f32([1, 2, 3, 4]), null, f32([1, 2, 2, 4]), f32([1, 2, 2, 4])], { is_causal: 1, scale: floatAttr(0.3), qk_matmul_output_mode: 3 }, 4);
  });
});

describe('ONNX Attention-24 with nonpad_kv_seqlen (an external cache of per-batch valid lengths), against onnxruntime', () => {
  test('causal: each batch\'s frontier at its own length, keys past it masked', async () => {
    const lengths = Tensor.from('int64', [2], [6, 4]);
    await expectMatchesOrt([f32([2, 2, 3, 8]), f32([2, 2, 6, 8]), f32([2, 2, 6, 8]), null, null, null, lengths], { is_causal: 1 }, 1, 24);
  });
});

describe('ONNX RotaryEmbedding against onnxruntime', () => {
  const i64 = (shape: number[], values: number[]): Tensor => Tensor.from('int64', shape, values);
  async function expectRotaryMatches(inputs: OrtInput[], attributes: Record<string, unknown>): Promise<void> {
    const spec = { opType: 'RotaryEmbedding', inputs, attributes: attributes as never, opset: 23 };
    const [want] = await runOrtOp(spec);
    const feeds = inputs.filter((x): x is Tensor => x instanceof Tensor);
    expectClose(interpret(loadOnnx(buildSingleOpModel(spec)), feeds)[0]!, want!, TOL, 'RotaryEmbedding');
    await expectConvertedMatches(loadOnnx(buildSingleOpModel(spec)), feeds);
  }

  test('4-D, position ids, interleaved pairs over part of each head', async () => {
    await expectRotaryMatches([f32([2, 3, 5, 8]), f32([10, 3]), f32([10, 3]), i64([2, 5], [0, 1, 2, 3, 4, 9, 8, 7, 6, 5])], { interleaved: 1, rotary_embedding_dim: 6 });
  });

  test('3-D with num_heads, caches already per position, halves', async () => {
    await expectRotaryMatches([f32([2, 4, 12]), f32([2, 4, 3]), f32([2, 4, 3])], { num_heads: 2 });
  });
});

describe('ONNX TensorScatter (24) and SwiGLU (28)', () => {
  async function ours(spec: { opType: string; inputs: OrtInput[]; attributes?: Record<string, unknown>; opset: number }): Promise<Tensor> {
    const feeds = spec.inputs.filter((x): x is Tensor => x instanceof Tensor);
    const model = buildSingleOpModel({ ...spec, attributes: spec.attributes as never });
    await expectConvertedMatches(loadOnnx(model), feeds);
    return interpret(loadOnnx(model), feeds)[0]!;
  }

  test.each(['linear', 'circular'])('TensorScatter, %s: a KV cache updated at per-batch positions, against onnxruntime', async (mode) => {
    const spec = { opType: 'TensorScatter', inputs: [f32([2, 3, 6, 4]), f32([2, 3, 2, 4]), Tensor.from('int64', [2], [1, mode === 'circular' ? 5 : 4])], attributes: { mode }, opset: 24 };
    const [want] = await runOrtOp({ ...spec, attributes: spec.attributes as never });
    expectClose(await ours(spec), want!, TOL, 'TensorScatter');
  });

  test('SwiGLU(a, b, alpha) against onnxruntime computing a · sigmoid(alpha · a) · b from its own primitives', async () => {
    const [a, b] = [f32([3, 8]), f32([3, 8])];
    const got = await ours({ opType: 'SwiGLU', inputs: [a, b], attributes: { alpha: floatAttr(1.5) }, opset: 28 });
    const [scaled] = await runOrtOp({ opType: 'Mul', inputs: [a, Tensor.from('float32', [], [1.5])] });
    const [gate] = await runOrtOp({ opType: 'Sigmoid', inputs: [scaled!] });
    const [swish] = await runOrtOp({ opType: 'Mul', inputs: [a, gate!] });
    const [want] = await runOrtOp({ opType: 'Mul', inputs: [swish!, b] });
    expectClose(got, want!, TOL, 'SwiGLU');
  });
});
