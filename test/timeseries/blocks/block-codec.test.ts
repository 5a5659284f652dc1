// The native block codec (issue 4): round trips over random and adversarial
// data, W1-like decimal data compressed, every kind of corrupted block rejected
// with a JS error (never a crash: a crash would take this test process down).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BLOCK_ROWS,
  FieldKind,
  MAX_TIMESTAMP,
  MIN_TIMESTAMP,
  decodeBlock,
  encodeBlock,
  type Block,
} from "../../../src/timeseries/blocks/block-codec.js";
import { blockArb, decimalishArb, toBlock, withChecksum, withFirstTimestamp } from "../../helpers/blocks.js";
import { blockColumns } from "../../../src/native/value-columns.js";
import { blockJson } from "../../../src/native/value-json.js";
import { crc32c } from "../../../src/native/crc32c.js";

function expectSame(decoded: Block, original: Block) {
  expect(Array.from(decoded.timestamps)).toEqual(Array.from(original.timestamps));
  expect(decoded.columns.length).toBe(original.columns.length);
  decoded.columns.forEach((col, c) => {
    const want = original.columns[c];
    expect(col.kind).toBe(want.kind);
    const anyMissing = want.missing?.some((m) => m !== 0) ?? false;
    expect(col.missing === null ? null : Array.from(col.missing)).toEqual(anyMissing ? Array.from(want.missing!) : null);
    for (let i = 0; i < want.values.length; i++) {
      if (want.missing?.[i]) continue;
      if (!Object.is(col.values[i], want.values[i])) throw new Error(`column ${c} row ${i}: ${col.values[i]} != ${want.values[i]}`);
    }
  });
}

describe("block codec round trips", () => {
  it("random blocks of any kinds, values and gaps read back bit for bit (NaN, +-Inf, -0, subnormals, extremes)", () => {
    fc.assert(
      fc.property(blockArb(300), (b) => {
        const block = toBlock(b);
        expectSame(decodeBlock(encodeBlock(block)), block);
      }),
      { numRuns: 300 },
    );
  });

  it("mostly decimal blocks with exceptions mixed in read back bit for bit", () => {
    fc.assert(
      fc.property(blockArb(2000, decimalishArb), (b) => {
        const block = toBlock(b);
        expectSame(decodeBlock(encodeBlock(block)), block);
      }),
      { numRuns: 100 },
    );
  });

  it("1 row, and exactly 16,536 rows; 16,537 rows are refused", () => {
    for (const rows of [1, BLOCK_ROWS]) {
      const block: Block = {
        timestamps: Float64Array.from({ length: rows }, (_, i) => 946684800 + 60 * i),
        columns: [{ kind: FieldKind.Single, values: Float32Array.from({ length: rows }, (_, i) => i / 8), missing: null }],
      };
      expectSame(decodeBlock(encodeBlock(block)), block);
    }
    const over: Block = { timestamps: Float64Array.from({ length: BLOCK_ROWS + 1 }, (_, i) => i), columns: [] };
    expect(() => encodeBlock(over)).toThrow(RangeError);
  });

  it("the first and last second of D24 and an all-missing column", () => {
    const block: Block = {
      timestamps: Float64Array.of(MIN_TIMESTAMP, 0, MAX_TIMESTAMP),
      columns: [{ kind: FieldKind.Double, values: new Float64Array(3), missing: Uint8Array.of(1, 1, 1) }],
    };
    expectSame(decodeBlock(encodeBlock(block)), block);
  });

  it("W1-like decimal data (3 decimals, 60 s step, rare flags) takes under 1 byte per row", () => {
    const rows = BLOCK_ROWS;
    const block: Block = {
      timestamps: Float64Array.from({ length: rows }, (_, i) => 946684800 + 60 * i),
      columns: [
        {
          kind: FieldKind.Single,
          values: Float32Array.from({ length: rows }, (_, i) => Math.round((12 + 0.35 * Math.sin(i / 118.6)) * 1000) / 1000),
          missing: null,
        },
        { kind: FieldKind.Flag, values: Int32Array.from({ length: rows }, (_, i) => (i > 5000 && i < 5200 ? 2 : 0)), missing: null },
      ],
    };
    const bytes = encodeBlock(block);
    expect(bytes.length / rows).toBeLessThan(1);
    expectSame(decodeBlock(bytes), block);
  });
});

