/**
 * ONNX mappers of CumProd (opset 26), Det and BitCast (opset 26): lib/ir/ops/numeric.ts.
 */
import { dtypeInfo, isComplex } from '../../../ir/dtype';
import { dtypeFromOnnx } from '../tensor-proto';
import { defineOnnxOp } from '../registry';

defineOnnxOp('CumProd', (ctx) => {
  const x = ctx.input(0);
  const axis = ctx.staticInts(1, 'axis');
  if (axis.length !== 1) ctx.bad(`axis must be a single integer, got [${axis.join(', ')}]`);
  const rank = x.tensorType.shape.length;
  if (axis[0]! < -rank || axis[0]! >= Math.max(rank, 1)) ctx.bad(`axis ${axis[0]} is out of range for rank ${rank}`);
  const flag = (name: string): boolean => {
    const v = ctx.attrInt(name, 0);
    if (v !== 0 && v !== 1) ctx.bad(`attribute ${name} must be 0 or 1, got ${v}`);
    return v === 1;
  };
  const dtype = x.tensorType.dtype;
  if (dtype === 'bool' || isComplex(dtype)) ctx.unsupported(`CumProd of ${dtype} is not supported`);
  return [ctx.emit('trt.cumprod_onnx', { self: x, dim: axis[0]!, exclusive: flag('exclusive'), reverse: flag('reverse') })];
});

defineOnnxOp('Det', (ctx) => [ctx.emit('aten.linalg_det.default', { A: ctx.input(0) })]);

defineOnnxOp('BitCast', (ctx) => {
  const x = ctx.input(0);
  const to = dtypeFromOnnx(ctx.attrInt('to'), `${ctx.where}: attribute to`);
  const from = x.tensorType.dtype;
  if (from === to) return [x];
  if (isComplex(from) || isComplex(to)) ctx.unsupported(`BitCast between ${from} and ${to} is not supported`);
  if (dtypeInfo(from).itemBytes !== dtypeInfo(to).itemBytes) {
    ctx.unsupported(`BitCast from ${from} to ${to} changes the element width; only casts between types of one width are supported`);
  }
  if (to === 'bool') ctx.unsupported('BitCast to bool is not supported (a byte other than 0 or 1 is no bool)');
  return [ctx.emit('trt.bitcast', { self: x, dtype: to })];
});

// TfIdfVectorizer (opset 9) over int32/int64 token ids; a string pool (pool_strings) is refused,
// strings having no tensor type here. The attributes are checked here so the kernel can trust them.
defineOnnxOp('TfIdfVectorizer', (ctx) => {
  const x = ctx.input(0);
  if (x.tensorType.dtype !== 'int32' && x.tensorType.dtype !== 'int64') ctx.unsupported(`only int32 and int64 token ids are supported, got ${x.tensorType.dtype}`);
  if (x.tensorType.shape.length > 2) ctx.bad(`the input must be [C] or [B, C], got rank ${x.tensorType.shape.length}`);
  if (ctx.has('pool_strings')) ctx.unsupported('pool_strings (string n-grams) is not supported');
  const mode = ctx.attrString('mode');
  if (mode !== 'TF' && mode !== 'IDF' && mode !== 'TFIDF') ctx.bad(`mode must be TF, IDF or TFIDF, got ${JSON.stringify(mode)}`);
  const min = ctx.attrInt('min_gram_length');
  const max = ctx.attrInt('max_gram_length');
  const skip = ctx.attrInt('max_skip_count');
  if (min < 1 || max < min || skip < 0) ctx.bad(`min_gram_length ${min}, max_gram_length ${max} and max_skip_count ${skip} must satisfy 1 <= min <= max and skip >= 0`);
  const counts = ctx.attrInts('ngram_counts');
  const indexes = ctx.attrInts('ngram_indexes');
  const pool = ctx.attrInts('pool_int64s', []);
  const weights = ctx.attrFloats('weights', []);
  if (counts.some((c, i) => c < 0 || c > pool.length || (i > 0 && c < counts[i - 1]!))) ctx.bad(`ngram_counts [${counts.join(', ')}] must be non-decreasing offsets into the ${pool.length} pool items`);
  // The pool holds whole n-grams of each size, and every n-gram needs an output index.
  const items = counts.map((c, i) => (i + 1 < counts.length ? counts[i + 1]! : pool.length) - c);
  items.forEach((n, i) => n % (i + 1) !== 0 && ctx.bad(`the ${n} pool items of ${i + 1}-grams are not whole ${i + 1}-grams`));
  const ngrams = items.reduce((sum, n, i) => sum + n / (i + 1), 0);
  if (indexes.length < ngrams || indexes.some((i) => i < 0)) ctx.bad(`ngram_indexes must give a non-negative index to each of the ${ngrams} n-grams, got ${indexes.length}`);
  const outSize = Math.max(...indexes) + 1;
  if (weights.length > 0 && weights.length < outSize) ctx.bad(`weights has ${weights.length} values for ${outSize} outputs`);
  return [
    ctx.emit('trt.tfidf_vectorizer', {
      self: x,
      mode,
      min_gram_length: min,
      max_gram_length: max,
      max_skip_count: skip,
      ngram_counts: counts,
      ngram_indexes: indexes,
      pool_int64s: pool,
      weights,
    }),
  ];
});
