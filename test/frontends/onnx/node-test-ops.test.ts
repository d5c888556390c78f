/**
 * ONNX ops that ONNX 1.23's node tests exercised and the importer lacked: QLinearConv (composed:
 * exact integer convolution, requantized with saturation and rounding half to even), MaxPool's
 * Indices output with storage_order=1 (column-major), MelWeightMatrix (folded at import from
 * constant scalars) and TfIdfVectorizer (trt.tfidf_vectorizer, run by the interpreter). Each is
 * compared with onnxruntime-node running the same one-node model; bad forms are typed errors
 * naming the node.
 */
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, type Tolerance } from '../../helpers/compare';
import { buildSingleOpModel, closeOrt, floatsAttr, runOrtOp, type OrtOpSpec } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

afterAll(() => closeOrt());

const rng = new Random(20261207);
const EXACT: Tolerance = { rtol: 0, atol: 0 };
const constant = (t: Tensor): { constant: Tensor } => ({ constant: t });
const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

/** Our import + interpreter against onnxruntime on the same model; the graph inputs are the non-constant ones. */
async function expectMatchesOrt(spec: OrtOpSpec, tol: Tolerance = EXACT): Promise<Tensor[]> {
  const want = await runOrtOp(spec);
  const runtime = spec.inputs.filter((i): i is Tensor => i instanceof Tensor);
  const got = interpret(loadOnnx(buildSingleOpModel(spec)), runtime);
  want.forEach((w, i) => {
    expect(got[i]!.dtype).toBe(w.dtype);
    expectClose(got[i]!, w, tol, `${spec.opType} output ${i} ${JSON.stringify(spec.attributes)}`);
  });
  return got;
}

const nodeError = (spec: OrtOpSpec, code: string, text: string): void => {
  expect(() => loadOnnx(buildSingleOpModel(spec))).toThrow(
    expect.objectContaining({ code, message: expect.stringMatching(new RegExp(`ONNX node "${spec.opType}_0"[\\s\\S]*${text}`)) }),
  );
};

describe('QLinearConv against onnxruntime', () => {
  test('uint8, per-tensor scales and zero points, pads and strides', async () => {
    const x = rng.intTensor([2, 3, 7, 6], 0, 255, 'uint8');
    const w = rng.intTensor([4, 3, 3, 3], 0, 255, 'uint8');
    await expectMatchesOrt({
      opType: 'QLinearConv',
      inputs: [
        x,
        constant(f32([], [0.02])),
        constant(Tensor.from('uint8', [], [121])),
        constant(w),
        constant(f32([], [0.005])),
        constant(Tensor.from('uint8', [], [130])),
        constant(f32([], [0.07])),
        constant(Tensor.from('uint8', [], [100])),
      ],
      attributes: { pads: [1, 0, 1, 2], strides: [2, 1] },
      opset: 10,
    });
  });

  test('int8, per-channel w scales, bias, groups', async () => {
    const x = rng.intTensor([1, 4, 5, 5], -128, 127, 'int8');
    const w = rng.intTensor([6, 2, 2, 3], -128, 127, 'int8');
    await expectMatchesOrt({
      opType: 'QLinearConv',
      inputs: [
        x,
        constant(f32([], [0.03])),
        constant(Tensor.from('int8', [], [-3])),
        constant(w),
        constant(f32([6], [0.001, 0.002, 0.0015, 0.004, 0.0007, 0.003])),
        constant(Tensor.from('int8', [6], [0, 0, 0, 0, 0, 0])),
        constant(f32([], [0.05])),
        constant(Tensor.from('int8', [], [5])),
        constant(rng.intTensor([6], -2000, 2000, 'int32')),
      ],
      attributes: { group: 2, dilations: [1, 2] },
      opset: 10,
    });
  });

  test('an int16 x is refused, naming the node', () => {
    const spec: OrtOpSpec = {
      opType: 'QLinearConv',
      inputs: [
        Tensor.from('int16', [1, 1, 2, 2], [1, 2, 3, 4]),
        constant(f32([], [1])),
        constant(Tensor.from('int16', [], [0])),
        constant(Tensor.from('int8', [1, 1, 1, 1], [1])),
        constant(f32([], [1])),
        constant(Tensor.from('int8', [], [0])),
        constant(f32([], [1])),
        constant(Tensor.from('int8', [], [0])),
      ],
      opset: 10,
    };
    nodeError(spec, 'E_UNSUPPORTED_OP', 'only uint8 and int8');
  });
});

describe('MaxPool Indices with storage_order=1 against onnxruntime', () => {
  test('2-D, batch and channels, pads and strides', async () => {
    const x = rng.tensor([2, 3, 5, 7], 'float32', -4, 4);
    await expectMatchesOrt({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [2, 3], strides: [2, 2], pads: [1, 1, 0, 1], storage_order: 1 }, outputCount: 2, opset: 12 });
  });

  test('3-D', async () => {
    const x = rng.tensor([1, 2, 4, 3, 5], 'float32', -4, 4);
    await expectMatchesOrt({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [2, 2, 2], storage_order: 1 }, outputCount: 2, opset: 12 });
  });

  test('storage_order without the Indices output (as the dynamo exporter writes every MaxPool) imports and matches', async () => {
    const x = rng.tensor([1, 2, 6, 6], 'float32', -4, 4);
    for (const order of [0, 1]) await expectMatchesOrt({ opType: 'MaxPool', inputs: [x], attributes: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], storage_order: order }, opset: 20 });
  });

  test('storage_order 2 is refused, naming the node', () => {
    nodeError({ opType: 'MaxPool', inputs: [rng.tensor([1, 1, 4, 4])], attributes: { kernel_shape: [2, 2], storage_order: 2 }, outputCount: 2, opset: 12 }, 'E_BAD_MODEL', 'storage_order');
  });
});

