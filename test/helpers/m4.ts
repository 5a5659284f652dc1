// M4 (D50) in plain TypeScript, over rows as a values read gives them: the
// definition the native chart (native/src/chart.cc) is tested against, and
// the baseline bench/chart measures it against. Not on any request path.

/** A row: epoch seconds, then one cell per data field (null: missing). */
export type M4Row = readonly [number, ...(number | null)[]];

/**
 * The rows of `rows` (time order) that hold, in each of `width` equal buckets
 * over [from, to], the first and last timestamp and the min and max of every
 * field marked numeric (missing values and NaN skipped; of equal values the
 * earliest row), in time order without repeats.
 */
export function m4<R extends M4Row>(rows: readonly R[], numeric: readonly boolean[], from: number, to: number, width: number): R[] {
  const span = to - from + 1;
  const chosen: number[] = [];
  const min = numeric.map(() => -1);
  const max = numeric.map(() => -1);
  let bucket = -1;
  let first = -1;
  let last = -1;
  const close = () => {
    if (bucket < 0) return;
    chosen.push(first, last, ...min.filter((i) => i >= 0), ...max.filter((i) => i >= 0));
    min.fill(-1);
    max.fill(-1);
  };
  rows.forEach((row, i) => {
    const t = row[0];
    if (t < from || t > to) return;
    // Exact in doubles: (t - from) * width < 2^53 for every D24 range and width <= 10,000.
    const k = Math.floor(((t - from) * width) / span);
    if (k !== bucket) {
      close();
      bucket = k;
      first = i;
    }
    last = i;
    numeric.forEach((isNumeric, c) => {
      const v = row[c + 1];
      if (!isNumeric || v === null || Number.isNaN(v)) return;
      if (min[c] < 0 || v < (rows[min[c]][c + 1] as number)) min[c] = i;
      if (max[c] < 0 || v > (rows[max[c]][c + 1] as number)) max[c] = i;
    });
  });
  close();
  return [...new Set(chosen)].sort((a, b) => a - b).map((i) => rows[i]);
}
