// Value blocks in SQLite: one row per block of up to 16,536 rows of one series,
// never overlapping. A write decodes only the blocks it touches (those it
// overlaps, and the last one before it while that has room, so appends fill
// it), merges, re-encodes and replaces them in one transaction (D30). The
// same store over the import_blocks table holds an import's staged blocks,
// keyed by import instead of series (import-staging.ts).
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";
import { BLOCK_ROWS, decodeBlock, encodeBlock, type FieldKind } from "./block-codec.js";
import { concatRows, mergeRows, normalizeRows, sliceRows, withoutRange, type RowSet } from "./row-set.js";

export interface StoredBlock {
  rowid: number;
  first_ts: number;
  last_ts: number;
  rows: number;
  payload: Buffer;
}

/** Blocks fetched per query while reading: about 160 KB of W1 payloads. */
const BATCH = 16;

/** Where blocks live: the table, and the column that keys a run of blocks (a series, or an import). */
export interface BlockTable {
  table: "blocks" | "import_blocks";
  key: "sid" | "import_id";
}
export const SERIES_BLOCKS: BlockTable = { table: "blocks", key: "sid" };

/** A write worked out: the blocks it replaces, and the encoded blocks that take their place. */
interface BlockWrite {
  sid: number;
  old: StoredBlock[];
  blocks: { first: number; last: number; rows: number; payload: Buffer }[];
}

export class BlockStore {
  /** The scan of blocks(), by batch size: see overlapping(). */
  private readonly scans: Statement<{ sid: number; from: number; to: number }, StoredBlock>[] = [];
  private readonly starting: Statement<{ sid: number; from: number; to: number }, number>;
  private readonly overlapsStmt: Statement<{ sid: number; from: number; to: number }, number>;
  private readonly before: Statement<{ sid: number; t: number }, StoredBlock>;
  private readonly insertStmt: Statement<{ sid: number; first: number; last: number; rows: number; payload: Buffer }>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly countStmt: Statement<{ sid: number }, { rows: number | null; blocks: number; bytes: number | null }>;

  constructor(
    private readonly db: Db,
    private readonly where: BlockTable = SERIES_BLOCKS,
  ) {
    const { table, key } = where;
    this.starting = db.prepare<{ sid: number; from: number; to: number }, number>(`SELECT 1 FROM ${table} WHERE ${key} = @sid AND first_ts BETWEEN @from AND @to LIMIT 1`).pluck();
    // As overlapping(), without reading a payload.
    this.overlapsStmt = db
      .prepare<{ sid: number; from: number; to: number }, number>(
        `SELECT 1 FROM ${table} WHERE ${key} = @sid AND first_ts <= @to AND last_ts >= @from
           AND first_ts >= coalesce((SELECT first_ts FROM ${table} WHERE ${key} = @sid AND first_ts <= @from ORDER BY first_ts DESC LIMIT 1), @from) LIMIT 1`,
      )
      .pluck();
    // Blocks end before their successors start, so the one with the greatest first_ts below t is the one just before t.
    this.before = db.prepare(`SELECT rowid, first_ts, last_ts, rows, payload FROM ${table} WHERE ${key} = @sid AND first_ts < @t ORDER BY first_ts DESC LIMIT 1`);
    this.insertStmt = db.prepare(`INSERT INTO ${table} (${key}, first_ts, last_ts, rows, payload) VALUES (@sid, @first, @last, @rows, @payload)`);
    this.deleteStmt = db.prepare(`DELETE FROM ${table} WHERE rowid = ?`);
    this.countStmt = db.prepare(`SELECT sum(rows) AS rows, count(*) AS blocks, sum(length(payload)) AS bytes FROM ${table} WHERE ${key} = @sid`);
  }

  /**
   * The stored blocks that hold rows of [from, to], in time order (payloads
   * still encoded). Fetched a batch at a time, each batch picking up after
   * the last block of the one before, so a reader may pause between blocks
   * (a stream waiting on its client) without holding the connection busy or
   * a read transaction open; a write in between is seen from the next batch
   * on, and never makes the walk repeat or skip a row that was already there.
   * `rowsWanted` sizes the first batch for a reader that needs only so many
   * rows (a page), so that it does not fetch blocks it will not read.
   */
  *blocks(sid: number, from: number, to: number, rowsWanted = Infinity): Generator<StoredBlock> {
    let batch = Math.min(BATCH, Math.ceil(rowsWanted / BLOCK_ROWS) + 1);
    while (from <= to) {
      const found = this.overlapping(batch).all({ sid, from, to });
      yield* found;
      if (found.length < batch) return;
      from = found[found.length - 1].last_ts + 1;
      batch = BATCH;
    }
  }

