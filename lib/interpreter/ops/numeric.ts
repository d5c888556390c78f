/** Interpreter implementations of lib/ir/ops/numeric.ts. */
import type { DType } from '../../ir/dtype';
import type { Tensor } from '../../ir/tensor';
import { bitcast, cumprod, det } from '../../kernels/numeric';
import { tfidfVectorizer } from '../../kernels/tfidf';
import { defineImpl } from '../registry';

defineImpl('trt.cumprod_onnx', (a) => [cumprod(a.self as Tensor, a.dim as number, { exclusive: a.exclusive as boolean, reverse: a.reverse as boolean })]);
defineImpl('aten.linalg_det.default', (a) => [det(a.A as Tensor)]);
defineImpl('trt.bitcast', (a) => [bitcast(a.self as Tensor, a.dtype as DType)]);
defineImpl('trt.tfidf_vectorizer', (a) => [
  tfidfVectorizer(a.self as Tensor, {
    mode: a.mode as 'TF' | 'IDF' | 'TFIDF',
    minGramLength: a.min_gram_length as number,
    maxGramLength: a.max_gram_length as number,
    maxSkipCount: a.max_skip_count as number,
    ngramCounts: a.ngram_counts as number[],
    ngramIndexes: a.ngram_indexes as number[],
    poolInt64s: a.pool_int64s as number[],
    weights: a.weights as number[],
  }),
]);
