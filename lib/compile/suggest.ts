/**
 * "Did you mean" for misspelled names (ops in `torchExecutedOps`): the candidates within a
 * small edit distance, closest first.
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

/**
 * Up to `limit` candidates closest to `word`: those at the smallest edit distance, when it is
 * within a third of its length (at least 2); else those containing it as a whole
 * dot-separated part (`relu` → `aten.relu.default`).
 */
export function closeMatches(word: string, candidates: Iterable<string>, limit = 5): string[] {
  const budget = Math.max(2, Math.floor(word.length / 3));
  const scored: Array<[string, number]> = [];
  const lower = word.toLowerCase();
  for (const c of new Set(candidates)) {
    const d = editDistance(word, c);
    if (d <= budget) scored.push([c, d]);
    else if (c.toLowerCase().split('.').includes(lower)) scored.push([c, budget + 1]);
  }
  const best = Math.min(...scored.map(([, d]) => d));
  return scored
    .filter(([, d]) => d === best)
    .map(([c]) => c)
    .sort()
    .slice(0, limit);
}
