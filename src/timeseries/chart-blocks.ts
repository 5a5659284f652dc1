// Which blocks a chart decodes (D65): a block lying wholly inside one bucket of
// the range gives the addon its summary (the rows holding its first, last,
// minimum and maximum, native/src/block-summary.h) instead of its payload, so
// only blocks cut by a bucket edge or an end of the range are fetched and
// decoded. What a chart reads then grows with its width, not with its rows.
// A cut block whose segments the source keeps (the block cache) is decoded
// only where a bucket edge or an end of the range falls (SEGMENT_ROWS rows
// about it, native/src/block-segments.h): at width 2,000 a bucket of a 10M-row
// series is smaller than a block, and every block is cut.
import type { SummaryRow } from "./blocks/block-store.js";
import { Chart } from "./blocks/native.js";

/**
 * Blocks of a series in time order, without payloads: block i is
 * first[i]..last[i], stored as rowid[i], its summary the bytes
 * summaries[offsets[i]..offsets[i + 1]] (none when empty: a block not yet
 * summarised is decoded).
 */
export interface BlockIndex {
  count: number;
  first: Float64Array;
  last: Float64Array;
  rowid: Float64Array;
  summaries: Buffer;
  offsets: Uint32Array;
}

/** A run of an index's blocks, [lo, hi). */
export interface IndexRun {
  index: BlockIndex;
  lo: number;
  hi: number;
}

/** Where a chart finds its blocks: the index of a range a run at a time, and the payloads of the blocks it decodes. */
export interface ChartSource {
  runs(sid: number, from: number, to: number): AsyncIterable<IndexRun>;
  /**
   * The payloads of these blocks (by rowid, each starting at its `firsts`
   * second), in their order; throws BlocksMoved when one is no longer stored
   * as such. Where `segments` is given, sets segments[i] to block i's
   * segments (segmentBlock, SEGMENT_ROWS) when the source keeps them.
   */
  payloads(sid: number, rowids: number[], firsts: number[], segments?: (Buffer | undefined)[]): Promise<Buffer[]>;
}

/** A block the index named was replaced by a write meanwhile: the chart is read again. */
export class BlocksMoved extends Error {}

/** An index of rows in time order. */
export function indexOf(rows: readonly SummaryRow[]): BlockIndex {
  const count = rows.length;
  const index: BlockIndex = {
    count,
    first: new Float64Array(count),
    last: new Float64Array(count),
    rowid: new Float64Array(count),
    summaries: Buffer.concat(rows.flatMap((r) => (r.summary ? [r.summary] : []))),
    offsets: new Uint32Array(count + 1),
  };
  let at = 0;
  rows.forEach((r, i) => {
    index.first[i] = r.first_ts;
    index.last[i] = r.last_ts;
    index.rowid[i] = r.rowid;
    at += r.summary?.length ?? 0;
    index.offsets[i + 1] = at;
  });
  return index;
}

/** Indexes of consecutive runs of blocks as one. */
export function joinIndexes(parts: readonly BlockIndex[]): BlockIndex {
  const count = parts.reduce((n, p) => n + p.count, 0);
  const index: BlockIndex = {
    count,
    first: new Float64Array(count),
    last: new Float64Array(count),
    rowid: new Float64Array(count),
    summaries: Buffer.concat(parts.map((p) => p.summaries)),
    offsets: new Uint32Array(count + 1),
  };
  let at = 0;
  let bytes = 0;
  for (const p of parts) {
    index.first.set(p.first, at);
    index.last.set(p.last, at);
    index.rowid.set(p.rowid, at);
    for (let i = 1; i <= p.count; i++) index.offsets[at + i] = bytes + p.offsets[i];
    at += p.count;
    bytes += p.summaries.length;
  }
  return index;
}

/** The bucket of second t (D50); exact in doubles: (t - from) * width < 2^53 for every D24 range and width <= 10,000. */
export function bucketOf(t: number, from: number, to: number, width: number): number {
  return Math.floor(((t - from) * width) / (to - from + 1));
}

/** Whether a block of first..last lies wholly inside one bucket of the range, so that its summary stands for it. */
export function summaryServes(first: number, last: number, from: number, to: number, width: number): boolean {
  return first >= from && last <= to && bucketOf(first, from, to, width) === bucketOf(last, from, to, width);
}

/**
 * Rows per segment of a cut block (D65): a bucket edge costs decoding about
 * this many rows of its block, a W1 block about 5.5 KB of segments in memory
 * beside its ~13.5 KB payload.
 * Measured with bench/chart/scale.js.
 */
export const SEGMENT_ROWS = 512;

/** Blocks decoded per batch handed to the addon (about 640 KB of W1): enough for its two threads to share. */
const DECODED = 64;
/** Summaries per batch at most, so the addon's helper works on one while the next is prepared. */
const ITEMS = 8192;

/** Times a chart is read again when writes keep replacing the blocks its index named. */
const RETRIES = 3;

/** The chart's rows (Chart.finish()) of a series over [from, to], read again while a write replaced a block between the index and its payload. */
export async function chartOf(
  source: ChartSource,
  sid: number,
  from: number,
  to: number,
  width: number,
  signal: AbortSignal,
): Promise<Buffer[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await chartOnce(source, sid, from, to, width, signal);
    } catch (e) {
      if (!(e instanceof BlocksMoved) || attempt >= RETRIES) throw e;
    }
  }
}

/** The source's batches are read as the addon works on the ones before. */
async function chartOnce(
  source: ChartSource,
  sid: number,
  from: number,
  to: number,
  width: number,
  signal: AbortSignal,
): Promise<Buffer[]> {
  const chart = new Chart(from, to, width);
  for await (const { index, lo, hi } of source.runs(sid, from, to)) {
    for (let i = lo; i < hi;) {
      const order: number[] = [];
      const cut: number[] = [];
      const firsts: number[] = [];
      for (; i < hi && cut.length < DECODED && order.length < 2 * ITEMS; i++) {
        const start = index.offsets[i];
        const length = index.offsets[i + 1] - start;
        if (length > 0 && summaryServes(index.first[i], index.last[i], from, to, width)) order.push(start, length);
        else {
          order.push(-1, 0);
          cut.push(index.rowid[i]);
          firsts.push(index.first[i]);
        }
      }
      const segments: (Buffer | undefined)[] = [];
      const payloads = cut.length > 0 ? await source.payloads(sid, cut, firsts, segments) : [];
      signal.throwIfAborted(); // D28: a client that goes away stops the work, also before the first row
      segments.length = payloads.length;
      chart.add(payloads, index.summaries, Int32Array.from(order), segments);
    }
  }
  return chart.finish();
}
