// D69: Arrow columns (from an Arrow IPC stream or a Parquet file decoded to
// Arrow) checked against a series' data fields and copied column by column
// into the block store's RowSet: typed arrays in, typed arrays out, no rows
// built in JavaScript. What the JSON upload refuses is refused here too (a
// null or fractional timestamp, one outside D24's range, a non-finite
// value, a Single out of float32's range, a Flag that is not an int32), each
// named by column and row.
import { DataType, Precision, TimeUnit, Type, type Data, type Schema } from "apache-arrow";
import { invalidField, ViolationList } from "../../kernel/errors.js";
import { FieldKind, MAX_TIMESTAMP, MIN_TIMESTAMP, valuesArray, type Column } from "../blocks/block-codec.js";
import type { RowSet } from "../blocks/row-set.js";
import { cellProblem, DATA_TYPES } from "../value-rows.js";

/** Problems named in one 400. */
const MAX_REPORTED = 20;

/** The column of the timestamps, as D64's answers name it. */
export const TIMESTAMP_COLUMN = "timestamp";
/** The column naming each row's series in a many-series upload. */
export const SERIES_COLUMN = "time_series_id";

/** A column of a decoded stream or file: its record batches' pieces, in order. */
export interface ColumnChunks {
  name: string;
  type: DataType;
  chunks: readonly Data[];
}

/** A decoded stream or file: its columns, all of `rows` rows. */
export interface DecodedTable {
  schema: Schema;
  rows: number;
  columns: Map<string, ColumnChunks>;
}

/** A data field of a series as its rows are checked. */
export interface UploadField {
  name: string;
  dataType: string;
}

/** Collects the problems of one request, the first MAX_REPORTED of them. */
export class ColumnProblems {
  private reported = 0;
  readonly list = new ViolationList();
  add(field: string, message: string): void {
    if (this.reported++ < MAX_REPORTED) this.list.add(field, message);
  }
}

/** Checks that every piece holds the rows it claims (a hostile file may declare more than its buffers hold). */
export function checkChunks(columns: Iterable<ColumnChunks>, rows: number, at: string): void {
  for (const c of columns) {
    let n = 0;
    for (const d of c.chunks) {
      n += d.length;
      const end = d.offset + d.length;
      const width = valueWidth(d.type);
      const v = d.values as { length: number; BYTES_PER_ELEMENT: number } | undefined;
      if (width > 0 && (!v || v.length * (v.BYTES_PER_ELEMENT / width) < end))
        throw invalidField(`${at}${c.name}`, `holds fewer values than its ${d.length} rows`, "MALFORMED_BODY");
      const bitmap = d.nullBitmap as Uint8Array | undefined;
      if (d.nullCount !== 0 && bitmap && bitmap.length * 8 < end)
        throw invalidField(`${at}${c.name}`, `has a validity bitmap shorter than its ${d.length} rows`, "MALFORMED_BODY");
    }
    if (n !== rows) throw invalidField(`${at}${c.name}`, `has ${n} rows where the table has ${rows}`, "MALFORMED_BODY");
  }
}

/** Bytes a value of a fixed-width type takes (timestamps: 8), 0 for others. */
function valueWidth(type: DataType): number {
  if (DataType.isTimestamp(type)) return 8;
  if (DataType.isFloat(type)) return [2, 4, 8][type.precision];
  if (DataType.isInt(type)) return type.bitWidth / 8;
  return 0;
}

/** An Arrow type's name, for messages. */
function typeName(type: DataType): string {
  return Type[type.typeId];
}

/** Whether some row of [from, to) of a column holds a value. */
function holdsAny(c: ColumnChunks, from: number, to: number): boolean {
  let held = false;
  spans(c.chunks, from, to, (d, start, end) => {
    for (let i = start; i < end && !held; i++) held = !isNull(d, i);
  });
  return held;
}

