// Value blocks in PostgreSQL, shared by every replica (D40; the rules are in
// block-store.ts). A write runs in one transaction that first locks its
// series' row, so writers of one series, on any replica, take turns (and a
// series deleted meanwhile is noticed), while readers never wait: each batch
// of a read is one statement on its own snapshot, as on SQLite. An import's
// staged blocks go in by COPY.
import type { Sql, TransactionSql } from "postgres";
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
import { BLOCKS_CHANGED, type ChangeFeed } from "./changes.js";
import { pgGroupCommit } from "./group-commit.js";

/** Where blocks live: the table, and the column that keys a run of blocks (a series, or an import). */
export interface PgBlockTable {
  table: "blocks" | "import_blocks";
  key: "sid" | "import_id";
  /** The row that owns a run of blocks, locked by writes. */
  owner: { table: "time_series" | "imports"; key: "sid" | "id" };
}
export const PG_SERIES_BLOCKS: PgBlockTable = { table: "blocks", key: "sid", owner: { table: "time_series", key: "sid" } };
export const PG_IMPORT_BLOCKS: PgBlockTable = { table: "import_blocks", key: "import_id", owner: { table: "imports", key: "id" } };

type Q = Sql | TransactionSql;

/** The owning series or import is gone (deleted while the write was under way). */
export class OwnerGoneError extends Error {}

export class PostgresBlockStore implements BlockStore {
  private readonly watchers = new Set<(sid: number | "*") => void>();

  /**
   * `bulk`: new blocks go in by COPY (an import's staging, many blocks at a
   * time); otherwise by one INSERT (an upload's block or two, where COPY's
   * extra round trips cost more than its speed saves). `changes`: the feed
   * that tells which series' blocks any replica wrote; without it no change is told and nothing may be cached.
   */
  constructor(
    private readonly sql: Sql,
    private readonly where: PgBlockTable = PG_SERIES_BLOCKS,
    private readonly bulk = false,
    private readonly changes?: ChangeFeed,
  ) {
    changes?.watch((table) => {
      if (table === "*") this.tell("*");
      else if (table.startsWith(BLOCKS_CHANGED)) this.tell(Number(table.slice(BLOCKS_CHANGED.length)));
    });
  }

  /** One row for the whole batch, as on SQLite (sqlite/block-store.ts says why). */
  async summaries(sid: number, from: number, to: number, limit: number): Promise<BlockIndex> {
    const { table, key } = this.where;
    const q = this.sql;
    const [{ numbers, bytes }] = await q<{ numbers: string | null; bytes: Buffer | null }[]>`
      SELECT string_agg(concat_ws(',', id, first_ts, last_ts, coalesce(length(summary), 0)), ',' ORDER BY first_ts) AS numbers,
             string_agg(summary, ''::bytea ORDER BY first_ts) AS bytes
        FROM (SELECT id, first_ts, last_ts, summary FROM ${q(table)}
               WHERE ${q(key)} = ${sid} AND first_ts <= ${to} AND last_ts >= ${from}
                 AND first_ts >= coalesce((SELECT first_ts FROM ${q(table)} WHERE ${q(key)} = ${sid} AND first_ts <= ${from} ORDER BY first_ts DESC LIMIT 1), ${from})
               ORDER BY first_ts LIMIT ${Number.isFinite(limit) ? limit : null}) b`;
    return blockIndexOf(numbers, bytes);
  }

  payloads(sid: number, rowids: readonly number[]): Promise<{ rowid: number; first_ts: number; payload: Buffer }[]> {
    const { table, key } = this.where;
    return this.sql<{ rowid: number; first_ts: number; payload: Buffer }[]>`
      SELECT id AS rowid, first_ts, payload FROM ${this.sql(table)} WHERE id = ANY(${rowids as number[]}::bigint[]) AND ${this.sql(key)} = ${sid}`;
  }

  /** Only while the feed hears every write; what it hears is told by series. */
  changeMark(): string | undefined {
    return this.changes?.live ? "live" : undefined;
  }

