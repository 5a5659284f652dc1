// An import into PostgreSQL (D30, D40): blocks staged by COPY into
// import_blocks in short transactions, then moved into the series in one
// transaction that also removes the import, so that nothing is left behind
// and no reader ever sees half of it. Readers and the replicas' writes to
// other series never wait for it; writes to the same series wait only for the
// publishing transaction (it locks the series' row).
//
// While it runs, the importer holds an advisory lock on the import's id on a
// connection of its own: an import whose lock is free was abandoned (its
// process died, on whatever host), and the next start or import removes it.
import { hostname } from "node:os";
import type { ReservedSql, Sql } from "postgres";
import type { FieldKind } from "../timeseries/blocks/block-codec.js";
import { PG_IMPORT_BLOCKS, PG_SERIES_BLOCKS, PostgresBlockStore } from "./block-store.js";
import { decodeBlock } from "../timeseries/blocks/block-codec.js";
import { normalizeRows, type RowSet } from "../timeseries/blocks/row-set.js";
import type { Imports, Published, Staging } from "../timeseries/import/staging.js";

/** The advisory lock class of running imports (the lock's second key is the import's id). */
const IMPORT_LOCKS = 0x4d524449; // "MRDI"

export class PostgresImports implements Imports {
  constructor(private readonly sql: Sql) {}

  async begin(sid: number): Promise<Staging> {
    await discardAbandonedPgImports(this.sql);
    const holder = await this.sql.reserve();
    try {
      const [{ id }] = await holder<{ id: number }[]>`INSERT INTO imports (sid, host) VALUES (${sid}, ${hostname()}) RETURNING id`;
      await holder`SELECT pg_advisory_lock(${IMPORT_LOCKS}, ${id}::integer)`;
      return new PgStaging(this.sql, holder, id, sid);
    } catch (e) {
      holder.release();
      throw e;
    }
  }
}

/** Removes imports that no running importer holds (a session's lock is tried from another session, so one's own is never taken). */
export async function discardAbandonedPgImports(sql: Sql): Promise<number> {
  return sql.begin(async (tx) => {
    const gone = await tx`DELETE FROM imports WHERE pg_try_advisory_xact_lock(${IMPORT_LOCKS}, id::integer)`;
    return gone.count;
  });
}

class PgStaging implements Staging {
  private readonly staged: PostgresBlockStore;
  private readonly series: PostgresBlockStore;

  constructor(
    private readonly sql: Sql,
    private readonly holder: ReservedSql,
    private readonly id: number,
    private readonly sid: number,
  ) {
    this.staged = new PostgresBlockStore(sql, PG_IMPORT_BLOCKS, true);
    this.series = new PostgresBlockStore(sql, PG_SERIES_BLOCKS);
  }

  async stage(kinds: readonly FieldKind[], input: RowSet): Promise<void> {
    const rows = normalizeRows(input);
    if (rows.timestamps.length === 0) return;
    await this.sql.begin(async (tx) => {
      await this.staged.lockOwner(tx, this.id);
      await this.staged.upsertIn(tx, this.id, kinds, rows);
    });
  }

  /**
   * A staged block that overlaps none of the series' rows is moved as it is
   * (its payload bytes, nothing decoded), all of them by one statement; one
   * that overlaps stored rows is merged with them as an upload would be.
   */
  async publish(kinds: readonly FieldKind[]): Promise<Published> {
    try {
      return await this.sql.begin(async (tx) => {
        await this.series.lockOwner(tx, this.sid);
        await this.staged.lockOwner(tx, this.id);
        const rowsIn = async (): Promise<{ series: number; staged: number }> => {
          const [r] = await tx<{ series: string; staged: string }[]>`
            SELECT (SELECT coalesce(sum(rows), 0) FROM blocks WHERE sid = ${this.sid}) AS series,
                   (SELECT coalesce(sum(rows), 0) FROM import_blocks WHERE import_id = ${this.id}) AS staged`;
          return { series: Number(r.series), staged: Number(r.staged) };
        };
        const before = await rowsIn();
        // Which staged blocks overlap stored rows, found before any is moved;
        // staged blocks never overlap each other, so moving one cannot make another overlap.
        const overlapping = await tx<{ payload: Buffer }[]>`
          SELECT s.payload FROM import_blocks s
           WHERE s.import_id = ${this.id}
             AND EXISTS (SELECT 1 FROM blocks b WHERE b.sid = ${this.sid} AND b.first_ts <= s.last_ts AND b.last_ts >= s.first_ts)
           ORDER BY s.first_ts`;
        await tx`
          INSERT INTO blocks (sid, first_ts, last_ts, rows, payload, summary)
          SELECT ${this.sid}, s.first_ts, s.last_ts, s.rows, s.payload, s.summary FROM import_blocks s
           WHERE s.import_id = ${this.id}
             AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.sid = ${this.sid} AND b.first_ts <= s.last_ts AND b.last_ts >= s.first_ts)`;
        for (const b of overlapping) await this.series.upsertIn(tx, this.sid, kinds, decodeBlock(b.payload));
        const after = await rowsIn();
        await tx`DELETE FROM imports WHERE id = ${this.id}`;
        return { stored: before.staged, replaced: before.staged - (after.series - before.series) };
      });
    } finally {
      await this.release();
    }
  }

  async discard(): Promise<void> {
    try {
      await this.sql`DELETE FROM imports WHERE id = ${this.id}`;
    } finally {
      await this.release();
    }
  }

  private async release(): Promise<void> {
    try {
      await this.holder`SELECT pg_advisory_unlock(${IMPORT_LOCKS}, ${this.id}::integer)`;
    } finally {
      this.holder.release();
    }
  }
}