/** A read range wider than D24, so that rows outside it would be written, not skipped. */
const ALL = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;

/**
 * The three native entry points on one block: all refuse it ("corrupt block"),
 * or all read it, in time order, inside D24, the same rows. A crash (the
 * addon's SIGSEGV) would take the test process down.
 */
function expectSameReading(block: Uint8Array) {
  const outcomes = [
    () => decodeBlock(block),
    () => blockJson(block, ...ALL, Infinity, true),
    () => blockColumns(block, ...ALL, Infinity),
  ].map((read) => {
    try {
      return read();
    } catch (e) {
      expect((e as Error).message).toMatch(/^corrupt block: /);
      return null;
    }
  });
  const [decoded, json, columns] = outcomes as [Block | null, ReturnType<typeof blockJson> | null, ReturnType<typeof blockColumns> | null];
  expect([json === null, columns === null]).toEqual([decoded === null, decoded === null]);
  if (decoded === null) return;
  const ts = Array.from(decoded.timestamps);
  expect(ts.length).toBeGreaterThan(0);
  // The readers size their output from the order (value-columns.cc): a block that decodes is in order.
  expect(ts.every((t, i) => i === 0 || t > ts[i - 1])).toBe(true);
  expect(ts.every((t) => t >= MIN_TIMESTAMP && t <= MAX_TIMESTAMP)).toBe(true);
  expect([json!.rows, columns!.rows]).toEqual([ts.length, ts.length]);
  // Every row's timestamp is the 4-digit year ISO form of its second: no NUL bytes, no stray digits.
  const rows = JSON.parse(`[${json!.text.toString("utf8")}]`) as unknown[][];
  expect(rows.map((r) => r[0])).toEqual(ts.map((t) => new Date(t * 1000).toISOString().slice(0, 19)));
}

describe("D24 a block whose timestamps lie outside 0001..9999 is refused by decode, JSON and columns", () => {
  // A valid block; its first timestamp is rewritten and the checksum recomputed, so only the range check can catch it.
  const valid = encodeBlock({
    timestamps: Float64Array.of(0, 60, 120),
    columns: [{ kind: FieldKind.Double, values: Float64Array.of(1.5, 2.5, 3.5), missing: null }],
  });
  const refusedEverywhere = (block: Uint8Array) => {
    expect(() => decodeBlock(block)).toThrow(/^corrupt block: timestamp outside 0001\.\.9999$/);
    expect(() => blockJson(block, ...ALL, Infinity, true)).toThrow(/^corrupt block: timestamp outside 0001\.\.9999$/);
    expect(() => blockColumns(block, ...ALL, Infinity)).toThrow(/^corrupt block: timestamp outside 0001\.\.9999$/);
  };

  it("a first timestamp of -70,000,000,000 (year -249) is refused, and the process lives on", () => {
    refusedEverywhere(withFirstTimestamp(valid, -70_000_000_000, crc32c));
  });

  it("a year above 9999 (10000-01-01, and year 35,680,000) is refused, as is a second before 0001", () => {
    refusedEverywhere(withFirstTimestamp(valid, MAX_TIMESTAMP + 1, crc32c));
    refusedEverywhere(withFirstTimestamp(valid, 2 ** 50, crc32c));
    refusedEverywhere(withFirstTimestamp(valid, MIN_TIMESTAMP - 1, crc32c));
  });

  it("a first timestamp inside D24 whose steps carry the last one past 9999 is refused", () => {
    refusedEverywhere(withFirstTimestamp(valid, MAX_TIMESTAMP - 60, crc32c));
  });

  it("the first and last second of D24 are read alike by all three", () => {
    expectSameReading(withFirstTimestamp(valid, MIN_TIMESTAMP, crc32c));
    expectSameReading(withFirstTimestamp(valid, MAX_TIMESTAMP - 120, crc32c));
    expect(decodeBlock(withFirstTimestamp(valid, MAX_TIMESTAMP - 120, crc32c)).timestamps.at(-1)).toBe(MAX_TIMESTAMP);
  });
});