  /**
   * Up to `batch` blocks overlapping [from, to], from the one holding `from`
   * (the last to start at or before it: blocks never overlap), found in the
   * index, so a read deep into a long series does not walk every earlier
   * block. LIMIT is written into the SQL, a statement per batch size: SQLite
   * lets a bound LIMIT steer its plan, so better-sqlite3 clearing the
   * bindings after each call would make SQLite prepare it again every time
   * (seen in perf, about 20 µs a query in the server).
   */
  private overlapping(batch: number): Statement<{ sid: number; from: number; to: number }, StoredBlock> {
    const { table, key } = this.where;
    return (this.scans[batch] ??= this.db.prepare(
      `SELECT rowid, first_ts, last_ts, rows, payload FROM ${table}
        WHERE ${key} = @sid AND first_ts <= @to AND last_ts >= @from
          AND first_ts >= coalesce((SELECT first_ts FROM ${table} WHERE ${key} = @sid AND first_ts <= @from ORDER BY first_ts DESC LIMIT 1), @from)
        ORDER BY first_ts LIMIT ${batch}`,
    ));
  }

  /** Whether a block starts within [from, to]: since a block's first_ts is one of its rows, whether rows there exist beyond the block before. */
  startsWithin(sid: number, from: number, to: number): boolean {
    return this.starting.get({ sid, from, to }) !== undefined;
  }

  /** Whether any stored row lies within [from, to]. */
  overlaps(sid: number, from: number, to: number): boolean {
    return this.overlapsStmt.get({ sid, from, to }) !== undefined;
  }

  /**
   * Upserts rows (any order; of equal timestamps the last wins); returns how
   * many rows were given. IMMEDIATE: the write lock is taken first, so a busy
   * database fails here before any work, with nothing written (busy-retry.ts).
   */
  upsert(sid: number, kinds: readonly FieldKind[], input: RowSet): number {
    const rows = normalizeRows(input);
    if (rows.timestamps.length === 0) return 0;
    this.db.transaction(() => this.write(this.plan(sid, kinds, rows))).immediate();
    return input.timestamps.length;
  }

  /**
   * Upserts rows under a key that no one else writes (an import's staging):
   * the merge and the encoding happen outside any transaction, and only the
   * writes themselves in a short one.
   */
  upsertOwned(key: number, kinds: readonly FieldKind[], input: RowSet): number {
    const rows = normalizeRows(input);
    if (rows.timestamps.length === 0) return 0;
    const write = this.plan(key, kinds, rows);
    this.db.transaction(() => this.write(write)).immediate();
    return input.timestamps.length;
  }

  /** The blocks normalised rows touch, merged with them and encoded again. */
  private plan(sid: number, kinds: readonly FieldKind[], rows: RowSet): BlockWrite {
    const from = rows.timestamps[0];
    const to = rows.timestamps[rows.timestamps.length - 1];
    const touched = [...this.blocks(sid, from, to)];
    if (touched.length === 0 || touched[0].first_ts > from) {
      // Not overlapping, so it ends before `from`: the rows append to it.
      const prev = this.before.get({ sid, t: from });
      if (prev && prev.rows < BLOCK_ROWS) touched.unshift(prev);
    }
    const merged = touched.length > 0 ? mergeRows(this.decodeAll(touched, kinds), rows) : rows;
    return { sid, old: touched, blocks: encodeBlocks(merged) };
  }

  private write({ sid, old, blocks }: BlockWrite): void {
    for (const b of old) this.deleteStmt.run(b.rowid);
    for (const b of blocks) this.insertStmt.run({ sid, ...b });
  }

  /** Deletes the rows of [from, to]; returns how many there were. */
  deleteRange(sid: number, kinds: readonly FieldKind[], from: number, to: number): number {
    return this.db.transaction(() => {
      const touched = [...this.blocks(sid, from, to)];
      if (touched.length === 0) return 0;
      const before = touched.reduce((a, b) => a + b.rows, 0);
      const kept = withoutRange(this.decodeAll(touched, kinds), from, to);
      this.write({ sid, old: touched, blocks: encodeBlocks(kept) });
      return before - kept.timestamps.length;
    }).immediate();
  }

  /** Row count, block count and payload bytes of a series. */
  stats(sid: number): { rows: number; blocks: number; bytes: number } {
    const r = this.countStmt.get({ sid })!;
    return { rows: r.rows ?? 0, blocks: r.blocks, bytes: r.bytes ?? 0 };
  }

  /** The rows of one or more blocks, which must hold the series' columns. */
  decodeAll(blocks: StoredBlock[], kinds: readonly FieldKind[]): RowSet {
    return concatRows(
      ...blocks.map((b) => {
        const decoded = decodeBlock(b.payload);
        if (decoded.columns.length !== kinds.length || decoded.columns.some((c, i) => c.kind !== kinds[i])) {
          throw new Error(`block ${b.rowid} does not match the series' data fields`);
        }
        return decoded;
      }),
    );
  }
}

/** Normalised rows cut into blocks of BLOCK_ROWS and encoded. */
function encodeBlocks(rows: RowSet): BlockWrite["blocks"] {
  const out: BlockWrite["blocks"] = [];
  const n = rows.timestamps.length;
  for (let start = 0; start < n; start += BLOCK_ROWS) {
    const part = sliceRows(rows, start, Math.min(n, start + BLOCK_ROWS));
    const count = part.timestamps.length;
    out.push({ first: part.timestamps[0], last: part.timestamps[count - 1], rows: count, payload: encodeBlock(part) });
  }
  return out;
}
