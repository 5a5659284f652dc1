// Value blocks in SQLite (the rules are in block-store.ts). Synchronous: a
// write reads, merges and replaces its blocks inside one IMMEDIATE
// transaction. The same store over the import_blocks table of an import's
// staging file holds its staged blocks, keyed by import instead of series
// (sqlite/import-staging.ts).
import type { Statement } from "better-sqlite3";
import { param, type Db } from "./database.js";
import type { FieldKind } from "../timeseries/blocks/block-codec.js";
import {
  mayAppend,
  planAppend,
  planAppendMerge,
  planDelete,
  planUpsert,
  TAIL_BLOCKS,
  type BlockHead,
  type SeriesWrite,
  type BlockStore,
  type BlockWrite,
  blockIndexOf,
  type BlockIndex,
  type StoredBlock,
} from "../timeseries/blocks/block-store.js";
import { normalizeRows, type RowSet } from "../timeseries/blocks/row-set.js";
import { otherCommits } from "./data-version.js";
import { groupCommit } from "./group-commit.js";
import { freeNow } from "../native/detach.js";

interface Range {
  sid: number;
  from: number;
  to: number;
}

/** A scan's bounds: a range, and at most `limit` blocks (-1: no limit, as SQLite reads a negative LIMIT). */
interface Scan extends Range {
  limit: number;
}

/** The series (or import) and the LIMIT as the statements bind them: not prepared again on every call (database.ts param()). */
const SID = param("sid");
const LIMIT = param("limit");

/** The LIMIT bound for a store's `limit` (Infinity: none). */
const limitOf = (limit: number): number => (Number.isFinite(limit) ? limit : -1);

/** Where blocks live: the table, and the column that keys a run of blocks (a series, or an import). */
export interface BlockTable {
  table: "blocks" | "staging.import_blocks";
  key: "sid" | "import_id";
}
export const SERIES_BLOCKS: BlockTable = { table: "blocks", key: "sid" };

/** A batch of blocks as one row: their numbers as text, their bytes one after another (BlockStore.summaries(), payloads()). */
interface Columns {
  numbers: string | null;
  bytes: Buffer | null;
}

export class SqliteBlockStore implements BlockStore {
  private readonly scan: Statement<Scan, StoredBlock>;
  private readonly starting: Statement<Range, number>;
  private readonly overlapsStmt: Statement<Range, number>;
  private readonly before: Statement<{ sid: number; t: number }, StoredBlock>;
  private readonly tailStmt: Statement<{ sid: number; limit: number }, BlockHead>;
  private readonly insertStmt: Statement<{ sid: number; first: number; last: number; rows: number; payload: Buffer; summary: Buffer }>;
  private readonly summaryScan: Statement<Scan, Columns>;
  private readonly payloadsStmt: Statement<{ sid: number; rowids: string }, Columns>;
  private readonly deleteStmt: Statement<[number]>;
  private readonly boundsStmt: Statement<{ sid: number }, { first: number | null; last: number | null }>;
  private readonly countStmt: Statement<{ sid: number }, { rows: number | null; blocks: number; bytes: number | null }>;

  constructor(
    private readonly db: Db,
    private readonly where: BlockTable = SERIES_BLOCKS,
  ) {
    const { table, key } = where;
    this.starting = db
      .prepare<Range, number>(`SELECT 1 FROM ${table} WHERE ${key} = ${SID} AND first_ts BETWEEN @from AND @to LIMIT 1`)
      .pluck();
    // As overlapping(), without reading a payload.
    this.overlapsStmt = db
      .prepare<Range, number>(
        `SELECT 1 FROM ${table} WHERE ${key} = ${SID} AND ${OVERLAPS} LIMIT 1`.replaceAll("$T", table).replaceAll("$K", key),
      )
      .pluck();
    // Blocks end before their successors start, so the one with the greatest first_ts below t is the one just before t.
    this.before = db.prepare(
      `SELECT rowid, first_ts, last_ts, rows, payload FROM ${table} WHERE ${key} = ${SID} AND first_ts < @t ORDER BY first_ts DESC LIMIT 1`,
    );
    this.tailStmt = db.prepare(
      `SELECT rowid, first_ts, last_ts, rows FROM ${table} WHERE ${key} = ${SID} ORDER BY first_ts DESC LIMIT ${LIMIT}`,
    );
    this.insertStmt = db.prepare(
      `INSERT INTO ${table} (${key}, first_ts, last_ts, rows, payload, summary) VALUES (@sid, @first, @last, @rows, @payload, @summary)`,
    );
    // The two aggregates take the rows in the same order, whichever it is. `+key`: the named rows by
    // rowid; on the key, SQLite walked the series' whole index for each batch (a 1B-row series, 64
    // payloads: 3.9-5.5 ms against 0.6).
    this.payloadsStmt = db.prepare(
      `SELECT group_concat(rowid || ',' || first_ts || ',' || length(payload), ',') AS numbers, CAST(group_concat(payload, '') AS BLOB) AS bytes
         FROM (SELECT rowid, first_ts, payload FROM ${table} WHERE rowid IN (SELECT value FROM json_each(@rowids)) AND +${key} = @sid)`,
    );
    this.deleteStmt = db.prepare(`DELETE FROM ${table} WHERE rowid = ?`);
    // Both ends from the index on (key, first_ts): the last block is the one that starts last.
    this.boundsStmt = db.prepare(
      `SELECT (SELECT min(first_ts) FROM ${table} WHERE ${key} = ${SID}) AS first, (SELECT last_ts FROM ${table} WHERE ${key} = ${SID} ORDER BY first_ts DESC LIMIT 1) AS last`,
    );
    this.countStmt = db.prepare(
      `SELECT sum(rows) AS rows, count(*) AS blocks, sum(length(payload)) AS bytes FROM ${table} WHERE ${key} = ${SID}`,
    );
    this.scan = db.prepare(
      `SELECT rowid, first_ts, last_ts, rows, payload FROM ${table} WHERE ${key} = ${SID} AND ${OVERLAPS} ORDER BY first_ts LIMIT ${LIMIT}`
        .replaceAll("$T", table)
        .replaceAll("$K", key),
    );
    this.summaryScan = db.prepare(this.summariesSql());
  }

