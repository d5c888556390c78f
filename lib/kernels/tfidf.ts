/**
 * ONNX's TfIdfVectorizer over integer token ids, following ONNX's reference implementation:
 * the pool's n-grams in a trie (ids from 1 in pool order, counting the n-grams of sizes outside
 * [min_gram_length, max_gram_length] without entering them), each row scanned from every start
 * at every skip distance 1..max_skip_count+1 (unigrams counted only at the first), then weighted.
 */
import { Tensor } from '../ir/tensor';

export interface TfIdfOptions {
  mode: 'TF' | 'IDF' | 'TFIDF';
  minGramLength: number;
  maxGramLength: number;
  maxSkipCount: number;
  ngramCounts: readonly number[];
  ngramIndexes: readonly number[];
  poolInt64s: readonly number[];
  weights: readonly number[];
}

/** A trie node: the n-gram id ending here (0: none) and the next tokens, or null before any is added. */
interface Part {
  id: number;
  leaves: Map<bigint, Part> | null;
}

/** The trie of the pool's n-grams of the sizes counted. */
function buildTrie(o: TfIdfOptions): Part {
  const root: Part = { id: -10, leaves: new Map() };
  const pool = o.poolInt64s;
  let ngramId = 1;
  let size = 1;
  for (let i = 0; i < o.ngramCounts.length; i++, size++) {
    const start = o.ngramCounts[i]!;
    const end = i + 1 < o.ngramCounts.length ? o.ngramCounts[i + 1]! : pool.length;
    const items = end - start;
    if (items <= 0) continue;
    const count = Math.floor(items / size);
    if (size < o.minGramLength || size > o.maxGramLength) {
      ngramId += count;
      continue;
    }
    let at = start;
    for (let g = 0; g < count; g++) {
      let n = 1;
      let leaves = root.leaves!;
      while (at < pool.length) {
        const key = BigInt(pool[at]!);
        let p = leaves.get(key);
        if (p === undefined) {
          p = { id: 0, leaves: null };
          leaves.set(key, p);
        }
        at++;
        if (n === size) {
          p.id = ngramId++;
          break;
        }
        p.leaves ??= new Map();
        leaves = p.leaves;
        n++;
      }
    }
  }
  return root;
}

/** Y of TfIdfVectorizer for x of shape [C] or [B, C] (a 0-d x counts as [1]): [O] or [B, O], float32. */
export function tfidfVectorizer(x: Tensor, o: TfIdfOptions): Tensor {
  const outSize = Math.max(...o.ngramIndexes) + 1;
  const batched = x.shape.length === 2;
  const rows = batched ? x.shape[0]! : 1;
  const cols = batched ? x.shape[1]! : x.shape.length === 1 ? x.shape[0]! : 1;
  // Token ids as bigints, so int64 ids past 2^53 match the pool exactly.
  const tokens = Array.from(x.data as BigInt64Array | Int32Array, (v: bigint | number) => BigInt(v));
  const freq = new Float64Array(rows * outSize);
  const root = buildTrie(o);
  if (tokens.length > 0 && root.leaves!.size > 0) {
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      let startSize = o.minGramLength;
      for (let skip = 1; skip <= o.maxSkipCount + 1; skip++) {
        for (let start = 0; start < cols; start++) {
          // No n-gram of the smallest size counted fits from here on.
          if (start + skip * (startSize - 1) >= cols) break;
          let node = root;
          let item = start;
          let size = 1;
          while (node.leaves !== null && node.leaves.size > 0 && size <= o.maxGramLength && item < cols) {
            const next = node.leaves.get(tokens[base + item]!);
            if (next === undefined) break;
            if (size >= startSize && next.id !== 0) freq[r * outSize + o.ngramIndexes[next.id - 1]!]! += 1;
            node = next;
            size++;
            item += skip;
          }
        }
        // Unigrams do not depend on the skip distance: counted once.
        if (startSize === 1) {
          startSize++;
          if (startSize > o.maxGramLength) break;
        }
      }
    }
  }
  const w = o.weights;
  const out = Array.from(freq, (f, i) => {
    if (o.mode === 'TF') return f;
    const weight = w.length > 0 ? w[i % outSize]! : 1;
    return o.mode === 'IDF' ? (f > 0 ? weight : 0) : weight * f;
  });
  return Tensor.from('float32', batched ? [rows, outSize] : [outSize], out);
}