/** Whether a piece has null rows at all. */
function hasNulls(d: Data): boolean {
  const bitmap = d.nullBitmap as Uint8Array | undefined;
  return d.nullCount !== 0 && bitmap !== undefined && bitmap.length > 0;
}

/** Whether row i of a piece is null. */
function isNull(d: Data, i: number): boolean {
  if (!hasNulls(d)) return false;
  const j = d.offset + i;
  return (d.nullBitmap[j >> 3] & (1 << (j & 7))) === 0;
}

/** Calls `each` for the parts of the pieces that cover rows [from, to) of their column. */
function spans(chunks: readonly Data[], from: number, to: number, each: (d: Data, start: number, end: number, out: number) => void): void {
  let base = 0;
  for (const d of chunks) {
    const lo = Math.max(from, base);
    const hi = Math.min(to, base + d.length);
    if (lo < hi) each(d, lo - base, hi - base, lo - from);
    base += d.length;
    if (base >= to) break;
  }
}

const UNIT_PER_SECOND = { [TimeUnit.SECOND]: 1, [TimeUnit.MILLISECOND]: 1e3, [TimeUnit.MICROSECOND]: 1e6, [TimeUnit.NANOSECOND]: 1e9 };

/** Rows [from, to) of the timestamp column as whole epoch seconds; problems named with the row's index in the body. */
function timestamps(c: ColumnChunks, from: number, to: number, at: string, problems: ColumnProblems): Float64Array | undefined {
  if (!DataType.isTimestamp(c.type)) {
    problems.add(
      `${at}${c.name}`,
      `must be a timestamp column (Arrow timestamp, any unit, with or without a time zone), not ${typeName(c.type)}`,
    );
    return undefined;
  }
  const per = UNIT_PER_SECOND[c.type.unit] as number | undefined;
  if (per === undefined) {
    // A unit outside Arrow's four: only a corrupt schema says so (found by the upload fuzz test; it was a TypeError, a 500).
    problems.add(`${at}${c.name}`, `has a timestamp unit Arrow does not define (${String(c.type.unit)})`);
    return undefined;
  }
  const out = new Float64Array(to - from);
  spans(c.chunks, from, to, (d, start, end, o) => {
    const problem = (i: number, why: string) => problems.add(`${at}${c.name}[${from + o + i - start}]`, why);
    const v = d.values as BigInt64Array;
    if (per <= 1e3) {
      // Exact as doubles (|t| < 2^53 ms): read as two int32 halves, far faster than BigInt.
      const halves = new Int32Array(v.buffer, v.byteOffset, v.length * 2);
      const nulls = hasNulls(d);
      for (let i = start; i < end; i++) {
        const j = (d.offset + i) * 2;
        const t = (halves[j + 1] * 4294967296 + (halves[j] >>> 0)) / per;
        out[o + i - start] = t;
        // One test per row for the common case; which problem only once there is one.
        if (!(t >= MIN_TIMESTAMP && t <= MAX_TIMESTAMP && t === Math.floor(t)) || (nulls && isNull(d, i)))
          problem(i, isNull(d, i) ? "must not be null" : "must be a whole second between 0001-01-01 and 9999-12-31 (D24)");
      }
    } else {
      const unit = BigInt(per);
      for (let i = start; i < end; i++) {
        const x = v[d.offset + i];
        const t = Number(x / unit);
        out[o + i - start] = t;
        if (isNull(d, i)) problem(i, "must not be null");
        else if (x % unit !== 0n || !(t >= MIN_TIMESTAMP && t <= MAX_TIMESTAMP))
          problem(i, "must be a whole second between 0001-01-01 and 9999-12-31 (D24)");
      }
    }
  });
  return out;
}

/** Whether a column of this type can hold a field of `kind` (numbers are checked as the JSON upload checks them). */
function takes(type: DataType): boolean {
  return (DataType.isFloat(type) && type.precision !== Precision.HALF) || DataType.isInt(type); // float16: no
}

