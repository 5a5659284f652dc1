// The native chart (D50, native/src/chart.cc) against M4 in plain TypeScript
// (test/helpers/m4.ts) over the same rows, for any series cut into any
// blocks, fed in any batches (a batch of four or more is split between two
// threads), any range and width; and what it refuses.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { FieldKind, decodeBlock, encodeBlock, valuesArray, type Block } from "../../../src/timeseries/blocks/block-codec.js";
import { Chart } from "../../../src/native/chart.js";
import { crc32c } from "../../../src/native/crc32c.js";
import { segmentBlock } from "../../../src/native/block-segments.js";
import { summarizeBlock } from "../../../src/native/block-summary.js";
import { chartOf, joinIndexes, summaryServes, type ChartSource } from "../../../src/timeseries/chart-blocks.js";
import { blockIndexOf, summaryOfStored, type BlockIndex } from "../../../src/timeseries/blocks/block-store.js";
import { m4, type M4Row } from "../../helpers/m4.js";
import { withChecksum } from "../../helpers/blocks.js";

interface Series {
  kinds: FieldKind[];
  rows: M4Row[];
}

/** Rows as stored: Singles rounded to float32, missing as null. */
const cellArb = (kind: FieldKind) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    // Few distinct values: ties for min and max, inside a bucket and across blocks.
    { weight: 3, arbitrary: kind === FieldKind.Flag ? fc.constantFrom(-1, 0, 2) : fc.constantFrom(-1, 0, 0.5, 2) },
    {
      weight: 3,
      arbitrary: kind === FieldKind.Flag ? fc.integer({ min: -5, max: 300 }) : fc.integer({ min: -99999, max: 99999 }).map((n) => n / 1000),
    },
    {
      weight: 1,
      arbitrary:
        kind === FieldKind.Single
          ? fc.float()
          : kind === FieldKind.Double
            ? fc.double()
            : fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    },
  );

const seriesArb = (maxRows: number): fc.Arbitrary<Series> =>
  fc
    .integer({ min: 1, max: maxRows })
    .chain((n) =>
      fc.record({
        kinds: fc.array(fc.constantFrom(FieldKind.Single, FieldKind.Double, FieldKind.Flag), { minLength: 1, maxLength: 3 }),
        start: fc.integer({ min: 0, max: 2_000_000_000 }),
        gaps: fc.array(fc.oneof(fc.constant(1), fc.constant(60), fc.integer({ min: 1, max: 5000 })), {
          minLength: n - 1,
          maxLength: n - 1,
        }),
      }),
    )
    .chain(({ kinds, start, gaps }) => {
      const ts = [start];
      for (const g of gaps) ts.push(ts[ts.length - 1] + g);
      return fc.tuple(...ts.map((t) => fc.tuple(fc.constant(t), ...kinds.map(cellArb)))).map((rows) => ({
        kinds,
        rows: rows.map(
          ([t, ...cells]) => [t, ...cells.map((v, c) => (v === null ? null : kinds[c] === FieldKind.Single ? Math.fround(v) : v))] as M4Row,
        ),
      }));
    });

/** Rows [start, end) of a series as a block. */
function blockOf(s: Series, start: number, end: number): Block {
  const rows = s.rows.slice(start, end);
  return {
    timestamps: Float64Array.from(rows, (r) => r[0]),
    columns: s.kinds.map((kind, c) => {
      const values = valuesArray(kind, rows.length);
      const missing = new Uint8Array(rows.length);
      rows.forEach((r, i) => (r[c + 1] === null ? (missing[i] = 1) : (values[i] = r[c + 1] as number)));
      return { kind, values, missing };
    }),
  };
}

/** The series cut into blocks at the given sizes (the last takes the rest). */
function blocksOf(s: Series, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (let k = 0; at < s.rows.length; k++) {
    const end = Math.min(s.rows.length, at + (sizes[k % sizes.length] ?? s.rows.length));
    out.push(encodeBlock(blockOf(s, at, end)));
    at = end;
  }
  return out;
}

