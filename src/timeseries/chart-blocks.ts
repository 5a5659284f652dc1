// Which blocks a chart decodes (D65): a block lying wholly inside one bucket of
// the range gives the addon its summary (the rows holding its first, last,
// minimum and maximum, native/src/block-summary.h) instead of its payload, so
// only blocks cut by a bucket edge or an end of the range are fetched and
// decoded. What a chart reads then grows with its width, not with its rows.
// A cut block whose segments the source keeps (the block cache) is decoded
// only where a bucket edge or an end of the range falls (SEGMENT_ROWS rows
// about it, native/src/block-segments.h): at width 2,000 a bucket of a 10M-row
// series is smaller than a block, and every block is cut.
import type { BlockIndex } from "./blocks/block-store.js";
import { Chart } from "../native/chart.js";

/** A run of an index's blocks, [lo, hi). */
export interface IndexRun {
  index: BlockIndex;
  lo: number;
  hi: number;
  /** Frees the index now, once the chart is done with it; none for an index the source keeps. */
  release?: () => void;
}

/** Payloads for a chart, and how to free those only it holds once it is done with them. */
export interface PayloadBatch {
  payloads: Buffer[];
  release: () => void;
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
  payloads(sid: number, rowids: number[], firsts: number[], segments?: (Buffer | undefined)[]): Promise<PayloadBatch>;
}

/** A block the index named was replaced by a write meanwhile: the chart is read again. */
export class BlocksMoved extends Error {}

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

/**
 * The source's batches are read as the addon works on the ones before; what
 * a batch read for the chart alone is freed as soon as the addon is done with
 * it (its next add() or finish()), so that a chart holds about two batches,
 * not all it read (native/detach.ts freeNow).
 */
async function chartOnce(
  source: ChartSource,
  sid: number,
  from: number,
  to: number,
  width: number,
  signal: AbortSignal,
): Promise<Buffer[]> {
  const chart = new Chart(from, to, width);
  /** Frees what the addon holds until its next add() or finish(). */
  let held: (() => void)[] = [];
  const done = () => {
    for (const release of held) release();
    held = [];
  };
  for await (const { index, lo, hi, release } of source.runs(sid, from, to)) {
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
      const batch = cut.length > 0 ? await source.payloads(sid, cut, firsts, segments) : { payloads: [], release: () => {} };
      signal.throwIfAborted(); // D28: a client that goes away stops the work, also before the first row
      segments.length = batch.payloads.length;
      chart.add(batch.payloads, index.summaries, Int32Array.from(order), segments);
      done();
      held.push(batch.release);
    }
    if (release) held.push(release);
  }
  const rows = chart.finish();
  done();
  return rows;
}