describe('MelWeightMatrix against onnxruntime', () => {
  const inputs = (bins: number, dft: number, rate: number, lo: number, hi: number): OrtOpSpec['inputs'] => [
    constant(Tensor.from('int32', [], [bins])),
    constant(Tensor.from('int32', [], [dft])),
    constant(Tensor.from('int32', [], [rate])),
    constant(f32([], [lo])),
    constant(f32([], [hi])),
  ];

  test.each([
    [8, 16, 8192, 0, 4096],
    [10, 64, 16000, 20, 7600],
    [4, 31, 22050, 100, 10000],
  ])('%i bins, dft_length %i, %i Hz, [%i, %i] Hz: folded at import', async (bins, dft, rate, lo, hi) => {
    const spec: OrtOpSpec = { opType: 'MelWeightMatrix', inputs: inputs(bins, dft, rate, lo, hi), opset: 17 };
    expect(loadOnnx(buildSingleOpModel(spec)).nodes.every((n) => n.kind !== 'call')).toBe(true);
    await expectMatchesOrt(spec, { rtol: 0, atol: 1e-6 });
  });

  test('a num_mel_bins fed at run time: the node is imported at run time, with onnxruntime\'s values', async () => {
    const [, ...rest] = inputs(8, 16, 8192, 0, 4096);
    const spec: OrtOpSpec = { opType: 'MelWeightMatrix', inputs: [Tensor.from('int32', [], [8]), ...rest], opset: 17 };
    expect(loadOnnx(buildSingleOpModel(spec)).nodes.some((n) => n.kind === 'call' && n.target === 'trt.deferred_node')).toBe(true);
    await expectMatchesOrt(spec, { rtol: 0, atol: 1e-6 });
  });

  test('bands past the spectrogram bins are refused, naming the node', () => {
    nodeError({ opType: 'MelWeightMatrix', inputs: inputs(8, 16, 8192, 0, 8192), opset: 17 }, 'E_BAD_MODEL', 'reach past the 9 spectrogram bins');
  });
});

describe('TfIdfVectorizer against onnxruntime', () => {
  // 4 unigrams, 3 bigrams, 2 trigrams.
  const pool = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 4, 5, 6, 7];
  const counts = [0, 4, 10];
  const indexes = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const weights = floatsAttr([0.5, 1.5, 2, 0.25, 3, 1, 0.75, 2.5, 4]);

  test.each([
    ['TF', 1, 2, 0, 'int64', [12]],
    ['TF', 2, 2, 5, 'int32', [2, 9]],
    ['IDF', 1, 3, 2, 'int64', [3, 10]],
    ['TFIDF', 1, 3, 3, 'int32', [16]],
    ['TFIDF', 2, 3, 1, 'int64', [2, 8]],
  ] as const)('%s, grams %i-%i, skip %i, %s %j', async (mode, min, max, skip, dtype, shape) => {
    const x = rng.intTensor([...shape], 2, 8, dtype);
    await expectMatchesOrt({
      opType: 'TfIdfVectorizer',
      inputs: [x],
      attributes: { mode, min_gram_length: min, max_gram_length: max, max_skip_count: skip, ngram_counts: counts, ngram_indexes: indexes, pool_int64s: pool, weights: mode === 'TF' ? undefined : weights },
      opset: 9,
    });
  });

  test('IDF and TFIDF without weights, ngram_indexes out of pool order', async () => {
    for (const mode of ['IDF', 'TFIDF']) {
      await expectMatchesOrt({
        opType: 'TfIdfVectorizer',
        inputs: [rng.intTensor([2, 11], 2, 8, 'int64')],
        attributes: { mode, min_gram_length: 1, max_gram_length: 2, max_skip_count: 1, ngram_counts: [0, 4], ngram_indexes: [6, 0, 3, 1, 5, 2, 4], pool_int64s: pool.slice(0, 10) },
        opset: 9,
      });
    }
  });

  test('a string pool and a bad mode are refused, naming the node', () => {
    const base = { opType: 'TfIdfVectorizer', inputs: [Tensor.from('int64', [3], [1, 2, 3])], opset: 9 };
    const attrs = { min_gram_length: 1, max_gram_length: 1, max_skip_count: 0, ngram_counts: [0], ngram_indexes: [0, 1] };
    nodeError({ ...base, attributes: { ...attrs, mode: 'TF', pool_strings: ['a', 'b'] } }, 'E_UNSUPPORTED_OP', 'pool_strings');
    nodeError({ ...base, attributes: { ...attrs, mode: 'BM25', pool_int64s: [1, 2] } }, 'E_BAD_MODEL', 'mode');
    nodeError({ ...base, attributes: { ...attrs, max_gram_length: 2, ngram_counts: [0, 2], mode: 'TF', pool_int64s: [1, 2, 3, 4, 5] } }, 'E_BAD_MODEL', 'not whole 2-grams');
  });
});
