// D65 block summaries as stored, and hot blocks in memory (issue 30 items 3-4),
// on both backends (D40): every block written carries its summary and the
// migration gives one to blocks stored before; a repeated chart reads the
// database once; a write drops what is kept of its series, whoever wrote
// (this connection, another connection or process, another replica through
// PostgreSQL's change feed); the cache stays within its bound.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FieldKind, MAX_TIMESTAMP, MIN_TIMESTAMP, decodeBlock } from "../../../src/timeseries/blocks/block-codec.js";
import { BlockCache } from "../../../src/timeseries/blocks/block-cache.js";
import { encodeBlocks, type BlockStore } from "../../../src/timeseries/blocks/block-store.js";
import { SqliteBlockStore } from "../../../src/sqlite/block-store.js";
import { PG_SERIES_BLOCKS, PostgresBlockStore } from "../../../src/postgres/block-store.js";
import { summarizeBlock } from "../../../src/native/block-summary.js";
import { chartOf } from "../../../src/timeseries/chart-blocks.js";
import { m4, type M4Row } from "../../helpers/m4.js";
import { openDatabase } from "../../../src/sqlite/database.js";
import { MIGRATIONS } from "../../../src/sqlite/schema.js";
import { CHANGES_CHANNEL, ChangeFeed } from "../../../src/postgres/changes.js";
import { connectPostgres } from "../../../src/postgres/database.js";
import { PG_MIGRATIONS, migratePostgres } from "../../../src/postgres/schema.js";
import type { MetadataStore } from "../../../src/timeseries/metadata-store.js";
import { SqliteMetadataStore } from "../../../src/sqlite/metadata-store.js";
import { PostgresMetadataStore } from "../../../src/postgres/metadata-store.js";
import { PG_SKIP_REASON, PG_URL, freshPgDatabase } from "../../helpers/postgres.js";

