// native/src/chart.cc: M4 over the blocks of one series (D50), on helper threads.
import { binding, type RawChart } from "./binding.js";

/** Widest chart (D50): pixel columns. */
export const MAX_CHART_WIDTH = 10_000;

/**
 * M4 over the blocks of one series (D50, native/src/chart.h): add the blocks in
 * time order, a batch at a time, then finish() gives the chosen rows as
 * encoded blocks, which the value readers write like any stored block. A
 * batch is read by helper threads after add() returns, so the caller fetches
 * the next one meanwhile; its blocks must not be changed or transferred
 * until the next add() or finish(), which throws what a batch threw.
 */
export class Chart {
  private readonly chart: RawChart;

  constructor(from: number, to: number, width: number) {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to)
      throw new RangeError("Chart: from and to must be whole seconds, from <= to");
    if (!(Number.isInteger(width) && width >= 1 && width <= MAX_CHART_WIDTH))
      throw new RangeError(`Chart: width must be a whole number in 1..${MAX_CHART_WIDTH}`);
    this.chart = new binding.Chart(from, to, width);
  }

  /**
   * With `order` (D65), the batch is its pairs in time order: (-1, 0) the next
   * of `blocks`, (offset, length) the summary of a block lying wholly inside
   * one bucket, within `summaries` (which must then stay unchanged as blocks).
   * `segments`, beside `blocks`: each block's segments (segmentBlock) where
   * known, so that only those a bucket edge falls in are decoded.
   */
  add(blocks: Uint8Array[], summaries?: Uint8Array, order?: Int32Array, segments?: (Uint8Array | undefined)[]): void {
    if (!Array.isArray(blocks) || !blocks.every((b) => b instanceof Uint8Array))
      throw new TypeError("Chart.add: expected an array of Uint8Array");
    if (
      segments !== undefined &&
      !(Array.isArray(segments) && segments.length === blocks.length && segments.every((s) => s === undefined || s instanceof Uint8Array))
    )
      throw new TypeError("Chart.add: expected segments as an array of Uint8Array or undefined beside the blocks");
    if (order === undefined) return this.chart.add(blocks, undefined, undefined, segments);
    if (!(summaries instanceof Uint8Array) || !(order instanceof Int32Array))
      throw new TypeError("Chart.add: expected summaries as a Uint8Array and order as an Int32Array");
    this.chart.add(blocks, summaries, order, segments);
  }

  finish(): Buffer[] {
    return this.chart.finish();
  }
}