/** Rows [from, to) of a value column as a field of `kind`. */
function values(c: ColumnChunks, kind: FieldKind, from: number, to: number, at: string, problems: ColumnProblems): Column {
  const n = to - from;
  const out = valuesArray(kind, n);
  let missing: Uint8Array | null = null;
  spans(c.chunks, from, to, (d, start, end, o) => {
    const src = d.values as ArrayLike<number | bigint> & { subarray(a: number, b: number): ArrayLike<number | bigint> };
    const t = d.type;
    const same =
      (kind === FieldKind.Single && DataType.isFloat(t) && t.precision === Precision.SINGLE) ||
      (kind === FieldKind.Double && DataType.isFloat(t) && t.precision === Precision.DOUBLE) ||
      (kind === FieldKind.Flag && DataType.isInt(t) && t.bitWidth === 32 && t.isSigned);
    if (same) (out as Float32Array).set(src.subarray(d.offset + start, d.offset + end) as Float32Array, o);
    if (same && !hasNulls(d)) {
      // The common case, by typed array: every int32 is a flag id; a float of its own width needs only to be finite.
      if (kind !== FieldKind.Flag) {
        for (let k = o; k < o + end - start; k++) {
          const x = out[k];
          if (x - x !== 0) problems.add(`${at}${c.name}[${from + k}]`, "must be a finite number");
        }
      }
      return;
    }
    const wide = src instanceof BigInt64Array || src instanceof BigUint64Array ? src : undefined;
    for (let i = start; i < end; i++) {
      const k = o + i - start;
      if (isNull(d, i)) {
        (missing ??= new Uint8Array(n))[k] = 1;
        continue;
      }
      if (same && kind === FieldKind.Flag) continue; // every int32 is a flag id
      const x = same ? out[k] : wide ? Number(wide[d.offset + i]) : (src[d.offset + i] as number);
      const why = cellProblem(kind, x);
      if (why) problems.add(`${at}${c.name}[${from + k}]`, why);
      else if (!same) out[k] = x;
    }
  });
  return { kind, values: out, missing };
}

/**
 * Rows [from, to) of `table` as the rows of a series with `fields`: the
 * timestamp column, one column per field by name (`name (Type)` first, the
 * many-series Parquet answer's name for a field another series types
 * otherwise), and no other column holding a value in these rows (`ignore`
 * names columns that are not data: the series column). Problems are added;
 * undefined when there are any.
 */
export function seriesRows(
  table: DecodedTable,
  fields: readonly UploadField[],
  range: { from: number; to: number },
  at: string,
  problems: ColumnProblems,
  ignore: readonly string[] = [],
): RowSet | undefined {
  const { from, to } = range;
  const ts = table.columns.get(TIMESTAMP_COLUMN);
  if (!ts) {
    problems.add(`${at}${TIMESTAMP_COLUMN}`, "is missing: a body holds a `timestamp` column and one column per data field");
    return undefined;
  }
  const used = new Set([TIMESTAMP_COLUMN, ...ignore]);
  const columns: Column[] = [];
  for (const f of fields) {
    const kind = DATA_TYPES[f.dataType];
    const c = table.columns.get(`${f.name} (${f.dataType})`) ?? table.columns.get(f.name);
    if (!c) {
      problems.add(`${at}${f.name}`, `is missing: the series has the data field ${f.name} (${f.dataType})`);
      continue;
    }
    used.add(c.name);
    if (!takes(c.type)) {
      problems.add(`${at}${c.name}`, `must be a number column (float or int) for a ${f.dataType} field, not ${typeName(c.type)}`);
      continue;
    }
    columns.push(values(c, kind, from, to, at, problems));
  }
  for (const c of table.columns.values()) {
    if (used.has(c.name)) continue;
    if (holdsAny(c, from, to))
      problems.add(`${at}${c.name}`, `is not a data field of the series (its fields: ${fields.map((f) => f.name).join(", ") || "none"})`);
  }
  const t = timestamps(ts, from, to, at, problems);
  if (!t || columns.length !== fields.length) return undefined;
  return { timestamps: t, columns };
}
