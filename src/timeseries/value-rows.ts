// Value rows as the API and the CSV import give them, checked against a
// series' data fields and gathered by column for the block store.
import { FieldKind, valuesArray } from "../storage/block-codec.js";
import type { RowSet } from "../storage/row-set.js";

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

/** Grows column arrays as rows arrive; `rows()` hands over what was gathered. */
export class RowBuilder {
  size = 0;
  private rows: RowSet;

  constructor(
    private readonly kinds: readonly FieldKind[],
    private capacity = 1024,
  ) {
    this.rows = this.allocate(capacity);
  }

  /** Starts a row; its cells are missing until set. Returns the row index. */
  push(timestamp: number): number {
    if (this.size === this.capacity) this.grow();
    this.rows.timestamps[this.size] = timestamp;
    for (const c of this.rows.columns) c.missing![this.size] = 1;
    return this.size++;
  }

  set(row: number, column: number, value: number): void {
    const c = this.rows.columns[column];
    c.values[row] = value;
    c.missing![row] = 0;
  }

  /** The gathered rows; the builder starts empty again. */
  take(): RowSet {
    const n = this.size;
    const out: RowSet = {
      timestamps: this.rows.timestamps.subarray(0, n),
      columns: this.rows.columns.map((c) => ({ kind: c.kind, values: c.values.subarray(0, n), missing: c.missing!.subarray(0, n) })),
    };
    this.rows = this.allocate(this.capacity);
    this.size = 0;
    return out;
  }

  private allocate(capacity: number): RowSet {
    return {
      timestamps: new Float64Array(capacity),
      columns: this.kinds.map((kind) => ({ kind, values: valuesArray(kind, capacity), missing: new Uint8Array(capacity) })),
    };
  }

  private grow(): void {
    const bigger = this.allocate(this.capacity * 2);
    bigger.timestamps.set(this.rows.timestamps);
    bigger.columns.forEach((c, i) => {
      c.values.set(this.rows.columns[i].values);
      c.missing!.set(this.rows.columns[i].missing!);
    });
    this.rows = bigger;
    this.capacity *= 2;
  }
}
