// An import into SQLite (staging.ts): staging is a run of short transactions
// into import_blocks, each merged and encoded before it takes the write lock;
// publishing is one short transaction that moves the staged blocks into the
// series. A killed import leaves only staged rows, which nothing reads and the
// next start or import removes.
import { hostname } from "node:os";
import type { Statement } from "better-sqlite3";
import { decodeBlock, type FieldKind } from "../blocks/block-codec.js";
import { SqliteBlockStore } from "../blocks/block-store-sqlite.js";
import type { Db } from "../../storage/database.js";
import { discardAbandonedImports, running } from "../../storage/import-registry.js";
import type { RowSet } from "../blocks/row-set.js";
import type { Imports, Staging } from "./staging.js";

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
    list: Statement<[number], { rowid: number; first_ts: number; last_ts: number }>;
    move: Statement<{ sid: number; rowid: number }>;
    payload: Statement<[number], Buffer>;
    published: Statement<[number]>;
    remove: Statement<[number]>;
  };

  private constructor(
    private readonly db: Db,
    readonly id: number,
    readonly sid: number,
  ) {
    this.staged = new SqliteBlockStore(db, { table: "import_blocks", key: "import_id" });
    this.stmts = {
      live: db.prepare<[number], number>("SELECT 1 FROM imports WHERE id = ? AND published = 0").pluck(),
      list: db.prepare("SELECT rowid, first_ts, last_ts FROM import_blocks WHERE import_id = ? ORDER BY first_ts"),
      move: db.prepare("INSERT INTO blocks (sid, first_ts, last_ts, rows, payload) SELECT @sid, first_ts, last_ts, rows, payload FROM import_blocks WHERE rowid = @rowid"),
      payload: db.prepare<[number], Buffer>("SELECT payload FROM import_blocks WHERE rowid = ?").pluck(),
      published: db.prepare("UPDATE imports SET published = 1 WHERE id = ?"),
      remove: db.prepare("DELETE FROM imports WHERE id = ?"),
    };
  }

  /** Registers an import into series `sid`, after removing what abandoned imports left. */
  static begin(db: Db, sid: number): StagedImport {
    discardAbandonedImports(db);
    const id = db
      .prepare("INSERT INTO imports (sid, pid, host, started_at) VALUES (?, ?, ?, ?) RETURNING id")
      .pluck()
      .get(sid, process.pid, hostname(), new Date().toISOString()) as number;
    running.add(id);
    return new StagedImport(db, id, sid);
  }

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
  publish(kinds: readonly FieldKind[]): void {
    const series = new SqliteBlockStore(this.db);
    this.db
      .transaction(() => {
        if (this.stmts.live.get(this.id) === undefined) throw new Error("the time series was deleted during the import");
        const overlapping: number[] = [];
        for (const b of this.stmts.list.all(this.id)) {
          // Staged blocks never overlap each other, so copying one cannot make another overlap.
          if (series.overlaps(this.sid, b.first_ts, b.last_ts)) overlapping.push(b.rowid);
          else this.stmts.move.run({ sid: this.sid, rowid: b.rowid });
        }
        for (const rowid of overlapping) series.upsert(this.sid, kinds, decodeBlock(this.stmts.payload.get(rowid)!));
        this.stmts.published.run(this.id);
      })
      .immediate();
    try {
      this.discard();
    } catch {
      // Published already; the staged copy is removed by the next start or import.
    }
  }

  /** Removes the import and its staged blocks (after publishing, or instead of it). */
  discard(): void {
    running.delete(this.id);
    this.db.transaction(() => this.stmts.remove.run(this.id)).immediate();
  }
}