  overlapping(sid: number, from: number, to: number, limit: number): StoredBlock[] {
    return this.scan.all({ sid, from, to, limit: limitOf(limit) });
  }

  /**
   * One row for the whole batch (numbers as text, summaries as one blob):
   * an object and a buffer per block made a 1B-row series' index 60,000 of
   * each to collect, about 40 MiB of the server's peak memory per chart.
   * group_concat appends a blob's bytes as they are (sqlite3_value_bytes).
   */
  summaries(sid: number, from: number, to: number, limit: number): BlockIndex {
    const { numbers, bytes } = this.summaryScan.get({ sid, from, to, limit: limitOf(limit) }) ?? { numbers: null, bytes: null };
    return blockIndexOf(numbers, bytes);
  }

  /** The SQL of summaries()' scan; on the blocks table SQLite reads it from the blocks_chart index alone (schema.ts). */
  summariesSql(): string {
    const { table, key } = this.where;
    return `SELECT group_concat(rowid || ',' || first_ts || ',' || last_ts || ',' || coalesce(length(summary), 0), ',' ORDER BY first_ts) AS numbers,
              CAST(group_concat(summary, '' ORDER BY first_ts) AS BLOB) AS bytes
         FROM (SELECT rowid, first_ts, last_ts, summary FROM ${table} WHERE ${key} = ${SID} AND ${OVERLAPS} ORDER BY first_ts LIMIT ${LIMIT})`
      .replaceAll("$T", table)
      .replaceAll("$K", key);
  }

  /**
   * Read as one blob, as summaries(), then each payload copied out into a
   * buffer of its own (which its reader may free at once, freeNow) and the
   * blob freed: a 1B-row chart reads 2,000 payloads.
   */
  payloads(sid: number, rowids: readonly number[]): { rowid: number; first_ts: number; payload: Buffer }[] {
    const { numbers, bytes } = this.payloadsStmt.get({ sid, rowids: JSON.stringify(rowids) }) ?? { numbers: null, bytes: null };
    if (numbers === null || bytes === null) return [];
    const n = JSON.parse(`[${numbers}]`) as number[];
    const out: { rowid: number; first_ts: number; payload: Buffer }[] = [];
    for (let i = 0, at = 0; i < n.length; i += 3) {
      const payload = Buffer.allocUnsafeSlow(n[i + 2]);
      bytes.copy(payload, 0, at, at + n[i + 2]);
      out.push({ rowid: n[i], first_ts: n[i + 1], payload });
      at += n[i + 2];
    }
    freeNow(bytes);
    return out;
  }

  /** Another connection's commit (the CLI's import, another process) moves data_version; this connection's writes are told by series. */
  changeMark(): string {
    return String(otherCommits(this.db));
  }

  watchChanges(fn: (sid: number | "*") => void): () => void {
    return blockWrites(this.db, this.where).watch(fn);
  }

  startsWithin(sid: number, from: number, to: number): boolean {
    return this.starting.get({ sid, from, to }) !== undefined;
  }

  /** Whether any stored row lies within [from, to]. */
  overlaps(sid: number, from: number, to: number): boolean {
    return this.overlapsStmt.get({ sid, from, to }) !== undefined;
  }

  /**
   * Through the connection's group commit (D66): planned and written inside
   * the group's IMMEDIATE transaction, in a savepoint of its own, so that it
   * reads the blocks as the writes before it in the group left them.
   */
  upsert(sid: number, kinds: readonly FieldKind[], rows: RowSet): Promise<number> | number {
    return this.upsertMany([{ sid, kinds, rows }]);
  }

  /** As upsert(), several series in one savepoint of the group: all or nothing (D68). */
  upsertMany(writes: readonly SeriesWrite[]): Promise<number> | number {
    const normal = writes.map((w) => ({ ...w, rows: normalizeRows(w.rows) })).filter((w) => w.rows.timestamps.length > 0);
    const given = writes.reduce((n, w) => n + w.rows.timestamps.length, 0);
    if (normal.length === 0) return given;
    return groupCommit(this.db).run(() => {
      for (const w of normal) this.write(w.sid, this.plan(w.sid, w.kinds, w.rows));
      return given;
    });
  }

