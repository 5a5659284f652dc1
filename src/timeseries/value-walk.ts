// The one walk behind every value read, whole range or paged, one series or
// many, JSON or columns: series in request order, each block of the range in
// time order, until the page's bounds (D26, D35). What a block's rows become
// is the encoder's business; the walk only counts them.
import { blocksOf, type BlockStore } from "./blocks/block-store.js";
import type { Taken } from "./blocks/native.js";
import type { ResumePoint } from "./value-cursor.js";

/** What an encoder made of the rows of one block that lie in [from, to], at most maxRows of them. */
export interface Encoded<T> extends Taken {
  out: T;
}

export type BlockEncoder<T> = (payload: Uint8Array, from: number, to: number, maxRows: number, first: boolean) => Encoded<T>;

export interface WalkSeries {
  id: string;
  sid: number;
  /** Its data fields, in order: what an answer's columns are (D64). */
  dataFields: readonly { name: string; dataType: string }[];
}

export interface WalkPlan {
  series: readonly WalkSeries[];
  /** Inclusive range for series that have not begun. */
  from: number;
  to: number;
  /** Rows in the page; Infinity for a whole-range read. */
  limit: number;
  /** Series entries in the page; Infinity unless paged multi-series. */
  maxEntries: number;
  start: ResumePoint;
}

export type WalkStep<T> =
  { kind: "begin"; series: WalkSeries } | { kind: "rows"; out: T; rows: number } | { kind: "end"; series: WalkSeries };

/** Walks the plan; returns where the next page starts, or undefined at the end of the data. */
export async function* walkValues<T>(
  store: BlockStore,
  plan: WalkPlan,
  encode: BlockEncoder<T>,
): AsyncGenerator<WalkStep<T>, ResumePoint | undefined> {
  const { series, to } = plan;
  let budget = plan.limit;
  let entries = 0;
  for (let index = plan.start.index; index < series.length; index++) {
    if (entries === plan.maxEntries) return { index, after: null };
    const s = series[index];
    const after = index === plan.start.index ? plan.start.after : null;
    const from = after !== null ? after + 1 : plan.from;
    yield { kind: "begin", series: s };
    entries++;
    let first = true;
    let last = 0;
    let cut = false;
    for await (const block of blocksOf(store, s.sid, from, to, budget)) {
      const e = encode(block.payload, from, to, budget, first);
      if (e.rows > 0) {
        yield { kind: "rows", out: e.out, rows: e.rows };
        first = false;
        last = e.last;
        budget -= e.rows;
      }
      if (budget === 0) {
        cut = e.more || (last < to && (await store.startsWithin(s.sid, last + 1, to)));
        break;
      }
    }
    yield { kind: "end", series: s };
    if (cut) return { index, after: last };
    if (budget === 0 && index + 1 < series.length) return { index: index + 1, after: null };
  }
  return undefined;
}