function rowsOf(payloads: Buffer[]): M4Row[] {
  return payloads.flatMap((p) => {
    const b = decodeBlock(p);
    return Array.from(b.timestamps, (t, i) => [t, ...b.columns.map((c) => (c.missing?.[i] ? null : c.values[i]))] as M4Row);
  });
}

function chart(payloads: Buffer[], batches: number[], from: number, to: number, width: number): M4Row[] {
  const c = new Chart(from, to, width);
  for (let at = 0, k = 0; at < payloads.length; k++) {
    const n = batches[k % batches.length];
    c.add(payloads.slice(at, at + n));
    at += n;
  }
  return rowsOf(c.finish());
}

const numeric = (s: Series) => s.kinds.map((k) => k !== FieldKind.Flag);

/** Blocks as a store's index query gives them (blockIndexOf): their numbers as text, their summaries one after another. */
function indexOf(rows: { rowid: number; first_ts: number; last_ts: number; summary: Buffer | null }[]): BlockIndex {
  const numbers = rows.map((r) => `${r.rowid},${r.first_ts},${r.last_ts},${r.summary?.length ?? 0}`).join(",");
  return blockIndexOf(numbers || null, rows.length > 0 ? Buffer.concat(rows.flatMap((r) => (r.summary ? [r.summary] : []))) : null);
}

/** Blocks held in memory as a store holds them (D65): an index with each block's summary, given in runs of the sizes asked. */
function memorySource(payloads: Buffer[], runs: number[], summarised = (_i: number) => true): ChartSource & { decoded: number } {
  const rows = payloads.map((p, i) => {
    const b = decodeBlock(p);
    return {
      rowid: i,
      first_ts: b.timestamps[0],
      last_ts: b.timestamps[b.timestamps.length - 1],
      summary: summarised(i) ? summarizeBlock(p) : null,
    };
  });
  // Read in batches of three and joined, as the block cache reads a series' index.
  const index = joinIndexes(Array.from({ length: Math.ceil(rows.length / 3) }, (_, k) => indexOf(rows.slice(3 * k, 3 * k + 3))));
  const source = {
    decoded: 0,
    async *runs() {
      for (let lo = 0, k = 0; lo < index.count; k++) {
        const hi = Math.min(index.count, lo + runs[k % runs.length]);
        yield { index, lo, hi };
        lo = hi;
      }
    },
    async payloads(_sid: number, rowids: number[], _firsts: number[]) {
      source.decoded += rowids.length;
      return { payloads: rowids.map((i) => payloads[i]), release: () => {} };
    },
  };
  return source;
}

/** As memorySource, each cut block coming with its segments of `segmentRows` rows (D65), as the block cache gives them. */
function segmentedSource(payloads: Buffer[], runs: number[], segmentRows: number, summarised = (_i: number) => true): ChartSource {
  const source = memorySource(payloads, runs, summarised);
  const payloadsOf = source.payloads.bind(source);
  source.payloads = async (sid, rowids, firsts, segments) => {
    const out = await payloadsOf(sid, rowids, firsts);
    if (segments !== undefined) out.payloads.forEach((p, i) => (segments[i] = segmentBlock(p, segmentRows)));
    return out;
  };
  return source;
}

const summaryChart = async (source: ChartSource, from: number, to: number, width: number) =>
  rowsOf(await chartOf(source, 0, from, to, width, new AbortController().signal));