const dir = mkdtempSync(join(tmpdir(), "meridian-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KINDS = [FieldKind.Single, FieldKind.Flag];

interface Side {
  meta: MetadataStore;
  store: BlockStore;
}
interface Stores extends Side {
  /** A second writer on the same database: another connection (SQLite), another replica's pool and feed (PostgreSQL). */
  other(): Promise<Side>;
  /** Raw SQL on the first connection. */
  exec(sql: string): Promise<void>;
  /** Resolves once the first side has heard of every write committed so far (PostgreSQL: its feed's notifications arrive later). */
  heard(): Promise<void>;
  close(): Promise<void>;
}

let n = 0;
const backends: { name: string; skip?: string; open: () => Promise<Stores> }[] = [
  {
    name: "SQLite",
    async open() {
      const file = join(dir, `c${n++}.db`);
      const db = openDatabase(file);
      const others: ReturnType<typeof openDatabase>[] = [];
      return {
        meta: new SqliteMetadataStore(db),
        store: new SqliteBlockStore(db),
        async other() {
          const o = openDatabase(file);
          others.push(o);
          return { meta: new SqliteMetadataStore(o), store: new SqliteBlockStore(o) };
        },
        exec: async (sql) => void db.exec(sql),
        heard: async () => {}, // a connection's writes are told at once
        close: async () => {
          for (const o of others) o.close();
          db.close();
        },
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: PG_URL ? undefined : PG_SKIP_REASON,
    async open() {
      const pg = await freshPgDatabase();
      const options = { url: pg.url, poolSize: 2, statementTimeoutMs: 10_000, connectTimeoutS: 5 };
      const sqls = [connectPostgres(options)];
      await migratePostgres(sqls[0]);
      const feeds = [await ChangeFeed.listen(options)];
      const side = (i: number): Side => ({
        meta: new PostgresMetadataStore(sqls[i]),
        store: new PostgresBlockStore(sqls[i], PG_SERIES_BLOCKS, false, feeds[i]),
      });
      return {
        ...side(0),
        async other() {
          sqls.push(connectPostgres(options));
          feeds.push(await ChangeFeed.listen(options));
          return side(sqls.length - 1);
        },
        exec: async (sql) => void (await sqls[0].unsafe(sql)),
        // Notifications arrive in commit order: once a probe sent now is heard, so is every write before it.
        async heard() {
          const probe = `probe:${Math.random()}`;
          const arrived = new Promise<void>((resolve) => {
            const stop = feeds[0].watch((table) => {
              if (table !== probe) return;
              stop();
              resolve();
            });
          });
          await sqls[0]`SELECT pg_notify(${CHANGES_CHANNEL}, ${probe})`;
          await arrived;
        },
        async close() {
          await Promise.all([...sqls.map((s) => s.end()), ...feeds.map((f) => f.close())]);
          await pg.drop();
        },
      };
    },
  },
];

/** Rows t = 0..count-1 (every minute from 2020), value a wave, flag every 7th. */
function rowsOf(count: number, start = 0, lift = 0): M4Row[] {
  return Array.from(
    { length: count },
    (_, i) => [1_577_836_800 + (start + i) * 60, Math.fround(Math.sin((start + i) / 50) + lift), (start + i) % 7] as M4Row,
  );
}

async function upsert(store: BlockStore, sid: number, rows: M4Row[]): Promise<void> {
  await store.upsert(sid, KINDS, {
    timestamps: Float64Array.from(rows, (r) => r[0]),
    columns: [
      { kind: FieldKind.Single, values: Float32Array.from(rows, (r) => r[1] as number), missing: null },
      { kind: FieldKind.Flag, values: Int32Array.from(rows, (r) => r[2] as number), missing: null },
    ],
  });
}

async function newSeries(meta: MetadataStore): Promise<number> {
  const datasetId = crypto.randomUUID();
  await meta.createDataset({ id: datasetId, project: "p", items: [], properties: [], metadata: {} });
  const s = await meta.createSeries({
    id: crypto.randomUUID(),
    datasetId,
    item: { name: "s" },
    properties: {},
    dataFields: [
      { name: "v", dataType: "Single" },
      { name: "f", dataType: "Flag" },
    ],
  });
  return s!.sid;
}

/** The store with its index and payload reads counted. */
function counted(store: BlockStore): BlockStore & { reads: number } {
  const c = Object.create(store) as BlockStore & { reads: number };
  c.reads = 0;
  c.summaries = (...a) => (c.reads++, store.summaries(...a));
  c.payloads = (...a) => (c.reads++, store.payloads(...a));
  c.watchChanges = (fn) => store.watchChanges(fn);
  c.changeMark = () => store.changeMark();
  return c;
}

const signal = new AbortController().signal;

async function chartRows(cache: BlockCache, sid: number, from: number, to: number, width: number): Promise<M4Row[]> {
  return (await chartOf(cache, sid, from, to, width, signal)).flatMap((p) => {
    const b = decodeBlock(p);
    return Array.from(b.timestamps, (t, i) => [t, ...b.columns.map((c) => (c.missing?.[i] ? null : c.values[i]))] as M4Row);
  });
}

/** Until check() holds (a replica hears another's write through the feed), at most 2 s. */
async function until(check: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + 2000;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

describe.each(backends)("D65 block summaries and the block cache ($name)", ({ skip, open }) => {
  it.skipIf(skip)("D65 every block written carries its summary, as the addon gives it", async () => {
    const s = await open();
    try {
      const sid = await newSeries(s.meta);
      await upsert(s.store, sid, rowsOf(40_000));
      await upsert(s.store, sid, rowsOf(100, 20_000, 5)); // rewrites the block it falls in
      const stored = await s.store.overlapping(sid, MIN_TIMESTAMP, MAX_TIMESTAMP, Infinity);
      const index = await s.store.summaries(sid, MIN_TIMESTAMP, MAX_TIMESTAMP, Infinity);
      expect(Array.from(index.rowid)).toEqual(stored.map((b) => b.rowid));
      expect(Array.from(index.first)).toEqual(stored.map((b) => b.first_ts));
      expect(Array.from(index.last)).toEqual(stored.map((b) => b.last_ts));
      stored.forEach((b, i) => expect(index.summaries.subarray(index.offsets[i], index.offsets[i + 1])).toEqual(summarizeBlock(b.payload)));
    } finally {
      await s.close();
    }
  });

  it.skipIf(skip)("D65 a repeated chart reads the database once; a write through this store drops its series at once", async () => {
    const s = await open();
    try {
      const sid = await newSeries(s.meta);
      let rows = rowsOf(70_000);
      await upsert(s.store, sid, rows);
      // The write's own notification, heard late on a loaded machine, would drop the series between the two charts.
      await s.heard();
      const store = counted(s.store);
      const cache = new BlockCache(store, 64 << 20);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      for (const width of [3, 200]) expect(await chartRows(cache, sid, from, to, width)).toEqual(m4(rows, [true, false], from, to, width));
      const reads = store.reads;
      expect(reads).toBeGreaterThan(0);
      for (const width of [3, 200]) expect(await chartRows(cache, sid, from, to, width)).toEqual(m4(rows, [true, false], from, to, width));
      expect(store.reads).toBe(reads); // all from memory
      // A new maximum inside a block the summaries stood for: the next chart shows it.
      await upsert(s.store, sid, [[rows[30_000][0], 99, 1]]);
      rows = rows.map((r, i) => (i === 30_000 ? ([r[0], 99, 1] as M4Row) : r));
      expect(await chartRows(cache, sid, from, to, 3)).toEqual(m4(rows, [true, false], from, to, 3));
      expect(store.reads).toBeGreaterThan(reads);
      // Deleted rows are gone from the next chart too.
      await s.store.deleteRange(sid, KINDS, rows[0][0], rows[49_999][0]);
      rows = rows.slice(50_000);
      expect(await chartRows(cache, sid, from, to, 7)).toEqual(m4(rows, [true, false], from, to, 7));
    } finally {
      await s.close();
    }
  });

  it.skipIf(skip)("D65 a write by another connection or replica drops what the cache keeps of it", async () => {
    const s = await open();
    try {
      const sid = await newSeries(s.meta);
      const rows = rowsOf(40_000);
      await upsert(s.store, sid, rows);
      const cache = new BlockCache(s.store, 64 << 20);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      expect(await chartRows(cache, sid, from, to, 5)).toEqual(m4(rows, [true, false], from, to, 5));
      const other = await s.other();
      await upsert(other.store, sid, [[rows[10][0], -50, 2]]);
      const changed = rows.map((r, i) => (i === 10 ? ([r[0], -50, 2] as M4Row) : r));
      const expected = m4(changed, [true, false], from, to, 5);
      expect(await until(async () => JSON.stringify(await chartRows(cache, sid, from, to, 5)) === JSON.stringify(expected))).toBe(true);
    } finally {
      await s.close();
    }
  });

  it.skipIf(skip)("D65 a deleted series' blocks are never served for a series made after it", async () => {
    const s = await open();
    try {
      const cache = new BlockCache(s.store, 64 << 20);
      const sid = await newSeries(s.meta);
      const rows = rowsOf(1000);
      await upsert(s.store, sid, rows);
      expect((await chartRows(cache, sid, rows[0][0], rows[999][0], 2)).length).toBeGreaterThan(0);
      await s.exec(`DELETE FROM time_series WHERE sid = ${sid}`); // the cascade removes its blocks
      // SQLite may give the next series the same sid.
      const next = await newSeries(s.meta);
      const fresh = rowsOf(10, 5000);
      await upsert(s.store, next, fresh);
      expect(await until(async () => (await chartRows(cache, sid, rows[0][0], rows[999][0], 2)).length === 0)).toBe(true);
      expect(await chartRows(cache, next, fresh[0][0], fresh[9][0], 2)).toEqual(m4(fresh, [true, false], fresh[0][0], fresh[9][0], 2));
    } finally {
      await s.close();
    }
  });

  it.skipIf(skip)("D65 the cache stays within MERIDIAN_BLOCK_CACHE_MB, least recently used out; 0 keeps nothing", async () => {
    const s = await open();
    try {
      const series = [await newSeries(s.meta), await newSeries(s.meta), await newSeries(s.meta)];
      const rows = rowsOf(40_000);
      for (const sid of series) await upsert(s.store, sid, rows);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      const expected = m4(rows, [true, false], from, to, 500);
      const small = new BlockCache(s.store, 200_000); // room for about two blocks' payloads
      for (let k = 0; k < 3; k++)
        for (const sid of series) {
          expect(await chartRows(small, sid, from, to, 500)).toEqual(expected);
          expect(small.size).toBeLessThanOrEqual(200_000);
        }
      expect(small.size).toBeGreaterThan(0);
      const none = new BlockCache(s.store, 0);
      expect(await chartRows(none, series[0], from, to, 500)).toEqual(expected);
      expect(none.size).toBe(0);
    } finally {
      await s.close();
    }
  });

  it.skipIf(skip)("D65 a block stored without a summary is decoded instead", async () => {
    const s = await open();
    try {
      const sid = await newSeries(s.meta);
      await upsert(s.store, sid, rowsOf(40_000));
      // As a block the migration could not summarise (it does not decode), or one written by an older replica.
      await s.exec("UPDATE blocks SET summary = NULL");
      const cache = new BlockCache(s.store, 0);
      const rows = rowsOf(40_000);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      expect(await chartRows(cache, sid, from, to, 1)).toEqual(m4(rows, [true, false], from, to, 1)); // decoded instead
      const index = await s.store.summaries(sid, from, to, Infinity);
      expect(index.count).toBeGreaterThan(0);
      expect(index.summaries.length).toBe(0);
      expect(index.offsets.every((o) => o === 0)).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe("D28 what a chart reads for itself is freed at once (SQLite)", () => {
  /** The store, keeping every buffer its index reads (given) and payload reads (read) handed out. */
  function watched(store: BlockStore): BlockStore & { given: ArrayBufferView[]; read: ArrayBufferView[] } {
    const w = Object.create(store) as BlockStore & { given: ArrayBufferView[]; read: ArrayBufferView[] };
    w.given = [];
    w.read = [];
    w.summaries = async (...a) => {
      const index = await store.summaries(...a);
      w.given.push(index.first, index.last, index.rowid, index.offsets, index.summaries);
      return index;
    };
    w.payloads = async (...a) => {
      const found = await store.payloads(...a);
      w.read.push(...found.map((b) => b.payload));
      return found;
    };
    w.watchChanges = (fn) => store.watchChanges(fn);
    w.changeMark = () => store.changeMark();
    return w;
  }
  const freed = (given: ArrayBufferView[]) => given.filter((b) => b.buffer.byteLength === 0).length;

  it("D28 a chart frees every index batch and payload it read for itself once the addon is done with it; the cache frees the index batches it joins and keeps its payloads", async () => {
    const s = await backends[0].open();
    try {
      const sid = await newSeries(s.meta);
      const rows = rowsOf(70_000);
      await upsert(s.store, sid, rows);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      for (const bytes of [0, 64 << 20]) {
        const store = watched(s.store);
        const cache = new BlockCache(store, bytes);
        for (const width of [200, 3, 200]) {
          store.given.length = 0;
          store.read.length = 0;
          expect(await chartRows(cache, sid, from, to, width)).toEqual(m4(rows, [true, false], from, to, width));
          // Nothing the store gave is left for V8 to collect: a 1B-row chart's 30 MB of batches raised the server's peak memory by 60 MiB.
          expect(freed(store.given)).toBe(store.given.length);
          if (bytes === 0) {
            expect(store.given.length).toBeGreaterThan(0);
            expect(freed(store.read)).toBe(store.read.length);
          } else expect(freed(store.read)).toBe(0); // kept
        }
        // The cache's second chart at 200 read nothing, and its kept payloads were never freed (the rows above are exact).
        if (bytes > 0) expect([...store.given, ...store.read]).toHaveLength(0);
      }
    } finally {
      await s.close();
    }
  });

  it("D28 an index read in several batches, each freed as soon as its reader is done, still walks every block", async () => {
    const s = await backends[0].open();
    try {
      const sid = await newSeries(s.meta);
      const rows = rowsOf(120_000); // 8 blocks
      await upsert(s.store, sid, rows);
      const [from, to] = [rows[0][0], rows[rows.length - 1][0]];
      const store = watched(s.store);
      for (const bytes of [0, 64 << 20]) {
        const cache = new BlockCache(store, bytes, undefined, undefined, 3);
        let blocks = 0;
        for await (const run of cache.runs(sid, from, to)) {
          blocks += run.hi - run.lo;
          run.release?.(); // at once, before the next run is asked for
        }
        expect(blocks).toBe(8);
        for (const width of [1, 200])
          expect(await chartRows(cache, sid, from, to, width)).toEqual(m4(rows, [true, false], from, to, width));
      }
      expect(freed(store.given)).toBe(store.given.length);
    } finally {
      await s.close();
    }
  });
});

/** Blocks of W1-like rows as the stores encode them, and one that does not decode. */
function oldBlocks(): { first: number; last: number; rows: number; payload: Buffer }[] {
  const rows = rowsOf(40_000);
  const blocks = encodeBlocks({
    timestamps: Float64Array.from(rows, (r) => r[0]),
    columns: [
      { kind: FieldKind.Single, values: Float32Array.from(rows, (r) => r[1] as number), missing: null },
      { kind: FieldKind.Flag, values: Int32Array.from(rows, (r) => r[2] as number), missing: null },
    ],
  }).map(({ first, last, rows, payload }) => ({ first, last, rows, payload }));
  const corrupt = Buffer.from(blocks[2].payload);
  corrupt[12] ^= 0xff;
  return [...blocks.slice(0, 2), { ...blocks[2], payload: corrupt }];
}

/** The migrations before D65's: found by name, as later migrations are added after it. */
function beforeSummaries<T extends { name: string }>(migrations: readonly T[]): T[] {
  const at = migrations.findIndex((m) => m.name.startsWith("block summaries"));
  expect(at).toBeGreaterThan(0);
  return migrations.slice(0, at);
}

describe("D65 the migration summarises the blocks stored before it", () => {
  it("SQLite: a database of the version before D65 opened by this Meridian has every block that decodes summarised (one that does not keeps none)", async () => {
    const file = join(dir, "old.db");
    const old = openDatabase(file, beforeSummaries(MIGRATIONS));
    const sid = await newSeries(new SqliteMetadataStore(old));
    const insert = old.prepare("INSERT INTO blocks (sid, first_ts, last_ts, rows, payload) VALUES (?, ?, ?, ?, ?)");
    for (const b of oldBlocks()) insert.run(sid, b.first, b.last, b.rows, b.payload);
    old.close();
    const db = openDatabase(file);
    const stored = db
      .prepare<[], { payload: Buffer; summary: Buffer | null }>("SELECT payload, summary FROM blocks ORDER BY first_ts")
      .all();
    db.close();
    expect(stored).toHaveLength(3);
    expect(stored[0].summary).toEqual(summarizeBlock(stored[0].payload));
    expect(stored[1].summary).toEqual(summarizeBlock(stored[1].payload));
    expect(stored[2].summary).toBeNull();
  });

  it.skipIf(!PG_URL)("PostgreSQL: a database of the version before has every block that decodes summarised by the migration", async () => {
    const pg = await freshPgDatabase();
    const sql = connectPostgres({ url: pg.url, poolSize: 2, statementTimeoutMs: 10_000, connectTimeoutS: 5 });
    try {
      const before = beforeSummaries(PG_MIGRATIONS);
      await migratePostgres(sql, before);
      const sid = await newSeries(new PostgresMetadataStore(sql));
      for (const b of oldBlocks())
        await sql`INSERT INTO blocks (sid, first_ts, last_ts, rows, payload) VALUES (${sid}, ${b.first}, ${b.last}, ${b.rows}, ${b.payload})`;
      expect(await migratePostgres(sql)).toBe(PG_MIGRATIONS.length - before.length);
      const stored = await sql<{ payload: Buffer; summary: Buffer | null }[]>`SELECT payload, summary FROM blocks ORDER BY first_ts`;
      expect(stored).toHaveLength(3);
      expect(stored[0].summary).toEqual(summarizeBlock(stored[0].payload));
      expect(stored[1].summary).toEqual(summarizeBlock(stored[1].payload));
      expect(stored[2].summary).toBeNull();
    } finally {
      await sql.end();
      await pg.drop();
    }
  });
});
