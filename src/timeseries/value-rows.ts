// Value rows as the API and the CSV import give them, checked against a
// series' data fields and gathered by column for the block store.
import { FieldKind } from "./blocks/block-codec.js";
import { concatRows, emptyRows, sliceRows, type FilledRowSet, type RowSet } from "./blocks/row-set.js";

export const DATA_TYPES: Record<string, FieldKind> = { Single: FieldKind.Single, Double: FieldKind.Double, Flag: FieldKind.Flag };
const FLOAT32_MAX = 3.4028234663852886e38;

export function kindsOf(dataFields: readonly { dataType: string }[]): FieldKind[] {
  return dataFields.map((f) => DATA_TYPES[f.dataType]);
}

/** Why a number cannot be a cell of this kind, or undefined when it can. */
export function cellProblem(kind: FieldKind, x: number): string | undefined {
  if (!Number.isFinite(x)) return "must be a finite number";
  if (kind === FieldKind.Single && Math.abs(x) > FLOAT32_MAX) return "is outside the range of a Single (float32)";
  if (kind === FieldKind.Flag && (!Number.isInteger(x) || x < -(2 ** 31) || x >= 2 ** 31)) return "must be an integer flag id (int32)";
  return undefined;
}

/** Grows column arrays as rows arrive; `take()` hands over what was gathered. */
export class RowBuilder {
  size = 0;
  private rows: FilledRowSet;

  constructor(
    private readonly kinds: readonly FieldKind[],
    private capacity = 1024,
  ) {
    this.rows = emptyRows(kinds, capacity);
  }

  /** Starts a row; its cells are missing until set. Returns the row index. */
  push(timestamp: number): number {
    if (this.size === this.capacity) {
      this.rows = concatRows(this.rows, emptyRows(this.kinds, this.capacity));
      this.capacity *= 2;
    }
    this.rows.timestamps[this.size] = timestamp;
    for (const c of this.rows.columns) c.missing[this.size] = 1;
    return this.size++;
  }

  set(row: number, column: number, value: number): void {
    const c = this.rows.columns[column];
    c.values[row] = value;
    c.missing[row] = 0;
  }

  /** The gathered rows; the builder starts empty again. */
  take(): RowSet {
    const out = sliceRows(this.rows, 0, this.size);
    this.rows = emptyRows(this.kinds, this.capacity);
    this.size = 0;
    return out;
  }
}