describe("corrupt blocks throw, never crash", () => {
  const sample = encodeBlock({
    timestamps: Float64Array.from({ length: 50 }, (_, i) => 1000 + 60 * i + (i > 30 ? 7 : 0)), // one irregular gap
    columns: [
      {
        kind: FieldKind.Single,
        values: Float32Array.from({ length: 50 }, (_, i) => i / 10),
        missing: Uint8Array.from({ length: 50 }, (_, i) => (i % 9 === 0 ? 1 : 0)),
      },
      { kind: FieldKind.Flag, values: Int32Array.from({ length: 50 }, (_, i) => i % 3), missing: null },
      { kind: FieldKind.Double, values: Float64Array.from({ length: 50 }, () => Math.random()), missing: null },
    ],
  });

  it("every single flipped bit is caught by the checksum", () => {
    for (let bit = 0; bit < sample.length * 8; bit++) {
      const copy = Buffer.from(sample);
      copy[bit >> 3] ^= 1 << (bit & 7);
      expect(() => decodeBlock(copy)).toThrow(/corrupt block/);
    }
  });

  it("every truncation is refused", () => {
    for (let n = 0; n < sample.length; n++) expect(() => decodeBlock(sample.subarray(0, n))).toThrow(/corrupt block/);
  });

  it("an unknown version is refused", () => {
    const copy = Buffer.from(sample);
    copy[0] = 9;
    expect(() => decodeBlock(withChecksum(copy, crc32c))).toThrow(/unknown version/);
  });

  it("a block whose timestamps would not ascend (a hostile negative step, checksum recomputed) is refused", () => {
    const regular = (step: number) =>
      encodeBlock({ timestamps: Float64Array.from({ length: 50 }, (_, i) => 1000 + step * i), columns: [] });
    const a = regular(60);
    const b = regular(61);
    const at = a.findIndex((byte, i) => byte !== b[i]); // the step's byte: zigzag 120 for +60
    const copy = Buffer.from(a);
    copy[at] = 119; // zigzag -60
    expect(() => decodeBlock(withChecksum(copy, crc32c))).toThrow(/corrupt block/);
  });

  it("D24 hostile blocks with a valid checksum (random bytes changed, checksum recomputed) are refused or read alike by decode, JSON and columns", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        fc.nat(40),
        (edits, cut) => {
          const copy = Buffer.from(sample.subarray(0, sample.length - 4 - Math.min(cut, 20)));
          for (const [at, byte] of edits) copy[at % copy.length] = byte;
          const block = withChecksum(Buffer.concat([copy, Buffer.alloc(4)]), crc32c);
          expectSameReading(block);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("arguments the codec must not see are refused by the JS wrapper", () => {
    const ts = Float64Array.of(1, 2);
    expect(() => encodeBlock({ timestamps: new Float64Array(0), columns: [] })).toThrow(RangeError);
    expect(() => encodeBlock({ timestamps: Float64Array.of(2, 2), columns: [] })).toThrow(/strictly increasing/);
    expect(() => encodeBlock({ timestamps: Float64Array.of(1.5), columns: [] })).toThrow(/whole second/);
    expect(() => encodeBlock({ timestamps: Float64Array.of(MAX_TIMESTAMP + 1), columns: [] })).toThrow(/whole second/);
    expect(() =>
      encodeBlock({ timestamps: ts, columns: [{ kind: FieldKind.Single, values: new Float64Array(2), missing: null }] }),
    ).toThrow(TypeError);
    expect(() => encodeBlock({ timestamps: ts, columns: [{ kind: FieldKind.Flag, values: new Int32Array(3), missing: null }] })).toThrow(
      RangeError,
    );
    expect(() => decodeBlock("nope" as unknown as Uint8Array)).toThrow(TypeError);
  });
});
