// An import into SQLite (staging.ts). Staging is a run of short transactions
// into a file of the import's own beside the database (D58), attached to the
// importer's connection: the database's own write lock is not taken while
// staging, and the database file grows by the published blocks alone (staged
// in the database itself, they left free pages as large as the import).
// Publishing is one short transaction that copies the staged blocks into the
// series; then the staging file is deleted. A killed import leaves only its
// registration and its staging file, which nothing reads and the next start
// or import removes (import-registry.ts).
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import type { Statement } from "better-sqlite3";
import { decodeBlock, type FieldKind } from "../timeseries/blocks/block-codec.js";
import { SqliteBlockStore } from "./block-store.js";
import { param, type Db } from "./database.js";
import { discardAbandonedImports, running, stagingFileOf } from "./import-registry.js";
import { IMPORT_STAGING } from "./schema.js";
import type { RowSet } from "../timeseries/blocks/row-set.js";
import type { Imports, Published, Staging } from "../timeseries/import/staging.js";

export class SqliteImports implements Imports {
  constructor(private readonly db: Db) {}

  async begin(sid: number): Promise<Staging> {
    return StagedImport.begin(this.db, sid);
  }
}

export class StagedImport implements Staging {
  private readonly staged: SqliteBlockStore;
  private readonly stmts: {
    live: Statement<[number], number>;
    list: Statement<{ id: number }, { rowid: number; first_ts: number; last_ts: number }>;
    move: Statement<{ sid: number; rowid: number }>;
    payload: Statement<[number], Buffer>;
    published: Statement<[number]>;
    remove: Statement<[number]>;
  };
  private attached = true;

  private constructor(
    private readonly db: Db,
    readonly id: number,
    readonly sid: number,
    /** The staging file, or undefined for an in-memory database (SQLite's own temporary file then). */
    private readonly file: string | undefined,
  ) {
    this.staged = new SqliteBlockStore(db, { table: "staging.import_blocks", key: "import_id" });
    this.stmts = {
      live: db.prepare<[number], number>("SELECT 1 FROM main.imports WHERE id = ? AND published = 0").pluck(),
      list: db.prepare(`SELECT rowid, first_ts, last_ts FROM staging.import_blocks WHERE import_id = ${param("id")} ORDER BY first_ts`),
      move: db.prepare(
        "INSERT INTO main.blocks (sid, first_ts, last_ts, rows, payload, summary) SELECT @sid, first_ts, last_ts, rows, payload, summary FROM staging.import_blocks WHERE rowid = @rowid",
      ),
      payload: db.prepare<[number], Buffer>("SELECT payload FROM staging.import_blocks WHERE rowid = ?").pluck(),
      published: db.prepare("UPDATE main.imports SET published = 1 WHERE id = ?"),
      remove: db.prepare("DELETE FROM main.imports WHERE id = ?"),
    };
  }

  /** Registers an import into series `sid`, after removing what abandoned imports left, and attaches its staging file. */
  static begin(db: Db, sid: number): StagedImport {
    discardAbandonedImports(db);
    const id = db
      .prepare("INSERT INTO imports (sid, pid, host, started_at) VALUES (?, ?, ?, ?) RETURNING id")
      .pluck()
      .get(sid, process.pid, hostname(), new Date().toISOString()) as number;
    running.add(id);
    const file = stagingFileOf(db, id);
    try {
      if (file) rmSync(file, { force: true }); // an id is reused once its import is gone: so may be a file a crash left
      db.prepare(`ATTACH DATABASE ? AS ${IMPORT_STAGING.schema}`).run(file ?? "");
      // A crash loses the import whatever is on disk, so the staging file needs neither a journal nor fsync.
      db.pragma(`${IMPORT_STAGING.schema}.journal_mode = OFF`);
      db.pragma(`${IMPORT_STAGING.schema}.synchronous = OFF`);
      db.exec(IMPORT_STAGING.sql);
    } catch (e) {
      running.delete(id);
      throw e;
    }
    return new StagedImport(db, id, sid, file);
  }

  /** Deferred, not IMMEDIATE: the write touches the staging file alone, so the database's own write lock is never taken. */
  stage(kinds: readonly FieldKind[], rows: RowSet): void {
    this.staged.upsertOwned(this.id, kinds, rows);
  }

  /**
   * Moves the staged blocks into the series in one transaction. A staged
   * block that overlaps none of the series' rows is copied as it is (its
   * payload bytes, nothing decoded): the cost is the copy, a few MB for
   * millions of rows. One that overlaps stored rows is merged with them
   * as an upload would be (decoded, merged, encoded again), so re-importing
   * over existing data costs a decode and an encode per block overlapped.
   */
  publish(kinds: readonly FieldKind[]): Published {
    const series = new SqliteBlockStore(this.db);
    const published = this.db
      .transaction((): Published => {
        if (this.stmts.live.get(this.id) === undefined) throw new Error("the time series was deleted during the import");
        const before = series.stats(this.sid).rows;
        const stored = this.staged.stats(this.id).rows;
        const overlapping: number[] = [];
        for (const b of this.stmts.list.all({ id: this.id })) {
          // Staged blocks never overlap each other, so copying one cannot make another overlap.
          if (series.overlaps(this.sid, b.first_ts, b.last_ts)) overlapping.push(b.rowid);
          else this.stmts.move.run({ sid: this.sid, rowid: b.rowid });
        }
        // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- rowids read above, in this transaction
        for (const rowid of overlapping) series.upsertNow(this.sid, kinds, decodeBlock(this.stmts.payload.get(rowid)!));
        this.stmts.published.run(this.id);
        return { stored, replaced: stored - (series.stats(this.sid).rows - before) };
      })
      .immediate();
    try {
      this.discard();
    } catch {
      // Published already; the staging file is removed by the next start or import.
    }
    return published;
  }

  /** Removes the staging file, then the import (after publishing, or instead of it). */
  discard(): void {
    running.delete(this.id);
    if (this.attached) {
      this.attached = false;
      this.db.exec(`DETACH DATABASE ${IMPORT_STAGING.schema}`);
    }
    if (this.file) rmSync(this.file, { force: true });
    this.db.transaction(() => this.stmts.remove.run(this.id)).immediate();
  }
}
