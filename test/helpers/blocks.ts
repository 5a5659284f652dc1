// Arbitrary storage blocks for property tests: every kind, adversarial values
// (NaN, +-Inf, -0, subnormals, extremes), irregular and huge timestamp gaps.
import fc from "fast-check";
import { FieldKind, MAX_TIMESTAMP, MIN_TIMESTAMP, valuesArray, type Block } from "../../src/timeseries/blocks/block-codec.js";

const kindArb = fc.constantFrom(FieldKind.Single, FieldKind.Double, FieldKind.Flag);
export const valueArb = (kind: FieldKind) =>
  kind === FieldKind.Single
    ? fc.float() // NaN, +-Inf, -0, subnormals, float32 extremes included
    : kind === FieldKind.Double
      ? fc.double()
      : fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
/** Mostly short decimals (the scheme's home ground), with adversarial values mixed in. */
export const decimalishArb = (kind: FieldKind) =>
  kind === FieldKind.Flag
    ? valueArb(kind)
    : fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: -99999, max: 99999 }).map((n) => n / 1000) },
        { weight: 1, arbitrary: valueArb(kind) },
      );

/** Strictly increasing timestamps: regular runs, irregular gaps, huge jumps, range ends. */
const timestampsArb = (rows: number) =>
  fc
    .tuple(
      fc.integer({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP }),
      // Huge gaps are bounded so that any row count still fits the D24 range.
      fc.array(
        fc.oneof(
          fc.constant(60),
          fc.integer({ min: 1, max: 10 }),
          fc.integer({ min: 1, max: Math.floor((MAX_TIMESTAMP - MIN_TIMESTAMP) / rows) }),
        ),
        { minLength: rows - 1, maxLength: rows - 1 },
      ),
    )
    .map(([start, gaps]) => {
      const total = gaps.reduce((a, b) => a + b, 0);
      let t = Math.max(MIN_TIMESTAMP, Math.min(start, MAX_TIMESTAMP - total));
      const out = [t];
      for (const g of gaps) out.push((t += g));
      return out;
    });

export const blockArb = (maxRows: number, values = valueArb) =>
  fc.integer({ min: 1, max: maxRows }).chain((rows) =>
    fc.record({
      timestamps: timestampsArb(rows),
      columns: fc.array(
        kindArb.chain((kind) =>
          fc.record({
            kind: fc.constant(kind),
            values: fc.array(values(kind), { minLength: rows, maxLength: rows }),
            missing: fc.oneof(fc.constant(null), fc.array(fc.boolean(), { minLength: rows, maxLength: rows })),
          }),
        ),
        { minLength: 0, maxLength: 4 },
      ),
    }),
  );

export function toBlock(b: { timestamps: number[]; columns: { kind: FieldKind; values: number[]; missing: boolean[] | null }[] }): Block {
  return {
    timestamps: Float64Array.from(b.timestamps),
    columns: b.columns.map((c) => {
      const values = valuesArray(c.kind, b.timestamps.length);
      values.set(c.values);
      return { kind: c.kind, values, missing: c.missing && Uint8Array.from(c.missing, (m) => (m ? 1 : 0)) };
    }),
  };
}

/** The block's bytes with the CRC-32C recomputed over them: a hostile edit the checksum does not catch. */
export function withChecksum(bytes: Uint8Array, crc32c: (b: Uint8Array) => number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeUInt32LE(crc32c(copy.subarray(0, copy.length - 4)), copy.length - 4);
  return copy;
}

/** Offset of the first timestamp (i64 LE) in a block's header (native/src/block-codec.h: u8 version, u8 columns, u32 rows). */
export const FIRST_TIMESTAMP_AT = 6;

/** A valid block's bytes with its first timestamp replaced (the others follow from it by the encoded steps), checksum recomputed. */
export function withFirstTimestamp(bytes: Uint8Array, first: number, crc32c: (b: Uint8Array) => number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeBigInt64LE(BigInt(first), FIRST_TIMESTAMP_AT);
  return withChecksum(copy, crc32c);
}