  watchChanges(fn: (sid: number | "*") => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private tell(sid: number | "*"): void {
    for (const w of this.watchers) w(sid);
  }

  overlapping(sid: number, from: number, to: number, limit: number, q: Q = this.sql): Promise<StoredBlock[]> {
    const { table, key } = this.where;
    // The block holding `from` is the last to start at or before it; from there on, by the index.
    return q<StoredBlock[]>`
      SELECT id AS rowid, first_ts, last_ts, rows, payload FROM ${q(table)}
       WHERE ${q(key)} = ${sid} AND first_ts <= ${to} AND last_ts >= ${from}
         AND first_ts >= coalesce((SELECT first_ts FROM ${q(table)} WHERE ${q(key)} = ${sid} AND first_ts <= ${from} ORDER BY first_ts DESC LIMIT 1), ${from})
       ORDER BY first_ts LIMIT ${Number.isFinite(limit) ? limit : null}`;
  }

  tail(sid: number, limit: number, q: Q = this.sql): Promise<BlockHead[]> {
    const { table, key } = this.where;
    return q<
      BlockHead[]
    >`SELECT id AS rowid, first_ts, last_ts, rows FROM ${q(table)} WHERE ${q(key)} = ${sid} ORDER BY first_ts DESC LIMIT ${limit}`;
  }

  async startsWithin(sid: number, from: number, to: number): Promise<boolean> {
    const { table, key } = this.where;
    return (
      (await this.sql`SELECT 1 FROM ${this.sql(table)} WHERE ${this.sql(key)} = ${sid} AND first_ts BETWEEN ${from} AND ${to} LIMIT 1`)
        .length > 0
    );
  }

  upsert(sid: number, kinds: readonly FieldKind[], rows: RowSet): Promise<number> {
    return this.upsertMany([{ sid, kinds, rows }]);
  }

  /** As upsert(), several series in one savepoint of the group: all or nothing (D68); their locks in sid order. */
  async upsertMany(writes: readonly SeriesWrite[]): Promise<number> {
    const normal = writes
      .map((w) => ({ ...w, rows: normalizeRows(w.rows) }))
      .filter((w) => w.rows.timestamps.length > 0)
      .sort((a, b) => a.sid - b.sid);
    const given = writes.reduce((n, w) => n + w.rows.timestamps.length, 0);
    if (normal.length === 0) return given;
    await pgGroupCommit(this.sql).run(normal[0].sid, async (tx) => {
      for (const w of normal) {
        await this.lockOwner(tx, w.sid);
        await this.upsertIn(tx, w.sid, w.kinds, w.rows);
      }
    });
    for (const w of normal) this.tell(w.sid); // this replica's next read sees the write at once; others when the feed tells them
    return given;
  }

  /** Upserts normalised rows within the caller's transaction, which holds the owner's lock. */
  async upsertIn(tx: TransactionSql, sid: number, kinds: readonly FieldKind[], rows: RowSet): Promise<void> {
    const { table, key } = this.where;
    const merge = planAppendMerge(await this.tail(sid, TAIL_BLOCKS, tx), rows);
    if (merge !== undefined) {
      const merged =
        merge.length > 0
          ? await tx<{ rowid: number; first_ts: number; payload: Buffer }[]>`
              SELECT id AS rowid, first_ts, payload FROM ${tx(table)} WHERE id = ANY(${merge.map((b) => b.rowid)}::bigint[])`
          : [];
      await this.write(tx, sid, planAppend(merged, kinds, rows));
      return;
    }
    const first = rows.timestamps[0];
    const touched = await this.overlapping(sid, first, rows.timestamps[rows.timestamps.length - 1], Infinity, tx);
    const [before] = mayAppend(touched, rows)
      ? await tx<
          StoredBlock[]
        >`SELECT id AS rowid, first_ts, last_ts, rows, payload FROM ${tx(table)} WHERE ${tx(key)} = ${sid} AND first_ts < ${first} ORDER BY first_ts DESC LIMIT 1`
      : [];
    await this.write(tx, sid, planUpsert(touched, before, kinds, rows));
  }

  async deleteRange(sid: number, kinds: readonly FieldKind[], from: number, to: number): Promise<number> {
    const removed = await pgGroupCommit(this.sql).run(sid, async (tx) => {
      await this.lockOwner(tx, sid);
      const touched = await this.overlapping(sid, from, to, Infinity, tx);
      if (touched.length === 0) return 0;
      const write = planDelete(touched, kinds, from, to);
      await this.write(tx, sid, write);
      return write.removed;
    });
    this.tell(sid);
    return removed;
  }

  async bounds(sid: number): Promise<{ first: number; last: number } | undefined> {
    const { table, key } = this.where;
    const t = this.sql(table);
    const k = this.sql(key);
    // Both ends from the index on (key, first_ts): the last block is the one that starts last.
    const [r] = await this.sql<{ first: number | null; last: number | null }[]>`
      SELECT (SELECT min(first_ts) FROM ${t} WHERE ${k} = ${sid}) AS first, (SELECT last_ts FROM ${t} WHERE ${k} = ${sid} ORDER BY first_ts DESC LIMIT 1) AS last`;
    return r.first === null || r.last === null ? undefined : { first: r.first, last: r.last };
  }

  async stats(sid: number): Promise<{ rows: number; blocks: number; bytes: number }> {
    const { table, key } = this.where;
    const [r] = await this.sql<{ rows: number | null; blocks: number; bytes: number | null }[]>`
      SELECT sum(rows)::bigint AS rows, count(*) AS blocks, sum(length(payload))::bigint AS bytes FROM ${this.sql(table)} WHERE ${this.sql(key)} = ${sid}`;
    return { rows: r.rows ?? 0, blocks: r.blocks, bytes: r.bytes ?? 0 };
  }

  /** Takes the owner's row lock for the transaction (writers of one run take turns; FK checks of inserts are not blocked). */
  async lockOwner(tx: TransactionSql, sid: number): Promise<void> {
    const { table, key } = this.where.owner;
    const found = await tx`SELECT 1 FROM ${tx(table)} WHERE ${tx(key)} = ${sid} FOR NO KEY UPDATE`;
    if (found.length === 0) throw new OwnerGoneError(`${table} ${sid} no longer exists`);
  }

  private async write(tx: TransactionSql, sid: number, { old, blocks }: BlockWrite): Promise<void> {
    const { table, key } = this.where;
    if (old.length > 0) await tx`DELETE FROM ${tx(table)} WHERE id = ANY(${old.map((b) => b.rowid)}::bigint[])`;
    if (blocks.length === 0) return;
    if (!this.bulk) {
      await tx`INSERT INTO ${tx(table)} ${tx(blocks.map((b) => ({ [key]: sid, first_ts: b.first, last_ts: b.last, rows: b.rows, payload: b.payload, summary: b.summary })))}`;
      return;
    }
    // COPY's text format: tab-separated, bytea as \x and hex (its backslash escaped).
    const copy = await tx`COPY ${tx(table)} (${tx(key)}, first_ts, last_ts, rows, payload, summary) FROM STDIN`.writable();
    const text = blocks
      .map((b) => `${sid}\t${b.first}\t${b.last}\t${b.rows}\t\\\\x${b.payload.toString("hex")}\t\\\\x${b.summary.toString("hex")}\n`)
      .join("");
    await new Promise<void>((resolve, reject) => {
      copy.on("error", reject);
      copy.end(text, () => resolve());
    });
  }
}
