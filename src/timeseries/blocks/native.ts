// The C++ addon (native/). This wrapper checks arguments so the C++ side
// only guards memory safety, as better-sqlite3 does.
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { loadAddon } from "../../runtime/addons.js";

export interface NativeColumn {
  kind: number;
  values: Float32Array | Float64Array | Int32Array;
  missing: Uint8Array | null;
}

interface NativeAddon {
  crc32c(bytes: Uint8Array): number;
  encodeBlock(timestamps: Float64Array, kinds: Uint8Array, values: NativeColumn["values"][], missing: (Uint8Array | null)[]): Buffer;
  decodeBlock(bytes: Uint8Array): { timestamps: Float64Array; columns: NativeColumn[] };
  blockColumns(bytes: Uint8Array, from: number, to: number, maxRows: number): Taken & { parts: Uint8Array[] };
  blockJson(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean): Taken & { text: Buffer };
  summarizeBlock(bytes: Uint8Array): Buffer;
  segmentBlock(bytes: Uint8Array, segmentRows: number): Buffer;
  Chart: new (from: number, to: number, width: number) => NativeChart;
}

interface NativeChart {
  add(blocks: Uint8Array[], summaries?: Uint8Array, order?: Int32Array, segments?: (Uint8Array | undefined)[]): void;
  finish(): Buffer[];
}

// MERIDIAN_NATIVE_ADDON names another build of the same sources: native/check.sh
// runs the addon's tests against one built with AddressSanitizer and UBSan,
// which cannot replace the release build the server uses. The single
// executable carries its own copy (runtime/addons.ts).
export const addon = loadAddon(
  "meridian_native.node",
  // Same depth from src/ (tests) and dist/ (built): three levels below the package root.
  () =>
    process.env.MERIDIAN_NATIVE_ADDON ||
    join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "native", "build", "Release", "meridian_native.node"),
) as NativeAddon;

/** CRC-32C (Castagnoli) of the bytes. */
export function crc32c(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("crc32c: expected a Uint8Array");
  return addon.crc32c(bytes);
}

/** What a read took from a block's rows of [from, to] (native/src/block-view.h). */
export interface Taken {
  rows: number;
  /** Timestamp of the last row taken (when rows > 0). */
  last: number;
  /** Whether the block holds rows of [from, to] after the last one taken. */
  more: boolean;
}

/** Checks a range read's arguments; returns the row bound as the uint32 the addon takes (Infinity: all). */
export function rowBound(name: string, bytes: Uint8Array, from: number, to: number, maxRows: number): number {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${name}: expected a Uint8Array`);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new RangeError(`${name}: from and to must be whole seconds`);
  if (!(maxRows >= 0 && (Number.isInteger(maxRows) || maxRows === Infinity)))
    throw new RangeError(`${name}: maxRows must be a whole number >= 0 or Infinity`);
  return Math.min(maxRows, 0xffff_ffff);
}

/** The block's rows of [from, to], at most maxRows, as the spec's JSON rows, comma separated (a leading comma unless first). */
export function blockJson(bytes: Uint8Array, from: number, to: number, maxRows: number, first: boolean): Taken & { text: Buffer } {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- the addon takes a real boolean, whatever a JavaScript caller passed
  return addon.blockJson(bytes, from, to, rowBound("blockJson", bytes, from, to, maxRows), first === true);
}

/** The same rows as the length-delimited wire payloads of ValuesChunk fields: [timestamps, column...], views over one buffer (native/src/value-columns.h). */
export function blockColumns(bytes: Uint8Array, from: number, to: number, maxRows: number): Taken & { parts: Uint8Array[] } {
  return addon.blockColumns(bytes, from, to, rowBound("blockColumns", bytes, from, to, maxRows));
}

/** A block's summary (D65, native/src/block-summary.h): the rows a chart bucket holding the whole block takes from it. */
export function summarizeBlock(bytes: Uint8Array): Buffer {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("summarizeBlock: expected a Uint8Array");
  return addon.summarizeBlock(bytes);
}

/**
 * A block's segments (D65, native/src/block-segments.h): the block cut into
 * segments of `segmentRows` rows, each with its summary, so that a chart
 * decodes only the segments a bucket edge falls in. Throws for a block that
 * does not decode.
 */
export function segmentBlock(bytes: Uint8Array, segmentRows: number): Buffer {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("segmentBlock: expected a Uint8Array");
  if (!(Number.isInteger(segmentRows) && segmentRows >= 1 && segmentRows <= 16_536))
    throw new RangeError("segmentBlock: segmentRows must be a whole number in 1..16536 (a block's rows at most)");
  return addon.segmentBlock(bytes, segmentRows);
}

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
  private readonly chart: NativeChart;

  constructor(from: number, to: number, width: number) {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to)
      throw new RangeError("Chart: from and to must be whole seconds, from <= to");
    if (!(Number.isInteger(width) && width >= 1 && width <= MAX_CHART_WIDTH))
      throw new RangeError(`Chart: width must be a whole number in 1..${MAX_CHART_WIDTH}`);
    this.chart = new addon.Chart(from, to, width);
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
