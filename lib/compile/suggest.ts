/**
 * "Did you mean" for misspelled names (ops in `torchExecutedOps`): an op target's overloads
 * when the overload was left out, else the candidates within a small edit distance, closest
 * first.
 */

/** Levenshtein distance, case-insensitive (a user typing `Aten.Relu` meant `aten.relu`). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[y.length]!;
}

/** Whether `parts` occur in `whole` as a run of consecutive elements. */
function containsRun(whole: readonly string[], parts: readonly string[]): boolean {
  for (let i = 0; i + parts.length <= whole.length; i++) {
    if (parts.every((p, k) => whole[i + k] === p)) return true;
  }
  return false;
}

/**
 * Up to `limit` candidates closest to `word`. Best are the candidates `word` is a dotted
 * prefix of: an op target written without its overload (`aten.gelu` → `aten.gelu.default`,
 * `aten.add` → `aten.add.Scalar`, `aten.add.Tensor`), which edit distance alone never
 * suggests since the overload is longer than the budget. Then those at the smallest edit
 * distance, when it is within a third of its length (at least 2); else those containing its
 * dot-separated parts in a row (`relu` → `aten.relu.default`, `gelu.default` →
 * `aten.gelu.default`).
 */
export function closeMatches(word: string, candidates: Iterable<string>, limit = 5): string[] {
  const budget = Math.max(2, Math.floor(word.length / 3));
  const scored: Array<[string, number]> = [];
  const lower = word.toLowerCase();
  const parts = lower.split('.');
  for (const c of new Set(candidates)) {
    const cl = c.toLowerCase();
    if (cl.startsWith(`${lower}.`)) {
      scored.push([c, 0]);
      continue;
    }
    const d = editDistance(word, c);
    if (d <= budget) scored.push([c, d]);
    else if (containsRun(cl.split('.'), parts)) scored.push([c, budget + 1]);
  }
  const best = Math.min(...scored.map(([, d]) => d));
  return scored
    .filter(([, d]) => d === best)
    .map(([c]) => c)
    .sort()
    .slice(0, limit);
}
