// Rows of one series held by column, sorted by timestamp: what the block
// store merges, splits into blocks and hands to the codec.
import { valuesArray, type Column, type FieldKind } from "./block-codec.js";

export interface RowSet {
  /** Whole seconds, strictly increasing once normalised. */
  timestamps: Float64Array;
  columns: Column[];
}

/** Rows whose every column has its missing bytes (emptyRows makes them): the ones rows are copied into. */
export interface FilledRowSet extends RowSet {
  columns: (Column & { missing: Uint8Array })[];
}

export function emptyRows(kinds: readonly FieldKind[], capacity: number): FilledRowSet {
  return {
    timestamps: new Float64Array(capacity),
    columns: kinds.map((kind) => ({ kind, values: valuesArray(kind, capacity), missing: new Uint8Array(capacity) })),
  };
}

export function sliceRows(rows: RowSet, start: number, end: number): RowSet {
  return {
    timestamps: rows.timestamps.subarray(start, end),
    columns: rows.columns.map((c) => ({
      kind: c.kind,
      values: c.values.subarray(start, end),
      missing: c.missing ? c.missing.subarray(start, end) : null,
    })),
  };
}

function copyRow(from: RowSet, i: number, to: FilledRowSet, k: number): void {
  to.timestamps[k] = from.timestamps[i];
  for (let c = 0; c < to.columns.length; c++) {
    const src = from.columns[c];
    to.columns[c].values[k] = src.values[i];
    to.columns[c].missing[k] = src.missing ? src.missing[i] : 0;
  }
}

/** Sorted by timestamp; of rows with the same timestamp the last one wins (an upload's upsert order). */
export function normalizeRows(rows: RowSet): RowSet {
  const ts = rows.timestamps;
  let sorted = true;
  for (let i = 1; i < ts.length && sorted; i++) sorted = ts[i] > ts[i - 1];
  if (sorted) return rows;
  const order = Array.from(ts.keys()).sort((a, b) => ts[a] - ts[b] || a - b);
  const out = emptyRows(
    rows.columns.map((c) => c.kind),
    ts.length,
  );
  let k = 0;
  for (let j = 0; j < order.length; j++) {
    if (j + 1 < order.length && ts[order[j + 1]] === ts[order[j]]) continue; // a later row has this timestamp
    copyRow(rows, order[j], out, k++);
  }
  return sliceRows(out, 0, k);
}

/** Merges two normalised row sets; on equal timestamps `incoming` wins. */
export function mergeRows(existing: RowSet, incoming: RowSet): RowSet {
  const a = existing.timestamps;
  const b = incoming.timestamps;
  if (a.length === 0) return incoming;
  if (a[a.length - 1] < b[0]) return concatRows(existing, incoming);
  const out = emptyRows(
    incoming.columns.map((c) => c.kind),
    a.length + b.length,
  );
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i] < b[j])) copyRow(existing, i++, out, k++);
    else {
      if (i < a.length && a[i] === b[j]) i++; // replaced
      copyRow(incoming, j++, out, k++);
    }
  }
  return sliceRows(out, 0, k);
}

/** The row sets one after another (each sorted, each before the next); kinds from the first. */
export function concatRows(...sets: RowSet[]): FilledRowSet {
  const n = sets.reduce((sum, r) => sum + r.timestamps.length, 0);
  const out = emptyRows(
    sets[0].columns.map((c) => c.kind),
    n,
  );
  let at = 0;
  for (const from of sets) {
    out.timestamps.set(from.timestamps, at);
    from.columns.forEach((c, i) => {
      out.columns[i].values.set(c.values, at);
      if (c.missing) out.columns[i].missing.set(c.missing, at);
    });
    at += from.timestamps.length;
  }
  return out;
}

/** The rows outside [from, to]. */
export function withoutRange(rows: RowSet, from: number, to: number): RowSet {
  const ts = rows.timestamps;
  const start = lowerBound(ts, from);
  const end = lowerBound(ts, to + 1);
  if (start === end) return rows;
  return concatRows(sliceRows(rows, 0, start), sliceRows(rows, end, ts.length));
}

/** First index whose timestamp is >= t. */
export function lowerBound(ts: Float64Array, t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
