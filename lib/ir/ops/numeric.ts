/**
 * Numeric ops ONNX has and ATen spells differently or lacks: ONNX CumProd (exclusive and
 * reverse), the determinant, and BitCast (the same bytes read as another element type).
 */
import { dtypeInfo, isComplex, isFloating, isInteger } from '../dtype';
import { tensorType } from '../graph';
import { formatShape } from '../symbolic';
import { defineOp } from './registry';
import { normAxis } from './shape-rules';

// ONNX CumProd: the input type is kept (integers wrap at their width); exclusive starts at 1.
defineOp('trt.cumprod_onnx(Tensor self, int dim, bool exclusive=False, bool reverse=False) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  normAxis(ctx, ctx.int('dim'), self.shape.length);
  if (!isFloating(self.dtype) && !isInteger(self.dtype)) ctx.fail(`CumProd is defined for real numbers, got ${self.dtype}`);
  return [tensorType(self.dtype, self.shape)];
});

defineOp('aten.linalg_det.default(Tensor A) -> Tensor', (ctx) => {
  const a = ctx.tensor('A');
  const r = a.shape.length;
  if (r < 2) ctx.fail(`A ${formatShape(a.shape)} must have at least 2 dims (a batch of square matrices)`);
  const [m, n] = [a.shape[r - 2]!, a.shape[r - 1]!];
  if (typeof m === 'number' && typeof n === 'number' && m !== n) ctx.fail(`A ${formatShape(a.shape)} must hold square matrices`);
  if (!isFloating(a.dtype)) ctx.fail(`A must be a floating-point tensor, got ${a.dtype}`);
  return [tensorType(a.dtype, a.shape.slice(0, -2))];
});

// Reinterprets the bytes of each element; only between types of one width, so the shape stays.
defineOp('trt.bitcast(Tensor self, ScalarType dtype) -> Tensor', (ctx) => {
  const self = ctx.tensor('self');
  const to = ctx.dtype('dtype');
  if (to === null) return ctx.fail('dtype is required');
  if (isComplex(self.dtype) || isComplex(to)) ctx.fail(`complex element types are not bit-cast (${self.dtype} to ${to})`);
  if (to === 'bool') ctx.fail('a bit-cast to bool could make values other than 0 and 1');
  const [from, into] = [dtypeInfo(self.dtype).itemBytes, dtypeInfo(to).itemBytes];
  if (from !== into) ctx.fail(`${self.dtype} (${from} bytes) and ${to} (${into} bytes) differ in width`);
  return [tensorType(to, self.shape)];
});

// ONNX TfIdfVectorizer over integer token ids: [C] -> [O], [B, C] -> [B, O], O = max(ngram_indexes) + 1,
// float32 n-gram counts or weights (lib/kernels/tfidf.ts).
defineOp(
  'trt.tfidf_vectorizer(Tensor self, str mode, int min_gram_length, int max_gram_length, int max_skip_count, int[] ngram_counts, int[] ngram_indexes, int[] pool_int64s, float[] weights) -> Tensor',
  (ctx) => {
    const self = ctx.tensor('self');
    if (self.dtype !== 'int32' && self.dtype !== 'int64') ctx.fail(`the token ids must be int32 or int64, got ${self.dtype}`);
    if (self.shape.length > 2) ctx.fail(`the input ${formatShape(self.shape)} must be [C] or [B, C]`);
    const indexes = ctx.ints('ngram_indexes');
    if (indexes.length === 0 || indexes.some((i) => i < 0)) ctx.fail('ngram_indexes must be non-empty and non-negative');
    const out = Math.max(...indexes) + 1;
    return [tensorType('float32', self.shape.length === 2 ? [self.shape[0]!, out] : [out])];
  },
);