  /**
   * As upsert(), at once, in the caller's transaction (an import's publish)
   * or one of its own. IMMEDIATE: the write lock is taken first, so a busy
   * database fails here before any work, with nothing written (transport/database-retry-interceptor.ts).
   */
  upsertNow(sid: number, kinds: readonly FieldKind[], input: RowSet): number {
    const rows = normalizeRows(input);
    if (rows.timestamps.length === 0) return 0;
    this.db.transaction(() => this.write(sid, this.plan(sid, kinds, rows))).immediate();
    return input.timestamps.length;
  }

  /**
   * Upserts rows under a key that no one else writes (an import's staging):
   * the merge and the encoding happen outside any transaction, and only the
   * writes themselves in a short one, deferred: it locks only the file it
   * writes (IMMEDIATE would take the lock of every attached database).
   */
  upsertOwned(key: number, kinds: readonly FieldKind[], input: RowSet): number {
    const rows = normalizeRows(input);
    if (rows.timestamps.length === 0) return 0;
    const write = this.plan(key, kinds, rows);
    this.db.transaction(() => this.write(key, write)).deferred();
    return input.timestamps.length;
  }

  tail(sid: number, limit: number): BlockHead[] {
    return this.tailStmt.all({ sid, limit });
  }

  private plan(sid: number, kinds: readonly FieldKind[], rows: RowSet): BlockWrite {
    const merge = planAppendMerge(this.tail(sid, TAIL_BLOCKS), rows);
    if (merge !== undefined) {
      return planAppend(
        merge.length > 0
          ? this.payloads(
              sid,
              merge.map((b) => b.rowid),
            )
          : [],
        kinds,
        rows,
      );
    }
    const touched = this.overlapping(sid, rows.timestamps[0], rows.timestamps[rows.timestamps.length - 1], Infinity);
    const before = mayAppend(touched, rows) ? this.before.get({ sid, t: rows.timestamps[0] }) : undefined;
    return planUpsert(touched, before, kinds, rows);
  }

  private write(sid: number, { old, blocks }: BlockWrite): void {
    for (const b of old) this.deleteStmt.run(b.rowid);
    for (const b of blocks) this.insertStmt.run({ sid, ...b });
  }

  /** Through the group commit, as upsert(). */
  deleteRange(sid: number, kinds: readonly FieldKind[], from: number, to: number): Promise<number> {
    return groupCommit(this.db).run(() => {
      const touched = this.overlapping(sid, from, to, Infinity);
      if (touched.length === 0) return 0;
      const write = planDelete(touched, kinds, from, to);
      this.write(sid, write);
      return write.removed;
    });
  }

  bounds(sid: number): { first: number; last: number } | undefined {
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- an aggregate answers one row, always
    const r = this.boundsStmt.get({ sid })!;
    return r.first === null || r.last === null ? undefined : { first: r.first, last: r.last };
  }

  stats(sid: number): { rows: number; blocks: number; bytes: number } {
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- an aggregate answers one row, always
    const r = this.countStmt.get({ sid })!;
    return { rows: r.rows ?? 0, blocks: r.blocks, bytes: r.bytes ?? 0 };
  }
}

/** This connection's writes to a block table, by series, from triggers of its own (temporary: they live with the connection). */
class BlockWrites {
  private readonly watchers = new Set<(sid: number) => void>();

  constructor(db: Db, { table, key }: BlockTable) {
    const fn = `meridian_${table.replace(".", "_")}_changed`;
    db.function(fn, { deterministic: false, directOnly: true }, (sid) => {
      for (const w of this.watchers) w(Number(sid));
      return null;
    });
    // Every write, whichever statement makes it: uploads, deletes, an import's publish, a series' deletion (its cascade).
    const on = table.includes(".") ? table : `main.${table}`;
    db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS ${fn}_insert AFTER INSERT ON ${on} BEGIN SELECT ${fn}(NEW.${key}); END`);
    db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS ${fn}_delete AFTER DELETE ON ${on} BEGIN SELECT ${fn}(OLD.${key}); END`);
  }

  watch(fn: (sid: number) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }
}

const writesByDb = new WeakMap<Db, Map<string, BlockWrites>>();

function blockWrites(db: Db, where: BlockTable): BlockWrites {
  let byTable = writesByDb.get(db);
  if (byTable === undefined) writesByDb.set(db, (byTable = new Map<string, BlockWrites>()));
  let w = byTable.get(where.table);
  if (w === undefined) byTable.set(where.table, (w = new BlockWrites(db, where)));
  return w;
}

/** Blocks overlapping [@from, @to], from the one holding @from ($T the table, $K its key). */
const OVERLAPS = `first_ts <= @to AND last_ts >= @from
  AND first_ts >= coalesce((SELECT first_ts FROM $T WHERE $K = ${SID} AND first_ts <= @from ORDER BY first_ts DESC LIMIT 1), @from)`;