describe("D50 native chart (M4)", () => {
  it("D50 D65 chooses exactly the rows M4 in plain TypeScript chooses, for any series, blocks, batches, range and width; also by block summaries (blocks inside buckets, across them, on every edge, some unsummarised)", async () => {
    await fc.assert(
      fc.asyncProperty(
        seriesArb(400),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 399 }),
        fc.integer({ min: 0, max: 399 }),
        fc.integer({ min: -2, max: 2 }),
        fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 10_000 })),
        fc.integer({ min: 0, max: 4 }),
        async (s, sizes, batches, i, j, nudge, width, unsummarised) => {
          const ts = s.rows.map((r) => r[0]);
          // Ends on rows, just beside them, and beyond the series.
          let from = ts[Math.min(i, ts.length - 1)] + nudge;
          let to = ts[Math.min(j, ts.length - 1)] - nudge;
          if (from > to) [from, to] = [to, from];
          const expected = m4(s.rows, numeric(s), from, to, width);
          const payloads = blocksOf(s, sizes);
          expect(chart(payloads, batches, from, to, width)).toEqual(expected);
          // The batches as runs of the index; every unsummarised-th block without a summary (0: all have one).
          const source = memorySource(payloads, batches, (k) => unsummarised === 0 || k % unsummarised !== 0);
          expect(await summaryChart(source, from, to, width)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("D65 only blocks cut by a bucket edge or an end of the range are decoded; every bucket edge on a block's first or last row", async () => {
    // 0..999 every second in blocks of 10, width 10 over [0, 999]: every block inside one bucket.
    const s: Series = {
      kinds: [FieldKind.Single, FieldKind.Flag],
      rows: Array.from({ length: 1000 }, (_, t) => [t, (t * 37) % 101, t % 3] as M4Row),
    };
    const payloads = blocksOf(s, [10]);
    let source = memorySource(payloads, [7]);
    expect(await summaryChart(source, 0, 999, 10)).toEqual(m4(s.rows, [true, false], 0, 999, 10));
    expect(source.decoded).toBe(0);
    // Blocks of 15: an edge every 100 seconds cuts one block in each of the nine inner edges that fall inside a block.
    const cutBy = blocksOf(s, [15]);
    source = memorySource(cutBy, [4]);
    expect(await summaryChart(source, 0, 999, 10)).toEqual(m4(s.rows, [true, false], 0, 999, 10));
    const cut = cutBy.filter((p) => {
      const b = decodeBlock(p);
      return !summaryServes(b.timestamps[0], b.timestamps[b.timestamps.length - 1], 0, 999, 10);
    }).length;
    expect(cut).toBeGreaterThan(0);
    expect(source.decoded).toBe(cut);
    // A range cutting the first and last blocks decodes those two; every edge from 1 to 999 at width 1000 decodes all.
    source = memorySource(payloads, [3]);
    expect(await summaryChart(source, 5, 994, 3)).toEqual(m4(s.rows, [true, false], 5, 994, 3));
    expect(source.decoded).toBe(2 + 2); // the two ends, and the blocks holding the edges at 335 and 665
    source = memorySource(payloads, [3]);
    expect(await summaryChart(source, 0, 999, 1000)).toEqual(m4(s.rows, [true, false], 0, 999, 1000));
    expect(source.decoded).toBe(100);
  });

  it("D65 a cut block by its segments (any size): exactly the rows M4 chooses, for any series, blocks, range and width", async () => {
    await fc.assert(
      fc.asyncProperty(
        seriesArb(400),
        fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 399 }),
        fc.integer({ min: 0, max: 399 }),
        fc.integer({ min: -2, max: 2 }),
        fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 10_000 })),
        fc.integer({ min: 0, max: 4 }),
        async (s, sizes, segmentRows, i, j, nudge, width, unsummarised) => {
          const ts = s.rows.map((r) => r[0]);
          let from = ts[Math.min(i, ts.length - 1)] + nudge;
          let to = ts[Math.min(j, ts.length - 1)] - nudge;
          if (from > to) [from, to] = [to, from];
          const source = segmentedSource(blocksOf(s, sizes), [3], segmentRows, (k) => unsummarised === 0 || k % unsummarised !== 0);
          expect(await summaryChart(source, from, to, width)).toEqual(m4(s.rows, numeric(s), from, to, width));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("D65 bucket edges on segment edges and one row either side, segments cut by the range's ends, and the last short segment", async () => {
    // 0..1199 every second, one block of 1000 rows and one of 200, segments of 10: at width w over
    // [shift, shift + 10 * w * k - 1] the edges fall every 10k seconds, on segment edges when shift
    // is 0 and one row before or after them when it is -1 or 1.
    const s: Series = {
      kinds: [FieldKind.Double, FieldKind.Flag, FieldKind.Single],
      rows: Array.from({ length: 1200 }, (_, t) => [t, ((t * 37) % 101) - 50, t % 5, t % 13 === 0 ? null : (t * 7) % 19] as M4Row),
    };
    const payloads = blocksOf(s, [1000, 200]);
    for (const segmentRows of [10, 7, 1, 1000, 1200])
      for (const [width, k] of [
        [60, 2],
        [12, 10],
        [120, 1],
        [3, 40],
      ])
        for (const shift of [-1, 0, 1]) {
          const from = Math.max(0, shift);
          const to = shift + 10 * width * k - 1;
          const source = segmentedSource(payloads, [2], segmentRows);
          expect(await summaryChart(source, from, to, width)).toEqual(m4(s.rows, numeric(s), from, to, width));
          // The range's ends inside segments.
          expect(await summaryChart(segmentedSource(payloads, [1], segmentRows), from + 3, to - 3, width)).toEqual(
            m4(s.rows, numeric(s), from + 3, to - 3, width),
          );
        }
  });

  it("D65 a block's segments are refused with another block, corrupt or misnamed, and never crash", () => {
    const s: Series = {
      kinds: [FieldKind.Single, FieldKind.Flag],
      rows: Array.from({ length: 100 }, (_, t) => [t, t % 7, t % 3] as M4Row),
    };
    const [a, b] = blocksOf(s, [50]);
    const segments = segmentBlock(a, 8);
    const byBlock = (block: Buffer, segs: Buffer, width = 10) => {
      const c = new Chart(0, 99, width);
      c.add([block], undefined, undefined, [segs]);
      return rowsOf(c.finish());
    };
    expect(byBlock(a, segments)).toEqual(m4(s.rows.slice(0, 50), [true, false], 0, 99, 10));
    expect(() => byBlock(b, segments)).toThrow(/segments of another block/);
    expect(() => byBlock(a, segmentBlock(a, 7).subarray(0, 20))).toThrow(/corrupt block summary/);
    for (let i = 0; i < segments.length - 4; i++) {
      const bad = Buffer.from(segments);
      bad[i] ^= 0x5a;
      expect(() => byBlock(a, bad)).toThrow(/checksum/);
      try {
        byBlock(a, withChecksum(bad, crc32c));
      } catch (e) {
        expect(String(e)).toMatch(/corrupt block|other data fields|time order/);
      }
    }
    expect(() => segmentBlock(Buffer.alloc(10), 8)).toThrow(/corrupt block/);
    expect(() => segmentBlock(a, 0)).toThrow(RangeError);
    expect(() => segmentBlock(a, 16_537)).toThrow(RangeError);
    expect(byBlock(a, segmentBlock(a, 16_536))).toEqual(m4(s.rows.slice(0, 50), [true, false], 0, 99, 10));
    expect(() => new Chart(0, 99, 1).add([a], undefined, undefined, [])).toThrow(TypeError);
  });

  it("D65 a hostile block whose mantissas (two for one float) order the scan otherwise than its values gets no summary and no segments: it is decoded at read", () => {
    // Found by the fuzz target (native/fuzz/block_fuzz.cc), its checksum appended: 200 rows of a Single and a Flag.
    const found =
      "AQLIAAAAgENvOAAAAAAAAngAAAADAcDgg/e7AT8HwN/P5+Ppcrba7OVaoUqiTydzoUgWjAXiQCAIBIAAABAICAgF38/n4+lyttrs5Vqhr12w2HOhSB6MAwJ/vh5v1ZdmsCq7LlUafS6aS0XyaCgChxAAAAAAAAAAADAoEBgKhiMyuWA4HxHppGrBYjUbTsfr+X4/4A/4+/V4u9zNJhAYCoYjMrlgOB8R6aRqwWI1G07H6/l+P+AP+Pv1eLvczSaLuVYp0wjU0WAoEkhjsTgUCAJBAAUBAAAAAAACAwBbBBMAWg==";
    const block = withChecksum(Buffer.concat([Buffer.from(found, "base64"), Buffer.alloc(4)]), crc32c);
    expect(() => summarizeBlock(block)).toThrow(/corrupt block summary/);
    expect(summaryOfStored(block)).toBeNull();
    expect(() => segmentBlock(block, 7)).toThrow(/corrupt block summary/);
    const ts = decodeBlock(block).timestamps;
    const c = new Chart(ts[0], ts[ts.length - 1], 3);
    c.add([block]);
    expect(rowsOf(c.finish()).length).toBeGreaterThan(0);
  });

  it("D65 a summary holds the whole rows of the block's first, last, minimum and maximum; hostile summaries throw and never crash", () => {
    const s: Series = {
      kinds: [FieldKind.Single, FieldKind.Double, FieldKind.Flag],
      rows: [
        [10, null, NaN, 1],
        [11, 3, 2, null],
        [12, 3, -1, 2],
        [13, -4, 2, 3],
        [14, NaN, null, 4],
      ],
    };
    const [block] = blocksOf(s, [5]);
    const summary = summarizeBlock(block);
    // One bucket over the block: the chart by its summary is the chart by the block.
    const c = new Chart(10, 14, 1);
    c.add([], summary, Int32Array.from([0, summary.length]));
    expect(rowsOf(c.finish())).toEqual([s.rows[0], s.rows[1], s.rows[2], s.rows[3], s.rows[4]]);
    const fromSummary = (bytes: Uint8Array, from = 10, to = 14, width = 1) => {
      const k = new Chart(from, to, width);
      k.add([], bytes, Int32Array.from([0, bytes.length]));
      return k.finish();
    };
    // A block that a bucket edge or the range's end cuts is not stood for by its summary.
    expect(() => fromSummary(summary, 10, 14, 2)).toThrow(/bucket edge/);
    expect(() => fromSummary(summary, 11, 14, 1)).toThrow(/bucket edge/);
    // Every byte flipped, the checksum made right again: refused or read, never a crash; the size changed: refused.
    for (let i = 0; i < summary.length - 4; i++) {
      const bad = Buffer.from(summary);
      bad[i] ^= 0x5a;
      expect(() => fromSummary(bad)).toThrow(/checksum/);
      try {
        fromSummary(withChecksum(bad, crc32c));
      } catch (e) {
        expect(String(e)).toMatch(/corrupt block summary|other data fields|bucket edge/);
      }
    }
    expect(() => fromSummary(withChecksum(Buffer.concat([summary.subarray(0, -4), Buffer.alloc(9)]), crc32c))).toThrow(
      /corrupt block summary/,
    );
    expect(() => fromSummary(Buffer.alloc(3))).toThrow(/corrupt block summary/);
    expect(() => summarizeBlock(Buffer.alloc(10))).toThrow(/corrupt block/);
    // The order names summaries inside the bytes given, and every block given.
    const k = new Chart(10, 14, 1);
    expect(() => k.add([], summary, Int32Array.from([1, summary.length]))).toThrow(/outside/);
    expect(() => k.add([block], summary, Int32Array.from([0, summary.length]))).toThrow(/fewer blocks/);
    expect(() => k.add([], summary, Int32Array.from([-1, 0]))).toThrow(/more blocks/);
  });

  it("D50 rows exactly on bucket edges: the first second of each bucket opens it", () => {
    // 0..99 every second, width 7 over [0, 99]: bucket k starts at ceil(k * 100 / 7).
    const s: Series = { kinds: [FieldKind.Double], rows: Array.from({ length: 100 }, (_, t) => [t, (t * 37) % 11] as M4Row) };
    const got = chart(blocksOf(s, [13]), [4], 0, 99, 7);
    expect(got).toEqual(m4(s.rows, [true], 0, 99, 7));
    const starts = Array.from({ length: 7 }, (_, k) => Math.ceil((k * 100) / 7));
    for (const t of starts) expect(got.map((r) => r[0])).toContain(t); // each bucket's first row
    for (const t of starts.slice(1)) expect(got.map((r) => r[0])).toContain(t - 1); // and the last of the one before
  });

  it("D50 ties keep the earliest row, also when the equal value comes in a later block or on the second thread", () => {
    const s: Series = {
      kinds: [FieldKind.Single],
      rows: Array.from({ length: 64 }, (_, t) => [t, t === 0 ? 5 : t === 63 ? -5 : 1] as M4Row),
    };
    // One bucket: first row 0 (also the max 5), last row 63 (also the min -5); the 1s never win.
    expect(chart(blocksOf(s, [3]), [8], 0, 63, 1).map((r) => r[0])).toEqual([0, 63]);
    const flat: Series = { kinds: [FieldKind.Single], rows: Array.from({ length: 64 }, (_, t) => [t, 2] as M4Row) };
    expect(chart(blocksOf(flat, [5]), [13], 0, 63, 1).map((r) => r[0])).toEqual([0, 63]);
  });

  it("D50 missing values and NaN are skipped for min and max; a bucket of only missing values keeps its first and last rows", () => {
    const s: Series = {
      kinds: [FieldKind.Single, FieldKind.Flag],
      rows: [
        [0, null, 1],
        [1, NaN, 2],
        [2, 3, null],
        [3, -1, 4],
        [4, null, 5],
        [10, null, 6],
        [11, NaN, 7],
        [12, null, 8],
      ],
    };
    const got = chart(blocksOf(s, [2]), [5], 0, 13, 2);
    expect(got).toEqual([s.rows[0], s.rows[2], s.rows[3], s.rows[4], s.rows[5], s.rows[7]]);
  });

  it("D50 a range without rows, or a series without blocks, gives no rows", () => {
    const s: Series = { kinds: [FieldKind.Double], rows: [[100, 1] as M4Row] };
    expect(chart(blocksOf(s, [1]), [1], 0, 99, 10)).toEqual([]);
    expect(new Chart(0, 10, 5).finish()).toEqual([]);
  });

  it("D50 the wrapper refuses a width outside 1..10000, from after to, or a range beyond safe integers", () => {
    expect(() => new Chart(0, 10, 0)).toThrow(RangeError);
    expect(() => new Chart(0, 10, 10_001)).toThrow(RangeError);
    expect(() => new Chart(0, 10, 1.5)).toThrow(RangeError);
    expect(() => new Chart(11, 10, 1)).toThrow(RangeError);
    expect(() => new Chart(0, 2 ** 53, 1)).toThrow(RangeError);
    expect(() => new Chart(0, 10, 1).add([new Float64Array(2) as unknown as Uint8Array])).toThrow(TypeError);
  });

  it("hostile input throws and never crashes: a corrupt block, a block of other data fields, blocks out of time order (either thread)", () => {
    const a: Series = { kinds: [FieldKind.Single], rows: Array.from({ length: 40 }, (_, t) => [t, t % 7] as M4Row) };
    const blocks = blocksOf(a, [5]);
    const corrupt = Buffer.from(blocks[1]);
    corrupt[10] ^= 0xff;
    expect(() => chart([blocks[0], corrupt], [2], 0, 39, 4)).toThrow(/checksum/);
    expect(() => chart([blocks[0], withChecksum(corrupt, crc32c)], [2], 0, 39, 4)).toThrow();
    const other = blocksOf({ kinds: [FieldKind.Double], rows: [[100, 1] as M4Row] }, [1]);
    expect(() => chart([...blocks, ...other], [1], 0, 200, 4)).toThrow(/other data fields/);
    expect(() => chart([...blocks, ...other], [9], 0, 200, 4)).toThrow(/other data fields/);
    expect(() => chart([blocks[1], blocks[0]], [1], 0, 39, 4)).toThrow(/time order/);
    expect(() => chart([...blocks.slice(0, 4), blocks[0], ...blocks.slice(4)], [9], 0, 39, 4)).toThrow(/time order/);
    expect(() => chart([...blocks.slice(4), ...blocks.slice(0, 4)], [8], 0, 39, 4)).toThrow(/time order/);
    // Finished charts take nothing more.
    const c = new Chart(0, 39, 4);
    c.finish();
    expect(() => c.add(blocks)).toThrow(/finished/);
  });
});
