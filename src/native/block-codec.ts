// native/src/block-codec.cc: storage blocks of one time series, up to 16,536
// rows, encoded and decoded by the addon (block-codec.h documents the format).
// This wrapper is the typed, validated door to it: the C++ side trusts
// nothing for memory safety, and this side makes sure it is never handed
// nonsense. The domain takes it from timeseries/blocks/block-codec.ts.
import { MAX_TIMESTAMP, MIN_TIMESTAMP } from "../kernel/timestamps.js";
import { binding } from "./binding.js";
import { FieldKind } from "./field-kind.js";
import { bytesArg } from "./range-args.js";

export { FieldKind };

export const BLOCK_ROWS = 16_536;

export type ColumnValues = Float32Array | Float64Array | Int32Array;

export interface Column {
  kind: FieldKind;
  values: ColumnValues;
  /** One byte per row, 1 where the value is missing; null when none is. */
  missing: Uint8Array | null;
}

export interface Block {
  /** Whole seconds since the epoch, strictly increasing. */
  timestamps: Float64Array;
  columns: Column[];
}

const ARRAY_OF: Record<FieldKind, new (n: number) => ColumnValues> = {
  [FieldKind.Single]: Float32Array,
  [FieldKind.Double]: Float64Array,
  [FieldKind.Flag]: Int32Array,
};

export function valuesArray(kind: FieldKind, rows: number): ColumnValues {
  return new ARRAY_OF[kind](rows);
}

export function encodeBlock(block: Block): Buffer {
  const { timestamps, columns } = block;
  const rows = timestamps.length;
  if (!(timestamps instanceof Float64Array)) throw new TypeError("timestamps must be a Float64Array");
  if (rows < 1 || rows > BLOCK_ROWS) throw new RangeError(`a block holds 1 to ${BLOCK_ROWS} rows, not ${rows}`);
  if (columns.length > 255) throw new RangeError("a block holds at most 255 columns");
  let previous = -Infinity;
  for (let i = 0; i < rows; i++) {
    const t = timestamps[i];
    if (!Number.isInteger(t) || t < MIN_TIMESTAMP || t > MAX_TIMESTAMP)
      throw new RangeError(`timestamp ${t} is not a whole second in 0001..9999`);
    if (t <= previous) throw new RangeError("timestamps must be strictly increasing");
    previous = t;
  }
  const kinds = new Uint8Array(columns.length);
  columns.forEach((c, i) => {
    if (!(c.values instanceof ARRAY_OF[c.kind])) throw new TypeError(`column ${i}: values must be a ${ARRAY_OF[c.kind].name}`);
    if (c.values.length !== rows) throw new RangeError(`column ${i}: ${c.values.length} values for ${rows} rows`);
    if (c.missing !== null && (!(c.missing instanceof Uint8Array) || c.missing.length !== rows))
      throw new TypeError(`column ${i}: missing must be a Uint8Array of one byte per row`);
    kinds[i] = c.kind;
  });
  return binding.encodeBlock(
    timestamps,
    kinds,
    columns.map((c) => c.values),
    columns.map((c) => c.missing),
  );
}

/** Decodes a block; a corrupt, truncated or hostile one (timestamps out of order or outside D24 included) throws an Error ("corrupt block: ..."). */
export function decodeBlock(bytes: Uint8Array): Block {
  return binding.decodeBlock(bytesArg("decodeBlock", bytes));
}
