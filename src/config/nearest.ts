// The known name nearest to a mistyped one (D56): for unknown MERIDIAN_
// variables, a command's unknown options and unknown commands, so that each
// mistake is answered with what was probably meant.

/** The name of `known` nearest to `name` by edit distance (the first of equals). */
export function nearestOf(name: string, known: readonly string[]): string {
  let best = known[0];
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** The nearest name when it is near enough to be a typo of `name` (a third of its letters at most, and at least 2), else undefined. */
export function likelyMeant(name: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = nearestOf(name, known);
  return editDistance(name, best) <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** "; did you mean X?" for a likely typo of a known name, else "". */
export function didYouMean(name: string, known: readonly string[]): string {
  const meant = likelyMeant(name, known);
  return meant ? `; did you mean ${meant}?` : "";
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}
